//! Edge cases decided and documented: no games, zero bins, all draws, all wins. Every
//! output is a finite, well-formed number (fishtest's regularisation), never a panic.

use tourney_stats::{
    BayesElo, Bound, GameResult, GameTable, Ordo, Pentanomial, Sprt, SprtInput, Summary, Trinomial,
};

fn assert_finite(s: &Summary, what: &str) {
    for (field, v) in [
        ("score", s.score),
        ("elo", s.elo),
        ("elo_error", s.elo_error),
        ("elo_lower", s.elo_lower),
        ("elo_upper", s.elo_upper),
        ("nelo", s.nelo),
        ("nelo_error", s.nelo_error),
        ("los", s.los),
        ("draw_ratio", s.draw_ratio),
    ] {
        assert!(v.is_finite(), "{what}: {field} = {v}");
    }
}

#[test]
fn summaries_of_degenerate_counts_are_finite() {
    let t = |w, d, l| Trinomial {
        wins: w,
        draws: d,
        losses: l,
    };
    for (what, counts) in [
        ("no games", t(0, 0, 0)),
        ("all wins", t(10, 0, 0)),
        ("all draws", t(0, 10, 0)),
        ("all losses", t(0, 0, 10)),
        ("no draws", t(5, 0, 5)),
    ] {
        let s = Summary::trinomial(counts);
        assert_finite(&s, what);
    }
    // Before the first game: Elo 0, the widest interval, LOS ½.
    let empty = Summary::trinomial(t(0, 0, 0));
    assert_eq!((empty.elo, empty.los), (0.0, 0.5));
    assert!(Summary::trinomial(t(10, 0, 0)).elo > 1000.0);
    for bins in [
        [0; 5],
        [0, 0, 0, 0, 9],
        [9, 0, 0, 0, 0],
        [0, 0, 9, 0, 0],
        [1, 0, 0, 0, 1],
    ] {
        let s = Summary::pentanomial(Pentanomial { bins });
        assert_finite(&s, &format!("{bins:?}"));
    }
}

#[test]
fn sprt_on_no_results_is_an_error_and_on_zero_bins_a_number() {
    let sprt = Sprt::preset("stc").unwrap();
    assert!(sprt.llr(&SprtInput::default()).is_err());
    let status = sprt
        .status(&SprtInput {
            pentanomial: Some(Pentanomial { bins: [0; 5] }),
            trinomial: None,
        })
        .unwrap();
    assert!(status.llr.is_finite());
    assert_eq!(status.decision.to_string(), "continue");
}

#[test]
fn joint_ratings_of_empty_and_perfect_tables_are_well_formed() {
    let empty = GameTable::new();
    assert!(BayesElo::default().rate(&empty).players.is_empty());
    assert!(Ordo::default().rate(&empty).players.is_empty());

    let mut table = GameTable::new();
    for _ in 0..5 {
        table.add("Winner", "Loser", GameResult::WhiteWins);
        table.add("Loser", "Winner", GameResult::BlackWins);
    }
    table.add("Loser", "Other", GameResult::Draw);
    table.add("Other", "Winner", GameResult::BlackWins);
    for ratings in [
        BayesElo::default().rate(&table),
        Ordo::default().rate(&table),
    ] {
        for p in &ratings.players {
            assert!(
                p.elo.is_finite() && p.plus.is_finite() && p.minus.is_finite(),
                "{}: {p:?}",
                ratings.method
            );
        }
        assert_eq!(ratings.players[0].name, "Winner");
        assert_eq!(ratings.players[0].bound, Some(Bound::AtLeast));
    }
    // One player alone.
    let mut single = GameTable::new();
    single.player("Alone");
    let r = BayesElo::default().rate(&single);
    assert_eq!(r.players.len(), 1);
    assert!(r.players[0].elo.is_finite());
}

#[test]
fn the_winner_of_a_perfect_match_leads_with_a_high_los_in_both_methods() {
    let mut table = GameTable::new();
    table.add_many("Winner", "Loser", GameResult::WhiteWins, 3);
    table.add_many("Loser", "Winner", GameResult::BlackWins, 3);
    for ratings in [
        BayesElo::default().rate(&table),
        Ordo::default().rate(&table),
    ] {
        let top = &ratings.players[0];
        assert_eq!(top.name, "Winner", "{}", ratings.method);
        let los = top.los_next.unwrap();
        // 6-0: Φ(6/√6) ≈ 99.3 % (from the fit, BayesElo's is a little lower).
        assert!(los > 0.95, "{}: LOS {los}", ratings.method);
    }
}

#[test]
fn a_player_without_games_is_ranked_last_without_a_los() {
    let mut table = GameTable::new();
    table.player("Newcomer");
    table.add_many("Strong", "Weak", GameResult::WhiteWins, 3);
    table.add_many("Weak", "Strong", GameResult::WhiteWins, 1);
    table.add_many("Weak", "Strong", GameResult::Draw, 2);
    for ratings in [
        BayesElo::default().rate(&table),
        Ordo::default().rate(&table),
    ] {
        let names: Vec<&str> = ratings.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Strong", "Weak", "Newcomer"], "{}", ratings.method);
        assert_eq!(ratings.players[2].games, 0);
        assert!(ratings.players[1].los_next.is_none(), "{}", ratings.method);
        assert!(ratings.players[0].los_next.is_some(), "{}", ratings.method);
    }
}
