//! The coordinator's types: its settings, errors, what it reports of a tournament, and the
//! parts of its state that its jobs share. Imports none of the files that hold its behaviour.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
use tourney_model::GameSummary;
use tourney_model::spsa::SpsaSettings;
use tourney_model::tournament::{Format, PairOutcome, State, TournamentConfig};
use tourney_report::SpsaPoint;
use tourney_stats::{RatingTable, SprtStatus};
use tourney_store::{PairRecord, StoreError};

use crate::scheduler::{LeaseId, Tournament, TournamentId};

/// How long a running tournament's ratings are shown before they are computed again: a
/// rating takes longer than a report of fast games, and many reports come in a second.
pub(crate) const RATINGS_EVERY: Duration = Duration::from_millis(250);

/// Settings of a coordinator.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a lease lasts without a heartbeat.
    pub lease_ms: u64,
    /// How often workers should send heartbeats.
    pub heartbeat_ms: u64,
    /// How long the series of a finished or cancelled tournament stay in `/metrics` (so
    /// that Prometheus scrapes its final values), after which they are removed: the
    /// `tournament` label takes only the values of live and recently ended tournaments.
    pub metrics_retention_ms: u64,
    /// Slots a worker may claim (more are cut to this): with the slots' share of the work
    /// left, this bounds how many pairs one worker can take.
    pub max_slots: u32,
    /// Pairs one lease may hold.
    pub max_pairs_per_lease: usize,
    /// Live registrations per worker token.
    pub registrations_per_token: usize,
    /// The most search nodes a balance judge may spend on one tournament's opening suite
    /// (seconds of one core; each judgement at most
    /// [`tourney_plan::openings::JUDGE_NODES`]). A judge too slow for it
    /// (`balanced = "ab:depth=60"`) gets a smaller suite, said at submission.
    pub judge_budget: u64,
    /// How long a report waits for room among the reports in flight
    /// ([`REPORTS_IN_FLIGHT`]) before it is turned away, to be sent again.
    pub report_room_wait_ms: u64,
    /// The most dashboard event streams (`/api/v1/events`) open at once: each holds a
    /// connection and its file descriptor.
    pub dashboard_streams: usize,
    /// The most of them one client address may hold.
    pub dashboard_streams_per_address: usize,
    /// Tournaments queued, running or paused at once (each holds its opening suite, up
    /// to 100,000 openings, in memory): a submission past it is refused until one ends.
    pub max_live_tournaments: usize,
    /// Tests submitted by a user (the `user` role) wait for an approver other than their
    /// author before anything is played.
    pub approval: bool,
    /// The dashboard's data (tournaments, games, the timeline) only for logged-in users;
    /// the page itself and its login stay public.
    pub dashboard_login: bool,
    /// Leases granted a second at most (0: unbounded); past it a lease is answered
    /// RESOURCE_EXHAUSTED with a retry delay.
    pub leases_per_second: u64,
    /// Registrations a second at most (0: unbounded): a fleet restarting at once comes
    /// back spread out.
    pub registrations_per_second: u64,
    /// Where workers fetch artifacts by sha256 (a cache or CDN in front of `/artifacts/`);
    /// empty: the coordinator's own `/artifacts/`.
    pub artifacts_url: String,
    /// The most bytes an uploaded artifact (a program, a network) may have.
    pub max_artifact_bytes: u64,
    /// The most an author's live tests take of the fleet together, in tests of weight 1
    /// ([`crate::scheduler`]'s shares).
    pub author_shares: f64,
    /// Hosts artifacts may be linked to though they are internal (an object store on the
    /// fleet's own network); see [`crate::links`].
    pub link_hosts: Vec<String>,
    /// Webhooks told of tournaments' ends, verdicts, pauses, suspect workers and failed
    /// builds.
    pub webhooks: tourney_notify::NotifySettings,
    /// Data generation pairs of built-in players searched again by the coordinator: one in
    /// this many, on average (0: none; [`crate::tournaments::search_again`]).
    pub search_again_every: u8,
    /// The data directory: data generation runs write their data files to its
    /// `positions/<id>/`. `None`: a temporary directory, removed with the coordinator.
    pub data_dir: Option<std::path::PathBuf>,
    /// The program offered to workers that update themselves (`tourney worker --update`;
    /// [`crate::fleet::release`]); `None`: none is offered.
    pub worker_release: Option<std::path::PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            lease_ms: 30_000,
            heartbeat_ms: 5_000,
            metrics_retention_ms: 15 * 60_000,
            max_slots: 256,
            max_pairs_per_lease: 512,
            registrations_per_token: 1_000,
            judge_budget: 50_000_000,
            report_room_wait_ms: 10_000,
            dashboard_streams: 256,
            dashboard_streams_per_address: 16,
            max_live_tournaments: 100,
            approval: true,
            dashboard_login: false,
            artifacts_url: String::new(),
            max_artifact_bytes: tourney_proto::DEFAULT_MAX_ARTIFACT_BYTES,
            link_hosts: Vec::new(),
            author_shares: crate::scheduler::AUTHOR_SHARES,
            leases_per_second: 50_000,
            registrations_per_second: 2_000,
            webhooks: Default::default(),
            search_again_every: crate::tournaments::search_again::SAMPLE_EVERY,
            data_dir: None,
            worker_release: None,
        }
    }
}

