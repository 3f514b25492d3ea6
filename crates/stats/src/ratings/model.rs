//! BayesElo's model of a set of games: the results condensed per ordered pair, the MM fit,
//! the likelihood with its gradient and information, and the matrix algebra the ratings
//! and the rating pool share.

use crate::games::GameTable;

/// Logistic expected score of an internal Elo difference.
pub(crate) fn f(x: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-x / 400.0))
}

/// The slope of the logistic in internal Elo: `ln 10 / 400`.
pub(crate) const C: f64 = std::f64::consts::LN_10 / 400.0;

/// Per ordered pair `(white, black)`: `[white wins, draws, black wins]` including the prior.
pub(crate) struct Condensed {
    /// Players.
    pub(crate) n: usize,
    /// `counts[white][black]`.
    pub(crate) counts: Vec<Vec<[f64; 3]>>,
}

/// The derivatives in `Δ` of the log-probability of each result of one game at internal
/// `x = Δ + advantage` (White's view) and draw parameter `de`: the win, draw and loss
/// probabilities, the first derivatives, and the second derivatives.
fn game_terms(x: f64, de: f64) -> ([f64; 3], [f64; 3], [f64; 3]) {
    let (fu, fv) = (f(x - de), f(-x - de));
    let (gu, gv) = (fu * (1.0 - fu), fv * (1.0 - fv));
    let draw = 1.0 - fu - fv;
    let d1 = C * (gv - gu);
    let d2 = -C * C * (gu * (1.0 - 2.0 * fu) + gv * (1.0 - 2.0 * fv));
    (
        [fu, draw, fv],
        [C * (1.0 - fu), d1 / draw, -C * (1.0 - fv)],
        [-C * C * gu, d2 / draw - (d1 / draw).powi(2), -C * C * gv],
    )
}

/// The expected (Fisher) information about `Δ` of one game at internal `x = Δ + advantage`
/// and draw parameter `de`: `Σ P(result) (d ln P(result) / dΔ)²`. Without draws it is
/// `C² p (1 − p)`, `C = ln 10 / 400`.
pub(crate) fn game_information(x: f64, de: f64) -> f64 {
    let (p, d1, _) = game_terms(x, de);
    (0..3).map(|k| p[k] * d1[k] * d1[k]).sum()
}

impl Condensed {
    /// The results with BayesElo's virtual draws added (in single precision, as BayesElo).
    pub(crate) fn new(table: &GameTable, prior: f64) -> Condensed {
        Condensed::from_results(table.len(), |i, j| table.results(i, j), prior)
    }

    /// As [`Condensed::new`], from `results(white, black)` of `n` players.
    #[allow(clippy::needless_range_loop)] // square-matrix arithmetic reads best with indices
    pub(crate) fn from_results(
        n: usize,
        results: impl Fn(usize, usize) -> [u64; 3],
        prior: f64,
    ) -> Condensed {
        let mut counts32: Vec<Vec<[f32; 3]>> = (0..n)
            .map(|i| (0..n).map(|j| results(i, j).map(|c| c as f32)).collect())
            .collect();
        if prior > 0.0 {
            let between = |i: usize, j: usize| -> u64 {
                results(i, j).iter().chain(&results(j, i)).sum::<u64>()
            };
            for i in 0..n {
                let games: u64 = (0..n).filter(|&j| j != i).map(|j| between(i, j)).sum();
                if games == 0 {
                    continue;
                }
                let per_game = prior as f32 * 0.25 / games as f32;
                for j in (0..n).filter(|&j| j != i) {
                    let virtual_draws = per_game * between(i, j) as f32;
                    counts32[i][j][1] += virtual_draws;
                    counts32[j][i][1] += virtual_draws;
                }
            }
        }
        let counts = counts32
            .iter()
            .map(|row| row.iter().map(|c| c.map(f64::from)).collect())
            .collect();
        Condensed { n, counts }
    }

