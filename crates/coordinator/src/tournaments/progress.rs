//! How a format that pairs by results stands ([`FormatProgress`]): a grouped test's takes,
//! a knockout's bracket, a Swiss's standings, with the engines named.

use tourney_model::tournament::TournamentConfig;
use tourney_stats::takes::{Dropped, TakeState, Verdict};

use crate::scheduler::Planner;
use tourney_report::{FormatProgress, GateLine, MatchProgress, SwissLine, TakeProgress};

/// The progress of a tournament whose pairings are made by `planner` (`None` for a pool
/// without a gate: its standings are its ratings).
pub(crate) fn progress(config: &TournamentConfig, planner: &Planner) -> Option<FormatProgress> {
    let name =
        |i: usize| (config.engines.get(i)).map_or_else(|| format!("#{i}"), |e| e.name.clone());
    Some(match planner {
        Planner::Takes { group, .. } => {
            let verdict = match group.verdict() {
                Verdict::Continue => "continue".to_string(),
                Verdict::Accepted(k) => format!("accepted {}", name(k + 1)),
                Verdict::NoneAccepted => "none accepted".to_string(),
            };
            let takes = (group.takes.iter().enumerate())
                .map(|(k, t)| TakeProgress {
                    name: name(k + 1),
                    llr: t.llr,
                    state: match t.state {
                        TakeState::Alive => "alive",
                        TakeState::Accepted => "accepted",
                        TakeState::Dropped => "dropped",
                    }
                    .into(),
                    dropped: t.dropped.map(|d| match d {
                        Dropped::H0 => "below the lower bound".to_string(),
                        Dropped::Beaten(j) => format!("{} was accepted", name(j + 1)),
                    }),
                    decided_after: t.decided_after,
                    pairs: t.counts.pairs,
                    played: t.played,
                    share: t.played as f64 / group.pairs.max(1) as f64,
                })
                .collect();
            FormatProgress::Takes {
                verdict,
                bounds: [group.bounds.0, group.bounds.1],
                takes,
            }
        }
        Planner::Knockout(bracket) => FormatProgress::Knockout {
            rounds: (bracket.rounds.iter())
                .map(|round| {
                    (round.iter())
                        .map(|m| MatchProgress {
                            players: m.players.map(|p| p.map(name)),
                            points: m.tally.points.map(|p| p as f64 / 2.0),
                            pairs: m.tally.done,
                            winner: m.winner.map(name),
                            by_seed: m.by_seed,
                            llr: m.llr,
                            by_sprt: m.by_sprt,
                        })
                        .collect()
                })
                .collect(),
            champion: bracket.champion().map(name),
        },
        Planner::Swiss(swiss) => FormatProgress::Swiss {
            round: swiss.played.len(),
            rounds: swiss.rounds,
            stuck: swiss.stuck,
            standings: (swiss.standings().into_iter())
                .map(|l| SwissLine {
                    name: name(l.engine),
                    points: l.points as f64 / 2.0,
                    buchholz: l.buchholz as f64 / 2.0,
                    sonneborn_berger: l.sonneborn_berger / 2.0,
                    byes: l.byes,
                })
                .collect(),
        },
        Planner::Pool(pool) => {
            let gate = pool.gate()?;
            let (lower, upper) = gate.bounds();
            let decided = gate.decisions.iter().map(|d| GateLine {
                candidate: name(d.candidate),
                against: name(d.against),
                pairs: d.pairs,
                llr: d.llr,
                state: if d.promoted { "promoted" } else { "refused" }.into(),
                decided_at: Some(d.at_pair),
            });
            let open = gate.open.iter().map(|g| GateLine {
                candidate: name(g.candidate),
                against: name(g.against),
                pairs: g.counts.pairs,
                llr: g.status.map_or(0.0, |s| s.llr),
                state: "playing".into(),
                decided_at: None,
            });
            FormatProgress::Pool {
                best: name(gate.best),
                bounds: [lower, upper],
                gates: decided.chain(open).collect(),
            }
        }
    })
}
