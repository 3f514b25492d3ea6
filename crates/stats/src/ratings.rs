//! Joint ratings of many players from all their games.
//!
//! - [`BayesElo`]: Rémi Coulom's BayesElo (0057) model and fit: Bradley–Terry with a
//!   first-move advantage and a draw parameter (Rao–Kupper), a prior of virtual draws, the
//!   MM algorithm, error bars by the exact distribution of each rating or by the covariance
//!   matrix, the LOS matrix, and BayesElo's display scale. Default settings reproduce
//!   `elo`, `mm`, `exactdist`, `ratings`.
//! - [`Ordo`]: an Ordo-style logistic maximum-likelihood fit (draws count ½, no colour
//!   advantage, 202 points for a 76 % score, pool average 2300), with analytic error bars.
//!
//! A player who won or lost every game has no finite maximum-likelihood rating: BayesElo's
//! prior keeps it finite, Ordo rates it where the perfect score becomes a coin flip; either
//! way the table flags it with [`Bound`] instead of printing NaN or infinity.

use serde::Serialize;

use crate::games::GameTable;
use crate::normal::phi;

pub(crate) mod model;

use model::{Condensed, centred_covariance};

/// Marks a rating that only bounds the truth: the player won or lost every game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Bound {
    /// Scored 100 %: the true rating is at least this.
    #[serde(rename = ">")]
    AtLeast,
    /// Scored 0 %: the true rating is at most this.
    #[serde(rename = "<")]
    AtMost,
}

/// One row of a rating table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlayerRating {
    /// Player name.
    pub name: String,
    /// Rating.
    pub elo: f64,
    /// Upper half-width of the 95 % interval.
    pub plus: f64,
    /// Lower half-width of the 95 % interval.
    pub minus: f64,
    /// Games played.
    pub games: u64,
    /// Points per game (0 to 1).
    pub score: f64,
    /// Draws per game (0 to 1).
    pub draws: f64,
    /// Average rating of the opponents, weighted by games.
    pub oppo: f64,
    /// Likelihood that this player is stronger than the next one in the table.
    pub los_next: Option<f64>,
    /// Set when the rating is only a bound (100 % or 0 % score).
    pub bound: Option<Bound>,
}

/// A joint rating table, best first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RatingTable {
    /// How the ratings were computed, e.g. `bayeselo (exactdist)`.
    pub method: String,
    /// Players, best first.
    pub players: Vec<PlayerRating>,
    /// `los[i][j]`: likelihood that player `i` (table order) is stronger than player `j`.
    pub los: Vec<Vec<f64>>,
    /// BayesElo's first-move advantage (internal Elo), as given or fitted.
    pub advantage: Option<f64>,
    /// BayesElo's draw parameter (internal Elo), as given or fitted.
    pub drawelo: Option<f64>,
}

/// How BayesElo computes error bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorMethod {
    /// `exactdist`: the distribution of each rating with the others held (asymmetric).
    #[default]
    ExactDist,
    /// `covariance`: from the covariance matrix of all ratings (symmetric).
    Covariance,
    /// Bare `mm`: from the diagonal of the information matrix alone.
    Diagonal,
}

/// BayesElo's settings; the defaults are BayesElo's.
#[derive(Debug, Clone, PartialEq)]
pub struct BayesElo {
    /// First-move (White) advantage in internal Elo, default 32.8.
    pub advantage: f64,
    /// Draw parameter in internal Elo, default 97.3.
    pub drawelo: f64,
    /// Virtual draws per player, default 2.
    pub prior: f64,
    /// Error-bar method, default `exactdist`.
    pub errors: ErrorMethod,
    /// Added to every displayed rating, default 0.
    pub offset: f64,
    /// Player whose displayed rating is set to `offset`, instead of the pool average.
    pub anchor: Option<String>,
    /// Fit the advantage to the games (BayesElo `mm 1 _`) instead of using `advantage`.
    pub fit_advantage: bool,
    /// Fit the draw parameter to the games (BayesElo `mm _ 1`) instead of using `drawelo`.
    pub fit_drawelo: bool,
}

impl Default for BayesElo {
    fn default() -> Self {
        BayesElo {
            advantage: 32.8,
            drawelo: 97.3,
            prior: 2.0,
            errors: ErrorMethod::ExactDist,
            offset: 0.0,
            anchor: None,
            fit_advantage: false,
            fit_drawelo: false,
        }
    }
}

