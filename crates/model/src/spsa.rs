//! SPSA tuning (simultaneous perturbation stochastic approximation) as fishtest runs it.
//!
//! Each game pair `k` (1-based) plays the engine with every parameter moved by `+c_k` or
//! `-c_k` (a coin flip per parameter, from the tournament's seed) against the engine moved
//! the other way. Its result `R` (the first engine's score minus the second's, in games:
//! −2 to 2) moves each parameter by `r_k · c_k · R · flip`, clamped to `[min, max]`. With
//! `N` pairs, stability constant `A`, and exponents `alpha` and `gamma`:
//!
//! - `c_k = c_end · (N / k)^gamma`, so `c_N = c_end`;
//! - `a_k = r_end · c_end² · ((A + N) / (A + k))^alpha` and `r_k = a_k / c_k²`, so
//!   `r_N = r_end`.
//!
//! The parameters move in pair order over the completed pairs (the prefix without gaps), so
//! the trajectory is the same however the pairs were spread over workers, and after a
//! restart.
//!
//! ```toml
//! format = "spsa"
//!
//! [spsa]
//! pairs = 2000
//! verify = { elo0 = 0, elo1 = 5 }
//!
//! [[spsa.param]]
//! name = "connectedness"
//! start = 60
//! min = 0
//! max = 200
//! c_end = 8
//! r_end = 0.002
//! ```

use serde::{Deserialize, Serialize};

use crate::tournament::settings::SprtSettings;

/// The most parameters one run tunes.
pub const MAX_PARAMS: usize = 64;

/// A tuning run: how many pairs, the gain schedule, the parameters, and the SPRT that
/// checks the result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpsaSettings {
    /// Game pairs to play (`N`, fishtest's iterations).
    pub pairs: u64,
    /// Decay of the step `a_k` (fishtest: 0.602).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Decay of the perturbation `c_k` (fishtest: 0.101).
    #[serde(default = "default_gamma")]
    pub gamma: f64,
    /// Stability constant `A` (default: a tenth of `pairs`, as fishtest).
    #[serde(rename = "A", default, skip_serializing_if = "Option::is_none")]
    pub stability: Option<f64>,
    /// When the run ends: an SPRT of the tuned values against the start values, submitted
    /// as its own tournament.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<SprtSettings>,
    /// The parameters.
    #[serde(default, rename = "param")]
    pub params: Vec<SpsaParam>,
}

fn default_alpha() -> f64 {
    0.602
}

fn default_gamma() -> f64 {
    0.101
}

/// One tuned parameter: a weight of a built-in player or an option of an outside engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpsaParam {
    /// The weight's key in the player spec, or the option's name.
    pub name: String,
    /// Where it starts.
    pub start: f64,
    /// The least value played.
    pub min: f64,
    /// The greatest value played.
    pub max: f64,
    /// The perturbation at the last pair.
    pub c_end: f64,
    /// The learning rate at the last pair.
    pub r_end: f64,
}

