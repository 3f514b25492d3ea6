//! The host's build cache: engines built from source, kept by (repository, commit, build
//! command, program path, toolchain and CPU), so that a commit is built once per host for
//! every tournament that plays it. Every worker process pointed at the same cache
//! directory shares it: a file lock per build makes a second worker wait for the first's
//! build instead of building again. The cache (builds, data files and fetched programs) is
//! bounded: past its size, the least recently used entries go.
//!
//! Layout under the cache directory: `builds/<key>/program` (the built program, mode
//! 0555), `builds/<key>/build.log` (the tail of its build's output), `builds/<key>/source`
//! (what was built: `git:URL@COMMIT`, the build command and the program's path, a line
//! each, for `tourney replay`), `builds/<key>.lock`,
//! `files/<sha256>` (data files) and `programs/<sha256>` (fetched programs), each fetched
//! one with its `.lock`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use tourney_model::source::Source;
use tourney_model::tournament::EngineLimits;
use tourney_runner::build_run::{BuildStep, run_build};
use tourney_runner::confine::EnginePolicy;

/// The bytes of a build's output kept (its tail): what a failure shows.
pub(crate) const BUILD_LOG_BYTES: usize = 16 * 1024;

/// How a source is fetched (as the engines' user, in the build's directory, with the
/// network): its commit alone where the server allows fetching a commit by its hash,
/// otherwise every branch and tag, and the commit among them; only the transports a source
/// may name, and no prompts. A repository on this host owned by another user is read
/// (`safe.directory`): the build runs its code as the engines' user in any case.
const FETCH_SCRIPT: &str = r#"export GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
g() {
  git -c protocol.allow=never -c protocol.https.allow=always -c protocol.http.allow=always \
    -c protocol.ssh.allow=always -c protocol.git.allow=always -c protocol.file.allow=always "$@"
}
# In the build's own home (and so for the upload-pack a local fetch starts, too).
git config --global --add safe.directory '*' || exit $?
git init -q src || exit $?
cd src || exit 1
if ! g fetch -q --depth 1 "$SOURCE_GIT" "$SOURCE_COMMIT" 2>/dev/null; then
  g fetch -q --tags "$SOURCE_GIT" '+refs/heads/*:refs/remotes/origin/*' || exit 2
fi
if ! g cat-file -e "$SOURCE_COMMIT^{commit}" 2>/dev/null; then
  echo "the repository has no commit $SOURCE_COMMIT" >&2
  exit 2
fi
g -c advice.detachedHead=false checkout -q "$SOURCE_COMMIT""#;

/// What a build may use: generous for compilers, bounded all the same.
const BUILD_LIMITS: EngineLimits = EngineLimits {
    memory_mb: 8192,
    cpu_seconds: 3600,
    processes: 1024,
    open_files: 4096,
    file_size_mb: 4096,
    stderr_kb: 1024,
    network: false,
};

/// Compilers and build tools whose versions make up the toolchain fingerprint.
const TOOLS: [&str; 11] = [
    "cc", "c++", "gcc", "g++", "clang", "rustc", "cargo", "go", "make", "cmake", "zig",
];

/// How a build from source can fail.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BuildError {
    /// This host lacks something the build needs (`git`, a compiler): another may have it.
    #[error("this worker cannot build it: {0}")]
    Toolchain(String),
    /// The repository or commit could not be fetched from this host.
    #[error("fetching {url} at {commit}: {message}")]
    Fetch {
        /// The repository.
        url: String,
        /// The commit.
        commit: String,
        /// What git said.
        message: String,
    },
    /// The build ran and failed (or ran out of time): the source's fault, on any host.
    /// Its log goes apart ([`BuildError::log`]): only some may read it.
    #[error("the build failed ({status})")]
    Failed {
        /// How it ended.
        status: String,
        /// The end of its output.
        log: String,
    },
    /// The build did not make the program it names.
    #[error("the build made no program at '{0}' inside the checkout")]
    NoProgram(String),
    /// The cache could not be read or written.
    #[error("build cache {path}: {source}")]
    Cache {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
}

impl BuildError {
    /// Whether the engine is at fault (its build fails wherever it runs), not this host.
    pub(crate) fn is_engine_fault(&self) -> bool {
        matches!(self, BuildError::Failed { .. } | BuildError::NoProgram(_))
    }

