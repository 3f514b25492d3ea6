//! Texel tuning (Peter Österlund's method, 2014): the evaluation weights `w` are fitted so
//! that `σ(K·w·f(p))`, with `σ(x) = 1 / (1 + 10^(−x/400))`, predicts each position's
//! result for the side to move, by the mean squared error over a data set. The
//! evaluations are linear in their weights ([`Heuristics::features`]), so the gradient is
//! exact and cheap: full-batch Adam over all positions, split over threads.
//!
//! Positions are split by game into a training and a held-out part (the same game never
//! in both), and the weights kept are those with the lowest held-out loss. Pure and
//! deterministic: the same data and settings give the same weights.

#![deny(missing_docs)]

use tourney_ai::Heuristics;
use tourney_dataset::record::{Packing, Record, RecordError};

/// The positions of a data set as features and targets.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Features a position (the number of weights).
    width: usize,
    /// `width` features a position, row by row.
    features: Vec<f32>,
    /// The result for the side to move: 0, ½, 1.
    results: Vec<f32>,
    /// The engine's score for the side to move, centi-units.
    scores: Vec<f32>,
}

impl Samples {
    /// Positions held.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.results.is_empty()
    }

    fn push(&mut self, features: &[f64], result: f64, score: f64) {
        self.width = features.len();
        self.features.extend(features.iter().map(|&f| f as f32));
        self.results.push(result as f32);
        self.scores.push(score as f32);
    }
}

/// A data set split into training and held-out positions, by game.
#[derive(Debug, Clone, Default)]
pub struct Split {
    /// Fitted on.
    pub train: Samples,
    /// Measured on.
    pub test: Samples,
    /// Per mille of games held out.
    holdout_per_mille: u64,
    buf: Vec<f64>,
}

impl Split {
    /// An empty split holding out `holdout` (0 to 1) of the games.
    pub fn new(holdout: f64) -> Split {
        Split {
            holdout_per_mille: (holdout.clamp(0.0, 1.0) * 1000.0).round() as u64,
            ..Split::default()
        }
    }

    /// Adds a record's position, as game `P` (whose evaluation is tuned).
    ///
    /// # Errors
    /// The record is not a position of `P`.
    pub fn push<P: Heuristics + Packing>(&mut self, record: &Record) -> Result<(), RecordError> {
        let position: P = record.position()?;
        self.buf.resize(P::WEIGHTS.len(), 0.0);
        position.features(&mut self.buf);
        let part = if mix(record.game_id) % 1000 < self.holdout_per_mille {
            &mut self.test
        } else {
            &mut self.train
        };
        part.push(&self.buf, record.result.score(), f64::from(record.score));
        Ok(())
    }

    /// Adds a position with its features and result directly (synthetic data).
    pub fn push_features(&mut self, game_id: u64, features: &[f64], result: f64) {
        let part = if mix(game_id) % 1000 < self.holdout_per_mille {
            &mut self.test
        } else {
            &mut self.train
        };
        part.push(features, result, 0.0);
    }
}

/// SplitMix64's finaliser: spreads game ids over the split.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The logistic of an evaluation in centi-units, scaled by `k`.
pub fn sigmoid(k: f64, eval: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-k * eval / 400.0))
}

/// How a fit runs.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The indices of the weights tuned; the others keep their values.
    pub tuned: Vec<usize>,
    /// The logistic's scale.
    pub k: f64,
    /// The target's share of the engine's score: `λ·σ(K·score) + (1 − λ)·result`; 0 is
    /// classic Texel tuning on results alone.
    pub lambda: f64,
    /// Passes over the data.
    pub iterations: u32,
    /// Adam's step, in weight units.
    pub rate: f64,
    /// Threads the passes are split over.
    pub threads: usize,
}

/// One pass of a fit, as it is reported.
#[derive(Debug, Clone)]
pub struct Iteration {
    /// From 1.
    pub iteration: u32,
    /// The training loss before this pass's step.
    pub train: f64,
    /// The held-out loss before it (0 with nothing held out).
    pub test: f64,
    /// The weights after the step.
    pub weights: Vec<f64>,
}

/// Loss and gradient sums of a range of samples.
fn sums(
    s: &Samples,
    range: std::ops::Range<usize>,
    w: &[f64],
    k: f64,
    lambda: f64,
    gradient: bool,
) -> (f64, Vec<f64>) {
    let mut loss = 0.0;
    let mut grad = vec![0.0; if gradient { s.width } else { 0 }];
    for i in range {
        let row = &s.features[i * s.width..(i + 1) * s.width];
        let eval: f64 = row.iter().zip(w).map(|(&f, &w)| f64::from(f) * w).sum();
        let p = sigmoid(k, eval);
        let result = f64::from(s.results[i]);
        let target = if lambda > 0.0 {
            lambda * sigmoid(k, f64::from(s.scores[i])) + (1.0 - lambda) * result
        } else {
            result
        };
        let e = p - target;
        loss += e * e;
        if gradient {
            let d = e * p * (1.0 - p);
            for (g, &f) in grad.iter_mut().zip(row) {
                *g += d * f64::from(f);
            }
        }
    }
    (loss, grad)
}

