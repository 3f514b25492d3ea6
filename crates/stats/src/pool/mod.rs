//! A rating pool: joint ratings of many versions of an engine, kept current as games
//! arrive, and the rule that chooses the next pair to play.
//!
//! - [`PoolSettings::rate`]: BayesElo's model (Bradley–Terry with a draw parameter and the
//!   first move's advantage, Rao–Kupper; the same model and likelihood as [`BayesElo`],
//!   whose condensed counts, gradient and information it shares) fitted jointly to all the
//!   pool's games by Newton's method, with a wide normal prior on each rating so that a
//!   member without games has a finite, wide interval instead of none. Ratings and their
//!   95 % intervals are relative to an anchor (a member held at 0, by default the first).
//! - [`PoolRatings::plan`]: the pairing rule, by information (below).
//! - [`simulate`]: pools of versions with known true ratings, played by the rule, by a
//!   round robin and by a chain of SPRTs: the games each needs to reach a given interval.
//!
//! # The pairing rule
//!
//! The fit gives the posterior covariance `C` of the anchored ratings `dₖ = rₖ − r_anchor`
//! (internal Elo², the anchor's row and column zero). One more game pair between `i` and
//! `j`, colours swapped, adds the Fisher information `F_ij = I(Δ + a) + I(Δ − a)` about
//! `Δ = rᵢ − rⱼ` (`a` the first move's advantage; for one game without draws
//! `I = c² p (1 − p)`, `c = ln 10 / 400`, so close ratings give more; with draws,
//! `I = Σ P(result) (d ln P(result) / dΔ)²`). In the normal approximation of the posterior
//! that is the rank-one update `C' = C − F (C u)(C u)ᵀ / (1 + F uᵀ C u)`, `u = eᵢ − eⱼ`, so
//! the expected reduction of a weighted sum of the members' variances `Σₖ wₖ Cₖₖ` is
//!
//! ```text
//! gain(i, j) = F_ij Σₖ wₖ (Cₖᵢ − Cₖⱼ)² / (1 + F_ij (Cᵢᵢ + Cⱼⱼ − 2 Cᵢⱼ))
//! ```
//!
//! and the rule plays the pair of the largest gain. The weights aim at the widest
//! intervals: `wₖ = (bₖ Cₖₖ / maxₗ bₗ Cₗₗ)^power` ([`PoolSettings::power`]; large powers
//! approach "reduce the widest interval"), with `bₖ` = 1 + [`PoolSettings::emphasis`] for
//! the newest and the top-rated members and 1 for the others: their variances count as
//! that much wider, so they are kept at about `1 / √(1 + emphasis)` of the others'
//! intervals. A member without games has the prior's variance, far above any other, and
//! is paired first. A member out of every other's reach ([`PoolRatings::out_of_reach`]:
//! more than [`PoolSettings::reach`] from each even at the near end of the interval of the
//! difference) has `bₖ = 0`: it loses (or wins) nearly every game, so its variance, resting
//! on the few games it does not, stays about as wide however many it plays, and would
//! otherwise take every pair; the floor still plays it. When no member is within reach of
//! another, none is left out. The greedy choice is a Frank–Wolfe step on that objective,
//! whose gradient in the number of pairs of `(i, j)` is the gain's numerator, so repeated it
//! approaches the best allocation of pairs (see [`simulate::design_games`]). This is the
//! idea of KataGo's server (`rating_network_pairer.py`: pair networks whose ratings are
//! close and uncertain), made exact as the expected variance reduction of the
//! Bradley–Terry model's Fisher information, the criterion of sequential optimal design
//! (A-optimality, greedy).
//!
//! A floor keeps every member played: when a member appears in fewer than
//! [`PoolSettings::floor`] of an even share (`2 / members`) of the last
//! [`PoolSettings::window`] pairs, only pairs that include such a member are considered.
//! Ties go to the lowest indices; the rule is deterministic given its inputs. Several
//! pairs at once ([`PoolRatings::plan`]) apply the rank-one update after each, so a lease
//! of many pairs spreads them as the information says, and pairs leased but not yet
//! reported are passed as `pending` to count them the same way.
//!
//! [`BayesElo`]: crate::BayesElo

use serde::Serialize;

use crate::games::GameTable;
use crate::normal::Z95;
use crate::ratings::model::{Condensed, game_information, invert};

pub mod simulate;

