//! The SPRT a tournament file's `sprt` table (or a pool's gate) describes, as
//! tourney-stats runs it.

use tourney_model::tournament::{SprtModel, SprtSettings};
use tourney_stats::{EloModel, Sprt};

/// The SPRT of a file's `sprt` table (an SPRT's, or each take's of a grouped test before
/// its correction).
pub(super) fn sprt_from(s: &SprtSettings) -> Sprt {
    Sprt {
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
        model: match s.model {
            SprtModel::Normalized => EloModel::Normalized,
            SprtModel::Logistic => EloModel::Logistic,
            SprtModel::BayesElo => EloModel::BayesElo,
        },
    }
}
