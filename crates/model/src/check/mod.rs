//! A reported game checked against the rules of its game and the tournament's settings:
//! it starts where its pair's opening does, every move is legal, each move's time fits
//! its side's clock, and the ending it claims is the one the rules (or the settings) give.
//! Board adjudications are applied to the board again, score adjudications to the scores
//! again (from players that report scores), time forfeits to the clock again; endings an
//! engine caused that leave no trace in the record (a crash, an illegal move it sent,
//! silence) are taken as reported, against the side that was to move. Pure and cheap: it
//! replays moves on the rules core.

use std::time::Duration;

use tourney_rules::{Adjudicate, Color, EndReason, Game, Position, with_position};

use crate::TimeControl;
use crate::job::{GameSettings, MOST_CLOCK_SCALE, MoveLimits};
use crate::record::{GameRecord, GameResult, MetaValue, Termination};

/// The meta key of a game lost on time: how long the move that lost it took, in
/// milliseconds (the move itself is not recorded).
pub const FORFEIT_MS: &str = "forfeit_ms";

/// Why a reported game is not the game it says it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// It does not start at its pair's opening.
    #[error("it starts at '{found}', not at its opening '{expected}'")]
    Start {
        /// The opening of its pair.
        expected: String,
        /// Where it says it starts.
        found: String,
    },
    /// A move the rules do not allow (or that does not parse), at 1-based ply `ply`.
    #[error("ply {ply}: {message}")]
    Move {
        /// The ply, from 1.
        ply: usize,
        /// What is wrong with it.
        message: String,
    },
    /// A move's recorded time does not fit its side's clock, or a claimed time forfeit
    /// does not add up.
    #[error("clock: {0}")]
    Clock(String),
    /// A side reports what its player never reports (scores of a player that gives none).
    #[error("scores: {0}")]
    Scores(String),
    /// The ending it claims is not the one its moves reach.
    #[error("it claims {claimed} {result}, but {actual}")]
    Ending {
        /// The claimed termination.
        claimed: &'static str,
        /// The claimed result.
        result: &'static str,
        /// What the rules and settings say.
        actual: String,
    },
    /// The record's own fields are not those of its tournament, or past a bound a worker
    /// keeps (rules, opening plies, stderr, transcript).
    #[error("record: {0}")]
    Record(String),
    /// The tournament's rule options do not parse (a bug: they were checked at submission).
    #[error("rules: {0}")]
    Rules(String),
}

impl Rejection {
    /// Every [`Rejection::kind`].
    pub const KINDS: [&'static str; 7] = [
        "start", "move", "clock", "scores", "ending", "record", "rules",
    ];

    /// A short name for counting: one of [`Rejection::KINDS`].
    pub fn kind(&self) -> &'static str {
        match self {
            Rejection::Start { .. } => "start",
            Rejection::Move { .. } => "move",
            Rejection::Clock(_) => "clock",
            Rejection::Scores(_) => "scores",
            Rejection::Ending { .. } => "ending",
            Rejection::Record(_) => "record",
            Rejection::Rules(_) => "rules",
        }
    }
}

/// What the checks know of one colour's player beyond the tournament's settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Side {
    /// The engine's own clock and per-move limits (time odds), in place of the
    /// tournament's.
    pub limits: Option<MoveLimits>,
    /// Whether the player may report scores: an outside engine may, a built-in player
    /// only if it searches (`random` gives none).
    pub reports_scores: bool,
}

/// Replays `game` from `opening` under `settings`, its players being `sides` (indexed by
/// [`Color::index`]), and checks that it is what it says.
///
/// # Errors
/// The first [`Rejection`] found.
pub fn check(
    game: &GameRecord,
    opening: &str,
    settings: &GameSettings,
    sides: [Side; 2],
) -> Result<(), Rejection> {
    with_position!(settings.game, P => check_typed::<P>(game, opening, settings, sides))
}

/// One side's clock as the record's times run it down, in milliseconds.
struct Clock {
    moves: Option<u32>,
    base: Option<u64>,
    increment: u64,
    movetime: Option<u64>,
    left: u64,
    played: u32,
}

