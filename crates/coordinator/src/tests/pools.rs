//! Rating pools: versions joining as the pool runs and its gates, and its ratings on
//! `/metrics`.

mod members;
mod ratings;
