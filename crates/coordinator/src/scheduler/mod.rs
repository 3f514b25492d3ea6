//! The scheduling state machine, with no I/O and no clock of its own: time comes in as
//! `now` (milliseconds on any monotonic scale) with each event.
//!
//! Work is leased in game pairs (one opening, colours swapped). A lease has a deadline that
//! heartbeats extend; [`Scheduler::tick`] puts the unfinished pairs of expired leases back
//! on offer. A result names its tournament and pair: the first result for a pair is kept,
//! whoever sent it (a late result from an expired lease included), and every later one is
//! acknowledged as a duplicate and ignored. An SPRT decides on the longest prefix of
//! completed pairs in pair-index order, so quickly finished pairs cannot bias it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use tourney_model::tournament::{EngineEntry, PairOutcome, State, TournamentConfig};

mod cost;
mod dynamic;
mod gate;
mod pairs;
mod pool;
mod share;
pub mod simulate;
mod sprt;
mod tournament;

pub use cost::{SHARE_HALF_LIFE_MS, pair_core_seconds};
pub use dynamic::Planner;
pub use gate::{Gate, GateDecision, OpenGate};
pub(crate) use pairs::{Outcomes, PairSet};
pub use pool::Pool;
pub(crate) use pool::settings_of as pool_settings;
pub use share::{AUTHOR_SHARES, Share};
pub use tournament::{Tournament, sprt_of};

/// A tournament's number.
pub type TournamentId = u64;
/// A lease's number.
pub type LeaseId = u64;

/// A pair handed to a worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The tournament.
    pub tournament: TournamentId,
    /// The pair's index.
    pub pair: u64,
    /// Engine indices: `first` moves first in game 0.
    pub first: usize,
    /// The other engine.
    pub second: usize,
    /// Index into the tournament's opening suite.
    pub opening: u64,
}

/// A lease: pairs given to one worker until a deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The lease's number.
    pub id: LeaseId,
    /// The worker holding it.
    pub worker: String,
    /// Until when (`now` scale).
    pub deadline: u64,
    /// The pairs in it, by tournament.
    pub pairs: Vec<(TournamentId, u64)>,
}

/// The answer to a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReportAck {
    /// Results newly recorded.
    pub accepted: u32,
    /// Results for pairs already recorded (ignored).
    pub duplicates: u32,
    /// Results for unknown tournaments or pairs (ignored).
    pub rejected: u32,
}

/// The host of a worker id (`name#n`, as the coordinator numbers sessions): what stays the
/// same when a worker reconnects.
pub fn host(worker: &str) -> &str {
    worker.rsplit_once('#').map_or(worker, |(name, _)| name)
}

/// How many lease periods an expired lease is remembered for late results.
pub const EXPIRED_KEPT: u64 = 10;

/// The scheduler of all tournaments and leases.
#[derive(Debug, Default)]
pub struct Scheduler {
    tournaments: BTreeMap<TournamentId, Tournament>,
    leases: HashMap<LeaseId, Lease>,
    /// Leases expired within the last [`EXPIRED_KEPT`] lease periods, with when they
    /// expired: a late result is still taken from the worker that held the lease (if
    /// nobody else finished the pair), and from no one else.
    expired: HashMap<LeaseId, (Lease, u64)>,
    next_lease: LeaseId,
    /// This scheduler's first lease id: a lower one is of an earlier run of the
    /// coordinator (ids grow across restarts: [`Scheduler::starting_leases_at`]).
    first_lease: LeaseId,
    /// How long a lease lasts without a heartbeat.
    pub lease_ms: u64,
    /// The most an author's live tests take together, in tests of weight 1.
    author_shares: f64,
}

impl Scheduler {
    /// A scheduler whose leases last `lease_ms` without a heartbeat.
    pub fn new(lease_ms: u64) -> Self {
        Scheduler {
            lease_ms,
            next_lease: 1,
            first_lease: 1,
            author_shares: AUTHOR_SHARES,
            ..Scheduler::default()
        }
    }

    /// This scheduler with its lease ids from `first` on: a coordinator starts them past
    /// every id an earlier run of it gave, so that a worker's lease from before a restart
    /// is never taken for another's.
    pub fn starting_leases_at(mut self, first: LeaseId) -> Self {
        self.next_lease = first.max(1);
        self.first_lease = self.next_lease;
        self
    }