impl Clock {
    fn new(limits: MoveLimits, scale: f64) -> Clock {
        let scaled = |d: Duration| (d.as_secs_f64() * scale * 1000.0).ceil() as u64;
        let (moves, base, increment) = match limits.time_control {
            TimeControl::Infinite => (None, None, 0),
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => (moves, Some(scaled(base)), scaled(increment)),
        };
        Clock {
            moves,
            base,
            increment,
            movetime: limits.movetime_ms.map(|t| scaled(Duration::from_millis(t))),
            left: base.unwrap_or_default(),
            played: 0,
        }
    }

    /// The time the next move may take (`None`: no limit), as the referee gives it.
    fn allowed(&self) -> Option<u64> {
        match (self.base, self.movetime) {
            (Some(_), Some(t)) => Some(self.left.min(t)),
            (Some(_), None) => Some(self.left),
            (None, t) => t,
        }
    }

    /// Runs the clock down by a move of `ms`.
    fn spend(&mut self, ms: u64) {
        if let Some(base) = self.base {
            self.left = self.left.saturating_sub(ms) + self.increment;
            self.played += 1;
            if self.moves.is_some_and(|p| self.played.is_multiple_of(p)) {
                self.left += base;
            }
        }
    }
}

/// The mover's clock left after each move of `record`, in milliseconds, as its
/// `time_control` (one for both, or `white A; black B`) and times run it down; `None` for
/// a move without a clock, and for the opening's moves, which take no time.
pub fn clocks_left(record: &GameRecord) -> Vec<Option<u64>> {
    let parse = |text: &str| text.trim().parse::<TimeControl>().ok();
    let tc = record.time_control.as_str();
    let [white, black] = match tc.split_once(';') {
        Some((w, b)) => [
            parse(w.trim().trim_start_matches("white")),
            parse(b.trim().trim_start_matches("black")),
        ],
        None => [parse(tc), parse(tc)],
    };
    let scale = match record.meta.get("clock_scale") {
        Some(MetaValue::Text(t)) => t.parse::<f64>().unwrap_or(1.0),
        Some(MetaValue::Number(n)) => *n as f64,
        None => 1.0,
    };
    let limits = |tc: Option<TimeControl>| MoveLimits {
        time_control: tc.unwrap_or(TimeControl::Infinite),
        nodes: None,
        depth: None,
        movetime_ms: None,
    };
    // By colour index: Black 0, White 1.
    let mut clocks = [
        Clock::new(limits(black), scale),
        Clock::new(limits(white), scale),
    ];
    let mut mover = usize::from(!record.start.ends_with(" b"));
    let opening = record.opening_plies as usize;
    (record.moves.iter().enumerate())
        .map(|(i, m)| {
            let clock = &mut clocks[mover];
            mover = 1 - mover;
            if i < opening || clock.base.is_none() {
                return None;
            }
            clock.spend(m.time_ms);
            Some(clock.left)
        })
        .collect()
}

/// The clock factor a record says it was played with, within the bounds a worker uses.
fn clock_scale(record: &GameRecord, settings: &GameSettings) -> Result<f64, Rejection> {
    if !settings.scale_by_speed {
        return Ok(1.0);
    }
    let scale = match record.meta.get("clock_scale") {
        Some(MetaValue::Text(t)) => t.parse::<f64>().ok(),
        Some(MetaValue::Number(n)) => Some(*n as f64),
        None => None,
    };
    match scale {
        // Written with three decimals.
        Some(s) if (1.0 / MOST_CLOCK_SCALE - 0.001..=MOST_CLOCK_SCALE + 0.001).contains(&s) => {
            Ok(s + 0.001)
        }
        other => Err(Rejection::Record(format!(
            "clock_scale {other:?}: a scaled tournament's games say their factor, within \
             1/{MOST_CLOCK_SCALE} to {MOST_CLOCK_SCALE}"
        ))),
    }
}

