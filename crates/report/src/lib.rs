//! Rating reports for people: text, JSON (via serde), CSV and a self-contained HTML page
//! with SVG charts drawn by plotters.
//!
//! A [`Report`] holds what a tournament produced: the joint rating table, the pairwise
//! cross-table, for an SPRT its trajectory (LLR and Elo estimate over the pairs) and
//! pentanomial counts, and why games ended. The tournament service fills it; this module
//! only renders.

use serde::Serialize;
use tourney_stats::{
    Decision, GameTable, Pentanomial, RatingTable, Sprt, SprtCounts, SprtStatus, StatsError,
    Summary,
};

mod charts;
mod format;
mod html;
mod progress;
mod text;
mod timeline;
mod tuning;
mod version_chart;

pub use charts::{elo_chart, llr_chart, pentanomial_chart};
pub use progress::{
    FormatProgress, GateLine, MatchProgress, ProgressTable, SwissLine, TakeProgress,
};
pub use timeline::{TimelineReport, TimelineRow};
pub use tuning::{SpsaParamRow, SpsaPoint, SpsaReport};
pub use version_chart::{VersionPoint, version_chart};

use format::percent;

/// Results between every two players: `cells[i][j]` is `[wins, draws, losses]` of player
/// `i` against player `j`, in the order of `names`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Crosstable {
    /// Player names, in table order.
    pub names: Vec<String>,
    /// `[wins, draws, losses]` of row player against column player.
    pub cells: Vec<Vec<[u64; 3]>>,
}

impl Crosstable {
    /// The cross-table of `table`, players in the order of `names` (e.g. the standings).
    pub fn new(table: &GameTable, names: &[String]) -> Crosstable {
        let index = |name: &String| table.names().iter().position(|n| n == name);
        let cells = names
            .iter()
            .map(|a| {
                names
                    .iter()
                    .map(|b| match (index(a), index(b)) {
                        (Some(i), Some(j)) if i != j => table.wdl(i, j),
                        _ => [0; 3],
                    })
                    .collect()
            })
            .collect();
        Crosstable {
            names: names.to_vec(),
            cells,
        }
    }
}

/// The SPRT state after some number of pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtPoint {
    /// Pairs counted (a prefix in pair order).
    pub pairs: u64,
    /// Log-likelihood ratio.
    pub llr: f64,
    /// Elo estimate.
    pub elo: f64,
    /// Lower end of its 95 % interval.
    pub elo_lower: f64,
    /// Upper end of its 95 % interval.
    pub elo_upper: f64,
}

/// Elo, nElo and LOS of an SPRT's pair counts, as fishtest's test pages show them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SprtEstimate {
    /// Elo estimate with the ends of its 95 % interval.
    pub elo: f64,
    /// Half-width of the 95 % Elo interval.
    pub elo_error: f64,
    /// Normalized Elo and the half-width of its 95 % interval.
    pub nelo: f64,
    /// Half-width of the 95 % nElo interval.
    pub nelo_error: f64,
    /// Likelihood of superiority of the tested engine.
    pub los: f64,
    /// Pairs counted.
    pub pairs: u64,
    /// Where every pair scored the same extreme (all won or all lost), the Elo estimate
    /// has no finite value: the one-sided 95 % bound it lies beyond (`elo` is then
    /// fishtest's regularized figure, not an estimate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elo_beyond: Option<f64>,
}

/// An SPRT between two engines: the test, where it stands, and how it got there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SprtReport {
    /// The test.
    pub sprt: Sprt,
    /// The LLR, bounds and decision of the sequential test: over the pairs in pair
    /// order with none missing, up to its decision.
    pub status: SprtStatus,
    /// The pairs that LLR counts ([`SprtReport::status`]).
    pub sequential_pairs: u64,
    /// Counts of every pair counted, the standings' pairs, including those finished
    /// after the decision or ahead of a missing pair.
    pub pentanomial: Pentanomial,
    /// Elo, nElo and LOS of those pairs.
    pub estimate: SprtEstimate,
    /// LLR and Elo over the number of pairs.
    pub trajectory: Vec<SprtPoint>,
}

