//! Tests of the statistics against the oracle (fishtest, cutechess, BayesElo, Ordo outputs in
//! `tests/data/`), property tests, and the SPRT simulation.

mod oracle;
mod ratings;
mod vectors;
