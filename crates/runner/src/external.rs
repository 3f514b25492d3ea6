//! Outside engines: a process spoken to over the engine protocol on stdin/stdout.
//!
//! A reader thread turns the engine's stdout into lines on a channel, so every wait has a
//! timeout; another keeps the last stderr lines. Whatever the engine does (crash, hang,
//! junk, illegal moves, closing stdout) becomes a [`Failure`] or [`Unfit`] for the referee;
//! nothing panics, and the process is always killed and reaped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tourney_model::Termination;
use tourney_model::tournament::EngineLimits;
use tourney_rules::{Game, Position};

use crate::confine::{self, WorkDir};
use crate::contestant::{Contestant, Failure, Reply, Unfit};
use crate::protocol::{Command, Go, Message, parse_message};

/// Stderr lines kept for the record.
const STDERR_LINES: usize = 20;
/// The longest stderr line kept (longer ones are cut).
const STDERR_LINE_BYTES: usize = 4096;
/// The longest stdout line read (the rest of a longer one is skipped: no protocol message
/// is that long).
const STDOUT_LINE_BYTES: usize = 64 << 10;
/// Stdout lines waiting to be read by the referee; past this the engine waits to write.
const STDOUT_QUEUE: usize = 4096;

/// Reads `reader` line by line, each cut to `max_line` bytes (the rest of a longer line
/// is read and dropped), giving each line to `on_line` until it returns `false` or the
/// input ends; stops early, returning `true`, once more than `max_total` bytes came.
/// Memory stays within `max_line` whatever comes in.
fn read_lines(
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

/// How to start and talk to an outside engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineConfig {
    /// The command line (split on spaces; quotes group words).
    pub command: String,
    /// `setoption` name/value pairs sent after the handshake.
    pub options: Vec<(String, String)>,
    /// How long the handshake (`ugiok`, `readyok`) may take.
    pub handshake_timeout: Duration,
    /// How long an engine may be silent when it has no clock to run out (searches bounded
    /// by nodes or depth).
    pub unresponsive_timeout: Duration,
    /// What its process may use.
    pub limits: EngineLimits,
}

impl EngineConfig {
    /// An engine run by `command` with default timeouts (5 s handshake, 60 s silence).
    pub fn new(command: &str) -> Self {
        EngineConfig {
            command: command.to_string(),
            options: Vec::new(),
            handshake_timeout: Duration::from_secs(5),
            unresponsive_timeout: Duration::from_secs(60),
            limits: EngineLimits::default(),
        }
    }
}

/// Splits a command line into words; double or single quotes group words.
pub fn split_command(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut has_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                has_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if has_word || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if has_word || !word.is_empty() {
        words.push(word);
    }
    words
}

/// A running engine process, confined (see [`confine`]).
struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Closed when the stderr reader has read everything.
    stderr_done: Receiver<()>,
    /// Set when the engine wrote more stderr than its limit (and was killed for it).
    stderr_over: Arc<AtomicBool>,
    limits: EngineLimits,
    /// Its working directory, removed after it (declared last: dropped after the kill).
    _dir: WorkDir,
}