/// The mean loss of `w` over `s` and, when `gradient`, its gradient, over `threads`.
fn evaluate(
    s: &Samples,
    w: &[f64],
    k: f64,
    lambda: f64,
    threads: usize,
    gradient: bool,
) -> (f64, Vec<f64>) {
    let n = s.len();
    if n == 0 {
        return (0.0, vec![0.0; w.len()]);
    }
    let threads = threads.clamp(1, n.div_ceil(4096).max(1));
    let chunk = n.div_ceil(threads);
    let parts: Vec<(f64, Vec<f64>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = t * chunk..((t + 1) * chunk).min(n);
                scope.spawn(move || sums(s, range, w, k, lambda, gradient))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a loss thread"))
            .collect()
    });
    let mut loss = 0.0;
    let mut grad = vec![0.0; if gradient { w.len() } else { 0 }];
    for (l, g) in parts {
        loss += l;
        for (a, b) in grad.iter_mut().zip(g) {
            *a += b;
        }
    }
    // d/dw (p − t)² = 2 (p − t) p (1 − p) ln 10 · K / 400 · f.
    let scale = 2.0 * std::f64::consts::LN_10 * k / 400.0 / n as f64;
    grad.iter_mut().for_each(|g| *g *= scale);
    (loss / n as f64, grad)
}

/// The mean squared error of weights `w` over `s`.
pub fn loss(s: &Samples, w: &[f64], k: f64, lambda: f64, threads: usize) -> f64 {
    evaluate(s, w, k, lambda, threads, false).0
}

/// The scale `K` that fits the results best with weights `w` (golden-section search over
/// log K from 0.001 to 100).
pub fn fit_k(s: &Samples, w: &[f64], threads: usize) -> f64 {
    let f = |log_k: f64| loss(s, w, log_k.exp(), 0.0, threads);
    let (mut a, mut b) = (0.001f64.ln(), 100f64.ln());
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut c, mut d) = (b - ratio * (b - a), a + ratio * (b - a));
    let (mut fc, mut fd) = (f(c), f(d));
    for _ in 0..60 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - ratio * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + ratio * (b - a);
            fd = f(d);
        }
    }
    ((a + b) / 2.0).exp()
}

/// The weights a fit keeps.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The weights.
    pub weights: Vec<f64>,
    /// The pass after which they were measured (0: the start).
    pub after: u32,
    /// Their held-out loss (the training loss when nothing is held out).
    pub loss: f64,
}

/// Fits the tuned weights from `start`, calling `each` after every pass; keeps the
/// weights of the pass with the lowest held-out loss (the training loss when nothing is
/// held out).
pub fn tune(
    split: &Split,
    start: &[f64],
    settings: &Settings,
    mut each: impl FnMut(&Iteration),
) -> Fit {
    let (b1, b2, eps) = (0.9, 0.999, 1e-8);
    let mut w = start.to_vec();
    let (mut m, mut v) = (vec![0.0; w.len()], vec![0.0; w.len()]);
    let measure = |w: &[f64]| {
        let (train, grad) = evaluate(
            &split.train,
            w,
            settings.k,
            settings.lambda,
            settings.threads,
            true,
        );
        let test = loss(
            &split.test,
            w,
            settings.k,
            settings.lambda,
            settings.threads,
        );
        (train, test, grad)
    };
    let held_out = !split.test.is_empty();
    let mut best = Fit {
        weights: w.clone(),
        after: 0,
        loss: f64::INFINITY,
    };
    for iteration in 1..=settings.iterations {
        let (train, test, grad) = measure(&w);
        let score = if held_out { test } else { train };
        if score < best.loss {
            best = Fit {
                weights: w.clone(),
                after: iteration - 1,
                loss: score,
            };
        }
        for &j in &settings.tuned {
            m[j] = b1 * m[j] + (1.0 - b1) * grad[j];
            v[j] = b2 * v[j] + (1.0 - b2) * grad[j] * grad[j];
            let m_hat = m[j] / (1.0 - b1.powi(iteration as i32));
            let v_hat = v[j] / (1.0 - b2.powi(iteration as i32));
            w[j] -= settings.rate * m_hat / (v_hat.sqrt() + eps);
        }
        each(&Iteration {
            iteration,
            train,
            test,
            weights: w.clone(),
        });
    }
    let (train, test, _) = measure(&w);
    let score = if held_out { test } else { train };
    if score < best.loss {
        best = Fit {
            weights: w,
            after: settings.iterations,
            loss: score,
        };
    }
    best
}

#[cfg(test)]
mod tests;
