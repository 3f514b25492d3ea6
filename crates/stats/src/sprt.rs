//! Sequential probability ratio tests: fishtest's generalized SPRT (logistic, normalized and
//! BayesElo bounds) and cutechess-cli's SPRT for comparison.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

use crate::StatsError;
use crate::counts::{Pentanomial, Trinomial, regularize};
use crate::elo::{
    NELO_PER_T, bayeselo_probabilities, bayeselo_scale, bayeselo_to_elo, draw_elo, logistic_score,
};
use crate::mle::{llr, mle_expected, mle_t_value};
use tourney_model::tournament::{MAX_NORMALIZED_ELO, beyond_normalized};

/// The Elo scale of the bounds `elo0`, `elo1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum EloModel {
    /// Normalized Elo (fishtest's default since 2022).
    #[default]
    Normalized,
    /// Logistic Elo.
    Logistic,
    /// BayesElo, converted to logistic Elo through the observed draw rate (fishtest).
    BayesElo,
}

impl FromStr for EloModel {
    type Err = StatsError;
    fn from_str(s: &str) -> Result<Self, StatsError> {
        match s {
            "normalized" => Ok(EloModel::Normalized),
            "logistic" => Ok(EloModel::Logistic),
            "bayeselo" => Ok(EloModel::BayesElo),
            _ => Err(StatsError::UnknownModel(s.to_string())),
        }
    }
}

impl fmt::Display for EloModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EloModel::Normalized => "normalized",
            EloModel::Logistic => "logistic",
            EloModel::BayesElo => "bayeselo",
        })
    }
}

/// What the test says so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Decision {
    /// Neither bound crossed.
    #[serde(rename = "continue")]
    Continue,
    /// LLR below the lower bound: the patch is not an improvement of at least `elo1`.
    #[serde(rename = "H0 accepted")]
    AcceptH0,
    /// LLR above the upper bound: the patch gains at least `elo0`.
    #[serde(rename = "H1 accepted")]
    AcceptH1,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Decision::Continue => "continue",
            Decision::AcceptH0 => "H0 accepted",
            Decision::AcceptH1 => "H1 accepted",
        })
    }
}

/// An SPRT: hypotheses `elo0` (H0) against `elo1` (H1) on the scale `model`, with error
/// rates `alpha` (false positive) and `beta` (false negative).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sprt {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// Probability of accepting H1 when H0 holds.
    pub alpha: f64,
    /// Probability of accepting H0 when H1 holds.
    pub beta: f64,
    /// Scale of `elo0` and `elo1`.
    pub model: EloModel,
}

/// Observed results for an SPRT: pair counts when games were played in pairs (preferred),
/// and W/D/L (needed for the BayesElo model's draw rate).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SprtInput {
    /// Game results, if known.
    pub trinomial: Option<Trinomial>,
    /// Game-pair results, if known.
    pub pentanomial: Option<Pentanomial>,
}

/// The outcome of evaluating an SPRT on some results.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtStatus {
    /// Log-likelihood ratio.
    pub llr: f64,
    /// Lower bound `ln(β/(1-α))`.
    pub lower_bound: f64,
    /// Upper bound `ln((1-β)/α)`.
    pub upper_bound: f64,
    /// Decision with fishtest's strict comparisons.
    pub decision: Decision,
}

