//! What the CLI's cluster tests share: the `tourney` binary with the test tokens, a
//! coordinator and workers on loopback, and admin commands against them.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};

use tourney_tests::process::spawn_listening;
use tourney_tests::wait;

/// The `tourney` binary, with the test tokens in its environment.
pub(crate) fn tourney() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tourney"));
    c.env("TOURNEY_WORKER_TOKEN", "worker-secret")
        .env("TOURNEY_ADMIN_TOKEN", "admin-secret");
    c
}

/// A coordinator on `port` (0: any free one, bound by the coordinator itself); its port.
pub(crate) fn start_coordinator(port: u16, data: &std::path::Path) -> (Child, u16) {
    start_coordinator_with(port, data, &[])
}

/// [`start_coordinator`] with `extra` flags.
pub(crate) fn start_coordinator_with(
    port: u16,
    data: &std::path::Path,
    extra: &[&str],
) -> (Child, u16) {
    let mut command = tourney();
    command
        .args([
            "coordinator",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data",
        ])
        .arg(data)
        .args(["--lease-seconds", "2"])
        .args(extra);
    spawn_listening(command, "coordinator serving")
}

/// A coordinator started again on `port` (the one the workers know) and `data`, once the
/// port the killed one held is free.
pub(crate) fn restart_coordinator(port: u16, data: &std::path::Path) -> (Child, u16) {
    wait::until(10, &format!("port {port} to be free"), || {
        std::net::TcpListener::bind(("127.0.0.1", port))
            .map(drop)
            .map_err(|e| e.to_string())
    });
    start_coordinator(port, data)
}

/// A worker of the coordinator on `port`, serving its metrics on a port of its own.
pub(crate) fn start_worker_with_metrics(port: u16, name: &str) -> (Child, u16) {
    let mut command = worker_command(port, name);
    command.args(["--metrics", "127.0.0.1:0"]);
    spawn_listening(command, "metrics serving")
}

/// A worker of the coordinator on `port`, its output dropped.
pub(crate) fn start_worker(port: u16, name: &str) -> Child {
    worker_command(port, name)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A worker command with the cluster tests' program cache.
pub(crate) fn worker_command(port: u16, name: &str) -> Command {
    worker_with_cache(
        port,
        name,
        &std::env::temp_dir().join("tourney-cluster-cache"),
    )
}

/// A worker command whose host cache (programs, data files, builds) is `cache`.
pub(crate) fn worker_with_cache(port: u16, name: &str, cache: &std::path::Path) -> Command {
    let mut command = tourney();
    command.arg("worker");
    command
        .args([
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
            "--concurrency",
            "1",
            "--name",
            name,
            "--cache",
        ])
        .arg(cache)
        .env("TOURNEY_TOKEN", "worker-secret");
    command
}

/// `tourney <args>` once, as the admin of the coordinator on `port`.
pub(crate) fn as_admin(port: u16, args: &[&str]) -> std::process::Output {
    tourney()
        .args(args)
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", "admin-secret")
        .output()
        .unwrap()
}

/// `tourney <args>` as the admin, retried while the coordinator is (re)starting.
pub(crate) fn admin(port: u16, args: &[&str]) -> String {
    wait::until(20, &format!("tourney {args:?} to succeed"), || {
        let out = as_admin(port, args);
        match out.status.success() {
            true => Ok(String::from_utf8(out.stdout).unwrap()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    })
}

/// Submits the tournament file `file`; its id (`submit` prints it last).
pub(crate) fn submit(port: u16, file: &std::path::Path) -> String {
    admin(port, &["submit", file.to_str().unwrap()])
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string()
}

/// Tournament `id`'s status as `tourney status --json` gives it.
pub(crate) fn status(port: u16, id: &str) -> serde_json::Value {
    serde_json::from_str(&admin(port, &["status", id, "--json"])).unwrap()
}

/// Tournament `id`'s status once `done` holds for it (waited for up to two minutes).
pub(crate) fn wait_for(
    port: u16,
    id: &str,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    wait::until(120, what, || {
        let s = status(port, id);
        if done(&s) { Ok(s) } else { Err(s.to_string()) }
    })
}

/// Whether Chromium and chromedriver are here for a dashboard test; without them the test
/// is skipped, or fails where `TOURNEY_REQUIRE_CHROMIUM` is set.
pub(crate) fn chromium() -> bool {
    if tourney_tests::webdriver::available() {
        return true;
    }
    wait::skip_unless_required(
        "TOURNEY_REQUIRE_CHROMIUM",
        "no chromium/chromedriver (apt install chromium chromium-driver)",
    );
    false
}

/// The sha256 of the book a preset of version `name` names (`book:<sha256>`), as `tourney
/// version show` lists it.
pub(crate) fn preset_book(port: u16, name: &str) -> String {
    let shown = admin(port, &["version", "show", name]);
    let sha = (shown.split("book:").nth(1))
        .and_then(|rest| rest.get(..64))
        .unwrap_or_else(|| panic!("no book in {shown}"));
    assert!(tourney_model::source::is_sha256(sha), "{shown}");
    sha.to_string()
}

/// Registers version `name`, an outside engine (`tourney engine ab`, the worker's own
/// program) with `args` (`--preset`, `--option`, `--parent`, ...).
pub(crate) fn add_program_version(port: u16, name: &str, args: &[&str]) {
    let mut all = vec!["version", "add", name, "--command", "tourney engine ab"];
    all.extend_from_slice(args);
    admin(port, &all);
}
