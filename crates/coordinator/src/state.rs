//! The coordinator: one lock over the scheduler, the tournaments and the fleet, beside the
//! store. What it does is split by job: `intake` (tournaments submitted, cancelled,
//! paused and resumed), `leasing` (work handed out and kept alive), `commit` (results made
//! durable in group commits) and `views` (status, reports, exports and metrics).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tourney_model::job::GameSettings;
use tourney_model::tournament::{State, TournamentConfig};
use tourney_model::version::EngineVersion;
use tourney_store::{OpeningSuite, Store, TournamentRecord};

use crate::clock::Clock;
use crate::fleet::workers::WorkerBook;
use crate::fleet::{
    Fleet, RecentGame, RegistrationError, RegistrationLimits, Throughput, WorkerInfo,
};
use crate::metrics::CoordinatorMetrics;
use crate::scheduler::{LeaseId, Scheduler, TournamentId};
use crate::tournaments::history::Duplicates;
use crate::types::CachedRatings;
use crate::types::CommitJob;
use crate::types::{CoordinatorError, Settings, StoreFault};

/// What the coordinator keeps of one tournament, beside the scheduler's view of it (its
/// settings, state, pairs and leases: [`Inner::config`] reads its settings there).
pub(crate) struct Entry {
    /// Its stored record. The `state` in it is not kept up to date here: the scheduler's is
    /// the one, written in by [`Inner::record`] whenever the record is saved.
    pub(crate) record: TournamentRecord,
    /// Its opening suite, fixed at submission.
    pub(crate) openings: OpeningSuite,
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
    pub(crate) tuning: crate::types::Tuning,
    /// Its verification SPRT is being submitted.
    pub(crate) verifying: bool,
    /// The suspect workers webhooks were told of.
    pub(crate) suspects_told: u64,
    /// A rating pool's gate decisions told (as events and to webhooks).
    pub(crate) gates_told: usize,
}

/// Everything behind the coordinator's lock.
pub(crate) struct Inner {
    pub(crate) scheduler: Scheduler,
    /// One entry per tournament the scheduler has.
    pub(crate) tournaments: BTreeMap<TournamentId, Entry>,
    pub(crate) fleet: Fleet,
    /// Registered engine versions by name.
    pub(crate) versions: BTreeMap<String, EngineVersion>,
    /// Workers' last checks of each version ([`crate::fleet::checks`]).
    pub(crate) version_checks: crate::types::VersionChecks,
}

impl Inner {
    /// Tournament `id`'s record as it is to be stored: its state and the settings people
    /// change (priority, weight, pair budget) are the scheduler's, for a restart to apply
    /// to its file again.
    pub(crate) fn record(&self, id: TournamentId) -> Option<TournamentRecord> {
        let t = self.scheduler.tournament(id)?;
        let mut record = self.tournaments.get(&id)?.record.clone();
        record.state = t.state;
        record.priority = Some(t.config.priority);
        record.weight = Some(t.config.weight);
        record.pair_budget = t.config.pair_budget_set();
        Some(record)
    }

    /// Tournament `id`'s settings: the scheduler's, the one copy.
    pub(crate) fn config(&self, id: TournamentId) -> Option<&Arc<TournamentConfig>> {
        self.scheduler.config(id)
    }

    /// The tournaments with their settings, oldest first.
    pub(crate) fn with_configs(
        &self,
    ) -> impl DoubleEndedIterator<Item = (TournamentId, &Entry, &Arc<TournamentConfig>)> {
        (self.tournaments.iter()).filter_map(|(id, e)| Some((*id, e, self.scheduler.config(*id)?)))
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
    /// What opening started in the background (verification SPRTs of tuning runs that
    /// ended without one), until [`Coordinator::restarted`] has waited for it.
    pub(crate) restart_work: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Posts events to the webhooks.
    pub(crate) notifier: tourney_notify::Notifier,
    /// Leases granted a second ([`Settings::leases_per_second`]).
    pub(crate) lease_budget: Mutex<crate::fleet::cadence::Budget>,
    /// Registrations a second ([`Settings::registrations_per_second`]).
    pub(crate) register_budget: Mutex<crate::fleet::cadence::Budget>,
    /// Data generation runs' data sets ([`Settings::data_dir`]).
    pub(crate) datasets: crate::tournaments::datasets::DataSets,
    /// The release offered to workers that update themselves ([`Settings::worker_release`]).
    pub(crate) releases: crate::fleet::release::Releases,
}

/// The most decompressed report bytes all reports together may hold at once: a report
/// waits for room (and is refused RESOURCE_EXHAUSTED, to retry later, when none comes
/// within [`Settings::report_room_wait_ms`]), so concurrent reports cannot multiply the
/// per-report budget.
pub(crate) const REPORTS_IN_FLIGHT: usize = 96 << 20;
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
    /// Waits until what opening started in the background is done: the verification SPRTs
    /// of tuning runs that ended without one are submitted (or failed, as the log says).
    pub async fn restarted(&self) {
        let work = self
            .restart_work
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(work) = work {
            let _ = work.await;
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
        self.admits(name, version)?;
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

    /// Whether `worker` holds a pair of tournament `id` now: what lets it tell the
    /// coordinator about the tournament's engines.
    pub fn plays_in(&self, worker: &str, id: TournamentId) -> bool {
        self.lock().scheduler.holds_any(worker, id)
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

    /// How often workers should beat and report now: stretched with the fleet.
    pub fn cadence(&self) -> crate::fleet::cadence::Cadence {
        let workers = self.lock().fleet.registered() as u64;
        crate::fleet::cadence::cadence(workers, self.settings.heartbeat_ms, self.settings.lease_ms)
    }

    /// Takes a `call` (`lease` or `register`) from its budget of calls a second, or says
    /// in how many milliseconds to come back (counted in `tourney_calls_deferred_total`).
    ///
    /// # Errors
    /// The budget is spent: the wait.
    pub fn admit(&self, call: &'static str) -> Result<(), u64> {
        let budget = match call {
            "register" => &self.register_budget,
            _ => &self.lease_budget,
        };
        let now = self.now_ms();
        let taken = budget.lock().unwrap_or_else(|e| e.into_inner()).take(now);
        if taken.is_err() {
            self.metrics.calls_deferred.with_label_values(&[call]).inc();
        }
        taken
    }

    /// Where an artifact linked rather than uploaded is kept.
    ///
    /// # Errors
    /// The store failed.
    pub fn artifact_link(&self, sha: &str) -> Result<Option<String>, CoordinatorError> {
        Ok(self.store.artifact_link(sha)?)
    }
}
