//! A tournament as the scheduler sees it: its pairs, their outcomes, its SPRT on the
//! longest prefix of completed pairs, and whether it is done.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use tourney_model::tournament::{EngineEntry, Format, PairOutcome, State, TournamentConfig};
use tourney_stats::{Sprt, SprtCounts, SprtStatus};

use super::dynamic::{Dynamic, Planner};
use super::pairs::DONE;
use super::{Assignment, LeaseId, Outcomes, PairSet, TournamentId};

/// One tournament's scheduling state.
#[derive(Debug, Clone)]
pub struct Tournament {
    /// Its number.
    pub id: TournamentId,
    /// Its settings: the file it was submitted with, as changed since (priority, weight,
    /// pair budget, pool members, engines' measured facts). The one copy: the coordinator
    /// reads it here, and a change makes a new one (readers keep the one they took).
    pub config: Arc<TournamentConfig>,
    /// Where it is.
    pub state: State,
    /// Pairs never handed out are `next_pair..`.
    pub(super) next_pair: u64,
    /// Pairs handed out before whose lease expired, to offer again first.
    pub(super) retry: PairSet,
    /// Pairs in a live lease.
    pub(super) leased: HashMap<u64, LeaseId>,
    /// Completed pairs.
    pub(super) done: Outcomes,
    /// Pairs `0..prefix` are all completed.
    pub(super) prefix: u64,
    /// What the SPRT counted: the pairs of `0..sprt_through` not excluded, up to its
    /// decision.
    pub(super) counts: SprtCounts,
    /// Pairs of the prefix the SPRT has gone through.
    pub(super) sprt_through: u64,
    /// The SPRT on `counts`, for SPRT tournaments.
    pub(super) sprt: Option<SprtStatus>,
    /// Hosts (worker names) that could not play its pairs: they are offered none of them
    /// until it is resumed.
    pub(super) unfit: BTreeSet<String>,
    /// Hosts whose results an operator excluded: offered none of its pairs, and their
    /// pairs, though done, count in no figure.
    pub(super) excluded_hosts: BTreeSet<String>,
    /// Completed pairs played by excluded hosts.
    pub(super) excluded: BTreeSet<u64>,
    /// A data generation run has the positions it wants.
    pub(super) target_met: bool,
    /// The pairings of a format that makes them as results come in.
    pub(super) dynamic: Option<Dynamic>,
    /// Pairs of such a format that were out when the coordinator stopped: never played,
    /// skipped by the prefix.
    pub(super) void: PairSet,
    /// The core-time it was given lately ([`super::share`]).
    pub(super) given: super::cost::Given,
    /// Who submitted it (its tests share the author's bound; empty: unknown).
    pub(super) author: String,
    /// What one of its pairs is expected to cost, in core-seconds.
    pub(super) pair_cost: f64,
    /// The pairs it completed lately, for its measured rate.
    pub(super) completed: super::cost::Completed,
}

/// The SPRT of a tournament file.
pub fn sprt_of(config: &TournamentConfig) -> Option<Sprt> {
    let s = config
        .sprt
        .as_ref()
        .filter(|_| config.format == Format::Sprt)?;
    Some(super::sprt::sprt_from(s))
}

