//! Built-in players for Lines of Action and Amazons.
//!
//! Pure and deterministic: no async runtime, network or storage. A search runs on the
//! caller's thread and polls an [`AtomicBool`] stop flag; randomness comes from a seeded
//! generator, so under a `nodes` or `depth` limit the same position and seed give the same
//! move.
//!
//! - [`random`](spec): uniform over the legal moves.
//! - `ab`: alpha-beta with iterative deepening, principal-variation search, a transposition
//!   table, TT-move/capture/killer/history ordering; evaluation per game ([`Heuristics`]).
//! - `mcts`: PUCT (its policy the evaluation's softmax) or UCT on an arena tree with
//!   MCTS-Solver backups, implicit minimax backups, lazy expansion, random or
//!   evaluation-cutoff playouts and optional progressive bias.
//!
//! Players are named by spec strings such as `ab:depth=6`, `mcts:c=0.7,playout=eval4` or
//! `random:seed=7`; see [`PlayerSpec`].
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use tourney_ai::{Limits, PlayerSpec};
//! use tourney_rules::{Game, Loa, Position};
//!
//! let spec: PlayerSpec = "ab:depth=3".parse().unwrap();
//! let mut player = spec.build::<Loa>().unwrap();
//! let game = Game::new(Loa::start(), Default::default());
//! let result = player.choose(&game, &Limits::default(), &AtomicBool::new(false), &mut |_| {});
//! assert!(Loa::start().is_legal(result.mv));
//! ```
#![deny(missing_docs)]

mod alphabeta;
pub mod bench;
pub mod eval;
pub mod genfens;
pub mod limits;
mod mcts;
mod random;
mod rng;
mod spec;
pub mod speed;

use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub use eval::Heuristics;
pub use limits::{Budget, Clock, Limits, budget};
pub use rng::{Rng, mix_seed};
pub use spec::{Kind, PlayerSpec, SpecError};
use tourney_rules::{Game, Position};

/// A score from the point of view of the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Score {
    /// Heuristic advantage in hundredths of a unit (100 ≈ a small material edge).
    Cp(i32),
    /// A forced win in this many plies.
    Win(u32),
    /// A forced loss in this many plies.
    Loss(u32),
}

impl std::fmt::Display for Score {
    /// As the engine protocol writes it: `cp 35`, `win 7`, `loss 4`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Win(plies) => write!(f, "win {plies}"),
            Score::Loss(plies) => write!(f, "loss {plies}"),
        }
    }
}

/// Progress of a search, reported as it goes (the protocol's `info` line).
#[derive(Debug, Clone, PartialEq)]
pub struct SearchInfo<M> {
    /// Completed depth (alpha-beta) or average tree depth (MCTS).
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Evaluation of the best move.
    pub score: Option<Score>,
    /// Nodes searched (alpha-beta) or playouts (MCTS).
    pub nodes: u64,
    /// Time spent.
    pub time: Duration,
    /// Principal variation, best move first.
    pub pv: Vec<M>,
}

impl<M> SearchInfo<M> {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        let secs = self.time.as_secs_f64();
        if secs > 0.0 {
            (self.nodes as f64 / secs) as u64
        } else {
            0
        }
    }
}

/// The move a player chose, with what its search knew.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchResult<M> {
    /// The chosen move.
    pub mv: M,
    /// The last search state.
    pub info: SearchInfo<M>,
}

/// A player of one game.
pub trait Player<P: Position>: Send {
    /// Called before a new game: forget what was learnt about the last one. A seeded player
    /// draws the game's random numbers from its own seed mixed with `game_seed` ([`mix_seed`];
    /// 0 keeps its own seed), so that the games of a tournament differ and each replays.
    fn new_game(&mut self, game_seed: u64) {
        let _ = game_seed;
    }

    /// Bytes the player holds between moves and games (its transposition table or tree),
    /// for whoever keeps idle players to bound what they hold.
    fn memory(&self) -> usize {
        0
    }

    /// Chooses a move in the current position of `game`, which must not be over.
    ///
    /// Stops when `limits` (combined with the player's own limits) are reached or `stop`
    /// becomes true; `on_info` hears about progress.
    fn choose(
        &mut self,
        game: &Game<P>,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo<P::Move>),
    ) -> SearchResult<P::Move>;
}

/// The tighter of two optional limits.
fn tighter<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Limits given for one move combined with a player's own: each bound is the tighter.
pub fn combine_limits(given: &Limits, own: &Limits) -> Limits {
    Limits {
        nodes: tighter(given.nodes, own.nodes),
        depth: tighter(given.depth, own.depth),
        movetime: tighter(given.movetime, own.movetime),
        clock: given.clock.or(own.clock),
    }
}
