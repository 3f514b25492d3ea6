//! What outside engines leave behind where namespaces are refused (a container's default
//! seccomp profile): a `setsid` daemon, orphaned, is adopted by the program that runs the
//! engines and killed and reaped within a second. A binary of its own: the reaper acts on
//! the whole process.

use std::time::{Duration, Instant};

use tourney_tests::process::running_with;

#[test]
fn a_setsid_daemon_is_adopted_killed_and_reaped() {
    assert!(
        tourney_runner::confine::adopt_orphans(),
        "PR_SET_CHILD_SUBREAPER is refused here"
    );
    let mark = format!("31{}", std::process::id() % 100_000);
    // An engine's way of leaving a daemon: a new session, its parent gone at once.
    let status = std::process::Command::new("/bin/sh")
        .args(["-c", &format!("setsid sleep {mark} &")])
        .status()
        .unwrap();
    assert!(status.success());
    let until = Instant::now() + Duration::from_secs(5);
    while !running_with(&mark).is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        running_with(&mark).is_empty(),
        "still there, or a zombie: {:?}",
        running_with(&mark)
    );
    // Its own helpers, in its session, are left alone: by a sweep made now and by the
    // reaper's own while it runs, it ends by itself.
    let mut helper = std::process::Command::new("sleep")
        .arg("1")
        .spawn()
        .unwrap();
    tourney_runner::confine::end_orphans();
    let status = helper.wait().unwrap();
    assert!(status.success(), "a helper was killed: {status}");
}