impl Sprt {
    /// A named preset: `stc` nElo [0, 2], `ltc` nElo [0.5, 2.5], `nonreg` nElo [-1.75, 0.25],
    /// all with α = β = 0.05.
    ///
    /// # Errors
    /// [`StatsError::UnknownPreset`].
    pub fn preset(name: &str) -> Result<Sprt, StatsError> {
        let (elo0, elo1) = match name {
            "stc" => (0.0, 2.0),
            "ltc" => (0.5, 2.5),
            "nonreg" => (-1.75, 0.25),
            _ => return Err(StatsError::UnknownPreset(name.to_string())),
        };
        Ok(Sprt {
            elo0,
            elo1,
            alpha: 0.05,
            beta: 0.05,
            model: EloModel::Normalized,
        })
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// An error rate outside (0, 0.5), or `elo0` not below `elo1`.
    pub fn validate(&self) -> Result<(), StatsError> {
        for (name, value) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(value > 0.0 && value < 0.5) {
                return Err(StatsError::ErrorRate { name, value });
            }
        }
        if self.elo0.is_nan() || self.elo1.is_nan() || self.elo0 >= self.elo1 {
            return Err(StatsError::Hypotheses {
                elo0: self.elo0,
                elo1: self.elo1,
            });
        }
        if self.model == EloModel::Normalized {
            for (name, value) in [("elo0", self.elo0), ("elo1", self.elo1)] {
                if value.abs() > MAX_NORMALIZED_ELO {
                    let message = beyond_normalized(value);
                    return Err(StatsError::Domain { name, message });
                }
            }
        }
        Ok(())
    }

    /// Wald's bounds `(ln(β/(1-α)), ln((1-β)/α))`.
    pub fn bounds(&self) -> (f64, f64) {
        wald_bounds(self.alpha, self.beta)
    }

    /// The LLR of `input`: on the pair counts if present, else on W/D/L.
    ///
    /// # Errors
    /// If `input` is empty, the BayesElo model lacks W/D/L for its draw rate, or a bound is
    /// beyond the model's domain (as [`Sprt::validate`]): never a NaN.
    pub fn llr(&self, input: &SprtInput) -> Result<f64, StatsError> {
        self.validate()?;
        let (elo0, elo1) = match self.model {
            EloModel::BayesElo => {
                let t = input.trinomial.ok_or(StatsError::NeedsWdl)?;
                let drawelo = fishtest_draw_elo(t);
                (
                    bayeselo_to_elo(self.elo0, drawelo),
                    bayeselo_to_elo(self.elo1, drawelo),
                )
            }
            _ => (self.elo0, self.elo1),
        };
        let normalized = self.model == EloModel::Normalized;
        match (input.pentanomial, input.trinomial) {
            (Some(p), _) => Ok(gsprt(&p.bins_f64(), elo0, elo1, normalized)),
            (None, Some(t)) => Ok(gsprt(&t.bins(), elo0, elo1, normalized)),
            (None, None) => Err(StatsError::NoResults),
        }
    }

    /// The LLR, bounds and decision for `input`.
    ///
    /// # Errors
    /// As [`Sprt::llr`].
    pub fn status(&self, input: &SprtInput) -> Result<SprtStatus, StatsError> {
        let llr = self.llr(input)?;
        let (lower_bound, upper_bound) = self.bounds();
        Ok(SprtStatus {
            llr,
            lower_bound,
            upper_bound,
            decision: decide(llr, lower_bound, upper_bound),
        })
    }
}

/// Pair results counted by a sequential test, added in pair order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SprtCounts {
    /// Pairs counted.
    pub pairs: u64,
    /// Pair counts by the tested player's points.
    pub pentanomial: Pentanomial,
    /// Game counts from the tested player's side.
    pub trinomial: Trinomial,
}

impl SprtCounts {
    /// Counts one pair: the tested player's half-points (0, 1 or 2) in each of its games.
    pub fn add(&mut self, half_points: [u8; 2]) {
        self.pairs += 1;
        let points = half_points
            .iter()
            .map(|&h| usize::from(h.min(2)))
            .sum::<usize>();
        self.pentanomial.bins[points] += 1;
        for h in half_points {
            match h {
                2.. => self.trinomial.wins += 1,
                1 => self.trinomial.draws += 1,
                0 => self.trinomial.losses += 1,
            }
        }
    }

    /// The test's input: both the pair and the game counts.
    pub fn input(&self) -> SprtInput {
        SprtInput {
            pentanomial: Some(self.pentanomial),
            trinomial: Some(self.trinomial),
        }
    }
}

