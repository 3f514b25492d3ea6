//! The scheduling state machine, with no I/O and no clock of its own: time comes in as
//! `now` (milliseconds on any monotonic scale) with each event.
//!
//! Work is leased in game pairs (one opening, colours swapped). A lease has a deadline that
//! heartbeats extend; [`Scheduler::tick`] puts the unfinished pairs of expired leases back
//! on offer. A result names its tournament and pair: the first result for a pair is kept,
//! whoever sent it (a late result from an expired lease included), and every later one is
//! acknowledged as a duplicate and ignored. An SPRT decides on the longest prefix of
//! completed pairs in pair-index order, so quickly finished pairs cannot bias it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use tourney_model::tournament::{Format, PairOutcome, SprtModel, State, TournamentConfig};
use tourney_stats::{EloModel, Sprt, SprtCounts, SprtStatus};

use crate::pair_map::PairMap;

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

/// One tournament's scheduling state.
#[derive(Debug, Clone)]
pub struct Tournament {
    /// Its number.
    pub id: TournamentId,
    /// The file it was submitted with.
    pub config: TournamentConfig,
    /// Where it is.
    pub state: State,
    /// Pairs never handed out are `next_pair..`.
    next_pair: u64,
    /// Pairs handed out before whose lease expired, to offer again first.
    retry: PairSet,
    /// Pairs in a live lease.
    leased: HashMap<u64, LeaseId>,
    /// Completed pairs.
    done: Outcomes,
    /// Pairs `0..prefix` are all completed.
    prefix: u64,
    /// What the SPRT counted: the pairs of `0..sprt_through` not excluded, up to its
    /// decision.
    counts: SprtCounts,
    /// Pairs of the prefix the SPRT has gone through.
    sprt_through: u64,
    /// The SPRT on `counts`, for SPRT tournaments.
    sprt: Option<SprtStatus>,
    /// Hosts (worker names) that could not play its pairs: they are offered none of them
    /// until it is resumed.
    unfit: BTreeSet<String>,
    /// Hosts whose results an operator excluded: offered none of its pairs, and their
    /// pairs, though done, count in no figure.
    excluded_hosts: BTreeSet<String>,
    /// Completed pairs played by excluded hosts.
    excluded: BTreeSet<u64>,
}

/// The host of a worker id (`name#n`, as the coordinator numbers sessions): what stays the
/// same when a worker reconnects.
pub fn host(worker: &str) -> &str {
    worker.rsplit_once('#').map_or(worker, |(name, _)| name)
}

/// The SPRT of a tournament file.
pub fn sprt_of(config: &TournamentConfig) -> Option<Sprt> {
    let s = config
        .sprt
        .as_ref()
        .filter(|_| config.format == Format::Sprt)?;
    Some(Sprt {
        elo0: s.elo0,
        elo1: s.elo1,
        alpha: s.alpha,
        beta: s.beta,
        model: match s.model {
            SprtModel::Normalized => EloModel::Normalized,
            SprtModel::Logistic => EloModel::Logistic,
            SprtModel::BayesElo => EloModel::BayesElo,
        },
    })
}

impl Tournament {
    /// A new tournament, queued.
    pub fn new(id: TournamentId, config: TournamentConfig) -> Self {
        Tournament {
            id,
            config,
            state: State::Queued,
            next_pair: 0,
            retry: PairSet::default(),
            leased: HashMap::new(),
            done: Outcomes::default(),
            prefix: 0,
            counts: SprtCounts::default(),
            sprt_through: 0,
            sprt: None,
            unfit: BTreeSet::new(),
            excluded_hosts: BTreeSet::new(),
            excluded: BTreeSet::new(),
        }
    }