impl SpsaSettings {
    /// Checks what TOML cannot: the first problem as (key path, message).
    pub fn problem(&self) -> Option<(String, String)> {
        let top = |key: &str, message: String| Some((key.to_string(), message));
        if self.pairs == 0 {
            return top("pairs", "must be 1 or more".into());
        }
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return top("alpha", format!("must be in (0, 1], found {}", self.alpha));
        }
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return top("gamma", format!("must be in (0, 1], found {}", self.gamma));
        }
        if let Some(a) = self.stability
            && !(a >= 0.0 && a.is_finite())
        {
            return top("A", format!("must be 0 or more, found {a}"));
        }
        if self.params.is_empty() {
            return top(
                "param",
                "give the parameters to tune as [[spsa.param]] tables (name, start, min, max, c_end, r_end)".into(),
            );
        }
        if self.params.len() > MAX_PARAMS {
            return top(
                "param",
                format!(
                    "at most {MAX_PARAMS} parameters, found {}",
                    self.params.len()
                ),
            );
        }
        for (i, p) in self.params.iter().enumerate() {
            let at = |key: &str, message: String| Some((format!("param[{i}].{key}"), message));
            if p.name.trim().is_empty() || p.name.contains([',', '=', ' ']) {
                return at(
                    "name",
                    format!(
                        "'{}' is not a parameter name (no spaces, commas or '=')",
                        p.name
                    ),
                );
            }
            if self.params[..i].iter().any(|q| q.name == p.name) {
                return at("name", format!("'{}' is tuned twice", p.name));
            }
            if !(p.min.is_finite() && p.max.is_finite() && p.min < p.max) {
                return at(
                    "max",
                    format!("max ({}) must be above min ({})", p.max, p.min),
                );
            }
            if !(p.min..=p.max).contains(&p.start) {
                return at(
                    "start",
                    format!("{} is outside min..max ({}..{})", p.start, p.min, p.max),
                );
            }
            if !(p.c_end > 0.0 && p.c_end.is_finite()) {
                return at("c_end", format!("must be above 0, found {}", p.c_end));
            }
            if !(p.r_end > 0.0 && p.r_end.is_finite()) {
                return at("r_end", format!("must be above 0, found {}", p.r_end));
            }
        }
        None
    }

    /// The start values.
    pub fn start(&self) -> Vec<f64> {
        self.params.iter().map(|p| p.start).collect()
    }

    /// `A`: as given, or a tenth of the pairs.
    fn a_constant(&self) -> f64 {
        self.stability.unwrap_or(self.pairs as f64 / 10.0)
    }

    /// The perturbation of parameter `p` at pair number `k` (1-based).
    pub fn c_k(&self, p: &SpsaParam, k: u64) -> f64 {
        p.c_end * (self.pairs as f64 / k.max(1) as f64).powf(self.gamma)
    }

    /// The learning rate of parameter `p` at pair number `k` (1-based): `a_k / c_k²`.
    pub fn r_k(&self, p: &SpsaParam, k: u64) -> f64 {
        let (n, a) = (self.pairs as f64, self.a_constant());
        let a_k = p.r_end * p.c_end * p.c_end * ((a + n) / (a + k.max(1) as f64)).powf(self.alpha);
        a_k / self.c_k(p, k).powi(2)
    }

    /// The perturbation signs of pair `pair` (0-based) of a tournament seeded `seed`: +1
    /// or −1 per parameter.
    pub fn flips(&self, seed: u64, pair: u64) -> Vec<f64> {
        let base = crate::seed::game_seed(seed ^ 0x5b5a_7e11, pair);
        (0..self.params.len() as u64)
            .map(|i| {
                if crate::seed::game_seed(base, i) & 1 == 0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect()
    }

    /// The values the two engines of pair `pair` play with, from `theta`: the first moved
    /// by `+c_k · flip`, the second by `−c_k · flip`, each clamped to its range.
    pub fn perturbed(&self, theta: &[f64], seed: u64, pair: u64) -> [Vec<f64>; 2] {
        let k = pair + 1;
        let flips = self.flips(seed, pair);
        let side = |sign: f64| {
            (self.params.iter().zip(theta).zip(&flips))
                .map(|((p, &t), &f)| (t + sign * self.c_k(p, k) * f).clamp(p.min, p.max))
                .collect()
        };
        [side(1.0), side(-1.0)]
    }

    /// Moves `theta` by the result of pair `pair`: `score` is the first engine's score
    /// minus the second's, in games (−2 to 2).
    pub fn update(&self, theta: &mut [f64], seed: u64, pair: u64, score: f64) {
        let k = pair + 1;
        let flips = self.flips(seed, pair);
        for ((p, t), f) in self.params.iter().zip(theta.iter_mut()).zip(flips) {
            let step = self.r_k(p, k) * self.c_k(p, k) * score * f;
            *t = (*t + step).clamp(p.min, p.max);
        }
    }
}

/// The whole number a value is played as (weights and engine options are integers).
pub fn played(value: f64) -> i64 {
    value.round() as i64
}

/// The built-in player spec `spec` (`ab:depth=3`) with each of `values` set, replacing
/// a key it has: `ab:depth=3,connectedness=64`.
pub fn spec_with(spec: &str, values: &[(&str, i64)]) -> String {
    let (kind, rest) = spec.split_once(':').unwrap_or((spec, ""));
    let mut items: Vec<String> = (rest.split(','))
        .map(str::trim)
        .filter(|item| {
            !item.is_empty()
                && !values
                    .iter()
                    .any(|(name, _)| item.split_once('=').is_some_and(|(k, _)| k.trim() == *name))
        })
        .map(String::from)
        .collect();
    items.extend(values.iter().map(|(name, v)| format!("{name}={v}")));
    format!("{}:{}", kind.trim(), items.join(","))
}

/// Each parameter's name with the whole number `values` gives it.
pub fn named<'a>(settings: &'a SpsaSettings, values: &[f64]) -> Vec<(&'a str, i64)> {
    (settings.params.iter().zip(values))
        .map(|(p, &v)| (p.name.as_str(), played(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> SpsaSettings {
        SpsaSettings {
            pairs: 1000,
            alpha: 0.602,
            gamma: 0.101,
            stability: None,
            verify: None,
            params: vec![
                SpsaParam {
                    name: "a".into(),
                    start: 50.0,
                    min: 0.0,
                    max: 100.0,
                    c_end: 4.0,
                    r_end: 0.002,
                },
                SpsaParam {
                    name: "b".into(),
                    start: 10.0,
                    min: 5.0,
                    max: 12.0,
                    c_end: 1.0,
                    r_end: 0.01,
                },
            ],
        }
    }

    #[test]
    fn the_gains_end_at_c_end_and_r_end() {
        let s = settings();
        let p = &s.params[0];
        assert!((s.c_k(p, 1000) - 4.0).abs() < 1e-12);
        assert!((s.r_k(p, 1000) - 0.002).abs() < 1e-12);
        // fishtest's schedule at the first pair: c = c_end·N^γ, a = r_end·c_end²·(A+N)^α/(A+1)^α.
        let c1 = 4.0 * 1000f64.powf(0.101);
        let a1 = 0.002 * 16.0 * (1100f64 / 101.0).powf(0.602);
        assert!((s.c_k(p, 1) - c1).abs() < 1e-9);
        assert!((s.r_k(p, 1) - a1 / (c1 * c1)).abs() < 1e-12);
        // Perturbations shrink and steps shrink as the run goes on.
        assert!(s.c_k(p, 10) > s.c_k(p, 100));
        assert!(s.r_k(p, 10) * s.c_k(p, 10) > s.r_k(p, 100) * s.c_k(p, 100));
    }

    #[test]
    fn flips_are_seeded_and_balanced() {
        let s = settings();
        assert_eq!(s.flips(7, 3), s.flips(7, 3));
        let plus: usize = (0..2000)
            .map(|pair| s.flips(7, pair).iter().filter(|&&f| f > 0.0).count())
            .sum();
        assert!(
            (1800..2200).contains(&plus),
            "{plus} of 4000 flips positive"
        );
        assert!((0..50).any(|pair| s.flips(7, pair) != s.flips(8, pair)));
        // Both signs occur for each parameter.
        for i in 0..2 {
            let signs: std::collections::BTreeSet<i8> =
                (0..50).map(|pair| s.flips(1, pair)[i] as i8).collect();
            assert_eq!(signs.len(), 2);
        }
    }

    #[test]
    fn perturbations_are_opposite_and_clamped() {
        let s = settings();
        let [plus, minus] = s.perturbed(&[50.0, 12.0], 3, 0);
        let flips = s.flips(3, 0);
        let c = s.c_k(&s.params[0], 1);
        assert!((plus[0] - (50.0 + c * flips[0])).abs() < 1e-9);
        assert!((minus[0] - (50.0 - c * flips[0])).abs() < 1e-9);
        // b sits at its max: one side is clamped to it.
        assert!(plus[1] <= 12.0 && minus[1] <= 12.0);
        assert!(plus[1] == 12.0 || minus[1] == 12.0);
    }

    #[test]
    fn a_win_moves_theta_towards_the_winner() {
        let s = settings();
        let mut theta = s.start();
        let flips = s.flips(5, 10);
        s.update(&mut theta, 5, 10, 2.0);
        for i in 0..2 {
            let moved = theta[i] - s.params[i].start;
            assert_eq!(moved.signum(), flips[i], "param {i} moved {moved}");
        }
        let [plus, _] = s.perturbed(&s.start(), 5, 10);
        // The first engine won both games: theta moves towards its values.
        for i in 0..2 {
            assert!((plus[i] - s.params[i].start) * (theta[i] - s.params[i].start) > 0.0);
        }
        let mut even = s.start();
        s.update(&mut even, 5, 10, 0.0);
        assert_eq!(even, s.start());
        let mut far = vec![99.9, 11.9];
        for pair in 0..200 {
            let score = if s.flips(5, pair)[0] > 0.0 { 2.0 } else { -2.0 };
            s.update(&mut far, 5, pair, score);
        }
        assert_eq!(far[0], 100.0, "clamped at max");
        assert!((5.0..=12.0).contains(&far[1]));
    }

    #[test]
    fn problems_name_the_key() {
        let mut s = settings();
        assert_eq!(s.problem(), None);
        s.params[1].start = 13.0;
        assert_eq!(s.problem().unwrap().0, "param[1].start");
        s.params[1].start = 10.0;
        s.params[1].name = "a".into();
        assert_eq!(s.problem().unwrap().0, "param[1].name");
        s.params[1].name = "b".into();
        s.params[0].c_end = 0.0;
        assert_eq!(s.problem().unwrap().0, "param[0].c_end");
        s.params.clear();
        assert_eq!(s.problem().unwrap().0, "param");
        assert_eq!(played(12.5), 13);
        assert_eq!(played(-0.4), 0);
    }

    #[test]
    fn specs_take_the_values() {
        assert_eq!(
            spec_with("ab:depth=3, a=7,b=1", &[("a", 9), ("c", -2)]),
            "ab:depth=3,b=1,a=9,c=-2"
        );
        assert_eq!(spec_with("ab", &[("a", 1)]), "ab:a=1");
        let s = settings();
        assert_eq!(named(&s, &[50.4, 9.6]), [("a", 50), ("b", 10)]);
    }
}
