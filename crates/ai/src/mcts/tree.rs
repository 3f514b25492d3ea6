//! The arena tree: nodes that are never moved, proven results, and keeping the subtree of
//! the position reached for the next search.

use tourney_rules::Game;

use super::Mcts;
use crate::eval::Heuristics;

/// Proof status of a node, from the view of the player who made the move into it.
pub(super) const UNKNOWN: i8 = 0;

pub(super) const PROVEN_WIN: i8 = 1;

pub(super) const PROVEN_LOSS: i8 = -1;

/// One node of the tree. Its children are `first_child .. first_child + child_count`.
#[derive(Debug, Clone)]
pub(super) struct Node<M> {
    pub(super) mv: Option<M>,
    pub(super) parent: u32,
    pub(super) first_child: u32,
    pub(super) child_count: u32,
    pub(super) visits: u32,
    /// Sum of results for the player who moved into this node (1 win, ½ draw).
    pub(super) value: f64,
    /// Progressive-bias heuristic in [0, 1] for that player.
    pub(super) prior: f32,
    /// Its share of its parent's policy (PUCT selection).
    pub(super) policy: f32,
    /// Implicit minimax value in [0, 1] for that player: its evaluation, then the minimax
    /// of its children's.
    pub(super) minimax: f32,
    pub(super) proven: i8,
}

impl<M> Node<M> {
    /// A new leaf, its minimax value its prior.
    pub(super) fn leaf(mv: Option<M>, parent: u32, prior: f32) -> Self {
        Node {
            mv,
            parent,
            first_child: 0,
            child_count: 0,
            visits: 0,
            value: 0.0,
            prior,
            policy: 0.0,
            minimax: prior,
            proven: UNKNOWN,
        }
    }
}

/// Marks a node [`Mcts::keep_subtree`] drops, and one it has not decided yet.
pub(super) const NOT_KEPT: u32 = u32::MAX;

pub(super) const UNDECIDED: u32 = u32::MAX - 1;

/// The parent of a node left in the tree by [`Mcts::widen_root`] when it copied the node
/// to the root's new children: no longer anyone's child.
pub(super) const DETACHED: u32 = u32::MAX;

/// How many plies back the last search's root is looked for: the player's own move and the
/// reply, or a few more when the same player moves for both sides.
pub(super) const REUSE_PLIES: usize = 4;

impl<P: Heuristics> Mcts<P> {
    /// Makes the subtree of the current position the tree when the last search's root is
    /// a few plies back in `game` and its moves since lead to an expanded node; else starts
    /// a new tree. In a narrow tree, the kept root is widened to every move.
    pub(super) fn start_tree(&mut self, game: &Game<P>) {
        let reached = self.last_root.take().and_then(|last| {
            let positions = game.positions();
            let ply = game.ply();
            let from = (ply.saturating_sub(REUSE_PLIES)..=ply)
                .rev()
                .find(|&i| positions[i] == last)?;
            let mut node = 0;
            for &mv in &game.moves()[from..] {
                node = self.child_index(node, mv)?;
            }
            (self.tree[node].child_count > 0).then_some(node)
        });
        match reached {
            Some(node) => {
                self.keep_subtree(node);
                if self.config.width > 0 {
                    self.widen_root(game.position());
                }
            }
            None => {
                self.tree.clear();
                self.tree.push(Node::leaf(None, 0, 0.5));
                self.expand(0, game.position());
            }
        }
    }

    /// The index of `node`'s child reached by `mv`, if the tree holds one.
    pub(super) fn child_index(&self, node: usize, mv: P::Move) -> Option<usize> {
        let n = self.tree.get(node)?;
        (n.first_child as usize..(n.first_child + n.child_count) as usize)
            .find(|&c| self.tree[c].mv == Some(mv))
    }

    /// Compacts the tree in place to the subtree of `root`, which becomes node 0. Kept
    /// nodes keep their order, so each moves down (or stays) and children stay contiguous.
    /// No memory beyond `new_index`: a node is kept when its chain of parents reaches
    /// `root`, and each chain is walked once, up to the first node already decided.
    pub(super) fn keep_subtree(&mut self, root: usize) {
        let (tree, new_index) = (&self.tree, &mut self.new_index);
        new_index.clear();
        new_index.resize(tree.len(), UNDECIDED);
        new_index[0] = NOT_KEPT;
        new_index[root] = 0;
        let parent = |node: usize| match tree[node].parent {
            DETACHED => None,
            p => Some(p as usize),
        };
        for node in 0..tree.len() {
            let mut at = node;
            let decided = loop {
                match (new_index[at], parent(at)) {
                    (UNDECIDED, Some(p)) => at = p,
                    (UNDECIDED, None) => break NOT_KEPT,
                    (decided, _) => break decided,
                }
            };
            let mut at = Some(node);
            while let Some(a) = at.filter(|&a| new_index[a] == UNDECIDED) {
                new_index[a] = decided;
                at = parent(a);
            }
        }
        // The root first, then the others in order: a node's new index is at most its old
        // one (the old root, node 0, is never kept unless it is the root).
        let mut next = 1;
        for (old, index) in new_index.iter_mut().enumerate() {
            if *index != NOT_KEPT {
                *index = if old == root { 0 } else { next };
                next += u32::from(old != root);
            }
        }
        for old in 0..self.tree.len() {
            let new = new_index[old];
            if new == NOT_KEPT {
                continue;
            }
            let mut node = self.tree[old].clone();
            node.parent = if old == root {
                0
            } else {
                new_index[node.parent as usize]
            };
            if node.child_count > 0 {
                node.first_child = new_index[node.first_child as usize];
            }
            self.tree[new as usize] = node;
        }
        self.tree.truncate(next as usize);
        self.tree[0].mv = None;
    }

    /// Gives a kept root (which held only its best `width` moves) every move, best first;
    /// the moves it held keep their statistics and subtrees. Left narrow without room.
    pub(super) fn widen_root(&mut self, position: &P) {
        let legal = position.legal_moves().len();
        let root = &self.tree[0];
        if root.child_count as usize >= legal || self.tree.len() + legal > self.config.max_nodes {
            return;
        }
        let first = self.tree.len();
        let (best, _) = position.best_moves(&self.config.weights, usize::MAX);
        for &(value, mv) in &best {
            let index = self.tree.len() as u32;
            let node = match self.child_index(0, mv) {
                Some(c) => {
                    let n = &self.tree[c];
                    for grandchild in n.first_child..n.first_child + n.child_count {
                        self.tree[grandchild as usize].parent = index;
                    }
                    let copy = self.tree[c].clone();
                    self.tree[c].parent = DETACHED;
                    copy
                }
                None => self.new_leaf(mv, 0, Self::squash(value) as f32),
            };
            self.tree.push(node);
        }
        self.tree[0].first_child = first as u32;
        self.tree[0].child_count = legal as u32;
        self.set_policy(first, best.iter().map(|&(value, _)| value));
    }
}
