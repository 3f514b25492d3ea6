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
mod tests {
    use super::*;
    use crate::adjudication::{ResignRule, ScoreRules};
    use crate::record::{MoveRecord, PlayerRecord};
    use tourney_rules::{Amazons, GameKind, Loa};

    const AMAZONS_ALMOST_SPLIT: &str = "3b2b3/10/10/b8b/xxxxxxxxx1/10/w8w/10/10/3w2w3 w";

    fn settings(game: GameKind, tc: &str) -> GameSettings {
        GameSettings {
            tournament_name: "t".into(),
            game,
            rules: String::new(),
            time_control: tc.parse().unwrap(),
            nodes: None,
            depth: None,
            movetime_ms: None,
            max_plies: None,
            adjudicate: false,
            margin_ms: 100,
            scale_by_speed: false,
            score_rules: ScoreRules::default(),
            engine_limits: Default::default(),
            engine_logs: Default::default(),
        }
    }

    /// A record of `moves` (each taking `time_ms`) from `start`, ending as said.
    fn record(
        game: GameKind,
        start: &str,
        moves: &[&str],
        time_ms: u64,
        termination: Termination,
        result: GameResult,
    ) -> GameRecord {
        let player = |name: &str| PlayerRecord {
            name: name.into(),
            spec: "ab".into(),
            ..Default::default()
        };
        GameRecord {
            game,
            rules: String::new(),
            start: start.into(),
            opening_plies: 0,
            time_control: "10+0.1".into(),
            white: player("a"),
            black: player("b"),
            moves: moves
                .iter()
                .map(|m| MoveRecord {
                    mv: m.to_string(),
                    time_ms,
                    nodes: None,
                    depth: None,
                    score: None,
                    ..Default::default()
                })
                .collect(),
            result,
            termination,
            detail: None,
            started_ms: None,
            meta: Default::default(),
        }
    }

    /// The first legal move at each of `plies` plies of LOA from the start.
    fn loa_moves(plies: usize) -> Vec<String> {
        let mut position = Loa::start();
        (0..plies)
            .map(|_| {
                let mv = position.legal_moves()[0];
                position = position.play(mv).unwrap();
                mv.to_string()
            })
            .collect()
    }

    fn searchers() -> [Side; 2] {
        [Side {
            limits: None,
            reports_scores: true,
        }; 2]
    }

