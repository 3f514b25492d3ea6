//! What can be wrong with the statistics' input.

use tourney_model::tournament::MAX_TAKES;

/// Input the statistics cannot use: counts that do not parse, an SPRT that is not one,
/// results that are missing, a PGN file that does not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StatsError {
    /// Count text with the wrong number of fields.
    #[error("{what} needs {expected} comma-separated counts, found {found} in '{text}'")]
    CountFields {
        /// The expected shape, `W,D,L` or `LL,LD,D,WD,WW`.
        what: &'static str,
        /// Counts expected.
        expected: usize,
        /// Counts found.
        found: usize,
        /// The text given.
        text: String,
    },
    /// A count that is not a whole number.
    #[error("{what} count {index} is not a whole number: '{text}'")]
    Count {
        /// The expected shape.
        what: &'static str,
        /// Its position, from 1.
        index: usize,
        /// The text given.
        text: String,
    },
    /// An Elo model name that is not one.
    #[error("unknown Elo model '{0}': expected normalized, logistic or bayeselo")]
    UnknownModel(String),
    /// An SPRT preset name that is not one.
    #[error("unknown SPRT preset '{0}': expected stc, ltc or nonreg")]
    UnknownPreset(String),
    /// An error rate outside (0, 0.5).
    #[error("{name} must be between 0 and 0.5, found {value}")]
    ErrorRate {
        /// `alpha` or `beta`.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// Hypotheses in the wrong order.
    #[error("elo0 ({elo0}) must be below elo1 ({elo1})")]
    Hypotheses {
        /// Elo under H0.
        elo0: f64,
        /// Elo under H1.
        elo1: f64,
    },
    /// A bound the Elo model cannot test (the normalized model past its domain).
    #[error("{name}: {message}")]
    Domain {
        /// `elo0` or `elo1`.
        name: &'static str,
        /// What is wrong, naming the largest bound supported.
        message: String,
    },
    /// A grouped test of no takes, or of too many.
    #[error("a grouped test has 1 to {max} takes, found {0}", max = MAX_TAKES)]
    Takes(usize),
    /// The BayesElo model without the W/D/L counts it needs for its draw rate.
    #[error("the BayesElo model needs W/D/L counts")]
    NeedsWdl,
    /// Nothing to test.
    #[error("no results to test")]
    NoResults,
    /// A PGN file that does not read.
    #[error("line {line}: {message}")]
    Pgn {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}