/// Why a worker could not play a pair, as it reports it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unplayable<'a> {
    /// The engine at fault (empty: the pair as a whole).
    pub engine: &'a str,
    /// No worker can play it (its build failed): the tournament pauses at once.
    pub engine_fault: bool,
    /// Why, briefly: shown to everyone who sees the test (status, report, webhooks).
    pub reason: &'a str,
    /// The end of a failed build's output: kept for the test's author, approvers and
    /// admins alone.
    pub log: &'a str,
}

/// Where a submitted tournament comes from: who submitted it, whether it waits for an
/// approver, and the tuning run whose verification SPRT it is.
#[derive(Debug, Default)]
pub struct Origin {
    /// The tuning run it verifies.
    pub tuned_by: Option<TournamentId>,
    /// Who submitted it.
    pub author: Option<String>,
    /// It waits for an approver before anything is played.
    pub pending: bool,
}

/// How many of the pairs holding repeated games a status lists.
pub(crate) const DUPLICATE_PAIRS_LISTED: usize = 5;

/// Why the store fails, while it does (shared with the group-commit task).
pub(crate) type StoreFault = Arc<Mutex<Option<String>>>;

/// A finished pair as a worker reports it.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The tournament.
    pub tournament: TournamentId,
    /// What it contributes.
    pub outcome: PairOutcome,
    /// The lease it was played under.
    pub lease: LeaseId,
    /// Both games' records, a JSON array as the worker sent it.
    pub games: Box<serde_json::value::RawValue>,
    /// What the coordinator reads of them, parsed once when they came in.
    pub summaries: Vec<GameSummary>,
    /// Whether the reporting registration held the pair under its lease (else it came on
    /// its ticket: a lease from before a restart, or of an earlier registration).
    pub held: bool,
    /// A data generation run's positions of both games, as its filters keep them (before
    /// duplicates are taken out).
    pub positions: Option<tourney_dataset::Extracted>,
}

/// A tournament's status as clients see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Its number.
    pub id: TournamentId,
    /// Its file.
    pub config: Arc<TournamentConfig>,
    /// Where it is.
    pub state: State,
    /// Completed pairs.
    pub pairs_done: u64,
    /// Pairs in live leases.
    pub pairs_leased: u64,
    /// Its share of the fleet now and its target, while it is live.
    pub share: Option<crate::scheduler::Share>,
    /// Joint ratings of the completed games.
    pub ratings: RatingTable,
    /// The SPRT on the completed prefix.
    pub sprt: Option<SprtStatus>,
    /// Why it is paused, while it is.
    pub paused_reason: Option<String>,
    /// When it was submitted, Unix milliseconds.
    pub created_ms: u64,
    /// When it finished or was cancelled, Unix milliseconds.
    pub ended_ms: Option<u64>,
    /// Openings in its suite.
    pub openings: u64,
    /// Games identical to another game of the tournament (players, colours, start,
    /// moves): repeated, not new, evidence.
    pub duplicate_games: u64,
    /// The first [`DUPLICATE_PAIRS_LISTED`] pairs holding such games (the later pair of
    /// each two), in order.
    pub duplicate_pairs: Vec<u64>,
    /// How many pairs hold such games.
    pub duplicate_pair_count: u64,
    /// Completed pairs left out of every figure: played by workers an operator excluded.
    pub pairs_excluded: u64,
    /// Workers whose results look suspect (and are not excluded).
    pub suspect_workers: u64,
    /// Who submitted it (`None` before accounts).
    pub author: Option<String>,
    /// How many connected workers can take its pairs, while it is active (else 0), and
    /// why none can when none can.
    pub eligibility: crate::fleet::profiles::Eligibility,
    /// A data generation run's positions kept so far, and wanted.
    pub positions: Option<(u64, u64)>,
    /// How a format that pairs by results stands (takes, knockout, Swiss).
    pub progress: Option<tourney_report::FormatProgress>,
}

