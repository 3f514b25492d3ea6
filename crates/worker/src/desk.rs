//! The desk between the game threads and the worker's async side: leased pairs waiting to
//! be played, and finished ones waiting to be reported.
//!
//! A game thread takes its next pair from the desk and leaves its result there without
//! waking the async side for every pair: with games of a millisecond, a wakeup per pair
//! costs the games measurable time on a loaded machine. It wakes the async side only when
//! the first result lands on an empty desk (a report will be due), when the pairs held
//! fall to the low-water mark (time to lease more), and when it ends. How deep to lease is
//! learnt here too, from each pair as it finishes.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tourney_model::job::PairJob;
use tourney_proto::v1 as pb;
use tourney_runner::confine::EnginePolicy;

use crate::WorkerMetrics;
use crate::affinity::{Pinned, Placement, Unit};
use crate::ahead::LeaseAhead;
use crate::builds::BuildCache;
use crate::gpus::{Gpu, GpuSlots};
use crate::play::play_pair;
use crate::ready::{NotReady, Readiness};

/// What a worker tells the coordinator about a pair.
#[derive(Clone)]
pub(crate) enum Outcome {
    /// Both games played.
    Played(pb::PairResult),
    /// No game could be played.
    Failed(pb::PairFailure),
    /// What was measured of an engine before its first game here.
    Checked(pb::EngineCheck),
}

/// A leased pair waiting for a game thread.
pub(crate) struct Queued {
    /// The lease it came in.
    pub(crate) lease: u64,
    /// What to play (outside engines' programs at their cached copies).
    pub(crate) job: PairJob,
    /// The pair's engines as leased: how its records name them.
    pub(crate) leased: [tourney_model::job::Engine; 2],
    /// Set when the coordinator drops the lease.
    pub(crate) cancelled: Arc<AtomicBool>,
}

/// A pair a game thread is done with.
pub(crate) struct Finished {
    /// The lease it came in.
    pub(crate) lease: u64,
    /// What to tell the coordinator (`None`: abandoned because the lease was dropped).
    pub(crate) outcome: Option<Outcome>,
    /// What was measured of its engines (their first pair here).
    pub(crate) checks: Vec<pb::EngineCheck>,
    /// How long it took.
    pub(crate) took: Duration,
    /// The cores it kept while it ran (given back now).
    pub(crate) cores: usize,
    /// The pinned units it kept (`--affinity`; given back now).
    pub(crate) units: Vec<usize>,
    /// The GPUs it kept (places in the worker's [`GpuSlots`]; given back now).
    pub(crate) gpus: Vec<usize>,
}

/// A queued pair taken to be played, with the units it is pinned to (if any) and their
/// CPUs.
struct Taken {
    queued: Queued,
    units: Vec<usize>,
    cpus: Vec<usize>,
    /// Its GPUs' places in the worker's [`GpuSlots`], and the environment that shows its
    /// engines them.
    gpus: Vec<usize>,
    gpu_env: Vec<(String, String)>,
}

struct State {
    queue: VecDeque<Queued>,
    finished: Vec<Finished>,
    /// Pairs on game threads now.
    playing: usize,
    /// Game threads running.
    threads: usize,
    /// Game threads allowed.
    slots: usize,
    /// Cores offered to the games: the pairs in play keep at most this many.
    cores: usize,
    /// Cores kept by the pairs in play (each its [`PairJob::cores`]).
    busy: usize,
    /// The most cores ever kept at once (for tests of the accounting).
    peak: usize,
    /// The cores of the pair queued last: how many games at once the work of now fits.
    last_cost: usize,
    /// How far ahead to lease, learnt from the pairs played.
    ahead: LeaseAhead,
    /// The units games are pinned to, with `--affinity` (then `cores` is their number).
    placement: Option<Placement>,
    /// The worker's GPUs, given to the games that need them.
    gpus: GpuSlots,
    /// How many games of the pair queued last its GPUs let run at once.
    last_gpu_games: usize,
}

impl State {
    fn held(&self) -> usize {
        self.queue.len() + self.playing
    }

    /// The cores `queued` keeps while it runs, within the budget (a pair that needs more
    /// is refused before it is queued).
    fn cost(&self, queued: &Queued) -> usize {
        (queued.job.cores() as usize).clamp(1, self.cores)
    }

    /// Games that fit at once: the slots, or fewer when the pairs' engines take more
    /// cores than the budget gives each slot.
    fn fitting(&self) -> usize {
        (self.slots)
            .min(self.cores / self.last_cost.max(1))
            .min(self.last_gpu_games)
            .max(1)
    }

