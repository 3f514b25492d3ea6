//! Property tests: the bitboard generators against the slow reference, legality of every
//! generated move, incremental Zobrist hashing, notation round trips, and random games.

use proptest::prelude::*;
use tourney_rules::amazons::AmazonsRules;
use tourney_rules::loa::LoaRules;
use tourney_rules::{Amazons, Color, EndReason, Loa, Position, random_playout};

use crate::reference::{amazons_moves, loa_moves};

/// A SplitMix64 stream from `seed`.
fn rng(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `count` distinct random squares out of `n`, as a bitmask.
fn random_squares(next: &mut impl FnMut() -> u64, n: u32, count: u32, taken: u128) -> u128 {
    let mut bb = 0u128;
    while bb.count_ones() < count {
        let s = (next() % u64::from(n)) as u32;
        if (taken | bb) & (1 << s) == 0 {
            bb |= 1 << s;
        }
    }
    bb
}

/// An arbitrary legal-looking LOA position (1..=12 pieces a side, anywhere).
fn arbitrary_loa(seed: u64) -> Loa {
    let mut next = rng(seed);
    let nb = 1 + (next() % 12) as u32;
    let nw = 1 + (next() % 12) as u32;
    let black = random_squares(&mut next, 64, nb, 0);
    let white = random_squares(&mut next, 64, nw, black);
    let turn = if next().is_multiple_of(2) {
        Color::Black
    } else {
        Color::White
    };
    Loa::from_bitboards(black as u64, white as u64, turn).unwrap()
}

/// An arbitrary Amazons position: four amazons a side and up to 60 arrows.
fn arbitrary_amazons(seed: u64) -> Amazons {
    let mut next = rng(seed);
    let black = random_squares(&mut next, 100, 4, 0);
    let white = random_squares(&mut next, 100, 4, black);
    let arrow_count = (next() % 61) as u32;
    let arrows = random_squares(&mut next, 100, arrow_count, black | white);
    let turn = if next().is_multiple_of(2) {
        Color::Black
    } else {
        Color::White
    };
    Amazons::from_bitboards(black, white, arrows, turn).unwrap()
}

/// The position after up to `plies` random moves from the start.
fn after_random_plies<P: Position>(seed: u64, plies: u32) -> P {
    let mut next = rng(seed);
    let mut position = P::start();
    for _ in 0..plies {
        match position.random_move(next()) {
            Some(mv) => position.play_unchecked(mv),
            None => break,
        }
    }
    position
}

fn sorted<P: Position>(position: &P) -> Vec<String> {
    let mut moves: Vec<String> = position
        .legal_moves()
        .iter()
        .map(ToString::to_string)
        .collect();
    moves.sort();
    moves
}

/// Every generated move is legal, plays, and survives notation; counting agrees with
/// listing; a random move is one of them.
fn check_moves_are_legal<P: Position>(position: &P, random: u64) {
    let moves = position.legal_moves();
    assert_eq!(moves.len() as u64, position.count_moves(), "{position}");
    for &mv in &moves {
        assert!(position.is_legal(mv), "{mv} in {position}");
        assert!(position.play(mv).is_ok());
        assert_eq!(
            position.parse_move(&mv.to_string()),
            Ok(mv),
            "{mv} in {position}"
        );
    }
    match position.random_move(random) {
        Some(mv) => assert!(moves.contains(&mv), "random {mv} in {position}"),
        None => assert!(moves.is_empty()),
    }
}

/// The hash kept incrementally through random plies equals the hash of the same position
/// built from scratch (via its position string).
fn check_incremental_zobrist<P: Position>(seed: u64, plies: u32) {
    let mut next = rng(seed);
    let mut position = P::start();
    for _ in 0..plies {
        let Some(mv) = position.random_move(next()) else {
            break;
        };
        position.play_unchecked(mv);
        let fresh: P = position.to_string().parse().unwrap();
        assert_eq!(fresh, position);
        assert_eq!(fresh.zobrist_hash(), position.zobrist_hash(), "{position}");
        // A null move is the same board with the other side to move, hash and all.
        let passed = position.pass_turn();
        let text = position.to_string();
        let (board, side) = text.rsplit_once(' ').unwrap();
        let other = if side == "b" { "w" } else { "b" };
        let flipped: P = format!("{board} {other}").parse().unwrap();
        assert_eq!(passed, flipped, "{position}");
        assert_eq!(passed.zobrist_hash(), flipped.zobrist_hash(), "{position}");
        assert_eq!(passed.pass_turn(), position);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn loa_bitboard_generator_equals_reference_on_arbitrary_positions(seed: u64) {
        let position = arbitrary_loa(seed);
        prop_assert_eq!(sorted(&position), loa_moves(&position), "{}", position);
    }

    #[test]
    fn loa_bitboard_generator_equals_reference_in_played_positions(seed: u64, plies in 0u32..200) {
        let position: Loa = after_random_plies(seed, plies);
        prop_assert_eq!(sorted(&position), loa_moves(&position), "{}", position);
    }

    #[test]
    fn amazons_bitboard_generator_equals_reference_on_arbitrary_positions(seed: u64) {
        let position = arbitrary_amazons(seed);
        prop_assert_eq!(sorted(&position), amazons_moves(&position), "{}", position);
    }

    #[test]
    fn amazons_bitboard_generator_equals_reference_in_played_positions(seed: u64, plies in 0u32..90) {
        let position: Amazons = after_random_plies(seed, plies);
        prop_assert_eq!(sorted(&position), amazons_moves(&position), "{}", position);
    }

    #[test]
    fn every_generated_move_is_legal(seed: u64, random: u64) {
        check_moves_are_legal(&arbitrary_loa(seed), random);
        check_moves_are_legal(&arbitrary_amazons(seed), random);
        check_moves_are_legal(&after_random_plies::<Loa>(seed, (seed % 150) as u32), random);
        check_moves_are_legal(&after_random_plies::<Amazons>(seed, (seed % 80) as u32), random);
    }

    #[test]
    fn loa_is_legal_accepts_exactly_the_generated_moves(seed: u64) {
        use tourney_rules::loa::{Move, Square};
        for position in [arbitrary_loa(seed), after_random_plies::<Loa>(seed, (seed % 150) as u32)] {
            let moves = position.legal_moves();
            prop_assert_eq!(position.is_legal(Move::Pass), moves.contains(&Move::Pass));
            for from in 0..64 {
                for to in 0..64 {
                    for capture in [false, true] {
                        let mv = Move::Step {
                            from: Square::from_index(from).unwrap(),
                            to: Square::from_index(to).unwrap(),
                            capture,
                        };
                        prop_assert_eq!(position.is_legal(mv), moves.contains(&mv), "{} in {}", mv, position);
                    }
                }
            }
        }
    }

    #[test]
    fn incremental_zobrist_equals_from_scratch(seed: u64) {
        check_incremental_zobrist::<Loa>(seed, 120);
        check_incremental_zobrist::<Amazons>(seed, 92);
    }

    #[test]
    fn position_strings_round_trip(seed: u64) {
        let loa = arbitrary_loa(seed);
        prop_assert_eq!(loa.to_string().parse::<Loa>().unwrap(), loa);
        let amazons = arbitrary_amazons(seed);
        prop_assert_eq!(amazons.to_string().parse::<Amazons>().unwrap(), amazons);
    }

    #[test]
    fn parsers_never_panic(text in "\\PC{0,60}") {
        let _ = text.parse::<Loa>();
        let _ = text.parse::<Amazons>();
        let _ = text.parse::<tourney_rules::loa::Move>();
        let _ = text.parse::<tourney_rules::amazons::Move>();
        let _ = Loa::start().parse_move(&text);
        let _ = Amazons::start().parse_move(&text);
    }

    #[test]
    fn position_parser_never_panics_on_near_misses(text in "[bwx0-9/ ]{0,80}") {
        let _ = text.parse::<Loa>();
        let _ = text.parse::<Amazons>();
    }
}

#[test]
fn random_loa_games_end_with_a_valid_outcome() {
    for seed in 0..300 {
        for rules in [
            LoaRules::default(),
            "double-connection=draw".parse().unwrap(),
        ] {
            let game = random_playout(Loa::start(), rules, rng(seed));
            let outcome = game.outcome().expect("a playout ends");
            let position = game.position();
            match outcome.reason {
                EndReason::Connection => {
                    let (b, w) = (
                        position.is_connected(Color::Black),
                        position.is_connected(Color::White),
                    );
                    assert!(b || w);
                    match outcome.winner {
                        Some(Color::Black) => assert!(b),
                        Some(Color::White) => assert!(w),
                        None => assert!(b && w),
                    }
                }
                EndReason::Repetition => {
                    assert_eq!(outcome.winner, None);
                    assert_eq!(game.occurrences(), 3);
                }
                EndReason::NoMoves => panic!("LOA never ends for lack of moves"),
            }
            // Replaying the record reaches the same end.
            let mut replay = tourney_rules::Game::new(Loa::start(), rules);
            for &mv in game.moves() {
                replay.play(mv).unwrap();
            }
            assert_eq!(replay.outcome(), Some(outcome));
        }
    }
}

#[test]
fn random_amazons_games_end_with_a_valid_outcome() {
    for seed in 0..300 {
        let game = random_playout(Amazons::start(), AmazonsRules::default(), rng(seed));
        let outcome = game.outcome().unwrap();
        assert_eq!(outcome.reason, EndReason::NoMoves);
        assert_eq!(outcome.winner, Some(!game.position().turn()));
        assert!(game.position().legal_moves().is_empty());
        assert_eq!(game.position().arrows().count_ones() as usize, game.ply());
    }
}
