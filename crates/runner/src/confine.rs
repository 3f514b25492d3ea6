//! Outside engines confined: what their process may see and use.
//!
//! Each engine process gets
//! - an environment built from an allow-list (`PATH`, `LANG`, `HOME` and `TMPDIR` set to
//!   its own directory, and the names the worker was told to pass on; never `TOURNEY_*`);
//! - a private working directory, removed when the process ends;
//! - a session and process group of its own, killed as a whole when its games end (or
//!   when the program quits with games under way: [`end_engines`]), so nothing it forks
//!   outlives them;
//! - resource limits ([`EngineLimits`]): address space, CPU seconds, processes, open files
//!   and file size;
//! - when the worker runs as root, an unprivileged user ([`EnginePolicy::run_as`]);
//! - a network namespace of its own when the tournament does not allow the network and
//!   the system lets the worker make one (see [`network_isolation`]);
//! - where the system allows namespaces ([`containment`]): a PID namespace of its own,
//!   whose first process (a small init of ours) the kernel kills, with everything in the
//!   namespace (`setsid` daemons included), once the engine exits, its game's group is
//!   killed, or the worker dies (`kill -9` included: parent-death signals on every link
//!   from the worker's spawning thread down); a mount namespace in which `/tmp` is the real
//!   one read through an overlay whose writes go to a private tmpfs (the size of its file
//!   limit, gone with it: nothing it writes to /tmp, its working directory included, is
//!   left on the host), and its own `/proc` (the worker's processes out of sight);
//! - engines are started from one thread that lives as long as the program, so that a
//!   parent-death signal means the program's death, not a thread's.
//!
//! Linux (and other Unix) only: the limits are set between `fork` and `exec`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tourney_model::tournament::EngineLimits;

use contain::Containment;

/// Environment variables every engine gets from the worker when set.
const PASSED: [&str; 3] = ["PATH", "LANG", "TZ"];

/// How the engines a process starts are confined: given with each engine's
/// [`EngineConfig`](crate::EngineConfig) (a worker's from its flags).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnginePolicy {
    /// Run engines as this user and group (uid, gid): required when the worker runs as
    /// root, unless `allow_root`.
    pub run_as: Option<(u32, u32)>,
    /// Let engines run as root when the worker does (and no `run_as` is given).
    pub allow_root: bool,
    /// More environment variables passed on to engines (names; `TOURNEY_*` never are).
    pub pass_env: Vec<String>,
    /// The CPUs engines are pinned to (`sched_setaffinity` before they start, so every
    /// thread and process of theirs stays there); empty: where the worker may run.
    pub cpus: Vec<usize>,
    /// Variables set for the engines by the worker itself (a game's GPUs:
    /// `CUDA_VISIBLE_DEVICES` and the like), after those passed on.
    pub env: Vec<(String, String)>,
}

static NETWORK_ISOLATION: OnceLock<Result<(), Unavailable>> = OnceLock::new();

/// Whether engines can get a network namespace of their own here: `Err` says why not (then
/// they run with the worker's network, which the worker logs at start).
pub fn network_isolation() -> &'static Result<(), Unavailable> {
    NETWORK_ISOLATION.get_or_init(|| {
        let mut probe = Command::new("/bin/sh");
        probe.args(["-c", "exit 0"]);
        // SAFETY: only async-signal-safe calls (unshare) between fork and exec.
        unsafe {
            probe.pre_exec(|| unshare_network().map_err(std::io::Error::from_raw_os_error));
        }
        match probe.status() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(Unavailable(format!("the probe exited with {status}"))),
            Err(e) => Err(Unavailable(format!("no network namespace: {e}"))),
        }
    })
}

/// A new network namespace for the calling process: as root directly, otherwise inside a
/// user namespace of its own. Returns the errno on failure.
fn unshare_network() -> Result<(), i32> {
    // SAFETY: geteuid and unshare have no memory-safety preconditions.
    let flags = if unsafe { libc::geteuid() } == 0 {
        libc::CLONE_NEWNET
    } else {
        libc::CLONE_NEWUSER | libc::CLONE_NEWNET
    };
    if unsafe { libc::unshare(flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }
}

/// Whether engines can be contained here (a PID and a mount namespace, as root directly,
/// otherwise inside a user namespace): `Err` says why not (then they run in a process
/// group of their own, which the worker logs at start).
/// The probe runs as `run_as` would (the first call's answer is kept: it is a fact of the
/// system, which does not change while the process runs).
pub fn containment(run_as: Option<(u32, u32)>) -> &'static Result<(), Unavailable> {
    static CONTAINMENT: OnceLock<Result<(), Unavailable>> = OnceLock::new();
    CONTAINMENT.get_or_init(|| {
        let Ok(dir) = WorkDir::new(run_as) else {
            return Err(Unavailable("no working directory for the probe".into()));
        };
        let Ok(plan) = Containment::plan(run_as, 1, dir.path(), None) else {
            return Err(Unavailable("no paths for the namespaces".into()));
        };
        let mut probe = Command::new("/bin/sh");
        // The engine works in its directory as its private /tmp shows it, and writes there.
        probe.args(["-c", "mkdir \"$(pwd)/probe\""]);
        probe.current_dir(dir.path());
        // SAFETY: `contain` makes only async-signal-safe calls between fork and exec.
        unsafe {
            probe.pre_exec(move || plan.contain(false));
        }
        match spawn(probe).and_then(|mut child| child.wait().map_err(SpawnError::Io)) {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(Unavailable(format!("the probe exited with {status}"))),
            Err(e) => Err(Unavailable(format!("no PID or mount namespace: {e}"))),
        }
    })
}

