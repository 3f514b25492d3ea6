//! Outside engines: a process spoken to over the engine protocol on stdin/stdout.
//!
//! A reader thread turns the engine's stdout into lines on a channel, so every wait has a
//! timeout; another keeps the last stderr lines. Whatever the engine does (crash, hang,
//! junk, illegal moves, closing stdout) becomes a [`Failure`] or [`Unfit`] for the referee;
//! nothing panics, and the process is always killed and reaped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command as Process, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use tourney_model::Termination;
use tourney_rules::{Game, Position};

use crate::contestant::{Contestant, Failure, Reply, Unfit};
use crate::protocol::{Command, Go, Message, parse_message};

/// Stderr lines kept for the record.
const STDERR_LINES: usize = 20;

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
}

impl EngineConfig {
    /// An engine run by `command` with default timeouts (5 s handshake, 60 s silence).
    pub fn new(command: &str) -> Self {
        EngineConfig {
            command: command.to_string(),
            options: Vec::new(),
            handshake_timeout: Duration::from_secs(5),
            unresponsive_timeout: Duration::from_secs(60),
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

/// A running engine process.
struct EngineProcess {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Closed when the stderr reader has read everything.
    stderr_done: Receiver<()>,
}

impl EngineProcess {
    fn spawn(command: &str) -> Result<EngineProcess, String> {
        let words = split_command(command);
        let (program, args) = words.split_first().ok_or("empty engine command")?;
        let mut child = Process::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start '{command}': {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr_pipe = child.stderr.take().ok_or("no stderr")?;
        let (tx, lines) = channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        let (done, stderr_done) = channel::<()>();
        thread::spawn(move || {
            let _done = done;
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
        });
        Ok(EngineProcess {
            child,
            stdin,
            lines,
            stderr,
            stderr_done,
        })
    }

    fn send(&mut self, command: &Command) -> Result<(), String> {
        writeln!(self.stdin, "{command}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("writing to the engine: {e}"))
    }

    /// The next line, waiting at most until `deadline`.
    fn next_line(&mut self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        self.lines
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
    }

    /// Why the engine's output ended: its exit status if it has exited.
    fn ended(&mut self) -> String {
        // Give a dying process a moment so its status can be reported.
        for _ in 0..20 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("engine exited ({status})");
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
    /// `quit`, a second's grace, then kill; always reaped.
    fn drop(&mut self) {
        let _ = self.send(&Command::Quit);
        let until = Instant::now() + Duration::from_secs(1);
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
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
            let _ = p.child.kill();
            let _ = p.child.wait();
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
        self.process = Some(EngineProcess::spawn(&self.config.command).map_err(Unfit)?);
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