    /// Adds a tournament (new, or restored with its completed pairs and state).
    pub fn add(
        &mut self,
        id: TournamentId,
        config: impl Into<Arc<TournamentConfig>>,
        state: State,
        completed: impl IntoIterator<Item = PairOutcome>,
    ) {
        let mut t = Tournament::new(id, config.into());
        t.state = state;
        t.restore(completed);
        self.tournaments.insert(id, t);
    }

    /// A tournament.
    pub fn tournament(&self, id: TournamentId) -> Option<&Tournament> {
        self.tournaments.get(&id)
    }

    /// All tournaments, oldest first.
    pub fn tournaments(&self) -> impl DoubleEndedIterator<Item = &Tournament> {
        self.tournaments.values()
    }

    /// Live leases.
    pub fn leases(&self) -> impl Iterator<Item = &Lease> {
        self.leases.values()
    }

    /// Pairs that can be offered now, over all tournaments.
    pub fn offerable(&self) -> u64 {
        self.tournaments.values().map(Tournament::offerable).sum()
    }

    /// Leases up to `max_pairs` pairs to `worker`, from the active tournaments by priority,
    /// then by the least core-time given per unit of weight (see `share`), among those the
    /// worker `fits` (it meets their `[requires]`, labels and noisiness). `None` when there
    /// is no work for it.
    pub fn lease(
        &mut self,
        worker: &str,
        max_pairs: usize,
        now: u64,
        fits: &dyn Fn(&TournamentConfig) -> bool,
    ) -> Option<(Lease, Vec<Assignment>)> {
        let mut assignments = Vec::new();
        let id = self.next_lease;
        let weights = self.effective_weights();
        while assignments.len() < max_pairs {
            let candidates: Vec<TournamentId> = (self.tournaments.values())
                .filter(|t| {
                    t.has_work()
                        && !t.unfit.contains(host(worker))
                        && !t.excluded_hosts.contains(host(worker))
                        && fits(&t.config)
                })
                .map(|t| t.id)
                .collect();
            let Some(tid) = self.neediest(&weights, &candidates, now) else {
                break;
            };
            let t = self.tournaments.get_mut(&tid).expect("chosen from the map");
            let Some(pair) = t.take_pair() else { break };
            t.leased.insert(pair, id);
            t.completed.start(now);
            if t.state == State::Queued {
                t.state = State::Running;
            }
            assignments.push(t.assignment(pair));
        }
        if assignments.is_empty() {
            return None;
        }
        self.next_lease += 1;
        let lease = Lease {
            id,
            worker: worker.to_string(),
            deadline: now + self.lease_ms,
            pairs: assignments.iter().map(|a| (a.tournament, a.pair)).collect(),
        };
        self.leases.insert(id, lease.clone());
        Some((lease, assignments))
    }

    /// Records pair results played by `worker`. Unknown pairs are rejected, repeated ones
    /// acknowledged and ignored. Returns the counts and the tournaments whose state changed.
    pub fn report(
        &mut self,
        worker: &str,
        results: &[(TournamentId, PairOutcome)],
        now: u64,
    ) -> (ReportAck, Vec<TournamentId>) {
        let mut ack = ReportAck::default();
        let mut changed = Vec::new();
        for &(tid, outcome) in results {
            let Some(t) = self.tournaments.get_mut(&tid) else {
                ack.rejected += 1;
                continue;
            };
            if outcome.pair >= t.pair_limit() {
                ack.rejected += 1;
                continue;
            }
            let before = t.state;
            if let Some(lease) = t.leased.get(&outcome.pair).copied()
                && let Some(l) = self.leases.get_mut(&lease)
            {
                l.pairs.retain(|&(lt, lp)| (lt, lp) != (tid, outcome.pair));
                // A lease with nothing left is forgotten (only those this report
                // touched: a walk of every lease per report is the whole fleet's).
                if l.pairs.is_empty() {
                    self.leases.remove(&lease);
                }
            }
            if t.record(outcome, host(worker)) {
                t.completed.add(now, 1.0);
                ack.accepted += 1;
            } else {
                ack.duplicates += 1;
            }
            if t.state != before && !changed.contains(&tid) {
                changed.push(tid);
            }
        }
        (ack, changed)
    }

    /// The lease that holds a pair now, if any.
    pub fn lease_of(&self, tournament: TournamentId, pair: u64) -> Option<LeaseId> {
        self.tournaments
            .get(&tournament)?
            .leased
            .get(&pair)
            .copied()
    }

