//! A simulated fleet on the real scheduler: workers of some cores take pairs as their
//! cores free up, each pair holding its cores for its expected length (give or take a
//! fifth, if asked) and then reported. `tourney bench share` and the share tests run it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tourney_model::tournament::{PairOutcome, TournamentConfig};

use super::cost::pair_cores;
use super::{Scheduler, TournamentId};

/// A pair leased in the simulation: its test, the cores it holds, and when it starts and
/// ends (ms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Played {
    /// Its test.
    pub tournament: TournamentId,
    /// The cores it holds.
    pub cores: u32,
    /// When it was leased.
    pub start_ms: u64,
    /// When it ends and is reported.
    pub end_ms: u64,
}

impl Played {
    /// The core-seconds it plays within `[from, to)` (ms).
    pub fn core_seconds_within(&self, from: u64, to: u64) -> f64 {
        let (start, stop) = (self.start_ms.max(from), self.end_ms.min(to));
        f64::from(self.cores) * stop.saturating_sub(start) as f64 / 1000.0
    }
}

/// A pair in play: when it ends, the worker, its test, the pair and its cores.
type InPlay = (u64, usize, TournamentId, u64, u32);

/// Workers of a number of cores each, and the pairs they play.
pub struct SimulatedFleet {
    /// Each worker's free cores.
    free: Vec<u32>,
    /// Pairs in play, the next to end first.
    running: BinaryHeap<Reverse<InPlay>>,
    now: u64,
    /// The state of the length's jitter (xorshift), if pairs vary in length.
    jitter: Option<u64>,
}

impl SimulatedFleet {
    /// `workers` workers of `cores` cores each, idle at time 0; every pair runs exactly
    /// its expected length.
    pub fn new(workers: usize, cores: u32) -> SimulatedFleet {
        SimulatedFleet {
            free: vec![cores; workers],
            running: BinaryHeap::new(),
            now: 0,
            jitter: None,
        }
    }

    /// Each pair runs its expected length times a factor between 0.8 and 1.2, drawn from
    /// `seed` (not 0).
    pub fn with_jitter(mut self, seed: u64) -> SimulatedFleet {
        self.jitter = Some(seed.max(1));
        self
    }

    /// The simulated time (ms).
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Plays until `to` (ms): every free core takes a pair that fits it, then the next
    /// pair to end is reported, again and again. Calls `leased` with each pair handed
    /// out.
    pub fn play(&mut self, s: &mut Scheduler, to: u64, leased: &mut dyn FnMut(Played)) {
        while self.now < to {
            self.lease_free_cores(s, leased);
            let Some(Reverse((end, w, tournament, pair, cores))) = self.running.pop() else {
                self.now = to;
                break;
            };
            self.now = end;
            self.free[w] += cores;
            let outcome = PairOutcome {
                pair,
                first: 0,
                second: 1,
                half_points: [1, 1],
                white: [1, 0],
            };
            s.report(&worker_name(w), &[(tournament, outcome)], end);
        }
    }

    fn lease_free_cores(&mut self, s: &mut Scheduler, leased: &mut dyn FnMut(Played)) {
        for (w, left) in self.free.iter_mut().enumerate() {
            while *left > 0 {
                let room = *left;
                let fits = |c: &TournamentConfig| c.requires.cores.unwrap_or(1) <= room;
                let Some((_, jobs)) = s.lease(&worker_name(w), 1, self.now, &fits) else {
                    break;
                };
                let t = &s.tournaments[&jobs[0].tournament];
                let cores = pair_cores(&t.config) as u32;
                let factor = match &mut self.jitter {
                    Some(x) => {
                        *x ^= *x << 13;
                        *x ^= *x >> 7;
                        *x ^= *x << 17;
                        0.8 + 0.4 * (*x % 1000) as f64 / 1000.0
                    }
                    None => 1.0,
                };
                let ms = (t.pair_cost / f64::from(cores) * factor * 1000.0) as u64;
                let end = self.now + ms.max(1);
                *left -= cores;
                self.running
                    .push(Reverse((end, w, t.id, jobs[0].pair, cores)));
                leased(Played {
                    tournament: t.id,
                    cores,
                    start_ms: self.now,
                    end_ms: end,
                });
            }
        }
    }
}

/// Worker `w`'s registration name.
fn worker_name(w: usize) -> String {
    format!("w{w}#1")
}