/// A sealed copy in memory of the program at `path`, made as it is read and checked to
/// have sha256 `sha256`: a descriptor (closed on exec) that nobody can write, shrink or
/// grow, to run the program from (`/proc/self/fd/N`), so that nothing can change it between
/// its check and its start.
///
/// # Errors
/// It cannot be read, is not the program named (said with both hashes), or the copy could
/// not be made.
pub(crate) fn sealed_copy(path: &Path, sha256: &str) -> Result<std::os::fd::OwnedFd, String> {
    use std::io::{Seek, SeekFrom};
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let failed = |what: &str, e: std::io::Error| format!("{}: {what}: {e}", path.display());
    // SAFETY: memfd_create takes a NUL-terminated name; the descriptor it returns is ours.
    let copy = unsafe {
        let flags = libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING;
        let fd = libc::memfd_create(c"tourney-engine".as_ptr(), flags);
        if fd < 0 {
            return Err(failed("a sealed copy", std::io::Error::last_os_error()));
        }
        OwnedFd::from_raw_fd(fd)
    };
    let mut source = std::fs::File::open(path).map_err(|e| failed("reading it", e))?;
    let mut copy = std::fs::File::from(copy);
    std::io::copy(&mut source, &mut copy).map_err(|e| failed("copying it", e))?;
    let fd = copy.as_raw_fd();
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fchmod and fcntl on a descriptor we own.
    unsafe {
        if libc::fchmod(fd, 0o555) != 0 || libc::fcntl(fd, libc::F_ADD_SEALS, seals) != 0 {
            return Err(failed("sealing the copy", std::io::Error::last_os_error()));
        }
    }
    // What is checked is what will run: the sealed copy.
    copy.seek(SeekFrom::Start(0))
        .map_err(|e| failed("reading the copy", e))?;
    let got = tourney_model::sha256_of_reader(&copy).map_err(|e| failed("reading the copy", e))?;
    if got != sha256 {
        return Err(format!(
            "{}: the program changed since it was checked (sha256 {got}, not {sha256})",
            path.display()
        ));
    }
    Ok(OwnedFd::from(copy))
}

/// Why an engine may not be started under the current policy.
pub fn refuse_root(p: &EnginePolicy) -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    (root && p.run_as.is_none() && !p.allow_root).then(|| {
        "the worker runs as root: give it --engine-user (an unprivileged user for engines) \
         or --allow-root-engines"
            .to_string()
    })
}

/// A word of an engine's command line as the engine is given it. A relative path names
/// what is in the engine's own directory `dir` (the files placed there: an uploaded
/// script, checked by its sha256), and is left so. Only with `from_cwd` (a command the user
/// gave this process: `check-engine`, `play`) is one that names nothing in `dir` but
/// something in this process's working directory, written as a path (with a `/` or a
/// `.`: `engine.py`, `nets/nn.bin`), made absolute. A bare word (`random`, `loa`) is an
/// argument, whatever the directories hold.
fn absolute(word: &str, dir: &Path, from_cwd: bool) -> OsString {
    let path = Path::new(word);
    if from_cwd
        && path.is_relative()
        && !word.starts_with('-')
        && word.contains(['/', '.'])
        && !dir.join(path).exists()
        && path.exists()
        && let Ok(full) = std::fs::canonicalize(path)
    {
        return full.into_os_string();
    }
    word.into()
}

/// The PATH an engine started under `policy` gets: the worker's own (or a usual one when
/// it has none), unless the policy sets one.
fn engine_path(policy: &EnginePolicy) -> OsString {
    let set = policy.env.iter().rev().find(|(name, _)| name == "PATH");
    match set {
        Some((_, value)) => value.into(),
        None => std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into()),
    }
}