    /// Extends the worker's leases; returns the ids of its leases that are gone (expired,
    /// unknown, or for tournaments that ended), which it should drop. A lease of an earlier
    /// run of the coordinator is not dropped: its pairs, if still open when they finish,
    /// are taken on their tickets.
    pub fn heartbeat(&mut self, worker: &str, held: &[LeaseId], now: u64) -> Vec<LeaseId> {
        let mut drop = Vec::new();
        for &id in held.iter().filter(|&&id| id >= self.first_lease) {
            let alive = self.leases.get(&id).is_some_and(|l| {
                l.worker == worker
                    && l.pairs
                        .iter()
                        .any(|(t, _)| self.tournaments.get(t).is_some_and(|t| t.state.is_active()))
            });
            if alive {
                if let Some(l) = self.leases.get_mut(&id) {
                    l.deadline = now + self.lease_ms;
                }
            } else {
                drop.push(id);
            }
        }
        drop
    }

    /// Expires leases past their deadline: their unfinished pairs are offered again.
    /// Returns the expired lease ids.
    pub fn tick(&mut self, now: u64) -> Vec<LeaseId> {
        let expired: Vec<LeaseId> = self
            .leases
            .values()
            .filter(|l| l.deadline <= now)
            .map(|l| l.id)
            .collect();
        let kept = EXPIRED_KEPT * self.lease_ms;
        self.expired
            .retain(|_, (_, at)| now.saturating_sub(*at) < kept);
        for id in &expired {
            if let Some(lease) = self.leases.remove(id) {
                for &(tid, pair) in &lease.pairs {
                    if let Some(t) = self.tournaments.get_mut(&tid)
                        && t.leased.get(&pair) == Some(id)
                    {
                        t.leased.remove(&pair);
                        if !t.done.contains(pair) {
                            t.retry.insert(pair);
                        }
                    }
                }
                self.expired.insert(*id, (lease, now));
            }
        }
        expired
    }

    /// Whether `worker` holds (or held, until its lease expired a short while ago) `pair`
    /// of tournament `tournament` under lease `lease`: only then may it report the pair.
    pub fn holds(&self, worker: &str, lease: LeaseId, tournament: TournamentId, pair: u64) -> bool {
        let lease = self
            .leases
            .get(&lease)
            .or_else(|| self.expired.get(&lease).map(|(l, _)| l));
        lease.is_some_and(|l| l.worker == worker && l.pairs.contains(&(tournament, pair)))
    }

    /// Whether `worker` holds a pair of tournament `id` now.
    pub fn holds_any(&self, worker: &str, id: TournamentId) -> bool {
        (self.leases.values()).any(|l| l.worker == worker && l.pairs.iter().any(|(t, _)| *t == id))
    }

