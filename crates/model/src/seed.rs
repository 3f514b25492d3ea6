//! Seeds derived from seeds: each game's from its tournament's, its pair and its game.

/// splitmix64 of `a` and `b`: seeds of pairs and games that are all different.
pub(crate) fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The seed of game `g` (0 or 1) of a pair seeded `pair_seed`. Never 0.
pub fn game_seed(pair_seed: u64, g: u64) -> u64 {
    mix(pair_seed, g.wrapping_add(1)).max(1)
}
