//! Selection and expansion: PUCT or UCT with priors from the evaluation, lazy and narrow
//! expansion, implicit minimax backups and MCTS-Solver's proofs.

use super::Mcts;
use super::tree::{Node, PROVEN_LOSS, PROVEN_WIN};
use crate::eval::Heuristics;

impl<P: Heuristics> Mcts<P> {
    /// With PUCT, gives the children from `first` on (the tree's last nodes) their policy:
    /// the softmax of their evaluations `values` (for the mover) at the temperature.
    pub(super) fn set_policy(&mut self, first: usize, values: impl Iterator<Item = i32> + Clone) {
        if self.config.puct <= 0.0 {
            return;
        }
        let Some(top) = values.clone().max() else {
            return;
        };
        let t = self.config.temperature.max(1e-3);
        let mut sum = 0.0;
        for (node, v) in self.tree[first..].iter_mut().zip(values) {
            let weight = ((v - top) as f64 / t).exp();
            sum += weight;
            node.policy = weight as f32;
        }
        for node in &mut self.tree[first..] {
            node.policy = (node.policy as f64 / sum) as f32;
        }
    }

    /// Whether expansions evaluate each child (its prior and first minimax value).
    pub(super) fn has_priors(&self) -> bool {
        self.config.width > 0 || self.config.bias > 0.0 || self.config.minimax > 0.0
    }

    /// Whether leaves are expanded lazily: their evaluation is their first visit.
    pub(super) fn lazy(&self) -> bool {
        self.config.expand_at > 1 && self.has_priors()
    }

    /// A new child of `parent`; with lazy expansion its evaluation counts as a visit.
    pub(super) fn new_leaf(&self, mv: P::Move, parent: u32, prior: f32) -> Node<P::Move> {
        let mut leaf = Node::leaf(Some(mv), parent, prior);
        if self.lazy() {
            leaf.visits = 1;
            leaf.value = prior as f64;
        }
        leaf
    }

    /// Creates the children of `node` (at `position`, not decided): all of them, or with a
    /// `width` its best moves below the root; none when all would not fit in the tree's
    /// `max_nodes` (the node stays a leaf).
    pub(super) fn expand(&mut self, node: usize, position: &P) {
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        position.generate_moves(|mv| moves.push(mv));
        if self.tree.len() + moves.len() > self.config.max_nodes.max(1 + moves.len()) {
            self.moves = moves;
            return;
        }
        let first = self.tree.len() as u32;
        let width = self.config.width;
        // Priors are for the mover: the negated evaluation of each child, best first.
        let scored: Vec<(i32, P::Move)> = if self.has_priors() {
            let keep = if width > 0 && node != 0 {
                width
            } else {
                usize::MAX
            };
            position.best_moves(&self.config.weights, keep).0
        } else {
            moves.iter().map(|&mv| (0, mv)).collect()
        };
        let count = scored.len() as u32;
        let priors = self.has_priors();
        for &(value, mv) in &scored {
            let prior = if priors {
                Self::squash(value) as f32
            } else {
                0.5
            };
            let leaf = self.new_leaf(mv, node as u32, prior);
            self.tree.push(leaf);
        }
        self.set_policy(first as usize, scored.iter().map(|&(value, _)| value));
        self.moves = moves;
        self.tree[node].first_child = first;
        self.tree[node].child_count = count;
    }

    /// The child to descend into: a proven win at once, else the best UCT score with
    /// progressive bias, unvisited children first.
    pub(super) fn select(&self, node: usize) -> usize {
        let n = &self.tree[node];
        let mut count = n.child_count;
        if self.config.width > 0 {
            let active = self.config.width + (n.visits as f64).sqrt() as usize;
            count = count.min(active as u32);
        }
        let range = n.first_child as usize..(n.first_child + count) as usize;
        let log_n = (n.visits.max(1) as f64).ln();
        let sqrt_n = (n.visits.max(1) as f64).sqrt();
        let puct = self.config.puct;
        let mut best = (f64::NEG_INFINITY, range.start);
        for c in range {
            let child = &self.tree[c];
            let alpha = self.config.minimax;
            let score = match child.proven {
                PROVEN_WIN => return c,
                PROVEN_LOSS => -1e9,
                // PUCT: an untried child is valued by its evaluation (its first minimax).
                _ if puct > 0.0 => {
                    let visits = child.visits as f64;
                    let mean = if child.visits == 0 {
                        child.minimax as f64
                    } else {
                        child.value / visits
                    };
                    (1.0 - alpha) * mean
                        + alpha * child.minimax as f64
                        + puct * child.policy as f64 * sqrt_n / (1.0 + visits)
                        + self.config.bias * child.prior as f64 / (visits + 1.0)
                }
                _ if child.visits == 0 => 1e9 + child.prior as f64,
                _ => {
                    let visits = child.visits as f64;
                    (1.0 - alpha) * child.value / visits
                        + alpha * child.minimax as f64
                        + self.config.exploration * (log_n / visits).sqrt()
                        + self.config.bias * child.prior as f64 / (visits + 1.0)
                }
            };
            if score > best.0 {
                best = (score, c);
            }
        }
        best.1
    }

    /// The implicit minimax value of `node` from its children's: the side to move at it
    /// takes its best child (a proven child counts as won or lost).
    pub(super) fn back_up_minimax(&mut self, node: usize) {
        let n = &self.tree[node];
        let children = &self.tree[n.first_child as usize..(n.first_child + n.child_count) as usize];
        let best = children
            .iter()
            .map(|c| match c.proven {
                PROVEN_WIN => 1.0,
                PROVEN_LOSS => 0.0,
                _ => c.minimax,
            })
            .fold(f32::NEG_INFINITY, f32::max);
        if best.is_finite() {
            self.tree[node].minimax = 1.0 - best;
        }
    }

    /// MCTS-Solver: the proof status of `node` from its children, for the player who moved
    /// into it (its children's movers are the other side).
    pub(super) fn prove(&mut self, node: usize) {
        let n = &self.tree[node];
        if n.child_count == 0 {
            return;
        }
        let children = &self.tree[n.first_child as usize..(n.first_child + n.child_count) as usize];
        if children.iter().any(|c| c.proven == PROVEN_WIN) {
            self.tree[node].proven = PROVEN_LOSS;
        } else if children.iter().all(|c| c.proven == PROVEN_LOSS) {
            self.tree[node].proven = PROVEN_WIN;
        }
    }
}
