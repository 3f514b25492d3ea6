//! Idle players kept between pairs for whichever game thread plays next: building a
//! built-in player allocates (and the kernel zeroes) its transposition table, and starting
//! an engine process costs more than a fast game.
//!
//! The pool is bounded whatever the tournaments ask for: an SPSA run names a new player
//! (its perturbed weights) for every pair, so keeping each would grow without end. Past
//! any of its [`Bounds`] the least recently used players go.

use std::any::Any;

/// A kept player: a built-in one or an outside engine with its process.
pub(crate) type Player = Box<dyn Any + Send>;

/// What the pool holds at most.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    /// Players of every kind.
    pub(crate) players: usize,
    /// Outside engines (each a live process).
    pub(crate) engines: usize,
    /// Bytes of the built-in players' tables and trees.
    pub(crate) bytes: usize,
}

/// The worker's bounds: 256 players, 64 engine processes, 256 MiB of tables and trees
/// (sixteen `ab` players with the default table).
pub(crate) const BOUNDS: Bounds = Bounds {
    players: 256,
    engines: 64,
    bytes: 256 << 20,
};

struct Kept {
    key: String,
    player: Player,
    /// A built-in player's bytes; `None` for an outside engine.
    bytes: Option<usize>,
}

/// Idle players by key, least recently kept first.
pub(crate) struct Pool {
    kept: Vec<Kept>,
    bounds: Bounds,
}

impl Pool {
    /// An empty pool within `bounds`.
    pub(crate) const fn new(bounds: Bounds) -> Self {
        Pool {
            kept: Vec::new(),
            bounds,
        }
    }

    /// The player last kept under `key`, taken out of the pool.
    pub(crate) fn take(&mut self, key: &str) -> Option<Player> {
        let i = self.kept.iter().rposition(|k| k.key == key)?;
        Some(self.kept.remove(i).player)
    }

    /// Keeps a built-in player holding `bytes`; returns the players that no longer fit
    /// (the least recently kept, or this one), for the caller to drop.
    pub(crate) fn keep_built_in(
        &mut self,
        key: String,
        player: Player,
        bytes: usize,
    ) -> Vec<Player> {
        self.keep(key, player, Some(bytes))
    }

    /// Keeps an outside engine; returns the players that no longer fit.
    pub(crate) fn keep_engine(&mut self, key: String, engine: Player) -> Vec<Player> {
        self.keep(key, engine, None)
    }

    fn keep(&mut self, key: String, player: Player, bytes: Option<usize>) -> Vec<Player> {
        self.kept.push(Kept { key, player, bytes });
        let mut evicted = Vec::new();
        while let Some(i) = self.first_over() {
            evicted.push(self.kept.remove(i).player);
        }
        evicted
    }

    /// The least recently kept player of a kind over its bound, if any.
    fn first_over(&self) -> Option<usize> {
        let engines = self.kept.iter().filter(|k| k.bytes.is_none()).count();
        let bytes: usize = self.kept.iter().filter_map(|k| k.bytes).sum();
        if engines > self.bounds.engines {
            self.kept.iter().position(|k| k.bytes.is_none())
        } else if bytes > self.bounds.bytes {
            self.kept
                .iter()
                .position(|k| k.bytes.is_some_and(|b| b > 0))
        } else {
            (self.kept.len() > self.bounds.players).then_some(0)
        }
    }

    /// Takes every outside engine out of the pool.
    pub(crate) fn take_engines(&mut self) -> Vec<Player> {
        let (engines, rest) = std::mem::take(&mut self.kept)
            .into_iter()
            .partition(|k| k.bytes.is_none());
        self.kept = rest;
        engines.into_iter().map(|k| k.player).collect()
    }

