//! Playing games: the referee, the engine protocol, and the drivers of both kinds of
//! player (built-in in-process, outside engines as processes).
//!
//! - [`protocol`]: the engine protocol as plain data (format and parse, no I/O), and
//!   [`dialect`]: the protocols outside programs speak besides it, as translations.
//! - [`Contestant`]: one side of a game; [`BuiltIn`] and [`ExternalEngine`] implement it.
//! - [`referee::play`]: one game under a time control or per-move limits, with clocks
//!   measured by the referee and adjudication options, giving a complete
//!   [`GameRecord`](tourney_model::GameRecord).
//! - [`engine_server::serve`]: a built-in player served over the protocol (`tourney engine`);
//!   [`turn_server::serve`] in the turn-by-turn shapes (CodinGame, GTP).
//! - [`check::check_engine`]: an outside engine put through the exchanges a tournament
//!   needs (`tourney check-engine`).
//! - [`confine`]: what an outside engine's process may see and use.
//! - [`build_run`]: an engine's build from source, confined like an engine.

#![deny(missing_docs)]

pub mod build_run;
pub mod confine;
mod contestant;
pub mod dialect;
pub mod engine_server;
mod external;
pub mod protocol;
pub mod referee;
pub mod turn_server;

pub use contestant::{BuiltIn, Contestant, Failure, Reply, Unfit, limits_for};
pub use external::{EngineConfig, ExternalEngine, check, split_command};
pub use referee::{
    Adjudicate, RefereeError, RulesError, Seat, Setup, SideLimits, pair_seats, play, play_until,
};