/// How a pool is rated and paired; the defaults are the documented rule's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolSettings {
    /// The member whose rating is 0 (its number in the table), default the first.
    pub anchor: usize,
    /// Standard deviation of the normal prior of each rating, internal Elo (default 1000):
    /// what rates a member without games, and nearly nothing once it has some.
    pub prior_sd: f64,
    /// BayesElo's virtual draws per member (default 2), which keep an all-wins member
    /// finite.
    pub virtual_draws: f64,
    /// The first move's advantage, internal Elo; `None` (default) fits it to the games
    /// once there are [`PoolSettings::fit_after`] (BayesElo's 32.8 before).
    pub advantage: Option<f64>,
    /// The draw parameter, internal Elo; `None` (default) fits it to the games once there
    /// are [`PoolSettings::fit_after`] (BayesElo's 97.3 before).
    pub drawelo: Option<f64>,
    /// Games the pool needs before the advantage and the draw parameter are fitted
    /// (default 400): a few games could fit them anywhere, and the draw parameter sets the
    /// display scale of every rating and interval.
    pub fit_after: u64,
    /// The power of each member's variance in the pairing objective's weights (default 16).
    pub power: f64,
    /// How many of the newest members (the highest numbers) weigh more (default 1).
    pub newest: usize,
    /// How many of the top-rated members (of those with games) weigh more (default 3).
    pub top: usize,
    /// How much wider the variances of the newest and top-rated members count (default
    /// 0.25: their intervals are aimed at about 0.9 of the others').
    pub emphasis: f64,
    /// The floor, as a fraction of an even share of pairs (default 0.25).
    pub floor: f64,
    /// Recent pairs the floor looks at; 0 (default) for 8 a member.
    pub window: usize,
    /// How far out of the others' reach a member's rating must be, display Elo (default
    /// 300, an expected score under about 15 %): a member whose difference from every
    /// other member is beyond this even at the near end of its 95 % interval counts for
    /// nothing in the pairing objective (it loses, or wins, nearly every game, and its
    /// interval, resting on the few games it does not lose or win, narrows hardly at all
    /// however many it plays); the floor still plays it.
    pub reach: f64,
}

impl Default for PoolSettings {
    fn default() -> Self {
        PoolSettings {
            anchor: 0,
            prior_sd: 1000.0,
            virtual_draws: 2.0,
            advantage: None,
            drawelo: None,
            fit_after: 400,
            power: 16.0,
            newest: 1,
            top: 3,
            emphasis: 0.25,
            floor: 0.25,
            window: 0,
            reach: 300.0,
        }
    }
}

/// The ratings of a pool's members, anchored, with what pairing needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolRatings {
    /// The anchor's number.
    pub anchor: usize,
    /// Each member's rating relative to the anchor, Elo on BayesElo's display scale
    /// (internal Elo × [`PoolRatings::scale`], about logistic Elo for close ratings).
    pub elo: Vec<f64>,
    /// Half-width of each member's 95 % interval relative to the anchor, same scale (the
    /// anchor's is 0).
    pub interval: Vec<f64>,
    /// Games each member played.
    pub games: Vec<u64>,
    /// The fitted ratings, internal Elo, before anchoring.
    pub internal: Vec<f64>,
    /// Posterior covariance of the anchored ratings, internal Elo² (the anchor's row and
    /// column are 0).
    pub covariance: Vec<Vec<f64>>,
    /// The first move's advantage used, internal Elo.
    pub advantage: f64,
    /// The draw parameter used, internal Elo.
    pub drawelo: f64,
    /// Display Elo per internal Elo: BayesElo's scale at [`PoolRatings::drawelo`].
    pub scale: f64,
}

/// Newton iterations of a fit at most.
const MAX_ITERATIONS: usize = 200;

impl PoolSettings {
    /// The recent pairs the floor looks at in a pool of `members`: [`PoolSettings::window`],
    /// or 8 a member when it is 0.
    pub fn floor_window(&self, members: usize) -> usize {
        match self.window {
            0 => 8 * members,
            w => w,
        }
    }

