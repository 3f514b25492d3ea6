//! Simulated pools: versions with known true ratings play game pairs (colours swapped,
//! each game drawn from BayesElo's model with a draw parameter and the first move's
//! advantage), chosen by one of three [`Strategy`]s until every member's 95 % interval
//! relative to the first is under a target. Deterministic for a seed (SplitMix64), pure.

use serde::Serialize;

use super::{PoolRatings, PoolSettings};
use crate::elo::{bayeselo_probabilities, bayeselo_scale};
use crate::games::{GameResult, GameTable};
use crate::sprt::{Decision, Sprt, SprtCounts};
pub use crate::takes::simulate::Rng;

/// The true draw parameter of simulated games, internal Elo (BayesElo's default: 27 %
/// draws between equals).
pub const DRAWELO: f64 = 97.3;

/// The true first-move advantage of simulated games, internal Elo (BayesElo's default).
pub const ADVANTAGE: f64 = 32.8;

/// Versions of an engine with known true ratings, and the games they play.
#[derive(Debug, Clone)]
pub struct World {
    /// True ratings, Elo on BayesElo's display scale (about logistic Elo), first at 0.
    pub truth: Vec<f64>,
    rng: Rng,
}

impl World {
    /// The versions of ratings `truth`, their games drawn from `seed`.
    pub fn new(truth: Vec<f64>, seed: u64) -> World {
        World {
            truth,
            rng: Rng(seed),
        }
    }

    /// One game: the result of `white` against `black`.
    pub fn game(&mut self, white: usize, black: usize) -> GameResult {
        let scale = bayeselo_scale(DRAWELO);
        let delta = (self.truth[white] - self.truth[black]) / scale;
        let [win, draw, _] = bayeselo_probabilities(delta + ADVANTAGE, DRAWELO);
        match self.rng.next_f64() {
            u if u < win => GameResult::WhiteWins,
            u if u < win + draw => GameResult::Draw,
            _ => GameResult::BlackWins,
        }
    }

    /// One game pair between `i` and `j` (`i` White first, then Black), recorded in
    /// `table` by the members' numbers; `i`'s half-points in each game.
    pub fn pair(&mut self, table: &mut GameTable, i: usize, j: usize) -> [u8; 2] {
        let first = self.game(i, j);
        let second = self.game(j, i);
        table.add_numbered(i, j, first, 1);
        table.add_numbered(j, i, second, 1);
        let half = |r: GameResult, white: bool| match (r, white) {
            (GameResult::Draw, _) => 1,
            (GameResult::WhiteWins, true) | (GameResult::BlackWins, false) => 2,
            _ => 0,
        };
        [half(first, true), half(second, false)]
    }
}

/// `n` versions' true ratings: the first at 0, then small steps of +2 to +12 Elo, except
/// every seventh (from the fifth) a jump of 40 to 80 Elo, alternately up and down (the
/// downs: regressions).
pub fn versions(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(n);
    let mut elo = 0.0;
    let mut jumps = 0;
    for k in 0..n {
        if k > 0 {
            let u = rng.next_f64();
            if k % 7 == 4 {
                let sign = if jumps % 2 == 0 { 1.0 } else { -1.0 };
                jumps += 1;
                elo += sign * (40.0 + 40.0 * u);
            } else {
                elo += 2.0 + 10.0 * u;
            }
        }
        out.push(elo);
    }
    out
}

/// How the pairs are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Strategy {
    /// The pool's rule ([`PoolRatings::plan`]).
    Pool,
    /// All pairs evenly, in rounds (the circle method), over and over.
    RoundRobin,
    /// Each version tested against the one before by an SPRT to its decision, then more
    /// pairs along the same links (where they most reduce the widest interval) until the
    /// target is met.
    SprtChain,
}

/// What one simulated run took and how well it rated.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Outcome {
    /// Games played.
    pub games: u64,
    /// Of which in the SPRTs (a chain of SPRTs; 0 otherwise).
    pub sprt_games: u64,
    /// The widest 95 % interval at the end, Elo.
    pub worst: f64,
    /// Mean absolute error of the ratings relative to the first, Elo.
    pub mean_error: f64,
    /// Largest absolute error, Elo.
    pub max_error: f64,
    /// Pairs of members rated in the wrong order.
    pub discordant: usize,
    /// Members not at their true rank.
    pub misplaced: usize,
    /// Whether the run stopped at the cap of games instead of at the target.
    pub capped: bool,
}

