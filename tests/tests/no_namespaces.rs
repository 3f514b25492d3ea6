//! Outside engines where the system refuses namespaces, as a container runtime's default
//! seccomp profile does (Kubernetes `RuntimeDefault`, Docker's default): this test binary
//! installs such a filter on itself first (`unshare` and namespace flags of `clone` refused,
//! `clone3` unknown), then runs an engine that leaves a `setsid` daemon behind and tries to
//! read its worker's environment, and one that tries to reach the host's network. A binary
//! of its own: the filter and the orphan reaper act on the whole process.

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

/// Runs test `name` of this binary again as a process of its own, started by `launch`
/// from a copy of the binary any user may run (the checkout may be private), with `env`;
/// its output is the failure's message.
fn run_again(
    name: &str,
    launch: impl FnOnce(&std::path::Path) -> std::process::Command,
    env: &[(&str, &str)],
) {
    use std::os::unix::fs::PermissionsExt;
    let place = tempfile::tempdir().unwrap();
    let exe = place.path().join("no_namespaces");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    // The hostile engine beside it, for the same reason.
    let misbehave = place.path().join("misbehave");
    std::fs::copy(env!("CARGO_BIN_EXE_misbehave"), &misbehave).unwrap();
    std::fs::set_permissions(place.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for program in [&exe, &misbehave] {
        std::fs::set_permissions(program, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = launch(&exe)
        .args(["--exact", name, "--nocapture"])
        .current_dir(place.path())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
        run_again(
            "without_namespaces_an_engine_leaves_nothing_running_and_reads_no_token",
            |exe| {
                let mut again = std::process::Command::new(exe);
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    std::os::unix::process::CommandExt::uid(&mut again, 65534);
                    std::os::unix::process::CommandExt::gid(&mut again, 65534);
                }
                again
            },
            &[("TOURNEY_WORKER_TOKEN", TOKEN)],
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
    // The worker's own files: a token file, where engines are not lent anything.
    let worker_files = tempfile::tempdir().unwrap();
    let token_file = worker_files.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let (in_tmp, beside) = (
        std::path::PathBuf::from(format!("/tmp/tourney-fenced-{mark}")),
        std::env::temp_dir().join(format!("tourney-beside-{mark}")),
    );
    // At `isready` it starts a daemon of its own session, looks for the token in its
    // worker's environment (its parent, or an ancestor) and in the worker's token file,
    // reports what it read, and writes outside its working directory.
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    ugi) echo ugiok ;;\n    \
             isready) setsid sleep {mark} </dev/null >/dev/null 2>&1 &\n      \
             for p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do tr '\\0' ' ' < /proc/$p/environ >&2; done\n      \
             cat {token} >&2; touch {in_tmp} {beside} 2>/dev/null\n      \
             if kill -0 $PPID 2>/dev/null; then echo 'signal: reached' >&2; else echo 'signal: refused' >&2; fi\n      \
             echo readyok ;;\n    bench) echo 'bench nodes 1 nps 1' ;;\n    quit) exit 0 ;;\n  esac\ndone\n",
            token = token_file.display(),
            in_tmp = in_tmp.display(),
            beside = beside.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = EngineConfig::new(&script.display().to_string());
    let mut engine = ExternalEngine::new(config);
    let bench = engine.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    assert_eq!(bench.unwrap(), Some((1, 1)));
    let said = Contestant::<tourney_rules::Loa>::stderr_tail(&engine).join("\n");
    // Where the kernel has Landlock, the engine reads none of the worker's files and writes
    // nothing outside its working directory; the environment is closed either way.
    match confine::file_fence() {
        Ok(abi) => {
            assert!(!said.contains(TOKEN), "{said}");
            assert!(
                !in_tmp.exists() && !beside.exists(),
                "it wrote outside: {said}"
            );
            // From ABI 6 it cannot signal its worker (kill it) either.
            let signal = if *abi >= 6 { "refused" } else { "reached" };
            assert!(said.contains(&format!("signal: {signal}")), "{said}");
        }
        Err(why) => {
            eprintln!("no file fence here ({why}): only the environment is checked");
            assert!(
                !said.contains(&format!("TOURNEY_WORKER_TOKEN={TOKEN}")),
                "{said}"
            );
            let _ = (std::fs::remove_file(&in_tmp), std::fs::remove_file(&beside));
        }
    }
    drop(engine);
    // Its daemon, adopted by this process, is killed and reaped.
    let until = Instant::now() + Duration::from_secs(5);
    while !running_with(&mark).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running_with(&mark).is_empty(), "{:?}", running_with(&mark));

    // No network: without a namespace, a seccomp filter refuses its sockets.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let misbehave = std::env::current_exe().unwrap().with_file_name("misbehave");
    let config = EngineConfig::new(&format!("{} net {port}", misbehave.display()));
    let mut engine = ExternalEngine::new(config);
    let _ = engine.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    let said = Contestant::<tourney_rules::Loa>::stderr_tail(&engine).join("\n");
    assert!(
        confine::network_isolation().is_err() && confine::network_seal().is_ok(),
        "namespaces refused, the filter stands in"
    );
    let net = (said.lines())
        .find_map(|l| l.strip_prefix("net: "))
        .unwrap_or_else(|| panic!("the engine said no net line: {said}"));
    assert_ne!(net, "reached", "the engine reached the host: {said}");
    assert!(net.contains("denied"), "refused by the filter: {net}");
    drop(engine);

    // The docs' Python engine starts and answers behind the fence: the interpreter, its
    // libraries and its script are lent to it. (Written here: this process's user may not
    // read the checkout.)
    if std::path::Path::new("/usr/bin/python3").exists() {
        let script = dir.path().join("random_loa.py");
        std::fs::write(&script, include_str!("../../examples/python/random_loa.py")).unwrap();
        let config = EngineConfig::new(&format!("python3 {}", script.display()));
        let mut engine = ExternalEngine::new(config);
        let answered = engine.bench(tourney_rules::GameKind::Loa, Duration::from_secs(20));
        let said = Contestant::<tourney_rules::Loa>::stderr_tail(&engine).join("\n");
        assert_eq!(answered.ok(), Some(None), "{said}");
    }

    // A build from source, confined the same way: its daemon dies with it, it reads no
    // token, and its private home and temporary directory are gone afterwards.
    let checkout = tempfile::tempdir().unwrap();
    let build_mark = format!("73{}", std::process::id() % 100_000);
    let script = format!(
        "setsid sleep {build_mark} </dev/null >/dev/null 2>&1 &\n\
         echo \"home $HOME\"\n\
         for p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do tr '\\0' ' ' < /proc/$p/environ; done\n\
         touch \"$TMPDIR/left-behind\" built"
    );
    let limits = tourney_model::tournament::EngineLimits::default();
    let policy = tourney_runner::confine::EnginePolicy::default();
    let run = tourney_runner::build_run::run_build(&tourney_runner::build_run::BuildStep {
        script: &script,
        dir: checkout.path(),
        env: &[],
        limits: &limits,
        policy: &policy,
        timeout: Duration::from_secs(30),
        disk_bytes: 1 << 20,
        log_bytes: 64 << 10,
    })
    .unwrap();
    assert!(run.succeeded(), "{}", run.log);
    assert!(
        checkout.path().join("built").exists(),
        "what it builds stays"
    );
    assert!(!run.log.contains(TOKEN), "{}", run.log);
    let home = (run.log.lines())
        .find_map(|l| l.strip_prefix("home "))
        .map(std::path::PathBuf::from)
        .unwrap();
    assert!(!home.exists(), "{} left behind", home.display());
    let until = Instant::now() + Duration::from_secs(5);
    while !running_with(&build_mark).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        running_with(&build_mark).is_empty(),
        "the build's daemon outlived it"
    );
}