/// BayesElo's normal quantile for 95 % (from its discretised normal distribution).
pub(crate) const Z_BAYESELO: f64 = 1.960_127_301_585_328_4;

impl BayesElo {
    /// Rates the players of `table`.
    pub fn rate(&self, table: &GameTable) -> RatingTable {
        let n = table.len();
        let model = Condensed::new(table, self.prior);
        let (internal, advantage, drawelo) = model.fit(
            (!self.fit_advantage).then_some(self.advantage),
            (!self.fit_drawelo).then_some(self.drawelo),
        );
        let fitted = BayesElo {
            advantage,
            drawelo,
            ..self.clone()
        };
        let scale = crate::elo::bayeselo_scale(drawelo);
        let info = model.information(&internal, advantage, drawelo);
        let covariance = centred_covariance(&info);
        let (plus, minus): (Vec<f64>, Vec<f64>) = match self.errors {
            ErrorMethod::ExactDist => (0..n)
                .map(|i| {
                    let (lo, hi) = fitted.exact_interval(&model, &internal, i);
                    ((hi - internal[i]) * scale, (internal[i] - lo) * scale)
                })
                .unzip(),
            ErrorMethod::Covariance => (0..n)
                .map(|i| {
                    let e = Z_BAYESELO * covariance[i][i].sqrt() * scale;
                    (e, e)
                })
                .unzip(),
            ErrorMethod::Diagonal => (0..n)
                .map(|i| {
                    let e = Z_BAYESELO / info[i][i].sqrt() * scale;
                    (e, e)
                })
                .unzip(),
        };
        let shift = match self
            .anchor
            .as_ref()
            .and_then(|a| table.names().iter().position(|x| x == a))
        {
            Some(a) => self.offset - internal[a] * scale,
            None => self.offset,
        };
        let elo: Vec<f64> = internal.iter().map(|r| r * scale + shift).collect();
        let los = |i: usize, j: usize| -> f64 {
            let var = covariance[i][i] + covariance[j][j] - 2.0 * covariance[i][j];
            phi((internal[i] - internal[j]) / var.sqrt())
        };
        let method = match self.errors {
            ErrorMethod::ExactDist => "bayeselo (exactdist)",
            ErrorMethod::Covariance => "bayeselo (covariance)",
            ErrorMethod::Diagonal => "bayeselo (mm)",
        };
        let mut out = build_table(table, method, &elo, &plus, &minus, los);
        out.advantage = Some(advantage);
        out.drawelo = Some(drawelo);
        out
    }

    /// BayesElo's `exactdist` interval of player `i`, in internal Elo: the rating scanned
    /// over 1001 cell centres of [-1500, 1500] with the others moved to keep the mean, the
    /// likelihood of `i`'s games normalised to sum 1, and each bound found by accumulating
    /// trapezoids from its own end of the grid and interpolating linearly.
    fn exact_interval(&self, model: &Condensed, internal: &[f64], i: usize) -> (f64, f64) {
        const POINTS: usize = 1001;
        let (min, max) = (-1500.0, 1500.0);
        let centre = |k: usize| min + (k as f64 + 0.5) * (max - min) / POINTS as f64;
        let n = internal.len();
        let mut r = internal.to_vec();
        let lls: Vec<f64> = (0..POINTS)
            .map(|k| {
                let delta = (centre(k) - internal[i]) / (n - 1).max(1) as f64;
                for (j, rj) in r.iter_mut().enumerate() {
                    *rj = if j == i {
                        centre(k)
                    } else {
                        internal[j] - delta
                    };
                }
                model.log_likelihood(&r, self.advantage, self.drawelo, Some(i))
            })
            .collect();
        let top = lls.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let density: Vec<f64> = lls.iter().map(|ll| (ll - top).exp()).collect();
        let total: f64 = density.iter().sum();
        let tail = (1.0 - 0.95) / 2.0;
        // `value` extends past the grid, so the first cell starts one step beyond its end.
        let value = |k: isize| min + (k as f64 + 0.5) * (max - min) / POINTS as f64;
        let bound = |start: isize, step: isize| -> f64 {
            let (mut mass, mut previous) = (0.0, 0.0);
            let mut k = start;
            while (0..POINTS as isize).contains(&k) {
                let d = density[k as usize] / total;
                let next = mass + (previous + d) / 2.0;
                if next >= tail {
                    let before = value(k - step);
                    return before + (value(k) - before) * (tail - mass) / (next - mass);
                }
                mass = next;
                previous = d;
                k += step;
            }
            value(k - step)
        };
        let lower = bound(0, 1);
        let upper = bound(POINTS as isize - 1, -1);
        (lower, upper)
    }
}

