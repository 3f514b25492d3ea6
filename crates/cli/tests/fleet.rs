//! A fleet that says what it can take: workers with labels, cores and opt-outs on a real
//! coordinator, a test none of them can run reported as such, and workers that exit when
//! the queue is empty.

mod common;

use common::*;

use tourney_tests::process::Reaped;
use tourney_tests::tournaments::MatchFile;
use tourney_tests::wait;

#[test]
fn a_test_no_worker_meets_says_why_until_one_that_meets_it_comes_and_exits_when_idle() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, dir.path());
    let _coordinator = Reaped(coordinator);
    let file = dir.path().join("big.toml");
    let toml = MatchFile {
        name: "big-cache",
        pairs: 2,
        engines: [("a", "ab:depth=1"), ("b", "random")],
        ..Default::default()
    }
    .toml();
    std::fs::write(
        &file,
        format!("{toml}\n[requires]\nlabels = [\"big-cache\"]\n"),
    )
    .unwrap();
    let id = submit(port, &file);
    let small = worker_command(port, "small")
        .args(["--label", "small-cache", "--cores", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _small = Reaped(small);
    let waiting = wait_for(port, &id, "the small worker to be judged", |s| {
        s["unrunnable"].is_string()
    });
    assert_eq!(waiting["unrunnable"], "needs a worker labelled big-cache");
    assert_eq!(waiting["pairs_done"], 0);
    let line = admin(port, &["status", &id]);
    assert!(
        line.contains("no connected worker can run it: needs a worker labelled big-cache"),
        "{line}"
    );

    // A worker with the label plays it, then, with nothing left to do, exits 0 by itself.
    let mut big = Reaped(
        worker_command(port, "big")
            .args(["--label", "big-cache", "--exit-when-idle", "2"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let done = wait_for(port, &id, "the test to finish", |s| {
        s["state"] == "finished"
    });
    assert_eq!(done["pairs_done"], 2);
    let exit = tourney_tests::wait::until(60, "the idle worker to exit", || {
        big.0
            .try_wait()
            .unwrap()
            .ok_or_else(|| "still running".to_string())
    });
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn a_malformed_label_is_refused_as_the_worker_starts() {
    let out = tourney()
        .args([
            "worker",
            "--label",
            "Big Cache",
            "--coordinator",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'Big Cache' is not a label"), "{err}");
}

/// The CPUs the test process may use, as the kernel lists them.
fn cpus_allowed() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    tourney_worker::affinity::parse_list(list).unwrap()
}

#[test]
fn a_pinned_worker_starts_its_engines_on_the_cpus_of_their_game() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, dir.path());
    let _coordinator = Reaped(coordinator);
    // The engine writes the CPUs it may run on (its own sched_getaffinity, as the kernel
    // shows it) to stderr as it starts, then serves `tourney engine random`; the games
    // keep their engines' stderr (`engine_logs = "all"`). (A file would not do: engines
    // see /tmp through an overlay of their own.)
    let engine = dir.path().join("engine.sh");
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\ngrep Cpus_allowed_list /proc/$$/status >&2\nexec {} engine random\n",
            env!("CARGO_BIN_EXE_tourney")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    let file = dir.path().join("pinned.toml");
    let outside = format!("cmd:{}", engine.display());
    let toml = MatchFile {
        name: "pinned",
        pairs: 3,
        limits: "{ movetime = 5 }",
        adjudication: Some("{ max_plies = 40 }"),
        engines: [("outside", &outside), ("builtin", "random")],
        ..Default::default()
    }
    .toml();
    std::fs::write(&file, format!("engine_logs = \"all\"\nthreads = 2\n{toml}")).unwrap();
    let id = submit(port, &file);
    // A game of a 2-thread outside engine and a built-in player keeps two cores (its
    // costliest side's): the last two CPUs this process may use (all of them on a 2-CPU
    // machine; a strict subset, which the engines could only see if pinned, on a bigger
    // one).
    let allowed = cpus_allowed();
    let pinned = &allowed[allowed.len().saturating_sub(2)..];
    let list = tourney_worker::affinity::list_text(pinned);
    let _worker = Reaped(
        worker_command(port, "pinned")
            .args(["--affinity", &list, "--allow-root-engines"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, &id, "the pinned test to finish", |s| {
        s["state"] == "finished"
    });
    let games = admin(port, &["export", &id]);
    let seen: Vec<String> = (games.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .flat_map(|g| {
            let sides = [g["white_stderr"].clone(), g["black_stderr"].clone()];
            sides.into_iter().flat_map(|s| {
                let lines = s.as_array().cloned().unwrap_or_default();
                lines
                    .into_iter()
                    .filter_map(|l| l.as_str().map(str::to_string))
            })
        })
        .filter(|l| l.starts_with("Cpus_allowed_list"))
        .collect();
    let lines = games.lines().count();
    assert!(!seen.is_empty(), "no engine said its CPUs in {lines} games");
    for line in &seen {
        assert_eq!(
            line.split_whitespace().last(),
            Some(list.as_str()),
            "{seen:?}"
        );
    }
}

#[test]
fn an_affinity_naming_a_cpu_the_worker_may_not_use_is_refused() {
    let out = tourney()
        .args([
            "worker",
            "--affinity",
            "1000",
            "--coordinator",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("CPU 1000 is not one this process may use"),
        "{err}"
    );
}

/// A copy of this tourney in `dir` that says it is one version older (`0.1.0` →
/// `0.0.9`: every copy of the version's text in the program, which is where its
/// `--version` and its registration take it from).
fn older_tourney(dir: &std::path::Path) -> std::path::PathBuf {
    let version = env!("CARGO_PKG_VERSION");
    // One less, digit by digit with borrow, keeping its length.
    let mut older: Vec<u8> = version.bytes().collect();
    for b in older.iter_mut().rev().filter(|b| b.is_ascii_digit()) {
        if *b > b'0' {
            *b -= 1;
            break;
        }
        *b = b'9';
    }
    let mut program = std::fs::read(env!("CARGO_BIN_EXE_tourney")).unwrap();
    let mut at = 0;
    while let Some(i) = (program[at..].windows(version.len())).position(|w| w == version.as_bytes())
    {
        program[at + i..at + i + version.len()].copy_from_slice(&older);
        at += i + version.len();
    }
    let path = dir.join("tourney");
    std::fs::write(&path, program).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let said = std::process::Command::new(&path)
        .arg("--version")
        .output()
        .unwrap();
    let older = String::from_utf8(older).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&said.stdout).trim(),
        format!("tourney {older}")
    );
    path
}

/// An `--update` worker of the program at `program`, its log in `log`.
fn updating_worker(
    port: u16,
    program: &std::path::Path,
    name: &str,
    log: &std::path::Path,
) -> Reaped {
    let command = worker_command(port, name);
    let args: Vec<std::ffi::OsString> = command.get_args().map(Into::into).collect();
    let mut worker = std::process::Command::new(program);
    worker
        .args(args)
        .arg("--update")
        .env("TOURNEY_WORKER_TOKEN", "worker-secret")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(log).unwrap());
    Reaped(worker.spawn().unwrap())
}

/// The versions `tourney machines` lists for host `name`.
fn versions_of(port: u16, name: &str) -> Vec<String> {
    let listed = admin(port, &["machines", "--json"]);
    (listed.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| m["host"] == name)
        .flat_map(|m| m["versions"].as_array().cloned().unwrap_or_default())
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn older_workers_update_themselves_and_play_on_without_losing_a_pair() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let current = std::fs::read(env!("CARGO_BIN_EXE_tourney")).unwrap();
    let (first, second) = (dir.path().join("first"), dir.path().join("second"));
    std::fs::create_dir_all(&first).unwrap();
    std::fs::create_dir_all(&second).unwrap();
    let (old_first, old_second) = (older_tourney(&first), older_tourney(&second));
    let version = env!("CARGO_PKG_VERSION");

    // A coordinator that offers no release: the older worker plays as it is.
    let (coordinator, port) = start_coordinator_with(0, &data, &["--worker-release", "none"]);
    let mut coordinator = Reaped(coordinator);
    let toml = MatchFile {
        name: "updates",
        pairs: 20,
        limits: "{ movetime = 15 }",
        adjudication: Some("{ max_plies = 40 }"),
        engines: [("deep", "ab"), ("shallow", "ab:depth=1")],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("updates.toml");
    std::fs::write(&file, toml).unwrap();
    let id = submit(port, &file);
    let first_log = dir.path().join("first.log");
    let mut worker = updating_worker(port, &old_first, "first", &first_log);
    wait_for(port, &id, "pairs played by the older worker", |s| {
        s["pairs_done"].as_u64().unwrap() >= 3
    });
    assert!(versions_of(port, "first").iter().all(|v| v != version));

    // The coordinator comes back as it would after an upgrade, offering its own program
    // and accepting no older worker: the first updates between leases, the second (which
    // starts refused) before its first.
    coordinator.0.kill().unwrap();
    coordinator.0.wait().unwrap();
    let (again, _) = restart_coordinator(port, &data);
    let _coordinator = Reaped(again);
    admin(port, &["machines", "--min-version", version]);
    let second_log = dir.path().join("second.log");
    let _second = updating_worker(port, &old_second, "second", &second_log);

    // Each program is replaced by the coordinator's, which goes on in the same process.
    for (program, log, name) in [
        (&old_first, &first_log, "first"),
        (&old_second, &second_log, "second"),
    ] {
        wait::until(120, &format!("{name} to update"), || {
            let text = std::fs::read_to_string(log).unwrap();
            match text.contains("updated: starting again") {
                true => Ok(()),
                false => Err(text),
            }
        });
        let text = std::fs::read_to_string(log).unwrap();
        assert!(std::fs::read(program).unwrap() == current, "{name}: {text}");
        wait::until(60, &format!("{name} to register updated"), || {
            let versions = versions_of(port, name);
            match versions.iter().any(|v| v == version) {
                true => Ok(()),
                false => Err(format!("{versions:?}")),
            }
        });
        let beside = std::fs::read_dir(program.parent().unwrap())
            .unwrap()
            .count();
        assert_eq!(
            beside, 1,
            "{name}: nothing but the program is left beside it"
        );
    }
    let text = std::fs::read_to_string(&second_log).unwrap();
    assert!(
        text.contains("refuses this version"),
        "the second was refused first: {text}"
    );

    // Every pair counted once, and the second (refused until it updated) played some.
    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    assert_eq!(
        (end["pairs_done"].as_u64(), end["games"].as_u64()),
        (Some(20), Some(40))
    );
    let mut per_pair = std::collections::BTreeMap::new();
    let mut by_second = 0;
    for line in admin(port, &["export", &id]).lines() {
        let game: serde_json::Value = serde_json::from_str(line).unwrap();
        *per_pair.entry(game["pair"].as_u64().unwrap()).or_insert(0) += 1;
        by_second += usize::from(game["worker"].as_str().unwrap().starts_with("second"));
    }
    assert_eq!(per_pair.len(), 20);
    assert!(per_pair.values().all(|&n| n == 2), "{per_pair:?}");
    assert!(by_second > 0, "the updated second worker played");
    assert!(
        worker.0.try_wait().unwrap().is_none(),
        "the first still runs"
    );
}
