//! The coordinator: what to play next, who plays it, and what is known so far.
//!
//! - [`scheduler`]: the scheduling state machine, with no I/O: tournaments, their pairs,
//!   leases to workers, expiry, exactly-once results, SPRT stopping on the longest prefix
//!   of completed pairs. Driven by events and `tick(now)`.
//! - [`state`]: the [`Coordinator`]: scheduler, store and workers behind one lock, with a
//!   group commit that makes every acknowledged result durable.
//! - [`service`]: the gRPC adapters (`tourney.v1` Worker and Admin) and token checks.
//! - [`metrics`]: the Prometheus metrics it exports.
//! - [`server`]: serving it all, with health checking, reflection, `/metrics` and optional
//!   TLS.

#![deny(missing_docs)]

pub mod metrics;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod state;

pub use state::{Coordinator, Settings};
