//! A fleet that says what it can take: workers with labels, cores and opt-outs on a real
//! coordinator, a test none of them can run reported as such, and workers that exit when
//! the queue is empty.

mod common;

use common::*;

use tourney_tests::process::Reaped;
use tourney_tests::tournaments::MatchFile;

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