    /// The end of the failed build's output (empty for other errors): for the test's
    /// author, approvers and admins, never in the reason everyone sees.
    pub(crate) fn log(&self) -> &str {
        match self {
            BuildError::Failed { log, .. } => log,
            _ => "",
        }
    }
}

fn cache_error(path: &Path) -> impl FnOnce(std::io::Error) -> BuildError + '_ {
    move |source| BuildError::Cache {
        path: path.display().to_string(),
        source,
    }
}

/// A built program, ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Built {
    /// The program in the cache.
    pub(crate) program: PathBuf,
    /// How long its build took, in milliseconds; 0 when the cache had it.
    pub(crate) build_ms: u64,
}

/// The host's build cache.
#[derive(Debug, Clone)]
pub(crate) struct BuildCache {
    root: PathBuf,
    /// The most bytes its builds and data files may take.
    bound_bytes: u64,
    /// The most time one build may take.
    timeout: Duration,
    /// How builds are confined (the engines' user and environment).
    policy: EnginePolicy,
}

impl BuildCache {
    pub(crate) fn new(
        root: PathBuf,
        bound_bytes: u64,
        timeout: Duration,
        policy: EnginePolicy,
    ) -> Self {
        BuildCache {
            root,
            bound_bytes,
            timeout,
            policy,
        }
    }

    /// The program `source` builds on this host: from the cache, or fetched and built now
    /// (one build per key across the host's workers). `network` lets the build use the
    /// network (the tournament's `engine_limits.network`).
    pub(crate) fn build(&self, source: &Source, network: bool) -> Result<Built, BuildError> {
        let builds = self.root.join("builds");
        make_dir(&self.root)?;
        make_dir(&builds)?;
        let key = key(source);
        let entry = builds.join(&key);
        let program = entry.join("program");
        let _lock = FileLock::exclusive(&builds.join(format!("{key}.lock")))?;
        if program.is_file() {
            touch(&program);
            return Ok(Built {
                program,
                build_ms: 0,
            });
        }
        // A build runs as the engines do, never as root unless they may.
        if let Some(why) = tourney_runner::confine::refuse_root(&self.policy) {
            return Err(BuildError::Toolchain(why));
        }
        lacks_tools(source).map_or(Ok(()), |why| Err(BuildError::Toolchain(why)))?;
        let started = Instant::now();
        let scratch = builds.join(format!("{key}.building-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&scratch);
        make_dir(&scratch)?;
        let result = self.build_in(source, network, &scratch);
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&scratch);
            return Err(e);
        }
        std::fs::rename(&scratch, &entry).map_err(cache_error(&entry))?;
        let build_ms = started.elapsed().as_millis() as u64;
        tracing::info!(source = %source.spec(), build_ms, "built");
        self.evict(&entry);
        Ok(Built { program, build_ms })
    }

