//! The coordinator: what to play next, who plays it, and what is known so far.
//!
//! - [`scheduler`]: the scheduling state machine, with no I/O: tournaments, their pairs,
//!   leases to workers, expiry, exactly-once results, SPRT stopping on the longest prefix
//!   of completed pairs. Driven by events and `tick(now)`.

#![deny(missing_docs)]

pub mod scheduler;
