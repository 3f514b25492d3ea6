//! The order in which a node's moves are searched.

use std::cmp::Reverse;

/// A move with its ordering score and its place in generation order.
pub(super) type Scored<M> = (i64, u32, M);

/// Consecutive moves of a list with one score and consecutive places in generation order:
/// already in search order among themselves. Amazons' moves come in runs (every arrow of
/// one amazon move shares its history score), so sorting the runs, not the moves, is
/// several times cheaper; cheaper too than scanning for the best move, even for one pick.
#[derive(Debug, Clone, Copy)]
struct Run {
    score: i64,
    /// The generation place of its first move.
    first: u32,
    /// Where it starts in the list, and how many moves it holds.
    start: u32,
    len: u32,
}

/// A ply's buffers, kept between nodes and searches so that Amazons' thousands of moves
/// are not allocated again at every node.
#[derive(Debug, Clone)]
pub(super) struct Buffers<M> {
    list: Vec<Scored<M>>,
    runs: Vec<Run>,
}

impl<M> Default for Buffers<M> {
    fn default() -> Self {
        Buffers {
            list: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// Where the next move comes from.
#[derive(Debug, Clone, Copy)]
enum Order {
    /// The list is in search order from move `next` on.
    Sorted { next: usize },
    /// The list is in generation order, its runs not yet sorted.
    Unsorted,
    /// The runs, sorted, from run `run` and move `offset` of it on.
    Runs { run: usize, offset: u32 },
}

/// A node's moves in search order: highest score first, equal scores in generation order.
pub(super) struct MovePicker<M> {
    /// Moves tried before the list, in order (the TT move, killers).
    pub(super) early: [Option<M>; 3],
    /// How many of `early` were picked.
    tried: usize,
    pub(super) list: Vec<Scored<M>>,
    runs: Vec<Run>,
    /// Whether `list` holds the node's moves (less `early`); see [`super::Search::next_move`].
    pub(super) generated: bool,
    order: Order,
}

impl<M: Copy + PartialEq> MovePicker<M> {
    /// Moves already in search order: `buffers`' list once `fill` has filled it (cleared).
    pub(super) fn sorted(buffers: Buffers<M>, fill: impl FnOnce(&mut Vec<Scored<M>>)) -> Self {
        let Buffers { mut list, runs } = buffers;
        list.clear();
        fill(&mut list);
        MovePicker {
            early: [None; 3],
            tried: 0,
            list,
            runs,
            generated: true,
            order: Order::Sorted { next: 0 },
        }
    }

    /// Moves in generation order, to be ordered by score as they are picked.
    #[cfg(test)]
    fn lazy(list: Vec<Scored<M>>) -> Self {
        MovePicker {
            order: Order::Unsorted,
            ..MovePicker::sorted(Buffers::default(), |l| *l = list)
        }
    }

    /// The `early` moves, then moves to be generated into the (cleared) list of `buffers`
    /// and ordered by score as they are picked.
    pub(super) fn deferred(buffers: Buffers<M>, early: [Option<M>; 3]) -> Self {
        MovePicker {
            early,
            generated: false,
            order: Order::Unsorted,
            ..MovePicker::sorted(buffers, |_| {})
        }
    }

    /// Whether the early moves are used up and the list is still to be generated.
    pub(super) fn ungenerated(&self) -> bool {
        !self.generated && self.early.get(self.tried).is_none_or(Option::is_none)
    }

    /// The buffers, for the next node at this ply.
    pub(super) fn into_buffers(self) -> Buffers<M> {
        Buffers {
            list: self.list,
            runs: self.runs,
        }
    }

    /// Splits the list into runs and sorts these.
    fn sort_runs(&mut self) {
        self.runs.clear();
        let list = &self.list;
        let mut start = 0;
        for i in 1..=list.len() {
            if i == list.len() || list[i].0 != list[start].0 || list[i].1 != list[i - 1].1 + 1 {
                self.runs.push(Run {
                    score: list[start].0,
                    first: list[start].1,
                    start: start as u32,
                    len: (i - start) as u32,
                });
                start = i;
            }
        }
        // Runs hold consecutive generation places, so no two of one score interleave.
        self.runs
            .sort_unstable_by_key(|run| (Reverse(run.score), run.first));
        self.order = Order::Runs { run: 0, offset: 0 };
    }
}

impl<M: Copy + PartialEq> Iterator for MovePicker<M> {
    type Item = M;

    fn next(&mut self) -> Option<M> {
        if let Some(&Some(mv)) = self.early.get(self.tried) {
            self.tried += 1;
            return Some(mv);
        }
        match &mut self.order {
            Order::Sorted { next } => {
                let mv = self.list.get(*next)?.2;
                *next += 1;
                Some(mv)
            }
            Order::Unsorted => {
                self.sort_runs();
                self.next()
            }
            Order::Runs { run, offset } => {
                let current = self.runs.get(*run)?;
                let mv = self.list[(current.start + *offset) as usize].2;
                *offset += 1;
                if *offset == current.len {
                    (*run, *offset) = (*run + 1, 0);
                }
                Some(mv)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The moves of a picker over `scores` (in generation order) as picked, against a
    /// stable sort of them by score.
    fn picked_and_expected(scores: &[i64]) -> (Vec<usize>, Vec<usize>) {
        let list = scores.iter().enumerate();
        let picker = MovePicker::lazy(list.map(|(i, &s)| (s, i as u32, i)).collect());
        let mut expected: Vec<usize> = (0..scores.len()).collect();
        expected.sort_by_key(|&i| Reverse(scores[i]));
        (picker.collect(), expected)
    }

    #[test]
    fn moves_are_picked_in_a_stable_order_of_their_scores() {
        // Many ties.
        for len in [0, 1, 3, 5, 40] {
            let scores: Vec<i64> = (0..len).map(|i| (i * 7919 % 5) as i64).collect();
            let (picked, expected) = picked_and_expected(&scores);
            assert_eq!(picked, expected, "{len} moves");
        }
    }

    #[test]
    fn runs_of_one_score_sort_as_their_moves_would() {
        // Runs as Amazons makes them (one score for every arrow of an amazon move), with
        // equal scores in runs apart.
        let mut state = 7u64;
        for len in [5, 17, 60, 300] {
            let mut scores = Vec::new();
            while scores.len() < len {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                let score = (state >> 60) as i64 % 4;
                let run = 1 + (state >> 33) as usize % 9;
                scores.extend(std::iter::repeat_n(score, run.min(len - scores.len())));
            }
            let (picked, expected) = picked_and_expected(&scores);
            assert_eq!(picked, expected, "{scores:?}");
        }
    }
}
