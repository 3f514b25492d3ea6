//! A rating pool's gate (`[pool.gate]`): each member after the first best plays an SPRT
//! against the pool's best before it is paired in the pool, one gate at a time in the
//! order members joined, and becomes the best when the SPRT accepts H1 (lczero's and
//! KataGo's gating of a candidate against the current best).
//!
//! The gate's SPRT counts the pairs of the completed prefix, in pair order, between its
//! candidate and the best it faces, as a grouped test counts its takes: its decisions
//! depend only on the prefix, so a restart makes the same ones at the same pairs. A gate
//! that reaches its SPRT's `max_pairs` undecided refuses the candidate.

use tourney_model::tournament::{PairOutcome, SprtSettings};
use tourney_stats::{Decision, Sprt, SprtCounts, SprtStatus};

/// The gate a candidate is playing.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenGate {
    /// The candidate (an engine's number).
    pub candidate: usize,
    /// The best it plays against.
    pub against: usize,
    /// Its pairs counted, from the candidate's side.
    pub counts: SprtCounts,
    /// The SPRT after the last pair counted.
    pub status: Option<SprtStatus>,
}

/// A gate decided.
#[derive(Debug, Clone, PartialEq)]
pub struct GateDecision {
    /// The candidate.
    pub candidate: usize,
    /// The best it played against.
    pub against: usize,
    /// It passed: it is the best from then on.
    pub promoted: bool,
    /// Its pairs counted.
    pub pairs: u64,
    /// The LLR at the decision.
    pub llr: f64,
    /// The pair whose count decided it.
    pub at_pair: u64,
}

/// A pool's gating.
#[derive(Debug, Clone)]
pub struct Gate {
    sprt: Sprt,
    max_pairs: u64,
    /// The best before any gate: the pool's anchor.
    first_best: usize,
    /// The best now.
    pub best: usize,
    /// Members before it have had their gate (or are the first best).
    next: usize,
    /// The gate being played.
    pub open: Option<OpenGate>,
    /// The gates decided, in order.
    pub decisions: Vec<GateDecision>,
}

impl Gate {
    /// Gating by `settings`, `first_best` the best at first.
    pub(super) fn new(settings: &SprtSettings, first_best: usize) -> Gate {
        Gate {
            sprt: super::sprt::sprt_from(settings),
            max_pairs: settings.max_pairs,
            first_best,
            best: first_best,
            next: 0,
            open: None,
            decisions: Vec::new(),
        }
    }

    /// Its SPRT's bounds (lower, upper).
    pub fn bounds(&self) -> (f64, f64) {
        self.sprt.bounds()
    }

    /// Back to before any pair was counted (an exclusion changed what counts).
    pub(super) fn reset(&mut self) {
        *self = Gate {
            open: None,
            decisions: Vec::new(),
            best: self.first_best,
            next: 0,
            ..self.clone()
        };
    }

    /// Opens the next member's gate when none is open and one of the first `members`
    /// waits for it.
    pub(super) fn open_next(&mut self, members: usize) {
        while self.open.is_none() && self.next < members {
            let candidate = self.next;
            self.next += 1;
            if candidate != self.first_best {
                self.open = Some(OpenGate {
                    candidate,
                    against: self.best,
                    counts: SprtCounts::default(),
                    status: None,
                });
            }
        }
    }

    /// The two engines the open gate wants played: the candidate, then the best.
    pub(super) fn wants(&self) -> Option<(usize, usize)> {
        (self.open.as_ref()).map(|g| (g.candidate, g.against))
    }

    /// Counts pair `pair` of the completed prefix: a pair between the open gate's two
    /// engines goes to its SPRT. A decision opens the next gate among the first `members`.
    pub(super) fn count(&mut self, pair: u64, o: &PairOutcome, members: usize) {
        let Some(g) = &mut self.open else {
            return;
        };
        let half = if (o.first, o.second) == (g.candidate, g.against) {
            o.half_points
        } else if (o.second, o.first) == (g.candidate, g.against) {
            o.half_points.map(|h| 2 - h.min(2))
        } else {
            return;
        };
        g.counts.add(half);
        // An SPRT whose model cannot rate these counts yet goes on.
        g.status = self.sprt.status(&g.counts.input()).ok();
        let decision = g.status.map_or(Decision::Continue, |s| s.decision);
        if decision == Decision::Continue && g.counts.pairs < self.max_pairs {
            return;
        }
        let promoted = decision == Decision::AcceptH1;
        self.decisions.push(GateDecision {
            candidate: g.candidate,
            against: g.against,
            promoted,
            pairs: g.counts.pairs,
            llr: g.status.map_or(0.0, |s| s.llr),
            at_pair: pair,
        });
        if promoted {
            self.best = g.candidate;
        }
        self.open = None;
        self.open_next(members);
    }
}