/// The rows of a table, sorted best first, with scores and LOS to the next player.
fn build_table(
    table: &GameTable,
    method: &str,
    elo: &[f64],
    plus: &[f64],
    minus: &[f64],
    los: impl Fn(usize, usize) -> f64,
) -> RatingTable {
    let n = table.len();
    // Best first; players without games last (their rating is only the prior's), and on
    // equal ratings the better score first.
    let has_games = |i: usize| table.totals(i).iter().sum::<u64>() > 0;
    let score = |i: usize| {
        let [w, d, l] = table.totals(i);
        (2 * w + d) as f64 / (2 * (w + d + l)).max(1) as f64
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        has_games(b)
            .cmp(&has_games(a))
            .then(elo[b].total_cmp(&elo[a]))
            .then(score(b).total_cmp(&score(a)))
    });
    let rows: Vec<PlayerRating> = order
        .iter()
        .enumerate()
        .map(|(rank, &i)| {
            let [w, d, l] = table.totals(i);
            let games = w + d + l;
            let opponents: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| table.games_between(i, j) as f64 * elo[j])
                .sum();
            let bound = match (w, d, l) {
                (w, 0, 0) if w > 0 => Some(Bound::AtLeast),
                (0, 0, l) if l > 0 => Some(Bound::AtMost),
                _ => None,
            };
            PlayerRating {
                name: table.names()[i].clone(),
                elo: elo[i],
                plus: plus[i],
                minus: minus[i],
                games,
                score: if games > 0 {
                    (w as f64 + d as f64 / 2.0) / games as f64
                } else {
                    0.0
                },
                draws: if games > 0 {
                    d as f64 / games as f64
                } else {
                    0.0
                },
                oppo: if games > 0 {
                    opponents / games as f64
                } else {
                    0.0
                },
                // No LOS against or for a player without games: there is nothing to compare.
                los_next: order
                    .get(rank + 1)
                    .filter(|&&j| games > 0 && has_games(j))
                    .map(|&j| los(i, j)),
                bound,
            }
        })
        .collect();
    let matrix = order
        .iter()
        .map(|&i| {
            order
                .iter()
                .map(|&j| if i == j { f64::NAN } else { los(i, j) })
                .collect()
        })
        .collect();
    RatingTable {
        method: method.to_string(),
        players: rows,
        los: matrix,
        advantage: None,
        drawelo: None,
    }
}

/// Ordo-style ratings: logistic maximum likelihood with draws as half points.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordo {
    /// Rating difference that gives a 76 % expected score (Ordo `-z`), default 202.
    pub rating_for_76pct: f64,
    /// Pool average (Ordo `-a`), default 2300; with `anchor`, the anchor's rating.
    pub average: f64,
    /// Player fixed at `average` (Ordo `-A`).
    pub anchor: Option<String>,
}

impl Default for Ordo {
    fn default() -> Self {
        Ordo {
            rating_for_76pct: 202.0,
            average: 2300.0,
            anchor: None,
        }
    }
}

