//! Perft against the independent counts in `tests/data/*.perft` (OpenSpiel, our rules).
//! Cases above a node limit run only with `--ignored`.

use crate::data::perft_cases;
use tourney_rules::{Amazons, Loa, Position, perft, perft_divide};

const QUICK_LIMIT: u64 = 60_000_000;

fn check<P: Position>(file: &str, limit: u64, deep: bool) {
    let mut checked = 0;
    for case in perft_cases(file) {
        let position: P = case.position.parse().unwrap();
        for &(depth, expected) in &case.counts {
            if (expected <= limit) != deep {
                assert_eq!(
                    perft(&position, depth),
                    expected,
                    "{file} '{}' depth {depth}",
                    case.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no case of {file} in range");
}

#[test]
fn loa_perft_matches_oracle() {
    check::<Loa>("loa.perft", QUICK_LIMIT, false);
}

#[test]
fn amazons_perft_matches_oracle() {
    check::<Amazons>("amazons.perft", QUICK_LIMIT, false);
}

#[test]
fn amazons_8x8_perft_matches_a_second_implementation() {
    check::<Amazons>("amazons8.perft", QUICK_LIMIT, false);
    let start: Amazons = "2b2b2/8/b6b/8/8/w6w/8/2w2w2 w".parse().unwrap();
    assert_eq!(start, Amazons::start_sized(8));
    assert_eq!(start, Amazons::start_for("size=8".parse().unwrap()));
}

#[test]
#[ignore = "deep perft: billions of nodes, run with --ignored --release"]
fn loa_perft_deep() {
    check::<Loa>("loa.perft", QUICK_LIMIT, true);
}

#[test]
#[ignore = "deep perft: billions of nodes, run with --ignored --release"]
fn amazons_perft_deep() {
    check::<Amazons>("amazons.perft", QUICK_LIMIT, true);
}

#[test]
#[ignore = "8.35 billion leaves: run with --ignored --release"]
fn amazons_perft_3_from_the_start() {
    // The figure, also listed by an unrelated public Amazons benchmark.
    assert_eq!(perft(&Amazons::start(), 3), 8_350_439_170);
}

#[test]
fn loa_divide_matches_oracle_for_first_moves() {
    // From the oracle's divide table of the initial position at depth 4.
    let divide = perft_divide(&Loa::start(), 4);
    let get = |m: &str| {
        divide
            .iter()
            .find(|(mv, _)| mv.to_string() == m)
            .map(|&(_, n)| n)
    };
    assert_eq!(divide.len(), 36);
    assert_eq!(get("b1-b3"), Some(43_334));
    assert_eq!(get("b1-d3"), Some(51_714));
    assert_eq!(get("e1-c3"), Some(45_521));
    assert_eq!(divide.iter().map(|&(_, n)| n).sum::<u64>(), 1_563_208);
}
