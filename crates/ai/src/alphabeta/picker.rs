//! The order in which a node's moves are searched.

/// A move with its ordering score and its place in generation order.
pub(super) type Scored<M> = (i64, u32, M);

/// How many of a node's moves are picked by a scan for the best left before the rest are
/// sorted: a cut-off usually comes within the first few, and Amazons' thousands of moves
/// then go unsorted.
const PICKED_BY_SCAN: usize = 4;

/// A node's moves in search order: highest score first, equal scores in generation order.
pub(super) struct MovePicker<M> {
    /// Moves tried before the list, in order (the TT move, killers).
    pub(super) early: [Option<M>; 3],
    /// How many of `early` were picked.
    tried: usize,
    pub(super) list: Vec<Scored<M>>,
    /// Whether `list` holds the node's moves (less `early`); see [`super::Search::next_move`].
    pub(super) generated: bool,
    next: usize,
    sorted: bool,
}

impl<M: Copy + PartialEq> MovePicker<M> {
    /// Moves already in search order.
    pub(super) fn sorted(list: Vec<Scored<M>>) -> Self {
        MovePicker {
            early: [None; 3],
            tried: 0,
            list,
            generated: true,
            next: 0,
            sorted: true,
        }
    }

    /// Moves in generation order, to be ordered by score as they are picked.
    #[cfg(test)]
    fn lazy(list: Vec<Scored<M>>) -> Self {
        MovePicker {
            sorted: false,
            ..MovePicker::sorted(list)
        }
    }

    /// The `early` moves, then moves to be generated into the (empty) `list` and ordered
    /// by score as they are picked.
    pub(super) fn deferred(list: Vec<Scored<M>>, early: [Option<M>; 3]) -> Self {
        MovePicker {
            early,
            generated: false,
            sorted: false,
            ..MovePicker::sorted(list)
        }
    }

    /// Whether the early moves are used up and the list is still to be generated.
    pub(super) fn ungenerated(&self) -> bool {
        !self.generated && self.early.get(self.tried).is_none_or(Option::is_none)
    }
}

impl<M: Copy + PartialEq> Iterator for MovePicker<M> {
    type Item = M;

    fn next(&mut self) -> Option<M> {
        if let Some(&Some(mv)) = self.early.get(self.tried) {
            self.tried += 1;
            return Some(mv);
        }
        let rest = self.list.get_mut(self.next..).filter(|r| !r.is_empty())?;
        // Unique keys (generation order breaks ties), so scan and sort agree.
        let key = |&(score, index, _): &Scored<M>| (std::cmp::Reverse(score), index);
        if !self.sorted && self.next < PICKED_BY_SCAN {
            let best =
                (1..rest.len()).fold(0, |b, i| if key(&rest[i]) < key(&rest[b]) { i } else { b });
            rest.swap(0, best);
        } else if !self.sorted {
            rest.sort_unstable_by_key(key);
            self.sorted = true;
        }
        self.next += 1;
        Some(rest[0].2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_are_picked_in_a_stable_order_of_their_scores() {
        // Many ties, more moves than are picked by scanning.
        for len in [0, 1, 3, PICKED_BY_SCAN, PICKED_BY_SCAN + 1, 40] {
            let scores: Vec<i64> = (0..len).map(|i| (i * 7919 % 5) as i64).collect();
            let list = scores.iter().enumerate();
            let picker = MovePicker::lazy(list.map(|(i, &s)| (s, i as u32, i)).collect());
            let mut expected: Vec<usize> = (0..len).collect();
            expected.sort_by_key(|&i| std::cmp::Reverse(scores[i]));
            assert_eq!(picker.collect::<Vec<_>>(), expected, "{len} moves");
        }
    }
}