    /// The front of the queue, counted in play with its cores kept, if its cores are free.
    /// With `--affinity`, it takes as many units as cores, and is pinned to them.
    fn take_fitting(&mut self) -> Option<Taken> {
        let cost = self.cost(self.queue.front()?);
        if self.busy + cost > self.cores {
            return None;
        }
        let need = &self.queue.front()?.job.gpus;
        let gpus = if need.count == 0 {
            Vec::new()
        } else {
            self.gpus.take(need)?
        };
        let gpu_env = self.gpus.environment(&gpus);
        self.busy += cost;
        self.peak = self.peak.max(self.busy);
        self.playing += 1;
        let (units, cpus) = match &mut self.placement {
            Some(placement) => {
                let units = placement.take(cost);
                let cpus = placement.cpus(&units);
                (units, cpus)
            }
            None => (Vec::new(), Vec::new()),
        };
        let queued = self.queue.pop_front()?;
        Some(Taken {
            queued,
            units,
            cpus,
            gpus,
            gpu_env,
        })
    }
}

/// Shared by the game threads and the async side.
pub(crate) struct Desk {
    state: Mutex<State>,
    wake: Notify,
    /// How the outside engines of its pairs are confined.
    policy: EnginePolicy,
    /// Builds from source and bench checks.
    readiness: Readiness,
}