impl Status {
    /// `queued`, `running`, `finished`, `cancelled` or `paused`.
    pub fn state_name(&self) -> &'static str {
        self.state.name()
    }

    /// When the suite has fewer openings than the tournament may play pairs: what that
    /// means. Pairs past the suite replay its openings in order (their games have their own
    /// seeds, but deterministic players repeat them move for move).
    pub fn openings_note(&self) -> Option<String> {
        let most = self.config.openings_wanted();
        // A test without a bound (a pool without `max_pairs`) plays past any suite.
        if most >= tourney_model::tournament::MAX_PAIRS && self.openings < most {
            return Some(format!(
                "the opening suite has {} openings and the test plays until it is cancelled: \
                 pairs past {} replay its openings",
                self.openings, self.openings
            ));
        }
        (self.openings < most).then(|| match self.config.datagen() {
            // Two openings a pair, each played once.
            Some(_) => format!(
                "the opening suite has {} openings for up to {most} games: games past {} \
                 replay its openings",
                self.openings, self.openings
            ),
            None => format!(
                "the opening suite has {} openings for up to {most} pairs: pairs past {} replay \
                 its openings",
                self.openings, self.openings
            ),
        })
    }

    /// Pairs planned, `None` for an open SPRT.
    pub fn pairs_planned(&self) -> Option<u64> {
        match self.config.format {
            Format::Sprt => None,
            _ => self.config.planned_pairs(),
        }
    }
}

/// What can go wrong in the coordinator; the gRPC service maps each to a status code in
/// one place.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CoordinatorError {
    /// A tournament file, or what it names, is not right (the message names the file, the
    /// line and the key).
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A group commit failed: nothing of it was acknowledged.
    #[error("the group commit failed: {0}")]
    Commit(String),
    /// The store failed and has not recovered yet: nothing it holds is shown meanwhile.
    #[error("the store is unavailable until it recovers: {0}")]
    Unavailable(String),
    /// A bound was reached (registrations of a token, say): the message says which.
    #[error("{0}")]
    Exhausted(String),
    /// The group-commit task is gone (the coordinator is stopping).
    #[error("the store is closed")]
    Closed,
    /// A stored record does not decode.
    #[error("stored record: {0}")]
    Record(#[from] serde_json::Error),
    /// The caller's role does not allow it (the message says which role would).
    #[error("{0}")]
    Forbidden(String),
    /// What it names does not exist (the message says what).
    #[error("{0}")]
    NotFound(String),
}

impl From<tourney_model::tournament::ConfigError> for CoordinatorError {
    fn from(e: tourney_model::tournament::ConfigError) -> Self {
        CoordinatorError::Invalid(e.to_string())
    }
}

pub(crate) struct CommitJob {
    pub(crate) records: Vec<PairRecord>,
    pub(crate) reply: oneshot::Sender<Result<Vec<bool>, CoordinatorError>>,
}

