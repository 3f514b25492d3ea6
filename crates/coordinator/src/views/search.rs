//! Finding tournaments among many: filters on what the coordinator holds of each (name,
//! author, engines and versions, state, submission date, verdict), newest first, a page at
//! a time. Only a page's tournaments get their full status computed; a verdict filter
//! computes it for the candidates it looks at.

use serde::Deserialize;
use tourney_model::tournament::{Format, State};
use tourney_stats::Decision;

use crate::scheduler::TournamentId;
use crate::state::Coordinator;
use crate::types::Status;

/// The most tournaments a page holds.
pub const MAX_PAGE: usize = 200;

/// What a search asks for; every field left empty matches everything.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Search {
    /// Part of the name, any case.
    pub q: String,
    /// The author, exactly.
    pub author: String,
    /// An engine's name or registered version, exactly.
    pub engine: String,
    /// `queued`, `running`, `paused`, `pending`, `finished` or `cancelled`.
    pub state: String,
    /// `H1`, `H0` (the SPRT's decision) or `open` (an SPRT not decided).
    pub verdict: String,
    /// Submitted at or after this Unix millisecond.
    pub since_ms: u64,
    /// Submitted before this Unix millisecond (0: no bound).
    pub until_ms: u64,
}

impl Search {
    /// Whether `verdict` names this SPRT state (`H1`, `H0`, `open`); a grouped test's
    /// accepted take is H1, none accepted H0.
    fn verdict_matches(&self, status: &Status) -> bool {
        let takes = match &status.progress {
            Some(tourney_report::FormatProgress::Takes { verdict, .. }) => Some(verdict.as_str()),
            _ => None,
        };
        let decision = status.sprt.as_ref().map(|s| s.decision).or(match takes {
            Some("continue") => Some(Decision::Continue),
            Some("none accepted") => Some(Decision::AcceptH0),
            Some(_) => Some(Decision::AcceptH1),
            None => None,
        });
        match self.verdict.to_ascii_lowercase().as_str() {
            "" => true,
            "open" => decision == Some(Decision::Continue),
            "h1" => decision == Some(Decision::AcceptH1),
            "h0" => decision == Some(Decision::AcceptH0),
            _ => false,
        }
    }
}

impl Coordinator {
    /// The tests that may have verdicts to list, newest first, none deleted from the
    /// lists: SPRTs and grouped tests that finished, and rating pools (their gates decide
    /// as they run).
    pub(crate) fn with_verdicts(&self) -> Vec<TournamentId> {
        let inner = self.lock();
        (inner.with_configs().rev())
            .filter(|(_, e, _)| !e.record.hidden)
            .filter(|&(id, _, c)| match c.format {
                Format::Pool => true,
                Format::Sprt | Format::Takes => {
                    (inner.scheduler.tournament(id)).is_some_and(|t| t.state == State::Finished)
                }
                _ => false,
            })
            .map(|(id, _, _)| id)
            .collect()
    }

    /// Tournaments that match `search`, newest first: at most `size` (at most
    /// [`MAX_PAGE`]) of those numbered below `after`, and the number to ask the next page
    /// after (`None`: the last page).
    pub fn search(
        &self,
        search: &Search,
        after: Option<TournamentId>,
        size: usize,
    ) -> (Vec<Status>, Option<TournamentId>) {
        let size = size.clamp(1, MAX_PAGE);
        let q = search.q.to_lowercase();
        let state = (!search.state.is_empty()).then(|| search.state.to_ascii_lowercase());
        let candidates: Vec<TournamentId> = {
            let inner = self.lock();
            (inner.with_configs().rev())
                .filter(|&(id, e, _)| after.is_none_or(|a| id < a) && !e.record.hidden)
                .filter(|(_, e, config)| {
                    let record = &e.record;
                    let engine = search.engine.as_str();
                    (q.is_empty() || config.name.to_lowercase().contains(&q))
                        && (search.author.is_empty()
                            || record.author.as_deref() == Some(search.author.as_str()))
                        && (engine.is_empty()
                            || config.engines.iter().any(|en| {
                                en.name == engine || en.version.as_deref() == Some(engine)
                            }))
                        && record.created_ms >= search.since_ms
                        && (search.until_ms == 0 || record.created_ms < search.until_ms)
                })
                .filter(|&(id, _, _)| {
                    let now = inner.scheduler.tournament(id).map(|t| t.state);
                    state
                        .as_deref()
                        .is_none_or(|s| now.map(State::name) == Some(s))
                })
                .map(|(id, _, _)| id)
                .collect()
        };
        let mut page = Vec::with_capacity(size);
        let mut next = None;
        for id in candidates {
            let Some(status) = self.status(id) else {
                continue;
            };
            if !search.verdict_matches(&status) {
                continue;
            }
            if page.len() == size {
                next = page.last().map(|s: &Status| s.id);
                break;
            }
            page.push(status);
        }
        (page, next)
    }
}
