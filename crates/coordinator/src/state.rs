//! The coordinator: one lock over the scheduler, the tournaments and the fleet, beside the
//! store. What it does is split by job: `intake` (tournaments submitted, cancelled,
//! paused and resumed), `leasing` (work handed out and kept alive), `commit` (results made
//! durable in group commits) and `views` (status, reports, exports and metrics).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use prometheus::Registry;
use tokio::sync::{mpsc, watch};
use tourney_model::GameSummary;
use tourney_model::job::GameSettings;
use tourney_model::tournament::{Format, PairOutcome, State, TournamentConfig};
use tourney_model::version::EngineVersion;
use tourney_stats::{RatingTable, SprtStatus};
use tourney_store::{OpeningSuite, Store, StoreError, TournamentRecord};

use crate::clock::{Clock, SystemClock};
use crate::commit::{CommitJob, committer};
use crate::fleet::{
    Fleet, RecentGame, RegistrationError, RegistrationLimits, Throughput, WorkerInfo,
};
use crate::history::{Duplicates, Restored};
use crate::metrics::CoordinatorMetrics;
use crate::scheduler::{LeaseId, Scheduler, TournamentId};
use crate::views::CachedRatings;
use crate::workers::WorkerBook;

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
        }
    }
}

/// How many of the pairs holding repeated games a status lists.
pub const DUPLICATE_PAIRS_LISTED: usize = 5;

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
}

/// What can go wrong in the coordinator; the gRPC service maps each to a status code in
/// one place.
#[derive(Debug, thiserror::Error)]
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
}

impl From<tourney_model::tournament::ConfigError> for CoordinatorError {
    fn from(e: tourney_model::tournament::ConfigError) -> Self {
        CoordinatorError::Invalid(e.to_string())
    }
}

/// What the coordinator keeps of one tournament, beside the scheduler's view of it (its
/// state, pairs and leases).
pub(crate) struct Entry {
    /// Its stored record. The `state` in it is not kept up to date here: the scheduler's is
    /// the one, written in by [`Inner::record`] whenever the record is saved.
    pub(crate) record: TournamentRecord,
    /// Its opening suite, fixed at submission.
    pub(crate) openings: OpeningSuite,
    /// Its file.
    pub(crate) config: Arc<TournamentConfig>,
    /// How its games are played (from its file).
    pub(crate) settings: Arc<GameSettings>,
    /// Uploaded programs' sha256 by engine name.
    pub(crate) artifacts: Arc<BTreeMap<String, String>>,
    /// Its latest ratings.
    pub(crate) ratings: Option<CachedRatings>,
    /// Its results by the worker host that played them.
    pub(crate) workers: WorkerBook,
    /// Its games, counted once each: who played which colour from which start with which
    /// moves ([`tourney_model::fingerprint`]). About 40 bytes a distinct game while it
    /// runs; none once it has ended and been summarised.
    pub(crate) games: Duplicates,
    /// A tuning run's parameters, as its completed prefix moved them.
    pub(crate) tuning: crate::tuning::Tuning,
    /// Its verification SPRT is being submitted.
    pub(crate) verifying: bool,
}

/// Everything behind the coordinator's lock.
pub(crate) struct Inner {
    pub(crate) scheduler: Scheduler,
    /// One entry per tournament the scheduler has.
    pub(crate) tournaments: BTreeMap<TournamentId, Entry>,
    pub(crate) fleet: Fleet,
    /// Registered engine versions by name.
    pub(crate) versions: BTreeMap<String, EngineVersion>,
}

impl Inner {
    /// Tournament `id`'s record as it is to be stored: its state is the scheduler's.
    pub(crate) fn record(&self, id: TournamentId) -> Option<TournamentRecord> {
        let state = self.scheduler.tournament(id)?.state;
        let mut record = self.tournaments.get(&id)?.record.clone();
        record.state = state;
        Some(record)
    }
}

/// The coordinator.
pub struct Coordinator {
    pub(crate) inner: Mutex<Inner>,
    pub(crate) store: Store,
    pub(crate) commits: mpsc::Sender<CommitJob>,
    pub(crate) clock: Arc<dyn Clock>,
    /// The settings it runs with.
    pub settings: Settings,
    pub(crate) changes: watch::Sender<u64>,
    pub(crate) metrics: CoordinatorMetrics,
    /// One opening suite is made at a time (off the runtime's threads).
    pub(crate) generating: tokio::sync::Semaphore,
    /// Why the store fails, while it does: leasing stops and health says NOT_SERVING.
    pub(crate) fault: StoreFault,
    /// The key of lease tickets ([`crate::ticket`]), kept in the store.
    pub(crate) lease_key: [u8; 32],
    /// Decompressed report bytes in flight, in KiB, within [`REPORTS_IN_FLIGHT`].
    pub(crate) report_room: tokio::sync::Semaphore,
}

