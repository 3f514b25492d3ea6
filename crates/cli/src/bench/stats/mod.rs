//! Benchmarks of the statistics' designs: grouped tests' takes and rating pools, simulated.

pub(super) mod pool;
pub(super) mod takes;