    /// Notes that `worker`'s host could not play `pair` of tournament `id`: the pair is
    /// offered again, and the host no more pairs of it until it is resumed. Returns whether
    /// the tournament is active.
    pub fn unfit(&mut self, id: TournamentId, worker: &str, pair: u64) -> bool {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return false;
        };
        t.unfit.insert(host(worker).to_string());
        self.give_back(id, pair)
    }

    /// Takes `pair` of tournament `id` out of its lease, to be offered again (to any
    /// worker the tournament still takes). Returns whether the tournament is active.
    pub fn give_back(&mut self, id: TournamentId, pair: u64) -> bool {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return false;
        };
        if let Some(lease) = t.leased.remove(&pair) {
            if let Some(l) = self.leases.get_mut(&lease) {
                l.pairs.retain(|&p| p != (id, pair));
                if l.pairs.is_empty() {
                    self.leases.remove(&lease);
                }
            }
            t.retry.insert(pair);
        }
        t.state.is_active()
    }

    /// Whether `worker`'s host could not play tournament `id`.
    pub fn is_unfit(&self, id: TournamentId, worker: &str) -> bool {
        self.tournaments
            .get(&id)
            .is_some_and(|t| t.unfit.contains(host(worker)))
    }

    /// Excludes the results of `host` (a worker name without its session number) from
    /// tournament `id`, or counts them again; `pairs` are those it played. An excluded host
    /// is offered none of the tournament's pairs. Returns whether the tournament's state
    /// changed (an SPRT decided, or undecided, by the change).
    pub fn set_excluded(
        &mut self,
        id: TournamentId,
        host: &str,
        excluded: bool,
        pairs: &[u64],
    ) -> bool {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return false;
        };
        let before = t.state;
        t.set_excluded(host, excluded, pairs);
        t.state != before
    }

    /// Pauses an active tournament: its leases are dropped at their next heartbeat and their
    /// pairs offered again once it resumes. Returns whether it was active.
    pub fn pause(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if t.state.is_active() => {
                t.state = State::Paused;
                let leased: Vec<u64> = t.leased.drain().map(|(pair, _)| pair).collect();
                for pair in leased {
                    t.retry.insert(pair);
                }
                true
            }
            _ => false,
        }
    }

    /// Resumes a paused or cancelled tournament with the pairs it has: queued, or running
    /// once it has pairs done; with `pending`, a cancelled one without pairs done waits
    /// for approval again. The pairs that were out when it stopped are offered first.
    /// Returns whether it was paused or cancelled.
    pub fn resume(&mut self, id: TournamentId, pending: bool) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if matches!(t.state, State::Paused | State::Cancelled) => {
                t.unfit.clear();
                let pending = pending && t.state == State::Cancelled;
                t.state = match (t.done.len, pending) {
                    (0, true) => State::Pending,
                    (0, false) => State::Queued,
                    _ => State::Running,
                };
                t.update_state();
                true
            }
            _ => false,
        }
    }

    /// Changes a tournament's priority and weight (its share of the workers among those of
    /// its priority). Returns whether it is one that has not ended.
    pub fn set_share(&mut self, id: TournamentId, priority: i32, weight: f64) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if !t.state.has_ended() => {
                let config = Arc::make_mut(&mut t.config);
                config.priority = priority;
                config.weight = weight;
                true
            }
            _ => false,
        }
    }

    /// Changes a tournament's pair budget (see [`TournamentConfig::set_pair_budget`]).
    /// Returns whether it is one that has not ended.
    ///
    /// # Errors
    /// A budget below the pairs already handed out, or one its format does not take.
    pub fn set_pair_budget(&mut self, id: TournamentId, pairs: u64) -> Result<bool, String> {
        match self.tournaments.get_mut(&id) {
            Some(t) if !t.state.has_ended() => {
                if pairs < t.next_pair {
                    return Err(format!(
                        "max_pairs: {} pairs have been handed out already: at least that many",
                        t.next_pair
                    ));
                }
                Arc::make_mut(&mut t.config).set_pair_budget(pairs)?;
                t.update_state();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Notes what a worker measured of engine `engine` (an index into tournament `id`'s
    /// engines): its bench signature and its speed, the reference for scaled clocks.
    pub fn learn_engine(
        &mut self,
        id: TournamentId,
        engine: usize,
        bench: Option<u64>,
        nps: Option<u64>,
    ) {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return;
        };
        if let Some(entry) = Arc::make_mut(&mut t.config).engines.get_mut(engine) {
            entry.bench = bench.or(entry.bench);
            entry.reference_nps = nps.or(entry.reference_nps);
        }
    }

    /// The settings of tournament `id` (see [`Tournament::config`]).
    pub fn config(&self, id: TournamentId) -> Option<&Arc<TournamentConfig>> {
        self.tournaments.get(&id).map(|t| &t.config)
    }

    /// Adds `engine` to rating pool `id` while it has not ended, a member from its next
    /// pair on; returns that pair (`None`: no such pool, or it has ended).
    pub fn join_pool(&mut self, id: TournamentId, engine: EngineEntry) -> Option<u64> {
        let t = (self.tournaments.get_mut(&id)).filter(|t| !t.state.has_ended())?;
        t.join_pool(engine)
    }

    /// Notes that a data generation run has the positions it wants: it finishes (when
    /// active) with the pairs it has. Returns whether it ended now.
    pub fn reach_target(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) => {
                let before = t.state;
                t.target_met = true;
                t.update_state();
                t.state != before
            }
            None => false,
        }
    }

    /// Lets a tournament waiting for approval be played. Returns whether it was waiting.
    pub fn approve(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if t.state == State::Pending => {
                t.state = State::Queued;
                true
            }
            _ => false,
        }
    }

    /// Cancels an active, paused or pending tournament; its leases are dropped at their
    /// next heartbeat, and their pairs offered again if it is resumed. Returns whether it
    /// was one of those.
    pub fn cancel(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if t.state.is_active() || matches!(t.state, State::Paused | State::Pending) => {
                t.state = State::Cancelled;
                let leased: Vec<u64> = t.leased.drain().map(|(pair, _)| pair).collect();
                for pair in leased {
                    t.retry.insert(pair);
                }
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod dynamic_tests;
#[cfg(test)]
mod tests;
