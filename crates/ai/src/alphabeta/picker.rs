//! The order in which a node's moves are searched: the picker that hands them out best
//! first, and the search's methods that fill it (TT move, captures, killers and history,
//! or the evaluation's ranking of the positions they lead to).

use std::cmp::Reverse;
use std::time::Instant;

use super::Search;
use crate::eval::Heuristics;

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

impl<P: Heuristics> Search<'_, P> {
    /// Moves in search order, picked with [`Search::next_move`]: TT move, captures, killers,
    /// then by history; or, from the `eval_order` depth up, TT move then by the evaluation
    /// of the positions they lead to, only the best `prune` below the root. The picker holds
    /// the ply's buffers; give them back with [`Search::give_back`].
    pub(super) fn ordered_moves(
        &mut self,
        position: &P,
        tt_move: Option<P::Move>,
        ply: usize,
        depth: u32,
    ) -> MovePicker<P::Move> {
        let buffers = std::mem::take(&mut self.player.move_lists[ply]);
        let config = &self.player.config;
        if config.eval_order > 0 && depth >= config.eval_order {
            let keep = if ply > 0 && config.prune > 0 {
                config.prune
            } else {
                usize::MAX
            };
            // A ranking runs without reading the clock (thousands of evaluations in Amazons,
            // milliseconds): the search ends here if the last ones would not fit before the
            // deadline. The caller sees `aborted` and discards this node.
            let began = Instant::now();
            if self
                .deadline
                .is_some_and(|d| began + self.player.ranking >= d)
            {
                self.aborted = true;
                return MovePicker::sorted(buffers, |_| {});
            }
            // Every move evaluated, not a game's cheaper ranking: measured no faster to a
            // depth, and its pruning unproven.
            let (best, evaluated) = position.best_moves(&config.weights, usize::MAX);
            // The estimate follows the longest recent ranking, and fades as moves get fewer.
            let took = began.elapsed();
            let ranking = &mut self.player.ranking;
            *ranking = took.max(*ranking - *ranking / 16);
            // Each of these cost an evaluation: the clock is read as often as for nodes.
            self.work += evaluated;
            let moves = tt_move.into_iter().chain(
                best.into_iter()
                    .map(|(_, mv)| mv)
                    .filter(|&mv| Some(mv) != tt_move),
            );
            return MovePicker::sorted(buffers, |list| {
                list.extend(moves.take(keep).map(|mv| (0, 0, mv)));
            });
        }
        // In a game without captures the TT move and the killers are tried before the
        // moves are generated: most nodes near Amazons' leaves are cut by a killer, and
        // their thousands of moves are then never generated. (History read after the
        // early moves' searches may order the rest otherwise; in LOA, whose moves are few,
        // generation stays first and the order as it was.)
        if P::CAPTURES {
            let mut picker = MovePicker::deferred(buffers, [None; 3]);
            self.generate(&mut picker, position, tt_move, ply);
            return picker;
        }
        let mut early = [None; 3];
        let mut tried = 0;
        let killers = self.player.killers[ply];
        for mv in tt_move.into_iter().chain(killers.into_iter().flatten()) {
            if !early[..tried].contains(&Some(mv)) && position.is_legal(mv) {
                early[tried] = Some(mv);
                tried += 1;
            }
        }
        MovePicker::deferred(buffers, early)
    }

    /// Generates the moves of `position`, `ply` plies from the root, into `picker`'s list,
    /// less its early moves, scored to put the `tt_move` first, then captures, killers
    /// and the rest by history.
    pub(super) fn generate(
        &self,
        picker: &mut MovePicker<P::Move>,
        position: &P,
        tt_move: Option<P::Move>,
        ply: usize,
    ) {
        let killers = self.player.killers[ply];
        let list = &mut picker.list;
        let early = &picker.early;
        position.generate_moves(|mv| {
            if early.contains(&Some(mv)) {
                return;
            }
            let score = if Some(mv) == tt_move {
                4 << 40
            } else if position.is_capture(mv) {
                3 << 40
            } else if Some(mv) == killers[0] {
                2 << 40
            } else if Some(mv) == killers[1] {
                1 << 40
            } else {
                self.player.history[P::move_index(mv)] as i64
            };
            list.push((score, list.len() as u32, mv));
        });
        picker.generated = true;
    }

    /// The next move of `picker` at `position`, `ply` plies from the root: its moves are
    /// generated once those tried before generation are used up.
    pub(super) fn next_move(
        &self,
        picker: &mut MovePicker<P::Move>,
        position: &P,
        ply: usize,
    ) -> Option<P::Move> {
        if picker.ungenerated() {
            // The TT move, if any, was tried early.
            self.generate(picker, position, None, ply);
        }
        picker.next()
    }

    /// Returns the buffers of `picker` to `ply` for the next node there.
    pub(super) fn give_back(&mut self, picker: MovePicker<P::Move>, ply: usize) {
        self.player.move_lists[ply] = picker.into_buffers();
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
