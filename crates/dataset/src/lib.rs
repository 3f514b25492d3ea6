//! Self-play training data, pure and deterministic (no I/O beyond `std::io` streams):
//!
//! - [`record`]: the fixed-size position record (40 bytes: packed board, game and size,
//!   side to move, result and score from the mover's view, ply, game id), and how each
//!   game packs its boards.
//! - [`file`]: data files, a 16-byte header and records; reading names the record and
//!   the field that is wrong.
//! - [`extract`]: the positions a finished game yields under a datagen tournament's
//!   filters (opening plies, LOA captures, decided scores, duplicates).
//! - [`stats`]: counts, result balance and score histogram of a data set.
//!
//! The coordinator writes data files with it, `tourney data` reads them, and `tourney
//! tune texel` fits evaluations to them. The format is documented in docs/datagen.md.

#![deny(missing_docs)]

pub mod extract;
pub mod file;
pub mod record;
pub mod scores;
pub mod stats;

pub use extract::{Extracted, Filters, Skipped, extract};
pub use file::{FileError, HEADER_BYTES, header, read_records, write_header};
pub use record::{MoverResult, RECORD_BYTES, Record, RecordError};
pub use scores::check_scores;
pub use stats::Stats;