    /// MM (Hunter 2004) as BayesElo runs it: Gauss–Seidel from the last player down, until
    /// nothing moves by more than 1e-5 (γ relatively, fitted θ absolutely). Returns internal
    /// ratings with mean 0, and the advantage and draw parameter (fitted or as given).
    pub(crate) fn fit(&self, advantage: Option<f64>, drawelo: Option<f64>) -> (Vec<f64>, f64, f64) {
        let n = self.n;
        let mut theta_w = advantage.map_or(1.0, |a| 10f64.powf(a / 400.0));
        let mut theta_d = drawelo.map_or(1.0, |d| 10f64.powf(d / 400.0));
        let mut gamma = vec![1.0; n];
        let mut next = vec![1.0; n];
        for _ in 0..10_000 {
            for i in (0..n).rev() {
                let (mut a, mut b) = (0.0, 0.0);
                for j in (0..n).filter(|&j| j != i) {
                    let [w_ij, d_ij, l_ij] = self.counts[i][j]; // i White
                    let [w_ji, d_ji, l_ji] = self.counts[j][i]; // j White
                    if w_ij + d_ij + l_ij + w_ji + d_ji + l_ji == 0.0 {
                        continue;
                    }
                    let g = if j > i { next[j] } else { gamma[j] };
                    a += w_ij + d_ij + l_ji + d_ji;
                    b += (d_ij + w_ij) * theta_w / (theta_w * gamma[i] + theta_d * g)
                        + (d_ij + l_ij) * theta_d * theta_w / (theta_d * theta_w * gamma[i] + g)
                        + (d_ji + w_ji) * theta_d / (theta_w * g + theta_d * gamma[i])
                        + (d_ji + l_ji) / (theta_d * theta_w * g + gamma[i]);
                }
                next[i] = if b > 0.0 { a / b } else { gamma[i] };
            }
            std::mem::swap(&mut gamma, &mut next);
            let mut diff = gamma
                .iter()
                .zip(&next)
                .map(|(a, b)| (a - b).abs() / (a + b))
                .fold(0.0, f64::max);
            if advantage.is_none() {
                let updated = self.advantage_step(&gamma, theta_w, theta_d);
                diff = diff.max((updated - theta_w).abs());
                theta_w = updated;
            }
            if drawelo.is_none() {
                let updated = self.drawelo_step(&gamma, theta_w, theta_d);
                diff = diff.max((updated - theta_d).abs());
                theta_d = updated;
            }
            if diff < 1e-5 {
                break;
            }
        }
        let mut elo: Vec<f64> = gamma.iter().map(|g| 400.0 * g.log10()).collect();
        let mean = elo.iter().sum::<f64>() / n as f64;
        elo.iter_mut().for_each(|e| *e -= mean);
        (elo, 400.0 * theta_w.log10(), 400.0 * theta_d.log10())
    }

