//! Outside engines where the system refuses namespaces, as a container runtime's default
//! seccomp profile does (Kubernetes `RuntimeDefault`, Docker's default): this test binary
//! installs such a filter on itself first (`unshare` and namespace flags of `clone` refused,
//! `clone3` unknown), then runs an engine that leaves a `setsid` daemon behind and tries to
//! read its worker's environment. A binary of its own: the filter and the orphan reaper
//! act on the whole process.

use std::time::{Duration, Instant};

use tourney_tests::process::running_with;

use tourney_runner::{Contestant, EngineConfig, ExternalEngine, confine};

/// Refuses namespaces to this process and its children from now on, as a container's
/// default seccomp profile does. `false` where this test does not know the architecture.
fn refuse_namespaces() -> bool {
    if !cfg!(target_arch = "x86_64") {
        return false;
    }
    const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
    const NAMESPACES: u32 = 0x7E02_0000;
    let errno = |e: i32| libc::SECCOMP_RET_ERRNO | (e as u32 & libc::SECCOMP_RET_DATA);
    let stmt = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let (ld, jeq, jset, ret) = (
        libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
        libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
        libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K,
        libc::BPF_RET | libc::BPF_K,
    );
    // 0 arch; 1 x86_64?; 2 allow; 3 number; 4 unshare?; 5 clone3?; 6 clone?; 7 its flags;
    // 8 a namespace flag?; 9 allow; 10 allow; 11 EPERM; 12 ENOSYS.
    let mut program = [
        stmt(ld, 4),
        jump(jeq, AUDIT_ARCH_X86_64, 1, 0),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ld, 0),
        jump(jeq, libc::SYS_unshare as u32, 6, 0),
        jump(jeq, libc::SYS_clone3 as u32, 6, 0),
        jump(jeq, libc::SYS_clone as u32, 0, 2),
        stmt(ld, 16),
        jump(jset, NAMESPACES, 2, 0),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ret, libc::SECCOMP_RET_ALLOW),
        stmt(ret, errno(libc::EPERM)),
        stmt(ret, errno(libc::ENOSYS)),
    ];
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_mut_ptr(),
    };
    // SAFETY: prctl with a filter that lives through the call.
    unsafe {
        libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
            && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &fprog) == 0
    }
}

/// The worker's token in this test: in the environment the process started with, as
/// Kubernetes passes it (`/proc/<pid>/environ` shows only that one).
const TOKEN: &str = "token-the-engine-must-not-see";

#[test]
fn without_namespaces_an_engine_leaves_nothing_running_and_reads_no_token() {
    // Run again as a process of its own that starts with the token in its environment,
    // and as an unprivileged user from its start, as the shipped pod runs (a process that
    // changes its user becomes undumpable by that alone).
    if std::env::var("TOURNEY_WORKER_TOKEN").as_deref() != Ok(TOKEN) {
        // A copy of this binary where that user may run it (the checkout may be private).
        let place = tempfile::tempdir().unwrap();
        let exe = place.path().join("no_namespaces");
        std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut again = std::process::Command::new(&exe);
        again.current_dir(place.path());
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::process::CommandExt::uid(&mut again, 65534);
            std::os::unix::process::CommandExt::gid(&mut again, 65534);
        }
        let out = again
            .args([
                "--exact",
                "without_namespaces_an_engine_leaves_nothing_running_and_reads_no_token",
                "--nocapture",
            ])
            .env("TOURNEY_WORKER_TOKEN", TOKEN)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    if !refuse_namespaces() {
        eprintln!("skipped: no seccomp filter for this architecture");
        return;
    }
    assert!(
        confine::containment(None).is_err(),
        "the filter should refuse the namespaces"
    );
    assert!(confine::adopt_orphans(), "no child subreaper here");
    let dir = tempfile::tempdir().unwrap();
    let mark = format!("71{}", std::process::id() % 100_000);
    let script = dir.path().join("engine.sh");
    // At `isready` it starts a daemon of its own session and looks for the token in its
    // worker's environment (its parent, or an ancestor) and reports what it read.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    ugi) echo ugiok ;;\n    \
             isready) setsid sleep {mark} </dev/null >/dev/null 2>&1 &\n      \
             for p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do tr '\\0' ' ' < /proc/$p/environ >&2; done\n      \
             echo readyok ;;\n    bench) echo 'bench nodes 1 nps 1' ;;\n    quit) exit 0 ;;\n  esac\ndone\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = EngineConfig::new(&script.display().to_string());
    let mut engine = ExternalEngine::new(config);
    let bench = engine.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    assert_eq!(bench.unwrap(), Some((1, 1)));
    let said = Contestant::<tourney_rules::Loa>::stderr_tail(&engine).join("\n");
    assert!(!said.contains(TOKEN), "{said}");
    drop(engine);
    // Its daemon, adopted by this process, is killed and reaped.
    let until = Instant::now() + Duration::from_secs(5);
    while !running_with(&mark).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running_with(&mark).is_empty(), "{:?}", running_with(&mark));
}
