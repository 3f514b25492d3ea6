//! The transposition table: one entry per slot, indexed by the low bits of the position's
//! Zobrist hash, replaced when the new entry is for another position or searched at least
//! as deep. A new game starts a new generation: older entries are ignored and overwritten,
//! so clearing costs nothing.
//!
//! ```text
//! Entry (for LOA, 24 bytes):  key: u64 | score: i32 | move: Option<Move> | depth: u8 | bound: u8
//! ```

use std::mem::size_of;

/// What the stored score says about the true score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The true score.
    Exact,
    /// At least this (a beta cut-off).
    Lower,
    /// At most this (no move raised alpha).
    Upper,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<M> {
    pub(crate) key: u64,
    pub(crate) score: i32,
    pub(crate) mv: Option<M>,
    pub(crate) depth: u8,
    pub(crate) bound: Bound,
    /// The generation (game) that wrote it.
    pub(crate) generation: u8,
}

/// A fixed-size table of the last search results.
pub(crate) struct Table<M> {
    entries: Vec<Option<Entry<M>>>,
    mask: usize,
    generation: u8,
}

impl<M: Copy> Table<M> {
    /// A table of at most `megabytes` MiB (a power of two of entries, at least 1024).
    pub(crate) fn new(megabytes: usize) -> Self {
        let bytes = megabytes.max(1) << 20;
        let mut slots = 1024;
        while slots * 2 * size_of::<Option<Entry<M>>>() <= bytes {
            slots *= 2;
        }
        Table {
            entries: vec![None; slots],
            mask: slots - 1,
            generation: 0,
        }
    }

    /// Forgets every entry (in O(1): a new generation; every 256th clears for real).
    pub(crate) fn clear(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.entries.iter_mut().for_each(|e| *e = None);
        }
    }

    pub(crate) fn probe(&self, key: u64) -> Option<Entry<M>> {
        self.entries[key as usize & self.mask]
            .filter(|e| e.key == key && e.generation == self.generation)
    }

    pub(crate) fn store(&mut self, mut entry: Entry<M>) {
        entry.generation = self.generation;
        let generation = self.generation;
        let slot = &mut self.entries[entry.key as usize & self.mask];
        match slot {
            Some(old)
                if old.key == entry.key
                    && old.generation == generation
                    && old.depth > entry.depth => {}
            _ => *slot = Some(entry),
        }
    }

    /// Number of slots.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Bytes of its entries.
    pub(crate) fn bytes(&self) -> usize {
        std::mem::size_of_val(self.entries.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_small_and_the_table_fits_its_budget() {
        assert!(size_of::<Option<Entry<tourney_rules::loa::Move>>>() <= 24);
        assert!(size_of::<Option<Entry<tourney_rules::amazons::Move>>>() <= 24);
        let table: Table<tourney_rules::loa::Move> = Table::new(1);
        assert!(table.len() * size_of::<Option<Entry<tourney_rules::loa::Move>>>() <= 1 << 20);
        assert!(table.len() >= 1 << 15);
    }

    #[test]
    fn deeper_entries_of_the_same_position_survive() {
        let mut table: Table<u8> = Table::new(1);
        let e = |depth, score| Entry {
            key: 42,
            score,
            mv: Some(1),
            depth,
            bound: Bound::Exact,
            generation: 0,
        };
        table.store(e(5, 10));
        table.store(e(3, 20));
        assert_eq!(table.probe(42).unwrap().score, 10);
        table.store(e(6, 30));
        assert_eq!(table.probe(42).unwrap().score, 30);
        assert!(table.probe(43).is_none());
        // A new game forgets it.
        table.clear();
        assert!(table.probe(42).is_none());
        table.store(e(1, 40));
        assert_eq!(table.probe(42).unwrap().score, 40);
    }
}
