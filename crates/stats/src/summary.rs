//! Two-player summaries: score, Elo with its 95 % interval, LOS, draw ratio, normalized Elo.
//!
//! [`Summary`] follows fishtest (zero bins regularised to 1e-3, Elo clamped to ±1199.8,
//! nElo interval corrected for skewness and kurtosis); [`Cutechess`] and [`Plain`] give the
//! figures of cutechess-cli and of the textbook formulas (as fastchess prints them) for users
//! who compare outputs.

use serde::Serialize;

use crate::counts::{Pentanomial, Trinomial, regularize};
use crate::elo::{NELO_PER_T, elo_from_score, fishtest_elo};
use crate::normal::{Z95, phi};

/// Mean, variance, skewness and excess kurtosis of a distribution on `values`.
pub(crate) struct Moments {
    pub(crate) mean: f64,
    pub(crate) var: f64,
    pub(crate) skewness: f64,
    pub(crate) exkurt: f64,
}

pub(crate) fn moments(values: &[f64], probs: &[f64]) -> Moments {
    let mean: f64 = values.iter().zip(probs).map(|(a, p)| a * p).sum();
    let central = |k: i32| -> f64 {
        values
            .iter()
            .zip(probs)
            .map(|(a, p)| p * (a - mean).powi(k))
            .sum()
    };
    let var = central(2);
    let sd = var.sqrt();
    Moments {
        mean,
        var,
        skewness: central(3) / (sd * sd * sd),
        exkurt: central(4) / (var * var) - 3.0,
    }
}

/// The distribution of the per-game (trinomial) or per-pair-average (pentanomial) score:
/// values `i/(K-1)` and the empirical probabilities of the regularised counts.
fn empirical<const K: usize>(bins: [f64; K]) -> (f64, [f64; K], [f64; K]) {
    let r = regularize(bins);
    let n: f64 = r.iter().sum();
    let values = std::array::from_fn(|i| i as f64 / (K - 1) as f64);
    (n, values, r.map(|x| x / n))
}

/// fishtest's `t_conf`: the t-value `(μ-½)/σ` and the variance of its estimate.
fn t_conf(m: &Moments) -> (f64, f64) {
    let t = (m.mean - 0.5) / m.var.sqrt();
    let var_t = (1.0 - t * m.skewness + 0.25 * t * t * (m.exkurt + 2.0)).max(0.0);
    (t, var_t)
}

/// The two-player summary with fishtest's conventions; JSON field names are stable.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// Games played (twice the pairs for pentanomial input).
    pub games: u64,
    /// Wins of the tested player, if known (not from pair counts alone).
    pub wins: Option<u64>,
    /// Draws, if known.
    pub draws: Option<u64>,
    /// Losses, if known.
    pub losses: Option<u64>,
    /// Pair counts `[LL, LD, D, WD, WW]`, for pentanomial input.
    pub pentanomial: Option<[u64; 5]>,
    /// Mean score per game of the tested player.
    pub score: f64,
    /// Logistic Elo difference.
    pub elo: f64,
    /// Half-width of the 95 % interval (fishtest `elo95`).
    pub elo_error: f64,
    /// Lower end of the 95 % interval.
    pub elo_lower: f64,
    /// Upper end of the 95 % interval.
    pub elo_upper: f64,
    /// Normalized Elo.
    pub nelo: f64,
    /// Half-width of the 95 % interval of the normalized Elo.
    pub nelo_error: f64,
    /// Likelihood of superiority.
    pub los: f64,
    /// Draws per game (trinomial) or balanced pairs per pair (pentanomial).
    pub draw_ratio: f64,
    /// Pentanomial only: `(WD+WW) / (LL+LD)`.
    pub pairs_ratio: Option<f64>,
    /// Standard deviation of the score per game.
    pub stdev_per_game: f64,
}

