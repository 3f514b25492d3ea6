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

/// Processes running now (not zombies) whose command line, arguments joined by spaces,
/// contains `needle`; their pids.
pub fn running_with(needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            line.contains(needle)
        })
        .collect()
}

/// The child a [`forking_engine`] leaves running: `sleep` with an argument unique to it.
pub struct EngineChild(String);

impl EngineChild {
    /// Waits up to 30 s for it to run (the engine started).
    ///
    /// # Panics
    /// It never ran.
    pub fn wait_started(&self) {
        crate::wait::until(30, "the engine to start", || {
            crate::wait::check(!running_with(&self.0).is_empty(), || "not running".into())
        });
    }

    /// Waits up to 5 s for it to be gone (killed with the engine's process group).
    ///
    /// # Panics
    /// It still runs: it outlived `whom`.
    pub fn wait_gone(&self, whom: &str) {
        crate::wait::until(5, &format!("the engine's child to end with {whom}"), || {
            let running = running_with(&self.0);
            crate::wait::check(running.is_empty(), || {
                format!("it outlived {whom}: {running:?}")
            })
        });
    }
}

/// Writes an outside engine into `dir` that leaves a child of its own running, in a
/// session of its own (`setsid`: out of the engine's process group, as a daemon), and then
/// serves `tourney engine ab` with the `tourney` program given. Killing the engine's group
/// does not end the child: only its PID namespace ending does. The script's path, and the
/// child to look for.
pub fn forking_engine(dir: &std::path::Path, tourney: &str) -> (std::path::PathBuf, EngineChild) {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicU32, Ordering};
    static ENGINES: AtomicU32 = AtomicU32::new(0);
    // Unique to this engine: the test process and a count.
    let marker = format!(
        "9{}.{}",
        ENGINES.fetch_add(1, Ordering::Relaxed),
        std::process::id()
    );
    let program = dir.join("engine.sh");
    std::fs::write(
        &program,
        format!("#!/bin/sh\nsetsid sleep {marker} &\nexec {tourney} engine ab\n"),
    )
    .expect("the engine script is written");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))
        .expect("the engine script is made executable");
    (program, EngineChild(format!("sleep {marker}")))
}

/// A child process killed and reaped when dropped, so that a failed assertion leaves no
/// server behind.
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `command` to its end with `stdin` as its input; its output.
///
/// # Panics
/// The command does not start.
pub fn output_with_stdin(command: &mut Command, stdin: &str) -> std::process::Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    // A command that exits without reading its input is not an error here.
    let _ = std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_bytes());
    child.wait_with_output().unwrap()
}
