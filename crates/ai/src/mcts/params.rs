//! The parameters of the MCTS player and their per-game defaults.

use tourney_rules::GameKind;

use crate::limits::Limits;

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

/// The memory of a tree unless `mem` says otherwise, MiB.
pub(crate) const DEFAULT_TREE_MIB: usize = 256;

impl<W: Default> MctsConfig<W> {
    /// The defaults for `game`, with default weights, no limits, seed 1 and a tree of
    /// `max_nodes`; each default was measured (experiments/strength/README.md):
    /// - Amazons: a narrow tree (the best 15 moves by evaluation below the root, found in
    ///   two stages) with implicit minimax backups: 32 % against `ab` at 200 ms a move,
    ///   where the full-width tree scored 6-23 %; LOA: full width.
    /// - LOA: the evaluation at each leaf with implicit minimax backups (scored 296-0
    ///   against random playouts at 50 ms a move); Amazons: 4 random moves first.
    /// - Both games: lazy expansion, a leaf expanded on its third visit (against expanding
    ///   at once, 200 ms a move: LOA +45 ± 29, Amazons +63 ± 36).
    /// - Both games: PUCT, its policy the softmax of the evaluations at a temperature for
    ///   each game's scale (against `ab` at 200 ms a move, which UCT trailed by ~80 Elo in
    ///   Amazons and more in LOA: LOA 41-6-33, Amazons 26-0-14).
    pub(crate) fn for_game(game: GameKind, max_nodes: usize) -> Self {
        let (exploration, width, playout, temperature) = match game {
            GameKind::Loa => (0.7, 0, Playout::EvalAfter(0), 100.0),
            GameKind::Amazons => (0.5, 15, Playout::EvalAfter(4), 300.0),
        };
        MctsConfig {
            weights: W::default(),
            limits: Limits::default(),
            exploration,
            playout,
            bias: 0.0,
            minimax: 0.8,
            solver: true,
            width,
            expand_at: 3,
            puct: 0.5,
            temperature,
            seed: 1,
            max_nodes,
        }
    }
}
