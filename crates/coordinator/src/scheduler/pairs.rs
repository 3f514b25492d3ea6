//! Sets of pairs kept compactly: the outcomes of completed pairs and the pairs in play.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tourney_model::tournament::{PairOutcome, TournamentConfig};

use crate::pair_map::PairMap;

/// Completed pairs' outcomes, one byte a pair by pair index: what a pair adds to the
/// standings beside what its number says (its engines come from the tournament's pairing).
/// Bits 0-1 and 2-3: the first engine's half-points in games 0 and 1; bits 4 and 5: the
/// first engine had White in game 0, in game 1; bit 7: done. A million pairs take 1 MB.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Outcomes {
    pub(super) codes: PairMap<u8>,
    pub(super) len: u64,
    /// Each pair's engines, for formats whose pairings depend on results (their number
    /// does not say them): `1 + first·256 + second`. Empty for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) engines: Option<PairMap<u16>>,
}

pub(super) const DONE: u8 = 0x80;

impl Outcomes {
    /// No outcomes, keeping each pair's engines where `config`'s format needs them.
    pub(crate) fn of(config: &TournamentConfig) -> Outcomes {
        Outcomes {
            codes: PairMap::default(),
            len: 0,
            engines: config.format.is_dynamic().then(PairMap::default),
        }
    }

    /// The engines of completed pair `pair` as kept (formats whose pairings depend on
    /// results).
    pub(super) fn engines(&self, pair: u64) -> Option<(usize, usize)> {
        let code = self.engines.as_ref()?.get(pair).checked_sub(1)?;
        Some((usize::from(code >> 8), usize::from(code & 0xff)))
    }

    pub(super) fn contains(&self, pair: u64) -> bool {
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
        if let Some(engines) = &mut self.engines {
            // Engines are fewer than 256 (MAX_ENGINES).
            engines.set(o.pair, 1 + ((o.first as u16) << 8 | o.second as u16));
        }
    }

    pub(super) fn half_points(&self, pair: u64) -> [u8; 2] {
        let c = self.codes.get(pair);
        [c & 3, (c >> 2) & 3]
    }

    /// The completed pairs, in order.
    pub(super) fn pairs(&self) -> impl Iterator<Item = u64> + '_ {
        self.codes.iter().map(|(p, _)| p)
    }

    /// The highest completed pair.
    pub(super) fn last(&self) -> Option<u64> {
        self.pairs().last()
    }

    /// The completed pairs' outcomes in a tournament of `config`, in order.
    pub(crate) fn outcomes<'a>(
        &'a self,
        config: &'a TournamentConfig,
    ) -> impl Iterator<Item = PairOutcome> + 'a {
        self.codes
            .iter()
            .map(|(pair, code)| self.outcome(pair, code, config))
    }

    /// The outcome a code says of pair `pair`.
    pub(super) fn outcome(&self, pair: u64, code: u8, config: &TournamentConfig) -> PairOutcome {
        let (first, second) = (self.engines(pair))
            .or_else(|| config.pairing(pair).map(|(a, b, _)| (a, b)))
            .unwrap_or((0, 1));
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
pub(crate) struct PairSet {
    /// Disjoint, non-adjacent ranges `start..end`, by start.
    pub(super) ranges: BTreeMap<u64, u64>,
    pub(super) len: u64,
}

impl PairSet {
    pub(super) fn first(&self) -> Option<u64> {
        self.ranges.keys().next().copied()
    }

    pub(super) fn len(&self) -> u64 {
        self.len
    }

    pub(super) fn contains(&self, pair: u64) -> bool {
        self.ranges
            .range(..=pair)
            .next_back()
            .is_some_and(|(_, &end)| pair < end)
    }

    pub(super) fn insert(&mut self, pair: u64) {
        self.insert_range(pair, pair + 1);
    }

    /// Adds `start..end` (pairs already in the set are not counted twice).
    pub(super) fn insert_range(&mut self, start: u64, end: u64) {
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

    pub(super) fn remove(&mut self, pair: u64) {
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
