//! A tournament's status as every API shows it: [`StatusView`], the one copy of each fact.
//!
//! The dashboard serves it as JSON (its lists, and a tournament's page); the gRPC service
//! sends it as JSON in `TournamentStatus.view_json` beside the typed fields it fills from
//! it, and `tourney status --json` prints that JSON. A new fact of a status is a field
//! here and the line of [`StatusView::of`] that fills it.

use serde::Serialize;
use tourney_model::tournament::SprtModel;
use tourney_proto::v1 as pb;
use tourney_report::FormatProgress;
use tourney_rules::GameKind;
use tourney_stats::{Bound, SprtStatus};

use crate::scheduler::Share;
use crate::types::Status;

/// A tournament's status as the dashboard, the gRPC service and `tourney status --json`
/// show it (its JSON keys are theirs).
#[derive(Debug, Clone, Serialize)]
pub struct StatusView {
    /// Its number.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its game.
    #[serde(with = "tourney_model::game_kind")]
    pub game: GameKind,
    /// Its format.
    pub format: &'static str,
    /// `pending`, `queued`, `running`, `paused`, `finished` or `cancelled`.
    pub state: &'static str,
    /// When it was submitted, Unix milliseconds.
    pub created_ms: u64,
    /// Who submitted it (empty before accounts).
    pub author: String,
    /// Its scheduling priority (higher first).
    pub priority: i32,
    /// Its weight: its share among the tests of its priority.
    pub weight: f64,
    /// The most pairs it may play (an SPRT's budget; a planned tournament's pairs).
    pub max_pairs: u64,
    /// Completed pairs.
    pub pairs_done: u64,
    /// The pairs it plays (`None` while an SPRT is open).
    pub pairs_planned: Option<u64>,
    /// Pairs out now, in live leases.
    pub pairs_leased: u64,
    /// Completed games.
    pub games: u64,
    /// Openings in its suite.
    pub openings: u64,
    /// Set when the suite has fewer openings than it may play pairs: what that means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openings_note: Option<String>,
    /// Completed pairs left out of every figure (their workers' results are excluded).
    pub pairs_excluded: u64,
    /// Workers whose results look suspect.
    pub suspect_workers: u64,
    /// Connected workers that can take its pairs, while it is active.
    pub eligible_workers: u64,
    /// Why no connected worker can take its pairs, while none can.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unrunnable: Option<String>,
    /// Why it is paused, while it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// Its share of the fleet's core-time now and its target, while it is live.
    pub share: Option<Share>,
    /// A data generation run's positions kept so far,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions: Option<u64>,
    /// and wanted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positions_wanted: Option<u64>,
    /// Its SPRT on the completed prefix, with the test's settings.
    pub sprt: Option<SprtView>,
    /// The first of its standings, once it has completed a pair.
    pub leader: Option<Leader>,
    /// Its standings, best first (left out of the dashboard's lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub standings: Option<Vec<StandingView>>,
    /// How a format that pairs by results stands (takes, knockout, Swiss, pool; left out
    /// of the dashboard's lists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<FormatProgress>,
}

/// An SPRT's state and settings.
#[derive(Debug, Clone, Serialize)]
pub struct SprtView {
    /// Its LLR, bounds and decision.
    #[serde(flatten)]
    pub status: SprtStatus,
    /// The Elo of H0.
    pub elo0: f64,
    /// The Elo of H1.
    pub elo1: f64,
    /// The chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// The chance of accepting H0 when H1 holds.
    pub beta: f64,
    /// The Elo model of `elo0` and `elo1`.
    pub model: String,
}

/// Who leads the standings.
#[derive(Debug, Clone, Serialize)]
pub struct Leader {
    /// The player's name.
    pub name: String,
    /// Its rating.
    pub elo: f64,
}

/// A player's line of the standings.
#[derive(Debug, Clone, Serialize)]
pub struct StandingView {
    /// The player's name.
    pub name: String,
    /// Its rating.
    pub elo: f64,
    /// The upper half-width of its 95 % interval.
    pub plus: f64,
    /// The lower half-width.
    pub minus: f64,
    /// Its games.
    pub games: u64,
    /// Its points per game (0 to 1).
    pub score: f64,
    /// Its draws per game (0 to 1).
    pub draws: f64,
    /// How likely it is stronger than the next player.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub los_next: Option<f64>,
    /// `>` or `<` when the rating is only a bound (a 100 % or 0 % score), else empty.
    pub bound: &'static str,
}

/// `>` for a rating that is a lower bound, `<` for an upper bound, else empty.
fn bound_mark(bound: Option<Bound>) -> &'static str {
    match bound {
        Some(Bound::AtLeast) => ">",
        Some(Bound::AtMost) => "<",
        None => "",
    }
}

