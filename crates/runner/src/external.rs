//! Outside engines: a process spoken to over the engine protocol on stdin/stdout.
//!
//! A reader thread turns the engine's stdout into lines on a channel, so every wait has a
//! timeout; another keeps the last stderr lines. Whatever the engine does (crash, hang,
//! junk, illegal moves, closing stdout) becomes a [`Failure`] or [`Unfit`] for the referee;
//! nothing panics, and the process is always killed and reaped. Each game's protocol, both
//! ways, is kept in a bounded [`Transcript`] for the record of a game the engine loses by
//! failing.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
const STDERR_LINES: usize = tourney_model::MAX_STDERR_LINES;
/// The longest stderr line kept, in bytes (longer ones are cut; read lossily, it is at
/// most as many characters).
const STDERR_LINE_BYTES: usize = tourney_model::MAX_STDERR_LINE_CHARS;
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

/// The most bytes of a game's protocol a [`Transcript`] keeps: the first lines up to a
/// quarter of it, then the last lines; those between are counted, not kept.
pub(crate) const TRANSCRIPT_BYTES: usize = tourney_model::MAX_TRANSCRIPT_BYTES;
/// The longest line a transcript keeps (a longer one is cut, its length said).
const TRANSCRIPT_LINE_BYTES: usize = 1024;

/// Which way a transcript line went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// To the engine.
    Sent,
    /// From the engine's stdout.
    Received,
    /// From the engine's stderr.
    Stderr,
}

/// One game's protocol with an engine, both ways, with the time of each line since the
/// game began: its first lines (the handshake, the first moves) and its last ones (where
/// it went wrong), at most [`TRANSCRIPT_BYTES`] in all.
#[derive(Debug)]
pub(crate) struct Transcript {
    origin: Instant,
    head: Vec<(Duration, Direction, String)>,
    tail: VecDeque<(Duration, Direction, String)>,
    head_bytes: usize,
    tail_bytes: usize,
    left_out: u64,
}

impl Default for Transcript {
    fn default() -> Self {
        Transcript {
            origin: Instant::now(),
            head: Vec::new(),
            tail: VecDeque::new(),
            head_bytes: 0,
            tail_bytes: 0,
            left_out: 0,
        }
    }
}

impl Transcript {
    /// Starts again for a new game.
    fn restart(&mut self) {
        *self = Transcript::default();
    }

    /// Keeps `line`, which went `direction` now.
    fn note(&mut self, direction: Direction, mut line: String) {
        self.note_at(Instant::now(), direction, line_cut(&mut line));
    }

    fn note_at(&mut self, at: Instant, direction: Direction, line: String) {
        let entry = (at.saturating_duration_since(self.origin), direction, line);
        let size = entry.2.len() + 16;
        if self.tail.is_empty() && self.head_bytes + size <= TRANSCRIPT_BYTES / 4 {
            self.head_bytes += size;
            self.head.push(entry);
            return;
        }
        self.tail_bytes += size;
        self.tail.push_back(entry);
        while self.tail_bytes > TRANSCRIPT_BYTES - TRANSCRIPT_BYTES / 4 {
            let Some((_, _, gone)) = self.tail.pop_front() else {
                break;
            };
            self.tail_bytes -= gone.len() + 16;
            self.left_out += 1;
        }
    }

    /// The transcript as the record keeps it, one line each: seconds since the game began,
    /// `>` (to the engine), `<` (from it) or `!` (its stderr), and the text; `stderr` (with
    /// the time each line came) is merged in by time.
    fn lines(&self, stderr: &[(Instant, String)]) -> Vec<String> {
        let gap_at = self.tail.front().map_or(Duration::ZERO, |e| e.0);
        fn kept(entry: &(Duration, Direction, String)) -> (Duration, Option<Direction>, &str) {
            (entry.0, Some(entry.1), entry.2.as_str())
        }
        let mut entries: Vec<(Duration, Option<Direction>, &str)> =
            self.head.iter().map(kept).collect();
        if self.left_out > 0 {
            entries.push((gap_at, None, ""));
        }
        entries.extend(self.tail.iter().map(kept));
        entries.extend(
            (stderr.iter())
                .filter(|(at, _)| *at >= self.origin)
                .map(|(at, text)| {
                    let since = at.duration_since(self.origin);
                    (since, Some(Direction::Stderr), text.as_str())
                }),
        );
        // Stable: lines of the same moment stay in the order they were kept.
        entries.sort_by_key(|e| e.0);
        entries
            .into_iter()
            .map(|(at, direction, text)| {
                let mark = match direction {
                    None => return format!("… {} lines left out …", self.left_out),
                    Some(Direction::Sent) => '>',
                    Some(Direction::Received) => '<',
                    Some(Direction::Stderr) => '!',
                };
                format!("{:.3} {mark} {text}", at.as_secs_f64())
            })
            .collect()
    }
}

