//! Outside engines: a process spoken to over the engine protocol on stdin/stdout.
//!
//! A reader thread turns the engine's stdout into lines on a channel, so every wait has a
//! timeout; another keeps the last stderr lines. Whatever the engine does (crash, hang,
//! junk, illegal moves, closing stdout) becomes a [`Failure`] or [`Unfit`] for the referee;
//! nothing panics, and the process is always killed and reaped. Each game's protocol, both
//! ways, is kept in a bounded [`Transcript`] for the record of a game the engine loses by
//! failing.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

pub mod check;
mod process;
mod transcript;
mod turns;

use process::EngineProcess;
use transcript::{Direction, Transcript};

use tourney_model::Termination;
pub use tourney_model::source::split_command;
use tourney_model::tournament::EngineLimits;
use tourney_rules::{Game, Position};

use crate::confine::EnginePolicy;
use crate::contestant::{Contestant, Failure, Reply, Unfit};
use crate::dialect::{Dialect, canonical_move};
use crate::protocol::{Command, Go, Message};

/// The most characters of each of the last three stderr lines an engine that died at its
/// start has its reason carry.
const STDERR_REASON_CHARS: usize = 200;

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
    /// How its process is confined (the user it runs as, the environment it gets).
    pub policy: EnginePolicy,
    /// Data files it finds in its working directory: name there → the file (read-only,
    /// linked, never copied).
    pub files: Vec<(String, std::path::PathBuf)>,
    /// The protocol it speaks.
    pub protocol: Dialect,
    /// The threads it is given: sent as its `Threads` option when it declares one and
    /// `options` do not set it.
    pub threads: Option<u32>,
    /// The sha256 its program (the command's first word) must have: it is then run from a
    /// sealed copy in memory, made as it is checked, so that nothing can change it between
    /// the check and the start (an uploaded program in a cache other engines can reach).
    pub program_sha256: Option<String>,
    /// Whether a relative path in the command that names nothing in the engine's own
    /// directory but something in this process's working directory is made absolute: true
    /// for a command the user gives this process (`check-engine`, `play`); false for a
    /// worker's job, whose files are placed in the engine's directory (an uploaded script
    /// runs from there, never from whatever the worker's directory holds).
    pub paths_from_cwd: bool,
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
            policy: EnginePolicy::default(),
            files: Vec::new(),
            protocol: Dialect::Tourney,
            threads: None,
            program_sha256: None,
            paths_from_cwd: true,
        }
    }

    /// The `Threads` option to send an engine that declared `declared` options (`option
    /// name <Name> ...` lines): when it has threads, declares a `Threads` option, and the
    /// options given do not set it already (names are compared ignoring case).
    fn threads_option(&self, declared: &[Message]) -> Option<(String, String)> {
        let threads = self.threads?;
        let named = |name: &str| name.eq_ignore_ascii_case("threads");
        if self.options.iter().any(|(name, _)| named(name)) {
            return None;
        }
        declared.iter().find_map(|m| match m {
            Message::Option(line) => {
                let mut words = line.split_whitespace().skip(1);
                (words.next() == Some("name")
                    && words.next().is_some_and(named)
                    && words.next() == Some("type"))
                .then(|| ("Threads".to_string(), threads.to_string()))
            }
            _ => None,
        })
    }
}

/// An outside engine as a [`Contestant`]. A healthy process is kept between games; after a
/// failure the next game starts a fresh one.
pub struct ExternalEngine {
    config: EngineConfig,
    process: Option<EngineProcess>,
    last_stderr: Vec<(Instant, String)>,
    started: u32,
    /// Starts already told by [`ExternalEngine::take_starts`].
    starts_told: u32,
    /// The current (or last) game's protocol.
    transcript: Transcript,
    /// The game it plays (what dialects that speak of p1 and p2 need).
    game: tourney_rules::GameKind,
    /// The moves from the standard start that reach this game's start, when known.
    start_path: Vec<String>,
    /// What a turn-by-turn engine (CodinGame, GTP) has been told of this game.
    turns: turns::TurnState,
}

