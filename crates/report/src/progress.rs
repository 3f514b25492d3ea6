//! How a format that pairs by results stands ([`FormatProgress`]): a grouped test's
//! takes, a knockout's bracket, a Swiss's standings. One table each, which the text and
//! HTML reports, `status` and the dashboard show.

use serde::{Deserialize, Serialize};

/// How a format that pairs by results stands, as `status` and the dashboard show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "lowercase")]
pub enum FormatProgress {
    /// A grouped test.
    Takes {
        /// `continue`, `accepted` or `none accepted`.
        verdict: String,
        /// Each take's SPRT bounds (lower, upper), at the corrected α.
        bounds: [f64; 2],
        /// The takes in file order.
        takes: Vec<TakeProgress>,
    },
    /// A knockout.
    Knockout {
        /// Rounds, the first first.
        rounds: Vec<Vec<MatchProgress>>,
        /// The winner of the final, once decided.
        champion: Option<String>,
    },
    /// A Swiss.
    Swiss {
        /// Rounds paired so far.
        round: usize,
        /// Rounds it plays.
        rounds: u32,
        /// The next round could not be paired without a repeat: it ended early.
        stuck: bool,
        /// The standings, best first.
        standings: Vec<SwissLine>,
    },
    /// A rating pool with a gate.
    Pool {
        /// The best member now.
        best: String,
        /// Its gates' SPRT bounds (lower, upper).
        bounds: [f64; 2],
        /// Each gate decided, in order, then the one being played.
        gates: Vec<GateLine>,
    },
}

/// One gate of a pool: a candidate's SPRT against the best.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateLine {
    /// The candidate.
    pub candidate: String,
    /// The best it plays, or played, against.
    pub against: String,
    /// Pairs its SPRT counted.
    pub pairs: u64,
    /// Its LLR.
    pub llr: f64,
    /// `playing`, `promoted` or `refused`.
    pub state: String,
    /// The pair whose count decided it.
    pub decided_at: Option<u64>,
}

/// One take of a grouped test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TakeProgress {
    /// The engine.
    pub name: String,
    /// Its LLR.
    pub llr: f64,
    /// `alive`, `accepted` or `dropped`.
    pub state: String,
    /// Why it was dropped: below the lower bound, or another take accepted.
    pub dropped: Option<String>,
    /// The group's pairs counted when it was decided.
    pub decided_after: Option<u64>,
    /// Its pairs counted by its SPRT (up to its decision).
    pub pairs: u64,
    /// All its completed pairs, those after its decision included.
    pub played: u64,
    /// Its share of the group's completed pairs (`played` over all takes').
    pub share: f64,
}

/// One knockout match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchProgress {
    /// Its players, the higher seed first; `None` while not known (a bye in round 1).
    pub players: [Option<String>; 2],
    /// Game points of each (a game won is 1).
    pub points: [f64; 2],
    /// Pairs completed.
    pub pairs: u64,
    /// Who went through.
    pub winner: Option<String>,
    /// Decided by the seeds after the tie-breaks ran out.
    pub by_seed: bool,
    /// Its SPRT's LLR, for a knockout whose matches stop by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llr: Option<f64>,
    /// Decided by its SPRT.
    #[serde(default)]
    pub by_sprt: bool,
}

/// A Swiss standings line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwissLine {
    /// The engine.
    pub name: String,
    /// Game points, byes included.
    pub points: f64,
    /// The opponents' points.
    pub buchholz: f64,
    /// The opponents' points weighted by the share scored against each.
    pub sonneborn_berger: f64,
    /// Byes.
    pub byes: u32,
}