    /// Fetches, builds and keeps the program in `scratch` (its checkout then removed). Both
    /// steps run as the engines' user, confined as engines are: the fetch reads only what
    /// that user may read.
    fn build_in(&self, source: &Source, network: bool, scratch: &Path) -> Result<(), BuildError> {
        if let Some((uid, gid)) = self.policy.run_as {
            chown_tree(scratch, uid, gid).map_err(cache_error(scratch))?;
        }
        let step = |script: &str, dir: &Path, env: &[(&str, &str)], network: bool| {
            let limits = EngineLimits {
                network,
                ..BUILD_LIMITS
            };
            run_build(&BuildStep {
                script,
                dir,
                env,
                limits: &limits,
                policy: &self.policy,
                timeout: self.timeout,
                disk_bytes: self.bound_bytes,
                log_bytes: BUILD_LOG_BYTES,
            })
            .map_err(cache_error(dir))
        };
        let fetched = step(
            FETCH_SCRIPT,
            scratch,
            &[
                ("SOURCE_GIT", &source.git),
                ("SOURCE_COMMIT", &source.commit),
            ],
            true,
        )?;
        if fetched.lacks_a_tool() {
            return Err(BuildError::Toolchain("git is not installed".into()));
        }
        if !fetched.succeeded() {
            return Err(BuildError::Fetch {
                url: source.git.clone(),
                commit: source.commit.clone(),
                message: tail(fetched.log.trim(), 2000).to_string(),
            });
        }
        let src = scratch.join("src");
        let run = step(&source.build, &src, &[], network)?;
        let log_path = scratch.join("build.log");
        std::fs::write(&log_path, &run.log).map_err(cache_error(&log_path))?;
        let what = scratch.join("source");
        let text = format!("{}\n{}\n{}\n", source.spec(), source.build, source.binary);
        std::fs::write(&what, text).map_err(cache_error(&what))?;
        if run.lacks_a_tool() {
            // The shell's line that names it, not the build's log.
            let missing = (run.log.lines().rev())
                .find(|l| l.contains("not found"))
                .unwrap_or_default();
            return Err(BuildError::Toolchain(format!(
                "the build met a command this host lacks: {}",
                tail(missing.trim(), 300)
            )));
        }
        if !run.succeeded() {
            let status = (run.status.map(|s| s.to_string()))
                .or(run.killed)
                .unwrap_or_default();
            return Err(BuildError::Failed {
                status,
                log: run.log,
            });
        }
        let built = inside(&src, &source.binary)
            .ok_or_else(|| BuildError::NoProgram(source.binary.clone()))?;
        let program = scratch.join("program");
        std::fs::copy(&built, &program).map_err(cache_error(&program))?;
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o555))
            .map_err(cache_error(&program))?;
        std::fs::remove_dir_all(&src).map_err(cache_error(&src))?;
        std::fs::set_permissions(scratch, std::fs::Permissions::from_mode(0o711))
            .map_err(cache_error(scratch))?;
        Ok(())
    }

    /// Removes the least recently used builds, data files and programs (never `keep`, nor
    /// one another worker is fetching or building) until the cache holds at most its
    /// bound.
    pub(crate) fn evict(&self, keep: &Path) {
        let mut entries = Vec::new();
        for dir in ["builds", "files", "programs"] {
            let Ok(read) = std::fs::read_dir(self.root.join(dir)) else {
                continue;
            };
            for e in read.filter_map(Result::ok) {
                let path = e.path();
                let name = e.file_name().to_string_lossy().into_owned();
                if path == keep || name.contains('.') {
                    continue;
                }
                let (bytes, used) = size_and_use(&path);
                entries.push((used, bytes, path));
            }
        }
        let mut total: u64 = entries.iter().map(|(_, b, _)| b).sum::<u64>() + size_and_use(keep).0;
        entries.sort();
        for (_, bytes, path) in entries {
            if total <= self.bound_bytes {
                break;
            }
            // A build another worker holds is left alone.
            let lock = path.with_file_name(format!(
                "{}.lock",
                path.file_name().unwrap_or_default().to_string_lossy()
            ));
            let held = lock.exists() && FileLock::try_exclusive(&lock).is_none();
            if held {
                continue;
            }
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
            if removed.is_ok() {
                tracing::info!(path = %path.display(), bytes, "evicted from the build cache");
                total = total.saturating_sub(bytes);
            }
        }
    }
}

/// The cache key of `source` on this host: its four keys, the toolchain and the CPU.
fn key(source: &Source) -> String {
    let text = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        source.git,
        source.commit,
        source.build,
        source.binary,
        toolchain(),
        cpu()
    );
    tourney_model::sha256_hex(text.as_bytes())[..32].to_string()
}

/// The program a build of `spec` (`git:URL@COMMIT`, as game records name an engine built
/// from source) left in the host cache `cache`: the most recently used of them when other
/// build commands built the same commit too. `None` when none is there.
pub fn cached_build(cache: &Path, spec: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(cache.join("builds")).ok()?;
    entries
        .filter_map(Result::ok)
        .filter(|entry| {
            std::fs::read_to_string(entry.path().join("source"))
                .is_ok_and(|text| text.lines().next() == Some(spec))
        })
        .map(|entry| entry.path().join("program"))
        .filter_map(|program| {
            let used = program.metadata().ok()?.modified().ok()?;
            Some((used, program))
        })
        .max()
        .map(|(_, program)| program)
}