impl SprtReport {
    /// The report of `sprt` on pair results in pair-index order (each pair: the tested
    /// player's half-points in its two games), with about `points` trajectory samples.
    /// The sequential test counts the first `sequential` pairs (those that follow each
    /// other with none missing) and stops at its first decision; the estimate and the
    /// pentanomial counts cover every pair, as the standings do.
    ///
    /// # Errors
    /// As [`Sprt::status`] (e.g. no pairs yet).
    pub fn from_pairs(
        sprt: Sprt,
        pairs: &[[u8; 2]],
        sequential: usize,
        points: usize,
    ) -> Result<SprtReport, StatsError> {
        let mut counts = SprtCounts::default();
        let mut trajectory = Vec::new();
        let ordered = &pairs[..sequential.min(pairs.len())];
        let every = (ordered.len() / points.max(1)).max(1) as u64;
        let total = ordered.len() as u64;
        let last = sprt.run(&mut counts, ordered.iter().copied(), |c, status| {
            if c.pairs % every == 0 || c.pairs == total || status.decision != Decision::Continue {
                let summary = Summary::pentanomial(c.pentanomial);
                trajectory.push(SprtPoint {
                    pairs: c.pairs,
                    llr: status.llr,
                    elo: summary.elo,
                    elo_lower: summary.elo_lower,
                    elo_upper: summary.elo_upper,
                });
            }
        })?;
        let status = match last {
            Some(status) => status,
            None => sprt.status(&counts.input())?,
        };
        let mut every_pair = SprtCounts::default();
        for &pair in pairs {
            every_pair.add(pair);
        }
        let all = every_pair.pentanomial;
        let summary = Summary::pentanomial(all);
        Ok(SprtReport {
            sprt,
            status,
            sequential_pairs: counts.pairs,
            pentanomial: all,
            estimate: SprtEstimate {
                elo: summary.elo,
                elo_error: summary.elo_error,
                nelo: summary.nelo,
                nelo_error: summary.nelo_error,
                los: summary.los,
                pairs: all.pairs(),
                elo_beyond: elo_beyond(&all),
            },
            trajectory,
        })
    }

    /// `LLR 2.95 [-2.94, 2.94], H1 accepted at pair 74 of 162`: the sequential test, and
    /// how many pairs it counted where that is not every pair.
    pub fn status_text(&self) -> String {
        let s = &self.status;
        let mut text = format!(
            "LLR {:.2} [{:.2}, {:.2}], {}",
            s.llr, s.lower_bound, s.upper_bound, s.decision
        );
        if self.sequential_pairs != self.estimate.pairs {
            if s.decision == Decision::Continue {
                text += &format!(
                    " (the LLR counts the first {} pairs, those in order with none missing)",
                    self.sequential_pairs
                );
            } else {
                text += &format!(
                    " at pair {} ({} more finished after the decision)",
                    self.sequential_pairs,
                    self.estimate.pairs.saturating_sub(self.sequential_pairs)
                );
            }
        }
        text
    }

    /// `Elo difference 5.2 ± 8.1 (95%), nElo 7.9 ± 12.3, LOS 89.3%, Ptnml(0-2) [...],
    /// 120 pairs (240 games)`; `Elo difference >692 (95%; every pair won), ...` where the
    /// estimate has no finite value.
    pub fn estimate_text(&self) -> String {
        let e = &self.estimate;
        // The direction is the results': with a few pairs the bound itself can lie on
        // the other side of 0 (3 pairs won: above -94).
        let won = self.pentanomial.bins[4] > 0;
        let elo = match e.elo_beyond {
            Some(bound) if won => format!("Elo difference >{bound:.0} (95%; every pair won)"),
            Some(bound) => format!("Elo difference <{bound:.0} (95%; every pair lost)"),
            None => format!(
                "Elo difference {:.2} ± {:.2} (95%), nElo {:.2} ± {:.2}",
                e.elo, e.elo_error, e.nelo, e.nelo_error
            ),
        };
        format!(
            "{elo}, LOS {:.1}%, Ptnml(0-2) {}, {} pairs ({} games)",
            e.los * 100.0,
            self.pentanomial,
            e.pairs,
            2 * e.pairs
        )
    }
}

