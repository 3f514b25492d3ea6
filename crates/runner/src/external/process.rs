//! An outside engine's process: started confined, its stdout read in bounded lines by the
//! referee's own thread as it waits (no thread between a move and its reader), its stderr
//! on a thread of its own.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tourney_model::tournament::EngineLimits;

use super::{EngineConfig, split_command};
use crate::confine::{self, SpawnError, WorkDir};
use crate::protocol::Command;

/// Stderr lines kept for the record.
pub(super) const STDERR_LINES: usize = tourney_model::MAX_STDERR_LINES;

/// The longest stderr line kept, in bytes (longer ones are cut; read lossily, it is at
/// most as many characters).
pub(super) const STDERR_LINE_BYTES: usize = tourney_model::MAX_STDERR_LINE_CHARS;

/// The longest stdout line read (the rest of a longer one is skipped: no protocol message
/// is that long).
pub(super) const STDOUT_LINE_BYTES: usize = 64 << 10;

/// How much of the engine's stdout is read at once: what is read and not yet asked for
/// stays in the process's buffer (at most this and one line), the rest in the pipe, where
/// the engine waits to write.
const STDOUT_READ: usize = 64 << 10;

/// Reads `reader` line by line, each cut to `max_line` bytes (the rest of a longer line
/// is read and dropped), giving each line to `on_line` until it returns `false` or the
/// input ends; stops early, returning `true`, once more than `max_total` bytes came.
/// Memory stays within `max_line` whatever comes in.
pub(super) fn read_lines(
    reader: impl Read,
    max_line: usize,
    max_total: u64,
    mut on_line: impl FnMut(String) -> bool,
) -> bool {
    let mut reader = BufReader::with_capacity(64 << 10, reader);
    let mut line = Vec::new();
    let mut total = 0u64;
    loop {
        let (consumed, end) = match reader.fill_buf() {
            Ok([]) | Err(_) => break,
            Ok(buf) => {
                let end = buf.iter().position(|&b| b == b'\n');
                let take = end.unwrap_or(buf.len());
                let room = max_line.saturating_sub(line.len());
                line.extend_from_slice(&buf[..take.min(room)]);
                (end.map_or(buf.len(), |i| i + 1), end.is_some())
            }
        };
        reader.consume(consumed);
        total += consumed as u64;
        if end || total > max_total {
            let text = String::from_utf8_lossy(&line)
                .trim_end_matches('\r')
                .to_string();
            line.clear();
            if !on_line(text) {
                return false;
            }
        }
        if total > max_total {
            return true;
        }
    }
    if !line.is_empty() {
        on_line(String::from_utf8_lossy(&line).into_owned());
    }
    false
}

/// An engine's stdout read as lines on the caller's thread: non-blocking reads after
/// `poll`, each line cut to [`STDOUT_LINE_BYTES`] (the rest of a longer one is dropped), so
/// that memory stays within one read and one line whatever the engine writes.
pub(super) struct LineReader {
    pipe: std::process::ChildStdout,
    /// What one read takes in, before its bytes join `buffer`.
    chunk: Box<[u8]>,
    /// Bytes read; those from `start` on are not yet given out as lines.
    buffer: Vec<u8>,
    start: usize,
    /// Where past `start` the search for a line break goes on.
    searched: usize,
    /// Dropping the rest of a line that was too long.
    skipping: bool,
    /// The pipe has ended.
    ended: bool,
}

