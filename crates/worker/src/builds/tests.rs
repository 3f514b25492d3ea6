use std::sync::Arc;

use super::*;
use tourney_tests::git::sh;

/// A git repository holding a C engine stand-in; returns its commits, oldest first.
struct Repo {
    dir: tempfile::TempDir,
    commits: Vec<String>,
}

impl Repo {
    fn new(programs: &[&str]) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), "git init -q -b main .");
        let mut commits = Vec::new();
        for (i, text) in programs.iter().enumerate() {
            std::fs::write(
                dir.path().join("engine.c"),
                format!("#include <stdio.h>\nint main(void) {{ puts(\"{text}\"); return 0; }}\n"),
            )
            .unwrap();
            sh(
                dir.path(),
                &format!("git add engine.c && git commit -q -m c{i}"),
            );
            commits.push(sh(dir.path(), "git rev-parse HEAD"));
        }
        Repo { dir, commits }
    }

    fn source(&self, commit: usize, build: &str) -> Source {
        Source {
            git: format!("file://{}", self.dir.path().display()),
            commit: self.commits[commit].clone(),
            build: build.to_string(),
            binary: "engine".into(),
        }
    }
}

fn cache(root: &Path, bound: u64) -> BuildCache {
    BuildCache::new(
        root.to_path_buf(),
        bound,
        Duration::from_secs(120),
        EnginePolicy {
            allow_root: true,
            ..EnginePolicy::default()
        },
    )
}

fn output(program: &Path) -> String {
    let out = Command::new(program).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

const CC: &str = "cc -O1 -o engine engine.c";

#[test]
fn a_commit_is_built_once_and_then_taken_from_the_cache() {
    let repo = Repo::new(&["one", "two"]);
    let root = tempfile::tempdir().unwrap();
    let builds = cache(root.path(), 1 << 30);
    let first = builds.build(&repo.source(0, CC), false).unwrap();
    assert!(first.build_ms > 0);
    assert_eq!(output(&first.program), "one");
    let again = builds.build(&repo.source(0, CC), false).unwrap();
    assert_eq!((again.build_ms, &again.program), (0, &first.program));
    let second = builds.build(&repo.source(1, CC), false).unwrap();
    assert!(second.build_ms > 0);
    assert_eq!(output(&second.program), "two");
    // Another build command is another build.
    let other = builds
        .build(&repo.source(0, "cc -O0 -o engine engine.c"), false)
        .unwrap();
    assert_ne!(other.program, first.program);
    assert!(std::fs::read_to_string(first.program.with_file_name("build.log")).is_ok());
    // What a record names (`git:URL@COMMIT`) finds its build again, for `replay`: the
    // most recently used of the two builds of commit 0.
    let spec = repo.source(0, CC).spec();
    assert_eq!(
        cached_build(root.path(), &spec),
        Some(other.program.clone())
    );
    touch(&first.program);
    assert_eq!(
        cached_build(root.path(), &spec),
        Some(first.program.clone())
    );
    assert_eq!(
        cached_build(root.path(), &repo.source(1, CC).spec()),
        Some(second.program)
    );
    let unbuilt = format!("git:{}@{}", repo.source(0, CC).git, "0".repeat(40));
    assert_eq!(cached_build(root.path(), &unbuilt), None);
    assert_eq!(cached_build(&root.path().join("none"), &spec), None);
}

#[test]
fn workers_of_one_host_build_a_commit_once_between_them() {
    let repo = Repo::new(&["shared"]);
    let root = tempfile::tempdir().unwrap();
    let source = Arc::new(repo.source(0, CC));
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let (builds, source) = (cache(root.path(), 1 << 30), Arc::clone(&source));
            std::thread::spawn(move || builds.build(&source, false).unwrap())
        })
        .collect();
    let built: Vec<Built> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(built.iter().filter(|b| b.build_ms > 0).count(), 1);
    assert!(built.iter().all(|b| b.program == built[0].program));
}

#[test]
fn a_build_leaves_nothing_outside_its_checkout_and_nothing_running() {
    if let Err(why) = tourney_runner::confine::containment(None) {
        eprintln!("skipped: no namespaces here ({why:?})");
        return;
    }
    let repo = Repo::new(&["contained"]);
    let root = tempfile::tempdir().unwrap();
    let mark = format!("tourney-build-leak-{}", std::process::id());
    let leaked = std::env::temp_dir().join(&mark);
    // A daemon of its own session, and a file in the shared temporary directory.
    let build = format!(
        "{CC} && echo leak > {} && (setsid sleep 987{} &) && true",
        leaked.display(),
        std::process::id() % 1000
    );
    let built = cache(root.path(), 1 << 30)
        .build(&repo.source(0, &build), false)
        .unwrap();
    assert_eq!(
        output(&built.program),
        "contained",
        "the checkout's output stays"
    );
    assert!(
        !leaked.exists(),
        "{} was left on the host",
        leaked.display()
    );
    let daemon = format!("sleep 987{}", std::process::id() % 1000);
    let running = tourney_tests::process::running_with(&daemon);
    assert!(running.is_empty(), "outlived its build: {running:?}");
}