    /// Completed pairs that count: all but those of excluded hosts, in pair order.
    pub fn counted(&self) -> impl Iterator<Item = PairOutcome> + '_ {
        self.done
            .outcomes(&self.config)
            .filter(|o| !self.excluded.contains(&o.pair))
    }

    /// Its completed pairs' outcomes, one byte a pair.
    pub(crate) fn outcomes(&self) -> &Outcomes {
        &self.done
    }

    /// The outcome of pair `pair` if it is completed and counts (not played by an
    /// excluded host).
    pub fn counted_outcome(&self, pair: u64) -> Option<PairOutcome> {
        let code = self.done.codes.get(pair);
        (code & DONE != 0 && !self.excluded.contains(&pair))
            .then(|| Outcomes::outcome(pair, code, &self.config))
    }

    /// Completed pairs that do not count: played by a host an operator excluded.
    pub fn pairs_excluded(&self) -> u64 {
        self.excluded.len() as u64
    }

    /// Whether pair `pair` is completed.
    pub fn is_done(&self, pair: u64) -> bool {
        self.done.contains(pair)
    }

    /// Number of completed pairs.
    pub fn pairs_done(&self) -> u64 {
        self.done.len
    }

    /// Pairs `0..n` are all completed.
    pub fn prefix(&self) -> u64 {
        self.prefix
    }

    /// Pairs currently leased.
    pub fn pairs_leased(&self) -> usize {
        self.leased.len()
    }

    /// The SPRT state on the completed prefix.
    pub fn sprt_status(&self) -> Option<SprtStatus> {
        self.sprt
    }

    /// Pairs the SPRT counted (the completed prefix, up to the decision) and their counts.
    pub fn sprt_counts(&self) -> SprtCounts {
        self.counts
    }

    /// The next pair to hand out, if any.
    fn take_pair(&mut self) -> Option<u64> {
        if !self.state.is_active() {
            return None;
        }
        if let Some(p) = self.retry.first() {
            self.retry.remove(p);
            return Some(p);
        }
        (self.next_pair < self.config.max_pairs()).then(|| {
            self.next_pair += 1;
            self.next_pair - 1
        })
    }

    /// Pairs that can be offered now: never handed out, or to be offered again.
    fn offerable(&self) -> u64 {
        if self.state.is_active() {
            self.retry.len() + self.config.max_pairs().saturating_sub(self.next_pair)
        } else {
            0
        }
    }

    /// Whether a pair is still worth offering.
    fn has_work(&self) -> bool {
        self.state.is_active()
            && (!self.retry.is_empty() || self.next_pair < self.config.max_pairs())
    }

    fn assignment(&self, pair: u64) -> Assignment {
        let (first, second, opening) = self.config.pairing(pair);
        Assignment {
            tournament: self.id,
            pair,
            first,
            second,
            opening,
        }
    }

    /// Records a completed pair played by `host`; returns whether it was new.
    fn record(&mut self, outcome: PairOutcome, host: &str) -> bool {
        if outcome.pair >= self.config.max_pairs() || self.done.contains(outcome.pair) {
            return false;
        }
        if self.excluded_hosts.contains(host) {
            self.excluded.insert(outcome.pair);
        }
        self.leased.remove(&outcome.pair);
        self.retry.remove(outcome.pair);
        // Pairs skipped over (handed out to nobody) must still be played.
        self.retry.insert_range(self.next_pair, outcome.pair);
        self.next_pair = self.next_pair.max(outcome.pair + 1);
        self.done.insert(&outcome);
        while self.done.contains(self.prefix) {
            self.prefix += 1;
        }
        if self.state == State::Queued {
            self.state = State::Running;
        }
        self.update_state();
        true
    }

    /// Finishes the tournament when its plan is complete or its SPRT decided.
    fn update_state(&mut self) {
        let decided = |s: &Option<SprtStatus>| {
            s.is_some_and(|s| s.decision != tourney_stats::Decision::Continue)
        };
        if let (Some(sprt), false) = (sprt_of(&self.config), decided(&self.sprt)) {
            // Pair by pair along the prefix, stopping at the first decision (also when
            // restoring a tournament that has already finished). Excluded pairs are
            // skipped.
            let mut through = self.sprt_through;
            let new = (self.sprt_through..self.prefix)
                .inspect(|&p| through = p + 1)
                .filter(|p| !self.excluded.contains(p))
                .map(|p| self.done.half_points(p));
            if let Ok(Some(status)) = sprt.run(&mut self.counts, new, |_, _| {}) {
                self.sprt = Some(status);
            }
            self.sprt_through = through;
        }
        if self.state.is_active() && (decided(&self.sprt) || self.prefix >= self.config.max_pairs())
        {
            self.state = State::Finished;
        }
    }

    /// Excludes `host`'s results (`excluded`), or counts them again: `pairs` are the pairs
    /// it played. The SPRT is run again over what counts, so a tournament it had decided
    /// may run again, and one it had not may finish.
    fn set_excluded(&mut self, host: &str, excluded: bool, pairs: &[u64]) {
        if excluded {
            self.excluded_hosts.insert(host.to_string());
            self.excluded
                .extend(pairs.iter().filter(|&&p| self.done.contains(p)));
        } else {
            self.excluded_hosts.remove(host);
            for p in pairs {
                self.excluded.remove(p);
            }
        }
        self.counts = SprtCounts::default();
        self.sprt_through = 0;
        self.sprt = None;
        let planned_done = self.prefix >= self.config.max_pairs();
        if self.state == State::Finished && !planned_done {
            self.state = State::Running;
        }
        self.update_state();
    }

    /// Rebuilds state from completed pairs (after a restart): everything below the highest
    /// completed pair that is missing is offered again.
    fn restore(&mut self, outcomes: impl IntoIterator<Item = PairOutcome>) {
        for outcome in outcomes {
            self.done.insert(&outcome);
        }
        self.next_pair = self.done.last().map_or(0, |p| p + 1);
        // The gaps below the highest completed pair, in time proportional to the pairs
        // done (not to their numbers).
        self.retry = PairSet::default();
        let mut expected = 0;
        for p in self.done.pairs() {
            self.retry.insert_range(expected, p);
            expected = p + 1;
        }
        while self.done.contains(self.prefix) {
            self.prefix += 1;
        }
        if self.done.len > 0 && self.state == State::Queued {
            self.state = State::Running;
        }
        self.update_state();
    }
}