impl LineReader {
    fn new(pipe: std::process::ChildStdout) -> std::io::Result<LineReader> {
        use std::os::fd::AsRawFd;
        let fd = pipe.as_raw_fd();
        // SAFETY: fcntl on a pipe this process owns, flags read then set.
        let set = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
        };
        if !set {
            return Err(std::io::Error::last_os_error());
        }
        Ok(LineReader {
            pipe,
            chunk: vec![0; STDOUT_READ].into_boxed_slice(),
            buffer: Vec::with_capacity(4096),
            start: 0,
            searched: 0,
            skipping: false,
            ended: false,
        })
    }

    /// The next whole line, waiting at most `within`; `Disconnected` once the pipe has
    /// ended and no line is left (a last line without a break is given out first).
    pub(super) fn next_line(&mut self, within: Duration) -> Result<String, RecvTimeoutError> {
        let until = Instant::now() + within;
        loop {
            if let Some(line) = self.take_line() {
                return Ok(line);
            }
            if self.ended {
                return Err(RecvTimeoutError::Disconnected);
            }
            match self.fill(until.saturating_duration_since(Instant::now())) {
                Ok(true) => {}
                Ok(false) => return Err(RecvTimeoutError::Timeout),
                Err(_) => self.ended = true,
            }
        }
    }

    /// A whole line out of the buffer, if there is one (or the rest, once the pipe ended).
    fn take_line(&mut self) -> Option<String> {
        loop {
            let unread = &self.buffer[self.start..];
            if let Some(at) = unread[self.searched..].iter().position(|&b| b == b'\n') {
                let end = self.searched + at;
                let line =
                    (!self.skipping).then(|| line_text(&unread[..end.min(STDOUT_LINE_BYTES)]));
                self.skipping = false;
                self.start += end + 1;
                self.searched = 0;
                match line {
                    Some(line) => return Some(line),
                    None => continue,
                }
            }
            if unread.len() >= STDOUT_LINE_BYTES && !self.skipping {
                // A line too long: its first part is the line; the rest, to its break, is
                // dropped.
                let line = line_text(&unread[..STDOUT_LINE_BYTES]);
                self.skipping = true;
                self.forget_unread();
                return Some(line);
            }
            if self.skipping {
                self.forget_unread();
            } else {
                self.searched = unread.len();
            }
            if self.ended && self.start < self.buffer.len() {
                let line = line_text(&self.buffer[self.start..]);
                self.forget_unread();
                return Some(line);
            }
            return None;
        }
    }

    fn forget_unread(&mut self) {
        self.buffer.clear();
        self.start = 0;
        self.searched = 0;
    }

    /// Reads what the pipe has, waiting at most `within` for it: `false` when nothing came.
    fn fill(&mut self, within: Duration) -> std::io::Result<bool> {
        use std::os::fd::AsRawFd;
        // Lines given out already make room first.
        self.buffer.drain(..self.start);
        self.start = 0;
        loop {
            match self.pipe.read(&mut self.chunk) {
                Ok(0) => {
                    self.ended = true;
                    return Ok(true);
                }
                Ok(n) => {
                    self.buffer.extend_from_slice(&self.chunk[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            if within.is_zero() {
                return Ok(false);
            }
            let mut fd = libc::pollfd {
                fd: self.pipe.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = within.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one pollfd of a pipe this process owns.
            let ready = unsafe { libc::poll(&mut fd, 1, ms) };
            if ready == 0 {
                return Ok(false);
            }
            if ready < 0
                && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
            {
                return Err(std::io::Error::last_os_error());
            }
        }
    }
}

/// A line's bytes as text (lossily), without a trailing carriage return.
fn line_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .trim_end_matches('\r')
        .to_string()
}

/// A running engine process, confined (see [`confine`]).
pub(super) struct EngineProcess {
    pub(super) child: Child,
    pub(super) stdin: ChildStdin,
    /// Its stdout, read as lines on the caller's thread.
    pub(super) stdout: LineReader,
    /// Its last stderr lines, with when each came.
    pub(super) stderr: Arc<Mutex<VecDeque<(Instant, String)>>>,
    /// Closed when the stderr reader has read everything.
    pub(super) stderr_done: Receiver<()>,
    /// Set when the engine wrote more stderr than its limit (and was killed for it).
    pub(super) stderr_over: Arc<AtomicBool>,
    /// Bytes of stderr read so far.
    pub(super) stderr_bytes: Arc<AtomicU64>,
    /// Its stderr pipe, to see what is still unread in it ([`EngineProcess::stderr_tail`]).
    pub(super) stderr_unread: Option<std::os::fd::OwnedFd>,
    pub(super) limits: EngineLimits,
    /// Its working directory, removed after it (declared last: dropped after the kill).
    pub(super) _dir: WorkDir,
}

impl EngineProcess {
    pub(super) fn spawn(config: &EngineConfig) -> Result<EngineProcess, StartError> {
        let (command, limits, policy) = (&config.command, &config.limits, &config.policy);
        if let Some(why) = confine::refuse_root(policy) {
            return Err(StartError::Refused(why));
        }
        let words = split_command(command);
        let (program, args) = words.split_first().ok_or(StartError::EmptyCommand)?;
        let program = own_program(program);
        // A bare name is looked for on the PATH the engine gets, so that a misspelled or
        // missing interpreter says so (spawning it would say what the last PATH entry
        // tried said: "Permission denied" for one the engine's user cannot read).
        if config.program_sha256.is_none() {
            confine::find_program(&program, policy).map_err(|why| StartError::Spawn {
                command: command.to_string(),
                source: SpawnError::NotFound(why),
            })?;
        }
        // A program named by its hash runs from a sealed copy checked as it is made.
        let sealed = (config.program_sha256.as_deref())
            .map(|sha| confine::sealed_copy(std::path::Path::new(&program), sha))
            .transpose()
            .map_err(StartError::Changed)?;
        let dir = WorkDir::new(policy.run_as).map_err(StartError::WorkDir)?;
        for (name, file) in &config.files {
            // A script's files keep their place beside it (`lib/board.py`).
            let at = dir.path().join(name);
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent).map_err(StartError::WorkDir)?;
            }
            // A relative path (a cache under a relative `--data`) is this process's: the
            // link, read from the engine's directory, must not be.
            let file = std::path::absolute(file).map_err(StartError::WorkDir)?;
            std::os::unix::fs::symlink(file, at).map_err(StartError::WorkDir)?;
        }
        let mut engine = match &sealed {
            Some(copy) => {
                let fd = std::os::fd::AsRawFd::as_raw_fd(copy);
                let path = format!("/proc/self/fd/{fd}");
                let from_cwd = config.paths_from_cwd;
                let mut engine =
                    confine::command(&path, args, limits, policy, dir.path(), None, from_cwd);
                engine.arg0(&program);
                // SAFETY: fcntl is async-signal-safe; the descriptor is open until the
                // process is started.
                unsafe {
                    engine.pre_exec(move || match libc::fcntl(fd, libc::F_SETFD, 0) {
                        0 => Ok(()),
                        _ => Err(std::io::Error::last_os_error()),
                    });
                }
                engine
            }
            None => confine::command(
                &program,
                args,
                limits,
                policy,
                dir.path(),
                None,
                config.paths_from_cwd,
            ),
        };
        engine
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child =
            confine::start_engine(engine, dir.path()).map_err(|source| StartError::Spawn {
                command: command.to_string(),
                source,
            })?;
        let no_pipe = || StartError::NoPipe;
        let stdin = child.stdin.take().ok_or_else(no_pipe)?;
        let stdout = LineReader::new(child.stdout.take().ok_or_else(no_pipe)?)
            .map_err(StartError::WorkDir)?;
        let stderr_pipe = child.stderr.take().ok_or_else(no_pipe)?;
        let stderr_unread = std::os::fd::AsFd::as_fd(&stderr_pipe)
            .try_clone_to_owned()
            .ok();
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        let (done, stderr_done) = channel::<()>();
        let stderr_over = Arc::new(AtomicBool::new(false));
        let over = Arc::clone(&stderr_over);
        let stderr_bytes = Arc::new(AtomicU64::new(0));
        let bytes = Arc::clone(&stderr_bytes);
        let (pid, most) = (child.id(), limits.stderr_kb.saturating_mul(1024));
        thread::spawn(move || {
            let _done = done;
            let flooded = read_lines(stderr_pipe, STDERR_LINE_BYTES, most, |line| {
                bytes.fetch_add(line.len() as u64 + 1, Ordering::Relaxed);
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back((Instant::now(), line));
                true
            });
            if flooded {
                over.store(true, Ordering::Relaxed);
                confine::kill_group(pid);
            }
        });
        Ok(EngineProcess {
            child,
            stdin,
            stdout,
            stderr,
            stderr_done,
            stderr_over,
            stderr_bytes,
            stderr_unread,
            limits: *limits,
            _dir: dir,
        })
    }

    /// Whether the process can play another game: alive, with at least half of its CPU time
    /// and stderr limits left (they count over a process's life), so that each game it plays
    /// has its share of them.
    pub(super) fn fit_for_another_game(&mut self) -> bool {
        let alive = matches!(self.child.try_wait(), Ok(None));
        let cpu = confine::cpu_seconds_used(self.child.id()).unwrap_or(0.0);
        let stderr = self.stderr_bytes.load(Ordering::Relaxed);
        alive
            && cpu * 2.0 < self.limits.cpu_seconds as f64
            && stderr * 2 < self.limits.stderr_kb.saturating_mul(1024)
    }

    /// Forgets the stderr lines of earlier games: a game's record keeps its own.
    pub(super) fn clear_stderr(&self) {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Its exit status if it exits within `within` (`None`: still running).
    pub(super) fn exit_within(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let until = Instant::now() + within;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if Instant::now() >= until {
                return None;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    /// Kills the engine and everything in its process group, and reaps it.
    pub(super) fn kill(&mut self) {
        // Killed before it is forgotten: `end_engines` meanwhile kills it too, never misses it.
        confine::kill_group(self.child.id());
        confine::forget_engine(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends `line` (a command as the engine's dialect writes it); returns it.
    pub(super) fn send(&mut self, line: String) -> Result<String, WriteError> {
        let [line] = self.send_all([line])?;
        Ok(line)
    }

    /// Sends `lines` in one write (a move's `position` and `go`: one wake-up of the
    /// engine, one system call); returns them.
    pub(super) fn send_all<const N: usize>(
        &mut self,
        lines: [String; N],
    ) -> Result<[String; N], WriteError> {
        let mut bytes = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in &lines {
            bytes.extend_from_slice(line.as_bytes());
            bytes.push(b'\n');
        }
        self.stdin
            .write_all(&bytes)
            .and_then(|()| self.stdin.flush())
            .map_err(WriteError)?;
        Ok(lines)
    }

    /// The next line, waiting at most until `deadline`; `Disconnected` once the engine's
    /// output has ended or its process has exited (even if something it started still
    /// holds the pipe open).
    pub(super) fn next_line(&mut self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout.next_line(left.min(Duration::from_millis(100))) {
                Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                    return Err(RecvTimeoutError::Timeout);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Ok(Some(_)) = self.child.try_wait() {
                        // What it wrote before it exited, then nothing.
                        return self
                            .stdout
                            .next_line(Duration::ZERO)
                            .map_err(|_| RecvTimeoutError::Disconnected);
                    }
                }
                other => return other,
            }
        }
    }

    /// Why the engine's output ended: a limit it hit, or its exit status if it has
    /// exited.
    pub(super) fn ended(&mut self) -> String {
        // Give a dying process a moment so its status can be reported.
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                if self.stderr_over.load(Ordering::Relaxed) {
                    return format!(
                        "engine stopped: it wrote more than {} KiB to stderr \
                         (engine_limits.stderr_kb)",
                        self.limits.stderr_kb
                    );
                }
                return match confine::limit_hit(&status, &self.limits) {
                    Some(limit) => format!("engine exited ({status}): {limit}"),
                    None => format!("engine exited ({status})"),
                };
            }
            thread::sleep(Duration::from_millis(5));
        }
        "engine closed its output".to_string()
    }

    /// Its last stderr lines, with when each came: once what the engine wrote before now
    /// has been read (the pipe empty and the reader's count still, for at most 50 ms), so
    /// that a line written before its last answer is not missed under load.
    pub(super) fn stderr_tail(&self) -> Vec<(Instant, String)> {
        if let Some(pipe) = &self.stderr_unread {
            let unread = || {
                let mut bytes: libc::c_int = 0;
                // SAFETY: FIONREAD writes the count of unread bytes into `bytes`.
                let ok = unsafe {
                    libc::ioctl(
                        std::os::fd::AsRawFd::as_raw_fd(pipe),
                        libc::FIONREAD,
                        &mut bytes,
                    )
                };
                ok == 0 && bytes > 0
            };
            let until = Instant::now() + Duration::from_millis(50);
            loop {
                let read = self.stderr_bytes.load(Ordering::Relaxed);
                if !unread() {
                    thread::sleep(Duration::from_millis(1));
                    if !unread() && self.stderr_bytes.load(Ordering::Relaxed) == read {
                        break;
                    }
                }
                if Instant::now() >= until {
                    break;
                }
                thread::sleep(Duration::from_millis(1));
            }
        }
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for EngineProcess {
    /// `quit`, then at most a second for the engine to close its output (the reader sees it
    /// at once: no polling), then its whole process group is killed (what it forked does
    /// not outlive it); always reaped.
    fn drop(&mut self) {
        // `quit` is the same word in every dialect.
        let _ = self.send(Command::Quit.to_string());
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.stdout.next_line(left) {
                Ok(_) if !left.is_zero() => continue,
                _ => break,
            }
        }
        self.kill();
    }
}

/// The program to run for a command's first word: `tourney` is this very program when it
/// is tourney (a worker's engines `tourney engine ...` need no `tourney` on the PATH).
pub(super) fn own_program(program: &str) -> String {
    let me = std::env::current_exe().ok();
    match me {
        Some(me) if program == "tourney" && me.file_name().is_some_and(|n| n == "tourney") => {
            me.display().to_string()
        }
        _ => program.to_string(),
    }
}

/// Why an engine's process could not be started: the engine is unfit to play.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// Engines may not run as root here (the policy's reason).
    #[error("{0}")]
    Refused(String),
    /// The command line has no program.
    #[error("empty engine command")]
    EmptyCommand,
    /// Its private working directory could not be made.
    #[error("no working directory for the engine: {0}")]
    WorkDir(#[source] std::io::Error),
    /// The process did not start.
    #[error("cannot start '{command}': {source}")]
    Spawn {
        /// The engine's command line.
        command: String,
        /// Why it did not start.
        #[source]
        source: SpawnError,
    },
    /// A pipe to the process was missing.
    #[error("no pipe to the engine's stdin, stdout or stderr")]
    NoPipe,
    /// Its program is not the one named by its hash (it changed in the cache).
    #[error("{0}")]
    Changed(String),
}

/// A line could not be written to the engine (it closed its input or exited).
#[derive(Debug, thiserror::Error)]
#[error("writing to the engine: {0}")]
pub(crate) struct WriteError(#[source] std::io::Error);
