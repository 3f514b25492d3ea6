//! Grouped tests of several takes: K ways of writing one idea ("takes"), each played
//! against one base, decided together with one family-wise error rate.
//!
//! The procedure is K SPRTs with a Bonferroni-corrected α and elimination (Wald 1945 for
//! each test; the union bound for the family; Paulson 1964 for dropping the arms that
//! cannot win):
//!
//! - each take has fishtest's GSPRT of the group's bounds (`elo0`, `elo1`, `β`), but at
//!   `α / K`: upper bound `ln((1 − β) K / α)`, lower bound `ln(β / (1 − α / K))`;
//! - a take whose LLR falls below the lower bound is dropped (it is not `elo1` better);
//! - the first take whose LLR rises above the upper bound is accepted and the group ends:
//!   every other take is dropped with it;
//! - with every take dropped the group ends with none accepted.
//!
//! If every take is at `elo0`, the chance that any is accepted is at most the sum of K
//! chances of `α / K`: the family-wise false-positive rate is at most `α`. A take at `elo1`
//! is accepted with probability `1 − β`, less at most the chance `α` that a take at `elo0`
//! is accepted before it. A likelihood ratio stays a test martingale however its pairs are
//! chosen, so the group may send pairs where they help (see [`Group::next_take`]): three
//! quarters to the leading take, the rest shared by the others.
//!
//! [`simulate`] checks those rates and counts the pairs against K separate SPRTs.

use serde::Serialize;

use crate::StatsError;
use crate::sprt::{Decision, Sprt, SprtCounts};

/// The most takes a group may hold (a tournament file's limit).
pub const MAX_TAKES: usize = tourney_model::tournament::MAX_TAKES;

/// The leading take's share of the pairs handed out while others are alive.
pub const LEADER_SHARE: f64 = 0.75;

/// A grouped test's settings: the SPRT of the whole family and the number of takes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Takes {
    /// Bounds, family-wise α, and β for each take.
    pub sprt: Sprt,
    /// Takes in the group (1 to [`MAX_TAKES`]).
    pub count: usize,
}

impl Takes {
    /// Checks the settings.
    ///
    /// # Errors
    /// The SPRT's (see [`Sprt::validate`]), or no takes or more than [`MAX_TAKES`].
    pub fn validate(&self) -> Result<(), StatsError> {
        self.sprt.validate()?;
        if !(1..=MAX_TAKES).contains(&self.count) {
            return Err(StatsError::Takes(self.count));
        }
        Ok(())
    }

    /// The SPRT each take runs: the group's, at `α / K`.
    pub fn take_sprt(&self) -> Sprt {
        Sprt {
            alpha: self.sprt.alpha / self.count.max(1) as f64,
            ..self.sprt
        }
    }
}

/// Where a take stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TakeState {
    /// Still played.
    Alive,
    /// Accepted: the group's verdict.
    Accepted,
    /// Dropped (see [`Dropped`]).
    Dropped,
}

/// Why a take was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "reason", content = "take")]
pub enum Dropped {
    /// Its LLR fell below the lower bound: it is not `elo1` better than the base.
    H0,
    /// The take of this number was accepted first.
    Beaten(usize),
}

/// One take of a group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Take {
    /// Its pairs counted by its SPRT (those after its decision are not).
    pub counts: SprtCounts,
    /// All its pairs fed to the group, those after its decision included.
    pub played: u64,
    /// The LLR of its counts (0 before any).
    pub llr: f64,
    /// Where it stands.
    pub state: TakeState,
    /// Why it was dropped, if it was.
    pub dropped: Option<Dropped>,
    /// The group's pairs counted when it was decided (accepted or dropped).
    pub decided_after: Option<u64>,
}

/// What a group says so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "verdict", content = "take")]
pub enum Verdict {
    /// Some take is alive and none was accepted.
    Continue,
    /// The take of this number was accepted.
    Accepted(usize),
    /// Every take was dropped.
    NoneAccepted,
}

/// A grouped test under way: its takes' SPRTs, fed pair by pair in pair order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Its settings.
    pub settings: Takes,
    /// Each take, by number.
    pub takes: Vec<Take>,
    /// Pairs counted (of all takes, those after their take's decision included).
    pub pairs: u64,
    /// Each take's bounds `(lower, upper)`.
    pub bounds: (f64, f64),
}

