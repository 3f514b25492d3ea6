//! The openings the built-in players make when asked (`genfens N seed S`, the protocol's
//! command for data generation): random plies from the game's start, the same for the
//! same seed.

use tourney_rules::{GameKind, Position};

use crate::rng::{Rng, mix_seed};

/// The most positions one `genfens` gives.
pub const MAX_GENFENS: u32 = 1024;

/// Random plies played from the start: LOA's few moves need more to spread than Amazons'
/// two thousand a turn.
pub fn plies_of(game: GameKind) -> u32 {
    match game {
        GameKind::Loa => 8,
        GameKind::Amazons => 4,
    }
}

/// `n` (at most [`MAX_GENFENS`]) positions of random plies from `start` (the start of
/// the game's rules: Amazons' board size), none of them decided: the `i`th from `seed`
/// and `i` alone.
pub fn genfens<P: Position>(start: P, n: u32, seed: u64) -> Vec<P> {
    let plies = plies_of(P::GAME);
    (0..u64::from(n.min(MAX_GENFENS)))
        .filter_map(|i| {
            // A walk that ends the game is tried again on the next stream (rarely needed).
            (0..16).find_map(|attempt| {
                let mut rng = Rng::new(mix_seed(seed, i * 16 + attempt));
                let mut position = start;
                for _ in 0..plies {
                    let mv = position.random_move(rng.next_u64())?;
                    position.play_unchecked(mv);
                }
                (!position.is_game_over()).then_some(position)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Amazons, Loa};

    #[test]
    fn the_same_seed_gives_the_same_undecided_openings() {
        let a = genfens(Loa::start(), 20, 5);
        assert_eq!(a.len(), 20);
        assert_eq!(a, genfens(Loa::start(), 20, 5));
        assert_ne!(a, genfens(Loa::start(), 20, 6));
        assert!(a.iter().all(|p| !p.is_game_over() && *p != Loa::start()));
        // The first of more is the first of fewer.
        assert_eq!(genfens(Loa::start(), 3, 5)[..], a[..3]);
        let distinct: std::collections::HashSet<_> = a.iter().collect();
        assert!(distinct.len() > 15, "{} distinct", distinct.len());
        assert_eq!(genfens(Amazons::start(), 2, 1).len(), 2);
        // On the board of the rules.
        let small = Amazons::start_sized(8);
        assert!(genfens(small, 4, 1).iter().all(|p| p.size() == 8));
        assert_eq!(genfens(Loa::start(), 5000, 1).len(), MAX_GENFENS as usize);
    }
}
