//! Monte-Carlo tree search: UCT, or PUCT with the evaluation's softmax as its policy, on
//! an arena tree (nodes addressed by index), MCTS-Solver backups of proven wins and
//! losses, random or evaluation-cutoff playouts, optional progressive bias and implicit
//! minimax backups from the evaluation, and optionally a narrow tree: each node keeps its
//! best moves by evaluation and widens with visits. The subtree of the position reached
//! keeps its statistics from one move to the next.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

mod params;
mod select;
#[cfg(test)]
mod tests;
mod tree;

pub(crate) use params::{DEFAULT_TREE_MIB, MctsConfig, Playout};
use tree::{Node, PROVEN_LOSS, PROVEN_WIN, UNKNOWN};

use tourney_rules::Game;

use crate::eval::Heuristics;
use crate::limits::{Limits, budget};
use crate::{Player, Rng, Score, SearchInfo, SearchResult, combine_limits};

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
