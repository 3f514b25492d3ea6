//! Rating reports for people: text, JSON (via serde), CSV and a self-contained HTML page
//! with SVG charts drawn by plotters.
//!
//! A [`Report`] holds what a tournament produced: the joint rating table, the pairwise
//! cross-table, for an SPRT its trajectory (LLR and Elo estimate over the pairs) and
//! pentanomial counts, and why games ended. The tournament service fills it; this module
//! only renders.

use plotters::prelude::*;
use serde::Serialize;
use std::fmt::Write as _;

use crate::StatsError;
use crate::counts::Pentanomial;
use crate::games::GameTable;
use crate::ratings::{Bound, RatingTable};
use crate::sprt::{Decision, Sprt, SprtCounts, SprtStatus};
use crate::summary::Summary;

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
}

/// An SPRT between two engines: the test, where it stands, and how it got there.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SprtReport {
    /// The test.
    pub sprt: Sprt,
    /// The current LLR, bounds and decision.
    pub status: SprtStatus,
    /// Pair counts so far.
    pub pentanomial: Pentanomial,
    /// Elo, nElo and LOS of those pairs.
    pub estimate: SprtEstimate,
    /// LLR and Elo over the number of pairs.
    pub trajectory: Vec<SprtPoint>,
}

impl SprtReport {
    /// The report of `sprt` on pair results in pair-index order (each pair: the tested
    /// player's half-points in its two games), with about `points` trajectory samples. The
    /// test stops at its first decision: pairs after it are not counted.
    ///
    /// # Errors
    /// As [`Sprt::status`] (e.g. no pairs yet).
    pub fn from_pairs(
        sprt: Sprt,
        pairs: &[[u8; 2]],
        points: usize,
    ) -> Result<SprtReport, StatsError> {
        let mut counts = SprtCounts::default();
        let mut trajectory = Vec::new();
        let every = (pairs.len() / points.max(1)).max(1) as u64;
        let total = pairs.len() as u64;
        let last = sprt.run(&mut counts, pairs.iter().copied(), |c, status| {
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
        let summary = Summary::pentanomial(counts.pentanomial);
        Ok(SprtReport {
            sprt,
            status,
            pentanomial: counts.pentanomial,
            estimate: SprtEstimate {
                elo: summary.elo,
                elo_error: summary.elo_error,
                nelo: summary.nelo,
                nelo_error: summary.nelo_error,
                los: summary.los,
                pairs: counts.pairs,
            },
            trajectory,
        })
    }

    /// `Elo 5.2 ± 8.1 (95%), nElo 7.9 ± 12.3, LOS 89.3%, Ptnml(0-2) [...], 120 pairs`.
    pub fn estimate_text(&self) -> String {
        let e = &self.estimate;
        format!(
            "Elo {:.2} ± {:.2} (95%), nElo {:.2} ± {:.2}, LOS {:.1}%, Ptnml(0-2) {}, {} pairs ({} games)",
            e.elo,
            e.elo_error,
            e.nelo,
            e.nelo_error,
            e.los * 100.0,
            self.pentanomial,
            e.pairs,
            2 * e.pairs
        )
    }
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
        if self.dof == 0 {
            "nothing to compare yet (fewer than two workers in a pairing)".to_string()
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
    /// The workers that played the games (empty when not known, as for a file of games).
    pub workers: WorkersReport,
    /// For a tournament between registered engine versions: every version on one scale.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeline: Option<TimelineReport>,
    /// For a tuning run: its parameters, their trajectories and the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spsa: Option<SpsaReport>,
    /// For a tournament that plays on a share of its score-adjudicated games: how often
    /// the adjudication was wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adjudication_check: Option<AdjudicationCheck>,
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

/// A tuning run (SPSA) as far as its completed pairs take it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaReport {
    /// Completed pairs folded in (the prefix without gaps).
    pub pairs: u64,
    /// Pairs the run plays.
    pub planned: u64,
    /// Each parameter now.
    pub params: Vec<SpsaParamRow>,
    /// The values after every so many pairs, from the start (at most a few hundred
    /// points).
    pub trajectory: Vec<SpsaPoint>,
    /// The tuned values as the engine takes them: a built-in player's spec, or an outside
    /// engine's options (`name=value ...`).
    pub result: String,
    /// The start values, the same way.
    pub start: String,
    /// The verification SPRT's bounds (elo0, elo1), when the run has one.
    pub verify: Option<(f64, f64)>,
    /// The verification SPRT's tournament, once submitted.
    pub verification: Option<u64>,
}

/// One tuned parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaParamRow {
    /// Its name.
    pub name: String,
    /// Where it started.
    pub start: f64,
    /// Its least value.
    pub min: f64,
    /// Its greatest value.
    pub max: f64,
    /// Its value now.
    pub value: f64,
    /// The perturbation of the next pair.
    pub c_k: f64,
    /// The learning rate of the next pair.
    pub r_k: f64,
}

/// The parameters after `pairs` pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaPoint {
    /// Pairs folded in.
    pub pairs: u64,
    /// Each parameter's value, in the order of [`SpsaReport::params`].
    pub values: Vec<f64>,
}

impl SpsaReport {
    /// The section as text.
    pub fn text(&self) -> String {
        let mut out = format!(
            "SPSA: {} of {} pairs folded in\n  {:<20} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}\n",
            self.pairs, self.planned, "parameter", "start", "now", "min", "max", "c_k", "r_k"
        );
        for p in &self.params {
            let _ = writeln!(
                out,
                "  {:<20} {:>9.2} {:>9.2} {:>9} {:>9} {:>8.2} {:>9.5}",
                p.name, p.start, p.value, p.min, p.max, p.c_k, p.r_k
            );
        }
        let _ = writeln!(out, "  Tuned: {}\n  Start: {}", self.result, self.start);
        match (self.verify, self.verification) {
            (_, Some(id)) => {
                let _ = writeln!(out, "  Verification SPRT: tournament #{id}");
            }
            (Some((elo0, elo1)), None) => {
                let _ = writeln!(
                    out,
                    "  Verification SPRT [{elo0}, {elo1}] of tuned against start: submitted when the run ends"
                );
            }
            (None, None) => {}
        }
        out
    }