    /// Rates the members of `table` (numbered as it numbers them: order of arrival, so the
    /// newest last). `previous`, the last rating of the same pool (possibly with fewer
    /// members), starts the fit near its end: the same answer in fewer iterations.
    ///
    /// A member without games is rated at the prior's mean (0 internal) with the prior's
    /// width. An anchor out of range is taken as the first member.
    ///
    /// A fit from `previous` ends where one from nothing ends to within about 1e-6 Elo, not
    /// to the last bit: a coordinator that must choose the same pairs again after a restart
    /// should start its fits the same way each time (from nothing: about 15 ms at 50
    /// members and 100,000 games, against 1 ms from the last fit).
    pub fn rate(&self, table: &GameTable, previous: Option<&PoolRatings>) -> PoolRatings {
        let n = table.len();
        let model = Condensed::from_results(n, |i, j| table.results(i, j), self.virtual_draws);
        let precision = 1.0 / (self.prior_sd * self.prior_sd);
        let mut r = vec![0.0; n];
        let (mut adv, mut de) = (32.8, 97.3);
        if let Some(p) = previous.filter(|p| p.internal.len() <= n) {
            r[..p.internal.len()].copy_from_slice(&p.internal);
            (adv, de) = (p.advantage, p.drawelo);
        }
        let games: Vec<u64> = (0..n).map(|i| table.games_of(i)).collect();
        let few = games.iter().sum::<u64>() / 2 < self.fit_after;
        let fixed = |given: Option<f64>, default: f64| given.or(few.then_some(default));
        let (fixed_advantage, fixed_drawelo) =
            (fixed(self.advantage, 32.8), fixed(self.drawelo, 97.3));
        adv = fixed_advantage.unwrap_or(adv);
        de = fixed_drawelo.unwrap_or(de);
        let posterior = |r: &[f64], adv: f64, de: f64| -> f64 {
            model.log_likelihood(r, adv, de, None)
                - 0.5 * precision * r.iter().map(|x| x * x).sum::<f64>()
        };
        let hessian = |r: &[f64], adv: f64, de: f64| -> Vec<Vec<f64>> {
            let mut h = model.information(r, adv, de);
            for (i, row) in h.iter_mut().enumerate() {
                row[i] += precision;
            }
            h
        };
        for _ in 0..MAX_ITERATIONS {
            let mut grad = model.gradient(&r, adv, de);
            for (g, x) in grad.iter_mut().zip(&r) {
                *g -= precision * x;
            }
            let sigma = invert(&hessian(&r, adv, de));
            let step: Vec<f64> = (sigma.iter())
                .map(|row| row.iter().zip(&grad).map(|(s, g)| s * g).sum())
                .collect();
            // Newton's step, halved while it lowers the (concave) log-posterior.
            let before = posterior(&r, adv, de);
            let mut t = 1.0;
            let mut next: Vec<f64> = r.clone();
            for _ in 0..30 {
                next = r.iter().zip(&step).map(|(x, s)| x + t * s).collect();
                if posterior(&next, adv, de) >= before - 1e-9 {
                    break;
                }
                t /= 2.0;
            }
            let moved = (r.iter().zip(&next))
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            r = next;
            let mut theta_moved = 0.0f64;
            if fixed_advantage.is_none() || fixed_drawelo.is_none() {
                let gamma: Vec<f64> = r.iter().map(|x| 10f64.powf(x / 400.0)).collect();
                let (tw, td) = (10f64.powf(adv / 400.0), 10f64.powf(de / 400.0));
                // Without games (or draws) to fit them to, they stay as they were.
                let fitted = |theta: f64, old: f64| {
                    let elo = 400.0 * theta.log10();
                    if elo.is_finite() { elo } else { old }
                };
                if fixed_advantage.is_none() {
                    let updated = fitted(model.advantage_step(&gamma, tw, td), adv);
                    theta_moved = theta_moved.max((updated - adv).abs());
                    adv = updated;
                }
                if fixed_drawelo.is_none() {
                    let updated = fitted(model.drawelo_step(&gamma, tw, td), de);
                    theta_moved = theta_moved.max((updated - de).abs());
                    de = updated;
                }
            }
            if moved < 1e-6 && theta_moved < 1e-6 {
                break;
            }
        }
        let sigma = invert(&hessian(&r, adv, de));
        let a = self.anchor.min(n.saturating_sub(1));
        let covariance: Vec<Vec<f64>> = (0..n)
            .map(|k| {
                (0..n)
                    .map(|l| sigma[k][l] - sigma[k][a] - sigma[a][l] + sigma[a][a])
                    .collect()
            })
            .collect();
        let scale = crate::elo::bayeselo_scale(de);
        PoolRatings {
            anchor: a,
            elo: r.iter().map(|x| (x - r[a]) * scale).collect(),
            interval: (0..n)
                .map(|k| Z95 * covariance[k][k].max(0.0).sqrt() * scale)
                .collect(),
            games,
            internal: r,
            covariance,
            advantage: adv,
            drawelo: de,
            scale,
        }
    }
}

