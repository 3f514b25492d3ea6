//! Benchmarks of playing games: the rules, search and self-play speed, outside engines
//! through the protocol, clocks, CPU affinity, data generation, and validating a patch.

pub(super) mod affinity;
pub(super) mod datagen;
pub(super) mod outside;
pub(super) mod rules;
pub(super) mod search;
pub(super) mod selfplay;
pub(super) mod time;
pub(super) mod validate;