    /// The section as HTML: the table, the result, the link to the verification and one
    /// trajectory chart per parameter; `link` makes a tournament's address (`None`: the
    /// tournament named unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = format!(
            "<p>{} of {} pairs folded in.</p>\n<table><tr><th>Parameter</th><th>Start</th><th>Now</th><th>Min</th><th>Max</th><th>c<sub>k</sub></th><th>r<sub>k</sub></th></tr>\n",
            self.pairs, self.planned
        );
        for p in &self.params {
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.5}</td></tr>",
                escape(&p.name),
                p.start,
                p.value,
                p.min,
                p.max,
                p.c_k,
                p.r_k
            );
        }
        let _ = writeln!(
            page,
            "</table>\n<p>Tuned: <code>{}</code><br>Start: <code>{}</code></p>",
            escape(&self.result),
            escape(&self.start)
        );
        match (self.verify, self.verification) {
            (_, Some(id)) => {
                let tournament = anchor(link(id), &format!("tournament #{id}"));
                let _ = writeln!(page, "<p>Verification SPRT: {tournament}</p>");
            }
            (Some((elo0, elo1)), None) => {
                let _ = writeln!(
                    page,
                    "<p>Verification SPRT [{elo0}, {elo1}] of tuned against start: submitted when the run ends.</p>"
                );
            }
            (None, None) => {}
        }
        page += &self.charts().concat();
        page
    }

    /// Each parameter's value over the pairs, within its range (the start value marked), as
    /// SVG.
    pub fn charts(&self) -> Vec<String> {
        (self.params.iter().enumerate())
            .map(|(i, p)| self.chart(i, p))
            .collect()
    }

    /// Parameter `i`'s value over the pairs, as SVG.
    fn chart(&self, i: usize, p: &SpsaParamRow) -> String {
        let xs = 0.0..(self.trajectory.last().map_or(1, |t| t.pairs) as f64).max(1.0);
        let pad = (p.max - p.min) * 0.02;
        svg(640, 260, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption(&p.name, ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(50)
                .build_cartesian_2d(xs.clone(), p.min - pad..p.max + pad)?;
            chart
                .configure_mesh()
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", 14))
                .x_desc("pairs")
                .draw()?;
            chart.draw_series(LineSeries::new(
                vec![(xs.start, p.start), (xs.end, p.start)],
                RED.stroke_width(1),
            ))?;
            chart.draw_series(LineSeries::new(
                (self.trajectory.iter()).filter_map(|t| Some((t.pairs as f64, *t.values.get(i)?))),
                BLUE.stroke_width(2),
            ))?;
            Ok(())
        })
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

/// A rating with its bound mark: `>386` for a perfect score.
fn rating_text(elo: f64, bound: Option<Bound>) -> String {
    match bound {
        Some(Bound::AtLeast) => format!(">{elo:.0}"),
        Some(Bound::AtMost) => format!("<{elo:.0}"),
        None => format!("{elo:.0}"),
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// `text` (plain HTML) linked to `url`, or alone without one.
fn anchor(url: Option<String>, text: &str) -> String {
    match url {
        Some(url) => format!("<a href=\"{}\">{text}</a>", escape(&url)),
        None => text.to_string(),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

impl Report {
    /// The standings as a text table (BayesElo's columns plus LOS to the next player).
    pub fn standings_text(&self) -> String {
        let width = self
            .ratings
            .players
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!(
            "{:>4} {:<width$} {:>6} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6}\n",
            "Rank", "Name", "Elo", "+", "-", "Games", "Score", "Draws", "LOS"
        );
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let los = p.los_next.map_or(String::new(), percent);
            let _ = writeln!(
                out,
                "{:>4} {:<width$} {:>6} {:>5.0} {:>5.0} {:>6} {:>6} {:>6} {:>6}",
                rank + 1,
                p.name,
                rating_text(p.elo, p.bound),
                p.plus,
                p.minus,
                p.games,
                percent(p.score),
                percent(p.draws),
                los
            );
        }
        out
    }

    /// The whole report as text.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n\n", self.title);
        for note in &self.notes {
            let _ = writeln!(out, "Note: {note}\n");
        }
        if !self.details.is_empty() {
            let width = self
                .details
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            for (label, value) in &self.details {
                let _ = writeln!(out, "{label:<width$}  {value}");
            }
            out.push('\n');
        }
        if let Some(s) = &self.spsa {
            out += &s.text();
            out.push('\n');
        }
        out += &self.standings_text();
        let c = &self.crosstable;
        if c.names.len() > 1 {
            out += "\nCross-table (wins-draws-losses of the row player)\n";
            let width = c.names.iter().map(|n| n.len()).max().unwrap_or(4);
            let _ = write!(out, "{:width$}", "");
            for name in &c.names {
                let _ = write!(out, " {:>11}", name.chars().take(11).collect::<String>());
            }
            out.push('\n');
            for (i, name) in c.names.iter().enumerate() {
                let _ = write!(out, "{name:width$}");
                for (j, [w, d, l]) in c.cells[i].iter().enumerate() {
                    let cell = if i == j {
                        "-".to_string()
                    } else {
                        format!("{w}-{d}-{l}")
                    };
                    let _ = write!(out, " {cell:>11}");
                }
                out.push('\n');
            }
        }
        if let Some(s) = &self.sprt {
            let _ = writeln!(
                out,
                "\nSPRT {} [{}, {}]: LLR {:.2} [{:.2}, {:.2}], {}\n  {}",
                s.sprt.model,
                s.sprt.elo0,
                s.sprt.elo1,
                s.status.llr,
                s.status.lower_bound,
                s.status.upper_bound,
                s.status.decision,
                s.estimate_text()
            );
        }
        if !self.terminations.is_empty() {
            out += "\nTerminations\n";
            for (reason, n) in &self.terminations {
                let _ = writeln!(out, "  {reason}: {n}");
            }
        }
        if let Some(check) = &self.adjudication_check {
            let _ = writeln!(out, "\nAdjudication check: {}", check.text());
        }
        if !self.engine_failures.is_empty() {
            out += "\nEngine failures (games lost)\n";
            for (engine, termination, n) in &self.engine_failures {
                let _ = writeln!(out, "  {engine}: {termination} {n}");
            }
        }
        out += &self.workers_text();
        if self.telling_openings().next().is_some() {
            let _ = writeln!(
                out,
                "\nOpenings, most lopsided first (White's score; those with {OPENING_MIN_GAMES} games or more)"
            );
            for o in self.telling_openings().take(10) {
                let _ = writeln!(
                    out,
                    "  #{:<5} {:>6} of {:<4} games  {}",
                    o.index,
                    percent(o.white_score()),
                    o.games,
                    o.position
                );
            }
        }
        out
    }

    /// The workers' table as text (empty without workers).
    pub fn workers_text(&self) -> String {
        let w = &self.workers;
        if w.workers.is_empty() {
            return String::new();
        }
        let width = w
            .workers
            .iter()
            .map(|r| r.worker.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut out = format!(
            "\nWorkers ({}; {} suspect)\n  {:<width$} {:>6} {:>22} {:>8} {:>5} {:>8} {:>7}\n",
            w.test_text(),
            w.suspects,
            "Worker",
            "Pairs",
            "Ptnml(0-2)",
            "Residual",
            "Time",
            "Failures",
            "Refused"
        );
        for r in &w.workers {
            let ptnml = r.pentanomial.map(|n| n.to_string()).join(", ");
            let _ = writeln!(
                out,
                "  {:<width$} {:>6} {:>22} {:>8.2} {:>5} {:>8} {:>7}",
                r.worker, r.pairs, ptnml, r.residual, r.time_losses, r.engine_failures, r.rejected
            );
            if let Some(why) = &r.excluded {
                let _ = writeln!(out, "    excluded {why}");
            }
            for why in &r.suspect {
                let _ = writeln!(out, "    suspect: {why}");
            }
        }
        out
    }

    /// The standings as CSV with a header line.
    pub fn csv(&self) -> String {
        let mut out = String::from("rank,name,elo,plus,minus,games,score,draws,los_next,bound\n");
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let name = if p.name.contains([',', '"']) {
                format!("\"{}\"", p.name.replace('"', "\"\""))
            } else {
                p.name.clone()
            };
            let bound = match p.bound {
                Some(Bound::AtLeast) => ">",
                Some(Bound::AtMost) => "<",
                None => "",
            };
            let _ = writeln!(
                out,
                "{},{name},{:.2},{:.2},{:.2},{},{:.4},{:.4},{},{bound}",
                rank + 1,
                p.elo,
                p.plus,
                p.minus,
                p.games,
                p.score,
                p.draws,
                p.los_next.map_or(String::new(), |l| format!("{l:.4}"))
            );
        }
        out
    }

    /// A self-contained HTML page (inline CSS and SVG, no scripts or network); `link` makes
    /// the address of another tournament it names (`None`: named unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<style>\
             body{{font-family:sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse;margin:1em 0}}\
             td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}th{{background:#f4f4f4}}\
             td.name{{text-align:left}}section{{margin-bottom:2em}}</style></head><body>\n<h1>{title}</h1>\n",
            title = escape(&self.title)
        );
        for note in &self.notes {
            let _ = writeln!(
                page,
                "<p class=\"note\" style=\"background:#fff3cd;padding:.5em\"><strong>Note:</strong> {}</p>",
                escape(note)
            );
        }
        if !self.details.is_empty() {
            page += "<section id=\"details\"><h2>What was played</h2>\n<table>\n";
            for (label, value) in &self.details {
                let _ = writeln!(
                    page,
                    "<tr><th>{}</th><td class=\"name\">{}</td></tr>",
                    escape(label),
                    escape(value)
                );
            }
            page += "</table></section>\n";
        }
        if let Some(s) = &self.spsa {
            page += "<section id=\"spsa\"><h2>Tuning (SPSA)</h2>\n";
            page += &s.html(&link);
            page += "</section>\n";
        }
        page += "<section id=\"standings\"><h2>Standings</h2>\n<table><tr><th>Rank</th><th>Name</th><th>Elo</th><th>+</th><th>−</th><th>Games</th><th>Score</th><th>Draws</th><th>LOS</th></tr>\n";
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rank + 1,
                escape(&p.name),
                escape(&rating_text(p.elo, p.bound)),
                p.plus,
                p.minus,
                p.games,
                percent(p.score),
                percent(p.draws),
                p.los_next.map_or(String::new(), percent)
            );
        }
        let _ = writeln!(page, "</table>\n<p>{}</p>", escape(&self.ratings.method));
        page += &self.standings_chart();
        page += "</section>\n";

        let c = &self.crosstable;
        page += "<section id=\"crosstable\"><h2>Cross-table</h2>\n<p>Wins-draws-losses of the row player.</p>\n<table><tr><th></th>";
        for name in &c.names {
            let _ = write!(page, "<th>{}</th>", escape(name));
        }
        page += "</tr>\n";
        for (i, name) in c.names.iter().enumerate() {
            let _ = write!(page, "<tr><td class=\"name\">{}</td>", escape(name));
            for (j, [w, d, l]) in c.cells[i].iter().enumerate() {
                if i == j {
                    page += "<td>—</td>";
                } else {
                    let _ = write!(page, "<td>{w}-{d}-{l}</td>");
                }
            }
            page += "</tr>\n";
        }
        page += "</table></section>\n";

        if let Some(s) = &self.sprt {
            let _ = writeln!(
                page,
                "<section id=\"sprt\"><h2>SPRT</h2>\n<p>{} bounds [{}, {}], α {}, β {}: LLR {:.2} in [{:.2}, {:.2}] — <strong>{}</strong></p>",
                s.sprt.model,
                s.sprt.elo0,
                s.sprt.elo1,
                s.sprt.alpha,
                s.sprt.beta,
                s.status.llr,
                s.status.lower_bound,
                s.status.upper_bound,
                s.status.decision
            );
            let _ = writeln!(
                page,
                "<p id=\"sprt-estimate\">{}</p>",
                escape(&s.estimate_text())
            );
            page += &llr_chart(s);
            page += &elo_chart(s);
            page += &pentanomial_chart(&s.pentanomial);
            page += "</section>\n";
        }
        if !self.terminations.is_empty() {
            page += "<section id=\"terminations\"><h2>Terminations</h2>\n<table><tr><th>Reason</th><th>Games</th></tr>\n";
            for (reason, n) in &self.terminations {
                let _ = writeln!(
                    page,
                    "<tr><td class=\"name\">{}</td><td>{n}</td></tr>",
                    escape(reason)
                );
            }
            page += "</table>\n";
            if let Some(check) = &self.adjudication_check {
                let _ = writeln!(
                    page,
                    "<p id=\"adjudication-check\">Adjudication check: {}</p>",
                    escape(&check.text())
                );
            }
            page += "</section>\n";
        }
        if !self.engine_failures.is_empty() {
            page += "<section id=\"engine-failures\"><h2>Engine failures</h2>\n<table><tr><th>Engine</th><th>Reason</th><th>Games lost</th></tr>\n";
            for (engine, reason, n) in &self.engine_failures {
                let _ = writeln!(
                    page,
                    "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{n}</td></tr>",
                    escape(engine),
                    escape(reason)
                );
            }
            page += "</table></section>\n";
        }
        let w = &self.workers;
        if !w.workers.is_empty() {
            let _ = writeln!(
                page,
                "<section id=\"workers\"><h2>Workers</h2>\n<p>Homogeneity of their results: {}; {} suspect.</p>\n<table><tr><th>Worker</th><th>Pairs</th><th>Ptnml(0-2)</th><th>Residual</th><th>Time losses</th><th>Engine failures</th><th>Refused</th><th>Evidence</th></tr>",
                escape(&w.test_text()),
                w.suspects
            );
            for r in &w.workers {
                let mut evidence: Vec<String> = r.suspect.iter().map(|s| escape(s)).collect();
                if let Some(why) = &r.excluded {
                    evidence.insert(0, format!("<strong>excluded</strong> {}", escape(why)));
                }
                let style = if r.excluded.is_some() || !r.suspect.is_empty() {
                    " style=\"background:#fde2e1\""
                } else {
                    ""
                };
                let _ = writeln!(
                    page,
                    "<tr{style}><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td></tr>",
                    escape(&r.worker),
                    r.pairs,
                    r.pentanomial.map(|n| n.to_string()).join(", "),
                    r.residual,
                    r.time_losses,
                    r.engine_failures,
                    r.rejected,
                    evidence.join("<br>")
                );
            }
            page += "</table></section>\n";
        }
        if self.telling_openings().next().is_some() {
            let _ = writeln!(
                page,
                "<section id=\"openings\"><h2>Openings</h2>\n<p>White's score from each opening with {OPENING_MIN_GAMES} games or more, most lopsided first.</p>\n<table><tr><th>#</th><th>Position</th><th>Games</th><th>White's score</th></tr>"
            );
            for o in self.telling_openings().take(50) {
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td></tr>",
                    o.index,
                    escape(&o.position),
                    o.games,
                    percent(o.white_score())
                );
            }
            page += "</table></section>\n";
        }
        if let Some(t) = &self.timeline {
            page += "<section id=\"timeline\"><h2>Versions timeline</h2>\n";
            page += &t.body_html(&link);
            page += "</section>\n";
        }
        page += "</body></html>\n";
        page
    }

    /// Rating intervals, best player on top, as SVG (empty without players).
    pub fn standings_chart(&self) -> String {
        let players = &self.ratings.players;
        if players.is_empty() {
            return String::new();
        }
        let lo = players
            .iter()
            .map(|p| p.elo - p.minus)
            .fold(f64::INFINITY, f64::min);
        let hi = players
            .iter()
            .map(|p| p.elo + p.plus)
            .fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.05).max(1.0);
        let n = players.len();
        // Sized for reading: rows of 44 px, names at 15 px in a column as wide as the
        // longest name.
        let longest = players
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(4);
        let name_width = (longest as u32 * 9 + 20).clamp(80, 260);
        svg(860, 110 + 44 * n as u32, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption("Ratings with 95% intervals", ("sans-serif", 20))
                .margin(14)
                .x_label_area_size(44)
                .y_label_area_size(name_width)
                .build_cartesian_2d(lo - pad..hi + pad, -0.5..n as f64 - 0.5)?;
            let label = |y: &f64| {
                let i = n as i64 - 1 - y.round() as i64;
                players
                    .get(i as usize)
                    .map_or(String::new(), |p| p.name.clone())
            };
            chart
                .configure_mesh()
                .y_labels(n)
                .y_label_formatter(&label)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 15))
                .x_desc("Elo")
                .draw()?;
            for (i, p) in players.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(p.elo - p.minus, y), (p.elo + p.plus, y)],
                    BLUE.stroke_width(2),
                )))?;
                chart.draw_series(std::iter::once(Circle::new((p.elo, y), 4, BLUE.filled())))?;
            }
            Ok(())
        })
    }
}

