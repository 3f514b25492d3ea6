//! `tourney check-engine`: an outside engine put through the exchanges a tournament needs
//! of it, one named check at a time, each passed or failed with the exchange that broke it.
//! The engine runs confined as in a tournament and is spoken to in its dialect.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use tourney_rules::{Game, GameKind, Loa, Position, with_position};

use super::EngineConfig;
use super::process::EngineProcess;
use crate::dialect::{Dialect, canonical_move};
use crate::protocol::{Command, Go, Message};

mod turns;

use turns::{codingame_checks, gtp_checks};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// It passed.
    Pass,
    /// It failed.
    Fail,
    /// It was not run: the engine's process had ended, or the check is not the dialect's.
    Skip,
}

/// One check's outcome.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// What was checked, e.g. `isready under load`.
    pub name: &'static str,
    /// How it came out.
    pub verdict: Verdict,
    /// What was seen: a time, the move, or what went wrong.
    pub detail: String,
    /// The exchange of the check (`> sent`, `< received`), kept for a failure.
    pub exchange: Vec<String>,
    /// Whether the check failed because the engine's process had ended (the first
    /// check's: the engine cannot be started, as a script that is missing).
    pub ended: bool,
}

/// The most exchange lines kept for a failed check (its last ones).
const EXCHANGE_LINES: usize = 24;
/// The most lines an engine may answer one command with (a GTP answer, the `info` of a
/// search); past it the check fails, so that an endless answer ends at once.
const ANSWER_LINES: usize = 10_000;
/// The most exchange lines a probe keeps (the newest; a failure shows the last
/// [`EXCHANGE_LINES`]).
const LOG_LINES: usize = 2_000;
/// What an engine may take beyond a movetime.
const MARGIN: Duration = Duration::from_millis(300);
/// The quickest an engine must answer `isready` during a search, and stop a search.
const PROMPT: Duration = Duration::from_millis(1000);

/// LOA: White (to move) has no step but a pass.
const LOA_PASS: &str = "8/8/2b5/bb6/w1bb4/3b4/b1w1b3/1bb5 w";
/// LOA: the same with the colours swapped: Black (to move) must pass (for a CodinGame bot,
/// which plays Black from the start).
const LOA_BLACK_PASS: &str = "8/8/2w5/ww6/b1ww4/3w4/w1b1w3/1ww5 b";
/// LOA: Black's pieces are one group; the game is over.
const LOA_OVER: &str = "8/8/8/8/8/w7/8/bbb4w w";
/// Amazons: White (to move) is boxed in the corner; the game is over.
const AMAZONS_OVER: &str = "3b2b3/10/10/b8b/10/10/10/xxx7/wwx7/wwx7 w";

/// A running engine and the exchange of the check under way.
struct Probe {
    process: EngineProcess,
    dialect: Dialect,
    game: GameKind,
    log: Vec<String>,
    /// What a check leaves for the next (a CodinGame bot's first move).
    last: String,
    /// What an answer that no limit times may take.
    patience: Duration,
    /// Why the process is gone, once it is.
    gone: Option<String>,
    /// Lines read since the last command was sent.
    answered: usize,
}

impl Probe {
    fn send(&mut self, line: String) -> Result<(), String> {
        if let Some(why) = &self.gone {
            return Err(why.clone());
        }
        match self.process.send(line) {
            Ok(line) => {
                for l in line.lines() {
                    self.note(format!("> {l}"));
                }
                self.answered = 0;
                Ok(())
            }
            Err(e) => Err(self.lost(format!("writing failed: {e}"))),
        }
    }

    fn command(&mut self, command: &Command) -> Result<(), String> {
        match self.dialect.line(command, self.game) {
            Some(line) => self.send(line),
            None => Ok(()),
        }
    }

    /// The process is gone: why, for the check that found it out with the end of the
    /// engine's stderr (as a tournament's pause reason has it); the later checks, skipped,
    /// say why alone.
    fn lost(&mut self, why: String) -> String {
        let why = format!("{} ({why})", self.process.ended());
        self.gone = Some(why.clone());
        super::transcript::with_stderr_tail(why, &self.process.stderr_tail())
    }

    /// Keeps `line` in the exchange, the newest [`LOG_LINES`] at most.
    fn note(&mut self, mut line: String) {
        if self.log.len() >= LOG_LINES {
            self.log.drain(..LOG_LINES / 2);
        }
        self.log.push(super::transcript::line_cut(&mut line));
    }