/// Why a reported pair is not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// The reporting registration does not hold the pair under that lease (or the
    /// tournament is unknown), and its ticket is not the pair's.
    #[error(
        "the pair is not held by this worker under that lease, and its ticket is not the pair's"
    )]
    NotHeld,
    /// The records are not two game records.
    #[error("records: {0}")]
    Records(String),
    /// The players are not the pair's two engines with colours swapped, or the game is
    /// another.
    #[error("the games are not between the pair's engines, colours swapped, in its game")]
    Seats,
    /// The records name the engines otherwise than they were leased (other specs, options
    /// or programs), so they do not match the lease's ticket.
    #[error("the records do not name the engines as they were leased (specs, options, programs)")]
    Ticket,
    /// A game does not replay to what it claims.
    #[error("game {0}: {1}")]
    Game(usize, tourney_model::check::Rejection),
    /// The half-points reported are not the games' results.
    #[error("the half-points contradict the games' results")]
    HalfPoints,
    /// A data generation game's scores cannot be a training target (out of range, or the
    /// two sides contradicting each other move after move).
    #[error("game {0}: {1}")]
    Scores(usize, String),
    /// A sampled data generation game of built-in players, searched again by the
    /// coordinator, is not what the players make ([`crate::tournaments::search_again`]).
    #[error("game {0}: {1}")]
    SearchedAgain(usize, String),
}

impl Refusal {
    /// Every [`Refusal::kind`].
    pub fn kinds() -> impl Iterator<Item = &'static str> {
        [
            "not-held",
            "records",
            "seats",
            "ticket",
            "half-points",
            "scores",
            "searched-again",
        ]
        .into_iter()
        .chain(tourney_model::check::Rejection::KINDS)
    }

    /// Whether the result passed its ticket before it was refused: the lease it names
    /// was given to the worker that sent it, whether or not it still holds it.
    pub fn sealed(&self) -> bool {
        matches!(
            self,
            Refusal::Game(..)
                | Refusal::HalfPoints
                | Refusal::Scores(..)
                | Refusal::SearchedAgain(..)
        )
    }

    /// A short name for counting: one of [`Refusal::kinds`].
    pub fn kind(&self) -> &'static str {
        match self {
            Refusal::NotHeld => "not-held",
            Refusal::Records(_) => "records",
            Refusal::Seats => "seats",
            Refusal::Ticket => "ticket",
            Refusal::Game(_, e) => e.kind(),
            Refusal::HalfPoints => "half-points",
            Refusal::Scores(..) => "scores",
            Refusal::SearchedAgain(..) => "searched-again",
        }
    }
}

/// A pair result as a worker reported it (its games decompressed), not yet checked.
#[derive(Debug, Clone)]
pub struct Reported {
    /// The tournament.
    pub tournament: TournamentId,
    /// The pair.
    pub pair: u64,
    /// The lease it was played under.
    pub lease: LeaseId,
    /// Half-points of the pairing's first engine in game 0 and game 1, as the worker says.
    pub half_points: [u32; 2],
    /// Both games' records, a JSON array.
    pub games_json: String,
    /// The ticket of the pair's job.
    pub ticket: String,
}

/// Ratings as computed at a number of completed pairs.
pub(crate) struct CachedRatings {
    pub(crate) pairs: u64,
    /// When they were computed, the coordinator's milliseconds.
    pub(crate) at_ms: u64,
    pub(crate) ratings: RatingTable,
}

impl CachedRatings {
    /// Whether these ratings can be shown for `pairs` completed pairs: exactly those pairs,
    /// or, while the tournament runs, computed within [`RATINGS_EVERY`].
    pub(crate) fn fresh(&self, pairs: u64, active: bool, now_ms: u64) -> bool {
        self.pairs == pairs
            || (active && now_ms.saturating_sub(self.at_ms) < RATINGS_EVERY.as_millis() as u64)
    }
}

/// Which games an export keeps (all by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportFilter {
    /// Pairs `from..=to`.
    pub pairs: Option<(u64, u64)>,
    /// Games this engine played (either colour).
    pub engine: Option<String>,
    /// Games started at or after this Unix millisecond.
    pub since_ms: Option<u64>,
}

impl ExportFilter {
    /// Whether a game between `white` and `black` that started at `started_ms` is kept
    /// (its pair was chosen by range already).
    pub(crate) fn keeps(&self, white: &str, black: &str, started_ms: Option<u64>) -> bool {
        let engine = self
            .engine
            .as_ref()
            .is_none_or(|e| white == e || black == e);
        let since = self
            .since_ms
            .is_none_or(|since| started_ms.is_some_and(|at| at >= since));
        engine && since
    }
}

