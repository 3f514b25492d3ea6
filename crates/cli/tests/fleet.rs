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