/// The PATH engines get when the worker has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The first executable regular file named `program` in the directories of `path` (a
/// PATH's value).
pub fn on_path(program: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Where a program named by a bare word (`python3`) is found on the PATH an engine started
/// under `policy` gets: the first executable regular file of that name in its
/// directories. A program given as a path is taken as it is.
///
/// # Errors
/// `'NAME' not found on PATH` (with the PATH searched).
pub(crate) fn find_program(program: &str, policy: &EnginePolicy) -> Result<PathBuf, String> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path = engine_path(policy);
    on_path(program, &path).ok_or_else(|| {
        format!(
            "'{program}' not found on PATH ({}): is it installed, and spelled so?",
            path.to_string_lossy()
        )
    })
}

/// The kernel's set of `cpus` (`None` for none: unpinned).
fn cpu_set(cpus: &[usize]) -> Option<libc::cpu_set_t> {
    if cpus.is_empty() {
        return None;
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus
        .iter()
        .filter(|&&c| c < 8 * std::mem::size_of::<libc::cpu_set_t>())
    {
        // SAFETY: cpu is within the set's bits.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    Some(set)
}

/// The command that starts `program` with `args` confined by `limits` and `policy`, with
/// `dir` its home, in namespaces of its own where the system allows ([`containment`]);
/// with `keep` (a build's checkout), that directory stays the host's (what is written there
/// stays) and the process works there, else it works in `dir`. Relative paths among its
/// words name what is in `dir`; with `from_cwd`, those naming nothing there but something
/// in this process's working directory are made absolute ([`absolute`]).
pub(crate) fn command(
    program: &str,
    args: &[String],
    limits: &EngineLimits,
    policy: &EnginePolicy,
    dir: &Path,
    keep: Option<&Path>,
    from_cwd: bool,
) -> Command {
    let (program, args): (OsString, Vec<OsString>) = (
        absolute(program, dir, from_cwd),
        args.iter().map(|a| absolute(a, dir, from_cwd)).collect(),
    );
    let mut command = Command::new(&program);
    command.args(&args);
    command.env_clear().current_dir(dir);
    let passed = PASSED
        .iter()
        .map(|s| s.to_string())
        .chain(policy.pass_env.iter().cloned())
        .filter(|name| !name.starts_with("TOURNEY_"));
    for name in passed {
        if let Some(value) = std::env::var_os(&name) {
            command.env(name, value);
        }
    }
    if std::env::var_os("PATH").is_none() {
        command.env("PATH", DEFAULT_PATH);
    }
    command.envs(policy.env.iter().map(|(k, v)| (k, v)));
    let limits = *limits;
    let isolate = !limits.network && network_isolation().is_ok();
    // Without a namespace of their own, a seccomp filter keeps them off the network.
    let seal = (!limits.network && !isolate && network_seal().is_ok())
        .then(seal::NetworkSeal::new)
        .flatten();
    let run_as = policy.run_as;
    let contained = (containment(run_as).is_ok())
        .then(|| Containment::plan(run_as, limits.file_size_mb, dir, keep).ok())
        .flatten();
    // Without a mount namespace of their own, a Landlock fence keeps engines (not builds,
    // which need their toolchains) to their own files.
    let fence = (contained.is_none() && keep.is_none())
        .then(|| fence::FileFence::new(dir, &program, &args))
        .flatten();
    command.env("HOME", dir).env("TMPDIR", dir);
    // RLIMIT_NPROC counts every task of the user: an engine running as the worker's user
    // may add `processes` to what that user runs already; a contained one has two waiting
    // processes of ours before it.
    let ours = if contained.is_some() { 2 } else { 0 };
    let tasks = if run_as.is_some() {
        limits.processes.saturating_add(ours)
    } else {
        limits.processes.saturating_add(user_tasks() + ours)
    };
    let cpus = cpu_set(&policy.cpus);
    // SAFETY: between fork and exec only async-signal-safe calls are made (setsid,
    // sched_setaffinity, setrlimit, unshare, setgroups, setgid, setuid, prctl,
    // landlock_restrict_self), on values computed before the fork.
    unsafe {
        command.pre_exec(move || {
            let fail = || Err(std::io::Error::last_os_error());
            if libc::setsid() < 0 {
                return fail();
            }
            if let Some(set) = &cpus
                && libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) != 0
            {
                return fail();
            }
            let mb = 1u64 << 20;
            for (resource, value) in [
                (libc::RLIMIT_AS, limits.memory_mb.saturating_mul(mb)),
                (libc::RLIMIT_CPU, limits.cpu_seconds),
                (libc::RLIMIT_NPROC, tasks),
                (libc::RLIMIT_NOFILE, limits.open_files),
                (libc::RLIMIT_FSIZE, limits.file_size_mb.saturating_mul(mb)),
                (libc::RLIMIT_CORE, 0),
            ] {
                // CPU: SIGXCPU at the soft limit says why; the hard one a second later
                // kills an engine that ignores it.
                let hard = if resource == libc::RLIMIT_CPU {
                    value.saturating_add(1)
                } else {
                    value
                };
                let limit = libc::rlimit {
                    rlim_cur: value as libc::rlim_t,
                    rlim_max: hard as libc::rlim_t,
                };
                if libc::setrlimit(resource, &limit) != 0 {
                    return fail();
                }
            }
            if let Some(plan) = &contained {
                // The user is changed inside, after the mounts.
                plan.contain(isolate)?;
                return match &seal {
                    Some(seal) => seal.install(),
                    None => Ok(()),
                };
            }
            if isolate {
                // Probed at start; a failure now leaves the network as it was.
                let _ = unshare_network();
            }
            if let Some((uid, gid)) = run_as
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0)
            {
                return fail();
            }
            if let Some(fence) = &fence {
                fence.install()?;
            }
            match &seal {
                Some(seal) => seal.install(),
                None => Ok(()),
            }
        });
    }
    command
}

