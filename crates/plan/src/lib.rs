//! Planning a tournament before anything is played, pure and deterministic (no I/O):
//!
//! - [`check`]: what a tournament file names, checked against its game: every built-in
//!   player spec builds, an openings file holds positions of the game. Errors name the
//!   file, line and key. The CLI runs it before it starts anything, the coordinator before
//!   it stores a tournament.
//! - [`openings`]: opening suites of random plies, deduplicated, optionally kept only when
//!   a built-in player judges them balanced.
//! - [`knockout`] and [`swiss`]: the pairings of the formats that are made as results come
//!   in (a bracket's next match, a Swiss round from the standings), for the scheduler.

#![deny(missing_docs)]

pub mod check;
pub mod knockout;
pub mod openings;
pub mod swiss;

use serde::Serialize;

/// What one pairing of a format that pairs by results has played (a knockout match, a
/// Swiss board): its pairs handed out and completed, and each side's half-points.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Pairs handed out.
    pub handed: u64,
    /// Pairs completed.
    pub done: u64,
    /// Half-points of each side over the completed pairs.
    pub points: [u64; 2],
}

impl Tally {
    /// Counts a completed pair: `points` of its four half-points to side `side`, the rest
    /// to the other (a pair read back after a restart counts as handed out too).
    pub fn add(&mut self, side: usize, points: u64) {
        let points = points.min(4);
        self.done += 1;
        self.handed = self.handed.max(self.done);
        self.points[side & 1] += points;
        self.points[1 - (side & 1)] += 4 - points;
    }
}
