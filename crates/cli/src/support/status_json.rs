//! A tournament's status as `status --json` and `submit --wait --json` print it.

use serde::Serialize;
use tourney_proto::v1 as pb;

#[derive(Serialize)]
pub(crate) struct StatusJson {
    id: u64,
    name: String,
    game: String,
    format: String,
    state: String,
    pairs_done: u64,
    pairs_planned: Option<u64>,
    games: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_reason: Option<String>,
    /// The end of the build log that paused it (for its author, approvers and admins).
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_log: Option<String>,
    /// Its part of the fleet's core-time over the last minutes, and its target (0 to 1).
    share: f64,
    share_target: f64,
    /// The pairs an hour it is given at that share.
    pairs_per_hour: f64,
    openings: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    openings_note: Option<String>,
    pairs_excluded: u64,
    suspect_workers: u64,
    eligible_workers: u64,
    /// Why no connected worker can run it, while none can.
    #[serde(skip_serializing_if = "Option::is_none")]
    unrunnable: Option<String>,
    /// Who submitted it (empty before accounts).
    author: String,
    priority: i32,
    weight: f64,
    /// The most pairs it may play.
    max_pairs: u64,
    /// A data generation run's positions kept so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    positions: Option<u64>,
    /// And wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    positions_wanted: Option<u64>,
    standings: Vec<StandingJson>,
    /// How a format that pairs by results stands (takes, knockout, Swiss).
    #[serde(skip_serializing_if = "Option::is_none")]
    progress: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lower_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upper_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct StandingJson {
    name: String,
    elo: f64,
    plus: f64,
    minus: f64,
    games: u64,
    score: f64,
    draws: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    los_next: Option<f64>,
    /// `>` or `<` when the rating is only a bound, else empty.
    bound: String,
}

pub(crate) fn status_json(s: &pb::TournamentStatus) -> StatusJson {
    StatusJson {
        id: s.id,
        name: s.name.clone(),
        game: s.game.clone(),
        format: s.format.clone(),
        state: s.state.clone(),
        pairs_done: s.pairs_done,
        pairs_planned: s.pairs_planned,
        games: s.games,
        paused_reason: (!s.paused_reason.is_empty()).then(|| s.paused_reason.clone()),
        paused_log: (!s.paused_log.is_empty()).then(|| s.paused_log.clone()),
        share: s.share,
        share_target: s.share_target,
        pairs_per_hour: s.pairs_per_hour,
        openings: s.openings,
        openings_note: (!s.openings_note.is_empty()).then(|| s.openings_note.clone()),
        pairs_excluded: s.pairs_excluded,
        suspect_workers: s.suspect_workers,
        eligible_workers: s.eligible_workers,
        unrunnable: Some(s.unrunnable.clone()).filter(|u| !u.is_empty()),
        author: s.author.clone(),
        priority: s.priority,
        weight: s.weight,
        max_pairs: s.max_pairs,
        positions: s.data.map(|d| d.positions),
        positions_wanted: s.data.map(|d| d.target),
        progress: serde_json::from_str(&s.progress_json).ok(),
        standings: s
            .standings
            .iter()
            .map(|p| StandingJson {
                name: p.name.clone(),
                elo: p.elo,
                plus: p.plus,
                minus: p.minus,
                games: p.games,
                score: p.score,
                draws: p.draws,
                los_next: p.los_next,
                bound: p.bound.clone(),
            })
            .collect(),
        llr: s.sprt.as_ref().map(|x| x.llr),
        lower_bound: s.sprt.as_ref().map(|x| x.lower_bound),
        upper_bound: s.sprt.as_ref().map(|x| x.upper_bound),
        decision: s.sprt.as_ref().map(|x| x.decision.clone()),
    }
}