#[test]
fn a_failed_build_says_why_with_its_log_and_keeps_nothing() {
    let repo = Repo::new(&["x"]);
    let root = tempfile::tempdir().unwrap();
    let builds = cache(root.path(), 1 << 30);
    let broken = "echo compiling; echo 'engine.c:1: error: expected ;' >&2; exit 1";
    let error = builds.build(&repo.source(0, broken), false).unwrap_err();
    assert!(error.is_engine_fault());
    // The reason says it failed; the log, apart, says why (for those who may read it).
    let text = error.to_string();
    assert!(
        text.starts_with("the build failed (exit status: 1)"),
        "{text}"
    );
    assert!(!text.contains("expected ;"), "{text}");
    let log = error.log();
    assert!(
        log.contains("expected ;") && log.contains("compiling"),
        "{log}"
    );
    let left: Vec<_> = std::fs::read_dir(root.path().join("builds"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let no_program = builds.build(&repo.source(0, "true"), false).unwrap_err();
    assert!(
        matches!(no_program, BuildError::NoProgram(_)),
        "{no_program}"
    );
    let mut outside = repo.source(0, "ln -s /etc/passwd engine");
    outside.binary = "engine".into();
    assert!(matches!(
        builds.build(&outside, false),
        Err(BuildError::NoProgram(_))
    ));
}

#[test]
fn a_missing_commit_or_repository_or_tool_is_named() {
    let repo = Repo::new(&["x"]);
    let root = tempfile::tempdir().unwrap();
    let builds = cache(root.path(), 1 << 30);
    let mut missing = repo.source(0, CC);
    missing.commit = "0123456789abcdef0123456789abcdef01234567".into();
    let error = builds.build(&missing, false).unwrap_err();
    assert!(!error.is_engine_fault());
    assert!(
        error.to_string().contains("no commit 0123456789abcdef"),
        "{error}"
    );
    let mut gone = repo.source(0, CC);
    gone.git = "file:///nonexistent/repository".into();
    let error = builds.build(&gone, false).unwrap_err();
    assert!(matches!(error, BuildError::Fetch { .. }), "{error}");
    assert!(
        error.to_string().contains("/nonexistent/repository"),
        "{error}"
    );
    let tool = builds
        .build(
            &repo.source(0, "no-such-compiler -o engine engine.c"),
            false,
        )
        .unwrap_err();
    assert!(matches!(tool, BuildError::Toolchain(_)), "{tool}");
    assert!(tool.to_string().contains("no-such-compiler"), "{tool}");
    // A tool missing further on in the build: the shell's 127 says so.
    let later = builds
        .build(&repo.source(0, "cd . && no-such-linker engine.c"), false)
        .unwrap_err();
    assert!(matches!(later, BuildError::Toolchain(_)), "{later}");
}

#[test]
fn the_cache_keeps_to_its_bound_by_evicting_the_least_recently_used() {
    let repo = Repo::new(&["a", "b", "c"]);
    let root = tempfile::tempdir().unwrap();
    let probe = cache(root.path(), 1 << 30)
        .build(&repo.source(0, CC), false)
        .unwrap();
    let one = std::fs::metadata(&probe.program).unwrap().len();
    std::fs::remove_dir_all(root.path().join("builds")).unwrap();
    // Room for two builds, not three.
    let builds = cache(root.path(), one * 2 + one / 2);
    let a = builds.build(&repo.source(0, CC), false).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let b = builds.build(&repo.source(1, CC), false).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    // Using `a` makes `b` the least recently used.
    assert_eq!(
        builds.build(&repo.source(0, CC), false).unwrap().build_ms,
        0
    );
    std::thread::sleep(Duration::from_millis(20));
    let c = builds.build(&repo.source(2, CC), false).unwrap();
    assert!(a.program.exists() && c.program.exists());
    assert!(!b.program.exists(), "the least recently used build stays");
}

#[test]
fn a_build_fetches_as_the_engines_user_and_never_runs_as_root() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: only root can run builds as another user");
        return;
    }
    let repo = Repo::new(&["private"]);
    std::fs::set_permissions(repo.dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let host = tempfile::tempdir().unwrap();
    std::fs::set_permissions(host.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = host.path().join("cache");
    // Without an engines' user, a root worker builds nothing.
    let refused = cache(&root, 1 << 30);
    let refused = BuildCache {
        policy: EnginePolicy::default(),
        ..refused
    };
    let e = refused.build(&repo.source(0, CC), false).unwrap_err();
    assert!(
        matches!(&e, BuildError::Toolchain(why) if why.contains("--engine-user")),
        "{e}"
    );
    // As `nobody`, a repository only root may read (mode 700) cannot be fetched...
    let nobody = BuildCache {
        policy: EnginePolicy {
            run_as: Some((65534, 65534)),
            ..EnginePolicy::default()
        },
        ..cache(&root, 1 << 30)
    };
    let e = nobody.build(&repo.source(0, CC), false).unwrap_err();
    assert!(matches!(e, BuildError::Fetch { .. }), "{e}");
    // ...and one it may read is, and built by it.
    std::fs::set_permissions(repo.dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let built = nobody.build(&repo.source(0, CC), false).unwrap();
    assert_eq!(output(&built.program), "private");
    let log = built.program.with_file_name("build.log");
    use std::os::unix::fs::MetadataExt;
    let checkout_owner = std::fs::metadata(built.program.parent().unwrap())
        .unwrap()
        .uid();
    assert_eq!(checkout_owner, 65534, "{}", log.display());
}
