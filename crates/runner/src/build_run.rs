//! Building an engine from source, confined like an engine: the engines' user, resource
//! limits, an environment from the allow-list (no worker tokens), a private home and
//! temporary directory, no network unless allowed, and a time limit; its output kept,
//! bounded.

use std::io::Read;
use std::path::Path;
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use tourney_model::tournament::EngineLimits;

use crate::confine::{self, EnginePolicy, WorkDir};

/// How a confined build ended.
#[derive(Debug)]
pub struct BuildRun {
    /// Its exit status; `None` when it ran out of time and was killed.
    pub status: Option<ExitStatus>,
    /// The end of its output (stdout and stderr as they came), at most the bytes asked for.
    pub log: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl BuildRun {
    /// Whether the build succeeded.
    pub fn succeeded(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// Whether the shell did not find a command the build runs (exit status 127): a tool
    /// this host lacks, not a fault of the source.
    pub fn lacks_a_tool(&self) -> bool {
        self.status.and_then(|s| s.code()) == Some(127)
    }
}

/// Runs `script` with `sh -c` in `dir` (a checkout the engines' user may write), confined
/// by `limits` and `policy` but in the host's file system, so that what it builds stays;
/// its whole process group is killed after `timeout`. Keeps the last `log_bytes` bytes of
/// its output.
///
/// # Errors
/// The private directory or the process could not be made.
pub fn run_build(
    script: &str,
    dir: &Path,
    limits: &EngineLimits,
    policy: &EnginePolicy,
    timeout: Duration,
    log_bytes: usize,
) -> std::io::Result<BuildRun> {
    let home = WorkDir::new(policy.run_as)?;
    // The script is passed in the environment, never as a word the shell or the path
    // rewriting could take for something else.
    let args = ["-c".to_string(), "eval \"$BUILD_COMMAND\"".to_string()];
    let mut command = confine::command("/bin/sh", &args, limits, policy, home.path(), false);
    command.current_dir(dir).env("BUILD_COMMAND", script);
    let (mut reader, writer) = std::io::pipe()?;
    command
        .stdin(std::process::Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let started = Instant::now();
    let mut child = confine::start_engine(command, home.path())
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    // The parent's copies of the pipe's writing end went with `command`.
    let (tail_sender, tail) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut kept: Vec<u8> = Vec::new();
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            kept.extend_from_slice(&buf[..n]);
            if kept.len() > 2 * log_bytes {
                kept.drain(..kept.len() - log_bytes);
            }
        }
        let start = kept.len().saturating_sub(log_bytes);
        let _ = tail_sender.send(kept.split_off(start));
    });
    let pid = child.id();
    let status = loop {
        match child.try_wait()? {
            Some(status) => break Some(status),
            None if started.elapsed() >= timeout => {
                confine::kill_group(pid);
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    // Whatever the build left running in its group goes with it.
    confine::kill_group(pid);
    confine::forget_engine(pid);
    let elapsed = started.elapsed();
    let bytes = tail
        .recv_timeout(Duration::from_secs(2))
        .unwrap_or_default();
    let mut log = String::from_utf8_lossy(&bytes).into_owned();
    if status.is_none() {
        log.push_str(&format!(
            "\n[tourney: the build ran out of its time limit of {} s and was killed]\n",
            timeout.as_secs()
        ));
    }
    Ok(BuildRun {
        status,
        log,
        elapsed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> EngineLimits {
        EngineLimits {
            memory_mb: 4096,
            cpu_seconds: 60,
            processes: 256,
            open_files: 256,
            file_size_mb: 64,
            ..EngineLimits::default()
        }
    }

    fn build(script: &str, timeout: Duration, log_bytes: usize) -> (BuildRun, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let policy = EnginePolicy {
            allow_root: true,
            ..EnginePolicy::default()
        };
        let run = run_build(script, dir.path(), &limits(), &policy, timeout, log_bytes).unwrap();
        (run, dir)
    }

    #[test]
    fn a_build_runs_in_its_directory_and_keeps_what_it_makes() {
        let (run, dir) = build(
            "echo built > out.txt && echo done",
            Duration::from_secs(20),
            1000,
        );
        assert!(run.succeeded(), "{run:?}");
        assert_eq!(run.log.trim(), "done");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
            "built\n"
        );
    }

    #[test]
    fn a_build_sees_no_worker_secrets_and_has_a_private_home() {
        // SAFETY: set before the build starts; read by no other test.
        unsafe { std::env::set_var("TOURNEY_WORKER_TOKEN_FOR_BUILD_TEST", "secret") };
        let (run, _dir) = build(
            "test -z \"$TOURNEY_WORKER_TOKEN_FOR_BUILD_TEST\" && echo clean; test \"$HOME\" != \"$PWD\" && echo private",
            Duration::from_secs(20),
            1000,
        );
        assert_eq!(
            run.log.split_whitespace().collect::<Vec<_>>(),
            ["clean", "private"]
        );
    }

    #[test]
    fn a_failed_build_keeps_the_tail_of_its_log() {
        let (run, _dir) = build(
            "for i in $(seq 1 2000); do echo line $i; done; echo the error >&2; exit 3",
            Duration::from_secs(20),
            100,
        );
        assert!(!run.succeeded());
        assert_eq!(run.status.and_then(|s| s.code()), Some(3));
        assert!(run.log.len() <= 100, "{}", run.log.len());
        assert!(run.log.ends_with("the error\n"), "{:?}", run.log);
        let (missing, _dir) = build(
            "no-such-compiler-here -O2 x.c",
            Duration::from_secs(20),
            1000,
        );
        assert!(missing.lacks_a_tool(), "{missing:?}");
    }

    #[test]
    fn a_build_over_its_time_is_killed_with_what_it_started() {
        let (run, _dir) = build("sleep 30 & sleep 30", Duration::from_millis(300), 1000);
        assert!(run.status.is_none());
        assert!(run.elapsed < Duration::from_secs(10), "{:?}", run.elapsed);
        assert!(run.log.contains("time limit"), "{}", run.log);
    }
}