/// A report's trajectory keeps between this many and twice this many points, evenly
/// spaced over the pairs (all of them while there are fewer), then the latest values.
pub(crate) const TRAJECTORY_POINTS: usize = 200;

/// A run's parameters, folded over its completed prefix so far, with their trajectory.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tuning {
    /// The values after pairs `0..through`.
    pub(crate) theta: Vec<f64>,
    pub(crate) through: u64,
    /// Excluded pairs when last folded: an exclusion changes the past, so the fold starts
    /// again.
    pub(crate) excluded: u64,
    /// The values after every `stride` pairs, from the start; when they pass twice
    /// [`TRAJECTORY_POINTS`], every other one goes and the stride doubles. A report then
    /// costs nothing of the run's length, and this stays bounded.
    pub(crate) samples: Vec<SpsaPoint>,
    pub(crate) stride: u64,
}

/// The first engine's score minus the second's over a pair, in games (−2 to 2).
fn pair_score(o: &PairOutcome) -> f64 {
    f64::from(o.half_points[0] + o.half_points[1]) - 2.0
}

/// Folds `theta` over the counted pairs `from..to` of `t`, calling `each` after each pair.
fn fold(
    s: &SpsaSettings,
    t: &Tournament,
    theta: &mut [f64],
    from: u64,
    to: u64,
    mut each: impl FnMut(u64, &[f64]),
) {
    for pair in from..to {
        if let Some(o) = t.counted_outcome(pair) {
            s.update(theta, t.config.seed, pair, pair_score(&o));
        }
        each(pair, theta);
    }
}

impl Tuning {
    /// The values after the completed prefix of `t` (folding only what is new).
    pub(crate) fn current(&mut self, s: &SpsaSettings, t: &Tournament) -> &[f64] {
        if self.theta.len() != s.params.len() || self.excluded != t.pairs_excluded() {
            *self = Tuning {
                theta: s.start(),
                through: 0,
                excluded: t.pairs_excluded(),
                samples: vec![SpsaPoint {
                    pairs: 0,
                    values: s.start(),
                }],
                stride: 1,
            };
        }
        let to = t.prefix().max(self.through);
        let (samples, stride) = (&mut self.samples, &mut self.stride);
        fold(s, t, &mut self.theta, self.through, to, |pair, theta| {
            if (pair + 1) % *stride != 0 {
                return;
            }
            samples.push(SpsaPoint {
                pairs: pair + 1,
                values: theta.to_vec(),
            });
            if samples.len() > 2 * TRAJECTORY_POINTS {
                *stride *= 2;
                samples.retain(|p| p.pairs % *stride == 0);
            }
        });
        self.through = to;
        &self.theta
    }

    /// The sampled values, then the current ones (as last folded).
    pub(crate) fn trajectory(&self) -> Vec<SpsaPoint> {
        let mut points = self.samples.clone();
        if points.last().is_some_and(|p| p.pairs != self.through) {
            points.push(SpsaPoint {
                pairs: self.through,
                values: self.theta.clone(),
            });
        }
        points
    }
}

/// One worker's check of an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionCheck {
    /// The worker.
    pub worker: String,
    /// When it told, Unix milliseconds.
    pub at_ms: u64,
    /// The tournament it was checked for.
    pub tournament: TournamentId,
    /// The bench signature it measured (`None`: no bench, or not measured).
    pub bench_nodes: Option<u64>,
    /// The engine's speed there, nodes per second.
    pub bench_nps: u64,
    /// The build's time there, milliseconds (0: the host's cache had it).
    pub build_ms: u64,
    /// Why the engine could not play there (empty when it could).
    pub problem: String,
}

/// What a worker measured of an engine (a report's `EngineCheck`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineCheck {
    /// The tournament.
    pub tournament: TournamentId,
    /// The engine's name in it.
    pub engine: String,
    /// Its bench signature.
    pub bench_nodes: Option<u64>,
    /// Its speed, nodes per second.
    pub bench_nps: u64,
    /// Its build's time, milliseconds.
    pub build_ms: u64,
}

/// The checks of every version, by name, oldest first: what the coordinator keeps.
pub(crate) type VersionChecks =
    std::collections::BTreeMap<String, std::collections::VecDeque<VersionCheck>>;
