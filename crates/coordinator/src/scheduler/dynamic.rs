//! Pairings made as results come in: a grouped test's next take, a knockout's next match,
//! a Swiss round from the standings, a rating pool's most informative pair. Pair numbers are handed out in order as before; each
//! number gets its pairing when it is first handed out, and keeps it (an expired lease's
//! pair is offered again with the same engines). Each such pair plays the opening of its
//! own number.
//!
//! Nothing more is stored than the completed pairs with their engines: a restart reads
//! them back in pair order into the same bracket, standings, group or pool. Pairs that were out
//! when it stopped are void (their results are refused, their engines are not known), and
//! their matches are handed out again under new numbers.

use tourney_model::tournament::{Format, PairOutcome, TournamentConfig};
use tourney_plan::knockout::Bracket;
use tourney_plan::swiss::Swiss;
use tourney_stats::takes::{Group, Takes, Verdict};

use super::pool::Pool;
use super::sprt::sprt_from;
use crate::pair_map::PairMap;

/// What makes the pairings.
#[derive(Debug, Clone)]
pub enum Planner {
    /// A grouped test: the base is engine 0, take `k` is engine `k + 1`.
    Takes {
        /// The takes' SPRTs along the completed prefix.
        group: Group,
        /// Pairs handed to each take.
        assigned: Vec<u64>,
    },
    /// A knockout bracket.
    Knockout(Bracket),
    /// A Swiss.
    Swiss(Swiss),
    /// A rating pool (boxed: its ratings and covariance).
    Pool(Box<Pool>),
}

/// A tournament's pairings made as results come in.
#[derive(Debug, Clone)]
pub(crate) struct Dynamic {
    pub(super) planner: Planner,
    /// The engines of each pair handed out, `1 + first·256 + second`.
    pairings: PairMap<u16>,
}

impl Dynamic {
    /// The planner of `config`'s format, if its pairings depend on results.
    pub(super) fn of(config: &TournamentConfig) -> Option<Dynamic> {
        let n = config.engines.len();
        let planner = match config.format {
            Format::Takes => {
                let sprt = sprt_from(config.sprt.as_ref()?);
                let settings = Takes {
                    sprt,
                    count: n.saturating_sub(1),
                };
                Planner::Takes {
                    group: Group::new(settings).ok()?,
                    assigned: vec![0; settings.count],
                }
            }
            Format::Knockout => Planner::Knockout(Bracket::new(
                n,
                config.match_pairs(),
                u64::from(config.tiebreak_pairs.unwrap_or(1)),
                config.sprt.as_ref().map(sprt_from),
            )),
            Format::Swiss => Planner::Swiss(Swiss::new(
                n,
                config.rounds.unwrap_or(1),
                config.match_pairs(),
            )),
            Format::Pool => Planner::Pool(Box::new(Pool::new(config))),
            _ => return None,
        };
        Some(Dynamic {
            planner,
            pairings: PairMap::default(),
        })
    }

    /// The engines of a pair handed out in this run of the coordinator (a completed pair's
    /// are its outcome's).
    pub(super) fn pairing(&self, pair: u64) -> Option<(usize, usize)> {
        let code = self.pairings.get(pair).checked_sub(1)?;
        Some((usize::from(code >> 8), usize::from(code & 0xff)))
    }

    /// Gives pair `pair` the next pairing, if one is wanted now.
    pub(super) fn assign(&mut self, pair: u64) -> Option<(usize, usize)> {
        let (first, second) = match &mut self.planner {
            Planner::Takes { group, assigned } => {
                let take = group.next_take(assigned)?;
                assigned[take] += 1;
                (take + 1, 0)
            }
            Planner::Knockout(bracket) => bracket.hand_next(pair)?,
            Planner::Swiss(swiss) => swiss.hand_next()?,
            Planner::Pool(pool) => pool.assign(pair)?,
        };
        self.remember(pair, first, second);
        Some((first, second))
    }

