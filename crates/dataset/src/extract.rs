//! The positions a finished game yields for training: each position a player moved from,
//! with that player's score and the game's result for it, less what the filters skip.

use std::collections::HashSet;

use tourney_model::{GameRecord, Termination};
use tourney_rules::{Amazons, GameKind, Loa};

use crate::record::{MoverResult, Packing, Record};

/// The score stored for a forced win (and, negated, a forced loss) when decided scores
/// are kept.
pub const DECIDED_SCORE: i16 = 32_000;

/// Which positions of a game are kept (`[datagen]` in a tournament file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Filters {
    /// Positions before this many moves of the game (after its opening) are skipped.
    pub skip_plies: u32,
    /// LOA: positions whose played move captures are skipped (not quiet).
    pub skip_captures: bool,
    /// Positions whose score says a forced win or loss (`win N`, `loss N`) are skipped.
    pub skip_decided: bool,
}

/// What a game's positions were skipped for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Skipped {
    /// Before `skip_plies`.
    pub early: u64,
    /// Whose played move captured.
    pub captures: u64,
    /// Whose score was decided.
    pub decided: u64,
    /// Whose player gave no score.
    pub unscored: u64,
    /// Of games lost by a forfeit (illegal move, time, crash, silence): their results say
    /// nothing of the positions.
    pub forfeits: u64,
    /// Seen before (in this data set).
    pub duplicates: u64,
}

impl Skipped {
    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &Skipped) {
        self.early += other.early;
        self.captures += other.captures;
        self.decided += other.decided;
        self.unscored += other.unscored;
        self.forfeits += other.forfeits;
        self.duplicates += other.duplicates;
    }
}

/// A game's positions as records, and what was skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The records kept, in the game's order.
    pub records: Vec<Record>,
    /// What was skipped.
    pub skipped: Skipped,
}

/// A score as the protocol writes it (`cp 35`, `win 7`, `loss 4`): the centi-units, or
/// `None` with whether it is decided (`Some(true)`) or not a score (`Some(false)`).
fn score_of(text: &str) -> Result<i16, bool> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next().map(str::parse::<i64>)) {
        (Some("cp"), Some(Ok(cp))) => Ok(cp.clamp(-31_999, 31_999) as i16),
        (Some("win" | "loss"), Some(Ok(_))) => Err(true),
        _ => Err(false),
    }
}

/// The positions of `game` (already checked: it replays from its start) under `filters`,
/// with `game_id` (pair × 2 + game).
///
/// # Errors
/// The record does not replay (it was not checked).
pub fn extract(game: &GameRecord, game_id: u64, filters: &Filters) -> Result<Extracted, String> {
    match game.game {
        GameKind::Loa => extract_as::<Loa>(game, game_id, filters),
        GameKind::Amazons => extract_as::<Amazons>(game, game_id, filters),
    }
}

fn extract_as<P: Packing>(
    game: &GameRecord,
    game_id: u64,
    filters: &Filters,
) -> Result<Extracted, String> {
    let mut out = Extracted::default();
    let forfeit = matches!(
        game.termination,
        Termination::IllegalMove
            | Termination::TimeForfeit
            | Termination::Crash
            | Termination::Unresponsive
    );
    if forfeit {
        out.skipped.forfeits = game.moves.len() as u64;
        return Ok(out);
    }
    let mut position: P =
        (game.start.parse()).map_err(|e| format!("start '{}': {e}", game.start))?;
    for (ply, played) in game.moves.iter().enumerate() {
        let mv = (position.parse_move(&played.mv))
            .map_err(|e| format!("move {} '{}': {e}", ply + 1, played.mv))?;
        let score = played.score.as_deref().map_or(Err(false), score_of);
        if (ply as u64) < u64::from(filters.skip_plies) {
            out.skipped.early += 1;
        } else if filters.skip_captures && position.captures(mv) {
            out.skipped.captures += 1;
        } else {
            let kept = match score {
                Ok(cp) => Some(cp),
                Err(true) if filters.skip_decided => {
                    out.skipped.decided += 1;
                    None
                }
                Err(true) => Some(match played.score.as_deref() {
                    Some(s) if s.starts_with("win") => DECIDED_SCORE,
                    _ => -DECIDED_SCORE,
                }),
                Err(false) => {
                    out.skipped.unscored += 1;
                    None
                }
            };
            if let Some(score) = kept {
                let result = MoverResult::of_half_points(game.result.half_points(position.turn()))
                    .expect("half-points are 0, 1 or 2");
                let ply = u16::try_from(ply).unwrap_or(u16::MAX);
                out.records
                    .push(Record::of(&position, result, score, ply, game_id));
            }
        }
        position.play_unchecked(mv);
    }
    Ok(out)
}

/// The positions a data set holds already, by [`Record::key`], to skip duplicates.
#[derive(Debug, Default)]
pub struct Seen {
    keys: HashSet<u64>,
}

impl Seen {
    /// Whether `record`'s position is new (and now seen).
    pub fn insert(&mut self, record: &Record) -> bool {
        self.keys.insert(record.key())
    }