/// Completed pairs' outcomes, one byte a pair by pair index: what a pair adds to the
/// standings beside what its number says (its engines come from the tournament's pairing).
/// Bits 0-1 and 2-3: the first engine's half-points in games 0 and 1; bits 4 and 5: the
/// first engine had White in game 0, in game 1; bit 7: done. A million pairs take 1 MB.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Outcomes {
    codes: PairMap<u8>,
    len: u64,
}

const DONE: u8 = 0x80;

impl Outcomes {
    fn contains(&self, pair: u64) -> bool {
        self.codes.get(pair) & DONE != 0
    }

    /// Records a completed pair's outcome.
    pub(crate) fn insert(&mut self, o: &PairOutcome) {
        if !self.contains(o.pair) {
            self.len += 1;
        }
        let code = DONE
            | (o.half_points[0] & 3)
            | (o.half_points[1] & 3) << 2
            | u8::from(o.white[0] == o.first) << 4
            | u8::from(o.white[1] == o.first) << 5;
        self.codes.set(o.pair, code);
    }

    fn half_points(&self, pair: u64) -> [u8; 2] {
        let c = self.codes.get(pair);
        [c & 3, (c >> 2) & 3]
    }

    /// The completed pairs, in order.
    fn pairs(&self) -> impl Iterator<Item = u64> + '_ {
        self.codes.iter().map(|(p, _)| p)
    }

    /// The highest completed pair.
    fn last(&self) -> Option<u64> {
        self.pairs().last()
    }

    /// The completed pairs' outcomes in a tournament of `config`, in order.
    pub(crate) fn outcomes<'a>(
        &'a self,
        config: &'a TournamentConfig,
    ) -> impl Iterator<Item = PairOutcome> + 'a {
        self.codes
            .iter()
            .map(|(pair, code)| Self::outcome(pair, code, config))
    }

    /// The outcome a code says of pair `pair`.
    fn outcome(pair: u64, code: u8, config: &TournamentConfig) -> PairOutcome {
        let (first, second, _) = config.pairing(pair);
        let white = |bit: u8| if code & bit != 0 { first } else { second };
        PairOutcome {
            pair,
            first,
            second,
            half_points: [code & 3, (code >> 2) & 3],
            white: [white(0x10), white(0x20)],
        }
    }
}

/// A set of pair numbers kept as ranges: a gap of a billion pairs costs one entry.
#[derive(Debug, Clone, Default)]
struct PairSet {
    /// Disjoint, non-adjacent ranges `start..end`, by start.
    ranges: BTreeMap<u64, u64>,
    len: u64,
}

impl PairSet {
    fn first(&self) -> Option<u64> {
        self.ranges.keys().next().copied()
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[cfg(test)]
    fn contains(&self, pair: u64) -> bool {
        self.ranges
            .range(..=pair)
            .next_back()
            .is_some_and(|(_, &end)| pair < end)
    }

    fn insert(&mut self, pair: u64) {
        self.insert_range(pair, pair + 1);
    }

    /// Adds `start..end` (pairs already in the set are not counted twice).
    fn insert_range(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let (mut lo, mut hi) = (start, end);
        // Merge every range that overlaps or touches `lo..hi`.
        let touching: Vec<(u64, u64)> = self
            .ranges
            .range(..=hi)
            .rev()
            .take_while(|(_, e)| **e >= lo)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.ranges.remove(&s);
            self.len -= e - s;
            lo = lo.min(s);
            hi = hi.max(e);
        }
        self.ranges.insert(lo, hi);
        self.len += hi - lo;
    }