/// Where every pair of `p` scored 2 (or every pair 0), the one-sided 95 % bound on the
/// Elo difference: the pair score `s` with `s^n = 0.05` (the least score under which `n`
/// straight wins are still that likely), as logistic Elo.
fn elo_beyond(p: &Pentanomial) -> Option<f64> {
    let n = p.pairs();
    let sign = match p.bins {
        [0, 0, 0, 0, w] if w == n && n > 0 => 1.0,
        [l, 0, 0, 0, 0] if l == n && n > 0 => -1.0,
        _ => return None,
    };
    let score = 0.05f64.powf(1.0 / n as f64);
    Some(sign * 400.0 * (score / (1.0 - score)).log10())
}

/// How the games from one opening went, from White's side: which openings are lopsided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpeningResult {
    /// Its index in the tournament's suite.
    pub index: u64,
    /// The position.
    pub position: String,
    /// Games played from it.
    pub games: u64,
    /// White's points in them (wins 1, draws ½).
    pub white_points: f64,
}

impl OpeningResult {
    /// White's score, 0 to 1.
    pub fn white_score(&self) -> f64 {
        self.white_points / self.games.max(1) as f64
    }
}

/// One worker's share of a tournament, and what it says about the worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerResult {
    /// The worker's host name.
    pub worker: String,
    /// Pairs it played.
    pub pairs: u64,
    /// Games it played.
    pub games: u64,
    /// Its pair results from each pairing's first engine's side, 0 to 2 points.
    pub pentanomial: [u64; 5],
    /// Its largest adjusted residual against the other workers (fishtest's): how far its
    /// results stand from theirs, in standard deviations.
    pub residual: f64,
    /// Games lost on time.
    pub time_losses: u64,
    /// Games lost by an engine crashing, moving illegally or going silent.
    pub engine_failures: u64,
    /// Its reports the coordinator refused.
    pub rejected: u64,
    /// Why it looks suspect (empty if it does not).
    pub suspect: Vec<String>,
    /// While its results are excluded by an operator: since when and why.
    pub excluded: Option<String>,
}

/// The workers of a tournament: whether their results agree (fishtest's homogeneity
/// test, a G test of their pentanomial results within each pairing) and each one's
/// figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WorkersReport {
    /// The G statistic over the workers whose results count.
    pub g: f64,
    /// Its degrees of freedom (0: nothing to compare).
    pub dof: u64,
    /// Its p-value: small when some worker's results differ from the rest's.
    pub p: f64,
    /// Workers that look suspect and are not excluded.
    pub suspects: u64,
    /// Each worker, suspect and excluded ones first, then by residual.
    pub workers: Vec<WorkerResult>,
}

impl WorkersReport {
    /// The test's line: `G = 3.1, 4 degrees of freedom, p = 0.54`.
    pub fn test_text(&self) -> String {
        let counted = (self.workers.iter())
            .filter(|w| w.excluded.is_none())
            .count();
        if self.dof == 0 && counted < 2 {
            "nothing to compare yet (one worker's results count)".to_string()
        } else if self.dof == 0 {
            "nothing to compare: in each pairing one worker played, or every pair scored \
             the same"
                .to_string()
        } else {
            format!(
                "G = {:.1}, {} degrees of freedom, p = {:.2e}",
                self.g, self.dof, self.p
            )
        }
    }
}

/// Everything a rating report shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Title, e.g. the tournament name.
    pub title: String,
    /// What was played and when, as labelled lines (game, format, limits, openings, each
    /// engine's spec or program hash, start, elapsed time, ETA): what a reader needs to
    /// trust the numbers.
    pub details: Vec<(String, String)>,
    /// What a reader must know before trusting the figures (repeated games, say), shown
    /// above them.
    pub notes: Vec<String>,
    /// Standings.
    pub ratings: RatingTable,
    /// Pairwise results.
    pub crosstable: Crosstable,
    /// For an SPRT: its state and history.
    pub sprt: Option<SprtReport>,
    /// Why games ended, with counts, most frequent first.
    pub terminations: Vec<(String, u64)>,
    /// Results per opening, most lopsided first (White's score furthest from ½, then
    /// most games), at most [`OPENINGS_SHOWN`] of them.
    pub openings: Vec<OpeningResult>,
    /// Games each engine lost by failing (engine, termination, games).
    pub engine_failures: Vec<(String, String, u64)>,
    /// Each outside engine's latency: the referee's time of a move less the engine's own
    /// report of its search (empty when no engine reported its time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<EngineLatency>,
    /// The workers that played the games (empty when not known, as for a file of games).
    pub workers: WorkersReport,
    /// For a tournament between registered engine versions: every version on one scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineReport>,
    /// For a tuning run: its parameters, their trajectories and the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spsa: Option<SpsaReport>,
    /// For a format that pairs by results: a grouped test's takes, a knockout's bracket,
    /// a Swiss's standings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<FormatProgress>,
    /// For a tournament that plays on a share of its score-adjudicated games: how often
    /// the adjudication was wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjudication_check: Option<AdjudicationCheck>,
}