    /// Positions seen.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keeps the records of `extracted` not seen before, counting the others as duplicates.
    pub fn keep_new(&mut self, extracted: &mut Extracted) {
        let before = extracted.records.len();
        extracted.records.retain(|r| self.keys.insert(r.key()));
        extracted.skipped.duplicates += (before - extracted.records.len()) as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::{GameResult, MoveRecord};
    use tourney_rules::{Color, Position};

    /// A game of LOA from the start along the first legal moves that do not end it,
    /// preferring captures every third ply; the scores given by `score(ply)`.
    fn loa_game(plies: usize, score: impl Fn(usize) -> Option<String>) -> GameRecord {
        let mut position = Loa::start();
        let mut moves = Vec::new();
        for ply in 0..plies {
            let legal = position.legal_moves();
            let captures: Vec<_> = legal.iter().filter(|&&m| position.captures(m)).collect();
            let mv = match (ply % 3, captures.first()) {
                (2, Some(&&c)) => c,
                _ => legal[ply % legal.len()],
            };
            moves.push(MoveRecord {
                mv: mv.to_string(),
                score: score(ply),
                ..MoveRecord::default()
            });
            position.play_unchecked(mv);
        }
        serde_json::from_value(serde_json::json!({
            "game": "loa",
            "start": Loa::start().to_string(),
            "time_control": "nodes=1",
            "white": {"name": "a", "spec": "ab"},
            "black": {"name": "b", "spec": "ab"},
            "moves": moves,
            "result": "0-1",
            "termination": "connection",
        }))
        .unwrap()
    }

    #[test]
    fn every_scored_position_is_kept_with_the_result_for_its_mover() {
        let game = loa_game(12, |ply| Some(format!("cp {}", ply as i32 * 10 - 50)));
        let out = extract(&game, 7, &Filters::default()).unwrap();
        assert_eq!(out.records.len(), 12);
        assert_eq!(out.skipped, Skipped::default());
        let mut position = Loa::start();
        for (ply, (record, played)) in out.records.iter().zip(&game.moves).enumerate() {
            assert_eq!(record.position::<Loa>().unwrap(), position);
            assert_eq!(usize::from(record.ply), ply);
            assert_eq!(i32::from(record.score), ply as i32 * 10 - 50);
            assert_eq!(record.game_id, 7);
            // Black won: Black's positions are wins, White's losses.
            let expected = match position.turn() {
                Color::Black => MoverResult::Win,
                Color::White => MoverResult::Loss,
            };
            assert_eq!(record.result, expected, "ply {ply}");
            position = position
                .play(position.parse_move(&played.mv).unwrap())
                .unwrap();
        }
    }

    #[test]
    fn filters_skip_early_plies_captures_decided_and_unscored_positions() {
        let game = loa_game(30, |ply| match ply % 5 {
            4 => Some(format!("win {ply}")),
            3 => None,
            _ => Some("cp 1".into()),
        });
        let filters = Filters {
            skip_plies: 6,
            skip_captures: true,
            skip_decided: true,
        };
        let out = extract(&game, 0, &filters).unwrap();
        let s = out.skipped;
        assert_eq!(s.early, 6);
        assert!(s.captures > 0, "the walk captures");
        assert!(s.decided > 0 && s.unscored > 0);
        assert_eq!(
            out.records.len() as u64 + s.early + s.captures + s.decided + s.unscored,
            30
        );
        let mut position = Loa::start();
        for played in &game.moves {
            let mv = position.parse_move(&played.mv).unwrap();
            let kept = out
                .records
                .iter()
                .any(|r| r.position::<Loa>() == Ok(position));
            if kept {
                assert!(!position.captures(mv), "a capture kept: {position} {mv}");
            }
            position.play_unchecked(mv);
        }
        assert!(out.records.iter().all(|r| r.ply >= 6 && r.score == 1));
        // Kept, a decided score is stored as ±32,000.
        let kept = extract(&game, 0, &Filters::default()).unwrap();
        assert!(kept.records.iter().any(|r| r.score == DECIDED_SCORE));
    }

    #[test]
    fn forfeited_games_and_duplicates_are_skipped() {
        let mut game = loa_game(8, |_| Some("cp 3".into()));
        game.termination = Termination::TimeForfeit;
        game.result = GameResult::WhiteWins;
        let out = extract(&game, 0, &Filters::default()).unwrap();
        assert!(out.records.is_empty());
        assert_eq!(out.skipped.forfeits, 8);

        game.termination = Termination::Adjudication;
        let mut seen = Seen::default();
        let mut first = extract(&game, 0, &Filters::default()).unwrap();
        seen.keep_new(&mut first);
        assert_eq!(first.records.len(), 8);
        let mut again = extract(&game, 2, &Filters::default()).unwrap();
        seen.keep_new(&mut again);
        assert!(again.records.is_empty());
        assert_eq!((again.skipped.duplicates, seen.len()), (8, 8));
    }

    #[test]
    fn a_record_that_does_not_replay_is_an_error_naming_the_move() {
        let mut game = loa_game(4, |_| None);
        game.moves[2].mv = "a1-a1".into();
        let err = extract(&game, 0, &Filters::default()).unwrap_err();
        assert!(err.starts_with("move 3 'a1-a1'"), "{err}");
    }
}
