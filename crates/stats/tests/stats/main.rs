//! Tests of the statistics against the oracle (fishtest, cutechess, BayesElo, Ordo outputs in
//! `tests/data/`), property tests, and the SPRT simulation.

mod edges;
mod oracle;
mod properties;
mod ratings;
mod simulation;
mod takes;
mod vectors;