    /// Players kept, and the bytes of the built-in ones.
    pub(crate) fn size(&self) -> (usize, usize) {
        let bytes = self.kept.iter().filter_map(|k| k.bytes).sum();
        (self.kept.len(), bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Bounds = Bounds {
        players: 6,
        engines: 2,
        bytes: 100,
    };

    fn id(player: &Player) -> u32 {
        *player.downcast_ref::<u32>().unwrap()
    }

    #[test]
    fn a_player_is_taken_back_by_its_key_the_last_kept_first() {
        let mut pool = Pool::new(SMALL);
        assert!(
            pool.keep_built_in("ab".into(), Box::new(1u32), 10)
                .is_empty()
        );
        assert!(
            pool.keep_built_in("mcts".into(), Box::new(2u32), 10)
                .is_empty()
        );
        assert!(
            pool.keep_built_in("ab".into(), Box::new(3u32), 10)
                .is_empty()
        );
        assert_eq!(pool.take("ab").map(|p| id(&p)), Some(3));
        assert_eq!(pool.take("ab").map(|p| id(&p)), Some(1));
        assert!(pool.take("ab").is_none());
        assert!(pool.take("random").is_none());
        assert_eq!(pool.size(), (1, 10));
    }

    #[test]
    fn a_new_player_for_every_pair_keeps_the_pool_within_its_bytes() {
        // As an SPSA run: each pair names new weights, so no key comes back.
        let mut pool = Pool::new(SMALL);
        let mut dropped = Vec::new();
        for i in 0..1000u32 {
            let evicted = pool.keep_built_in(format!("ab:king={i}"), Box::new(i), 30);
            dropped.extend(evicted.iter().map(id));
            let (players, bytes) = pool.size();
            assert!(
                bytes <= SMALL.bytes && players <= SMALL.players,
                "{players} {bytes}"
            );
        }
        // The least recently kept went first: the last three stay.
        assert_eq!(dropped, (0..997).collect::<Vec<_>>());
        assert_eq!(pool.take("ab:king=999").map(|p| id(&p)), Some(999));
        assert_eq!(pool.take("ab:king=996").map(|p| id(&p)), None);
    }

    #[test]
    fn a_player_larger_than_the_bound_is_not_kept() {
        let mut pool = Pool::new(SMALL);
        pool.keep_built_in("ab:tt=16".into(), Box::new(1u32), 40);
        let evicted = pool.keep_built_in("ab:tt=4096".into(), Box::new(2u32), 400);
        // It alone is over, so the small one goes first, then it.
        assert_eq!(evicted.iter().map(id).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(pool.size(), (0, 0));
    }

    #[test]
    fn players_without_memory_and_engines_are_bounded_by_count() {
        let mut pool = Pool::new(SMALL);
        for i in 0..20u32 {
            pool.keep_built_in(format!("random:seed={i}"), Box::new(i), 0);
            pool.keep_engine(format!("cmd:engine-{i}"), Box::new(100 + i));
            let engines = pool.kept.iter().filter(|k| k.bytes.is_none()).count();
            assert!(engines <= SMALL.engines);
            assert!(pool.size().0 <= SMALL.players);
        }
        // The engines kept are the last two; retiring takes exactly them.
        let mut engines: Vec<u32> = pool.take_engines().iter().map(id).collect();
        engines.sort_unstable();
        assert_eq!(engines, [118, 119]);
        assert!(pool.take_engines().is_empty());
        assert_eq!(pool.size().0, 4);
    }

    #[test]
    fn an_engine_over_its_bound_evicts_the_oldest_engine_not_a_built_in() {
        let mut pool = Pool::new(SMALL);
        pool.keep_engine("cmd:a".into(), Box::new(1u32));
        pool.keep_built_in("ab".into(), Box::new(2u32), 10);
        pool.keep_engine("cmd:b".into(), Box::new(3u32));
        let evicted = pool.keep_engine("cmd:c".into(), Box::new(4u32));
        assert_eq!(evicted.iter().map(id).collect::<Vec<_>>(), [1]);
        assert_eq!(pool.take("ab").map(|p| id(&p)), Some(2));
    }
}