/// The most decompressed report bytes all reports together may hold at once: a report
/// waits for room (and is refused RESOURCE_EXHAUSTED, to retry later, when none comes
/// within [`Settings::report_room_wait_ms`]), so concurrent reports cannot multiply the
/// per-report budget.
pub const REPORTS_IN_FLIGHT: usize = 96 << 20;
// A report the budget allows always fits in the room.
const _: () = assert!(REPORTS_IN_FLIGHT >= tourney_proto::MAX_REPORT_JSON);

/// Gives the allocator's free memory back to the system now (after a big report), rather
/// than after its purge delay: mimalloc's, which the `tourney` binary runs on (with
/// another allocator, mimalloc holds nothing and this does nothing).
pub(crate) fn return_free_memory() {
    // SAFETY: mi_collect takes no pointers; forcing it only frees what is unused.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

impl Coordinator {
    /// A coordinator over `store`, restoring every stored tournament, with its group-commit
    /// task running on the current tokio runtime and its metrics registered in `registry`.
    ///
    /// A stored tournament whose file no longer parses is left in the store and not
    /// scheduled (the log says which and why).
    ///
    /// # Errors
    /// The store could not be read.
    pub fn open(
        store: Store,
        settings: Settings,
        registry: &Registry,
    ) -> Result<Arc<Coordinator>, StoreError> {
        Self::open_with_clock(store, settings, registry, Arc::new(SystemClock::default()))
    }

    /// [`Coordinator::open`] going by `clock` (tests move a [`crate::clock::ManualClock`]).
    ///
    /// # Errors
    /// The store could not be read.
    pub fn open_with_clock(
        store: Store,
        settings: Settings,
        registry: &Registry,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<Coordinator>, StoreError> {
        let metrics = CoordinatorMetrics::new(registry);
        // Lease ids from this start's time in microseconds on: past every id an earlier
        // run gave (a run gives fewer than a million a second).
        let mut scheduler = Scheduler::new(settings.lease_ms)
            .starting_leases_at(tourney_model::unix_ms_now().saturating_mul(1000));
        let mut tournaments = BTreeMap::new();
        let versions: BTreeMap<String, EngineVersion> = store
            .versions()?
            .into_iter()
            .map(|v| (v.name.clone(), v))
            .collect();
        for record in store.tournaments()? {
            // A stored file that no longer parses (a rule tightened since it was submitted)
            // is left in the store, untouched, and not scheduled: said in the log.
            let parsed = TournamentConfig::parse(&record.config_text, &record.file)
                .map_err(|e| e.to_string())
                .and_then(|mut config| {
                    config.resolve_versions(|name| versions.get(name).cloned())?;
                    Ok(config)
                });
            let config = match parsed {
                Ok(config) => config,
                Err(e) => {
                    tracing::warn!(
                        tournament = record.id,
                        error = %e,
                        "stored tournament not scheduled: its file no longer parses"
                    );
                    continue;
                }
            };
            let restored = Restored::read(&store, record.id, &config, true)?;
            let workers = restored.workers;
            scheduler.add(
                record.id,
                config.clone(),
                record.state,
                restored.done.outcomes(&config),
            );
            for host in record.excluded_workers().keys() {
                scheduler.set_excluded(record.id, host, true, &workers.pairs_of(host));
            }
            let entry = Entry {
                openings: store.openings(record.id)?,
                settings: Arc::new(GameSettings::of(&config)),
                config: Arc::new(config),
                artifacts: Arc::new(record.artifacts.clone()),
                ratings: None,
                workers,
                games: restored.games,
                tuning: Default::default(),
                verifying: false,
                record,
            };
            tournaments.insert(entry.record.id, entry);
        }
        let lease_key = store.lease_key()?;
        let (commits, rx) = mpsc::channel(4096);
        let fault = StoreFault::default();
        tokio::spawn(committer(
            store.clone(),
            rx,
            metrics.commit_latency.clone(),
            Arc::clone(&fault),
        ));
        let coordinator = Arc::new(Coordinator {
            inner: Mutex::new(Inner {
                scheduler,
                tournaments,
                fleet: Fleet::new(),
                versions,
            }),
            store,
            commits,
            clock,
            settings,
            changes: watch::channel(0).0,
            metrics,
            generating: tokio::sync::Semaphore::new(1),
            fault,
            lease_key,
            report_room: tokio::sync::Semaphore::new(REPORTS_IN_FLIGHT >> 10),
        });
        for id in coordinator.ids() {
            // A tournament whose stored pairs complete it (played while no coordinator saw
            // it end) is stored as ended.
            let ended = {
                let mut inner = coordinator.lock();
                let stored = inner.tournaments.get(&id).map(|e| e.record.state);
                let now = inner.scheduler.tournament(id).map(|t| t.state);
                match (stored, now, inner.tournaments.get_mut(&id)) {
                    (Some(stored), Some(now), Some(entry)) if stored != now => {
                        if matches!(now, State::Finished | State::Cancelled) {
                            entry
                                .record
                                .ended_ms
                                .get_or_insert_with(tourney_model::unix_ms_now);
                        }
                        inner.record(id)
                    }
                    _ => None,
                }
            };
            if let Some(record) = ended {
                coordinator.store.put_tournament(&record)?;
            }
            // Tournaments that ended without a summary (or with more pairs since) get one.
            coordinator.summarise(id);
        }
        // A tuning run that ended without its verification SPRT (the coordinator stopped
        // first) gets it now.
        let pending: Vec<TournamentId> = {
            let inner = coordinator.lock();
            (inner.tournaments.iter())
                .filter(|(_, e)| e.record.verification.is_none())
                .filter(|(_, e)| e.config.spsa.as_ref().is_some_and(|s| s.verify.is_some()))
                .map(|(&id, _)| id)
                .collect()
        };
        if !pending.is_empty() {
            let c = Arc::clone(&coordinator);
            tokio::spawn(async move {
                for id in pending {
                    if let Err(e) = c.verify_tuning(id).await {
                        tracing::warn!(tuning = id, error = %e, "verification SPRT not submitted");
                    }
                }
            });
        }
        Ok(coordinator)
    }

    /// Writes the summary of tournament `id` if it has ended, and lets go of its games'
    /// fingerprints: a restart reads the summary instead of its pairs' digests. Nothing is
    /// written while it runs, or once more pairs were counted than the store holds. A
    /// summary is a shortcut: when the store fails to take it, the log says so and a
    /// restart reads the digests.
    pub(crate) fn summarise(&self, id: TournamentId) {
        let (bytes, covers) = {
            let inner = self.lock();
            let (Some(t), Some(entry)) =
                (inner.scheduler.tournament(id), inner.tournaments.get(&id))
            else {
                return;
            };
            if !matches!(t.state, State::Finished | State::Cancelled) || entry.games.is_folded() {
                return;
            }
            let bytes = crate::history::summary(t.outcomes(), &entry.workers, &entry.games);
            (bytes, t.pairs_done())
        };
        let stored = self.store.put_summary(id, covers, &bytes);
        if let Err(e) = &stored {
            tracing::warn!(tournament = id, error = %e, "its summary could not be stored");
        }
        if stored.unwrap_or(false) {
            let mut inner = self.lock();
            let still = inner
                .scheduler
                .tournament(id)
                .is_some_and(|t| t.pairs_done() == covers);
            if let (true, Some(entry)) = (still, inner.tournaments.get_mut(&id)) {
                entry.games.fold();
            }
        }
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every step is atomic).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Milliseconds since the coordinator started (the scheduler's clock).
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// A receiver that changes whenever a tournament does.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub(crate) fn changed(&self) {
        self.changes.send_modify(|v| *v += 1);
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Why the store fails, while it does (a full disk, say): no pairs are leased and the
    /// gRPC health says NOT_SERVING until [`Coordinator::recover`] succeeds.
    pub fn store_fault(&self) -> Option<String> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Tries to make a failed store take writes again, once its disk has room to spare
    /// ([`tourney_store::recovery_reserve`]): opens it again in place (what was not durable is
    /// dropped, never shown) and writes a probe. Returns whether the
    /// store is healthy now.
    pub async fn recover(&self) -> bool {
        if self.store_fault().is_none() {
            return true;
        }
        if !self.store.has_room() {
            return false;
        }
        let store = self.store.clone();
        let reopened = tokio::task::spawn_blocking(move || store.reopen())
            .await
            .map_err(|e| e.to_string())
            .and_then(|r| r.map_err(|e| e.to_string()));
        let probed = match reopened {
            Ok(()) => self.store.probe().await.map_err(|e| e.to_string()),
            Err(e) => Err(e),
        };
        let counted = probed.and_then(|()| self.count_stored().map_err(|e| e.to_string()));
        match counted {
            Ok(found) => {
                *self.fault.lock().unwrap_or_else(|e| e.into_inner()) = None;
                tracing::info!(
                    pairs_found_on_disk = found,
                    "the store takes writes again: leasing resumes"
                );
                self.changed();
                true
            }
            Err(e) => {
                tracing::debug!(error = %e, "the store has not recovered yet");
                false
            }
        }
    }

    /// Registers a worker that called with the token named `token`; returns its id and the
    /// registration's secret, which its later calls must carry (with the same token).
    ///
    /// # Errors
    /// [`CoordinatorError::Invalid`] for a bad name or version;
    /// [`CoordinatorError::Exhausted`] when the token holds too many live registrations.
    pub fn register(
        &self,
        name: &str,
        version: &str,
        slots: u32,
        token: &str,
    ) -> Result<(String, String), CoordinatorError> {
        let now = self.now_ms();
        let limits = RegistrationLimits {
            max_slots: self.settings.max_slots,
            per_token: self.settings.registrations_per_token,
            silence_ms: self.settings.lease_ms,
        };
        let registration = self
            .lock()
            .fleet
            .register(name, version, slots, token, now, limits)
            .map_err(|e| match e {
                e @ RegistrationError::TooMany { .. } => CoordinatorError::Exhausted(e.to_string()),
                e => CoordinatorError::Invalid(e.to_string()),
            })?;
        self.changed();
        Ok(registration)
    }

    /// Whether `worker` holds (or held, under a lease that expired a short while ago)
    /// `pair` of `tournament` under `lease`.
    pub fn holds(&self, worker: &str, lease: LeaseId, tournament: TournamentId, pair: u64) -> bool {
        self.lock().scheduler.holds(worker, lease, tournament, pair)
    }

    /// Whether `session` is the secret of `worker`'s registration and `token` the name of
    /// the token it registered with.
    pub fn session_is(&self, worker: &str, session: &str, token: &str) -> bool {
        self.lock().fleet.session_is(worker, session, token)
    }

    /// Workers heard from within a lease period, by name.
    pub fn workers(&self) -> Vec<WorkerInfo> {
        let now = self.now_ms();
        self.lock().fleet.connected(now, self.settings.lease_ms)
    }

    /// Fleet throughput now.
    pub fn throughput(&self) -> Throughput {
        let now = self.now_ms();
        self.lock().fleet.throughput(now)
    }

    /// Games/s in `bucket_ms` intervals over the last minutes, oldest first.
    pub fn throughput_history(&self, bucket_ms: u64) -> Vec<f64> {
        self.lock().fleet.history(bucket_ms)
    }

    /// The most recent games stored, newest first.
    pub fn recent_games(&self) -> Vec<RecentGame> {
        self.lock().fleet.recent().cloned().collect()
    }

    /// Where a tournament is, `None` for an unknown id.
    pub fn state(&self, id: TournamentId) -> Option<State> {
        self.lock().scheduler.tournament(id).map(|t| t.state)
    }

    /// Ids of all tournaments.
    pub fn ids(&self) -> Vec<TournamentId> {
        self.lock().scheduler.tournaments().map(|t| t.id).collect()
    }

    /// The metrics (for counting refused calls).
    pub fn metrics(&self) -> &CoordinatorMetrics {
        &self.metrics
    }

    /// An artifact by sha256.
    ///
    /// # Errors
    /// The store failed.
    pub fn artifact(&self, sha: &str) -> Result<Option<Vec<u8>>, CoordinatorError> {
        Ok(self.store.artifact(sha)?)
    }
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
        let most = self.config.max_pairs();
        (self.openings < most).then(|| {
            format!(
                "the opening suite has {} openings for up to {most} pairs: pairs past {} replay \
                 its openings",
                self.openings, self.openings
            )
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