    /// One MM step of the first-move advantage `θ_w = 10^(advantage/400)` at strengths
    /// `gamma = 10^(r/400)` (Hunter 2004, as BayesElo).
    pub(crate) fn advantage_step(&self, gamma: &[f64], theta_w: f64, theta_d: f64) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        self.for_each_white_game(|i, j, [w, d, l]| {
            num += w + d;
            den += (d + w) * gamma[i] / (theta_w * gamma[i] + theta_d * gamma[j])
                + (d + l) * theta_d * gamma[i] / (theta_d * theta_w * gamma[i] + gamma[j]);
        });
        num / den
    }

    /// One MM step of the draw parameter `θ_d = 10^(drawelo/400)`, as
    /// [`Condensed::advantage_step`].
    pub(crate) fn drawelo_step(&self, gamma: &[f64], theta_w: f64, theta_d: f64) -> f64 {
        let (mut num, mut den) = (0.0, 0.0);
        self.for_each_white_game(|i, j, [w, d, l]| {
            num += d;
            den += (d + w) * gamma[j] / (theta_w * gamma[i] + theta_d * gamma[j])
                + (d + l) * theta_w * gamma[i] / (theta_d * theta_w * gamma[i] + gamma[j]);
        });
        let c = num / den;
        c + (c * c + 1.0).sqrt()
    }

    /// Calls `f(white, black, [white wins, draws, black wins])` for every pair that met.
    fn for_each_white_game(&self, mut f: impl FnMut(usize, usize, [f64; 3])) {
        for i in 0..self.n {
            for j in (0..self.n).filter(|&j| j != i) {
                f(i, j, self.counts[i][j]);
            }
        }
    }

    /// Log-likelihood of the games of player `p` (or of all games if `None`).
    pub(crate) fn log_likelihood(&self, r: &[f64], adv: f64, de: f64, p: Option<usize>) -> f64 {
        let mut ll = 0.0;
        for i in 0..self.n {
            for j in 0..self.n {
                if i == j || p.is_some_and(|p| p != i && p != j) {
                    continue;
                }
                let [w, d, l] = self.counts[i][j];
                if w + d + l == 0.0 {
                    continue;
                }
                let pw = f(r[i] - r[j] + adv - de);
                let pl = f(r[j] - r[i] - adv - de);
                ll += w * pw.ln() + d * (1.0 - pw - pl).ln() + l * pl.ln();
            }
        }
        ll
    }

    /// Gradient of the log-likelihood of all games in the internal ratings `r`.
    pub(crate) fn gradient(&self, r: &[f64], adv: f64, de: f64) -> Vec<f64> {
        let mut grad = vec![0.0; self.n];
        self.for_each_white_game(|i, j, [w, d, l]| {
            if w + d + l > 0.0 {
                let (_, d1, _) = game_terms(r[i] - r[j] + adv, de);
                let g = w * d1[0] + d * d1[1] + l * d1[2];
                grad[i] += g;
                grad[j] -= g;
            }
        });
        grad
    }

    /// Observed information (minus the Hessian of the log-likelihood) in internal Elo.
    pub(crate) fn information(&self, r: &[f64], adv: f64, de: f64) -> Vec<Vec<f64>> {
        let n = self.n;
        let mut info = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let [w, d, l] = self.counts[i][j];
                if w + d + l == 0.0 {
                    continue;
                }
                // Second derivatives in Δ = r[i] - r[j] of ln P for each result.
                let (_, _, d2) = game_terms(r[i] - r[j] + adv, de);
                let h = w * d2[0] + d * d2[1] + l * d2[2];
                info[i][i] -= h;
                info[j][j] -= h;
                info[i][j] += h;
                info[j][i] += h;
            }
        }
        info
    }
}

/// Inverse of a symmetric positive-definite matrix (Gauss–Jordan with partial pivoting).
pub(crate) fn invert(m: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = m.len();
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut inv: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| if i == j { 1.0 } else { 0.0 }).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let p = a[col][col];
        for k in 0..n {
            a[col][k] /= p;
            inv[col][k] /= p;
        }
        for row in (0..n).filter(|&r| r != col) {
            let factor = a[row][col];
            for k in 0..n {
                a[row][k] -= factor * a[col][k];
                inv[row][k] -= factor * inv[col][k];
            }
        }
    }
    inv
}

/// Covariance of the mean-centred ratings: the information with the last player removed,
/// inverted, and mapped back by `A = [I - 1/n; -1/n]`.
#[allow(clippy::needless_range_loop)] // square-matrix arithmetic reads best with indices
pub(crate) fn centred_covariance(info: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let n = info.len();
    if n < 2 {
        return vec![vec![0.0; n]; n];
    }
    let reduced: Vec<Vec<f64>> = info[..n - 1]
        .iter()
        .map(|row| row[..n - 1].to_vec())
        .collect();
    let sigma = invert(&reduced);
    let a = |r: usize, c: usize| -> f64 {
        if r == c {
            1.0 - 1.0 / n as f64
        } else {
            -1.0 / n as f64
        }
    };
    let mut out = vec![vec![0.0; n]; n];
    for (r, row) in out.iter_mut().enumerate() {
        for (s, cell) in row.iter_mut().enumerate() {
            let mut sum = 0.0;
            for k in 0..n - 1 {
                for l in 0..n - 1 {
                    sum += a(r, k) * sigma[k][l] * a(s, l);
                }
            }
            *cell = sum;
        }
    }
    out
}