/// Processes and threads this process's user runs now (0 where `/proc` does not tell).
fn user_tasks() -> u64 {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| e.metadata().is_ok_and(|m| m.uid() == uid))
        .map(|e| std::fs::read_dir(e.path().join("task")).map_or(1, |tasks| tasks.count() as u64))
        .sum()
}

/// The prefix of engines' working directories in the temporary directory, followed by
/// the pid of the program that made them.
const WORK_DIR_PREFIX: &str = "tourney-engine-";

/// Removes the working directories that engines of programs no longer running left in the
/// temporary directory (a worker killed with `kill -9` cannot remove its own); how many.
pub fn clean_stale_work_dirs() -> usize {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let pid = name
                .to_str()
                .and_then(|n| n.strip_prefix(WORK_DIR_PREFIX))
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok());
            pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
        })
        .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
        .count()
}

/// A private working directory for one engine process, removed (with whatever the engine
/// left in it) when dropped; owned by the engines' user when they run as another.
pub(crate) struct WorkDir(PathBuf);

impl WorkDir {
    /// A fresh private directory, owned by `run_as` when engines run as another user.
    pub(crate) fn new(run_as: Option<(u32, u32)>) -> std::io::Result<WorkDir> {
        use std::os::unix::fs::PermissionsExt;
        let base = std::env::temp_dir();
        let mut attempt = 0u32;
        let dir = loop {
            let name = format!(
                "{WORK_DIR_PREFIX}{}-{}-{attempt}",
                std::process::id(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            );
            let dir = base.join(name);
            match std::fs::create_dir(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && attempt < 100 => {
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        };
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))?;
        }
        Ok(WorkDir(dir))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Why a kind of confinement is not available on this system (what the probe met).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Unavailable(pub String);

/// Why an engine's process was not started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpawnError {
    /// The program is ending its engines: no new one may start.
    #[error("not started: the program is quitting")]
    Quitting,
    /// The thread that starts engines is gone (the program is ending).
    #[error("the spawning thread is gone")]
    SpawnerGone,
    /// The system refused (no such program, not executable, a limit).
    #[error("{0}")]
    Io(#[source] std::io::Error),
    /// Its program, a bare name, is on none of the PATH's directories.
    #[error("{0}")]
    NotFound(String),
}

/// What a process's end says about a limit it hit: `Some` reason when a signal tells.
pub(crate) fn limit_hit(
    status: &std::process::ExitStatus,
    limits: &EngineLimits,
) -> Option<String> {
    use std::os::unix::process::ExitStatusExt;
    match status.signal()? {
        libc::SIGXCPU => Some(format!(
            "it used up its CPU time limit ({} s, engine_limits.cpu_seconds)",
            limits.cpu_seconds
        )),
        libc::SIGXFSZ => Some(format!(
            "it wrote a file over its size limit ({} MiB, engine_limits.file_size_mb)",
            limits.file_size_mb
        )),
        libc::SIGSEGV | libc::SIGABRT | libc::SIGBUS => Some(format!(
            "killed by signal {} (an allocation over its memory limit of {} MiB, \
             engine_limits.memory_mb, ends this way)",
            status.signal().unwrap_or(0),
            limits.memory_mb
        )),
        _ => None,
    }
}

mod contain;
mod fence;
mod processes;
mod seal;

pub use fence::file_fence;
use processes::spawn;
pub use processes::{adopt_orphans, end_engines, end_orphans};
pub(crate) use processes::{cpu_seconds_used, forget_engine, kill_group, start_engine};
pub use seal::network_seal;
#[cfg(test)]
mod tests;
