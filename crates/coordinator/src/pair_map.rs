//! A value per pair number, kept in pages of [`PAGE`] pairs: dense tournaments cost a few
//! bytes a pair, and a pair far beyond the others (a billion, say) costs one page.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Pairs per page.
pub(crate) const PAGE: u64 = 1024;

/// A value of type `T` per pair; `T::default()` stands for none.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct PairMap<T> {
    /// Pages by their first pair / [`PAGE`], each [`PAGE`] values long.
    pages: BTreeMap<u64, Vec<T>>,
}

impl<T: Copy + Default + PartialEq> PairMap<T> {
    /// Pair `pair`'s value (the default where none is set).
    pub(crate) fn get(&self, pair: u64) -> T {
        self.pages
            .get(&(pair / PAGE))
            .and_then(|page| page.get((pair % PAGE) as usize))
            .copied()
            .unwrap_or_default()
    }

    /// Sets pair `pair`'s value.
    pub(crate) fn set(&mut self, pair: u64, value: T) {
        let page = self
            .pages
            .entry(pair / PAGE)
            .or_insert_with(|| vec![T::default(); PAGE as usize]);
        if let Some(slot) = page.get_mut((pair % PAGE) as usize) {
            *slot = value;
        }
    }

    /// The pairs with a value, in order, with it.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, T)> + '_ {
        self.pages.iter().flat_map(|(&page, values)| {
            values
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != T::default())
                .map(move |(i, &v)| (page * PAGE + i as u64, v))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_by_pair_and_a_far_pair_costs_one_page() {
        let mut m = PairMap::<u8>::default();
        m.set(3, 7);
        m.set(999_999_999, 9);
        m.set(1023, 1);
        m.set(1024, 2);
        assert_eq!((m.get(3), m.get(4), m.get(999_999_999)), (7, 0, 9));
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            [(3, 7), (1023, 1), (1024, 2), (999_999_999, 9)]
        );
        assert_eq!(m.pages.len(), 3);
        m.set(3, 0);
        assert_eq!(m.iter().next(), Some((1023, 1)));
    }
}
