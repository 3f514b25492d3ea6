//! Leasing: pairs handed out to workers in leases, kept alive by heartbeats, expired.

use tourney_model::job::{Engine, GameSettings, PairJob};

use crate::scheduler::LeaseId;
use crate::state::{Coordinator, Inner};

/// The most pairs `worker` may lease now: its slots' share of the pairs left to offer (and
/// at least one per slot). Workers queue pairs ahead; near the end of the work, a worker
/// that took a deep queue would keep the others idle while it plays it alone.
fn tail_share(inner: &mut Inner, worker: &str, now: u64, lease_ms: u64) -> usize {
    let (mine, all) = inner.fleet.slots(worker, now, lease_ms);
    let share = (inner.scheduler.offerable() * mine).div_ceil(all.max(1));
    share.max(mine) as usize
}

impl Coordinator {
    /// Leases up to `max_pairs` pairs to a worker.
    pub fn lease(&self, worker: &str, max_pairs: usize) -> Option<(LeaseId, Vec<PairJob>)> {
        let _timer = self.metrics.lease_latency.start_timer();
        if self.store_fault().is_some() {
            // Results could not be stored: no new work until the store recovers.
            return None;
        }
        let now = self.now_ms();
        let mut inner = self.lock();
        inner.fleet.seen(worker, now);
        let max_pairs = max_pairs
            .min(self.settings.max_pairs_per_lease)
            .min(tail_share(&mut inner, worker, now, self.settings.lease_ms));
        // A worker the fleet does not know (the coordinator's own tests) takes anything.
        let profile = inner.fleet.profile(worker);
        let fits = |config: &tourney_model::tournament::TournamentConfig| {
            (profile.as_ref()).is_none_or(|p| config.unmet_by(p).is_none())
        };
        let (lease, assignments) = inner.scheduler.lease(worker, max_pairs, now, &fits)?;
        let token = inner.fleet.token_of(worker).unwrap_or_default().to_string();
        self.metrics.leases_granted.inc();
        tracing::debug!(lease = lease.id, %worker, pairs = assignments.len(), "lease granted");
        let inner = &mut *inner;
        let jobs = assignments
            .into_iter()
            .map(|a| {
                let t = inner.tournaments.get_mut(&a.tournament).expect("leased");
                let scheduled = inner.scheduler.tournament(a.tournament).expect("leased");
                let config = &scheduled.config;
                let suite = |index: u64| {
                    let index = index % t.openings.len().max(1) as u64;
                    let text = t.openings.line(index as usize).unwrap_or_default();
                    (text.to_string(), index)
                };
                let [game0, game1] = config.pair_openings(a.pair);
                let ((opening, opening_index), second_opening) = if t.settings.engine_openings {
                    ((String::new(), 0), None)
                } else if game0 == game1 {
                    (suite(game0), None)
                } else {
                    (suite(game0), Some(suite(game1)))
                };
                let engines = [
                    Engine::of(config, a.first, &t.artifacts),
                    Engine::of(config, a.second, &t.artifacts),
                ];
                // A tuning run's sides play with the values of their perturbation.
                let [first, second] =
                    crate::tournaments::tuning::engines_of(t, scheduled, a.pair, engines);
                let ticket = crate::ticket::Sealed {
                    tournament: a.tournament,
                    pair: a.pair,
                    host: crate::scheduler::host(worker),
                    token: &token,
                    engines: [&first.identity(), &second.identity()],
                }
                .ticket(&self.lease_key);
                PairJob {
                    tournament: a.tournament,
                    pair: a.pair,
                    settings: GameSettings::clone(&t.settings),
                    first,
                    second,
                    opening,
                    opening_index,
                    second_opening,
                    seed: config.pair_seed(a.pair),
                    ticket,
                    gpus: config.requires.gpu_need(),
                }
            })
            .collect();
        Some((lease.id, jobs))
    }

    /// Keeps a worker's leases alive; returns those it must drop.
    pub fn heartbeat(&self, worker: &str, leases: &[LeaseId]) -> Vec<LeaseId> {
        let now = self.now_ms();
        let mut inner = self.lock();
        inner.fleet.seen(worker, now);
        inner.scheduler.heartbeat(worker, leases, now)
    }

    /// Expires overdue leases.
    pub fn tick(&self) {
        let now = self.now_ms();
        let expired = {
            let mut inner = self.lock();
            inner.fleet.tick(now);
            inner.scheduler.tick(now)
        };
        if !expired.is_empty() {
            self.metrics.leases_expired.inc_by(expired.len() as u64);
            self.changed();
        }
        let coordinator = crate::accounts::Principal::operator("coordinator");
        for (url, event) in self.notifier.take_failures() {
            self.record_event(&coordinator, "webhook-failed", &url, event);
        }
    }
}
