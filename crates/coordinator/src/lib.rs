//! The coordinator: what to play next, who plays it, and what is known so far.
//!
//! The domain, with no network:
//! - [`scheduler`]: the scheduling state machine, with no I/O: tournaments, their pairs,
//!   leases to workers, expiry, exactly-once results, SPRT stopping on the longest prefix
//!   of completed pairs. Driven by events and `tick(now)`.
//! - `types`: the coordinator's types ([`Settings`], [`CoordinatorError`], [`Reported`],
//!   [`ExportFilter`], ...), shared by its jobs and importing none of them.
//! - `state`: the [`Coordinator`]: scheduler, tournaments and workers behind one lock,
//!   beside the store; opened by `open` (what a restart reads back). Its work is split by
//!   job into `intake` (submit, cancel, pause, resume), `leasing` (leases, heartbeats,
//!   expiry), `registration` (a worker registered in one call), `reporting` (a worker's
//!   report taken whole), `commit` (the group commit that makes every acknowledged result
//!   durable), `views` (status, reports, exports), `tuning` (SPSA runs), `datagen` (data
//!   generation runs' positions), `versions` (engine versions and the timeline) and
//!   `history` (what a restart reads of a tournament's pairs).
//! - `datasets`: data generation runs' data files beside the store, their summaries, and
//!   their rebuilding from the stored games.
//! - [`fleet`]: the live worker list, throughput and recent games; [`workers`]: each
//!   worker host's results in a tournament, the homogeneity test and suspects.
//! - [`details`]: how a report's numbers were made (settings, engines, times).
//! - [`metrics`]: the Prometheus metrics it exports.
//! - [`clock`]: the time the coordinator goes by, real or (in tests) moved by hand.
//!
//! The adapters, in [`api`]: the gRPC services and their token checks, the live web
//! dashboard and its JSON API, and the server that serves it all on one port with health
//! checking, reflection, `/metrics` and optional TLS.

#![deny(missing_docs)]

pub mod accounts;
pub mod api;
pub mod clock;
pub mod fleet;
pub mod metrics;
pub mod pool_metrics;
pub mod scheduler;
pub mod tournaments;

mod links;
mod notify;
mod open;
mod pair_map;
mod state;
mod ticket;
mod types;
mod views;

#[cfg(test)]
mod tests;

pub use fleet::checks::{MAX_CHECKS_PER_VERSION, MAX_REASON_BYTES};
pub use fleet::machines::{BENCHES_SHOWN, HostBench, MAX_BLOCKED, Machine};
pub use fleet::registration::{Registered, Registration, Welcome};
pub use state::Coordinator;
pub use tournaments::commit::REFUSALS_TO_BAR;
pub use tournaments::reporting::{Failure, Report, ReportedResult};
pub use tournaments::versions::{MAX_VERSIONS, Timeline, TimelineEntry};
pub use types::{
    CoordinatorError, EngineCheck, ExportFilter, Finished, Origin, Reported, Settings, Status,
    Unplayable, VersionCheck,
};
pub use views::downloads::{Download, GamesFormat, record_of_export_line};
pub use views::search::{MAX_PAGE, Search};