impl StatusView {
    /// The view of `s`.
    pub fn of(s: &Status) -> Self {
        let config = &s.config;
        let settings = config.sprt.as_ref();
        StatusView {
            id: s.id,
            name: config.name.clone(),
            game: config.game,
            format: config.format.name(),
            state: s.state_name(),
            created_ms: s.created_ms,
            author: s.author.clone().unwrap_or_default(),
            priority: config.priority,
            weight: config.weight,
            max_pairs: config.pair_budget(),
            pairs_done: s.pairs_done,
            pairs_planned: s.pairs_planned(),
            pairs_leased: s.pairs_leased,
            games: 2 * s.pairs_done,
            openings: s.openings,
            openings_note: s.openings_note(),
            pairs_excluded: s.pairs_excluded,
            suspect_workers: s.suspect_workers,
            eligible_workers: s.eligibility.workers,
            unrunnable: s.eligibility.unmet.clone(),
            paused_reason: s.paused_reason.clone(),
            share: s.share,
            positions: s.positions.map(|(held, _)| held),
            positions_wanted: s.positions.map(|(_, wanted)| wanted),
            sprt: s.sprt.map(|status| SprtView {
                status,
                elo0: settings.map_or(0.0, |x| x.elo0),
                elo1: settings.map_or(0.0, |x| x.elo1),
                alpha: settings.map_or(0.05, |x| x.alpha),
                beta: settings.map_or(0.05, |x| x.beta),
                model: settings
                    .map_or(SprtModel::default(), |x| x.model)
                    .to_string(),
            }),
            leader: (s.ratings.players.first())
                .filter(|_| s.pairs_done > 0)
                .map(|p| Leader {
                    name: p.name.clone(),
                    elo: p.elo,
                }),
            standings: Some(
                (s.ratings.players.iter())
                    .map(|p| StandingView {
                        name: p.name.clone(),
                        elo: p.elo,
                        plus: p.plus,
                        minus: p.minus,
                        games: p.games,
                        score: p.score,
                        draws: p.draws,
                        los_next: p.los_next,
                        bound: bound_mark(p.bound),
                    })
                    .collect(),
            ),
            progress: s.progress.clone(),
        }
    }

    /// The view of `s` as a list shows it: without its standings and progress, which its
    /// page shows.
    pub fn listed(s: &Status) -> Self {
        StatusView {
            standings: None,
            progress: None,
            ..StatusView::of(s)
        }
    }

    /// A grouped test's verdict (`continue`, `accepted …`, `none accepted`), else empty.
    pub fn takes_verdict(&self) -> &str {
        match &self.progress {
            Some(FormatProgress::Takes { verdict, .. }) => verdict,
            _ => "",
        }
    }

    /// One line for a log or a chat ([`tourney_proto::Summary::line`], as the gRPC
    /// status's `summary_line`).
    pub fn summary_line(&self) -> String {
        let sprt = self.sprt.as_ref().map(pb::SprtState::from);
        tourney_proto::Summary {
            id: self.id,
            name: &self.name,
            state: self.state,
            sprt: sprt.as_ref(),
            verdict: self.takes_verdict(),
            leader: (self.leader.as_ref()).map(|p| (p.name.as_str(), p.elo)),
            paused_reason: self.paused_reason.as_deref().unwrap_or_default(),
            pairs: self.pairs_done,
            games: self.games,
        }
        .line()
    }
}

impl From<&SprtView> for pb::SprtState {
    fn from(sprt: &SprtView) -> Self {
        pb::SprtState {
            llr: sprt.status.llr,
            lower_bound: sprt.status.lower_bound,
            upper_bound: sprt.status.upper_bound,
            decision: sprt.status.decision.to_string(),
            elo0: sprt.elo0,
            elo1: sprt.elo1,
            alpha: sprt.alpha,
            beta: sprt.beta,
            model: sprt.model.clone(),
        }
    }
}

/// A status as the gRPC API gives it: the typed fields (for clients older than
/// `view_json`) and the whole view as JSON.
impl From<&StatusView> for pb::TournamentStatus {
    fn from(v: &StatusView) -> Self {
        let share = v.share.unwrap_or_default();
        pb::TournamentStatus {
            id: v.id,
            name: v.name.clone(),
            game: v.game.to_string(),
            format: v.format.to_string(),
            state: v.state.to_string(),
            pairs_done: v.pairs_done,
            pairs_planned: v.pairs_planned,
            games: v.games,
            standings: (v.standings.iter().flatten())
                .map(|p| pb::Standing {
                    name: p.name.clone(),
                    elo: p.elo,
                    plus: p.plus,
                    minus: p.minus,
                    games: p.games,
                    score: p.score,
                    draws: p.draws,
                    los_next: p.los_next,
                    bound: p.bound.into(),
                })
                .collect(),
            sprt: v.sprt.as_ref().map(pb::SprtState::from),
            pairs_leased: v.pairs_leased,
            paused_reason: v.paused_reason.clone().unwrap_or_default(),
            // Only for those who may read it: the Status call adds it.
            paused_log: String::new(),
            share: share.now,
            share_target: share.target,
            pairs_per_hour: share.pairs_per_hour,
            openings: v.openings,
            openings_note: v.openings_note.clone().unwrap_or_default(),
            pairs_excluded: v.pairs_excluded,
            suspect_workers: v.suspect_workers,
            author: v.author.clone(),
            priority: v.priority,
            weight: v.weight,
            max_pairs: v.max_pairs,
            eligible_workers: v.eligible_workers,
            unrunnable: v.unrunnable.clone().unwrap_or_default(),
            data: (v.positions.zip(v.positions_wanted))
                .map(|(positions, target)| pb::DataProgress { positions, target }),
            takes_verdict: v.takes_verdict().to_string(),
            progress_json: (v.progress.as_ref())
                .and_then(|p| serde_json::to_string(p).ok())
                .unwrap_or_default(),
            view_json: serde_json::to_string(v).unwrap_or_default(),
        }
    }
}

/// A status as the gRPC API gives it, with its standings.
impl From<&Status> for pb::TournamentStatus {
    fn from(s: &Status) -> Self {
        pb::TournamentStatus::from(&StatusView::of(s))
    }
}