    /// The next line within `within`; at most [`ANSWER_LINES`] a command.
    fn line(&mut self, within: Duration, waiting_for: &str) -> Result<String, String> {
        if let Some(why) = &self.gone {
            return Err(why.clone());
        }
        if self.answered >= ANSWER_LINES {
            return Err(format!(
                "more than {ANSWER_LINES} lines and still no {waiting_for}"
            ));
        }
        match self.process.next_line(Instant::now() + within) {
            Ok(line) => {
                self.answered += 1;
                self.note(format!("< {line}"));
                Ok(line)
            }
            Err(RecvTimeoutError::Timeout) => {
                Err(format!("no {waiting_for} within {} ms", within.as_millis()))
            }
            Err(RecvTimeoutError::Disconnected) => {
                Err(self.lost(format!("waiting for {waiting_for}")))
            }
        }
    }

    /// Reads messages until one `want` takes, within `within`; how long it took.
    fn until(
        &mut self,
        what: &str,
        within: Duration,
        want: impl Fn(&Message) -> bool,
    ) -> Result<(Message, Duration), String> {
        let started = Instant::now();
        loop {
            let left = within.saturating_sub(started.elapsed());
            let line = self.line(left, what)?;
            let message = self.dialect.message(&line);
            if let Message::Unsupported(why) = &message {
                return Err(format!("error unsupported {why}"));
            }
            if want(&message) {
                return Ok((message, started.elapsed()));
            }
        }
    }

    /// `position` and `go`, then the best move within `within`, checked against the game.
    fn search<P: Position>(
        &mut self,
        game: &Game<P>,
        go: Go,
        within: Duration,
    ) -> Result<String, String> {
        let start = *game.start();
        self.command(&Command::Position {
            start: (start != P::start()).then(|| start.to_string()),
            moves: game.moves().iter().map(ToString::to_string).collect(),
        })?;
        self.command(&Command::Go(go))?;
        let (message, took) =
            self.until("bestmove", within, |m| matches!(m, Message::BestMove(_)))?;
        let Message::BestMove(mv) = message else {
            unreachable!("matched above")
        };
        legal(game, &mv).map(|mv| format!("{mv} in {} ms", took.as_millis()))
    }
}

/// The move `text` names in `game` in tourney's notation, or why it is not a legal move.
fn legal<P: Position>(game: &Game<P>, text: &str) -> Result<String, String> {
    let named = canonical_move(text);
    game.position()
        .parse_move(&named)
        .map(|m| m.to_string())
        .map_err(|e| format!("bestmove '{text}' is not legal here: {e}"))
}

/// A game of `plies` moves from the start, the same each time.
fn walk<P: Position>(plies: usize) -> Game<P> {
    let mut game = Game::new(P::start(), Default::default());
    for i in 0..plies {
        let Some(mv) = game
            .position()
            .random_move(0x9e37_79b9_7f4a_7c15u64.wrapping_mul(i as u64 + 7))
        else {
            break;
        };
        game.play(mv).expect("a legal move");
    }
    game
}

/// A game from the position string `text` (a constant of this file).
fn from<P: Position>(text: &str) -> Game<P> {
    Game::new(text.parse().expect("a valid position"), Default::default())
}

/// Four LOA plies that come back to the start (Black and White step out and back), or
/// none.
fn loa_round_trip() -> Vec<String> {
    let start = Loa::start();
    for a in start.legal_moves() {
        let p1 = start.play(a).expect("legal");
        for b in p1.legal_moves() {
            let p2 = p1.play(b).expect("legal");
            let (sa, sb) = (a.to_string(), b.to_string());
            let back = |m: &str| {
                let (from, to) = m.split_at(2);
                format!("{}-{from}", &to[1..])
            };
            let (ra, rb) = (back(&sa), back(&sb));
            let Ok(p3) = p2.parse_move(&ra).and_then(|m| Ok(p2.play(m)?)) else {
                continue;
            };
            if let Ok(p4) = p3.parse_move(&rb).and_then(|m| Ok(p3.play(m)?))
                && p4 == start
            {
                return vec![sa, sb, ra, rb];
            }
        }
    }
    Vec::new()
}