impl Sprt {
    /// Adds pairs from `pairs` (in pair order) to `counts` until the test decides, as a
    /// sequential test must: it stops at its first decision, and pairs after it are not
    /// counted. The status after the last pair counted, `None` if there was none; `on_pair`
    /// sees the counts and status after each pair.
    ///
    /// # Errors
    /// As [`Sprt::status`].
    pub fn run(
        &self,
        counts: &mut SprtCounts,
        pairs: impl IntoIterator<Item = [u8; 2]>,
        mut on_pair: impl FnMut(&SprtCounts, &SprtStatus),
    ) -> Result<Option<SprtStatus>, StatsError> {
        let mut last = None;
        for pair in pairs {
            counts.add(pair);
            let status = self.status(&counts.input())?;
            on_pair(counts, &status);
            last = Some(status);
            if status.decision != Decision::Continue {
                break;
            }
        }
        Ok(last)
    }
}

/// Wald's bounds `(ln(β/(1-α)), ln((1-β)/α))`.
pub fn wald_bounds(alpha: f64, beta: f64) -> (f64, f64) {
    ((beta / (1.0 - alpha)).ln(), ((1.0 - beta) / alpha).ln())
}

/// fishtest's decision: strictly above the upper bound accepts H1, strictly below the lower
/// bound accepts H0.
pub fn decide(llr: f64, lower: f64, upper: f64) -> Decision {
    if llr > upper {
        Decision::AcceptH1
    } else if llr < lower {
        Decision::AcceptH0
    } else {
        Decision::Continue
    }
}

/// The generalized LLR of counts in score order (3 or 5 bins) between two logistic or
/// normalized Elo values (fishtest `LLR_logistic` / `LLR_normalized`).
pub fn gsprt(bins: &[f64], elo0: f64, elo1: f64, normalized: bool) -> f64 {
    let regular: Vec<f64> = bins
        .iter()
        .map(|&b| if b == 0.0 { 1e-3 } else { b })
        .collect();
    let n: f64 = regular.iter().sum();
    let k = regular.len();
    let values: Vec<f64> = (0..k).map(|i| i as f64 / (k - 1) as f64).collect();
    let probs: Vec<f64> = regular.iter().map(|r| r / n).collect();
    let (p0, p1) = if normalized {
        let per_t = if k == 5 {
            std::f64::consts::SQRT_2 / NELO_PER_T
        } else {
            1.0 / NELO_PER_T
        };
        (
            mle_t_value(&values, &probs, 0.5, elo0 * per_t),
            mle_t_value(&values, &probs, 0.5, elo1 * per_t),
        )
    } else {
        (
            mle_expected(&values, &probs, logistic_score(elo0)),
            mle_expected(&values, &probs, logistic_score(elo1)),
        )
    };
    llr(n, &probs, &p0, &p1)
}

/// The BayesElo draw parameter of W/D/L counts after fishtest's regularisation.
pub fn fishtest_draw_elo(t: Trinomial) -> f64 {
    let r = regularize(t.bins());
    let n: f64 = r.iter().sum();
    draw_elo(r[2] / n, r[0] / n)
}

/// fishtest's pre-GSPRT statistic `LLRlegacy`: the BayesElo trinomial model with the draw
/// rate estimated from the (regularised) counts `[L, D, W]`, bounds taken as BayesElo.
pub fn legacy_llr(belo0: f64, belo1: f64, bins_ldw: [f64; 3]) -> f64 {
    let bins_ldw = regularize(bins_ldw);
    let n: f64 = bins_ldw.iter().sum();
    let drawelo = draw_elo(bins_ldw[2] / n, bins_ldw[0] / n);
    let [w0, d0, l0] = bayeselo_probabilities(belo0, drawelo);
    let [w1, d1, l1] = bayeselo_probabilities(belo1, drawelo);
    bins_ldw[0] * (l1 / l0).ln() + bins_ldw[1] * (d1 / d0).ln() + bins_ldw[2] * (w1 / w0).ln()
}

