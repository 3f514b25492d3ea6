//! A reported game checked against the rules of its game: it starts where its pair's
//! opening does, every move is legal, and the ending it claims is the one the rules (or
//! the tournament's settings) give. Endings an engine caused (a crash, a time forfeit, an
//! illegal move it sent, silence) are taken as reported, against the side that was to
//! move. Pure and cheap: it replays moves on the rules core.

use tourney_rules::{EndReason, Game, Position, with_position};

use crate::job::GameSettings;
use crate::record::{GameResult, GameSummary, Termination};

/// Why a reported game is not the game it says it is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The tournament's rule options do not parse (a bug: they were checked at submission).
    #[error("rules: {0}")]
    Rules(String),
}

impl Rejection {
    /// A short name for counting: `start`, `move`, `ending`, `rules`.
    pub fn kind(&self) -> &'static str {
        match self {
            Rejection::Start { .. } => "start",
            Rejection::Move { .. } => "move",
            Rejection::Ending { .. } => "ending",
            Rejection::Rules(_) => "rules",
        }
    }
}

/// Replays `game` from `opening` under `settings` and checks that it is what it says.
///
/// # Errors
/// The first [`Rejection`] found.
pub fn check(game: &GameSummary, opening: &str, settings: &GameSettings) -> Result<(), Rejection> {
    with_position!(settings.game, P => check_typed::<P>(game, opening, settings))
}

fn check_typed<P: Position>(
    record: &GameSummary,
    opening: &str,
    settings: &GameSettings,
) -> Result<(), Rejection> {
    if record.start != opening {
        return Err(Rejection::Start {
            expected: opening.to_string(),
            found: record.start.clone(),
        });
    }
    let start: P = opening.parse().map_err(|e| Rejection::Start {
        expected: opening.to_string(),
        found: format!("{opening} ({e})"),
    })?;
    let rules: P::Rules = settings
        .rules
        .parse()
        .map_err(|e: tourney_rules::ParseError| Rejection::Rules(e.to_string()))?;
    let mut game = Game::new(start, rules);
    for (i, m) in record.moves.iter().enumerate() {
        game.play_text(m.notation.as_str())
            .map_err(|e| Rejection::Move {
                ply: i + 1,
                message: e.to_string(),
            })?;
    }
    let ending = |actual: String| Rejection::Ending {
        claimed: record.termination.name(),
        result: record.result.as_str(),
        actual,
    };
    let over = game.outcome();
    let plies = record.moves.len();
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
        Termination::Adjudication if settings.adjudicate && record.result != GameResult::Draw => {
            Ok(())
        }
        Termination::Adjudication if settings.score_rules.any() => {
            // The engines' scores must call it at the last ply, with this result, and not
            // before.
            let scores: Vec<Option<i32>> = record.moves.iter().map(|m| m.score).collect();
            let first = start.turn();
            let verdict = settings.score_rules.verdict(first, &scores);
            let earlier =
                (1..plies).find(|&n| settings.score_rules.verdict(first, &scores[..n]).is_some());
            match (verdict, earlier) {
                (_, Some(n)) => Err(ending(format!("the scores called it after {n} plies"))),
                (Some((winner, _)), None) if GameResult::of_winner(winner) == record.result => {
                    Ok(())
                }
                (Some((winner, _)), None) => Err(ending(format!(
                    "the scores call it {}",
                    GameResult::of_winner(winner).as_str()
                ))),
                (None, None) => Err(ending("the scores do not call it".into())),
            }
        }
        Termination::Adjudication => Err(ending("the tournament does not adjudicate".into())),
        // An engine's failure loses for the side that was to move.
        Termination::IllegalMove
        | Termination::TimeForfeit
        | Termination::Crash
        | Termination::Unresponsive => {
            let loser = game.position().turn();
            if record.result.winner() == Some(loser.opponent()) {
                Ok(())
            } else {
                Err(ending(format!("{loser} was to move, so {loser} lost")))
            }
        }
    }
}
