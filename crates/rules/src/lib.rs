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

mod adjudicate;
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

pub use adjudicate::Adjudicate;
pub use amazons::Amazons;
pub use error::{IllegalMoveError, MoveError, ParseError};
pub use game::Game;
pub use loa::Loa;
pub use perft::{perft, perft_divide};
pub use playout::random_playout;
pub use position::{Color, EndReason, GameKind, Outcome, Position};
pub use square::Square;

/// The one place where a [`GameKind`] becomes a position type: evaluates `$body` with the
/// type alias `$p` bound to [`Loa`] or [`Amazons`], so generic code runs for the game a
/// value names. An unknown game never gets here: it fails where its name is parsed.
///
/// ```
/// use tourney_rules::{GameKind, Position, with_position};
///
/// fn start(kind: GameKind) -> String {
///     with_position!(kind, P => P::start().to_string())
/// }
/// assert_eq!(start(GameKind::Amazons), "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w");
/// ```
#[macro_export]
macro_rules! with_position {
    ($game:expr, $p:ident => $body:expr) => {
        match $game {
            $crate::GameKind::Loa => {
                type $p = $crate::Loa;
                $body
            }
            $crate::GameKind::Amazons => {
                type $p = $crate::Amazons;
                $body
            }
        }
    };
}