impl PoolRatings {
    /// Members rated.
    pub fn len(&self) -> usize {
        self.elo.len()
    }

    /// Whether the pool has no members.
    pub fn is_empty(&self) -> bool {
        self.elo.is_empty()
    }

    /// The widest 95 % interval of any member, display Elo.
    pub fn worst_interval(&self) -> f64 {
        self.interval.iter().copied().fold(0.0, f64::max)
    }

    /// `F_ij`: the expected Fisher information about `rᵢ − rⱼ` (internal Elo⁻²) of one game
    /// pair between `i` and `j`, colours swapped, at the fitted ratings.
    pub fn pair_information(&self, i: usize, j: usize) -> f64 {
        let delta = self.internal[i] - self.internal[j];
        game_information(delta + self.advantage, self.drawelo)
            + game_information(delta - self.advantage, self.drawelo)
    }

    /// Whether member `k` is out of every other member's reach: its rating differs from
    /// each other's by more than [`PoolSettings::reach`] even at the near end of the 95 %
    /// interval of the difference (display Elo). A member without games is within reach.
    pub fn out_of_reach(&self, settings: &PoolSettings, k: usize) -> bool {
        let n = self.len();
        let c = &self.covariance;
        k < n
            && n > 1
            && self.games[k] > 0
            && (0..n).filter(|&l| l != k).all(|l| {
                let spread = (c[k][k] + c[l][l] - 2.0 * c[k][l]).max(0.0);
                let near = Z95 * spread.sqrt() * self.scale;
                (self.elo[k] - self.elo[l]).abs() - near > settings.reach
            })
    }

    /// The next `count` pairs `(i, j)`, `i < j`, by the rule of the [module](self): each
    /// chosen with the covariance updated for the pairs `pending` (leased, not yet
    /// reported) and the pairs chosen before it. `recent` is the pool's last pairs in the
    /// order they were leased (`pending` among them), for the floor; the chosen pairs join
    /// it as they are chosen. Empty with fewer than two members.
    pub fn plan(
        &self,
        settings: &PoolSettings,
        recent: &[(usize, usize)],
        pending: &[(usize, usize)],
        count: usize,
    ) -> Vec<(usize, usize)> {
        let mut planner = Planner::new(self, settings);
        for &(i, j) in pending {
            planner.commit(i, j);
        }
        let mut recent = recent.to_vec();
        let mut chosen = Vec::with_capacity(count);
        for _ in 0..count {
            let starved = planner.starved(&recent);
            let candidates = all_pairs(self.len()).filter(|&(i, j)| {
                starved.is_empty() || starved.contains(&i) || starved.contains(&j)
            });
            let Some((i, j)) = planner.best(candidates) else {
                break;
            };
            planner.commit(i, j);
            recent.push((i, j));
            chosen.push((i, j));
        }
        chosen
    }

    /// The next pair alone: [`PoolRatings::plan`] of one.
    pub fn next_pair(
        &self,
        settings: &PoolSettings,
        recent: &[(usize, usize)],
        pending: &[(usize, usize)],
    ) -> Option<(usize, usize)> {
        self.plan(settings, recent, pending, 1).pop()
    }

    /// The expected reduction of the weighted variance of one more game pair between `i`
    /// and `j` (the `gain` of the [module](self)), at the current covariance.
    pub fn gain(&self, settings: &PoolSettings, i: usize, j: usize) -> f64 {
        Planner::new(self, settings).gain(i, j)
    }
}

/// Every pair `(i, j)`, `i < j`, of `n` members, in order.
fn all_pairs(n: usize) -> impl Iterator<Item = (usize, usize)> + Clone {
    (0..n).flat_map(move |i| (i + 1..n).map(move |j| (i, j)))
}

/// The covariance as pairs are planned: the rule's working state.
pub(crate) struct Planner<'a> {
    ratings: &'a PoolRatings,
    settings: &'a PoolSettings,
    pub(crate) covariance: Vec<Vec<f64>>,
    /// `bₖ`: 1, or 1 + emphasis for the newest and the top-rated; 0 for a member out of
    /// reach.
    base: Vec<f64>,
}