impl Ordo {
    /// Rates the players of `table`. Players with a perfect or zero score are left out of
    /// the fit and then placed where their result has probability ½ (flagged as bounds).
    pub fn rate(&self, table: &GameTable) -> RatingTable {
        let n = table.len();
        let beta = (0.76f64 / 0.24).ln() / self.rating_for_76pct;
        let mut active: Vec<bool> = vec![true; n];
        // Purge perfect and zero scores against the remaining players, until none is left.
        loop {
            let mut changed = false;
            for i in 0..n {
                if !active[i] {
                    continue;
                }
                let (mut points, mut games) = (0.0, 0.0);
                for j in (0..n).filter(|&j| j != i && active[j]) {
                    let [w, d, l] = table.wdl(i, j);
                    points += w as f64 + d as f64 / 2.0;
                    games += (w + d + l) as f64;
                }
                if games == 0.0 || points == 0.0 || points == games {
                    active[i] = false;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut r = vec![0.0; n];
        let expected = |r: &[f64], i: usize, j: usize| 1.0 / (1.0 + (-beta * (r[i] - r[j])).exp());
        for _ in 0..10_000 {
            let mut largest = 0.0f64;
            for i in (0..n).filter(|&i| active[i]) {
                let (mut s, mut e, mut d) = (0.0, 0.0, 0.0);
                for j in (0..n).filter(|&j| j != i && active[j]) {
                    let [w, dr, l] = table.wdl(i, j);
                    let games = (w + dr + l) as f64;
                    let p = expected(&r, i, j);
                    s += w as f64 + dr as f64 / 2.0;
                    e += games * p;
                    d += games * beta * p * (1.0 - p);
                }
                if d > 0.0 {
                    let step = (s - e) / d;
                    r[i] += step;
                    largest = largest.max(step.abs());
                }
            }
            if largest < 1e-10 {
                break;
            }
        }
        // Fisher information of the fit, for analytic error bars.
        let mut info = vec![vec![0.0; n]; n];
        for i in (0..n).filter(|&i| active[i]) {
            for j in (0..n).filter(|&j| j != i && active[j]) {
                let games = table.games_between(i, j) as f64;
                let p = expected(&r, i, j);
                let h = games * beta * beta * p * (1.0 - p);
                info[i][i] += h;
                info[i][j] -= h;
            }
        }
        let fitted: Vec<usize> = (0..n).filter(|&i| active[i]).collect();
        let sub: Vec<Vec<f64>> = fitted
            .iter()
            .map(|&i| fitted.iter().map(|&j| info[i][j]).collect())
            .collect();
        let sub_cov = centred_covariance(&sub);
        let mut covariance = vec![vec![0.0; n]; n];
        for (a, &i) in fitted.iter().enumerate() {
            for (b, &j) in fitted.iter().enumerate() {
                covariance[i][j] = sub_cov[a][b];
            }
        }
        let mean = if fitted.is_empty() {
            0.0
        } else {
            fitted.iter().map(|&i| r[i]).sum::<f64>() / fitted.len() as f64
        };
        for x in r.iter_mut() {
            *x -= mean;
        }
        // Perfect and zero scores: the rating at which that result has probability ½.
        for i in (0..n).filter(|&i| !active[i]) {
            let [w, _, l] = table.totals(i);
            let winner = w > 0 && l == 0;
            let others: Vec<(usize, f64)> = (0..n)
                .filter(|&j| j != i && active[j])
                .map(|j| (j, table.games_between(i, j) as f64))
                .filter(|&(_, g)| g > 0.0)
                .collect();
            let log_p = |x: f64| -> f64 {
                others
                    .iter()
                    .map(|&(j, g)| {
                        let p = 1.0 / (1.0 + (-beta * (x - r[j])).exp());
                        g * if winner { p.ln() } else { (1.0 - p).ln() }
                    })
                    .sum()
            };
            let (mut lo, mut hi) = (-5000.0, 5000.0);
            for _ in 0..200 {
                let mid = (lo + hi) / 2.0;
                let above = log_p(mid) > 0.5f64.ln();
                if above == winner { hi = mid } else { lo = mid }
            }
            r[i] = if others.is_empty() {
                0.0
            } else {
                (lo + hi) / 2.0
            };
        }
        let shift = match self
            .anchor
            .as_ref()
            .and_then(|a| table.names().iter().position(|x| x == a))
        {
            Some(a) => self.average - r[a],
            None => self.average,
        };
        let elo: Vec<f64> = r.iter().map(|x| x + shift).collect();
        let errors: Vec<f64> = (0..n)
            .map(|i| {
                if active[i] {
                    crate::normal::Z95 * covariance[i][i].sqrt()
                } else {
                    f64::NAN
                }
            })
            .collect();
        let los = |i: usize, j: usize| -> f64 {
            let var = covariance[i][i] + covariance[j][j] - 2.0 * covariance[i][j];
            if var > 0.0 {
                phi((r[i] - r[j]) / var.sqrt())
            } else {
                // Outside the fit (a perfect or zero score): their games against each other
                // say it, LOS = Φ((W − L) / √(W + L)); ½ without decisive games.
                let [w, _, l] = table.wdl(i, j);
                if w + l == 0 {
                    0.5
                } else {
                    phi((w as f64 - l as f64) / ((w + l) as f64).sqrt())
                }
            }
        };
        let mut out = build_table(table, "ordo", &elo, &errors, &errors, los);
        for row in &mut out.players {
            if row.plus.is_nan() {
                row.plus = 0.0;
                row.minus = 0.0;
            }
        }
        out
    }
}