impl EngineProcess {
    fn spawn(command: &str, limits: &EngineLimits) -> Result<EngineProcess, String> {
        if let Some(why) = confine::refuse_root() {
            return Err(why);
        }
        let words = split_command(command);
        let (program, args) = words.split_first().ok_or("empty engine command")?;
        let dir =
            WorkDir::new().map_err(|e| format!("no working directory for the engine: {e}"))?;
        let mut child = confine::command(program, args, limits, dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start '{command}': {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr_pipe = child.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = sync_channel(STDOUT_QUEUE);
        thread::spawn(move || {
            read_lines(stdout, STDOUT_LINE_BYTES, u64::MAX, |line| {
                tx.send(line).is_ok()
            });
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        let (done, stderr_done) = channel::<()>();
        let stderr_over = Arc::new(AtomicBool::new(false));
        let over = Arc::clone(&stderr_over);
        let (pid, most) = (child.id(), limits.stderr_kb.saturating_mul(1024));
        thread::spawn(move || {
            let _done = done;
            let flooded = read_lines(stderr_pipe, STDERR_LINE_BYTES, most, |line| {
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
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
            lines,
            stderr,
            stderr_done,
            stderr_over,
            limits: *limits,
            _dir: dir,
        })
    }

    /// Kills the engine and everything in its process group, and reaps it.
    fn kill(&mut self) {
        confine::kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn send(&mut self, command: &Command) -> Result<(), String> {
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to the engine: {e}"))
    }

    /// The next line, waiting at most until `deadline`; `Disconnected` once the engine's
    /// output has ended or its process has exited (even if something it started still
    /// holds the pipe open).
    fn next_line(&mut self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(100)))
            {
                Err(RecvTimeoutError::Timeout) if left.is_zero() => {
                    return Err(RecvTimeoutError::Timeout);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Ok(Some(_)) = self.child.try_wait() {
                        return self
                            .lines
                            .try_recv()
                            .map_err(|_| RecvTimeoutError::Disconnected);
                    }
                }
                other => return other,
            }
        }
    }

    /// Why the engine's output ended: a limit it hit, or its exit status if it has
    /// exited.
    fn ended(&mut self) -> String {
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

    fn stderr_tail(&self) -> Vec<String> {
        self.stderr
            .lock()
            .map(|t| t.iter().cloned().collect())
            .unwrap_or_default()
    }
}

impl Drop for EngineProcess {
    /// `quit`, a second's grace, then its whole process group is killed (what it forked
    /// does not outlive it); always reaped.
    fn drop(&mut self) {
        let _ = self.send(&Command::Quit);
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        self.kill();
    }
}

/// An outside engine as a [`Contestant`]. A healthy process is kept between games; after a
/// failure the next game starts a fresh one.
pub struct ExternalEngine {
    config: EngineConfig,
    process: Option<EngineProcess>,
    /// The engine's `id name`.
    name: Option<String>,
    last_stderr: Vec<String>,
    started: u32,
}

impl ExternalEngine {
    /// An engine that is started by the first [`Contestant::new_game`].
    pub fn new(config: EngineConfig) -> Self {
        ExternalEngine {
            config,
            process: None,
            name: None,
            last_stderr: Vec::new(),
            started: 0,
        }
    }

    /// How many processes were started: one, plus one per restart after a failure.
    pub fn processes_started(&self) -> u32 {
        self.started
    }

    /// The name the engine gave in its handshake.
    pub fn engine_name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Ends the process at once (kill, reap), keeping its complete stderr tail.
    fn discard(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill();
            // The pipe closes with the process; a grandchild holding it must not stall us.
            let _ = p.stderr_done.recv_timeout(Duration::from_millis(300));
            self.last_stderr = p.stderr_tail();
        }
    }

    /// Waits for a line matching `want`, within the handshake timeout.
    fn await_line(
        &mut self,
        what: &str,
        want: impl Fn(&Message) -> bool,
    ) -> Result<Vec<Message>, Unfit> {
        let deadline = Instant::now() + self.config.handshake_timeout;
        let timeout = self.config.handshake_timeout;
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| Unfit("no engine process".into()))?;
        let mut seen = Vec::new();
        loop {
            match process.next_line(deadline) {
                Ok(line) => {
                    let message = parse_message(&line);
                    if let Message::Unsupported(why) = &message {
                        return Err(Unfit(format!("unsupported: {why}")));
                    }
                    let done = want(&message);
                    seen.push(message);
                    if done {
                        return Ok(seen);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Unfit(format!(
                        "no '{what}' within {:.1} s",
                        timeout.as_secs_f64()
                    )));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let why = process.ended();
                    return Err(Unfit(format!("{why} before '{what}'")));
                }
            }
        }
    }

    fn start(&mut self) -> Result<(), Unfit> {
        self.started += 1;
        self.process =
            Some(EngineProcess::spawn(&self.config.command, &self.config.limits).map_err(Unfit)?);
        self.send_or_unfit(&Command::Ugi)?;
        let seen = self.await_line("ugiok", |m| *m == Message::UgiOk)?;
        self.name = seen.iter().find_map(|m| {
            if let Message::IdName(n) = m {
                Some(n.clone())
            } else {
                None
            }
        });
        for (name, value) in self.config.options.clone() {
            self.send_or_unfit(&Command::SetOption { name, value })?;
        }
        Ok(())
    }

    fn send_or_unfit(&mut self, command: &Command) -> Result<(), Unfit> {
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| Unfit("no engine process".into()))?;
        process.send(command).map_err(Unfit)
    }

    fn failure(&mut self, termination: Termination, detail: String) -> Failure {
        self.discard();
        Failure {
            termination,
            detail,
        }
    }
}

impl<P: Position> Contestant<P> for ExternalEngine {
    fn spec(&self) -> String {
        format!("cmd:{}", self.config.command)
    }

    fn new_game(&mut self, rules: P::Rules, _game_seed: u64) -> Result<(), Unfit> {
        let alive = self
            .process
            .as_mut()
            .is_some_and(|p| matches!(p.child.try_wait(), Ok(None)));
        if !alive {
            self.discard();
            self.start().inspect_err(|_| self.discard())?;
        }
        let rules_text = rules.to_string();
        let command = Command::NewGame {
            game: P::GAME.name().to_string(),
            rules: rules_text
                .split(',')
                .filter(|r| !r.is_empty())
                .map(String::from)
                .collect(),
        };
        let result = self
            .send_or_unfit(&command)
            .and_then(|()| self.send_or_unfit(&Command::IsReady))
            .and_then(|()| {
                self.await_line("readyok", |m| *m == Message::ReadyOk)
                    .map(|_| ())
            });
        result.inspect_err(|_| self.discard())
    }

    fn go(&mut self, game: &Game<P>, go: &Go, deadline: Duration) -> Result<Reply, Failure> {
        let Some(process) = self.process.as_mut() else {
            return Err(Failure {
                termination: Termination::Crash,
                detail: "no engine process".into(),
            });
        };
        let start = *game.start();
        let position = Command::Position {
            start: (start != P::start()).then(|| start.to_string()),
            moves: game.moves().iter().map(ToString::to_string).collect(),
        };
        let sent = process
            .send(&position)
            .and_then(|()| process.send(&Command::Go(go.clone())));
        if let Err(e) = sent {
            let why = process.ended();
            return Err(self.failure(Termination::Crash, format!("{why} ({e})")));
        }
        let has_clock = go.wtime.is_some() || go.btime.is_some() || go.movetime.is_some();
        let until = Instant::now() + deadline;
        let mut reply = Reply {
            mv: String::new(),
            nodes: None,
            depth: None,
            score: None,
        };
        loop {
            match process.next_line(until) {
                Ok(line) => match parse_message(&line) {
                    Message::Info(info) => {
                        reply.nodes = info.nodes.or(reply.nodes);
                        reply.depth = info.depth.or(reply.depth);
                        reply.score = info.score.or(reply.score.take());
                    }
                    Message::BestMove(mv) => {
                        reply.mv = mv;
                        return Ok(reply);
                    }
                    _ => {}
                },
                Err(RecvTimeoutError::Timeout) => {
                    let (termination, what) = if has_clock {
                        (Termination::TimeForfeit, "no move before its time ran out")
                    } else {
                        (Termination::Unresponsive, "no move")
                    };
                    let detail = format!("{what} (waited {:.1} s)", deadline.as_secs_f64());
                    return Err(self.failure(termination, detail));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let why = process.ended();
                    return Err(self.failure(Termination::Crash, why));
                }
            }
        }
    }

    fn stderr_tail(&self) -> Vec<String> {
        match &self.process {
            Some(p) => p.stderr_tail(),
            None => self.last_stderr.clone(),
        }
    }

    fn abandon(&mut self) {
        self.discard();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        assert_eq!(
            split_command("python3 my_engine.py --fast"),
            ["python3", "my_engine.py", "--fast"]
        );
        assert_eq!(
            split_command("  ./e  'a b' \"c d\" ''"),
            ["./e", "a b", "c d", ""]
        );
        assert!(split_command("   ").is_empty());
    }
}
