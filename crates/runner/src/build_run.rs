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
    /// Its exit status; `None` when it was killed ([`BuildRun::killed`] says why).
    pub status: Option<ExitStatus>,
    /// The end of its output (stdout and stderr as they came), at most the bytes asked for.
    pub log: String,
    /// How long it ran.
    pub elapsed: Duration,
    /// Why it was killed, if it was: out of time, or past its disk bound.
    pub killed: Option<String>,
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

/// One step of a build (its fetch, or its build command): `script`, run by `sh -c` in
/// `dir` with `env` besides the allow-list.
#[derive(Debug, Clone, Copy)]
pub struct BuildStep<'a> {
    /// The shell script (passed in the environment, never as a word the shell or the path
    /// rewriting could take for something else).
    pub script: &'a str,
    /// The directory it works in, which stays the host's (a checkout).
    pub dir: &'a Path,
    /// More environment variables it gets.
    pub env: &'a [(&'a str, &'a str)],
    /// Its resource limits (and whether it may use the network).
    pub limits: &'a EngineLimits,
    /// Who it runs as and how it is confined.
    pub policy: &'a EnginePolicy,
    /// The most time it may take.
    pub timeout: Duration,
    /// The most bytes `dir` may hold while it runs.
    pub disk_bytes: u64,
    /// The bytes of its output kept (its tail).
    pub log_bytes: usize,
}

/// Runs `step` confined like an engine (its limits and policy, in namespaces of its own
/// where the system allows, so that nothing it starts outlives it and nothing it writes
/// outside `dir` stays), `dir` excepted: what it builds there stays. Its whole process
/// group is killed after its time or once `dir` holds more than its bytes. Keeps the end
/// of its output.
///
/// # Errors
/// The private directory or the process could not be made.
pub fn run_build(step: &BuildStep<'_>) -> std::io::Result<BuildRun> {
    let home = WorkDir::new(step.policy.run_as)?;
    let args = ["-c".to_string(), "eval \"$BUILD_COMMAND\"".to_string()];
    let mut command = confine::command(
        "/bin/sh",
        &args,
        step.limits,
        step.policy,
        home.path(),
        Some(step.dir),
        false,
    );
    command
        .current_dir(step.dir)
        .env("BUILD_COMMAND", step.script)
        .envs(step.env.iter().copied());
    let (mut reader, writer) = std::io::pipe()?;
    command
        .stdin(std::process::Stdio::null())
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let started = Instant::now();
    let mut child = confine::start_engine(command, home.path())
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    // The parent's copies of the pipe's writing end went with `command`.
    let log_bytes = step.log_bytes;
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
    let mut measured = Instant::now();
    let (status, killed) = loop {
        match child.try_wait()? {
            Some(status) => break (Some(status), None),
            None if started.elapsed() >= step.timeout => {
                break (
                    None,
                    Some(format!(
                        "ran out of its time limit of {} s",
                        step.timeout.as_secs()
                    )),
                );
            }
            None if measured.elapsed() >= DISK_CHECK => {
                measured = Instant::now();
                if bytes_under(step.dir) > step.disk_bytes {
                    break (
                        None,
                        Some(format!("wrote more than {} MiB", step.disk_bytes >> 20)),
                    );
                }
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    // Whatever the build left running in its group goes with it.
    confine::kill_group(pid);
    if killed.is_some() {
        let _ = child.wait();
    }
    confine::forget_engine(pid);
    let elapsed = started.elapsed();
    let bytes = tail
        .recv_timeout(Duration::from_secs(2))
        .unwrap_or_default();
    let mut log = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(why) = &killed {
        log.push_str(&format!("\n[tourney: the build {why} and was killed]\n"));
    }
    Ok(BuildRun {
        status,
        log,
        elapsed,
        killed,
    })
}

/// How often a build's directory is measured.
const DISK_CHECK: Duration = Duration::from_millis(500);

/// The bytes of the files under `dir` (links not followed).
fn bytes_under(dir: &Path) -> u64 {
    let mut total = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => total += meta.len(),
                Err(_) => {}
            }
        }
    }
    total
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
        let run = run_build(&BuildStep {
            script,
            dir: dir.path(),
            env: &[("BUILD_GREETING", "hello")],
            limits: &limits(),
            policy: &policy,
            timeout,
            disk_bytes: 8 << 20,
            log_bytes,
        })
        .unwrap();
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

    #[test]
    fn a_build_that_fills_its_checkout_is_killed_at_its_bound() {
        let (run, dir) = build(
            "echo $BUILD_GREETING; for i in $(seq 1 40); do head -c 1048576 /dev/zero >> big; sleep 0.05; done",
            Duration::from_secs(30),
            1000,
        );
        assert!(run.status.is_none(), "{run:?}");
        assert!(run.log.starts_with("hello"), "{}", run.log);
        assert!(run.log.contains("wrote more than 8 MiB"), "{}", run.log);
        let size = std::fs::metadata(dir.path().join("big")).unwrap().len();
        assert!(size < 40 << 20, "{size}");
    }
}
