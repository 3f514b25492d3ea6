//! The rules of Lines of Action and Amazons, exact and fast.
//!
//! This crate owns the game rules and nothing else: no I/O, no async runtime, no logging.
//! Everything here is deterministic.
//!
//! - [`Position`] is the game-agnostic interface used by players, the referee and workers.
//!   [`Loa`] and [`Amazons`] implement it on bitboards (`u64` for the 8×8 LOA board, `u128`
//!   plus per-line occupancy words for the 10×10 Amazons board) with incremental Zobrist
//!   hashing. A position is a small `Copy` value that carries no history.
//! - [`Game`] wraps a position with its history: the move list, threefold repetition and
//!   the final [`Outcome`].
//! - [`perft`] counts move sequences (with bulk counting at the last ply);
//!   [`random_playout`] plays uniformly random games.
//! - Square, move and position-string notation follow the project's rules specification;
//!   parsing errors say what is wrong and at which column.
//!
//! ```
//! use tourney_rules::{Loa, Position, perft};
//!
//! let start = Loa::start();
//! assert_eq!(start.to_string(), "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b");
//! assert_eq!(perft(&start, 2), 1_244);
//! let after = start.play(start.parse_move("b1-b3").unwrap()).unwrap();
//! assert_eq!(after.turn(), tourney_rules::Color::White);
//! ```
#![deny(missing_docs)]

pub mod amazons;
mod board_text;
mod error;
mod game;
pub mod loa;
mod perft;
mod playout;
mod position;
mod square;
mod zobrist;

pub use amazons::Amazons;
pub use error::{IllegalMoveError, MoveError, ParseError};
pub use game::Game;
pub use loa::Loa;
pub use perft::{perft, perft_divide};
pub use playout::random_playout;
pub use position::{Color, EndReason, GameKind, Outcome, Position};
pub use square::Square;