/// Draws into an SVG of the given size; on a drawing error the chart is left out with a
/// note rather than failing the report.
fn svg(
    width: u32,
    height: u32,
    draw: impl for<'a> FnOnce(
        &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>,
) -> String {
    let mut buf = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root).map_err(|e| e.to_string()));
        drawn.and_then(|()| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => format!("<figure>{buf}</figure>\n"),
        Err(e) => format!("<p>(chart unavailable: {})</p>\n", escape(&e)),
    }
}

fn x_range(points: &[SprtPoint]) -> std::ops::Range<f64> {
    0.0..points.last().map_or(1.0, |p| p.pairs as f64).max(1.0)
}

/// The LLR over the pairs with the decision bounds, as SVG.
pub fn llr_chart(s: &SprtReport) -> String {
    let points = &s.trajectory;
    let (lower, upper) = (s.status.lower_bound, s.status.upper_bound);
    let lo = points.iter().map(|p| p.llr).fold(lower, f64::min) - 0.2;
    let hi = points.iter().map(|p| p.llr).fold(upper, f64::max) + 0.2;
    let xs = x_range(points);
    svg(640, 320, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("LLR", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(xs.clone(), lo..hi)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style(("sans-serif", 14))
            .x_desc("pairs")
            .y_desc("LLR")
            .draw()?;
        for bound in [lower, upper] {
            chart.draw_series(LineSeries::new(
                vec![(xs.start, bound), (xs.end, bound)],
                RED.stroke_width(1),
            ))?;
        }
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.pairs as f64, p.llr)),
            BLUE.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// The Elo estimate and its interval over the pairs, as SVG.
pub fn elo_chart(s: &SprtReport) -> String {
    let points: Vec<&SprtPoint> = s
        .trajectory
        .iter()
        .filter(|p| p.elo_lower.is_finite() && p.elo_upper.is_finite())
        .collect();
    let lo = points
        .iter()
        .map(|p| p.elo_lower)
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.elo_upper)
        .fold(f64::NEG_INFINITY, f64::max);
    if points.is_empty() || lo >= hi {
        return String::new();
    }
    let xs = x_range(&s.trajectory);
    svg(640, 320, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Elo estimate with 95% interval", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(xs, lo..hi)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 14))
            .x_desc("pairs")
            .y_desc("Elo")
            .draw()?;
        let band: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.pairs as f64, p.elo_upper))
            .chain(points.iter().rev().map(|p| (p.pairs as f64, p.elo_lower)))
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.15))))?;
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.pairs as f64, p.elo)),
            BLUE.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// Pair-result counts (0 to 2 points in half-point bins), as SVG.