impl<'a> Planner<'a> {
    /// The state of `ratings` before any pair is planned.
    pub(crate) fn new(ratings: &'a PoolRatings, settings: &'a PoolSettings) -> Planner<'a> {
        let n = ratings.len();
        let mut base = vec![1.0; n];
        for b in base.iter_mut().skip(n.saturating_sub(settings.newest)) {
            *b = 1.0 + settings.emphasis;
        }
        // The top-rated among the members with games: one without is rated by the prior.
        let mut order: Vec<usize> = (0..n).filter(|&k| ratings.games[k] > 0).collect();
        order.sort_by(|&a, &b| ratings.elo[b].total_cmp(&ratings.elo[a]).then(a.cmp(&b)));
        for &k in order.iter().take(settings.top) {
            base[k] = 1.0 + settings.emphasis;
        }
        // A member out of every other's reach is not aimed at (unless none is in reach).
        let out: Vec<bool> = (0..n).map(|k| ratings.out_of_reach(settings, k)).collect();
        if out.iter().any(|&o| !o) {
            for (b, _) in base.iter_mut().zip(&out).filter(|(_, o)| **o) {
                *b = 0.0;
            }
        }
        Planner {
            ratings,
            settings,
            covariance: ratings.covariance.clone(),
            base,
        }
    }

    /// The members under the floor in the last window of `recent` (none until `recent`
    /// fills a window).
    pub(crate) fn starved(&self, recent: &[(usize, usize)]) -> Vec<usize> {
        let n = self.ratings.len();
        let window = self.settings.floor_window(n);
        if n < 2 || recent.len() < window || self.settings.floor <= 0.0 {
            return Vec::new();
        }
        let mut seen = vec![0usize; n];
        for &(i, j) in &recent[recent.len() - window..] {
            for k in [i, j] {
                if k < n {
                    seen[k] += 1;
                }
            }
        }
        let least = self.settings.floor * 2.0 * window as f64 / n as f64;
        (0..n).filter(|&k| (seen[k] as f64) < least).collect()
    }

    /// The largest variance of an anchored rating, internal Elo².
    pub(crate) fn widest(&self) -> f64 {
        let c = &self.covariance;
        (0..c.len()).map(|k| c[k][k]).fold(0.0, f64::max)
    }

    /// The weights `wₖ` at the current covariance.
    fn weights(&self) -> Vec<f64> {
        let c = &self.covariance;
        let aimed: Vec<f64> = (0..c.len())
            .map(|k| self.base[k] * c[k][k].max(0.0))
            .collect();
        let top = aimed.iter().copied().fold(0.0, f64::max);
        if top <= 0.0 {
            return vec![0.0; c.len()];
        }
        (aimed.iter())
            .map(|v| (v / top).powf(self.settings.power))
            .collect()
    }

    /// `gain(i, j)` at the current covariance, with weights `w`.
    fn gain_with(&self, w: &[f64], i: usize, j: usize) -> f64 {
        let c = &self.covariance;
        let f = self.ratings.pair_information(i, j);
        let spread = c[i][i] + c[j][j] - 2.0 * c[i][j];
        let reduced: f64 = (0..c.len())
            .map(|k| w[k] * (c[k][i] - c[k][j]).powi(2))
            .sum();
        f * reduced / (1.0 + f * spread)
    }

    /// `gain(i, j)` at the current covariance.
    pub(crate) fn gain(&self, i: usize, j: usize) -> f64 {
        self.gain_with(&self.weights(), i, j)
    }

    /// The candidate of the largest gain, the first on ties.
    pub(crate) fn best(
        &self,
        candidates: impl Iterator<Item = (usize, usize)>,
    ) -> Option<(usize, usize)> {
        let w = self.weights();
        let mut best: Option<((usize, usize), f64)> = None;
        for (i, j) in candidates {
            let g = self.gain_with(&w, i, j);
            if best.is_none_or(|(_, b)| g > b) {
                best = Some(((i, j), g));
            }
        }
        best.map(|(pair, _)| pair)
    }

    /// Updates the covariance for one more game pair between `i` and `j`.
    pub(crate) fn commit(&mut self, i: usize, j: usize) {
        let n = self.covariance.len();
        if i >= n || j >= n || i == j {
            return;
        }
        let f = self.ratings.pair_information(i, j);
        let c = &mut self.covariance;
        let cu: Vec<f64> = (0..n).map(|k| c[k][i] - c[k][j]).collect();
        let denominator = 1.0 + f * (cu[i] - cu[j]);
        for k in 0..n {
            for l in 0..n {
                c[k][l] -= f * cu[k] * cu[l] / denominator;
            }
        }
    }
}

#[cfg(test)]
mod tests;
