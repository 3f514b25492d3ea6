//! Shares of the fleet by core-time. What a test was given is the core-seconds its pairs
//! out have held (a pair holds its games' cores, the costliest side's threads, while it is
//! out), decaying with a half-life of [`super::SHARE_HALF_LIFE_MS`], so it measures the last few
//! minutes. The next pair goes, among the tests of the highest priority that the worker
//! can play, to the one with the least need per unit of its effective weight:
//!
//! ```text
//! effective weight = weight × min(1, author_shares / Σ weights of its author's live tests)
//! need             = given(now) + cores held now × FILL_SECONDS
//! next test        = argmin  need / effective weight
//! ```
//!
//! so that over any window of a few minutes each test's share of the core-seconds played
//! is its effective weight's share of the weights: the cores held now count at once (a
//! fleet filled from empty is shared by cores, however long each test's pairs are), and
//! what they held since keeps the balance. A test is given, as it first gets a pair, as
//! much per unit of weight as the least-served test has: it takes its share from its first
//! minute, and never more (no catching up on the time it was not there).

use std::collections::HashMap;

use super::cost::pair_cores;
use super::{Scheduler, Tournament, TournamentId};

/// The most an author's live tests take together, in tests of weight 1, unless the
/// coordinator is told otherwise.
pub const AUTHOR_SHARES: f64 = 2.0;

/// How much a core held now weighs in a test's need, in seconds of holding it.
const FILL_SECONDS: f64 = 60.0;

/// Whether a test takes part in the shares: active, with work or pairs out.
fn is_live(t: &Tournament) -> bool {
    t.state.is_active() && (t.has_work() || !t.leased.is_empty())
}

/// The cores test `t`'s pairs out hold now.
fn held(t: &Tournament) -> f64 {
    t.leased.len() as f64 * pair_cores(&t.config)
}

/// A test's share of the fleet now and what it should be.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct Share {
    /// Its part of the core-seconds handed out over the last minutes (0 to 1).
    pub now: f64,
    /// Its part by its effective weight among the live tests of its priority (0 to 1).
    pub target: f64,
    /// The pairs an hour it completed lately (measured, decaying at the shares'
    /// half-life): with the pairs it has left, when it should end.
    pub pairs_per_hour: f64,
}

impl Scheduler {
    /// Each test's effective weight (its author's bound applied), over the tests that are
    /// live (active, with work or pairs out).
    pub(super) fn effective_weights(&self) -> HashMap<TournamentId, f64> {
        let live: Vec<&Tournament> = self.tournaments.values().filter(|t| is_live(t)).collect();
        let mut by_author: HashMap<&str, f64> = HashMap::new();
        for t in &live {
            *by_author.entry(t.author.as_str()).or_default() += t.config.weight;
        }
        live.iter()
            .map(|t| {
                let total = by_author[t.author.as_str()];
                let bound = match t.author.as_str() {
                    "" => 1.0,
                    _ => (self.author_shares / total).min(1.0),
                };
                (t.id, t.config.weight * bound)
            })
            .collect()
    }

    /// Of `candidates`, the test the next pair goes to (see the module) by the effective
    /// `weights`, after giving each one leased for the first time its start.
    pub(super) fn neediest(
        &mut self,
        weights: &HashMap<TournamentId, f64>,
        candidates: &[TournamentId],
        now: u64,
    ) -> Option<TournamentId> {
        let weight = |id: &TournamentId| weights.get(id).copied().unwrap_or(1.0).max(1e-9);
        let top = (candidates.iter())
            .filter_map(|id| self.tournaments.get(id))
            .map(|t| t.config.priority)
            .max()?;
        let chosen: Vec<TournamentId> = (candidates.iter().copied())
            .filter(|id| self.tournaments[id].config.priority == top)
            .collect();
        // What each live test held until now is counted before it is compared.
        for id in weights.keys() {
            if let Some(t) = self.tournaments.get_mut(id) {
                let cores = held(t);
                t.given.hold(now, cores);
            }
        }
        // The least given per unit of weight among those started, for those starting now.
        let least = (weights.keys())
            .filter_map(|id| self.tournaments.get(id))
            .filter(|t| t.given.started)
            .map(|t| t.given.at(now) / weight(&t.id))
            .min_by(f64::total_cmp)
            .unwrap_or(0.0);
        for id in &chosen {
            let w = weight(id);
            let t = self.tournaments.get_mut(id).expect("a candidate");
            if !t.given.started {
                t.given.set(now, least * w);
            }
        }
        chosen.into_iter().min_by(|a, b| {
            let need = |id: &TournamentId| {
                let t = &self.tournaments[id];
                (t.given.at(now) + held(t) * FILL_SECONDS) / weight(id)
            };
            need(a).total_cmp(&need(b)).then(a.cmp(b))
        })
    }

    /// Test `id`'s share of the fleet now and its target, while it is live: nothing is
    /// computed for the others (most of a store's tests have ended).
    pub fn share_of(&self, id: TournamentId, now: u64) -> Option<Share> {
        self.tournaments.get(&id).filter(|t| is_live(t))?;
        self.shares(now).remove(&id)
    }

    /// Each live test's share of the fleet now and its target.
    pub fn shares(&self, now: u64) -> HashMap<TournamentId, Share> {
        let weights = self.effective_weights();
        let given: f64 = (weights.keys())
            .map(|id| self.tournaments[id].given.at(now))
            .sum();
        let top = (weights.keys())
            .map(|id| self.tournaments[id].config.priority)
            .max();
        let top_weight: f64 = (weights.iter())
            .filter(|(id, _)| Some(self.tournaments[*id].config.priority) == top)
            .map(|(_, w)| w)
            .sum();
        weights
            .iter()
            .map(|(&id, &w)| {
                let t = &self.tournaments[&id];
                let target = match Some(t.config.priority) == top && top_weight > 0.0 {
                    true => w / top_weight,
                    false => 0.0,
                };
                let now_share = match given > 0.0 {
                    true => t.given.at(now) / given,
                    false => 0.0,
                };
                let pairs_per_hour = t.completed.per_hour(now);
                let share = Share {
                    now: now_share,
                    target,
                    pairs_per_hour,
                };
                (id, share)
            })
            .collect()
    }

    /// Sets who submitted test `id` (its tests share the author's bound).
    pub fn set_author(&mut self, id: TournamentId, author: &str) {
        if let Some(t) = self.tournaments.get_mut(&id) {
            t.author = author.to_string();
        }
    }

    /// This scheduler with an author's live tests bounded to `shares` tests of weight 1.
    pub fn with_author_shares(mut self, shares: f64) -> Self {
        self.author_shares = shares.max(0.01);
        self
    }
}

#[cfg(test)]
mod tests;