pub fn pentanomial_chart(p: &Pentanomial) -> String {
    let top = p.bins.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.1;
    const LABELS: [&str; 5] = ["0", "½", "1", "1½", "2"];
    svg(640, 280, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Pentanomial: pairs by points of the tested engine",
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5f64..4.5f64, 0f64..top)?;
        chart
            .configure_mesh()
            .x_labels(5)
            .x_label_formatter(&|x: &f64| {
                LABELS
                    .get(x.round() as usize)
                    .map_or(String::new(), |s| s.to_string())
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 14))
            .y_desc("pairs")
            .draw()?;
        chart.draw_series(p.bins.iter().enumerate().map(|(k, &n)| {
            Rectangle::new(
                [(k as f64 - 0.35, 0.0), (k as f64 + 0.35, n as f64)],
                BLUE.mix(0.6).filled(),
            )
        }))?;
        Ok(())
    })
}

/// One engine version on a regression timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// The version.
    pub name: String,
    /// The version it was made from (empty: none).
    pub parent: String,
    /// What it plays as (a spec, or a command with its options).
    pub plays: String,
    /// Its joint rating, absent without games against another version.
    pub elo: Option<f64>,
    /// Upper half-width of the 95 % interval.
    pub plus: f64,
    /// Lower half-width of the 95 % interval.
    pub minus: f64,
    /// Games against other versions.
    pub games: u64,
    /// Points per game (0 to 1).
    pub score: f64,
    /// The tournaments that measured it.
    pub tournaments: Vec<u64>,
}

