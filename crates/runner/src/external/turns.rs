//! The shapes driven turn by turn rather than command by command: CodinGame bots (the
//! situation written each turn, a fresh process each game) and GTP programs (Amazons as
//! three GTP moves a turn). The referee, clocks, transcripts and failures are those of
//! every outside engine.

use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use tourney_model::Termination;
use tourney_rules::{Color, Game, Position};

use super::ExternalEngine;
use super::transcript::Direction;
use crate::contestant::{Failure, Reply, Unfit};
use crate::dialect::{Dialect, canonical_move, codingame, first_mover, gtp};
use crate::protocol::Go;

/// What a turn-by-turn engine has been told of the current game.
#[derive(Debug, Default)]
pub(super) struct TurnState {
    /// CodinGame: the initial input was sent.
    pub(super) introduced: bool,
    /// GTP: the moves on the engine's board, in tourney's notation.
    pub(super) told: Vec<String>,
    /// GTP: `time_settings` was sent for this game.
    pub(super) timed: bool,
    /// GTP: the turns from the standard start to this game's start.
    pub(super) opening: Option<Vec<String>>,
}

/// The most positions searched for turns that reach an opening position (GTP).
const OPENING_SEARCH: usize = 200_000;

/// Why an exchange failed: the engine's answer was an error, or it did not answer.
enum Exchange {
    Refused(String),
    Silent(RecvTimeoutError),
}

impl ExternalEngine {
    /// Sends `lines` and then `listing` (lines already joined, each ending in a newline) as
    /// one write; the transcript notes each line (the listing as its count of `listed`
    /// moves only, so that it stays readable).
    pub(super) fn send_lines(
        &mut self,
        lines: &[String],
        listing: &str,
        listed: usize,
    ) -> Result<(), String> {
        let process = self.process.as_mut().ok_or("no engine process")?;
        let mut text = lines.join("\n");
        if !listing.is_empty() {
            text.push('\n');
            text.push_str(listing.strip_suffix('\n').unwrap_or(listing));
        }
        process.send(text).map_err(|e| e.to_string())?;
        for line in lines {
            self.transcript.note(Direction::Sent, line.clone());
        }
        if listed > 0 {
            self.transcript
                .note(Direction::Sent, format!("({listed} moves listed)"));
        }
        Ok(())
    }

    /// Sends GTP `commands` in one write (GTP answers in order) and reads their answers
    /// until `deadline`: the text of each `= text`.
    fn gtp_batch(
        &mut self,
        commands: &[String],
        deadline: Instant,
    ) -> Result<Vec<String>, Exchange> {
        self.send_lines(commands, "", 0)
            .map_err(|_| Exchange::Silent(RecvTimeoutError::Disconnected))?;
        let mut answers = Vec::with_capacity(commands.len());
        for command in commands {
            // Lines that start no answer (the empty line that ends one, chatter) are skipped.
            let answer = loop {
                let process = self
                    .process
                    .as_mut()
                    .ok_or(Exchange::Silent(RecvTimeoutError::Disconnected))?;
                let line = process.next_line(deadline).map_err(Exchange::Silent)?;
                let answer = gtp::answer(&line).map(|a| a.map(String::from).map_err(String::from));
                self.transcript.note(Direction::Received, line);
                if let Some(answer) = answer {
                    break answer;
                }
            };
            match answer {
                Ok(text) => answers.push(text),
                Err(why) => return Err(Exchange::Refused(format!("'{command}': {why}"))),
            }
        }
        Ok(answers)
    }

    /// Sends one GTP command and waits for its answer until `deadline`.
    fn gtp(&mut self, command: String, deadline: Instant) -> Result<String, Exchange> {
        let mut answers = self.gtp_batch(std::slice::from_ref(&command), deadline)?;
        Ok(answers.pop().unwrap_or_default())
    }

    /// A GTP exchange outside a game's moves (the handshake, a new game): a failure is the
    /// engine being unfit.
    fn gtp_setup(&mut self, command: &str) -> Result<String, Unfit> {
        let deadline = Instant::now() + self.config.handshake_timeout;
        self.gtp(command.to_string(), deadline)
            .map_err(|e| match e {
                Exchange::Refused(why) => Unfit(format!("refused {why}")),
                Exchange::Silent(RecvTimeoutError::Timeout) => Unfit(format!(
                    "no answer to '{command}' within {:.1} s",
                    self.config.handshake_timeout.as_secs_f64()
                )),
                Exchange::Silent(RecvTimeoutError::Disconnected) => {
                    let why = self
                        .process
                        .as_mut()
                        .map_or_else(String::new, |p| p.ended());
                    Unfit(format!("{why} before answering '{command}'"))
                }
            })
    }

    /// The handshake of a turn-by-turn engine: CodinGame bots have none; GTP programs say
    /// their protocol version and take the options as GTP commands (`name value`).
    pub(super) fn start_turns(&mut self) -> Result<(), Unfit> {
        if let Dialect::Gtp { .. } = self.config.protocol {
            self.gtp_setup("protocol_version")?;
            for (name, value) in self.config.options.clone() {
                self.gtp_setup(&format!("{name} {value}"))?;
            }
        }
        Ok(())
    }

    /// A new game (in a fresh process for CodinGame bots, which cannot be told): GTP
    /// programs get the board size and a clear board.
    pub(super) fn new_game_turns<P: Position>(&mut self, rules: P::Rules) -> Result<(), Unfit> {
        self.turns = TurnState::default();
        if let Dialect::Gtp { .. } = self.config.protocol {
            let size = codingame::rows(&P::start_for(rules).to_string()).len();
            self.gtp_setup(&format!("boardsize {size}"))?;
            self.gtp_setup("clear_board")?;
        }
        Ok(())
    }