impl ExternalEngine {
    /// An engine that is started by the first [`Contestant::new_game`].
    pub fn new(config: EngineConfig) -> Self {
        ExternalEngine {
            config,
            process: None,
            last_stderr: Vec::new(),
            started: 0,
            starts_told: 0,
            transcript: Transcript::default(),
            game: tourney_rules::GameKind::Loa,
            start_path: Vec::new(),
            turns: turns::TurnState::default(),
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

    /// The engine's bench signature and speed in `game` (`bench GAME`), starting it if it
    /// is not running: `None` when it answers `isready` without a `bench` line (an engine
    /// without a bench). Within `timeout`.
    ///
    /// # Errors
    /// The engine did not start, hung, or ended.
    pub fn bench(
        &mut self,
        game: tourney_rules::GameKind,
        timeout: Duration,
    ) -> Result<Option<(u64, u64)>, Unfit> {
        self.game = game;
        let command = Command::Bench {
            game: Some(game.name().to_string()),
        };
        if self.config.protocol.line(&command, game).is_none() {
            return Ok(None);
        }
        if self.process.is_none() {
            self.start().inspect_err(|_| self.discard())?;
        }
        self.send_or_unfit(&command)?;
        self.send_or_unfit(&Command::IsReady)?;
        let deadline = Instant::now() + timeout;
        let mut found = None;
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| Unfit("no engine process".into()))?;
        loop {
            match process.next_line(deadline) {
                Ok(line) => match self.config.protocol.message(&line) {
                    Message::Bench { nodes, nps } => found = Some((nodes, nps)),
                    Message::ReadyOk => return Ok(found),
                    _ => {}
                },
                Err(RecvTimeoutError::Timeout) => {
                    let why = format!("no answer to bench within {:.0} s", timeout.as_secs_f64());
                    self.discard();
                    return Err(Unfit(why));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let why = process.ended();
                    self.discard();
                    return Err(Unfit(format!("{why} during bench")));
                }
            }
        }
    }

    /// `n` opening positions of `game` under `rules` (`key=value,...`) the engine makes
    /// from `seed` (`genfens`), starting
    /// it if it is not running, within `timeout`: as the engine wrote them, at most `n`
    /// (checking them is the caller's). An engine without `genfens` answers `isready`
    /// with none.
    ///
    /// # Errors
    /// The engine did not start, hung, or ended; or its dialect has no `genfens`.
    pub fn genfens(
        &mut self,
        game: tourney_rules::GameKind,
        rules: &str,
        n: u32,
        seed: u64,
        timeout: Duration,
    ) -> Result<Vec<String>, Unfit> {
        self.game = game;
        let command = Command::GenFens {
            n,
            seed,
            book: None,
        };
        if self.config.protocol.line(&command, game).is_none() {
            return Err(Unfit(format!(
                "the {} protocol has no genfens: the engine cannot make openings",
                self.config.protocol.name()
            )));
        }
        if self.process.is_none() {
            self.start().inspect_err(|_| self.discard())?;
        }
        // Told the game and its rules first, so that the engine makes openings of them
        // (Amazons: of the board's size).
        self.send_or_unfit(&Command::NewGame {
            game: game.name().to_string(),
            rules: (rules.split(',').map(str::trim))
                .filter(|r| !r.is_empty())
                .map(String::from)
                .collect(),
        })?;
        self.send_or_unfit(&command)?;
        self.send_or_unfit(&Command::IsReady)?;
        let deadline = Instant::now() + timeout;
        let mut found = Vec::new();
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| Unfit("no engine process".into()))?;
        loop {
            match process.next_line(deadline) {
                Ok(line) => match self.config.protocol.message(&line) {
                    Message::GenFen(position) if found.len() < n as usize => found.push(position),
                    Message::ReadyOk => return Ok(found),
                    Message::Unsupported(why) => return Err(Unfit(format!("unsupported: {why}"))),
                    _ => {}
                },
                Err(RecvTimeoutError::Timeout) => {
                    let why = format!("no answer to genfens within {:.0} s", timeout.as_secs_f64());
                    self.discard();
                    return Err(Unfit(why));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let why = process.ended();
                    self.discard();
                    return Err(Unfit(format!("{why} during genfens")));
                }
            }
        }
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
                    let message = self.config.protocol.message(&line);
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
                    return Err(self.died(format!("{why} before '{what}'")));
                }
            }
        }
    }

    fn start(&mut self) -> Result<(), Unfit> {
        let process = EngineProcess::spawn(&self.config).map_err(|e| Unfit(e.to_string()))?;
        self.started += 1;
        self.process = Some(process);
        if !self.config.protocol.speaks_commands() {
            return self.start_turns();
        }
        self.send_or_unfit(&Command::Ugi)?;
        let declared = self.await_line("ugiok", |m| *m == Message::UgiOk)?;
        let threads = self.config.threads_option(&declared);
        for (name, value) in self.config.options.clone().into_iter().chain(threads) {
            self.send_or_unfit(&Command::SetOption { name, value })?;
        }
        Ok(())
    }

    fn send_or_unfit(&mut self, command: &Command) -> Result<(), Unfit> {
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| Unfit("no engine process".into()))?;
        // A command the engine's dialect has no word for is not sent.
        let Some(line) = self.config.protocol.line(command, self.game) else {
            return Ok(());
        };
        match process.send(line) {
            Ok(line) => {
                self.transcript.note(Direction::Sent, line);
                Ok(())
            }
            Err(e) => {
                let why = process.ended();
                Err(self.died(format!("{why} ({e})")))
            }
        }
    }

    /// The engine ended while it was being started: it is discarded, and what it said last
    /// on stderr (a missing script, a missing library) goes with the reason, bounded.
    fn died(&mut self, why: String) -> Unfit {
        self.discard();
        Unfit(transcript::with_stderr_tail(why, &self.last_stderr))
    }

    /// The last stderr lines, with when each came.
    fn timed_stderr(&self) -> Vec<(Instant, String)> {
        match &self.process {
            Some(p) => p.stderr_tail(),
            None => self.last_stderr.clone(),
        }
    }

    /// The failure of an engine that said nothing in time, or whose output ended. How long
    /// it was waited for is the referee's to say: it times the whole turn, as the record's
    /// `forfeit_ms` has it, where `deadline` was only the wait for the answer (once the
    /// position was sent), and rounded.
    fn silent(&mut self, e: RecvTimeoutError, has_clock: bool) -> Failure {
        match e {
            RecvTimeoutError::Timeout => {
                let (termination, what) = if has_clock {
                    (Termination::TimeForfeit, "no move before its time ran out")
                } else {
                    (Termination::Unresponsive, "no move")
                };
                self.failure(termination, what.into())
            }
            RecvTimeoutError::Disconnected => {
                let why = self
                    .process
                    .as_mut()
                    .map_or_else(String::new, |p| p.ended());
                self.failure(Termination::Crash, why)
            }
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

    fn new_game(
        &mut self,
        rules: P::Rules,
        _game_seed: u64,
        start_path: &[P::Move],
    ) -> Result<(), Unfit> {
        self.transcript.restart();
        self.game = P::GAME;
        self.start_path = start_path.iter().map(ToString::to_string).collect();
        // A process kept from an earlier game plays on (told `newgame`), unless it died or
        // used up half of a limit that counts over its life.
        // CodinGame bots cannot be told that a new game begins: a fresh one each game.
        let fit = self.config.protocol != Dialect::CodinGame
            && self
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
        if !self.config.protocol.speaks_commands() {
            return self
                .new_game_turns::<P>(rules)
                .inspect_err(|_| self.discard());
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
        let has_clock = go.wtime.is_some() || go.btime.is_some() || go.movetime.is_some();
        if self.process.is_some() {
            match self.config.protocol {
                Dialect::CodinGame => return self.go_codingame(game, deadline, has_clock),
                Dialect::Gtp { .. } => return self.go_gtp(game, go, deadline, has_clock),
                _ => {}
            }
        }
        let Some(process) = self.process.as_mut() else {
            return Err(Failure {
                termination: Termination::Crash,
                detail: "no engine process".into(),
            });
        };
        // From the standard start by moves when that is how the game's start was reached:
        // every program reads `startpos moves`, not every one reads tourney's letters.
        let start = *game.start();
        let played = game.moves().iter().map(ToString::to_string);
        let position = match self.start_path.is_empty() {
            true => Command::Position {
                start: (start != P::start()).then(|| start.to_string()),
                moves: played.collect(),
            },
            false => Command::Position {
                start: None,
                moves: self.start_path.iter().cloned().chain(played).collect(),
            },
        };
        let dialect = self.config.protocol;
        let line = |command: &Command| dialect.line(command, P::GAME).unwrap_or_default();
        let sent = process.send_all([line(&position), line(&Command::Go(go.clone()))]);
        let sent = sent.map(|[position, go]| {
            self.transcript.note(Direction::Sent, position);
            self.transcript.note(Direction::Sent, go);
        });
        if let Err(e) = sent {
            let why = process.ended();
            return Err(self.failure(Termination::Crash, format!("{why} ({e})")));
        }
        let until = Instant::now() + deadline;
        let mut reply = Reply::default();
        loop {
            match process.next_line(until) {
                Ok(line) => {
                    let message = self.config.protocol.message(&line);
                    self.transcript.note(Direction::Received, line);
                    match message {
                        Message::Info(info) => {
                            reply.nodes = info.nodes.or(reply.nodes);
                            reply.depth = info.depth.or(reply.depth);
                            reply.score = info.score.or(reply.score.take());
                            reply.seldepth = info.seldepth.or(reply.seldepth);
                            reply.nps = info.nps.or(reply.nps);
                            reply.engine_ms = info.time.or(reply.engine_ms);
                            if !info.pv.is_empty() {
                                reply.pv = info.pv;
                            }
                        }
                        Message::BestMove(mv) => {
                            reply.mv = if dialect.compact_moves() {
                                canonical_move(&mv)
                            } else {
                                mv
                            };
                            return Ok(reply);
                        }
                        _ => {}
                    }
                }
                Err(e) => return Err(self.silent(e, has_clock)),
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
mod tests;
