//! The shared vocabulary of tourney: game records, why games end, time controls, and
//! tournament files.
//!
//! Pure data with serde, used by the referee, the store, the coordinator and the reports.

#![deny(missing_docs)]

mod record;
mod time_control;
pub mod tournament;
mod utc;

pub use record::{
    GameRecord, GameSummary, MetaValue, MoveCost, MoveRecord, PlayerName, PlayerRecord, Termination,
};
pub use time_control::TimeControl;
pub use utc::{Utc, unix_ms_now};