    /// A CodinGame turn: the initial input on the bot's first, the situation, one move back.
    pub(super) fn go_codingame<P: Position>(
        &mut self,
        game: &Game<P>,
        deadline: Duration,
        has_clock: bool,
    ) -> Result<Reply, Failure> {
        let mut lines = Vec::new();
        if !self.turns.introduced {
            let size = codingame::rows(&game.position().to_string()).len();
            lines = codingame::initial_input(P::GAME, size, game.position().turn());
            self.turns.introduced = true;
        }
        let turn = codingame::turn_input(game);
        lines.extend(turn.head);
        if let Err(e) = self.send_lines(&lines, &turn.listing, turn.listed) {
            let why = self
                .process
                .as_mut()
                .map_or_else(String::new, |p| p.ended());
            return Err(self.failure(Termination::Crash, format!("{why} ({e})")));
        }
        let until = Instant::now() + deadline;
        let process = self.process.as_mut().expect("sent above");
        loop {
            match process.next_line(until) {
                Ok(line) => {
                    let mv = codingame::answer(&line).to_string();
                    self.transcript.note(Direction::Received, line);
                    if !mv.is_empty() {
                        return Ok(reply(canonical_move(&mv)));
                    }
                }
                Err(e) => return Err(self.silent(e, has_clock)),
            }
        }
    }

    /// A GTP turn: the moves the program has not seen as `play`s (or a clear board and the
    /// whole game when its board is not a prefix of this one), then three `genmove`s.
    pub(super) fn go_gtp<P: Position>(
        &mut self,
        game: &Game<P>,
        go: &Go,
        deadline: Duration,
        has_clock: bool,
    ) -> Result<Reply, Failure> {
        let Dialect::Gtp { first } = self.config.protocol else {
            unreachable!("a GTP engine");
        };
        let until = Instant::now() + deadline;
        if self.turns.opening.is_none() {
            let start = *game.start();
            let opening = if start == P::start_for(game.rules()) {
                Some(Vec::new())
            } else if !self.start_path.is_empty() {
                Some(self.start_path.clone())
            } else {
                (start.to_string().parse().ok()).and_then(|s| gtp::turns_to(&s, OPENING_SEARCH))
            };
            let Some(opening) = opening else {
                let why =
                    format!("GTP has no board set-up, and no turns from the start reach {start}");
                return Err(self.failure(Termination::Crash, why));
            };
            self.turns.opening = Some(opening);
        }
        let opening = self.turns.opening.as_deref().unwrap_or_default();
        // The turns from the standard start: the opening's, then the game's (the game's
        // written out only from where the program's board ends, as the game only grows).
        let total = opening.len() + game.moves().len();
        let nth = |i: usize| -> String {
            match opening.get(i) {
                Some(mv) => mv.clone(),
                None => game.moves()[i - opening.len()].to_string(),
            }
        };
        let told = self.turns.told.len();
        let mut commands = Vec::new();
        let on_its_board = told <= total
            && (told == 0 || self.turns.told[told - 1] == nth(told - 1))
            && (told < 2 || self.turns.told[0] == nth(0));
        if !on_its_board {
            commands.push("clear_board".to_string());
            self.turns.told.clear();
        }
        let unseen: Vec<String> = (self.turns.told.len()..total).map(nth).collect();
        let p1 = first_mover(P::GAME);
        let mut side = P::start().turn();
        if self.turns.told.len() % 2 == 1 {
            side = side.opponent();
        }
        for mv in &unseen {
            let colour = gtp::colour(side, p1, first);
            for square in gtp::turn_squares(mv) {
                commands.push(format!(
                    "play {colour} {}",
                    gtp::vertex(&square).unwrap_or(square)
                ));
            }
            side = side.opponent();
        }
        let mover = game.position().turn();
        let colour = gtp::colour(mover, p1, first);
        commands.extend(time_commands(go, mover, colour, &mut self.turns.timed));
        commands.extend((0..3).map(|_| format!("genmove {colour}")));
        let answers = match self.gtp_batch(&commands, until) {
            Ok(answers) => answers,
            Err(Exchange::Refused(why)) => {
                return Err(self.failure(Termination::IllegalMove, format!("refused {why}")));
            }
            Err(Exchange::Silent(e)) => return Err(self.silent(e, has_clock)),
        };
        self.turns.told.extend(unseen);
        let squares: Vec<String> = answers[answers.len().saturating_sub(3)..]
            .iter()
            .map(|vertex| gtp::square(vertex).unwrap_or_else(|| vertex.to_lowercase()))
            .collect();
        let mv = canonical_move(&squares.concat());
        self.turns.told.push(mv.clone());
        Ok(reply(mv))
    }
}

/// A reply of a dialect that reports nothing but the move.
fn reply(mv: String) -> Reply {
    Reply {
        mv,
        ..Reply::default()
    }
}

/// GTP's time commands before a turn: with a move time, `time_settings 0 S 3` once a game
/// (S seconds for the turn's three GTP moves); with clocks, `time_left` of the mover.
fn time_commands(go: &Go, mover: Color, colour: &str, timed: &mut bool) -> Vec<String> {
    let secs = |ms: u64| ms.div_ceil(1000).max(1);
    let left = match mover {
        Color::White => go.wtime,
        Color::Black => go.btime,
    };
    match (go.movetime, left) {
        (Some(ms), _) if !*timed => {
            *timed = true;
            vec![format!("time_settings 0 {} 3", secs(ms))]
        }
        (None, Some(ms)) => {
            let mut out = Vec::new();
            if !*timed {
                *timed = true;
                out.push(format!("time_settings {} 0 0", secs(ms)));
            }
            out.push(format!("time_left {colour} {} 0", secs(ms)));
            out
        }
        _ => Vec::new(),
    }
}