/// The capabilities the isolated worker pod keeps (`deploy/k8s/isolated`): enough to run
/// engines as another user, kill what they start and clean up after them; nothing else.
const POD_CAPABILITIES: &str = "-all,+setuid,+setgid,+kill,+chown,+fowner,+dac_override";
/// The engines' user in that pod (`--engine-user 10002:10002`).
const ENGINE_ID: u32 = 10002;

/// The isolated pod, emulated: a root worker holding only [`POD_CAPABILITIES`], under a
/// seccomp filter that refuses namespaces, runs its engine as another user. The engine
/// cannot read the worker's token file nor its environment, its `setsid` daemon dies with
/// it, and its working directory is gone afterwards.
#[test]
fn in_the_isolated_pod_an_engine_runs_as_another_user_and_reads_no_token() {
    const MARKER: &str = "TOURNEY_TEST_ISOLATED_POD";
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if std::env::var(MARKER).is_err() {
        if !root || !std::path::Path::new("/usr/bin/setpriv").exists() {
            assert!(
                std::env::var("TOURNEY_REQUIRE_ROOT").is_err() || !root,
                "setpriv (util-linux) is needed to drop capabilities"
            );
            eprintln!("skipped: needs root and setpriv");
            return;
        }
        run_again(
            "in_the_isolated_pod_an_engine_runs_as_another_user_and_reads_no_token",
            |exe| {
                let mut dropped = std::process::Command::new("/usr/bin/setpriv");
                dropped.args([
                    "--bounding-set",
                    POD_CAPABILITIES,
                    "--inh-caps",
                    "-all",
                    "--",
                ]);
                dropped.arg(exe);
                dropped
            },
            &[(MARKER, "1"), ("TOURNEY_WORKER_TOKEN", TOKEN)],
        );
        return;
    }
    // The emulation holds: root, with no capability beyond the pod's.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let effective = (status.lines())
        .find_map(|l| l.strip_prefix("CapEff:"))
        .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
        .unwrap();
    // CAP_CHOWN 0, CAP_DAC_OVERRIDE 1, CAP_FOWNER 3, CAP_KILL 5, CAP_SETGID 6, CAP_SETUID 7
    // (linux/capability.h).
    let kept = [0u32, 1, 3, 5, 6, 7]
        .iter()
        .fold(0u64, |mask, &cap| mask | 1 << cap);
    assert_eq!(effective, kept, "CapEff {effective:x}");
    if !refuse_namespaces() {
        eprintln!("skipped: no seccomp filter for this architecture");
        return;
    }
    let run_as = Some((ENGINE_ID, ENGINE_ID));
    assert!(confine::containment(run_as).is_err(), "no namespaces here");
    assert!(confine::adopt_orphans(), "no child subreaper here");
    // The worker's token file, as a Secret mounted with mode 0400 would be.
    let secrets = tempfile::tempdir().unwrap();
    let token_file = secrets.path().join("worker-token");
    std::fs::write(&token_file, TOKEN).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o400)).unwrap();
    std::fs::set_permissions(secrets.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mark = format!("72{}", std::process::id() % 100_000);
    let script = dir.path().join("engine.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    ugi) echo ugiok ;;\n    \
             isready) setsid sleep {mark} </dev/null >/dev/null 2>&1 &\n      \
             echo \"uid $(id -u) tmp $TMPDIR\" >&2\n      \
             cat {token} >&2 2>/dev/null || echo 'token file: refused' >&2\n      \
             for p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do tr '\\0' ' ' < /proc/$p/environ >&2; done\n      \
             touch \"$TMPDIR/left-behind\"\n      \
             echo readyok ;;\n    bench) echo 'bench nodes 1 nps 1' ;;\n    quit) exit 0 ;;\n  esac\ndone\n",
            token = token_file.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = EngineConfig::new(&script.display().to_string());
    config.policy.run_as = run_as;
    let mut engine = ExternalEngine::new(config);
    let bench = engine.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    let said = Contestant::<tourney_rules::Loa>::stderr_tail(&engine).join("\n");
    assert_eq!(bench.unwrap(), Some((1, 1)), "{said}");
    assert!(said.contains(&format!("uid {ENGINE_ID} ")), "{said}");
    assert!(said.contains("token file: refused"), "{said}");
    assert!(!said.contains(TOKEN), "{said}");
    let work_dir = (said.lines())
        .find_map(|l| l.split(" tmp ").nth(1))
        .map(std::path::PathBuf::from)
        .unwrap();
    drop(engine);
    // Its daemon, of another user, is killed; its working directory is removed.
    let until = Instant::now() + Duration::from_secs(5);
    while !running_with(&mark).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running_with(&mark).is_empty(), "{:?}", running_with(&mark));
    assert!(!work_dir.exists(), "{} left behind", work_dir.display());
}