    fn remove(&mut self, pair: u64) {
        let Some((&s, &e)) = self.ranges.range(..=pair).next_back() else {
            return;
        };
        if pair >= e {
            return;
        }
        self.ranges.remove(&s);
        if s < pair {
            self.ranges.insert(s, pair);
        }
        if pair + 1 < e {
            self.ranges.insert(pair + 1, e);
        }
        self.len -= 1;
    }
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
}

impl Scheduler {
    /// A scheduler whose leases last `lease_ms` without a heartbeat.
    pub fn new(lease_ms: u64) -> Self {
        Scheduler {
            lease_ms,
            next_lease: 1,
            first_lease: 1,
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
        config: TournamentConfig,
        state: State,
        completed: impl IntoIterator<Item = PairOutcome>,
    ) {
        let mut t = Tournament::new(id, config);
        t.state = state;
        t.restore(completed);
        self.tournaments.insert(id, t);
    }

    /// A tournament.
    pub fn tournament(&self, id: TournamentId) -> Option<&Tournament> {
        self.tournaments.get(&id)
    }

    /// All tournaments, oldest first.
    pub fn tournaments(&self) -> impl Iterator<Item = &Tournament> {
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
    /// then by the fewest pairs (done or leased) per unit of weight. `None` when there is no
    /// work.
    pub fn lease(
        &mut self,
        worker: &str,
        max_pairs: usize,
        now: u64,
    ) -> Option<(Lease, Vec<Assignment>)> {
        let mut assignments = Vec::new();
        let id = self.next_lease;
        while assignments.len() < max_pairs {
            let chosen = self
                .tournaments
                .values()
                .filter(|t| {
                    t.has_work()
                        && !t.unfit.contains(host(worker))
                        && !t.excluded_hosts.contains(host(worker))
                })
                .max_by(|a, b| {
                    let load = |t: &Tournament| {
                        (t.done.len as usize + t.leased.len()) as f64 / t.config.weight
                    };
                    a.config
                        .priority
                        .cmp(&b.config.priority)
                        .then(load(b).total_cmp(&load(a)))
                        .then(b.id.cmp(&a.id))
                })
                .map(|t| t.id);
            let Some(tid) = chosen else { break };
            let t = self.tournaments.get_mut(&tid).expect("chosen from the map");
            let Some(pair) = t.take_pair() else { break };
            t.leased.insert(pair, id);
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
    ) -> (ReportAck, Vec<TournamentId>) {
        let mut ack = ReportAck::default();
        let mut changed = Vec::new();
        for &(tid, outcome) in results {
            let Some(t) = self.tournaments.get_mut(&tid) else {
                ack.rejected += 1;
                continue;
            };
            if outcome.pair >= t.config.max_pairs() {
                ack.rejected += 1;
                continue;
            }
            let before = t.state;
            if let Some(lease) = t.leased.get(&outcome.pair).copied()
                && let Some(l) = self.leases.get_mut(&lease)
            {
                l.pairs.retain(|&(lt, lp)| (lt, lp) != (tid, outcome.pair));
            }
            if t.record(outcome, host(worker)) {
                ack.accepted += 1;
            } else {
                ack.duplicates += 1;
            }
            if t.state != before && !changed.contains(&tid) {
                changed.push(tid);
            }
        }
        self.leases.retain(|_, l| !l.pairs.is_empty());
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

    /// Notes that `worker`'s host could not play `pair` of tournament `id`: the pair is
    /// offered again, and the host no more pairs of it until it is resumed. Returns whether
    /// the tournament is active.
    pub fn unfit(&mut self, id: TournamentId, worker: &str, pair: u64) -> bool {
        let Some(t) = self.tournaments.get_mut(&id) else {
            return false;
        };
        t.unfit.insert(host(worker).to_string());
        if let Some(lease) = t.leased.remove(&pair) {
            if let Some(l) = self.leases.get_mut(&lease) {
                l.pairs.retain(|&p| p != (id, pair));
            }
            t.retry.insert(pair);
        }
        self.leases.retain(|_, l| !l.pairs.is_empty());
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

    /// Resumes a paused tournament. Returns whether it was paused.
    pub fn resume(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if t.state == State::Paused => {
                t.unfit.clear();
                t.state = if t.done.len == 0 {
                    State::Queued
                } else {
                    State::Running
                };
                t.update_state();
                true
            }
            _ => false,
        }
    }

    /// Cancels an active or paused tournament; its leases are dropped at their next
    /// heartbeat. Returns whether it was active or paused.
    pub fn cancel(&mut self, id: TournamentId) -> bool {
        match self.tournaments.get_mut(&id) {
            Some(t) if t.state.is_active() || t.state == State::Paused => {
                t.state = State::Cancelled;
                t.leased.clear();
                t.retry = PairSet::default();
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::tournament::TournamentConfig;

    fn config(format: &str, extra: &str) -> TournamentConfig {
        let text = format!(
            "name = \"t\"\ngame = \"loa\"\nformat = \"{format}\"\n{extra}\nlimits = {{ nodes = 100 }}\n\
             [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n"
        );
        TournamentConfig::parse(&text, "t.toml").unwrap()
    }

    fn outcome(pair: u64, half_points: [u8; 2]) -> PairOutcome {
        PairOutcome {
            pair,
            first: 0,
            second: 1,
            half_points,
            white: [1, 0],
        }
    }

    /// A simulated worker: leases, then reports what it was given.
    fn play_all(s: &mut Scheduler, worker: &str, max: usize, now: u64) -> usize {
        let Some((_, assignments)) = s.lease(worker, max, now) else {
            return 0;
        };
        let results: Vec<_> = assignments
            .iter()
            .map(|a| (a.tournament, outcome(a.pair, [1, 1])))
            .collect();
        s.report("w#1", &results);
        assignments.len()
    }

    #[test]
    fn a_host_that_cannot_play_a_tournament_is_offered_none_of_it_until_resumed() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 4"), State::Queued, vec![]);
        s.add(2, config("match", "pairs = 4"), State::Queued, vec![]);
        let (_, given) = s.lease("broken#1", 1, 0).unwrap();
        let (t, pair) = (given[0].tournament, given[0].pair);
        assert!(s.unfit(t, "broken#1", pair));
        assert!(s.is_unfit(t, "broken#7"), "the host, whatever its session");
        assert!(!s.is_unfit(t, "fine#1"));
        assert_eq!(
            s.tournament(t).unwrap().pairs_leased(),
            0,
            "the pair is free again"
        );
        // The broken host gets only the other tournament's pairs; the pair goes to others.
        let (_, mine) = s.lease("broken#2", 10, 0).unwrap();
        assert!(mine.iter().all(|a| a.tournament != t), "{mine:?}");
        let (_, theirs) = s.lease("fine#1", 10, 0).unwrap();
        assert!(theirs.iter().any(|a| (a.tournament, a.pair) == (t, pair)));
        // Resuming forgives.
        assert!(s.pause(t) && s.resume(t));
        assert!(!s.is_unfit(t, "broken#3"));
    }

    #[test]
    fn a_match_is_played_exactly_once_by_several_workers() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 10"), State::Queued, vec![]);
        let mut played = 0;
        let mut now = 0;
        while played < 10 {
            for w in ["w1", "w2", "w3"] {
                played += play_all(&mut s, w, 2, now);
            }
            now += 10;
        }
        let t = s.tournament(1).unwrap();
        assert_eq!(
            (t.state, t.pairs_done(), t.prefix()),
            (State::Finished, 10, 10)
        );
        assert!(s.lease("w1", 2, now).is_none(), "no work after the end");
        assert_eq!(s.leases().count(), 0);
    }

    #[test]
    fn expired_leases_are_offered_again_and_late_results_still_count_once() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 3"), State::Queued, vec![]);
        let (lost, first) = s.lease("slow", 3, 0).unwrap();
        assert_eq!(first.len(), 3);
        assert!(s.lease("fast", 3, 10).is_none(), "everything is leased");
        // A heartbeat keeps the lease alive past its first deadline.
        assert!(s.heartbeat("slow", &[lost.id], 900).is_empty());
        assert!(s.tick(1500).is_empty());
        assert_eq!(s.tick(1900), vec![lost.id]);
        let (_, again) = s.lease("fast", 3, 2000).unwrap();
        assert_eq!(
            again.iter().map(|a| a.pair).collect::<Vec<_>>(),
            vec![0, 1, 2]
        );
        // The slow worker's late result for pair 1 arrives first and is kept...
        let (ack, _) = s.report("w#1", &[(1, outcome(1, [2, 2]))]);
        assert_eq!((ack.accepted, ack.duplicates), (1, 0));
        // ... so the fast worker's result for it is a duplicate; the rest are new.
        let (ack, changed) = s.report(
            "w#1",
            &[
                (1, outcome(0, [1, 1])),
                (1, outcome(1, [0, 0])),
                (1, outcome(2, [1, 1])),
            ],
        );
        assert_eq!((ack.accepted, ack.duplicates), (2, 1));
        assert_eq!(changed, vec![1]);
        let t = s.tournament(1).unwrap();
        assert_eq!(
            t.counted().find(|o| o.pair == 1).unwrap().half_points,
            [2, 2]
        );
        assert_eq!(t.state, State::Finished);
        // The expired lease is told to drop its work.
        assert_eq!(s.heartbeat("slow", &[lost.id], 2100), vec![lost.id]);
    }

    #[test]
    fn unknown_results_are_rejected() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 2"), State::Queued, vec![]);
        let (ack, _) = s.report("w#1", &[(9, outcome(0, [1, 1])), (1, outcome(7, [1, 1]))]);
        assert_eq!(ack.rejected, 2);
    }

    #[test]
    fn the_sprt_decides_on_the_longest_completed_prefix() {
        let mut s = Scheduler::new(1000);
        s.add(
            1,
            config("sprt", "sprt = { elo0 = 0, elo1 = 10, max_pairs = 1000 }"),
            State::Queued,
            vec![],
        );
        s.lease("w", 200, 0).unwrap();
        // Overwhelming wins in pairs 1..200 while pair 0 is still out: no decision yet.
        let wins: Vec<_> = (1..200).map(|p| (1, outcome(p, [2, 2]))).collect();
        s.report("w#1", &wins);
        let t = s.tournament(1).unwrap();
        assert_eq!((t.prefix(), t.state), (0, State::Running));
        assert!(t.sprt_status().is_none());
        // Pair 0 completes the prefix: now the SPRT decides.
        s.report("w#1", &[(1, outcome(0, [1, 1]))]);
        let t = s.tournament(1).unwrap();
        assert_eq!(t.prefix(), 200);
        assert_eq!(t.state, State::Finished);
        assert_eq!(
            t.sprt_status().unwrap().decision,
            tourney_stats::Decision::AcceptH1
        );
        // It stopped counting at its decision, before the end of the prefix.
        let counted = t.sprt_counts();
        assert!(counted.pairs < 200, "{counted:?}");
        assert_eq!(counted.pentanomial.bins[2], 1, "pair 0 is counted first");
        let status = t.sprt_status();
        let config = t.config.clone();
        assert!(s.lease("w", 10, 10).is_none());
        // Results that arrive after the decision change nothing in the test.
        s.report(
            "w#1",
            &[(1, outcome(200, [0, 0])), (1, outcome(201, [0, 0]))],
        );
        let t = s.tournament(1).unwrap();
        assert_eq!((t.sprt_counts(), t.sprt_status()), (counted, status));
        // A restart on the stored results reaches the same decision at the same pair.
        let done: Vec<PairOutcome> = t.counted().collect();
        let mut restarted = Scheduler::new(1000);
        restarted.add(1, config, State::Finished, done);
        let again = restarted.tournament(1).unwrap();
        assert_eq!(
            (again.sprt_counts(), again.sprt_status()),
            (counted, status)
        );
    }

    #[test]
    fn an_excluded_host_counts_in_no_figure_and_its_sprt_decision_is_undone() {
        let mut s = Scheduler::new(1000);
        s.add(
            1,
            config("sprt", "sprt = { elo0 = 0, elo1 = 10, max_pairs = 1000 }"),
            State::Queued,
            vec![],
        );
        s.lease("good#1", 100, 0).unwrap();
        s.lease("bad#4", 100, 0).unwrap();
        // The good host's pairs are even; the bad host wins every pair it reports.
        let even: Vec<_> = (0..100).map(|p| (1, outcome(p, [1, 1]))).collect();
        let wins: Vec<_> = (100..200).map(|p| (1, outcome(p, [2, 2]))).collect();
        s.report("good#1", &even);
        s.report("bad#4", &wins);
        let t = s.tournament(1).unwrap();
        assert_eq!(t.state, State::Finished, "the bad host's wins decide");
        let bad: Vec<u64> = (100..200).collect();
        assert!(
            s.set_excluded(1, "bad", true, &bad),
            "undecided: runs again"
        );
        let t = s.tournament(1).unwrap();
        assert_eq!(t.state, State::Running);
        assert_eq!((t.pairs_done(), t.pairs_excluded()), (200, 100));
        assert_eq!(
            t.sprt_counts().pairs,
            100,
            "only the good host's pairs count"
        );
        assert_eq!(t.sprt_counts().pentanomial.bins[2], 100);
        assert_eq!(t.counted().count(), 100);
        // The excluded host gets no more of its pairs (a later session of it neither),
        // and what it still reports does not count.
        assert!(s.lease("bad#5", 10, 1).is_none());
        let (lease, more) = s.lease("good#1", 10, 1).unwrap();
        assert_eq!(more.len(), 10);
        let late: Vec<_> = more.iter().map(|a| (1, outcome(a.pair, [2, 2]))).collect();
        s.report("bad#4", &late);
        let t = s.tournament(1).unwrap();
        assert_eq!((t.pairs_excluded(), t.sprt_counts().pairs), (110, 100));
        assert!(
            s.leases().all(|l| l.id != lease.id),
            "the lease's pairs are done"
        );
        // Counted again: the same decision as before.
        let bad: Vec<u64> = (100..200).chain(more.iter().map(|a| a.pair)).collect();
        assert!(s.set_excluded(1, "bad", false, &bad));
        let t = s.tournament(1).unwrap();
        assert_eq!((t.state, t.pairs_excluded()), (State::Finished, 0));
        assert_eq!(
            t.sprt_status().unwrap().decision,
            tourney_stats::Decision::AcceptH1
        );
    }

    #[test]
    fn pair_sets_keep_ranges_and_count_each_pair_once() {
        let mut set = PairSet::default();
        set.insert_range(10, 20);
        set.insert(20);
        set.insert(5);
        set.insert_range(15, 25);
        assert_eq!(set.len(), 16);
        assert_eq!(set.ranges.len(), 2, "{set:?}");
        set.remove(12);
        set.remove(12);
        set.remove(99);
        assert_eq!((set.len(), set.first()), (15, Some(5)));
        assert!(set.contains(11) && !set.contains(12) && set.contains(13));
        set.remove(5);
        assert_eq!(set.first(), Some(10));
        set.insert_range(0, u64::MAX);
        assert_eq!((set.len(), set.ranges.len()), (u64::MAX, 1));
    }

    #[test]
    fn a_restore_with_a_far_pair_costs_nothing_per_skipped_pair() {
        // What a store written before results were checked against leases may hold: one
        // pair far beyond the others.
        let far = 999_999_999;
        let mut s = Scheduler::new(1000);
        s.add(
            1,
            config("match", "pairs = 1000000000"),
            State::Running,
            vec![outcome(0, [1, 1]), outcome(far, [1, 1])],
        );
        let t = s.tournament(1).unwrap();
        assert_eq!(t.offerable(), 1_000_000_000 - 2);
        let (_, first) = s.lease("w#1", 2, 0).unwrap();
        assert_eq!(first.iter().map(|a| a.pair).collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn cancelled_tournaments_stop_and_their_leases_are_dropped() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 50"), State::Queued, vec![]);
        let (lease, _) = s.lease("w", 5, 0).unwrap();
        assert!(s.cancel(1));
        assert!(!s.cancel(1));
        assert_eq!(s.heartbeat("w", &[lease.id], 10), vec![lease.id]);
        assert!(s.lease("w", 5, 20).is_none());
        assert_eq!(s.tournament(1).unwrap().state, State::Cancelled);
    }

    #[test]
    fn a_paused_tournament_hands_out_nothing_until_it_resumes() {
        let mut s = Scheduler::new(1000);
        s.add(1, config("match", "pairs = 4"), State::Queued, vec![]);
        let (lease, pairs) = s.lease("w", 2, 0).unwrap();
        assert_eq!(pairs.len(), 2);
        s.report("w#1", &[(1, outcome(0, [1, 1]))]);
        assert!(s.pause(1));
        assert!(!s.pause(1), "pausing twice is a no-op");
        assert_eq!(s.tournament(1).unwrap().state, State::Paused);
        assert!(s.lease("w", 4, 10).is_none());
        assert_eq!(s.heartbeat("w", &[lease.id], 10), vec![lease.id]);
        assert!(s.resume(1));
        assert!(!s.resume(1));
        assert_eq!(s.tournament(1).unwrap().state, State::Running);
        // The pair that was out (1) comes back first, then the rest.
        let (_, again) = s.lease("w", 4, 20).unwrap();
        let offered: Vec<u64> = again.iter().map(|a| a.pair).collect();
        assert_eq!(offered, vec![1, 2, 3]);
        // A paused tournament can still be cancelled.
        assert!(s.pause(1));
        assert!(s.cancel(1));
        assert_eq!(s.tournament(1).unwrap().state, State::Cancelled);
    }

    #[test]
    fn priority_first_then_weight_shares_the_workers() {
        let mut s = Scheduler::new(1000);
        let mut light = config("match", "pairs = 1000\nweight = 1");
        light.name = "light".into();
        let heavy = config("match", "pairs = 1000\nweight = 3");
        let urgent = config("match", "pairs = 5\npriority = 10");
        s.add(1, light, State::Queued, vec![]);
        s.add(2, heavy, State::Queued, vec![]);
        s.add(3, urgent, State::Queued, vec![]);
        let (_, first) = s.lease("w", 5, 0).unwrap();
        assert!(
            first.iter().all(|a| a.tournament == 3),
            "higher priority first"
        );
        let mut count = [0usize; 3];
        for i in 0..400 {
            let (_, got) = s.lease("w", 1, i).unwrap();
            count[got[0].tournament as usize - 1] += 1;
        }
        assert_eq!(count[2], 0);
        assert!(
            (count[1] as f64 / count[0] as f64 - 3.0).abs() < 0.1,
            "{count:?}"
        );
    }

    #[test]
    fn restored_tournaments_offer_their_gaps_first() {
        let mut s = Scheduler::new(1000);
        let done = vec![outcome(0, [1, 1]), outcome(2, [1, 1]), outcome(3, [1, 1])];
        s.add(1, config("match", "pairs = 6"), State::Running, done);
        let t = s.tournament(1).unwrap();
        assert_eq!((t.pairs_done(), t.prefix()), (3, 1));
        let (_, got) = s.lease("w", 6, 0).unwrap();
        assert_eq!(
            got.iter().map(|a| a.pair).collect::<Vec<_>>(),
            vec![1, 4, 5]
        );
    }

    #[test]
    fn chaotic_workers_never_lose_or_double_count_a_pair() {
        // Workers that drop reports, repeat them, deliver them late and out of order.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut s = Scheduler::new(500);
        s.add(1, config("match", "pairs = 300"), State::Queued, vec![]);
        let mut in_flight: Vec<(u64, (TournamentId, PairOutcome))> = Vec::new();
        let mut now = 0u64;
        let mut accepted = 0;
        while s.tournament(1).unwrap().state != State::Finished {
            now += 50;
            let worker = format!("w{}", next() % 5);
            if let Some((_, got)) = s.lease(&worker, 1 + (next() % 4) as usize, now) {
                for a in got {
                    if next() % 5 != 0 {
                        // Delivered after a random delay (sometimes past the lease's end).
                        let r = (
                            a.tournament,
                            outcome(a.pair, [(next() % 3) as u8, (next() % 3) as u8]),
                        );
                        in_flight.push((now + next() % 1500, r));
                        if next() % 4 == 0 {
                            in_flight.push((now + next() % 3000, r));
                        }
                    }
                }
            }
            in_flight.sort_by_key(|(t, _)| *t);
            let due: Vec<_> = in_flight
                .iter()
                .filter(|(t, _)| *t <= now)
                .map(|(_, r)| *r)
                .collect();
            in_flight.retain(|(t, _)| *t > now);
            accepted += s.report("w#1", &due).0.accepted;
            s.tick(now);
            assert!(now < 10_000_000, "the tournament must finish");
        }
        let t = s.tournament(1).unwrap();
        assert_eq!(accepted, 300);
        assert_eq!((t.pairs_done(), t.prefix()), (300, 300));
        assert_eq!(
            t.counted().map(|o| o.pair).collect::<Vec<_>>(),
            (0..300).collect::<Vec<_>>()
        );
    }
}
