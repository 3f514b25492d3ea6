//! Constrained maximum-likelihood estimates of a discrete score distribution, the core of
//! fishtest's generalized SPRT (`LLRcalc.py`).

use crate::summary::moments;

/// Brent's root finder as in scipy's `brentq` (xtol 2e-12, rtol 4 ε, 100 iterations), on an
/// interval where `f` changes sign.
fn brentq(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const XTOL: f64 = 2e-12;
    const RTOL: f64 = 4.0 * f64::EPSILON;
    let (mut xpre, mut xcur) = (a, b);
    let (mut fpre, mut fcur) = (f(xpre), f(xcur));
    let (mut xblk, mut fblk, mut spre, mut scur) = (0.0, 0.0, 0.0, 0.0);
    if fpre == 0.0 {
        return xpre;
    }
    if fcur == 0.0 {
        return xcur;
    }
    for _ in 0..100 {
        if fpre != 0.0 && fcur != 0.0 && (fpre < 0.0) != (fcur < 0.0) {
            xblk = xpre;
            fblk = fpre;
            spre = xcur - xpre;
            scur = spre;
        }
        if fblk.abs() < fcur.abs() {
            xpre = xcur;
            xcur = xblk;
            xblk = xpre;
            fpre = fcur;
            fcur = fblk;
            fblk = fpre;
        }
        let delta = (XTOL + RTOL * xcur.abs()) / 2.0;
        let sbis = (xblk - xcur) / 2.0;
        if fcur == 0.0 || sbis.abs() < delta {
            return xcur;
        }
        if spre.abs() > delta && fcur.abs() < fpre.abs() {
            let stry = if xpre == xblk {
                -fcur * (xcur - xpre) / (fcur - fpre)
            } else {
                let dpre = (fpre - fcur) / (xpre - xcur);
                let dblk = (fblk - fcur) / (xblk - xcur);
                -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            };
            if 2.0 * stry.abs() < spre.abs().min(3.0 * sbis.abs() - delta) {
                spre = scur;
                scur = stry;
            } else {
                spre = sbis;
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        xcur += if scur.abs() > delta {
            scur
        } else if sbis > 0.0 {
            delta
        } else {
            -delta
        };
        fcur = f(xcur);
    }
    xcur
}

/// Solves the secular equation `Σ pᵢ aᵢ / (1 + x aᵢ) = 0` (the `aᵢ` take both signs).
fn secular(values: &[f64], probs: &[f64]) -> f64 {
    const EPS: f64 = 1e-9;
    let v = values.iter().copied().fold(f64::INFINITY, f64::min);
    let w = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let f = |x: f64| -> f64 {
        values
            .iter()
            .zip(probs)
            .map(|(a, p)| p * a / (1.0 + x * a))
            .sum()
    };
    brentq(f, -1.0 / w + EPS, -1.0 / v - EPS)
}

/// The distribution closest (in likelihood) to `probs` whose mean score is `s`.
pub(crate) fn mle_expected(values: &[f64], probs: &[f64], s: f64) -> Vec<f64> {
    let shifted: Vec<f64> = values.iter().map(|a| a - s).collect();
    let x = secular(&shifted, probs);
    probs
        .iter()
        .zip(&shifted)
        .map(|(p, a)| p / (1.0 + x * a))
        .collect()
}

/// The distribution closest to `probs` whose t-value `(μ - reference)/σ` is `t`
/// (fishtest `MLE_t_value`: at most 10 fixed-point iterations).
pub(crate) fn mle_t_value(values: &[f64], probs: &[f64], reference: f64, t: f64) -> Vec<f64> {
    let mut current = vec![1.0 / values.len() as f64; values.len()];
    for _ in 0..10 {
        let m = moments(values, &current);
        let sigma = m.var.sqrt();
        let phi: Vec<f64> = values
            .iter()
            .map(|a| a - reference - t * sigma * (1.0 + ((m.mean - a) / sigma).powi(2)) / 2.0)
            .collect();
        let x = secular(&phi, probs);
        let next: Vec<f64> = probs
            .iter()
            .zip(&phi)
            .map(|(p, f)| p / (1.0 + x * f))
            .collect();
        let change = next
            .iter()
            .zip(&current)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        current = next;
        if change < 1e-9 {
            break;
        }
    }
    current
}

/// `N Σ p̂ᵢ ln(p1ᵢ / p0ᵢ)`: the generalized log-likelihood ratio.
pub(crate) fn llr(n: f64, probs: &[f64], p0: &[f64], p1: &[f64]) -> f64 {
    n * probs
        .iter()
        .zip(p0.iter().zip(p1))
        .map(|(p, (a, b))| p * (b / a).ln())
        .sum::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brentq_finds_roots() {
        let r = brentq(|x| x * x - 2.0, 0.0, 2.0);
        assert!((r - std::f64::consts::SQRT_2).abs() < 1e-11);
        let r = brentq(|x| x.cos() - x, 0.0, 1.0);
        assert!((r.cos() - r).abs() < 1e-11);
    }

    #[test]
    fn mle_expected_has_the_requested_mean() {
        let values = [0.0, 0.5, 1.0];
        let probs = [0.3, 0.3, 0.4];
        let p = mle_expected(&values, &probs, 0.52);
        let mean: f64 = p.iter().zip(&values).map(|(p, a)| p * a).sum();
        assert!((mean - 0.52).abs() < 1e-9);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }
}
