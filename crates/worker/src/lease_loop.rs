//! The lease loop: a [`Worker`] with one method per duty (collect finished pairs, keep
//! the session, report, heartbeat, lease, drain) around a short `select!` that waits for
//! whichever comes first: a game thread's result, the report under way, the shutdown
//! signal or the next due time.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;
use tourney_model::job::PairJob;
use tourney_proto::v1 as pb;

use crate::builds::BuildCache;
use crate::desk::{self, Outcome};
use crate::metrics::GaugeShare;
use crate::update::Updater;
use crate::{Ended, Session, WorkerError, WorkerMetrics, WorkerOptions, open_session, play};

mod report;

use report::FailedReport;

/// The first wait after a failed connection, doubled at each failure up to
/// [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// The longest wait between two connection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(10);

/// How long a worker that was offered nothing waits before it asks again.
const IDLE_WAIT: Duration = Duration::from_millis(100);

/// How often a worker taking a release looks whether it is ready to install.
const UPDATE_POLL: Duration = Duration::from_millis(200);

/// What a lease request came to.
enum Leased {
    /// Pairs came (or failed to prepare): look at the desk again at once.
    Some,
    /// Nothing was asked for or offered.
    Nothing,
    /// The call failed: the session is lost.
    Failed,
}

/// A worker's state between two turns of its loop.
pub(crate) struct Worker {
    options: WorkerOptions,
    metrics: WorkerMetrics,
    desk: Arc<desk::Desk>,
    queued_shown: GaugeShare,
    busy_shown: GaugeShare,
    /// Shown while the worker runs; taken back when it stops.
    _cores_shown: GaugeShare,
    /// Shown while the worker runs; taken back when it stops.
    _slots_shown: GaugeShare,
    /// Results not yet acknowledged, oldest first.
    unreported: Vec<Outcome>,
    /// Pairs per lease not finished yet (queued or in play), for heartbeats.
    leases: HashMap<u64, usize>,
    /// Cancellation flag of each lease, set when the coordinator says to drop it.
    cancels: HashMap<u64, Arc<AtomicBool>>,
    /// The most a report carries decompressed: well inside the coordinator's budget,
    /// halved if it still says a report is too large.
    part_bytes: usize,
    /// The report under way, with the results it carries (returned if it fails).
    report_task: Option<JoinHandle<Result<(), FailedReport>>>,
    /// Shutting down: no new work, the games in play finished and reported.
    stopping: bool,
    backoff: Duration,
    session: Option<Session>,
    idle_until: Instant,
    /// When work was last held (leased, in play or unreported): `exit_when_idle` counts
    /// from it.
    busy_at: Instant,
    next_heartbeat: Instant,
    next_report: Instant,
    /// Its updates (`--update`): no new leases while a release is taken.
    updater: Option<Updater>,
}

impl Worker {
    /// A worker that has not connected yet.
    pub(crate) fn new(options: WorkerOptions, metrics: WorkerMetrics) -> Self {
        let concurrency = options.concurrency.max(1);
        let mut slots_shown = GaugeShare::new(&metrics.slots);
        slots_shown.set(concurrency as i64);
        let mut cores_shown = GaugeShare::new(&metrics.cores);
        cores_shown.set(options.cores as i64);
        let now = Instant::now();
        let updater = options.update.clone().map(Updater::new);
        Worker {
            desk: Arc::new(
                desk::Desk::new(
                    concurrency,
                    options.cores,
                    options.engine_policy.clone(),
                    BuildCache::new(
                        options.cache_dir.clone(),
                        options.cache_bytes,
                        options.build_timeout,
                        options.engine_policy.clone(),
                    ),
                    options.pinned.clone(),
                )
                .with_gpus(options.choices.gpus.clone(), options.choices.games_per_gpu),
            ),
            queued_shown: GaugeShare::new(&metrics.pairs_queued),
            busy_shown: GaugeShare::new(&metrics.cores_busy),
            _cores_shown: cores_shown,
            _slots_shown: slots_shown,
            options,
            metrics,
            unreported: Vec::new(),
            leases: HashMap::new(),
            cancels: HashMap::new(),
            part_bytes: tourney_proto::REPORT_PART_JSON,
            report_task: None,
            stopping: false,
            backoff: FIRST_BACKOFF,
            session: None,
            idle_until: now,
            busy_at: now,
            next_heartbeat: now,
            next_report: now,
            updater,
        }
    }