/// A progress as a titled table: its title, column names and rows of cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProgressTable {
    /// What it is and where it stands ("Grouped test: continue ...").
    pub title: String,
    /// Column names.
    pub header: Vec<&'static str>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl FormatProgress {
    /// The table the reports show.
    pub fn table(&self) -> ProgressTable {
        match self {
            FormatProgress::Takes {
                verdict,
                bounds,
                takes,
            } => ProgressTable {
                title: format!(
                    "Grouped test: {verdict} (each take's bounds [{:.2}, {:.2}])",
                    bounds[0], bounds[1]
                ),
                header: vec![
                    "Take",
                    "LLR",
                    "Counted",
                    "Played",
                    "Share",
                    "State",
                    "Why",
                    "Decided after",
                ],
                rows: (takes.iter())
                    .map(|t| {
                        vec![
                            t.name.clone(),
                            format!("{:.2}", t.llr),
                            t.pairs.to_string(),
                            t.played.to_string(),
                            format!("{:.0}%", t.share * 100.0),
                            t.state.clone(),
                            t.dropped.clone().unwrap_or_default(),
                            t.decided_after
                                .map_or(String::new(), |n| format!("{n} pairs")),
                        ]
                    })
                    .collect(),
            },
            FormatProgress::Knockout { rounds, champion } => ProgressTable {
                title: match champion {
                    Some(c) => format!("Knockout: won by {c}"),
                    None => "Knockout: under way".into(),
                },
                header: vec!["Round", "Match", "Points", "Pairs", "LLR", "Through"],
                rows: (rounds.iter().enumerate())
                    .flat_map(|(r, round)| {
                        round.iter().map(move |m| {
                            let side =
                                |i: usize| m.players[i].clone().unwrap_or_else(|| "-".into());
                            let through = match (&m.winner, m.by_seed, m.by_sprt) {
                                (Some(w), true, _) => format!("{w} (by seed)"),
                                (Some(w), _, true) => format!("{w} (by SPRT)"),
                                (Some(w), _, _) => w.clone(),
                                (None, _, _) => String::new(),
                            };
                            vec![
                                (r + 1).to_string(),
                                format!("{} - {}", side(0), side(1)),
                                format!("{} - {}", m.points[0], m.points[1]),
                                m.pairs.to_string(),
                                m.llr.map_or(String::new(), |l| format!("{l:.2}")),
                                through,
                            ]
                        })
                    })
                    .collect(),
            },
            FormatProgress::Swiss {
                round,
                rounds,
                stuck,
                standings,
            } => ProgressTable {
                title: format!(
                    "Swiss: round {round} of {rounds}{}",
                    if *stuck {
                        " (ended early: the next round had no pairing without a repeat)"
                    } else {
                        ""
                    }
                ),
                header: vec![
                    "Rank",
                    "Name",
                    "Points",
                    "Buchholz",
                    "Sonneborn-Berger",
                    "Byes",
                ],
                rows: (standings.iter().enumerate())
                    .map(|(rank, l)| {
                        vec![
                            (rank + 1).to_string(),
                            l.name.clone(),
                            l.points.to_string(),
                            l.buchholz.to_string(),
                            format!("{:.2}", l.sonneborn_berger),
                            l.byes.to_string(),
                        ]
                    })
                    .collect(),
            },
            FormatProgress::Pool {
                best,
                bounds,
                gates,
            } => ProgressTable {
                title: format!(
                    "Gated pool: best {best} (each gate's bounds [{:.2}, {:.2}])",
                    bounds[0], bounds[1]
                ),
                header: vec!["Candidate", "Against", "Pairs", "LLR", "Verdict", "At pair"],
                rows: (gates.iter())
                    .map(|g| {
                        vec![
                            g.candidate.clone(),
                            g.against.clone(),
                            g.pairs.to_string(),
                            format!("{:.2}", g.llr),
                            g.state.clone(),
                            g.decided_at.map_or(String::new(), |p| p.to_string()),
                        ]
                    })
                    .collect(),
            },
        }
    }

    /// The table as aligned text: its title, then a line a row.
    pub fn text(&self) -> String {
        let table = self.table();
        let mut widths: Vec<usize> = table.header.iter().map(|h| h.chars().count()).collect();
        for row in &table.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: Vec<&str>| {
            let padded: Vec<String> = (cells.iter().zip(&widths))
                .map(|(c, w)| format!("{c:<w$}"))
                .collect();
            format!("  {}\n", padded.join("  ").trim_end())
        };
        let mut out = format!("{}\n", table.title);
        out += &line(table.header.clone());
        for row in &table.rows {
            out += &line(row.iter().map(String::as_str).collect());
        }
        out
    }
}