/// A simulated comparison's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The pool's settings (its rating model for every strategy; its rule for
    /// [`Strategy::Pool`]). The anchor is the first version.
    pub settings: PoolSettings,
    /// The target: every interval under this half-width, Elo.
    pub target: f64,
    /// Games at most.
    pub cap: u64,
    /// The SPRT of each link of [`Strategy::SprtChain`].
    pub sprt: Sprt,
}

impl Run {
    /// Plays `world`'s versions by `strategy` until every interval is under the target,
    /// refitting after each batch (a 64th of the pairs so far, at least half a pair a
    /// member).
    pub fn play(&self, strategy: Strategy, world: &mut World) -> Outcome {
        let n = world.truth.len();
        let mut table = GameTable::new();
        for k in 0..n {
            table.player(&format!("v{k}"));
        }
        let mut history: Vec<(usize, usize)> = Vec::new();
        let mut sprt_games = 0;
        if strategy == Strategy::SprtChain {
            for k in 1..n {
                let mut counts = SprtCounts::default();
                while 2 * (history.len() as u64) < self.cap {
                    counts.add(world.pair(&mut table, k, k - 1));
                    history.push((k - 1, k));
                    let decided = self.sprt.status(&counts.input());
                    if decided.is_ok_and(|s| s.decision != Decision::Continue) {
                        break;
                    }
                }
            }
            sprt_games = 2 * history.len() as u64;
        }
        let schedule = round_robin(n);
        let links: Vec<(usize, usize)> = (1..n).map(|k| (k - 1, k)).collect();
        let mut ratings = self.settings.rate(&table, None);
        let mut capped = false;
        while ratings.worst_interval() > self.target {
            if 2 * history.len() as u64 >= self.cap {
                capped = true;
                break;
            }
            let step = (n / 2).max(history.len() / 64).max(1);
            let pairs = match strategy {
                Strategy::Pool => ratings.plan(&self.settings, &history, &[], step),
                Strategy::RoundRobin => (0..step)
                    .map(|s| schedule[(history.len() + s) % schedule.len()])
                    .collect(),
                Strategy::SprtChain => {
                    let mut planner = super::Planner::new(&ratings, &self.settings);
                    (0..step)
                        .filter_map(|_| {
                            let (i, j) = planner.best(links.iter().copied())?;
                            planner.commit(i, j);
                            Some((i, j))
                        })
                        .collect()
                }
            };
            for (i, j) in pairs {
                world.pair(&mut table, i, j);
                history.push((i, j));
            }
            ratings = self.settings.rate(&table, Some(&ratings));
        }
        score(
            &ratings,
            &world.truth,
            2 * history.len() as u64,
            sprt_games,
            capped,
        )
    }
}