impl Summary {
    /// The summary of W/D/L counts.
    pub fn trinomial(t: Trinomial) -> Summary {
        let (n, values, probs) = empirical(t.bins());
        let m = moments(&values, &probs);
        let se = m.var.sqrt() / n.sqrt();
        let (t_value, var_t) = t_conf(&m);
        let (lower, upper) = (
            fishtest_elo(m.mean - Z95 * se),
            fishtest_elo(m.mean + Z95 * se),
        );
        Summary {
            games: t.games(),
            wins: Some(t.wins),
            draws: Some(t.draws),
            losses: Some(t.losses),
            pentanomial: None,
            score: m.mean,
            elo: fishtest_elo(m.mean),
            elo_error: (upper - lower) / 2.0,
            elo_lower: lower,
            elo_upper: upper,
            nelo: NELO_PER_T * t_value,
            nelo_error: NELO_PER_T * Z95 * (var_t / n).sqrt(),
            los: phi((m.mean - 0.5) / se),
            draw_ratio: probs[1],
            pairs_ratio: None,
            stdev_per_game: m.var.sqrt(),
        }
    }

    /// The summary of game-pair counts.
    pub fn pentanomial(p: Pentanomial) -> Summary {
        let (n, values, probs) = empirical(p.bins_f64());
        let m = moments(&values, &probs);
        let se = m.var.sqrt() / n.sqrt();
        let (t_value, var_t) = t_conf(&m);
        let (lower, upper) = (
            fishtest_elo(m.mean - Z95 * se),
            fishtest_elo(m.mean + Z95 * se),
        );
        let nelo_scale = NELO_PER_T / std::f64::consts::SQRT_2;
        Summary {
            games: 2 * p.pairs(),
            wins: None,
            draws: None,
            losses: None,
            pentanomial: Some(p.bins),
            score: m.mean,
            elo: fishtest_elo(m.mean),
            elo_error: (upper - lower) / 2.0,
            elo_lower: lower,
            elo_upper: upper,
            nelo: nelo_scale * t_value,
            nelo_error: nelo_scale * Z95 * (var_t / n).sqrt(),
            los: phi((m.mean - 0.5) / se),
            draw_ratio: probs[2],
            pairs_ratio: Some(pairs_ratio(&p)),
            stdev_per_game: std::f64::consts::SQRT_2 * m.var.sqrt(),
        }
    }
}

/// `(WD+WW) / (LL+LD)` on the raw counts: +∞ with no losing pairs, NaN with neither.
fn pairs_ratio(p: &Pentanomial) -> f64 {
    (p.bins[3] + p.bins[4]) as f64 / (p.bins[0] + p.bins[1]) as f64
}

/// cutechess-cli's two-player figures (`elo.cpp`), no regularisation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cutechess {
    /// Elo difference.
    pub diff: f64,
    /// Half-width of the 95 % interval, with cutechess's approximate normal quantile.
    pub error_margin: f64,
    /// LOS in percent, from wins and losses only.
    pub los: f64,
    /// Draws per game.
    pub draw_ratio: f64,
    /// Points per game.
    pub point_ratio: f64,
}

impl Cutechess {
    /// cutechess's figures for W/D/L counts.
    pub fn new(t: Trinomial) -> Cutechess {
        let n = t.games() as f64;
        let (w, d, l) = (t.wins as f64 / n, t.draws as f64 / n, t.losses as f64 / n);
        let mu = w + d / 2.0;
        let stdev =
            (w * (1.0 - mu).powi(2) + l * mu * mu + d * (0.5 - mu).powi(2)).sqrt() / n.sqrt();
        let margin = (elo_from_score(mu + cutechess_phi_inv(0.975) * stdev)
            - elo_from_score(mu + cutechess_phi_inv(0.025) * stdev))
            / 2.0;
        let (wins, losses) = (t.wins as f64, t.losses as f64);
        Cutechess {
            diff: elo_from_score(mu),
            error_margin: margin,
            los: 100.0 * (0.5 + 0.5 * libm::erf((wins - losses) / (2.0 * (wins + losses)).sqrt())),
            draw_ratio: d,
            point_ratio: (2.0 * wins + t.draws as f64) / (2.0 * n),
        }
    }