type Step = (&'static str, fn(&mut Probe) -> Result<String, String>);

/// The checks of the command dialects (tourney, UGI, UCI), in order.
fn command_checks(game: GameKind) -> Vec<Step> {
    let mut steps: Vec<Step> = vec![
        ("handshake", |p| {
            p.command(&Command::Ugi)?;
            let (_, took) = p.until("ugiok", p.patience, |m| *m == Message::UgiOk)?;
            Ok(format!("in {} ms", took.as_millis()))
        }),
        ("options", |p| {
            let options: Vec<(String, String)> = p
                .log
                .iter()
                .filter_map(|l| option_default(l.strip_prefix("< ")?))
                .collect();
            p.log.clear();
            for (name, value) in &options {
                p.command(&Command::SetOption {
                    name: name.clone(),
                    value: value.clone(),
                })?;
            }
            p.command(&Command::IsReady)?;
            p.until("readyok", p.patience, |m| *m == Message::ReadyOk)?;
            Ok(format!("{} set to their defaults", options.len()))
        }),
        ("newgame", |p| {
            new_game(p).map(|took| format!("readyok in {} ms", took.as_millis()))
        }),
        ("go movetime from the start", |p| {
            let go = Go {
                movetime: Some(200),
                ..Go::default()
            };
            with_position!(p.game, P => p.search(&walk::<P>(0), go, Duration::from_millis(200) + MARGIN))
        }),
        ("position with moves, go depth", |p| {
            let go = Go {
                depth: Some(2),
                ..Go::default()
            };
            with_position!(p.game, P => p.search(&walk::<P>(3), go, p.patience))
        }),
        ("position string, go nodes", |p| {
            let go = Go {
                nodes: Some(5_000),
                ..Go::default()
            };
            with_position!(p.game, P => {
                let walked = walk::<P>(6);
                let game = Game::new(*walked.position(), Default::default());
                p.search(&game, go, p.patience)
            })
        }),
        ("go with clocks", |p| {
            let go = Go {
                wtime: Some(3_000),
                btime: Some(3_000),
                winc: Some(30),
                binc: Some(30),
                ..Go::default()
            };
            with_position!(p.game, P => p.search(&walk::<P>(4), go, Duration::from_secs(3) + MARGIN))
        }),
        ("isready under load", |p| {
            with_position!(p.game, P => {
                let game = walk::<P>(2);
                p.command(&Command::Position { start: None, moves: game.moves().iter().map(ToString::to_string).collect() })?;
            });
            p.command(&Command::Go(Go {
                movetime: Some(1_500),
                ..Go::default()
            }))?;
            std::thread::sleep(Duration::from_millis(100));
            p.command(&Command::IsReady)?;
            // Both answers, in either order (a search may end first); readyok promptly.
            let (first, took) = p.until("readyok while searching", PROMPT, |m| {
                matches!(m, Message::ReadyOk | Message::BestMove(_))
            })?;
            let other = |m: &Message| match first {
                Message::ReadyOk => matches!(m, Message::BestMove(_)),
                _ => *m == Message::ReadyOk,
            };
            let (_, rest) = p.until("bestmove", Duration::from_millis(1_500) + MARGIN, other)?;
            let readyok = if first == Message::ReadyOk {
                took
            } else {
                took + rest
            };
            if readyok > PROMPT {
                return Err(format!("readyok {} ms after isready", readyok.as_millis()));
            }
            Ok(format!("readyok in {} ms", readyok.as_millis()))
        }),
        ("stop", |p| {
            p.command(&Command::Position {
                start: None,
                moves: Vec::new(),
            })?;
            p.command(&Command::Go(Go {
                movetime: Some(30_000),
                ..Go::default()
            }))?;
            std::thread::sleep(Duration::from_millis(200));
            p.command(&Command::Stop)?;
            let (message, took) = p.until("bestmove after stop", PROMPT, |m| {
                matches!(m, Message::BestMove(_))
            })?;
            let Message::BestMove(mv) = message else {
                unreachable!("matched above")
            };
            with_position!(p.game, P => legal(&walk::<P>(0), &mv))?;
            Ok(format!("bestmove {} ms after stop", took.as_millis()))
        }),
        ("newgame between games", |p| {
            new_game(p)?;
            let go = Go {
                depth: Some(1),
                ..Go::default()
            };
            with_position!(p.game, P => p.search(&walk::<P>(1), go, p.patience))
        }),
    ];
    if game == GameKind::Loa {
        steps.push(("a forced pass", |p| {
            let go = Go {
                depth: Some(1),
                ..Go::default()
            };
            let answer = p.search(&from::<Loa>(LOA_PASS), go, p.patience)?;
            Ok(answer)
        }));
        steps.push(("repetition", |p| {
            let mut game = Game::new(Loa::start(), Default::default());
            for mv in loa_round_trip() {
                game.play_text(&mv).map_err(|e| e.to_string())?;
            }
            let go = Go {
                depth: Some(2),
                ..Go::default()
            };
            p.search(&game, go, p.patience)
                .map(|m| format!("{m}, the start seen twice"))
        }));
    }
    steps.push(("a game that is over", |p| {
        let over = match p.game {
            GameKind::Loa => LOA_OVER,
            GameKind::Amazons => AMAZONS_OVER,
        };
        p.command(&Command::Position {
            start: Some(over.to_string()),
            moves: Vec::new(),
        })?;
        p.command(&Command::Go(Go {
            depth: Some(1),
            ..Go::default()
        }))?;
        let (message, _) = p.until("bestmove", p.patience, |m| {
            matches!(m, Message::BestMove(_))
        })?;
        match message {
            Message::BestMove(mv) if mv == "none" || mv == "(none)" => Ok(format!("bestmove {mv}")),
            Message::BestMove(mv) => Err(format!(
                "bestmove '{mv}' where the game is over (none expected)"
            )),
            _ => unreachable!("matched above"),
        }
    }));
    steps.push(("quit", quit));
    steps
}

/// After a failed check, the engine is stopped and asked `isready`, and what it still says
/// before `readyok` is dropped, so that a late answer does not fail the next check; an
/// engine that does not answer is given up.
fn resync(p: &mut Probe) {
    let synced = p
        .command(&Command::Stop)
        .and_then(|()| p.command(&Command::IsReady))
        .and_then(|()| p.until("readyok", p.patience, |m| *m == Message::ReadyOk));
    if let Err(why) = synced {
        p.gone = Some(format!("no readyok after the failed check: {why}"));
    }
}

/// `newgame` of the probe's game and `isready`: how long `readyok` took.
fn new_game(p: &mut Probe) -> Result<Duration, String> {
    let game = p.game.name().to_string();
    p.command(&Command::NewGame {
        game,
        rules: Vec::new(),
    })?;
    p.command(&Command::IsReady)?;
    p.until("readyok", p.patience, |m| *m == Message::ReadyOk)
        .map(|(_, took)| took)
}

/// `quit` (the same word in every dialect); the process must exit within a second.
fn quit(p: &mut Probe) -> Result<String, String> {
    p.send("quit".into())?;
    match p.process.exit_within(Duration::from_secs(1)) {
        Some(status) if status.success() => Ok("exited".into()),
        Some(status) => Err(format!("exited with {status}")),
        None => Err("still running a second after quit".into()),
    }
}

/// The name and default of an `option name N type T default D` line.
fn option_default(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("option name ")?;
    let (name, rest) = rest.split_once(" type ")?;
    let default = rest.split_once(" default ").map(|(_, d)| d)?;
    let default = default.split(" min ").next()?.split(" var ").next()?.trim();
    Some((name.trim().to_string(), default.to_string()))
}

/// Runs the checks of `config`'s dialect against its engine in `game`, telling each as it
/// ends; an answer no limit times may take `config.unresponsive_timeout`. Checks after
/// the engine's process ended are skipped.
///
/// # Errors
/// The engine cannot be started.
pub fn check_engine(
    config: &EngineConfig,
    game: GameKind,
    mut tell: impl FnMut(&CheckResult),
) -> Result<Vec<CheckResult>, String> {
    let patience = config.unresponsive_timeout;
    let process = EngineProcess::spawn(config).map_err(|e| e.to_string())?;
    let mut probe = Probe {
        process,
        dialect: config.protocol,
        game,
        log: Vec::new(),
        answered: 0,
        last: String::new(),
        patience,
        gone: None,
    };
    let steps = match config.protocol {
        Dialect::CodinGame => codingame_checks(game),
        Dialect::Gtp { .. } => gtp_checks(),
        _ => command_checks(game),
    };
    let mut results = Vec::with_capacity(steps.len());
    for (name, step) in steps {
        // The handshake's lines stay for the options check, which reads them.
        if name != "options" {
            probe.log.clear();
        }
        let result = match &probe.gone {
            Some(why) => CheckResult {
                name,
                verdict: Verdict::Skip,
                detail: format!("not run: {why}"),
                exchange: Vec::new(),
                ended: false,
            },
            None => match step(&mut probe) {
                Ok(detail) => CheckResult {
                    name,
                    verdict: Verdict::Pass,
                    detail,
                    exchange: Vec::new(),
                    ended: false,
                },
                Err(detail) => {
                    let from = probe.log.len().saturating_sub(EXCHANGE_LINES);
                    CheckResult {
                        name,
                        verdict: Verdict::Fail,
                        detail,
                        exchange: probe.log[from..].to_vec(),
                        // Gone before this check: skipped; gone now: found by it.
                        ended: probe.gone.is_some(),
                    }
                }
            },
        };
        if result.verdict == Verdict::Fail && probe.gone.is_none() {
            if name == "handshake" {
                probe.gone = Some("the handshake failed".into());
            } else if probe.dialect.speaks_commands() {
                resync(&mut probe);
            }
        }
        tell(&result);
        results.push(result);
    }
    probe.process.kill();
    Ok(results)
}

#[cfg(test)]
mod tests;