/// `line` cut to [`TRANSCRIPT_LINE_BYTES`] (on a character boundary), its length said.
fn line_cut(line: &mut String) -> String {
    if line.len() > TRANSCRIPT_LINE_BYTES {
        let full = line.len();
        let mut end = TRANSCRIPT_LINE_BYTES;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push_str(&format!(" … ({full} bytes)"));
    }
    std::mem::take(line)
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

/// The program to run for a command's first word: `tourney` is this very program when it
/// is tourney (a worker's engines `tourney engine ...` need no `tourney` on the PATH).
fn own_program(program: &str) -> String {
    let me = std::env::current_exe().ok();
    match me {
        Some(me) if program == "tourney" && me.file_name().is_some_and(|n| n == "tourney") => {
            me.display().to_string()
        }
        _ => program.to_string(),
    }
}

/// A running engine process, confined (see [`confine`]).
struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    /// Its last stderr lines, with when each came.
    stderr: Arc<Mutex<VecDeque<(Instant, String)>>>,
    /// Closed when the stderr reader has read everything.
    stderr_done: Receiver<()>,
    /// Set when the engine wrote more stderr than its limit (and was killed for it).
    stderr_over: Arc<AtomicBool>,
    /// Bytes of stderr read so far.
    stderr_bytes: Arc<AtomicU64>,
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
        let program = own_program(program);
        let dir =
            WorkDir::new().map_err(|e| format!("no working directory for the engine: {e}"))?;
        let mut engine = confine::command(&program, args, limits, dir.path());
        engine
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = confine::start_engine(engine, dir.path())
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
            lines,
            stderr,
            stderr_done,
            stderr_over,
            stderr_bytes,
            limits: *limits,
            _dir: dir,
        })
    }

    /// Whether the process can play another game: alive, with at least half of its CPU time
    /// and stderr limits left (they count over a process's life), so that each game it plays
    /// has its share of them.
    fn fit_for_another_game(&mut self) -> bool {
        let alive = matches!(self.child.try_wait(), Ok(None));
        let cpu = confine::cpu_seconds_used(self.child.id()).unwrap_or(0.0);
        let stderr = self.stderr_bytes.load(Ordering::Relaxed);
        alive
            && cpu * 2.0 < self.limits.cpu_seconds as f64
            && stderr * 2 < self.limits.stderr_kb.saturating_mul(1024)
    }

    /// Forgets the stderr lines of earlier games: a game's record keeps its own.
    fn clear_stderr(&self) {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Kills the engine and everything in its process group, and reaps it.
    fn kill(&mut self) {
        // Killed before it is forgotten: `end_engines` meanwhile kills it too, never misses it.
        confine::kill_group(self.child.id());
        confine::forget_engine(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends `command`; returns the line sent.
    fn send(&mut self, command: &Command) -> Result<String, String> {
        let mut line = command.to_string();
        line.push('\n');
        self.stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to the engine: {e}"))?;
        line.pop();
        Ok(line)
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

    /// Its last stderr lines, with when each came.
    fn stderr_tail(&self) -> Vec<(Instant, String)> {
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
        let _ = self.send(&Command::Quit);
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(_) if !left.is_zero() => continue,
                _ => break,
            }
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
    last_stderr: Vec<(Instant, String)>,
    started: u32,
    /// Starts already told by [`ExternalEngine::take_starts`].
    starts_told: u32,
    /// The current (or last) game's protocol.
    transcript: Transcript,
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
            starts_told: 0,
            transcript: Transcript::default(),
        }
    }

    /// How many processes were started: one, plus one per restart after a failure (a start
    /// that failed, such as a missing program, started none).
    pub fn processes_started(&self) -> u32 {
        self.started
    }

    /// Processes started since the last call, and how many of them were restarts (after
    /// a failure, or a limit half used: every start but the first).
    pub fn take_starts(&mut self) -> (u32, u32) {
        let starts = self.started - self.starts_told;
        let restarts = starts - u32::from(self.starts_told == 0 && starts > 0);
        self.starts_told = self.started;
        (starts, restarts)
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
                    self.transcript.note(Direction::Received, line);
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
        let process =
            EngineProcess::spawn(&self.config.command, &self.config.limits).map_err(Unfit)?;
        self.started += 1;
        self.process = Some(process);
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
        let line = process.send(command).map_err(Unfit)?;
        self.transcript.note(Direction::Sent, line);
        Ok(())
    }

    /// The last stderr lines, with when each came.
    fn timed_stderr(&self) -> Vec<(Instant, String)> {
        match &self.process {
            Some(p) => p.stderr_tail(),
            None => self.last_stderr.clone(),
        }
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

    fn options(&self) -> Vec<(String, String)> {
        self.config.options.clone()
    }

    fn new_game(&mut self, rules: P::Rules, _game_seed: u64) -> Result<(), Unfit> {
        self.transcript.restart();
        // A process kept from an earlier game plays on (told `newgame`), unless it died or
        // used up half of a limit that counts over its life.
        let fit = self
            .process
            .as_mut()
            .is_some_and(EngineProcess::fit_for_another_game);
        if fit {
            if let Some(p) = &self.process {
                p.clear_stderr();
            }
        } else {
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
        let sent = process.send(&position).and_then(|position| {
            self.transcript.note(Direction::Sent, position);
            process.send(&Command::Go(go.clone()))
        });
        let sent = sent.map(|go| self.transcript.note(Direction::Sent, go));
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
                Ok(line) => {
                    let message = parse_message(&line);
                    self.transcript.note(Direction::Received, line);
                    match message {
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
                    }
                }
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
        self.timed_stderr()
            .into_iter()
            .map(|(_, line)| line)
            .collect()
    }

    fn transcript(&self) -> Vec<String> {
        self.transcript.lines(&self.timed_stderr())
    }

    fn abandon(&mut self) {
        self.discard();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_keeps_its_first_and_last_lines_within_its_bound() {
        let mut t = Transcript::default();
        let origin = t.origin;
        for i in 0..100_000u64 {
            let at = origin + Duration::from_micros(i * 10);
            let direction = if i % 2 == 0 {
                Direction::Sent
            } else {
                Direction::Received
            };
            t.note_at(at, direction, format!("info nodes {i}"));
        }
        let stderr = [(origin + Duration::from_micros(999_985), "oops".to_string())];
        let lines = t.lines(&stderr);
        let bytes: usize = lines.iter().map(String::len).sum();
        assert!(bytes <= TRANSCRIPT_BYTES, "{bytes} bytes");
        assert_eq!(lines[0], "0.000 > info nodes 0");
        assert_eq!(lines[1], "0.000 < info nodes 1");
        assert_eq!(lines.last().unwrap(), "1.000 < info nodes 99999");
        let gap = lines
            .iter()
            .position(|l| l.contains("lines left out"))
            .unwrap();
        let kept = lines.len() - 2; // the gap and the stderr line
        assert_eq!(lines[gap], format!("… {} lines left out …", 100_000 - kept));
        assert!(
            lines.contains(&"1.000 ! oops".to_string()),
            "{:?}",
            &lines[lines.len() - 3..]
        );
        // Long lines are cut, their length said.
        let mut long = "x".repeat(5000);
        assert_eq!(
            line_cut(&mut long),
            format!("{} … (5000 bytes)", "x".repeat(1024))
        );
        let mut short = "go movetime 100".to_string();
        assert_eq!(line_cut(&mut short), "go movetime 100");
    }

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
