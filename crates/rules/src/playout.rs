//! Uniformly random games.

use crate::game::Game;
use crate::position::Position;

/// Plays a game from `start` under `rules` with moves drawn uniformly from the legal moves,
/// taking 64 random bits per move from `random`, and returns the finished game.
///
/// Every game ends: LOA by connection or threefold repetition (random play reaches one of
/// them with probability 1), Amazons within 92 turns.
///
/// ```
/// use tourney_rules::{Amazons, Position, random_playout};
/// let mut state = 7u64;
/// let mut rng = move || { state ^= state << 13; state ^= state >> 7; state ^= state << 17; state };
/// let game = random_playout(Amazons::start(), Default::default(), &mut rng);
/// assert!(game.outcome().unwrap().winner.is_some());
/// assert!(game.ply() <= 92);
/// ```
pub fn random_playout<P: Position>(
    start: P,
    rules: P::Rules,
    mut random: impl FnMut() -> u64,
) -> Game<P> {
    let mut game = Game::new(start, rules);
    while game.outcome().is_none() {
        let mv = game
            .position()
            .random_move(random())
            .expect("an undecided position has a move");
        game.play_unchecked(mv);
    }
    game
}