    fn remember(&mut self, pair: u64, first: usize, second: usize) {
        // Engines are fewer than 256 (MAX_ENGINES).
        self.pairings
            .set(pair, 1 + ((first as u16) << 8 | second as u16));
    }

    /// Pairs that could be handed out now (a grouped test's and a pool's are open-ended:
    /// `open`).
    pub(super) fn offerable(&self, open: u64) -> u64 {
        match &self.planner {
            Planner::Takes { group, .. } => match group.verdict() {
                Verdict::Continue => open,
                _ => 0,
            },
            Planner::Knockout(b) => b.wanted(),
            Planner::Swiss(s) => s.wanted(),
            Planner::Pool(_) => open,
        }
    }

    /// Adds engine `name` to a pool, a member from pair `from` on; returns whether the
    /// format is a pool (no other format takes engines while it runs).
    pub(super) fn join(&mut self, name: &str, from: u64) -> bool {
        match &mut self.planner {
            Planner::Pool(pool) => {
                pool.join(name, from);
                true
            }
            _ => false,
        }
    }

    /// Counts a completed pair; `restored`: read back after a restart (handed out in an
    /// earlier run). A grouped test and a pool count their pairs along the prefix instead
    /// ([`Dynamic::count_prefix`]). Returns whether the pair fits the pairings: a pair
    /// read back that does not (its match was decided without it) is kept but changes
    /// nothing.
    pub(super) fn record(&mut self, o: &PairOutcome, restored: bool) -> bool {
        match &mut self.planner {
            Planner::Takes { assigned, .. } => {
                if restored
                    && let Some(n) = o.first.checked_sub(1).and_then(|k| assigned.get_mut(k))
                {
                    *n += 1;
                }
                true
            }
            Planner::Knockout(b) => {
                (!restored || b.hand(o.first, o.second, o.pair))
                    && b.record(o.first, o.second, o.pair, o.half_points)
            }
            Planner::Swiss(s) => {
                let points = u64::from(o.half_points[0] + o.half_points[1]);
                (!restored || s.hand(o.first, o.second)) && s.record(o.first, o.second, points)
            }
            // Handed out in an earlier run: pending until the prefix counts it.
            Planner::Pool(pool) => !restored || pool.handed(o.pair, o.first, o.second),
        }
    }

    /// Counts pair `pair` of the prefix in a grouped test's SPRTs or a pool's ratings:
    /// its outcome, `None` when it is void or excluded.
    pub(super) fn count_prefix(&mut self, pair: u64, outcome: Option<&PairOutcome>) {
        match &mut self.planner {
            Planner::Takes { group, .. } => {
                // A pair of no take (cannot be: pairings are checked) counts for nothing;
                // the BayesElo model's lack of W/D/L cannot happen on pairs.
                if let Some(o) = outcome {
                    let _ = group.add(o.first.wrapping_sub(1), o.half_points);
                }
            }
            Planner::Pool(pool) => pool.count(pair, outcome),
            Planner::Knockout(_) | Planner::Swiss(_) => {}
        }
    }

    /// Starts a grouped test's SPRTs or a pool's ratings over (an exclusion changed what
    /// counts).
    pub(super) fn reset_counts(&mut self) {
        match &mut self.planner {
            Planner::Takes { group, .. } => {
                if let Ok(fresh) = Group::new(group.settings) {
                    *group = fresh;
                }
            }
            Planner::Pool(pool) => pool.reset(),
            Planner::Knockout(_) | Planner::Swiss(_) => {}
        }
    }

    /// Whether the format has its verdict: a take accepted or all dropped, the final
    /// played, every Swiss round played (or the next impossible). A pool never is: it ends
    /// at its budget, or when cancelled.
    pub(super) fn is_decided(&self) -> bool {
        match &self.planner {
            Planner::Takes { group, .. } => group.verdict() != Verdict::Continue,
            Planner::Knockout(b) => b.champion().is_some(),
            Planner::Swiss(s) => s.is_finished(),
            Planner::Pool(_) => false,
        }
    }
}
