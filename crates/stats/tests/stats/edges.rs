//! Edge cases decided and documented: no games, zero bins, all draws, all wins. Every
//! output is a finite, well-formed number (fishtest's regularisation), never a panic.

use tourney_model::tournament::MAX_NORMALIZED_ELO;
use tourney_stats::elo::NELO_PER_T;
use tourney_stats::{
    BayesElo, Bound, EloModel, GameResult, GameTable, Ordo, Pentanomial, Sprt, SprtInput, Summary,
    Trinomial, gsprt,
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

/// The largest t-value the normalized model's MLE solves for with `k` equally spaced score
/// bins: its first step, from the uniform distribution, needs `t·(σ + ¼/σ) < 1`.
fn normalized_t_limit(k: usize) -> f64 {
    let values: Vec<f64> = (0..k).map(|i| i as f64 / (k - 1) as f64).collect();
    let var = values.iter().map(|v| (v - 0.5).powi(2)).sum::<f64>() / k as f64;
    let sigma = var.sqrt();
    1.0 / (sigma + 0.25 / sigma)
}

#[test]
fn normalized_bounds_are_refused_past_the_models_domain_never_nan() {
    // The limit the tournament files check is the pair-count one, derived here.
    let pairs_limit = normalized_t_limit(5) * NELO_PER_T / std::f64::consts::SQRT_2;
    assert!(
        (pairs_limit - MAX_NORMALIZED_ELO).abs() < 0.05 && MAX_NORMALIZED_ELO < pairs_limit,
        "derived {pairs_limit}"
    );
    // The game-count limit is wider: pair counts decide.
    assert!(normalized_t_limit(3) * NELO_PER_T > pairs_limit);
    let pentas = [
        [10, 40, 100, 45, 12],
        [0, 0, 0, 0, 100],
        [100, 0, 0, 0, 0],
        [0, 0, 100, 0, 0],
        [5, 0, 0, 0, 5],
        [0, 50, 0, 50, 0],
        [40, 1, 1, 1, 40],
        [0, 0, 0, 1, 0],
    ];
    for bins in pentas {
        let pentanomial = Pentanomial { bins };
        let [ll, ld, d, wd, ww] = bins;
        let trinomial = Trinomial {
            wins: 2 * ww + wd,
            draws: 2 * d + ld + wd,
            losses: 2 * ll + ld,
        };
        let inputs = [
            SprtInput {
                pentanomial: Some(pentanomial),
                trinomial: Some(trinomial),
            },
            SprtInput {
                pentanomial: None,
                trinomial: Some(trinomial),
            },
        ];
        for step in 1..=463 {
            let e = f64::from(step) * 0.5;
            for (elo0, elo1) in [(0.0, e), (-e, 0.0), (-e, e)] {
                let sprt = Sprt {
                    elo0,
                    elo1,
                    alpha: 0.05,
                    beta: 0.05,
                    model: EloModel::Normalized,
                };
                for input in &inputs {
                    let llr = sprt.llr(input).unwrap();
                    assert!(llr.is_finite(), "{bins:?} [{elo0}, {elo1}]: {llr}");
                }
            }
        }
    }
    // The test: elo1 = 300 is refused with the largest bound, not tested as NaN.
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 300.0,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Normalized,
    };
    let input = SprtInput {
        pentanomial: Some(Pentanomial {
            bins: [10, 40, 100, 45, 12],
        }),
        trinomial: None,
    };
    let e = sprt.status(&input).unwrap_err().to_string();
    assert!(
        e.starts_with("elo1: 300 nElo is beyond") && e.contains("±231.6"),
        "{e}"
    );
    assert!(sprt.validate().is_err());
    // Past the limit the MLE truly has no solution: the raw statistic is NaN there.
    let above = gsprt(&[10.0, 40.0, 100.0, 45.0, 12.0], 0.0, 232.0, true);
    assert!(above.is_nan(), "{above}");
    // The logistic model takes such bounds.
    let logistic = Sprt {
        model: EloModel::Logistic,
        ..sprt
    };
    assert!(logistic.llr(&input).unwrap().is_finite());
}
