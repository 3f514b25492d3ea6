//! Our own server processes in tests: started on port 0, so that each binds a free port
//! itself (no port picked, released and bound again by someone else in between), and asked
//! which port through their JSON log.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// Starts `command` (a `tourney coordinator` or `worker` listening on port 0) with JSON logs
/// on a piped stderr and waits for its log line `message` (`coordinator serving`, `metrics
/// serving`); the child and the port in that line's `listen` field. The rest of stderr is
/// drained in the background.
///
/// # Panics
/// The process ended before that line.
pub fn spawn_listening(mut command: Command, message: &str) -> (Child, u16) {
    let mut child = command
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the process starts");
    let mut lines = BufReader::new(child.stderr.take().expect("piped")).lines();
    let port = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the process ended before '{message}'"))
            .expect("stderr reads");
        let Ok(log) = serde_json::from_str::<serde_json::Value>(&line) else {
            continue;
        };
        if log["fields"]["message"] == message {
            let listen = log["fields"]["listen"].as_str().expect("a listen field");
            break listen
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("an address with a port");
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, port)
}
