//! Match statistics for engine testing: what a set of games says about strength.
//!
//! Pure functions on counts and game results: no I/O, no async runtime. Conventions follow
//! fishtest by default; cutechess-cli's and the textbook figures are available for users
//! who compare outputs.
//!
//! - [`Summary`]: score, Elo with its 95 % interval, LOS, draw ratio and normalized Elo from
//!   W/D/L ([`Trinomial`]) or game-pair ([`Pentanomial`]) counts.
//! - [`Sprt`]: fishtest's generalized SPRT with logistic, normalized or BayesElo bounds.
//! - [`takes`]: grouped tests of several takes of one idea against one base, with one
//!   family-wise error rate.
//! - [`BayesElo`] and [`Ordo`]: joint ratings of many players from a [`GameTable`].
//! - [`pool`]: a rating pool's anchored ratings and the rule that picks its next pair by
//!   information.
//!
//! Rendering (text, CSV, HTML with charts) lives in the `tourney-report` crate.
//!
//! ```
//! use tourney_stats::{Pentanomial, Sprt, SprtInput, Summary};
//!
//! let pairs = Pentanomial { bins: [10, 40, 100, 45, 12] };
//! let summary = Summary::pentanomial(pairs);
//! assert!(summary.elo > 0.0 && summary.elo_lower < 0.0);
//! let sprt = Sprt::preset("stc").unwrap();
//! let status = sprt.status(&SprtInput { pentanomial: Some(pairs), trinomial: None }).unwrap();
//! assert_eq!(status.decision.to_string(), "continue");
//! ```
#![deny(missing_docs)]

mod counts;
pub mod elo;
mod error;
mod games;
pub mod homogeneity;
mod mle;
pub mod normal;
pub mod pool;
mod ratings;
mod sprt;
mod summary;
pub mod takes;

pub use counts::{GameScore, Pentanomial, Trinomial};
pub use error::StatsError;
pub use games::{GameResult, GameTable};
pub use homogeneity::{Homogeneity, homogeneity};
pub use pool::{PoolRatings, PoolSettings};
pub use ratings::{BayesElo, Bound, ErrorMethod, Ordo, PlayerRating, RatingTable};
pub use sprt::{
    CutechessSprt, Decision, EloModel, Sprt, SprtCounts, SprtInput, SprtStatus, decide,
    fishtest_draw_elo, gsprt, legacy_llr, wald_bounds,
};
pub use summary::{Cutechess, Plain, Summary};