/// An outside engine's latency over the moves whose search time it reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineLatency {
    /// The engine's name.
    pub engine: String,
    /// Moves with a reported search time.
    pub moves: u64,
    /// Mean of (the referee's time − the engine's time), in milliseconds.
    pub mean_ms: f64,
    /// The largest, in milliseconds.
    pub max_ms: u64,
}

impl EngineLatency {
    /// The latencies of the moves of each engine (name → per-move milliseconds), in
    /// name order; engines without a move left out.
    pub fn of(per_engine: std::collections::BTreeMap<String, Vec<u64>>) -> Vec<EngineLatency> {
        per_engine
            .into_iter()
            .filter(|(_, ms)| !ms.is_empty())
            .map(|(engine, ms)| EngineLatency {
                moves: ms.len() as u64,
                mean_ms: ms.iter().sum::<u64>() as f64 / ms.len() as f64,
                max_ms: ms.iter().copied().max().unwrap_or(0),
                engine,
            })
            .collect()
    }
}

/// Score-adjudicated games played on to their end: how many ended otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AdjudicationCheck {
    /// Games adjudicated (by any rule).
    pub adjudicated: u64,
    /// The share of score-adjudicated games played on, as the tournament asks.
    pub share: f64,
    /// Adjudicated games played on.
    pub played_on: u64,
    /// Of those, games that ended otherwise than adjudicated.
    pub overturned: u64,
}

impl AdjudicationCheck {
    /// The share of adjudications that were wrong, with its 95 % (Wilson) interval.
    pub fn wrong(&self) -> Option<(f64, f64, f64)> {
        if self.played_on == 0 {
            return None;
        }
        let (n, p) = (
            self.played_on as f64,
            self.overturned as f64 / self.played_on as f64,
        );
        let z = 1.959_963_984_540_054;
        let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
        let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / (1.0 + z * z / n);
        Some((p, (centre - half).max(0.0), (centre + half).min(1.0)))
    }

    /// One line: what was played on and how often the adjudication was wrong.
    pub fn text(&self) -> String {
        let head = format!(
            "{} of {} adjudicated games played on to their end ({}% asked)",
            self.played_on,
            self.adjudicated,
            self.share * 100.0
        );
        match self.wrong() {
            None => format!("{head}: none yet"),
            Some((p, lo, hi)) => format!(
                "{head}: {} ended otherwise, adjudication wrong in {} (95 % {}–{})",
                self.overturned,
                percent(p),
                percent(lo),
                percent(hi)
            ),
        }
    }
}

/// The most openings a report lists.
pub const OPENINGS_SHOWN: usize = 200;

/// The fewest games from an opening for the report to list it: fewer say nothing about
/// it (a tuning run of 600 openings plays each twice, and "0 % of 2 games" is noise).
pub const OPENING_MIN_GAMES: u64 = 10;

impl Report {
    /// The openings the tables list: those with at least [`OPENING_MIN_GAMES`] games.
    fn telling_openings(&self) -> impl Iterator<Item = &OpeningResult> {
        (self.openings.iter()).filter(|o| o.games >= OPENING_MIN_GAMES)
    }

    /// Sorts `openings` most lopsided first and keeps [`OPENINGS_SHOWN`] of them (the
    /// text and HTML tables then list those with at least [`OPENING_MIN_GAMES`] games).
    pub fn most_lopsided(mut openings: Vec<OpeningResult>) -> Vec<OpeningResult> {
        openings.sort_by(|a, b| {
            let tilt = |o: &OpeningResult| (o.white_score() - 0.5).abs();
            tilt(b)
                .total_cmp(&tilt(a))
                .then(b.games.cmp(&a.games))
                .then(a.index.cmp(&b.index))
        });
        openings.truncate(OPENINGS_SHOWN);
        openings
    }
}