fn check_typed<P: Position + Adjudicate>(
    record: &GameRecord,
    opening: &str,
    settings: &GameSettings,
    sides: [Side; 2],
) -> Result<(), Rejection> {
    if record.start != opening {
        return Err(Rejection::Start {
            expected: opening.to_string(),
            found: record.start.clone(),
        });
    }
    // A tournament's opening is its start position: the players make every move.
    if record.opening_plies != 0 {
        return Err(Rejection::Record(format!(
            "{} opening plies: a tournament game's opening is its start position",
            record.opening_plies
        )));
    }
    for (color, player) in [("white", &record.white), ("black", &record.black)] {
        player
            .check_bounds()
            .map_err(|e| Rejection::Record(format!("{color}: {e}")))?;
    }
    let start: P = opening.parse().map_err(|e| Rejection::Start {
        expected: opening.to_string(),
        found: format!("{opening} ({e})"),
    })?;
    let rules: P::Rules = settings
        .rules
        .parse()
        .map_err(|e: tourney_rules::ParseError| Rejection::Rules(e.to_string()))?;
    if !start.fits(rules) {
        return Err(Rejection::Rules(format!(
            "the start {opening} is not a board of the rules '{rules}'"
        )));
    }
    // The same rules, however written (the referee writes them out in full).
    if record.game != settings.game || record.rules.parse::<P::Rules>().ok() != Some(rules) {
        return Err(Rejection::Record(format!(
            "game {} with rules '{}', not {} with '{rules}'",
            record.game, record.rules, settings.game
        )));
    }
    let scale = clock_scale(record, settings)?;
    let own = |c: Color| {
        sides[c.index()].limits.unwrap_or(MoveLimits {
            time_control: settings.time_control,
            nodes: settings.nodes,
            depth: settings.depth,
            movetime_ms: settings.movetime_ms,
        })
    };
    let mut clocks = Color::ALL.map(|c| Clock::new(own(c), scale));
    let margin = settings.margin_ms;
    let mut game = Game::new(start, rules);
    let mut scores = Vec::with_capacity(record.moves.len());
    // The position before the last move: a board split there (or earlier: a split board
    // stays split, arrows only add walls) would have ended the game there.
    let mut before_last = None;
    for (i, m) in record.moves.iter().enumerate() {
        let ply = i + 1;
        let mover = game.position().turn();
        let score = m.score.as_deref().and_then(crate::adjudication::centi);
        if m.score.is_some() && !sides[mover.index()].reports_scores {
            return Err(Rejection::Scores(format!(
                "ply {ply}: {mover}'s player reports no scores, the record gives '{}'",
                m.score.as_deref().unwrap_or_default()
            )));
        }
        if m.pv.len() > crate::MAX_PV_MOVES
            || m.pv
                .iter()
                .any(|p| p.chars().count() > crate::MAX_PV_MOVE_CHARS)
        {
            return Err(Rejection::Record(format!(
                "ply {ply}: a principal variation of {} moves, beyond {} moves of {} characters",
                m.pv.len(),
                crate::MAX_PV_MOVES,
                crate::MAX_PV_MOVE_CHARS
            )));
        }
        let clock = &mut clocks[mover.index()];
        if let Some(allowed) = clock.allowed()
            && m.time_ms > allowed + margin
        {
            return Err(Rejection::Clock(format!(
                "ply {ply}: {mover} took {} ms with {allowed} ms (and a margin of {margin} ms) \
                 allowed, so it lost on time there",
                m.time_ms
            )));
        }
        clock.spend(m.time_ms);
        before_last = Some(*game.position());
        game.play_text(m.mv.as_str()).map_err(|e| Rejection::Move {
            ply,
            message: e.to_string(),
        })?;
        scores.push(score);
    }
    let ending = |actual: String| Rejection::Ending {
        claimed: record.termination.name(),
        result: record.result.as_str(),
        actual,
    };
    let over = game.outcome();
    let plies = record.moves.len();
    let first = start.turn();
    // The referee asks the score rules before every move (not a game's ending by the
    // rules, the ply limit or the board split, which come first): an earlier verdict
    // would have ended the game there. A played-on game is recorded up to its verdict.
    let asked = match record.termination {
        Termination::IllegalMove
        | Termination::TimeForfeit
        | Termination::Crash
        | Termination::Unresponsive => plies,
        _ => plies.saturating_sub(1),
    };
    if settings.score_rules.any()
        && let Some(n) =
            (1..=asked).find(|&n| settings.score_rules.verdict(first, &scores[..n]).is_some())
    {
        return Err(ending(format!("the scores called it after {n} plies")));
    }
    if settings.adjudicate && before_last.is_some_and(|p| p.adjudicate().is_some()) {
        return Err(ending("the board was split before its last ply".into()));
    }
    match record.termination {
        Termination::Connection | Termination::NoMoves | Termination::Repetition => {
            let reason = match record.termination {
                Termination::Connection => EndReason::Connection,
                Termination::NoMoves => EndReason::NoMoves,
                _ => EndReason::Repetition,
            };
            match over {
                Some(o)
                    if o.reason == reason && GameResult::of_winner(o.winner) == record.result =>
                {
                    Ok(())
                }
                Some(o) => Err(ending(format!(
                    "the moves end it by {} {}",
                    o.reason.name(),
                    o.result_str()
                ))),
                None => Err(ending(format!("the game is not over after {plies} plies"))),
            }
        }
        // Ended by the referee: the rules had not ended it.
        _ if over.is_some() => Err(ending(format!("the rules ended it after {plies} plies"))),
        Termination::MaxPlies => match settings.max_plies {
            Some(max) if plies == max as usize && record.result == GameResult::Draw => Ok(()),
            max => Err(ending(format!(
                "the limit is {max:?} plies and a draw; the game has {plies}"
            ))),
        },
        // The referee asks the ply limit before anything else.
        _ if settings.max_plies.is_some_and(|max| plies >= max as usize) => {
            Err(ending(format!("the ply limit was reached after {plies}")))
        }
        Termination::Adjudication => {
            adjudication(record, settings, game.position(), first, &scores)
        }
        _ if settings.adjudicate && game.position().adjudicate().is_some() => {
            Err(ending(format!("the board is split after {plies} plies")))
        }
        Termination::TimeForfeit => {
            let loser = game.position().turn();
            let clock = &clocks[loser.index()];
            let Some(allowed) = clock.allowed() else {
                return Err(Rejection::Clock(format!(
                    "a time forfeit, but {loser} had no clock and no time per move"
                )));
            };
            // The recorded times are whole milliseconds, rounded down: the clock here may
            // be up to a millisecond a move fuller than the referee's was.
            let slack = u64::from(clock.played) + 2;
            let took = record.meta.get(FORFEIT_MS).and_then(MetaValue::as_u64);
            match took {
                Some(took) if took + slack > allowed + margin => failure_loses(record, loser),
                took => Err(Rejection::Clock(format!(
                    "a time forfeit of {loser}, who had {allowed} ms and a margin of {margin} \
                     ms left, but its last move took {}",
                    took.map_or("an unrecorded time".into(), |t| format!("{t} ms"))
                ))),
            }
        }
        // An engine's failure loses for the side that was to move.
        Termination::IllegalMove | Termination::Crash | Termination::Unresponsive => {
            failure_loses(record, game.position().turn())
        }
    }
}