impl Desk {
    /// An empty desk for at most `slots` game threads keeping at most `cores` cores,
    /// whose outside engines are confined by `policy` and built through `builds`. With
    /// `pinned` units, each game is pinned to units of its own, one a core, and the cores
    /// are at most the units.
    pub(crate) fn new(
        slots: usize,
        cores: usize,
        policy: EnginePolicy,
        builds: BuildCache,
        pinned: Option<Vec<Unit>>,
    ) -> Self {
        let placement = pinned.filter(|u| !u.is_empty()).map(Placement::new);
        let cores = placement.as_ref().map_or(cores, |p| cores.min(p.len()));
        Desk {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                finished: Vec::new(),
                playing: 0,
                threads: 0,
                slots,
                cores: cores.max(1),
                busy: 0,
                peak: 0,
                last_cost: 1,
                ahead: LeaseAhead::default(),
                placement,
                gpus: GpuSlots::new(Vec::new(), 1),
                last_gpu_games: usize::MAX,
            }),
            wake: Notify::new(),
            readiness: Readiness::new(builds, policy.clone()),
            policy,
        }
    }

    /// The same desk giving games that need GPUs devices of `gpus`, each to at most
    /// `per_gpu` games at once.
    pub(crate) fn with_gpus(self, gpus: Vec<Gpu>, per_gpu: u32) -> Self {
        self.state().gpus = GpuSlots::new(gpus, per_gpu);
        self
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits until a game thread asks for attention (at once if one asked since last time).
    pub(crate) async fn woken(&self) {
        self.wake.notified().await;
    }

    /// Queues a leased pair.
    pub(crate) fn push(&self, queued: Queued) {
        let mut state = self.state();
        state.last_cost = state.cost(&queued);
        state.last_gpu_games = state.gpus.games(&queued.job.gpus);
        state.queue.push_back(queued);
    }

    /// Cores kept by the pairs in play now, and the most ever kept at once.
    pub(crate) fn cores_busy(&self) -> (usize, usize) {
        let state = self.state();
        (state.busy, state.peak)
    }

    /// Pairs held: queued or in play.
    pub(crate) fn held(&self) -> usize {
        self.state().held()
    }

    /// Pairs queued, not yet on a game thread.
    pub(crate) fn queued(&self) -> usize {
        self.state().queue.len()
    }

    /// Game threads running.
    pub(crate) fn threads(&self) -> usize {
        self.state().threads
    }

    /// Whether results wait to be taken.
    pub(crate) fn has_finished(&self) -> bool {
        !self.state().finished.is_empty()
    }

    /// Pairs to lease now (see [`LeaseAhead::wanted`]).
    pub(crate) fn wanted(&self) -> usize {
        let state = self.state();
        state.ahead.wanted(state.held(), state.fitting())
    }

    /// Takes the results left since last time.
    pub(crate) fn take_finished(&self) -> Vec<Finished> {
        std::mem::take(&mut self.state().finished)
    }

    /// Removes the queued pairs of `lease` (all leases: `None`), returning the leases of
    /// the pairs removed.
    pub(crate) fn unqueue(&self, lease: Option<u64>) -> Vec<u64> {
        let mut removed = Vec::new();
        self.state().queue.retain(|q| {
            let keep = lease.is_some_and(|l| l != q.lease);
            if !keep {
                removed.push(q.lease);
            }
            keep
        });
        removed
    }

    /// Starts game threads, up to the slots, for the queued pairs whose cores are free.
    pub(crate) fn start_threads(self: &Arc<Self>, metrics: &WorkerMetrics) {
        let mut state = self.state();
        while state.threads < state.slots {
            let Some(first) = state.take_fitting() else {
                break;
            };
            state.threads += 1;
            let (desk, metrics) = (Arc::clone(self), metrics.clone());
            tokio::task::spawn_blocking(move || desk.game_thread(first, &metrics));
        }
    }

    /// A game thread: plays `first`, then queued pairs while their cores are free.
    fn game_thread(&self, first: Taken, metrics: &WorkerMetrics) {
        let mut next = Some(first);
        while let Some(Taken {
            queued,
            units,
            cpus,
            gpus,
            gpu_env,
        }) = next.take()
        {
            let cores = self.state().cost(&queued);
            // Built-in players think on this thread, pinned; outside engines are pinned as
            // they start (and kept apart by their CPUs).
            let pinned = Pinned::new(&cpus);
            // Its engines see only its GPUs.
            let policy = EnginePolicy {
                cpus,
                env: gpu_env,
                ..self.policy.clone()
            };
            metrics.pairs_in_play.inc();
            let span = tracing::debug_span!(
                "pair",
                lease = queued.lease,
                tournament = queued.job.tournament,
                pair = queued.job.pair
            )
            .entered();
            let started = Instant::now();
            let mut job = queued.job;
            let (checks, result) = match self.readiness.ready(&mut job) {
                Ok(ready) => {
                    let played = play_pair(
                        &job,
                        &queued.leased,
                        &queued.cancelled,
                        &policy,
                        ready.clock_scale,
                        metrics,
                    );
                    let checks = ready.checks;
                    (
                        checks,
                        played.map_err(|e| NotReady {
                            engine: String::new(),
                            fault: false,
                            reason: e.to_string(),
                            log: String::new(),
                        }),
                    )
                }
                Err(not_ready) => (Vec::new(), Err(not_ready)),
            };
            let took = started.elapsed();
            tracing::debug!(
                ms = took.as_millis() as u64,
                played = result.is_ok(),
                "pair done"
            );
            drop(span);
            drop(pinned);
            let outcome = match result {
                Ok(Some(mut r)) => {
                    r.lease_id = queued.lease;
                    metrics
                        .games
                        .with_label_values(&[job.settings.game.name()])
                        .inc_by(r.half_points.len() as u64);
                    Some(Outcome::Played(r))
                }
                Ok(None) => None,
                Err(not_ready) => Some(Outcome::Failed(pb::PairFailure {
                    tournament: job.tournament,
                    pair: job.pair,
                    reason: not_ready.reason,
                    lease_id: queued.lease,
                    engine: not_ready.engine,
                    engine_fault: not_ready.fault,
                    log: not_ready.log,
                })),
            };
            let results = checks.len() + usize::from(outcome.is_some());
            // Counted as unreported before it stops counting as in play, so that a reader
            // who sees neither knows the result has been reported.
            metrics.results_unreported.add(results as i64);
            metrics.pairs_in_play.dec();
            let (following, wake) = self.next(Some(Finished {
                lease: queued.lease,
                outcome,
                checks,
                took,
                cores,
                units,
                gpus,
            }));
            if wake {
                self.wake.notify_one();
            }
            next = following;
        }
    }

    /// Leaves a game thread's result (if any), gives back its cores, and gives it the next
    /// queued pair if that pair's cores are free, counted as in play (`None`: the thread
    /// ends); and whether to wake the async side.
    fn next(&self, done: Option<Finished>) -> (Option<Taken>, bool) {
        let mut state = self.state();
        let mut wake = false;
        if let Some(done) = done {
            state.playing -= 1;
            state.busy -= done.cores.min(state.busy);
            if let Some(placement) = &mut state.placement {
                placement.give(&done.units);
            }
            state.gpus.give(&done.gpus);
            if matches!(done.outcome, Some(Outcome::Played(_))) {
                state.ahead.observe(done.took);
            }
            wake |= state.finished.is_empty();
            state.finished.push(done);
        }
        wake |= state.held() <= state.ahead.low_water(state.fitting());
        let next = state.take_fitting();
        if next.is_none() {
            state.threads -= 1;
            wake = true;
        }
        (next, wake)
    }
}

#[cfg(test)]
pub(crate) mod tests;