/// The games the pool's rule needs to bring every interval under `target` with no noise:
/// told the true ratings, the true advantage and draw parameter, and counting each pair's
/// expected information (the rank-one updates alone, no games drawn): what pairing by
/// information reaches at best, and a lower bound on the games of any choice of pairs.
pub fn design_games(truth: &[f64], settings: &PoolSettings, target: f64) -> Design {
    let n = truth.len();
    let scale = bayeselo_scale(DRAWELO);
    let a = settings.anchor.min(n.saturating_sub(1));
    let prior = settings.prior_sd * settings.prior_sd;
    // The prior's covariance of the anchored ratings: var(rₖ − rₐ) = 2σ², covariances σ².
    let covariance = (0..n)
        .map(|k| {
            (0..n)
                .map(|l| match (k == a || l == a, k == l) {
                    (true, _) => 0.0,
                    (false, true) => 2.0 * prior,
                    (false, false) => prior,
                })
                .collect()
        })
        .collect();
    let ratings = PoolRatings {
        anchor: a,
        elo: truth.iter().map(|t| t - truth[a]).collect(),
        interval: vec![0.0; n],
        // Counted as played, so the top-rated weigh as the settings say.
        games: vec![1; n],
        internal: truth.iter().map(|t| t / scale).collect(),
        covariance,
        advantage: ADVANTAGE,
        drawelo: DRAWELO,
        scale,
    };
    let limit = (target / (crate::normal::Z95 * scale)).powi(2);
    let mut planner = super::Planner::new(&ratings, settings);
    let mut counts = vec![vec![0u64; n]; n];
    let mut pairs = 0;
    while planner.widest() > limit && n > 1 {
        let Some((i, j)) = planner.best(super::all_pairs(n)) else {
            break;
        };
        planner.commit(i, j);
        counts[i][j] += 1;
        pairs += 1;
    }
    // The bound: for weights μ (a distribution over the members), f(λ) = Σₖ μₖ Vₖ is convex
    // in the pairs λ, so the best design of as many pairs has f* ≥ f − N maxᵢⱼ gᵢⱼ + Σ λᵢⱼ gᵢⱼ
    // (g = −∇f: the gain's numerator with weights μ), and its widest variance is at least
    // f*; variances scale as 1/N.
    let c = &planner.covariance;
    let widest = planner.widest();
    let mu: Vec<f64> = (0..n).map(|k| (c[k][k] / widest).powi(64)).collect();
    let total: f64 = mu.iter().sum();
    let g = |i: usize, j: usize| -> f64 {
        let spread: f64 = (0..n).map(|k| mu[k] * (c[k][i] - c[k][j]).powi(2)).sum();
        ratings.pair_information(i, j) * spread / total
    };
    let f: f64 = (0..n).map(|k| mu[k] * c[k][k]).sum::<f64>() / total;
    let largest = super::all_pairs(n)
        .map(|(i, j)| g(i, j))
        .fold(0.0, f64::max);
    let used: f64 = (super::all_pairs(n))
        .map(|(i, j)| counts[i][j] as f64 * g(i, j))
        .sum();
    let lower = (f - pairs as f64 * largest + used).max(0.0);
    Design {
        games: 2 * pairs,
        bound: 2 * (pairs as f64 * lower / limit).ceil() as u64,
    }
}

/// What pairing by information reaches with no noise ([`design_games`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Design {
    /// Games the rule needs, told the truth.
    pub games: u64,
    /// Games fewer than which no choice of pairs can reach the target (a bound by
    /// convexity, from the rule's design; the prior's part left out).
    pub bound: u64,
}

/// The round robin's pairs in rounds by the circle method: each round plays every member
/// once (one sits out when they are odd).
pub fn round_robin(n: usize) -> Vec<(usize, usize)> {
    let m = n + n % 2;
    let mut out = Vec::with_capacity(n * n.saturating_sub(1) / 2);
    for round in 0..m.saturating_sub(1) {
        let mut add = |a: usize, b: usize| {
            if a < n && b < n {
                out.push((a.min(b), a.max(b)));
            }
        };
        add(m - 1, round);
        for k in 1..m / 2 {
            add((round + k) % (m - 1), (round + m - 1 - k) % (m - 1));
        }
    }
    out
}

/// How well `ratings` rate versions of true ratings `truth`.
fn score(
    ratings: &PoolRatings,
    truth: &[f64],
    games: u64,
    sprt_games: u64,
    capped: bool,
) -> Outcome {
    let n = truth.len();
    let a = ratings.anchor;
    let errors: Vec<f64> = (0..n)
        .filter(|&k| k != a)
        .map(|k| (ratings.elo[k] - (truth[k] - truth[a])).abs())
        .collect();
    let discordant = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .filter(|&(i, j)| {
            let (t, e) = (truth[i] - truth[j], ratings.elo[i] - ratings.elo[j]);
            t != 0.0 && (t > 0.0) != (e > 0.0)
        })
        .count();
    let rank = |v: &[f64]| -> Vec<usize> {
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| v[y].total_cmp(&v[x]).then(x.cmp(&y)));
        order
    };
    let (true_rank, rated_rank) = (rank(truth), rank(&ratings.elo));
    Outcome {
        games,
        sprt_games,
        worst: ratings.worst_interval(),
        mean_error: errors.iter().sum::<f64>() / errors.len().max(1) as f64,
        max_error: errors.iter().copied().fold(0.0, f64::max),
        discordant,
        misplaced: (0..n).filter(|&p| true_rank[p] != rated_rank[p]).count(),
        capped,
    }
}