    /// Runs until `shutdown` completes, then finishes and reports the games in play.
    pub(crate) async fn run(
        mut self,
        shutdown: impl Future<Output = ()>,
    ) -> Result<Ended, WorkerError> {
        tokio::pin!(shutdown);
        loop {
            self.reap_report().await;
            let report_due = self.collect_finished();
            self.stop_when_idle();
            if self.is_drained() {
                if let Some(updater) = &mut self.updater {
                    updater.abandon();
                }
                self.drain().await;
                return Ok(Ended::Stopped);
            }
            if let Some(version) = self.update_when_idle().await {
                tracing::info!(%version, "updated: starting again as tourney {version}");
                self.drain().await;
                return Ok(Ended::Updated { version });
            }
            self.queued_shown.set(self.desk.queued() as i64);
            self.desk.start_threads(&self.metrics);
            self.busy_shown.set(self.desk.cores_busy().0 as i64);
            if !self.keep_session(shutdown.as_mut()).await? {
                continue;
            }
            if report_due {
                self.report();
            }
            let mut healthy = self.heartbeat().await;
            if healthy {
                match self.lease().await {
                    Leased::Some => continue,
                    Leased::Nothing => {}
                    Leased::Failed => healthy = false,
                }
            }
            if !healthy {
                self.metrics.reconnects.inc();
                self.session = None;
                continue;
            }
            let wake = self.wake_at();
            tokio::select! {
                () = self.desk.woken() => {}
                outcome = async { self.report_task.as_mut().expect("guarded").await }, if self.report_task.is_some() => {
                    self.report_task = None;
                    if let Ok(Err(failed)) = outcome {
                        self.report_failed(failed);
                    }
                }
                _ = &mut shutdown, if !self.stopping => self.stopping = true,
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// Starts stopping once no work has been held for the worker's `exit_when_idle`.
    fn stop_when_idle(&mut self) {
        let now = Instant::now();
        if self.desk.held() > 0 || !self.unreported.is_empty() || self.report_task.is_some() {
            self.busy_at = now;
        }
        if let Some(idle) = self.options.exit_when_idle
            && !self.stopping
            && now >= self.busy_at + idle
        {
            tracing::info!(
                idle_s = idle.as_secs(),
                "no work came: stopping (--exit-when-idle)"
            );
            self.stopping = true;
        }
    }

    /// Counts `n` pairs of `lease` as done; a lease with none left is forgotten.
    fn forget(&mut self, lease: u64, n: usize) {
        if let Some(count) = self.leases.get_mut(&lease) {
            *count = count.saturating_sub(n);
            if *count == 0 {
                self.leases.remove(&lease);
                self.cancels.remove(&lease);
            }
        }
    }

    /// Returns the pairs not started when stopping (their leases expire and they are
    /// offered again) and, when a report is due, takes the finished results to report.
    /// Results are taken only then: a game thread wakes this side for the first result
    /// on an empty desk, not for every pair. Returns whether a report is due.
    fn collect_finished(&mut self) -> bool {
        if self.stopping {
            for lease in self.desk.unqueue(None) {
                self.forget(lease, 1);
            }
        }
        // A worker with nothing left to play reports at once: there is nothing to batch
        // with.
        let due = self.stopping || self.desk.held() == 0 || Instant::now() >= self.next_report;
        if due && self.report_task.is_none() {
            for done in self.desk.take_finished() {
                self.forget(done.lease, 1);
                // A result of a dropped lease is still sent: the coordinator keeps a result
                // for a pair nobody else completed and ignores repeats.
                self.unreported
                    .extend(done.checks.into_iter().map(Outcome::Checked));
                self.unreported.extend(done.outcome);
            }
        }
        due
    }

    /// Stopping, with no game in play and every result acknowledged.
    fn is_drained(&self) -> bool {
        self.stopping
            && self.desk.threads() == 0
            && !self.desk.has_finished()
            && self.unreported.is_empty()
            && self.report_task.is_none()
    }

    /// Installs the release being taken once the worker holds no work: nothing queued or
    /// in play, every result acknowledged (or, when the coordinator refuses this version,
    /// none can be); its version when installed.
    async fn update_when_idle(&mut self) -> Option<String> {
        let updater = self.updater.as_mut().filter(|u| u.is_pending())?;
        let reportable = !updater.is_refused() && !self.unreported.is_empty();
        let idle = self.desk.held() == 0
            && self.desk.threads() == 0
            && !self.desk.has_finished()
            && self.report_task.is_none()
            && !reportable;
        if !idle {
            return None;
        }
        let version = updater.install_when_staged().await?;
        if !self.unreported.is_empty() {
            tracing::warn!(
                results = self.unreported.len(),
                "results the coordinator refuses from this version are dropped: their pairs \
                 are played again"
            );
        }
        Some(version)
    }

    /// Ends the engine processes kept for next pairs (`quit` first).
    async fn drain(&self) {
        let metrics = self.metrics.clone();
        let _ = tokio::task::spawn_blocking(move || play::retire_engines(&metrics)).await;
    }

    /// Opens a session when there is none: true when there is one. A failed attempt
    /// waits its backoff (doubled each time, at most [`MAX_BACKOFF`]) or the shutdown.
    ///
    /// # Errors
    /// The coordinator refused the worker token.
    async fn keep_session(
        &mut self,
        shutdown: Pin<&mut impl Future<Output = ()>>,
    ) -> Result<bool, WorkerError> {
        if self.session.is_some() {
            return Ok(true);
        }
        if self.updater.as_ref().is_some_and(Updater::is_refused) {
            // Refused until it updates: it waits for the release.
            tokio::select! {
                _ = tokio::time::sleep(UPDATE_POLL) => {}
                _ = shutdown, if !self.stopping => self.stopping = true,
            }
            return Ok(false);
        }
        match open_session(&self.options).await {
            Ok(mut s) => {
                if let (Some(updater), Some(release)) = (&mut self.updater, s.release.take()) {
                    updater.offer(release, s.fetcher.clone(), false);
                }
                self.session = Some(s);
                self.backoff = FIRST_BACKOFF;
                Ok(true)
            }
            Err(e @ (WorkerError::Refused | WorkerError::Rejected(_))) => Err(e),
            Err(WorkerError::MustUpdate(release))
                if self.updater.is_some() && self.take_refused((*release).clone()) =>
            {
                Ok(false)
            }
            Err(e) => {
                // A coordinator that says when to come back is heeded; either way the wait
                // is jittered, so that a fleet that lost its coordinator at once does not
                // come back at once.
                let wait = match &e {
                    WorkerError::Busy(retry) => jittered((*retry).max(self.backoff)),
                    _ => jittered(self.backoff),
                };
                tracing::warn!(error = %e, retry_in_s = wait.as_secs_f64(), "no session");
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown, if !self.stopping => self.stopping = true,
                }
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                Ok(false)
            }
        }
    }

    /// Takes the release a coordinator that refuses this version offers: whether it is
    /// being taken (else the refusal stands, retried with backoff).
    fn take_refused(&mut self, release: pb::Release) -> bool {
        tracing::info!(
            version = %release.version,
            "the coordinator refuses this version until it updates"
        );
        let fetcher = crate::fetcher(&self.options, "");
        let Some(updater) = self.updater.as_mut() else {
            return false;
        };
        updater.offer(release, fetcher, true);
        updater.is_refused()
    }

    /// Keeps the leases alive when a heartbeat is due, and drops those the coordinator
    /// ended. False when the call failed (the session is lost).
    async fn heartbeat(&mut self) -> bool {
        if Instant::now() < self.next_heartbeat {
            return true;
        }
        let Some(s) = self.session.as_mut() else {
            return false;
        };
        let request = pb::HeartbeatRequest {
            worker_id: s.worker_id.clone(),
            lease_ids: self.leases.keys().copied().collect(),
            busy_slots: self.desk.threads() as u32,
        };
        let answer = s.client.heartbeat(request).await;
        let Ok(reply) = answer else {
            self.next_heartbeat = Instant::now() + s.heartbeat;
            return false;
        };
        let reply = reply.into_inner();
        // The coordinator stretches the cadence as its fleet grows.
        s.set_cadence(reply.heartbeat_ms, reply.report_ms);
        self.next_heartbeat = Instant::now() + s.heartbeat;
        for lease in reply.drop_leases {
            if let Some(flag) = self.cancels.get(&lease) {
                flag.store(true, Ordering::Relaxed);
            }
            let removed = self.desk.unqueue(Some(lease)).len();
            self.forget(lease, removed);
        }
        true
    }

    /// Leases ahead, so that a finished game finds the next pair waiting; each pair is
    /// prepared (its programs fetched) and queued, or reported as unplayable here.
    async fn lease(&mut self) -> Leased {
        let wanted = self.desk.wanted();
        let updating = self.updater.as_ref().is_some_and(Updater::is_pending);
        if self.stopping || updating || wanted == 0 || Instant::now() < self.idle_until {
            return Leased::Nothing;
        }
        let Some(s) = self.session.as_mut() else {
            return Leased::Failed;
        };
        let request = pb::LeaseRequest {
            worker_id: s.worker_id.clone(),
            max_pairs: wanted as u32,
        };
        // Any failure loses the session, a refused one included: a coordinator that
        // restarted knows no earlier registration, and registering again says whether the
        // token itself is refused.
        let reply = match s.client.lease(request).await {
            Ok(reply) => reply,
            // The coordinator is busy: come back when it says, jittered; the session stays.
            Err(e) if e.code() == tonic::Code::ResourceExhausted => {
                let retry = tourney_proto::retry_pushback(&e).unwrap_or(Duration::from_secs(1));
                self.idle_until = Instant::now() + jittered(retry);
                return Leased::Nothing;
            }
            Err(_) => return Leased::Failed,
        };
        let lease = reply.into_inner();
        if lease.jobs.is_empty() {
            self.idle_until = Instant::now() + IDLE_WAIT;
        }
        let cancel = Arc::clone(self.cancels.entry(lease.lease_id).or_default());
        for job in lease.jobs {
            let (tournament, pair) = (job.tournament, job.pair);
            // A job that does not fit the model (an unknown game, say) cannot be played
            // here: reported like an engine that cannot start.
            let prepared = match PairJob::try_from(job) {
                // Not played on fewer cores than its costliest side's threads: the coordinator
                // offers it to a worker with more.
                Ok(job) if job.cores() as usize > self.options.cores => {
                    Err(play::PlayError::TooFewCores {
                        needs: job.cores(),
                        offers: self.options.cores,
                    })
                }
                Ok(job) => {
                    let leased = [job.first.clone(), job.second.clone()];
                    let s = self.session.as_mut().expect("checked above");
                    play::prepare(&s.fetcher, &self.options.cache_dir, job)
                        .await
                        .map(|job| (job, leased))
                }
                Err(e) => Err(e.into()),
            };
            match prepared {
                Ok((job, leased)) => {
                    *self.leases.entry(lease.lease_id).or_default() += 1;
                    self.desk.push(desk::Queued {
                        lease: lease.lease_id,
                        job,
                        leased,
                        cancelled: Arc::clone(&cancel),
                    });
                }
                Err(reason) => {
                    tracing::warn!(
                        lease = lease.lease_id,
                        tournament,
                        pair,
                        %reason,
                        "pair cannot be played here"
                    );
                    // Content that is not what its sha256 names is wrong for every worker:
                    // the engine's fault, and the test pauses at once.
                    let (engine, engine_fault) = match &reason {
                        play::PlayError::Mismatch(engine) => (engine.clone(), true),
                        _ => (String::new(), false),
                    };
                    self.unreported.push(Outcome::Failed(pb::PairFailure {
                        tournament,
                        pair,
                        reason: reason.to_string(),
                        lease_id: lease.lease_id,
                        engine,
                        engine_fault,
                        log: String::new(),
                    }));
                }
            }
        }
        Leased::Some
    }

    /// When to look again without an event: the next lease or heartbeat, or the next
    /// report when results wait for one.
    fn wake_at(&self) -> Instant {
        let mut wake = if self.desk.wanted() > 0 && !self.stopping {
            self.idle_until.max(Instant::now()).min(self.next_heartbeat)
        } else {
            self.next_heartbeat
        };
        if self.report_task.is_none() && (!self.unreported.is_empty() || self.desk.has_finished()) {
            wake = wake.min(self.next_report);
        }
        if self.updater.as_ref().is_some_and(Updater::is_pending) {
            wake = wake.min(Instant::now() + UPDATE_POLL);
        }
        wake
    }
}

/// `wait` with jitter: somewhere from half of it to all of it.
pub(crate) fn jittered(wait: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let fraction = (h.finish() >> 11) as f64 / (1u64 << 53) as f64;
    wait.mul_f64(0.5 + fraction / 2.0)
}

#[cfg(test)]
mod tests;