    /// The line cutechess prints for a two-player match.
    pub fn printed(&self) -> String {
        format!(
            "Elo difference: {} +/- {}, LOS: {} %, DrawRatio: {} %",
            c_fixed1(self.diff),
            c_fixed1(self.error_margin),
            c_fixed1(self.los),
            c_fixed1(self.draw_ratio * 100.0)
        )
    }
}

/// printf `%.1f`, with C's spelling of non-finite values (and no `-0.0`).
fn c_fixed1(x: f64) -> String {
    if x == 0.0 {
        "0.0".into()
    } else if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        format!("{x:.1}")
    }
}

/// cutechess's normal quantile: `√2 · erfInv(2p-1)` with Winitzki's approximation.
pub(crate) fn cutechess_phi_inv(p: f64) -> f64 {
    // cutechess's own truncated π, kept for bit-exact margins.
    #[allow(clippy::approx_constant)]
    const PI: f64 = 3.141_592_653_589_7;
    let a = 8.0 * (PI - 3.0) / (3.0 * PI * (4.0 - PI));
    let x = 2.0 * p - 1.0;
    let y = (1.0 - x * x).ln();
    let z = 2.0 / (PI * a) + y / 2.0;
    let r = ((z * z - y / a).sqrt() - z).sqrt();
    std::f64::consts::SQRT_2 * if x < 0.0 { -r } else { r }
}

/// The textbook figures (fastchess): no regularisation, exact z, IEEE results at the edges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plain {
    /// Mean score per game.
    pub score: f64,
    /// Elo difference.
    pub elo: f64,
    /// Half-width of the 95 % interval.
    pub elo_error: f64,
    /// LOS.
    pub los: f64,
    /// Normalized Elo.
    pub nelo: f64,
    /// Half-width of its 95 % interval with σ held fixed (`z · NELO / √n`; NaN when σ = 0).
    pub nelo_error: f64,
    /// Draws per game, or balanced pairs per pair.
    pub draw_ratio: f64,
    /// Standard deviation of the score per game.
    pub stdev_per_game: f64,
}

impl Plain {
    /// Textbook figures for W/D/L counts.
    pub fn trinomial(t: Trinomial) -> Plain {
        let n = t.games() as f64;
        let probs = t.bins().map(|b| b / n);
        let m = moments(&[0.0, 0.5, 1.0], &probs);
        Plain::from_moments(&m, n, m.var.sqrt(), NELO_PER_T, probs[1])
    }

    /// Textbook figures for pair counts.
    pub fn pentanomial(p: Pentanomial) -> Plain {
        let n = p.pairs() as f64;
        let probs = p.bins_f64().map(|b| b / n);
        let m = moments(&[0.0, 0.25, 0.5, 0.75, 1.0], &probs);
        let scale = NELO_PER_T / std::f64::consts::SQRT_2;
        Plain::from_moments(
            &m,
            n,
            std::f64::consts::SQRT_2 * m.var.sqrt(),
            scale,
            probs[2],
        )
    }

    fn from_moments(
        m: &Moments,
        n: f64,
        stdev_per_game: f64,
        nelo_scale: f64,
        draws: f64,
    ) -> Plain {
        let sd = m.var.sqrt();
        let se = sd / n.sqrt();
        Plain {
            score: m.mean,
            elo: elo_from_score(m.mean),
            elo_error: (elo_from_score(m.mean + Z95 * se) - elo_from_score(m.mean - Z95 * se))
                / 2.0,
            los: phi((m.mean - 0.5) / se),
            nelo: nelo_scale * (m.mean - 0.5) / sd,
            nelo_error: nelo_scale
                * ((m.mean + Z95 * se - 0.5) / sd - (m.mean - Z95 * se - 0.5) / sd)
                / 2.0,
            draw_ratio: draws,
            stdev_per_game,
        }
    }
}
