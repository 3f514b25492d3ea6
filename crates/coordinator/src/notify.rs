//! What the coordinator tells its webhooks ([`tourney_notify`]): a tournament finished, an
//! SPRT decided, a tournament paused (and why), a worker's results look suspect, a build
//! failed. Each body is JSON: the event, the tournament, its verdict and figures, the
//! reason, a link to its dashboard page, and the summary line as `text` (Slack) and
//! `content` (Discord).

use serde_json::json;
use tourney_notify::EventKind;
use tourney_stats::Decision;

use crate::api::view::StatusView;
use crate::scheduler::TournamentId;
use crate::state::Coordinator;

/// Something webhooks may want to hear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Event {
    /// A tournament finished (an SPRT's decision included).
    Finished(TournamentId),
    /// A tournament paused; `build` when an engine's build failed.
    Paused {
        id: TournamentId,
        reason: String,
        build: bool,
    },
    /// A tournament has more suspect workers than it had.
    Suspect(TournamentId),
    /// A worker was barred from a tournament: its results were refused again and again.
    Barred {
        id: TournamentId,
        worker: String,
        reason: String,
    },
    /// A rating pool's gate decided (what, in words).
    Gate { id: TournamentId, verdict: String },
}

impl Event {
    pub(crate) fn paused(id: TournamentId, reason: &str, build: bool) -> Event {
        Event::Paused {
            id,
            reason: reason.to_string(),
            build,
        }
    }
}

/// The message's fields for one tournament's status.
fn body(kind: EventKind, s: &StatusView, reason: &str, link: &str) -> serde_json::Value {
    // An SPRT's decision, or a grouped test's.
    let verdict = (s.sprt.as_ref().map(|x| x.status.decision.to_string()))
        .or_else(|| Some(s.takes_verdict().to_string()).filter(|v| !v.is_empty()));
    let summary = s.summary_line();
    let mut text = format!("tourney: {summary}");
    if kind == EventKind::BuildFailed {
        text = format!(
            "tourney: a build failed, tournament {} ({}) paused",
            s.id, s.name
        );
    }
    if kind == EventKind::Gate {
        text = format!("tourney: pool {} ({}): {reason}", s.id, s.name);
    }
    if kind == EventKind::Suspect {
        text = format!(
            "tourney: {} suspect worker(s) in tournament {} ({})",
            s.suspect_workers, s.id, s.name
        );
    }
    if !link.is_empty() {
        text += &format!(" {link}");
    }
    json!({
        "event": kind.name(),
        "tournament": {
            "id": s.id,
            "name": s.name,
            "game": s.game.to_string(),
            "format": s.format,
            "state": s.state,
        },
        "verdict": verdict,
        "summary": summary,
        "reason": reason,
        "figures": {
            "pairs": s.pairs_done,
            "games": s.games,
            "suspect_workers": s.suspect_workers,
            "sprt": s.sprt.as_ref().map(|x| json!({
                "llr": x.status.llr,
                "lower_bound": x.status.lower_bound,
                "upper_bound": x.status.upper_bound,
                "elo0": x.elo0,
                "elo1": x.elo1,
            })),
            "standings": s.standings.iter().flatten().map(|p| json!({
                "name": p.name,
                "elo": p.elo,
                "plus": p.plus,
                "minus": p.minus,
                "games": p.games,
                "score": p.score,
            })).collect::<Vec<_>>(),
        },
        "link": link,
        "text": text,
        "content": text,
    })
}

impl Coordinator {
    /// Posts `event` to the webhooks that want it (in the background; never waits).
    pub(crate) fn notify(&self, event: Event) {
        let barred;
        let (id, reason, kinds) = match &event {
            Event::Finished(id) => (*id, "", vec![EventKind::Finished, EventKind::Sprt]),
            Event::Paused { id, reason, build } => {
                let mut kinds = vec![EventKind::Paused];
                if *build {
                    kinds.push(EventKind::BuildFailed);
                }
                (*id, reason.as_str(), kinds)
            }
            Event::Suspect(id) => (*id, "", vec![EventKind::Suspect]),
            Event::Barred { id, worker, reason } => {
                barred = format!("worker {worker} barred, its results refused: {reason}");
                (*id, barred.as_str(), vec![EventKind::Suspect])
            }
            Event::Gate { id, verdict } => (*id, verdict.as_str(), vec![EventKind::Gate]),
        };
        if !kinds.iter().any(|k| self.notifier.wants(*k)) {
            return;
        }
        let Some(status) = self.status(id) else {
            return;
        };
        let status = StatusView::of(&status);
        let decided =
            (status.sprt.as_ref()).is_some_and(|s| s.status.decision != Decision::Continue);
        let link = match self.notifier.dashboard() {
            "" => String::new(),
            dashboard => format!("{dashboard}/#t={id}"),
        };
        for kind in kinds {
            if kind == EventKind::Sprt && !decided {
                continue;
            }
            self.notifier
                .send(kind, &body(kind, &status, reason, &link));
        }
    }
}

#[cfg(test)]
mod tests {
    use tourney_model::tournament::{State, TournamentConfig};
    use tourney_stats::{RatingTable, SprtStatus};

    use super::*;

    #[test]
    fn a_message_carries_the_verdict_the_figures_and_a_link() {
        let text = "name = \"patch\"\ngame = \"loa\"\nformat = \"sprt\"\n\
                    sprt = { elo0 = 0.0, elo1 = 5.0 }\nlimits = { nodes = 100 }\n\
                    [[engine]]\nname = \"a\"\nplayer = \"ab\"\n\
                    [[engine]]\nname = \"b\"\nplayer = \"random\"\n";
        let status = crate::types::Status {
            id: 7,
            config: std::sync::Arc::new(TournamentConfig::parse(text, "t.toml").unwrap()),
            state: State::Finished,
            pairs_done: 120,
            pairs_leased: 0,
            share: None,
            ratings: RatingTable {
                method: String::new(),
                players: Vec::new(),
                los: Vec::new(),
                advantage: None,
                drawelo: None,
            },
            sprt: Some(SprtStatus {
                llr: 2.96,
                lower_bound: -2.94,
                upper_bound: 2.94,
                decision: Decision::AcceptH1,
            }),
            paused_reason: None,
            created_ms: 0,
            ended_ms: None,
            openings: 0,
            duplicate_games: 0,
            duplicate_pairs: Vec::new(),
            duplicate_pair_count: 0,
            pairs_excluded: 0,
            suspect_workers: 0,
            author: None,
            eligibility: Default::default(),
            positions: None,
            progress: None,
        };
        let status = StatusView::of(&status);
        let b = body(EventKind::Sprt, &status, "", "http://d/#t=7");
        assert_eq!(b["event"], "sprt");
        assert_eq!(b["verdict"], "H1 accepted");
        assert_eq!(b["figures"]["pairs"], 120);
        assert_eq!(b["figures"]["sprt"]["llr"], 2.96);
        let text = b["text"].as_str().unwrap();
        assert!(
            text.contains("H1 accepted") && text.ends_with("http://d/#t=7"),
            "{text}"
        );
        assert_eq!(b["content"], b["text"]);
        let build = body(EventKind::BuildFailed, &status, "the build failed", "");
        assert_eq!(build["reason"], "the build failed");
        assert!(build["text"].as_str().unwrap().contains("a build failed"));
    }
}
