//! Property tests: symmetry, monotonicity, and agreement of pentanomial and trinomial views.

use proptest::prelude::*;
use tourney_stats::{
    EloModel, GameScore, Pentanomial, Plain, Sprt, SprtInput, Summary, Trinomial, gsprt,
};

fn trinomial() -> impl Strategy<Value = Trinomial> {
    (0u64..500, 0u64..500, 0u64..500).prop_map(|(wins, draws, losses)| Trinomial {
        wins,
        draws,
        losses,
    })
}

fn pentanomial() -> impl Strategy<Value = Pentanomial> {
    proptest::array::uniform5(0u64..300).prop_map(|bins| Pentanomial { bins })
}

proptest! {
    #[test]
    fn swapping_the_players_negates_elo(t in trinomial()) {
        let (a, b) = (Summary::trinomial(t), Summary::trinomial(t.swapped()));
        prop_assert!((a.elo + b.elo).abs() < 1e-9);
        prop_assert!((a.nelo + b.nelo).abs() < 1e-9);
        prop_assert!((a.los + b.los - 1.0).abs() < 1e-9);
        prop_assert!((a.elo_upper + b.elo_lower).abs() < 1e-9);
    }

    #[test]
    fn swapping_the_players_negates_the_llr(p in pentanomial(), e0 in -10.0f64..5.0, width in 0.5f64..10.0) {
        let e1 = e0 + width;
        for normalized in [false, true] {
            let a = gsprt(&p.bins_f64(), e0, e1, normalized);
            let b = gsprt(&p.swapped().bins_f64(), -e1, -e0, normalized);
            prop_assert!((a + b).abs() < 1e-6 * (1.0 + a.abs()), "{} vs {}", a, b);
        }
    }

    #[test]
    fn los_and_elo_grow_with_wins(t in trinomial()) {
        let more = Trinomial { wins: t.wins + 1, ..t };
        let (a, b) = (Summary::trinomial(t), Summary::trinomial(more));
        prop_assert!(b.los >= a.los - 1e-12);
        prop_assert!(b.elo >= a.elo - 1e-9);
    }

    #[test]
    fn the_llr_grows_with_wins(p in pentanomial()) {
        let sprt = Sprt { elo0: 0.0, elo1: 5.0, alpha: 0.05, beta: 0.05, model: EloModel::Normalized };
        let mut better = p;
        better.bins[4] += 5;
        let llr = |p: Pentanomial| sprt.llr(&SprtInput { pentanomial: Some(p), trinomial: None }).unwrap();
        prop_assert!(llr(better) >= llr(p) - 1e-9);
    }

    #[test]
    fn pair_counts_and_game_counts_give_the_same_score(games in proptest::collection::vec(0usize..3, 2..200)) {
        let score = |i: usize| [GameScore::Loss, GameScore::Draw, GameScore::Win][i];
        let (mut t, mut p) = (Trinomial::default(), Pentanomial::default());
        for pair in games.chunks_exact(2) {
            t.add(score(pair[0]));
            t.add(score(pair[1]));
            p.add_pair(score(pair[0]), score(pair[1]));
        }
        let (a, b) = (Plain::trinomial(t), Plain::pentanomial(p));
        prop_assert!((a.score - b.score).abs() < 1e-12);
        prop_assert!(a.elo == b.elo || (a.elo.is_nan() && b.elo.is_nan()) || (a.elo - b.elo).abs() < 1e-9);
        prop_assert_eq!(2 * p.pairs(), t.games());
    }
}