/// An adjudication: the board split into regions (checked on the last position), else the
/// engines' scores (the first mover's at even plies) calling it at its last ply with its
/// result (earlier verdicts were ruled out before).
fn adjudication<P: Adjudicate>(
    record: &GameRecord,
    settings: &GameSettings,
    last: &P,
    first: Color,
    scores: &[Option<i32>],
) -> Result<(), Rejection> {
    let ending = |actual: String| Rejection::Ending {
        claimed: record.termination.name(),
        result: record.result.as_str(),
        actual,
    };
    let plies = record.moves.len();
    let split = settings.adjudicate.then(|| last.adjudicate()).flatten();
    let verdict = match split {
        Some(winner) => Some(Some(winner)),
        None if settings.score_rules.any() => {
            settings.score_rules.verdict(first, scores).map(|(w, _)| w)
        }
        None if settings.adjudicate => {
            return Err(ending(format!(
                "the board is not split after {plies} plies"
            )));
        }
        None => return Err(ending("the tournament does not adjudicate".into())),
    };
    match verdict {
        Some(winner) if GameResult::of_winner(winner) == record.result => Ok(()),
        Some(winner) => Err(ending(format!(
            "the {} calls it {}",
            if split.is_some() {
                "split board"
            } else {
                "scores"
            },
            GameResult::of_winner(winner).as_str()
        ))),
        None if settings.adjudicate => Err(ending(format!(
            "the board is not split after {plies} plies and the scores do not call it"
        ))),
        None => Err(ending("the scores do not call it".into())),
    }
}

/// A failure loses for `loser`, the side that was to move.
fn failure_loses(record: &GameRecord, loser: Color) -> Result<(), Rejection> {
    if record.result.winner() == Some(loser.opponent()) {
        Ok(())
    } else {
        Err(Rejection::Ending {
            claimed: record.termination.name(),
            result: record.result.as_str(),
            actual: format!("{loser} was to move, so {loser} lost"),
        })
    }
}

#[cfg(test)]
mod tests;
