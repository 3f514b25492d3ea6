//! The random player: uniform over the legal moves, from a seeded generator.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tourney_rules::{Game, Position};

use crate::{Limits, Player, Rng, SearchInfo, SearchResult};

/// Plays uniformly random legal moves; the seed fixes the sequence.
pub(crate) struct RandomPlayer {
    seed: u64,
    rng: Rng,
}

impl RandomPlayer {
    pub(crate) fn new(seed: u64) -> Self {
        RandomPlayer {
            seed,
            rng: Rng::new(seed),
        }
    }
}

impl<P: Position> Player<P> for RandomPlayer {
    fn new_game(&mut self, game_seed: u64) {
        self.rng = Rng::new(crate::mix_seed(self.seed, game_seed));
    }

    fn choose(
        &mut self,
        game: &Game<P>,
        _: &Limits,
        _: &AtomicBool,
        _: &mut dyn FnMut(&SearchInfo<P::Move>),
    ) -> SearchResult<P::Move> {
        let started = Instant::now();
        let mv = game
            .position()
            .random_move(self.rng.next_u64())
            .expect("the game is not over");
        SearchResult {
            mv,
            info: SearchInfo {
                depth: 0,
                seldepth: 0,
                score: None,
                nodes: 1,
                time: started.elapsed(),
                pv: vec![mv],
            },
        }
    }
}