/// The versions of the host's compilers and build tools, as they say them.
pub(crate) fn toolchain() -> &'static str {
    static TOOLCHAIN: OnceLock<String> = OnceLock::new();
    TOOLCHAIN.get_or_init(|| {
        TOOLS
            .iter()
            .filter_map(|tool| {
                let out = Command::new(tool)
                    .arg("--version")
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
                    .ok()?;
                let first = String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .to_string();
                Some(format!("{tool}: {first}"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// The CPU: its architecture, model and feature flags (a build may use them).
pub(crate) fn cpu() -> &'static str {
    static CPU: OnceLock<String> = OnceLock::new();
    CPU.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        format!(
            "{} {} {}",
            std::env::consts::ARCH,
            field("model name"),
            field("flags")
        )
    })
}

/// Why this host cannot build `source` (no git, or the build's first command is not on
/// its PATH), if it cannot.
fn lacks_tools(source: &Source) -> Option<String> {
    if !on_path("git") {
        return Some("git is not installed".into());
    }
    // The first word that is not a variable assignment: a program on the PATH, unless it
    // is a path (inside the checkout) or a shell builtin.
    let first = source
        .build
        .split_whitespace()
        .find(|w| !w.contains('='))?
        .trim_start_matches('(');
    let builtin = [
        "cd", "export", "set", "test", "[", "true", "false", ":", "exec", "eval", "if", "for",
        "echo", "printf",
    ];
    (!first.contains('/') && !builtin.contains(&first) && !on_path(first))
        .then(|| format!("'{first}' (the build's first command) is not on this worker's PATH"))
}

/// Whether `program` is on this worker's PATH.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .and_then(|path| tourney_runner::confine::on_path(program, &path))
        .is_some()
}

/// The last `bytes` bytes of `text` (at a character boundary).
pub(crate) fn tail(text: &str, bytes: usize) -> &str {
    let mut start = text.len().saturating_sub(bytes);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The regular file at `relative` inside `dir`, if it is one there (no way out of the
/// checkout through `..` or a link).
fn inside(dir: &Path, relative: &str) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir).ok()?;
    let path = std::fs::canonicalize(dir.join(relative)).ok()?;
    (path.starts_with(&dir) && std::fs::symlink_metadata(&path).ok()?.is_file()).then_some(path)
}

fn make_dir(dir: &Path) -> Result<(), BuildError> {
    std::fs::create_dir_all(dir).map_err(cache_error(dir))?;
    // Engines (as another user) may run what is in it, not list or change it.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).map_err(cache_error(dir))
}

fn chown_tree(path: &Path, uid: u32, gid: u32) -> std::io::Result<()> {
    std::os::unix::fs::lchown(path, Some(uid), Some(gid))?;
    if std::fs::symlink_metadata(path)?.is_dir() {
        for entry in std::fs::read_dir(path)? {
            chown_tree(&entry?.path(), uid, gid)?;
        }
    }
    Ok(())
}

/// Marks `path` as used now (its modification time: what eviction orders by).
pub(crate) fn touch(path: &Path) {
    // Opened to read: the owner may set the times of its read-only (0555) programs.
    if let Ok(file) = std::fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// The bytes under `path` and when it was last used (its program's or its own time).
fn size_and_use(path: &Path) -> (u64, SystemTime) {
    let used_of = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH)
    };
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return (0, SystemTime::UNIX_EPOCH);
    };
    if !meta.is_dir() {
        return (meta.len(), used_of(path));
    }
    let bytes = std::fs::read_dir(path)
        .map(|r| {
            r.filter_map(Result::ok)
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    (bytes, used_of(&path.join("program")))
}

/// An advisory lock on a file (`flock`), held while the value lives (closing the file
/// releases it).
struct FileLock(#[allow(dead_code)] std::fs::File);

impl FileLock {
    /// Waits for the lock.
    fn exclusive(path: &Path) -> Result<FileLock, BuildError> {
        let file = std::fs::File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(cache_error(path))?;
        file.lock().map_err(cache_error(path))?;
        Ok(FileLock(file))
    }

    /// The lock if nobody holds it.
    fn try_exclusive(path: &Path) -> Option<FileLock> {
        let file = std::fs::File::options().write(true).open(path).ok()?;
        file.try_lock().ok()?;
        Some(FileLock(file))
    }
}

#[cfg(test)]
mod tests;
