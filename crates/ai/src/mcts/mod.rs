//! Monte-Carlo tree search: UCT, or PUCT with the evaluation's softmax as its policy, on
//! an arena tree (nodes addressed by index), MCTS-Solver backups of proven wins and
//! losses, random or evaluation-cutoff playouts, optional progressive bias and implicit
//! minimax backups from the evaluation, and optionally a narrow tree: each node keeps its
//! best moves by evaluation and widens with visits. The subtree of the position reached
//! keeps its statistics from one move to the next.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tourney_rules::Game;

use crate::eval::Heuristics;
use crate::limits::{Limits, budget};
use crate::{Player, Rng, Score, SearchInfo, SearchResult, combine_limits};

/// How a playout ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Playout {
    /// Random moves to the end of the game (at most 300 plies, then a draw).
    Random,
    /// This many random moves, then the evaluation turned into a win probability.
    EvalAfter(u32),
}

/// Settings of the MCTS player.
#[derive(Debug, Clone)]
pub(crate) struct MctsConfig<W> {
    pub(crate) weights: W,
    pub(crate) limits: Limits,
    /// UCT's exploration constant (selection without `puct`).
    pub(crate) exploration: f64,
    pub(crate) playout: Playout,
    pub(crate) bias: f64,
    /// Weight of the implicit minimax value in selection (Lanctot et al., 2014): each
    /// node keeps the minimax of its children's evaluations, backed up with the results.
    pub(crate) minimax: f64,
    pub(crate) solver: bool,
    /// When not 0, an expansion evaluates every move and keeps the best this many below the
    /// root (all at the root, best first); a node then selects among its first `width +
    /// sqrt(visits)` children, and a new leaf is valued by its best child's evaluation.
    pub(crate) width: usize,
    /// A leaf below the root is expanded on this visit (1: the first); until then it is
    /// valued by its evaluation, known from its parent's expansion, which counts as its
    /// first visit without an iteration spent on it (prior knowledge as equivalent
    /// experience, Gelly and Silver 2007). Only with priors (`width`, `minimax` or `bias`):
    /// saves the expansion of leaves selected once.
    pub(crate) expand_at: u32,
    /// When above 0, selection is PUCT (Rosin 2011, as in AlphaZero) with this weight
    /// instead of UCT: a child's exploration term is its share of a policy, the softmax of
    /// the children's evaluations at `temperature`, times √(parent's visits) / (1 + its
    /// visits), so the search goes deep along the moves the evaluation favours.
    pub(crate) puct: f64,
    /// The policy's temperature in evaluation units (higher: flatter).
    pub(crate) temperature: f64,
    pub(crate) seed: u64,
    pub(crate) max_nodes: usize,
}

/// Proof status of a node, from the view of the player who made the move into it.
const UNKNOWN: i8 = 0;
const PROVEN_WIN: i8 = 1;
const PROVEN_LOSS: i8 = -1;

/// One node of the tree. Its children are `first_child .. first_child + child_count`.
#[derive(Debug, Clone)]
struct Node<M> {
    mv: Option<M>,
    parent: u32,
    first_child: u32,
    child_count: u32,
    visits: u32,
    /// Sum of results for the player who moved into this node (1 win, ½ draw).
    value: f64,
    /// Progressive-bias heuristic in [0, 1] for that player.
    prior: f32,
    /// Its share of its parent's policy (PUCT selection).
    policy: f32,
    /// Implicit minimax value in [0, 1] for that player: its evaluation, then the minimax
    /// of its children's.
    minimax: f32,
    proven: i8,
}

