//! Simulated groups and separate SPRTs on pairs of known true strength: the error rates
//! a grouped test keeps, and the pairs it takes against K separate SPRTs. Deterministic
//! for a seed (SplitMix64), pure.

use serde::Serialize;

use super::{Group, Takes, Verdict};
use crate::StatsError;
use crate::elo::{NELO_PER_T, logistic_score};
use crate::sprt::{Decision, Sprt, SprtCounts};

/// The draw ratio of each simulated game.
pub const DRAW_RATIO: f64 = 0.4;

/// SplitMix64: uniform numbers in [0, 1).
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next number.
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Pair-score probabilities (0 to 4 half-points of a pair) when each game is independent,
/// at logistic Elo `elo` with [`DRAW_RATIO`] draws.
fn pair_distribution(elo: f64) -> [f64; 5] {
    let s = logistic_score(elo);
    let game = [1.0 - s - DRAW_RATIO / 2.0, DRAW_RATIO, s - DRAW_RATIO / 2.0];
    let mut out = [0.0; 5];
    for (a, pa) in game.iter().enumerate() {
        for (b, pb) in game.iter().enumerate() {
            out[a + b] += pa * pb;
        }
    }
    out
}

/// The normalized Elo of a pair distribution.
pub fn nelo(p: &[f64; 5]) -> f64 {
    let mean: f64 = p.iter().enumerate().map(|(k, q)| q * k as f64 / 4.0).sum();
    let var: f64 = (p.iter().enumerate())
        .map(|(k, q)| q * (k as f64 / 4.0 - mean).powi(2))
        .sum();
    NELO_PER_T / std::f64::consts::SQRT_2 * (mean - 0.5) / var.sqrt()
}

/// The pair distribution whose normalized Elo is `target` (bisection on logistic Elo).
pub fn distribution_at(target: f64) -> [f64; 5] {
    let (mut lo, mut hi) = (-200.0, 200.0);
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if nelo(&pair_distribution(mid)) < target {
            lo = mid
        } else {
            hi = mid
        }
    }
    pair_distribution((lo + hi) / 2.0)
}

/// One pair drawn from `p`: the tested side's half-points in its two games, summing to
/// the drawn pair score.
pub fn draw_pair(p: &[f64; 5], rng: &mut Rng) -> [u8; 2] {
    let mut u = rng.next_f64();
    let points = p
        .iter()
        .position(|&q| {
            u -= q;
            u < 0.0
        })
        .unwrap_or(4) as u8;
    [points.min(2), points - points.min(2)]
}

/// What many simulated groups (or sets of separate SPRTs) did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcomes {
    /// Runs simulated.
    pub runs: u64,
    /// Runs in which each take was accepted.
    pub accepted: Vec<u64>,
    /// Runs in which some take was accepted.
    pub any_accepted: u64,
    /// Runs in which more than one take was accepted (never, for a group).
    pub several_accepted: u64,
    /// Pairs played, over all runs.
    pub pairs: u64,
}

impl Outcomes {
    fn new(takes: usize) -> Outcomes {
        Outcomes {
            runs: 0,
            accepted: vec![0; takes],
            any_accepted: 0,
            several_accepted: 0,
            pairs: 0,
        }
    }

    fn count(&mut self, accepted: &[usize], pairs: u64) {
        self.runs += 1;
        self.pairs += pairs;
        for &k in accepted {
            self.accepted[k] += 1;
        }
        self.any_accepted += u64::from(!accepted.is_empty());
        self.several_accepted += u64::from(accepted.len() > 1);
    }

    /// The fraction of runs in which take `k` was accepted.
    pub fn rate(&self, k: usize) -> f64 {
        self.accepted[k] as f64 / self.runs.max(1) as f64
    }

    /// The mean pairs a run played.
    pub fn mean_pairs(&self) -> f64 {
        self.pairs as f64 / self.runs.max(1) as f64
    }
}

/// `runs` groups of takes at true normalized Elo `truth` (one per take), pairs handed out
/// by [`Group::next_take`] in batches of `batch` (as leases are) and counted in order.
///
/// # Errors
/// Settings that are not a group's, or `truth` not one Elo per take.
pub fn groups(
    settings: Takes,
    truth: &[f64],
    runs: u64,
    batch: usize,
    seed: u64,
) -> Result<Outcomes, StatsError> {
    if truth.len() != settings.count {
        return Err(StatsError::Takes(truth.len()));
    }
    let p: Vec<[f64; 5]> = truth.iter().map(|&e| distribution_at(e)).collect();
    let mut rng = Rng(seed);
    let mut out = Outcomes::new(settings.count);
    for _ in 0..runs {
        let mut group = Group::new(settings)?;
        let mut assigned = vec![0; settings.count];
        'run: loop {
            let mut handed = Vec::with_capacity(batch);
            for _ in 0..batch.max(1) {
                let Some(k) = group.next_take(&assigned) else {
                    break;
                };
                assigned[k] += 1;
                handed.push(k);
            }
            if handed.is_empty() {
                break 'run;
            }
            for k in handed {
                group.add(k, draw_pair(&p[k], &mut rng))?;
            }
        }
        let accepted = match group.verdict() {
            Verdict::Accepted(k) => vec![k],
            _ => Vec::new(),
        };
        out.count(&accepted, group.pairs);
    }
    Ok(out)
}

/// `runs` sets of K separate SPRTs of `sprt` (each at the full α), one per take at true
/// normalized Elo `truth`, each run to its decision.
///
/// # Errors
/// As [`Sprt::status`].
pub fn separate(sprt: Sprt, truth: &[f64], runs: u64, seed: u64) -> Result<Outcomes, StatsError> {
    let p: Vec<[f64; 5]> = truth.iter().map(|&e| distribution_at(e)).collect();
    let mut rng = Rng(seed);
    let mut out = Outcomes::new(truth.len());
    for _ in 0..runs {
        let (mut accepted, mut pairs) = (Vec::new(), 0);
        for (k, p) in p.iter().enumerate() {
            let mut counts = SprtCounts::default();
            loop {
                counts.add(draw_pair(p, &mut rng));
                match sprt.status(&counts.input())?.decision {
                    Decision::Continue => continue,
                    Decision::AcceptH1 => accepted.push(k),
                    Decision::AcceptH0 => {}
                }
                break;
            }
            pairs += counts.pairs;
        }
        out.count(&accepted, pairs);
    }
    Ok(out)
}
