//! The coordinator: what to play next, who plays it, and what is known so far.
//!
//! - [`scheduler`]: the scheduling state machine, with no I/O: tournaments, their pairs,
//!   leases to workers, expiry, exactly-once results, SPRT stopping on the longest prefix
//!   of completed pairs. Driven by events and `tick(now)`.
//! - [`state`]: the [`Coordinator`]: scheduler, tournaments and workers behind one lock,
//!   beside the store; its work is split by job into `intake` (submit, cancel, pause,
//!   resume), `leasing` (leases, heartbeats, expiry), `commit` (the group commit that makes
//!   every acknowledged result durable) and `views` (status, reports, exports, metrics).
//! - [`service`]: the gRPC adapters (`tourney.v1` Worker and Admin) and token checks.
//! - [`fleet`]: workers, throughput and recent games, as the dashboard shows them.
//! - [`details`]: how a report's numbers were made (settings, engines, times).
//! - [`metrics`]: the Prometheus metrics it exports.
//! - [`clock`]: the time the coordinator goes by, real or (in tests) moved by hand.
//! - [`dashboard`]: the live web dashboard and its JSON API, served beside `/metrics`.
//! - [`server`]: serving it all, with health checking, reflection, `/metrics` and optional
//!   TLS.

#![deny(missing_docs)]

pub mod auth;
pub mod clock;
pub mod dashboard;
pub mod details;
pub mod fleet;
pub mod metrics;
pub mod scheduler;
pub mod server;
pub mod service;
pub mod state;
mod ticket;
mod tuning;

mod commit;
mod history;
mod intake;
mod leasing;
mod pair_map;
mod versions;
mod views;
pub mod workers;

#[cfg(test)]
mod tests;

pub use commit::Reported;
pub use state::{Coordinator, Settings};
pub use versions::{MAX_VERSIONS, Timeline, TimelineEntry};
pub use views::ExportFilter;