/// Every engine version on one scale, oldest first: the regression timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineReport {
    /// The version rated 0 (empty: none).
    pub anchor: String,
    /// Games between versions counted.
    pub games: u64,
    /// The versions, oldest first.
    pub rows: Vec<TimelineRow>,
}

impl TimelineReport {
    /// A plain-text table.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} games between versions; {} at 0\n{:<24} {:<24} {:>8} {:>13} {:>7} {:>6}  tournaments\n",
            self.games,
            if self.anchor.is_empty() {
                "nothing"
            } else {
                &self.anchor
            },
            "version",
            "parent",
            "Elo",
            "95 %",
            "games",
            "score"
        );
        for r in &self.rows {
            let (elo, interval) = match r.elo {
                Some(elo) => (
                    format!("{elo:.1}"),
                    format!("-{:.1}/+{:.1}", r.minus, r.plus),
                ),
                None => ("-".into(), "no games".into()),
            };
            let ids: Vec<String> = r.tournaments.iter().map(|i| format!("#{i}")).collect();
            let _ = writeln!(
                out,
                "{:<24} {:<24} {elo:>8} {interval:>13} {:>7} {:>5.1}%  {}",
                r.name,
                r.parent,
                r.games,
                r.score * 100.0,
                ids.join(" ")
            );
        }
        out
    }

    /// A self-contained HTML page: the chart of Elo by version with its intervals, and the
    /// table, each tournament linked by `link` (its URL; `None`: shown unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Engine versions: timeline</title>\n<style>\
             body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}\
             td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}\
             td.name{text-align:left}</style></head><body>\n<h1>Engine versions: timeline</h1>\n",
        );
        page += &self.body_html(link);
        page += "</body></html>\n";
        page
    }

    /// What the page shows, without the page: a line saying what was rated, the chart and
    /// the table (each tournament linked by `link`).
    pub fn body_html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let anchor = if self.anchor.is_empty() {
            "nothing"
        } else {
            &self.anchor
        };
        format!(
            "<p>{} games between versions of all tournaments, rated jointly (BayesElo); {} at 0.</p>\n{}{}",
            self.games,
            escape(anchor),
            self.chart(),
            self.table_html(link)
        )
    }

    /// The versions as an HTML table, each tournament linked by `link` (its URL; `None`:
    /// shown unlinked).
    pub fn table_html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut table = String::from(
            "<table id=\"versions\"><tr><th>Version</th><th>Parent</th><th>Elo</th><th>95 %</th><th>Games</th><th>Score</th><th>Measured by</th><th>Plays</th></tr>\n",
        );
        for r in &self.rows {
            let links: Vec<String> = r
                .tournaments
                .iter()
                .map(|&id| anchor(link(id), &format!("#{id}")))
                .collect();
            let (elo, interval) = match r.elo {
                Some(elo) => (
                    format!("{elo:.1}"),
                    format!("−{:.1} / +{:.1}", r.minus, r.plus),
                ),
                None => ("–".into(), "no games".into()),
            };
            let _ = writeln!(
                table,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{elo}</td><td>{interval}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
                escape(&r.name),
                escape(&r.parent),
                r.games,
                percent(r.score),
                links.join(" "),
                escape(&r.plays)
            );
        }
        table + "</table>\n"
    }

    /// Elo by version (oldest on the left) with 95 % intervals, as SVG (empty when no
    /// version has games).
    pub fn chart(&self) -> String {
        let rated: Vec<(usize, &TimelineRow, f64)> = (self.rows.iter().enumerate())
            .filter_map(|(i, r)| r.elo.map(|e| (i, r, e)))
            .collect();
        if rated.is_empty() {
            return String::new();
        }
        let lo = rated
            .iter()
            .map(|(_, r, e)| e - r.minus)
            .fold(f64::INFINITY, f64::min);
        let hi = rated
            .iter()
            .map(|(_, r, e)| e + r.plus)
            .fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.08).max(5.0);
        let n = self.rows.len();
        svg(860, 420, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption("Elo by version, 95% intervals", ("sans-serif", 20))
                .margin(14)
                .x_label_area_size(60)
                .y_label_area_size(60)
                .build_cartesian_2d(-0.5..n as f64 - 0.5, lo - pad..hi + pad)?;
            let label = |x: &f64| {
                let i = x.round();
                (i >= 0.0 && (i - x).abs() < 1e-6)
                    .then(|| self.rows.get(i as usize).map(|r| r.name.clone()))
                    .flatten()
                    .unwrap_or_default()
            };
            chart
                .configure_mesh()
                .x_labels(n.min(30))
                .x_label_formatter(&label)
                .y_label_formatter(&|y| format!("{y:.0}"))
                .label_style(("sans-serif", 13))
                .y_desc("Elo")
                .draw()?;
            for (i, r, elo) in &rated {
                let x = *i as f64;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, elo - r.minus), (x, elo + r.plus)],
                    BLUE.stroke_width(2),
                )))?;
            }
            chart.draw_series(LineSeries::new(
                rated.iter().map(|(i, _, e)| (*i as f64, *e)),
                BLUE.mix(0.4),
            ))?;
            chart.draw_series(
                rated
                    .iter()
                    .map(|(i, _, e)| Circle::new((*i as f64, *e), 4, BLUE.filled())),
            )?;
            Ok(())
        })
    }
}
