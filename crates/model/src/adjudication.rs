//! Score adjudication: a game ended early when both engines agree on its outcome. Resign:
//! for `moves` moves of each side, every score (from White's view) is beyond `score` the
//! same way. Draw: from ply `after` on, for `moves` moves of each side, every score is
//! within `score` of 0. The referee applies the rules after each move; the coordinator
//! applies them again to the record's scores before it believes an adjudicated result.

use serde::{Deserialize, Serialize};
use tourney_rules::Color;

/// A score beyond this many centi-units means a won (or lost) game: `win`/`loss` scores
/// count as this minus the plies to the end.
pub const DECISIVE: i32 = 100_000;

/// Resign when both engines see one side winning by at least `score`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResignRule {
    /// Centi-units.
    pub score: i32,
    /// Moves of each side.
    pub moves: u32,
}

/// Draw when both engines see the game within `score` of even.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrawRule {
    /// Centi-units.
    pub score: i32,
    /// Moves of each side.
    pub moves: u32,
    /// Not before this many plies.
    #[serde(default)]
    pub after: u32,
}

/// A tournament's score adjudication rules (none by default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScoreRules {
    /// Resign, if adjudicated.
    pub resign: Option<ResignRule>,
    /// Draw, if adjudicated.
    pub draw: Option<DrawRule>,
    /// Adjudicated games played on to their end, per 10,000: the record keeps the
    /// adjudicated result and says in its `meta` how the game really ended.
    pub play_on: u32,
}

/// How an adjudicated game that was played on ended against its adjudication.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayedOn {
    /// Not played on (or not adjudicated).
    #[default]
    No,
    /// It ended as adjudicated.
    Agreed,
    /// It ended otherwise: the adjudication was wrong.
    Overturned,
}

impl PlayedOn {
    /// The check of a game adjudicated `result` that ended `played_on` when played on.
    pub fn of(result: crate::GameResult, played_on: Option<crate::GameResult>) -> PlayedOn {
        match played_on {
            None => PlayedOn::No,
            Some(end) if end == result => PlayedOn::Agreed,
            Some(_) => PlayedOn::Overturned,
        }
    }
}

/// A score as the protocol writes it from the mover's view (`cp 35`, `win 7`, `loss 3`),
/// in centi-units; `None` for anything else.
pub fn centi(score: &str) -> Option<i32> {
    let (kind, n) = score.trim().split_once(' ')?;
    let n: i64 = n.trim().parse().ok()?;
    let decisive = |plies: i64| (i64::from(DECISIVE) - plies.clamp(0, 1000)) as i32;
    match kind {
        "cp" => Some(n.clamp(-i64::from(DECISIVE), i64::from(DECISIVE)) as i32),
        "win" => Some(decisive(n)),
        "loss" => Some(-decisive(n)),
        _ => None,
    }
}

impl ScoreRules {
    /// Whether any rule is set.
    pub fn any(&self) -> bool {
        self.resign.is_some() || self.draw.is_some()
    }

    /// Whether the game seeded `seed`, once adjudicated, is played on (a fixed share of
    /// games, chosen by their seeds).
    pub fn plays_on(&self, seed: u64) -> bool {
        let draw = crate::seed::game_seed(seed ^ 0xad7a_d1ca, 0) % 10_000;
        draw < u64::from(self.play_on)
    }

    /// The verdict on a game whose plies so far had `scores` (each from its mover's view,
    /// `None` where the mover gave none), the first ply played by `first`: the winner
    /// (`None`: a draw) and why, when a rule holds at the last ply.
    pub fn verdict(&self, first: Color, scores: &[Option<i32>]) -> Option<(Option<Color>, String)> {
        let plies = scores.len();
        let mover = |i: usize| {
            if i.is_multiple_of(2) {
                first
            } else {
                first.opponent()
            }
        };
        // The last `n` plies' scores from White's view, if all were given.
        let window = |n: usize| -> Option<Vec<i32>> {
            if n == 0 || plies < n {
                return None;
            }
            (plies - n..plies)
                .map(|i| scores[i].map(|s| if mover(i) == Color::White { s } else { -s }))
                .collect()
        };
        if let Some(r) = self.resign
            && let Some(w) = window(2 * r.moves as usize)
        {
            let winner = if w.iter().all(|&s| s >= r.score) {
                Some(Color::White)
            } else if w.iter().all(|&s| s <= -r.score) {
                Some(Color::Black)
            } else {
                None
            };
            if let Some(winner) = winner {
                return Some((
                    Some(winner),
                    format!(
                        "resign: both engines saw {winner} ahead by {} or more for {} moves each",
                        r.score, r.moves
                    ),
                ));
            }
        }
        if let Some(d) = self.draw
            && plies >= d.after as usize
            && let Some(w) = window(2 * d.moves as usize)
            && w.iter().all(|&s| s.abs() <= d.score)
        {
            return Some((
                None,
                format!(
                    "draw: both engines saw the game within {} of even for {} moves each",
                    d.score, d.moves
                ),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_read_as_the_protocol_writes_them() {
        assert_eq!(centi("cp 35"), Some(35));
        assert_eq!(centi("cp -1200"), Some(-1200));
        assert_eq!(centi("win 7"), Some(DECISIVE - 7));
        assert_eq!(centi("loss 3"), Some(-(DECISIVE - 3)));
        assert_eq!(centi("cp 99999999999"), Some(DECISIVE));
        for junk in ["", "cp", "mate 3", "cp x", "35"] {
            assert_eq!(centi(junk), None, "{junk:?}");
        }
    }

    #[test]
    fn resign_needs_both_sides_agreeing_for_the_moves_asked() {
        let rules = ScoreRules {
            resign: Some(ResignRule {
                score: 600,
                moves: 2,
            }),
            draw: None,
            play_on: 0,
        };
        // Black moves first (LOA); each score from its mover's view: Black sees itself
        // losing, White sees itself winning.
        let winning_white = [Some(-700), Some(650), Some(-900), Some(800)];
        let (winner, why) = rules.verdict(Color::Black, &winning_white).unwrap();
        assert_eq!(winner, Some(Color::White));
        assert!(
            why.starts_with("resign: both engines saw white ahead by 600"),
            "{why}"
        );
        assert_eq!(
            rules.verdict(Color::Black, &winning_white[..3]),
            None,
            "too few plies"
        );
        let mut doubt = winning_white;
        doubt[2] = Some(-500);
        assert_eq!(
            rules.verdict(Color::Black, &doubt),
            None,
            "one score not beyond"
        );
        doubt[2] = None;
        assert_eq!(
            rules.verdict(Color::Black, &doubt),
            None,
            "one score not given"
        );
        let black_wins = [Some(-700), Some(700), Some(-900), Some(800)];
        assert_eq!(
            rules.verdict(Color::White, &black_wins).unwrap().0,
            Some(Color::Black)
        );
    }

    #[test]
    fn draw_needs_the_game_even_after_its_ply() {
        let rules = ScoreRules {
            resign: None,
            draw: Some(DrawRule {
                score: 10,
                moves: 1,
                after: 4,
            }),
            play_on: 0,
        };
        let even = [Some(300), Some(-5), Some(8), Some(-10)];
        assert_eq!(
            rules.verdict(Color::White, &even[..3]),
            None,
            "before ply 4"
        );
        let (winner, why) = rules.verdict(Color::White, &even).unwrap();
        assert_eq!(winner, None);
        assert!(why.starts_with("draw:"), "{why}");
        assert_eq!(
            rules.verdict(Color::White, &[Some(0), Some(0), Some(0), Some(11)]),
            None
        );
        assert!(!ScoreRules::default().any());
    }
}