impl Group {
    /// A group with nothing counted.
    ///
    /// # Errors
    /// As [`Takes::validate`].
    pub fn new(settings: Takes) -> Result<Group, StatsError> {
        settings.validate()?;
        let take = Take {
            counts: SprtCounts::default(),
            played: 0,
            llr: 0.0,
            state: TakeState::Alive,
            dropped: None,
            decided_after: None,
        };
        Ok(Group {
            settings,
            takes: vec![take; settings.count],
            pairs: 0,
            bounds: settings.take_sprt().bounds(),
        })
    }

    /// Counts one pair of take `take`: its half-points in each game. A pair of a take
    /// that was decided (or of no take) is counted in [`Group::pairs`] only.
    ///
    /// # Errors
    /// As [`Sprt::status`] (the BayesElo model without W/D/L cannot happen here).
    pub fn add(&mut self, take: usize, half_points: [u8; 2]) -> Result<(), StatsError> {
        self.pairs += 1;
        let sprt = self.settings.take_sprt();
        if let Some(t) = self.takes.get_mut(take) {
            t.played += 1;
        }
        let Some(t) = (self.takes.get_mut(take)).filter(|t| t.state == TakeState::Alive) else {
            return Ok(());
        };
        t.counts.add(half_points);
        let status = sprt.status(&t.counts.input())?;
        t.llr = status.llr;
        match status.decision {
            Decision::Continue => {}
            Decision::AcceptH0 => {
                t.state = TakeState::Dropped;
                t.dropped = Some(Dropped::H0);
                t.decided_after = Some(self.pairs);
            }
            Decision::AcceptH1 => {
                t.state = TakeState::Accepted;
                t.decided_after = Some(self.pairs);
                for (k, other) in self.takes.iter_mut().enumerate() {
                    if k != take && other.state == TakeState::Alive {
                        other.state = TakeState::Dropped;
                        other.dropped = Some(Dropped::Beaten(take));
                        other.decided_after = Some(self.pairs);
                    }
                }
            }
        }
        Ok(())
    }

    /// The verdict so far.
    pub fn verdict(&self) -> Verdict {
        if let Some(k) = (self.takes.iter()).position(|t| t.state == TakeState::Accepted) {
            Verdict::Accepted(k)
        } else if self.takes.iter().any(|t| t.state == TakeState::Alive) {
            Verdict::Continue
        } else {
            Verdict::NoneAccepted
        }
    }

    /// The take the next pair should go to, given the pairs handed to each so far
    /// (`assigned`, counted or not yet): `None` once the group is decided.
    ///
    /// The alive takes ranked by LLR (ties by number): a leader strictly ahead of the
    /// others has [`LEADER_SHARE`] and they share the rest equally; with no leader all
    /// share alike (a lone take gets all). The pair goes to the take furthest below its
    /// share of the pairs handed to alive takes, so a burst of leases follows the shares
    /// too.
    pub fn next_take(&self, assigned: &[u64]) -> Option<usize> {
        let mut alive: Vec<usize> = (0..self.takes.len())
            .filter(|&k| self.takes[k].state == TakeState::Alive)
            .collect();
        alive.sort_by(|&a, &b| self.takes[b].llr.total_cmp(&self.takes[a].llr));
        let handed = |k: usize| assigned.get(k).copied().unwrap_or(0) as f64;
        let total: f64 = alive.iter().map(|&k| handed(k)).sum::<f64>() + 1.0;
        let others = alive.len().saturating_sub(1) as f64;
        // A leader is strictly ahead; takes tied at the top (at the start, say) share alike.
        let leads = match alive.as_slice() {
            [a, b, ..] => self.takes[*a].llr > self.takes[*b].llr,
            _ => false,
        };
        let share = |rank: usize| match (rank, others > 0.0 && leads) {
            (_, false) => 1.0 / (others + 1.0),
            (0, true) => LEADER_SHARE,
            (_, true) => (1.0 - LEADER_SHARE) / others,
        };
        let deficit = |rank: usize, k: usize| share(rank) * total - handed(k);
        (alive.iter().enumerate())
            .max_by(|(ra, a), (rb, b)| {
                // The larger deficit; on a tie, the better rank.
                deficit(*ra, **a)
                    .total_cmp(&deficit(*rb, **b))
                    .then(rb.cmp(ra))
            })
            .map(|(_, &k)| k)
    }
}

pub mod simulate;