/// cutechess-cli's SPRT (`sprt.cpp`), for users comparing outputs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CutechessSprt {
    /// Log-likelihood ratio.
    pub llr: f64,
    /// Lower bound.
    pub lower_bound: f64,
    /// Upper bound.
    pub upper_bound: f64,
    /// Decision with cutechess's inclusive comparisons.
    pub decision: Decision,
    /// Draw parameter estimated from the counts (with ½ added to each).
    pub drawelo: f64,
    /// The slope dividing the bounds.
    pub scale: f64,
    /// `elo0 / scale`.
    pub bayeselo0: f64,
    /// `elo1 / scale`.
    pub bayeselo1: f64,
}

impl CutechessSprt {
    /// cutechess's SPRT of W/D/L counts for bounds `elo0`, `elo1` (taken as logistic Elo and
    /// divided by the BayesElo scale).
    pub fn new(t: Trinomial, elo0: f64, elo1: f64, alpha: f64, beta: f64) -> CutechessSprt {
        let [l, d, w] = t.bins().map(|b| b + 0.5);
        let n = w + d + l;
        let drawelo = draw_elo(w / n, l / n);
        let scale = bayeselo_scale(drawelo);
        let (b0, b1) = (elo0 / scale, elo1 / scale);
        let llr = legacy_like(w, d, l, b0, b1, drawelo);
        let (lower_bound, upper_bound) = wald_bounds(alpha, beta);
        let decision = if llr >= upper_bound {
            Decision::AcceptH1
        } else if llr <= lower_bound {
            Decision::AcceptH0
        } else {
            Decision::Continue
        };
        CutechessSprt {
            llr,
            lower_bound,
            upper_bound,
            decision,
            drawelo,
            scale,
            bayeselo0: b0,
            bayeselo1: b1,
        }
    }

    /// The line cutechess prints.
    pub fn printed(&self) -> String {
        let mut out = format!(
            "SPRT: llr {} ({:.1}%), lbound {}, ubound {}",
            c_general3(self.llr),
            self.llr / self.upper_bound * 100.0,
            c_general3(self.lower_bound),
            c_general3(self.upper_bound)
        );
        match self.decision {
            Decision::AcceptH0 => out.push_str(" - H0 was accepted"),
            Decision::AcceptH1 => out.push_str(" - H1 was accepted"),
            Decision::Continue => {}
        }
        out
    }
}

fn legacy_like(w: f64, d: f64, l: f64, b0: f64, b1: f64, drawelo: f64) -> f64 {
    let [w0, d0, l0] = bayeselo_probabilities(b0, drawelo);
    let [w1, d1, l1] = bayeselo_probabilities(b1, drawelo);
    w * (w1 / w0).ln() + l * (l1 / l0).ln() + d * (d1 / d0).ln()
}

/// printf `%.3g`.
pub(crate) fn c_general3(x: f64) -> String {
    if !x.is_finite() {
        return if x.is_nan() {
            "nan".into()
        } else if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if x == 0.0 {
        return "0".into();
    }
    let exponent = x.abs().log10().floor() as i32;
    // Round to 3 significant digits first: rounding can carry into the next decade.
    let rounded: f64 = format!("{x:.2e}").parse().unwrap_or(x);
    let exponent = if rounded != 0.0 {
        rounded.abs().log10().floor() as i32
    } else {
        exponent
    };
    if !(-4..3).contains(&exponent) {
        let s = format!("{rounded:.2e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
        let mantissa = mantissa.trim_end_matches('0').trim_end_matches('.');
        let exp: i32 = exp.parse().unwrap_or(0);
        format!(
            "{mantissa}e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    } else {
        let decimals = (2 - exponent).max(0) as usize;
        let s = format!("{rounded:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    }
}