impl Tournament {
    /// A new tournament, queued.
    pub fn new(id: TournamentId, config: Arc<TournamentConfig>) -> Self {
        let pair_cost = super::cost::pair_core_seconds(&config);
        Tournament {
            id,
            dynamic: Dynamic::of(&config),
            void: PairSet::default(),
            done: Outcomes::of(&config),
            config,
            state: State::Queued,
            next_pair: 0,
            retry: PairSet::default(),
            leased: HashMap::new(),
            prefix: 0,
            counts: SprtCounts::default(),
            sprt_through: 0,
            sprt: None,
            unfit: BTreeSet::new(),
            excluded_hosts: BTreeSet::new(),
            excluded: BTreeSet::new(),
            target_met: false,
            given: Default::default(),
            author: String::new(),
            pair_cost,
            completed: Default::default(),
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
            .then(|| self.done.outcome(pair, code, &self.config))
    }

    /// The engines of pair `pair` and its opening's index: the file's pairing, or for a
    /// format that makes its pairings as results come in, the one the pair was given
    /// (`None` for a pair not handed out in this run of the coordinator, or void).
    pub fn pairing(&self, pair: u64) -> Option<(usize, usize, u64)> {
        match &self.dynamic {
            None => self.config.pairing(pair),
            Some(d) => (d.pairing(pair).or_else(|| self.done.engines(pair)))
                .map(|(first, second)| (first, second, pair)),
        }
    }

    /// The pair numbers it may use: its most pairs, and as many more as are void (numbers
    /// out when the coordinator stopped, of a format that pairs by results).
    pub fn pair_limit(&self) -> u64 {
        self.config.pair_budget().saturating_add(self.void.len())
    }

    /// A format's pairings made as results come in: a grouped test's SPRTs, a bracket, a
    /// Swiss's rounds.
    pub fn planner(&self) -> Option<&Planner> {
        self.dynamic.as_ref().map(|d| &d.planner)
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

    /// The number the next new pair is handed out under.
    pub fn next_pair(&self) -> u64 {
        self.next_pair
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
    pub(super) fn take_pair(&mut self) -> Option<u64> {
        if !self.state.is_active() {
            return None;
        }
        if let Some(p) = self.retry.first() {
            self.retry.remove(p);
            return Some(p);
        }
        if self.next_pair >= self.pair_limit() {
            return None;
        }
        if let Some(d) = &mut self.dynamic {
            d.assign(self.next_pair)?;
        }
        self.next_pair += 1;
        Some(self.next_pair - 1)
    }

    /// Adds `engine` to a rating pool, a member from its next pair on; returns that pair
    /// (`None`: not a pool).
    pub(super) fn join_pool(&mut self, mut engine: EngineEntry) -> Option<u64> {
        let from = self.next_pair;
        engine.joins_at_pair = from;
        if !self.dynamic.as_mut()?.join(&engine.name, from) {
            return None;
        }
        Arc::make_mut(&mut self.config).engines.push(engine);
        Some(from)
    }

    /// Pairs that can be offered now: never handed out, or to be offered again.
    pub(super) fn offerable(&self) -> u64 {
        if !self.state.is_active() {
            return 0;
        }
        let open = self.pair_limit().saturating_sub(self.next_pair);
        let new = match &self.dynamic {
            Some(d) => d.offerable(open).min(open),
            None => open,
        };
        self.retry.len() + new
    }

    /// Whether a pair is still worth offering.
    pub(super) fn has_work(&self) -> bool {
        self.offerable() > 0
    }

    /// The assignment of a pair handed out.
    pub(super) fn assignment(&self, pair: u64) -> Assignment {
        let (first, second, opening) = self.pairing(pair).unwrap_or((0, 1, pair));
        Assignment {
            tournament: self.id,
            pair,
            first,
            second,
            opening,
        }
    }

    /// Records a completed pair played by `host`; returns whether it was new.
    pub(super) fn record(&mut self, outcome: PairOutcome, host: &str) -> bool {
        if outcome.pair >= self.pair_limit() || self.done.contains(outcome.pair) {
            return false;
        }
        if let Some(d) = &mut self.dynamic {
            // Only a pair handed out in this run, with the engines it was given.
            if d.pairing(outcome.pair) != Some((outcome.first, outcome.second)) {
                return false;
            }
            d.record(&outcome, false);
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
        self.extend_prefix();
        if self.state == State::Queued {
            self.state = State::Running;
        }
        self.update_state();
        true
    }

    /// Moves the prefix past completed (and void) pairs.
    fn extend_prefix(&mut self) {
        while self.done.contains(self.prefix) || self.void.contains(self.prefix) {
            self.prefix += 1;
        }
    }

    /// Whether its plan is complete: every planned pair done, or the verdict of a format
    /// that makes its pairings as results come in.
    fn planned_done(&self) -> bool {
        self.prefix >= self.pair_limit() || self.dynamic.as_ref().is_some_and(Dynamic::is_decided)
    }

    /// Finishes the tournament when its plan is complete, its SPRT decided, or its data
    /// set full.
    pub(super) fn update_state(&mut self) {
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
        if let Some(d) = &mut self.dynamic {
            // A grouped test: each take's SPRT along the same prefix, excluded and void
            // pairs skipped; a pool: its ratings.
            for p in self.sprt_through..self.prefix {
                let code = self.done.codes.get(p);
                let counts = code & DONE != 0 && !self.excluded.contains(&p);
                let outcome = counts.then(|| self.done.outcome(p, code, &self.config));
                d.count_prefix(p, outcome.as_ref());
            }
            self.sprt_through = self.prefix;
        }
        let planned_done = self.planned_done();
        if self.state.is_active() && (decided(&self.sprt) || planned_done || self.target_met) {
            self.state = State::Finished;
        }
    }

    /// Excludes `host`'s results (`excluded`), or counts them again: `pairs` are the pairs
    /// it played. The SPRT is run again over what counts, so a tournament it had decided
    /// may run again, and one it had not may finish.
    pub(super) fn set_excluded(&mut self, host: &str, excluded: bool, pairs: &[u64]) {
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
        if let Some(d) = &mut self.dynamic {
            d.reset_counts();
        }
        let planned_done = self.planned_done();
        if self.state == State::Finished && !planned_done {
            self.state = State::Running;
        }
        self.update_state();
    }

    /// Rebuilds state from completed pairs (after a restart): everything below the highest
    /// completed pair that is missing is offered again.
    pub(super) fn restore(&mut self, outcomes: impl IntoIterator<Item = PairOutcome>) {
        for outcome in outcomes {
            self.done.insert(&outcome);
        }
        if let Some(d) = &mut self.dynamic {
            // Read back in pair order, as they were handed out.
            let config = &self.config;
            for o in self.done.outcomes(config) {
                d.record(&o, true);
            }
        }
        self.next_pair = self.done.last().map_or(0, |p| p + 1);
        // The gaps below the highest completed pair, in time proportional to the pairs
        // done (not to their numbers): offered again, or void where the engines of a pair
        // were made as results came in and are not known any more.
        self.retry = PairSet::default();
        let mut expected = 0;
        for p in self.done.pairs() {
            match self.dynamic {
                None => self.retry.insert_range(expected, p),
                Some(_) => self.void.insert_range(expected, p),
            }
            expected = p + 1;
        }
        self.extend_prefix();
        if self.done.len > 0 && self.state == State::Queued {
            self.state = State::Running;
        }
        self.update_state();
    }
}