impl<M> Node<M> {
    /// A new leaf, its minimax value its prior.
    fn leaf(mv: Option<M>, parent: u32, prior: f32) -> Self {
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

/// The MCTS player.
pub(crate) struct Mcts<P: Heuristics> {
    config: MctsConfig<P::Weights>,
    rng: Rng,
    tree: Vec<Node<P::Move>>,
    /// A node's moves while it is expanded (kept to reuse its room).
    moves: Vec<P::Move>,
    /// The root of the last search, to find its subtree in the next one.
    last_root: Option<P>,
    /// Each node's index in the kept subtree while the tree is compacted (`NOT_KEPT` for
    /// the others); at most one entry per node.
    new_index: Vec<u32>,
}

/// Marks a node [`Mcts::keep_subtree`] drops, and one it has not decided yet.
const NOT_KEPT: u32 = u32::MAX;
const UNDECIDED: u32 = u32::MAX - 1;

/// The parent of a node left in the tree by [`Mcts::widen_root`] when it copied the node
/// to the root's new children: no longer anyone's child.
const DETACHED: u32 = u32::MAX;

/// How many plies back the last search's root is looked for: the player's own move and the
/// reply, or a few more when the same player moves for both sides.
const REUSE_PLIES: usize = 4;

impl<P: Heuristics> Mcts<P> {
    pub(crate) fn new(config: MctsConfig<P::Weights>) -> Self {
        Mcts {
            rng: Rng::new(config.seed),
            config,
            tree: Vec::new(),
            moves: Vec::new(),
            last_root: None,
            new_index: Vec::new(),
        }
    }

    /// How many nodes fit in `bytes`: each costs its node and its entry in `new_index`.
    pub(crate) fn nodes_in(bytes: usize) -> usize {
        bytes / (std::mem::size_of::<Node<P::Move>>() + std::mem::size_of::<u32>())
    }

    /// Makes the subtree of the current position the tree when the last search's root is
    /// a few plies back in `game` and its moves since lead to an expanded node; else starts
    /// a new tree. In a narrow tree, the kept root is widened to every move.
    fn start_tree(&mut self, game: &Game<P>) {
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
    fn child_index(&self, node: usize, mv: P::Move) -> Option<usize> {
        let n = self.tree.get(node)?;
        (n.first_child as usize..(n.first_child + n.child_count) as usize)
            .find(|&c| self.tree[c].mv == Some(mv))
    }

    /// Compacts the tree in place to the subtree of `root`, which becomes node 0. Kept
    /// nodes keep their order, so each moves down (or stays) and children stay contiguous.
    /// No memory beyond `new_index`: a node is kept when its chain of parents reaches
    /// `root`, and each chain is walked once, up to the first node already decided.
    fn keep_subtree(&mut self, root: usize) {
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
    fn widen_root(&mut self, position: &P) {
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

    /// With PUCT, gives the children from `first` on (the tree's last nodes) their policy:
    /// the softmax of their evaluations `values` (for the mover) at the temperature.
    fn set_policy(&mut self, first: usize, values: impl Iterator<Item = i32> + Clone) {
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

    /// Win probability for the side to move from an evaluation.
    fn squash(eval: i32) -> f64 {
        1.0 / (1.0 + (-(eval as f64) / 400.0).exp())
    }

    /// Plays out from `position` and returns the result for its side to move.
    fn playout(&mut self, position: &P, rules: P::Rules) -> f64 {
        let me = position.turn();
        let mut position = *position;
        let limit = match self.config.playout {
            Playout::Random => 300,
            Playout::EvalAfter(n) => n,
        };
        for _ in 0..limit {
            if let Some(outcome) = position.outcome(rules) {
                return match outcome.winner {
                    None => 0.5,
                    Some(w) if w == me => 1.0,
                    Some(_) => 0.0,
                };
            }
            let Some(mv) = position.random_move(self.rng.next_u64()) else {
                return 0.5;
            };
            position.play_unchecked(mv);
        }
        if let Some(outcome) = position.outcome(rules) {
            return match outcome.winner {
                None => 0.5,
                Some(w) if w == me => 1.0,
                Some(_) => 0.0,
            };
        }
        match self.config.playout {
            Playout::Random => 0.5,
            Playout::EvalAfter(_) => {
                let p = Self::squash(position.evaluate(&self.config.weights));
                if position.turn() == me { p } else { 1.0 - p }
            }
        }
    }

    /// Whether expansions evaluate each child (its prior and first minimax value).
    fn has_priors(&self) -> bool {
        self.config.width > 0 || self.config.bias > 0.0 || self.config.minimax > 0.0
    }

    /// Whether leaves are expanded lazily: their evaluation is their first visit.
    fn lazy(&self) -> bool {
        self.config.expand_at > 1 && self.has_priors()
    }

    /// A new child of `parent`; with lazy expansion its evaluation counts as a visit.
    fn new_leaf(&self, mv: P::Move, parent: u32, prior: f32) -> Node<P::Move> {
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
    fn expand(&mut self, node: usize, position: &P) {
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
    fn select(&self, node: usize) -> usize {
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
    fn back_up_minimax(&mut self, node: usize) {
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
    fn prove(&mut self, node: usize) {
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

    /// One iteration: select, expand, play out, back up. Returns the depth reached.
    fn iterate(&mut self, root: &P, rules: P::Rules, depth_limit: u32) -> u32 {
        let mut node = 0;
        let mut position = *root;
        let mut depth = 0;
        while self.tree[node].child_count > 0 && self.tree[node].proven == UNKNOWN {
            node = self.select(node);
            position.play_unchecked(self.tree[node].mv.expect("children carry moves"));
            depth += 1;
        }
        // The result for the player who moved into `node`.
        let result = if self.tree[node].proven != UNKNOWN {
            if self.tree[node].proven == PROVEN_WIN {
                1.0
            } else {
                0.0
            }
        } else if let Some(outcome) = position.outcome(rules) {
            let mover = position.turn().opponent();
            match outcome.winner {
                None => 0.5,
                Some(w) => {
                    if self.config.solver {
                        self.tree[node].proven = if w == mover { PROVEN_WIN } else { PROVEN_LOSS };
                    }
                    if w == mover { 1.0 } else { 0.0 }
                }
            }
        } else {
            let n = &self.tree[node];
            let lazy = node != 0 && self.lazy() && n.visits + 1 < self.config.expand_at;
            if depth < depth_limit && !lazy {
                self.expand(node, &position);
                if self.config.minimax > 0.0 || self.config.width > 0 {
                    self.back_up_minimax(node);
                }
            }
            if lazy || self.config.width > 0 && self.tree[node].child_count > 0 {
                self.tree[node].minimax as f64
            } else {
                1.0 - self.playout(&position, rules)
            }
        };
        // Back up, flipping the point of view at each level.
        let mut value = result;
        let mut current = node;
        loop {
            let n = &mut self.tree[current];
            n.visits += 1;
            n.value += value;
            if current == 0 {
                break;
            }
            current = n.parent as usize;
            value = 1.0 - value;
            if self.config.solver {
                self.prove(current);
            }
            if self.config.minimax > 0.0 {
                self.back_up_minimax(current);
            }
        }
        depth
    }

    /// The root child to play: a proven win, else the most visited not proven lost.
    fn best_child(&self) -> usize {
        let root = &self.tree[0];
        let range = root.first_child as usize..(root.first_child + root.child_count) as usize;
        if let Some(c) = range.clone().find(|&c| self.tree[c].proven == PROVEN_WIN) {
            return c;
        }
        range
            .clone()
            .filter(|&c| self.tree[c].proven != PROVEN_LOSS)
            .max_by_key(|&c| self.tree[c].visits)
            .unwrap_or_else(|| {
                range
                    .clone()
                    .max_by_key(|&c| self.tree[c].visits)
                    .unwrap_or(range.start)
            })
    }

    fn info(
        &self,
        iterations: u64,
        depth_sum: u64,
        seldepth: u32,
        started: Instant,
    ) -> SearchInfo<P::Move> {
        let mut pv = Vec::new();
        let mut node = 0;
        while self.tree[node].child_count > 0 {
            let n = &self.tree[node];
            let range = n.first_child as usize..(n.first_child + n.child_count) as usize;
            let Some(c) = (if node == 0 {
                Some(self.best_child())
            } else {
                range.max_by_key(|&c| self.tree[c].visits)
            }) else {
                break;
            };
            if self.tree[c].visits == 0 {
                break;
            }
            pv.push(self.tree[c].mv.expect("children carry moves"));
            node = c;
        }
        let best = self.best_child();
        let child = &self.tree[best];
        let score = match child.proven {
            PROVEN_WIN => Score::Win(1),
            PROVEN_LOSS => Score::Loss(2),
            _ => {
                let p = (child.value / child.visits.max(1) as f64).clamp(1e-6, 1.0 - 1e-6);
                Score::Cp((-400.0 * (1.0 / p - 1.0).ln()).round() as i32)
            }
        };
        SearchInfo {
            depth: (depth_sum / iterations.max(1)) as u32,
            seldepth,
            score: Some(score),
            nodes: iterations,
            time: started.elapsed(),
            pv,
        }
    }
}

impl<P: Heuristics> Player<P> for Mcts<P> {
    fn new_game(&mut self, game_seed: u64) {
        self.rng = Rng::new(crate::mix_seed(self.config.seed, game_seed));
        self.last_root = None;
    }

    fn memory(&self) -> usize {
        self.tree.capacity() * std::mem::size_of::<Node<P::Move>>()
            + self.new_index.capacity() * std::mem::size_of::<u32>()
            + self.moves.capacity() * std::mem::size_of::<P::Move>()
    }

    fn choose(
        &mut self,
        game: &Game<P>,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo<P::Move>),
    ) -> SearchResult<P::Move> {
        let limits = combine_limits(limits, &self.config.limits);
        let started = Instant::now();
        let time = budget(&limits);
        let root = *game.position();
        let rules = game.rules();
        // The whole tree's room at once (address space only until used), and never more:
        // growing it by doubling would copy it, a pause of up to half a second.
        let room = (self.config.max_nodes).max(1 + P::start().legal_moves().len());
        self.tree.reserve(room.saturating_sub(self.tree.len()));
        self.start_tree(game);
        self.last_root = Some(root);
        let iterations = limits.nodes.unwrap_or(
            if limits.is_infinite() || limits.nodes.is_none() && time.is_none() {
                10_000
            } else {
                u64::MAX
            },
        );
        let depth_limit = limits.depth.unwrap_or(u32::MAX);
        let (mut depth_sum, mut seldepth, mut done) = (0u64, 0u32, 0u64);
        let mut next_report = Instant::now() + Duration::from_millis(500);
        while done < iterations && self.tree[0].proven == UNKNOWN {
            let depth = self.iterate(&root, rules, depth_limit);
            depth_sum += depth as u64;
            seldepth = seldepth.max(depth);
            done += 1;
            // The clock after every iteration: one can take a millisecond (an Amazons
            // expansion), and a reading costs tens of nanoseconds.
            let now = Instant::now();
            if stop.load(Ordering::Relaxed) || time.is_some_and(|b| now - started >= b.soft) {
                break;
            }
            if now >= next_report {
                on_info(&self.info(done, depth_sum, seldepth, started));
                next_report += Duration::from_millis(500);
            }
        }
        let info = self.info(done, depth_sum, seldepth, started);
        on_info(&info);
        let mv = self.tree[self.best_child()]
            .mv
            .expect("the root has children");
        SearchResult { mv, info }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Amazons, Loa, Position};

    fn amazons_mcts(width: usize, max_nodes: usize) -> Mcts<Amazons> {
        mcts(width, max_nodes)
    }

    fn mcts<P: Heuristics>(width: usize, max_nodes: usize) -> Mcts<P> {
        Mcts::new(MctsConfig {
            weights: Default::default(),
            limits: Limits::default(),
            exploration: 0.7,
            playout: Playout::EvalAfter(4),
            bias: 0.0,
            minimax: 0.0,
            solver: true,
            width,
            expand_at: 1,
            puct: 0.0,
            temperature: 100.0,
            seed: 1,
            max_nodes,
        })
    }

    #[test]
    fn the_tree_stays_within_its_memory_and_is_never_moved() {
        let max_nodes = 20_000;
        let mut mcts = amazons_mcts(0, max_nodes);
        // Each Amazons expansion adds up to ~2,000 nodes: the bound is hit at once.
        let limits = Limits {
            nodes: Some(200),
            ..Limits::default()
        };
        let mut game = Game::new(Amazons::start(), Default::default());
        let mut room = None;
        for _ in 0..4 {
            let chosen = mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
            assert!(mcts.tree.len() <= max_nodes, "{} nodes", mcts.tree.len());
            assert!(mcts.tree.len() > max_nodes / 2, "the tree was used");
            // Its room is taken once: growing it would copy it (a long pause).
            let now = (mcts.tree.as_ptr(), mcts.tree.capacity());
            assert_eq!(*room.get_or_insert(now), now);
            game.play(chosen.mv).unwrap();
        }
    }

    #[test]
    fn a_narrow_tree_holds_the_best_moves_below_the_root_and_widens_with_visits() {
        let width = 4;
        let mut mcts = amazons_mcts(width, 1 << 20);
        let start = Amazons::start();
        let limits = Limits {
            nodes: Some(400),
            ..Limits::default()
        };
        let game = Game::new(start, Default::default());
        mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        let w = Default::default();
        let children =
            |n: &Node<_>| n.first_child as usize..(n.first_child + n.child_count) as usize;
        // The root holds every move, best first; only the first width + sqrt(visits) are tried.
        let root = &mcts.tree[0];
        assert_eq!(root.child_count as usize, start.legal_moves().len());
        let tried = children(root).filter(|&c| mcts.tree[c].visits > 0).count();
        let widest = width + (root.visits as f64).sqrt() as usize;
        assert!(
            tried > width && tried <= widest,
            "{tried} tried, at most {widest}"
        );
        let mut expanded = 0;
        for (i, node) in mcts.tree.iter().enumerate().skip(1) {
            if node.child_count == 0 {
                continue;
            }
            expanded += 1;
            // Below the root: the best `width` by evaluation, best first.
            let mut position = start;
            let mut path = vec![];
            let mut at = i;
            while at != 0 {
                path.push(mcts.tree[at].mv.unwrap());
                at = mcts.tree[at].parent as usize;
            }
            for &mv in path.iter().rev() {
                position.play_unchecked(mv);
            }
            let (best, _) = position.best_moves(&w, width);
            let kept: Vec<_> = children(node).map(|c| mcts.tree[c].mv.unwrap()).collect();
            let expected: Vec<_> = best.iter().map(|&(_, mv)| mv).collect();
            assert_eq!(kept, expected, "at {position}");
        }
        assert!(expanded > 20, "{expanded} nodes expanded below the root");
    }

    #[test]
    fn a_leaf_is_expanded_on_its_expand_at_visit_and_valued_by_its_evaluation_before() {
        for (width, minimax) in [(4, 0.8), (0, 0.8)] {
            let mut mcts = mcts::<Loa>(width, 1 << 20);
            mcts.config.minimax = minimax;
            mcts.config.expand_at = 3;
            let limits = Limits {
                nodes: Some(600),
                ..Limits::default()
            };
            let game = Game::new(Loa::start(), Default::default());
            mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
            // Each child's first visit, its evaluation, took no iteration.
            let root = &mcts.tree[0];
            let children =
                root.first_child as usize..(root.first_child + root.child_count) as usize;
            let visits: u32 = children.map(|c| mcts.tree[c].visits).sum();
            assert_eq!((root.visits, visits), (600, 600 + root.child_count));
            let (mut expanded, mut lazy) = (0, 0);
            for node in mcts.tree.iter().skip(1) {
                if node.child_count > 0 {
                    expanded += 1;
                    assert!(node.visits >= 3, "expanded after {} visits", node.visits);
                } else if node.visits > 0 && node.proven == UNKNOWN {
                    lazy += 1;
                    assert!(node.visits < 3, "a leaf visited {} times", node.visits);
                    // Its only value is its evaluation, as often as it was visited.
                    let mean = node.value / node.visits as f64;
                    assert!(
                        (mean - node.prior as f64).abs() < 1e-6,
                        "{mean} {}",
                        node.prior
                    );
                }
            }
            assert!(
                expanded > 10 && lazy > 10,
                "{expanded} expanded, {lazy} lazy"
            );
        }
    }

    /// The most plies from the root to a node of the tree.
    fn tree_depth<P: Heuristics>(mcts: &Mcts<P>) -> usize {
        let mut depth = vec![0usize; mcts.tree.len()];
        for i in 1..mcts.tree.len() {
            // Parents come before their children.
            depth[i] = depth[mcts.tree[i].parent as usize] + 1;
        }
        depth.into_iter().max().unwrap_or(0)
    }

    #[test]
    fn puct_gives_children_a_policy_by_their_evaluations_and_searches_deeper_along_it() {
        let game = Game::new(Loa::start(), Default::default());
        let mut depths = vec![];
        for puct in [0.0, 1.0] {
            let mut mcts = mcts::<Loa>(0, 1 << 20);
            mcts.config.minimax = 0.8;
            mcts.config.expand_at = 3;
            mcts.config.puct = puct;
            search(&mut mcts, &game, 10_000);
            depths.push(tree_depth(&mcts));
            if puct == 0.0 {
                continue;
            }
            let mut expanded = 0;
            for node in mcts.tree.iter().filter(|n| n.child_count > 0) {
                expanded += 1;
                let children = &mcts.tree
                    [node.first_child as usize..(node.first_child + node.child_count) as usize];
                let sum: f32 = children.iter().map(|c| c.policy).sum();
                assert!((sum - 1.0).abs() < 1e-4, "policies sum to {sum}");
                // Children come best first, so their policies do not grow; a better
                // evaluation has the larger share.
                for pair in children.windows(2) {
                    assert!(pair[0].policy >= pair[1].policy, "{pair:?}");
                    if pair[0].prior > pair[1].prior + 1e-3 {
                        assert!(pair[0].policy > pair[1].policy, "{pair:?}");
                    }
                }
            }
            assert!(expanded > 50, "{expanded} nodes expanded");
        }
        assert!(depths[1] > depths[0], "tree depths UCT, PUCT: {depths:?}");
    }

    impl<P: Heuristics> Mcts<P> {
        fn child(&self, node: usize, mv: P::Move) -> Option<&Node<P::Move>> {
            Some(&self.tree[self.child_index(node, mv)?])
        }
    }

    /// Searches `game` for `iterations` iterations.
    fn search<P: Heuristics>(
        mcts: &mut Mcts<P>,
        game: &Game<P>,
        iterations: u64,
    ) -> SearchResult<P::Move> {
        let limits = Limits {
            nodes: Some(iterations),
            ..Limits::default()
        };
        mcts.choose(game, &limits, &AtomicBool::new(false), &mut |_| {})
    }

    /// The tree reachable from the root is well linked: each child names its parent, its
    /// move is legal where it is and held once, a node's visits cover its children's, and
    /// the root holds every move. Returns how many nodes it reaches.
    fn assert_linked<P: Heuristics>(mcts: &Mcts<P>, root: P) -> usize {
        let mut stack = vec![(0usize, root)];
        let mut reached = 0;
        while let Some((node, position)) = stack.pop() {
            reached += 1;
            let n = &mcts.tree[node];
            let children = n.first_child as usize..(n.first_child + n.child_count) as usize;
            let mut held = std::collections::HashSet::new();
            let mut visits = 0;
            for c in children {
                let child = &mcts.tree[c];
                assert_eq!(child.parent as usize, node);
                let mv = child.mv.unwrap();
                assert!(position.is_legal(mv), "{mv} at {position}");
                assert!(held.insert(mv), "{mv} twice at {position}");
                visits += child.visits;
                let mut next = position;
                next.play_unchecked(mv);
                stack.push((c, next));
            }
            assert!(n.visits >= visits, "{} visits, children {visits}", n.visits);
            if node == 0 {
                assert_eq!(held.len(), position.legal_moves().len(), "at the root");
            }
        }
        reached
    }

    /// Searches, plays the move chosen and the reply searched most, and searches once more:
    /// the new tree is the reply's subtree, with every move at the root.
    fn keeps_the_subtree_of_the_reply<P: Heuristics>(width: usize, searched: u64) {
        let mut mcts = mcts::<P>(width, 1 << 20);
        let mut game = Game::new(P::start(), Default::default());
        let chosen = search(&mut mcts, &game, searched);
        let ours = mcts.child(0, chosen.mv).unwrap();
        let reply = (ours.first_child..ours.first_child + ours.child_count)
            .map(|c| &mcts.tree[c as usize])
            .max_by_key(|c| c.visits)
            .unwrap();
        let (reply_move, reply_visits) = (reply.mv.unwrap(), reply.visits);
        assert!(reply_visits > 1, "{reply_visits} visits");
        game.play(chosen.mv).unwrap();
        game.play(reply_move).unwrap();
        search(&mut mcts, &game, 1);
        assert_eq!(mcts.tree[0].visits, reply_visits + 1);
        let legal = game.position().legal_moves().len();
        assert_eq!(mcts.tree[0].child_count as usize, legal);
        assert_linked(&mcts, *game.position());
        // A new game starts a new tree, even from the same position.
        mcts.new_game(2);
        search(&mut mcts, &game, 1);
        assert_eq!(mcts.tree[0].visits, 1);
        assert_eq!(mcts.tree[0].first_child, 1);
    }

    #[test]
    fn the_next_search_starts_from_the_subtree_of_the_position_reached() {
        keeps_the_subtree_of_the_reply::<Loa>(0, 5_000);
        keeps_the_subtree_of_the_reply::<Amazons>(4, 600);
    }

    #[test]
    fn a_tree_kept_move_after_move_stays_linked_and_unrelated_positions_start_afresh() {
        // One player for both sides keeps its tree each ply; a widened root puts children
        // after their own children, which the next compaction must follow.
        let mut mcts = amazons_mcts(4, 1 << 20);
        let mut game = Game::new(Amazons::start(), Default::default());
        let mut kept = 0;
        let mut visits_before = 0;
        for _ in 0..8 {
            let chosen = search(&mut mcts, &game, 150);
            assert_linked(&mcts, *game.position());
            assert_eq!(mcts.tree[0].visits, visits_before + 150);
            kept += usize::from(visits_before > 0);
            // The subtree of the move played is kept when it was expanded.
            let played = mcts.child(0, chosen.mv).unwrap();
            visits_before = if played.child_count > 0 {
                played.visits
            } else {
                0
            };
            game.play(chosen.mv).unwrap();
        }
        assert!(kept >= 6, "the tree was kept in {kept} of 8 searches");
        // The same position again keeps the whole tree, and drops the nodes left behind
        // when the root was widened.
        search(&mut mcts, &game, 50);
        let visits = mcts.tree[0].visits;
        search(&mut mcts, &game, 50);
        assert_eq!(mcts.tree[0].visits, visits + 50);
        assert_eq!(assert_linked(&mcts, *game.position()), mcts.tree.len());
        // A game that did not pass through the last root: a new tree.
        let mut other = Game::new(Amazons::start(), Default::default());
        let first = other.legal_moves()[7];
        other.play(first).unwrap();
        search(&mut mcts, &other, 10);
        assert_eq!(mcts.tree[0].visits, 10);
        assert_linked(&mcts, *other.position());
    }
}
