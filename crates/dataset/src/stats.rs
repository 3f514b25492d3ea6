//! What a data set holds: positions and games, the result balance, a score histogram and
//! the plies, for `tourney data stats`.

use std::collections::HashSet;
use std::fmt::Write as _;

use tourney_rules::Color;

use crate::extract::{DECIDED_SCORE, Skipped};
use crate::record::{MoverResult, Record};

/// The width of a histogram bucket, in centi-units.
pub const BUCKET_CP: i32 = 100;
/// Buckets each side of 0: scores beyond ±1,000 share the outermost ones.
const BUCKETS_A_SIDE: i32 = 10;

/// Counts over a data set's records.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Records read.
    pub positions: u64,
    /// Distinct games they come from.
    games: HashSet<u64>,
    /// By the result for the side to move: loss, draw, win.
    pub mover_results: [u64; 3],
    /// By the game's result: Black won, drawn, White won.
    pub game_results: [u64; 3],
    /// Positions whose score is a forced win or loss.
    pub decided: u64,
    /// Scores by bucket of [`BUCKET_CP`], from −1,000 (and below) to 1,000 (and above).
    pub histogram: [u64; 2 * BUCKETS_A_SIDE as usize],
    /// Sum of the plies (for the mean), and the largest.
    ply_sum: u64,
    /// The largest ply.
    pub max_ply: u16,
}

impl Stats {
    /// Counts `record`.
    pub fn add(&mut self, record: &Record) {
        self.positions += 1;
        self.games.insert(record.game_id);
        self.mover_results[record.result as usize] += 1;
        let white_result = match (record.result, record.turn) {
            (MoverResult::Draw, _) => 1,
            (MoverResult::Win, Color::White) | (MoverResult::Loss, Color::Black) => 2,
            _ => 0,
        };
        self.game_results[white_result] += 1;
        if record.score.unsigned_abs() >= DECIDED_SCORE as u16 {
            self.decided += 1;
        } else {
            let bucket = (i32::from(record.score).div_euclid(BUCKET_CP))
                .clamp(-BUCKETS_A_SIDE, BUCKETS_A_SIDE - 1)
                + BUCKETS_A_SIDE;
            self.histogram[bucket as usize] += 1;
        }
        self.ply_sum += u64::from(record.ply);
        self.max_ply = self.max_ply.max(record.ply);
    }

    /// Distinct games.
    pub fn games(&self) -> u64 {
        self.games.len() as u64
    }

    /// The mean ply.
    pub fn mean_ply(&self) -> f64 {
        self.ply_sum as f64 / self.positions.max(1) as f64
    }

    /// As `tourney data stats` prints it, with what extraction skipped when known.
    pub fn render(&self, skipped: Option<&Skipped>) -> String {
        let mut out = String::new();
        let share = |n: u64| 100.0 * n as f64 / self.positions.max(1) as f64;
        let _ = writeln!(
            out,
            "positions  {} from {} games (mean ply {:.1}, largest {})",
            self.positions,
            self.games(),
            self.mean_ply(),
            self.max_ply
        );
        let [loss, draw, win] = self.mover_results;
        let _ = writeln!(
            out,
            "mover      won {win} ({:.1} %), drew {draw} ({:.1} %), lost {loss} ({:.1} %)",
            share(win),
            share(draw),
            share(loss)
        );
        let [black, drawn, white] = self.game_results;
        let _ = writeln!(
            out,
            "by colour  positions of games White won {white} ({:.1} %), drawn {drawn} ({:.1} %), Black won {black} ({:.1} %)",
            share(white),
            share(drawn),
            share(black)
        );
        if let Some(s) = skipped {
            let _ = writeln!(
                out,
                "skipped    {} duplicates, {} early plies, {} captures, {} decided scores, {} unscored, {} of forfeited games",
                s.duplicates, s.early, s.captures, s.decided, s.unscored, s.forfeits
            );
        }
        let _ = writeln!(out, "scores     (centi-units, for the side to move)");
        let most = self.histogram.iter().copied().max().unwrap_or(0).max(1);
        for (i, &n) in self.histogram.iter().enumerate() {
            let lo = (i as i32 - BUCKETS_A_SIDE) * BUCKET_CP;
            let label = match i {
                0 => format!("  < {:>5}", lo + BUCKET_CP),
                _ if i + 1 == self.histogram.len() => format!(" >= {lo:>5}"),
                _ => format!("{lo:>5}..{:<5}", lo + BUCKET_CP),
            };
            let bar = "#".repeat((40 * n).div_ceil(most) as usize);
            let _ = writeln!(out, "  {label:>12} {n:>10} {bar}");
        }
        if self.decided > 0 {
            let _ = writeln!(out, "  {:>12} {:>10}", "win/loss", self.decided);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Loa, Position};

    #[test]
    fn counts_balance_and_buckets() {
        let mut stats = Stats::default();
        let start = Loa::start(); // Black to move
        for (score, result, game) in [
            (-1500, MoverResult::Loss, 0),
            (-1, MoverResult::Loss, 0),
            (0, MoverResult::Draw, 1),
            (99, MoverResult::Win, 1),
            (5000, MoverResult::Win, 2),
            (DECIDED_SCORE, MoverResult::Win, 2),
        ] {
            stats.add(&Record::of(&start, result, score, 10, game));
        }
        assert_eq!(stats.positions, 6);
        assert_eq!(stats.games(), 3);
        assert_eq!(stats.mover_results, [2, 1, 3]);
        // Black to move: its losses are White's wins.
        assert_eq!(stats.game_results, [3, 1, 2]);
        assert_eq!(stats.decided, 1);
        let h = stats.histogram;
        assert_eq!((h[0], h[9], h[10], h[19]), (1, 1, 2, 1));
        assert_eq!(h.iter().sum::<u64>(), 5);
        let text = stats.render(Some(&Skipped {
            duplicates: 4,
            ..Skipped::default()
        }));
        assert!(text.contains("positions  6 from 3 games"), "{text}");
        assert!(text.contains("4 duplicates"), "{text}");
    }

    #[test]
    fn the_balance_by_colour_counts_positions_not_games() {
        // Two games, one won by each side, of three and one positions: the balance by
        // colour is over the four positions, and says so (it read "games … White won 3").
        let mut stats = Stats::default();
        let start = Loa::start(); // Black to move
        for (result, game) in [
            (MoverResult::Loss, 0),
            (MoverResult::Loss, 0),
            (MoverResult::Loss, 0),
            (MoverResult::Win, 1),
        ] {
            stats.add(&Record::of(&start, result, 0, 10, game));
        }
        let text = stats.render(None);
        assert!(text.contains("positions  4 from 2 games"), "{text}");
        assert!(
            text.contains("by colour  positions of games White won 3 (75.0 %), drawn 0"),
            "{text}"
        );
        assert!(!text.lines().any(|l| l.starts_with("games")), "{text}");
    }
}