    fn refs(moves: &[String]) -> Vec<&str> {
        moves.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_board_adjudication_is_checked_on_the_board() {
        let mut s = settings(GameKind::Amazons, "inf");
        s.adjudicate = true;
        let start = Amazons::start().to_string();
        let mut position = Amazons::start();
        let two: Vec<String> = (0..2)
            .map(|_| {
                let mv = position.legal_moves()[0];
                position = position.play(mv).unwrap();
                mv.to_string()
            })
            .collect();
        let early = record(
            GameKind::Amazons,
            &start,
            &refs(&two),
            1,
            Termination::Adjudication,
            GameResult::WhiteWins,
        );
        let refused = check(&early, &start, &s, searchers());
        assert!(
            matches!(&refused, Err(Rejection::Ending { actual, .. }) if actual.contains("not split")),
            "{refused:?}"
        );
        // One arrow closes the wall: the board is split, White's side the larger.
        let split = |result| {
            record(
                GameKind::Amazons,
                AMAZONS_ALMOST_SPLIT,
                &["j4-j5/j6"],
                1,
                Termination::Adjudication,
                result,
            )
        };
        let start = AMAZONS_ALMOST_SPLIT;
        assert_eq!(
            check(&split(GameResult::WhiteWins), start, &s, searchers()),
            Ok(())
        );
        assert!(check(&split(GameResult::BlackWins), start, &s, searchers()).is_err());
        // Without the setting, no adjudication is believed.
        s.adjudicate = false;
        assert!(check(&split(GameResult::WhiteWins), start, &s, searchers()).is_err());
        // A game played on past the split (a crash later) should have ended there.
        s.adjudicate = true;
        let mut later = split(GameResult::WhiteWins);
        later.moves.push(MoveRecord {
            mv: "a7-a8/a9".into(),
            ..later.moves[0].clone()
        });
        later.termination = Termination::Crash;
        later.result = GameResult::BlackWins;
        assert!(check(&later, start, &s, searchers()).is_err());
    }

    #[test]
    fn time_forfeits_only_under_a_clock_that_ran_out() {
        let start = Loa::start().to_string();
        let moves = loa_moves(3);
        // After 3 plies Black (who moved first in LOA) has moved twice: White is to move.
        let forfeit = |forfeit_ms: Option<u64>| {
            let mut r = record(
                GameKind::Loa,
                &start,
                &refs(&moves),
                1,
                Termination::TimeForfeit,
                GameResult::BlackWins,
            );
            if let Some(ms) = forfeit_ms {
                r.meta.insert(FORFEIT_MS.into(), ms.into());
            }
            r
        };
        let clock = settings(GameKind::Loa, "10+0.1");
        let refused = |r: Result<(), Rejection>| matches!(r, Err(Rejection::Clock(_)));
        assert!(refused(check(&forfeit(None), &start, &clock, searchers())));
        assert!(refused(check(
            &forfeit(Some(3)),
            &start,
            &clock,
            searchers()
        )));
        // White has 10 s plus an increment after its one move, less 1 ms: it must have
        // taken more than that and the margin.
        assert!(refused(check(
            &forfeit(Some(10_050)),
            &start,
            &clock,
            searchers()
        )));
        assert_eq!(
            check(&forfeit(Some(10_300)), &start, &clock, searchers()),
            Ok(())
        );
        // No clock: no time forfeit at all.
        let none = settings(GameKind::Loa, "inf");
        assert!(refused(check(
            &forfeit(Some(60_000)),
            &start,
            &none,
            searchers()
        )));
        // A movetime: a move past it and the margin.
        let mut movetime = none.clone();
        movetime.movetime_ms = Some(200);
        assert_eq!(
            check(&forfeit(Some(350)), &start, &movetime, searchers()),
            Ok(())
        );
        assert!(refused(check(
            &forfeit(Some(250)),
            &start,
            &movetime,
            searchers()
        )));
        // An engine's own clock (time odds) replaces the tournament's for its side.
        let mut sides = searchers();
        sides[Color::White.index()].limits = Some(MoveLimits {
            time_control: "1+0".parse().unwrap(),
            nodes: None,
            depth: None,
            movetime_ms: None,
        });
        assert_eq!(check(&forfeit(Some(1_200)), &start, &clock, sides), Ok(()));
        assert!(refused(check(
            &forfeit(Some(1_200)),
            &start,
            &clock,
            searchers()
        )));
    }

    #[test]
    fn every_move_fits_its_sides_clock() {
        let start = Loa::start().to_string();
        let moves = loa_moves(2);
        let clock = settings(GameKind::Loa, "10+0.1");
        let game = |time_ms| {
            record(
                GameKind::Loa,
                &start,
                &refs(&moves),
                time_ms,
                Termination::Crash,
                GameResult::WhiteWins,
            )
        };
        assert_eq!(check(&game(9_000), &start, &clock, searchers()), Ok(()));
        // An hour a move under 10+0.1: it would have lost on time at its first move.
        let refused = check(&game(3_600_000), &start, &clock, searchers());
        assert!(
            matches!(&refused, Err(Rejection::Clock(m)) if m.starts_with("ply 1:")),
            "{refused:?}"
        );
        // Without a clock any time goes.
        let none = settings(GameKind::Loa, "inf");
        assert_eq!(check(&game(3_600_000), &start, &none, searchers()), Ok(()));
        // A scaled tournament's game says its factor, within the bounds.
        let mut scaled = clock.clone();
        scaled.scale_by_speed = true;
        let mut slow = game(30_000);
        assert!(
            check(&slow, &start, &scaled, searchers()).is_err(),
            "no factor"
        );
        slow.meta.insert("clock_scale".into(), "4.000".into());
        assert_eq!(check(&slow, &start, &scaled, searchers()), Ok(()));
        slow.meta.insert("clock_scale".into(), "400.000".into());
        assert!(check(&slow, &start, &scaled, searchers()).is_err());
    }

    #[test]
    fn scores_come_only_from_players_that_report_them() {
        let start = Loa::start().to_string();
        let mut s = settings(GameKind::Loa, "inf");
        s.score_rules = ScoreRules {
            resign: Some(ResignRule {
                score: 600,
                moves: 1,
            }),
            ..Default::default()
        };
        let mut game = record(
            GameKind::Loa,
            &start,
            &refs(&loa_moves(2)),
            1,
            Termination::Adjudication,
            GameResult::WhiteWins,
        );
        // Black moved first, seeing itself 7 down; White 7 up.
        game.moves[0].score = Some("cp -700".into());
        game.moves[1].score = Some("cp 700".into());
        assert_eq!(check(&game, &start, &s, searchers()), Ok(()));
        let random = Side::default();
        for sides in [[random, searchers()[1]], [searchers()[0], random]] {
            assert!(matches!(
                check(&game, &start, &s, sides),
                Err(Rejection::Scores(_))
            ));
        }
    }

    #[test]
    fn the_clock_left_after_each_move_runs_down_each_sides_own() {
        let start = Loa::start().to_string();
        let mut r = record(
            GameKind::Loa,
            &start,
            &refs(&loa_moves(4)),
            300,
            Termination::MaxPlies,
            GameResult::Draw,
        );
        r.time_control = "10+0.1".into();
        // Black moves first: 10 s - 0.3 s + 0.1 s each move, each side its own clock.
        assert_eq!(
            clocks_left(&r),
            [Some(9_800), Some(9_800), Some(9_600), Some(9_600)]
        );
        r.time_control = "white 1+0; black inf".into();
        assert_eq!(clocks_left(&r), [None, Some(700), None, Some(400)]);
        r.opening_plies = 2;
        assert_eq!(clocks_left(&r), [None, None, None, Some(700)]);
        r.time_control = "inf".into();
        assert!(clocks_left(&r).iter().all(Option::is_none));
    }

    #[test]
    fn a_record_is_its_tournaments_and_within_a_workers_bounds() {
        let start = Loa::start().to_string();
        let s = settings(GameKind::Loa, "inf");
        let good = record(
            GameKind::Loa,
            &start,
            &refs(&loa_moves(1)),
            1,
            Termination::Crash,
            GameResult::BlackWins,
        );
        assert_eq!(check(&good, &start, &s, searchers()), Ok(()));
        let mut other_rules = good.clone();
        other_rules.rules = "double-connection=draw".into();
        let mut opening = good.clone();
        opening.opening_plies = 1;
        let mut stderr = good.clone();
        stderr.white.stderr = vec!["x".into(); crate::MAX_STDERR_LINES + 1];
        let mut long_line = good.clone();
        long_line.white.stderr = vec!["x".repeat(crate::MAX_STDERR_LINE_CHARS + 1)];
        let mut transcript = good.clone();
        transcript.black.transcript = vec!["y".repeat(1000); 100];
        let mut long_pv = good.clone();
        long_pv.moves[0].pv = vec!["b1-b3".into(); crate::MAX_PV_MOVES + 1];
        let mut wide_pv = good.clone();
        wide_pv.moves[0].pv = vec!["b".repeat(crate::MAX_PV_MOVE_CHARS + 1)];
        // Telemetry within the bounds is taken.
        let mut telemetry = good.clone();
        telemetry.moves[0].pv = vec!["b1-b3".into(); crate::MAX_PV_MOVES];
        (telemetry.moves[0].seldepth, telemetry.moves[0].nps) = (Some(9), Some(1_000_000));
        telemetry.moves[0].engine_ms = Some(0);
        assert_eq!(check(&telemetry, &start, &s, searchers()), Ok(()));
        for (what, r) in [
            ("a long principal variation", long_pv),
            ("a principal variation move", wide_pv),
            ("rules", other_rules),
            ("opening plies", opening),
            ("stderr lines", stderr),
            ("a stderr line", long_line),
            ("transcript", transcript),
        ] {
            assert!(
                matches!(
                    check(&r, &start, &s, searchers()),
                    Err(Rejection::Record(_))
                ),
                "{what}"
            );
        }
    }
}
