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
