//! Joint ratings against BayesElo 0057 and Ordo 1.2.6 outputs (`ratings_expected.json`) on
//! the oracle's four synthetic tournaments (`ratings_tournaments.json`).

use serde_json::Value;
use tourney_stats::{BayesElo, ErrorMethod, GameResult, GameTable, Ordo, RatingTable};

use crate::oracle::load;

const TOURNAMENTS: [&str; 4] = ["rr6_3000", "rr4_240", "gauntlet5_2000", "rr3_perfect"];

/// The games of a tournament, players numbered in PGN order of first appearance.
fn table(name: &str) -> GameTable {
    let tournaments = load("ratings_tournaments.json");
    let order = load("ratings_player_order.json");
    let mut table = GameTable::new();
    for player in order[name].as_array().unwrap() {
        table.player(player.as_str().unwrap());
    }
    for pair in tournaments[name]["pair_results"].as_array().unwrap() {
        let (p, o) = (
            pair["player"].as_str().unwrap(),
            pair["opponent"].as_str().unwrap(),
        );
        let n = |k: &str| pair[k].as_u64().unwrap();
        let (ww, wd, wl) = (n("white_wins"), n("white_draws"), n("white_losses"));
        let (bw, bd, bl) = (n("wins") - ww, n("draws") - wd, n("losses") - wl);
        table.add_many(p, o, GameResult::WhiteWins, ww);
        table.add_many(p, o, GameResult::Draw, wd);
        table.add_many(p, o, GameResult::BlackWins, wl);
        table.add_many(o, p, GameResult::BlackWins, bw);
        table.add_many(o, p, GameResult::Draw, bd);
        table.add_many(o, p, GameResult::WhiteWins, bl);
    }
    table
}

fn row<'a>(table: &'a RatingTable, name: &str) -> &'a tourney_stats::PlayerRating {
    table.players.iter().find(|p| p.name == name).unwrap()
}

fn check_bayeselo(run: &str, config: BayesElo, tolerance: f64) {
    let expected = load("ratings_expected.json");
    let mut failures = Vec::new();
    for name in TOURNAMENTS {
        let ours = config.rate(&table(name));
        let theirs = &expected["tournaments"][name]["bayeselo"][run];
        for p in theirs["players"].as_array().unwrap() {
            let mine = row(&ours, p["name"].as_str().unwrap());
            for (field, value) in [
                ("elo", mine.elo),
                ("plus", mine.plus),
                ("minus", mine.minus),
            ] {
                let e = p[field].as_f64().unwrap();
                if (value - e).abs() > tolerance {
                    failures.push(format!(
                        "{name} {run} {} {field}: ours {value}, BayesElo {e}",
                        p["name"]
                    ));
                }
            }
            assert_eq!(mine.games as f64, p["games"].as_f64().unwrap());
            assert!((mine.score * 100.0 - p["score_pct"].as_f64().unwrap()).abs() < 1e-6);
            assert!((mine.draws * 100.0 - p["draws_pct"].as_f64().unwrap()).abs() < 1e-6);
            assert!((mine.oppo - p["oppo"].as_f64().unwrap()).abs() < tolerance);
        }
        let ranks: Vec<&str> = theirs["players"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        let mine: Vec<&str> = ours.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(mine, ranks, "{name} {run}: order");
        if let Some(matrix) = theirs.get("los_matrix_truncated_to_1e-4") {
            for (a, row_a) in matrix.as_object().unwrap() {
                for (b, value) in row_a.as_object().unwrap() {
                    let (i, j) = (
                        mine.iter().position(|x| x == a).unwrap(),
                        mine.iter().position(|x| x == b).unwrap(),
                    );
                    let truncated = (ours.los[i][j] * 1e4).floor() / 1e4;
                    if (truncated - value.as_f64().unwrap()).abs() > 1.01e-4 {
                        failures.push(format!(
                            "{name} LOS {a} > {b}: ours {}, BayesElo {value}",
                            ours.los[i][j]
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bayeselo_default_run_with_exact_distribution_errors() {
    check_bayeselo("default", BayesElo::default(), 0.01);
}

#[test]
fn bayeselo_covariance_errors_and_los_matrix() {
    check_bayeselo(
        "covariance",
        BayesElo {
            errors: ErrorMethod::Covariance,
            ..BayesElo::default()
        },
        0.01,
    );
}

#[test]
fn bayeselo_mm_only_errors() {
    check_bayeselo(
        "mmonly",
        BayesElo {
            errors: ErrorMethod::Diagonal,
            ..BayesElo::default()
        },
        0.01,
    );
}

#[test]
fn bayeselo_offset() {
    check_bayeselo(
        "offset",
        BayesElo {
            offset: 2300.0,
            ..BayesElo::default()
        },
        0.01,
    );
}

#[test]
fn bayeselo_fitted_advantage_and_draw_parameter() {
    let config = BayesElo {
        fit_advantage: true,
        fit_drawelo: true,
        ..BayesElo::default()
    };
    check_bayeselo("fitadvdraw", config.clone(), 0.01);
    let expected = load("ratings_expected.json");
    for name in TOURNAMENTS {
        let ours = config.rate(&table(name));
        let theirs = &expected["tournaments"][name]["bayeselo"]["fitadvdraw"];
        for (field, value) in [("advantage", ours.advantage), ("drawelo", ours.drawelo)] {
            let e = theirs[field].as_f64().unwrap();
            assert!(
                (value.unwrap() - e).abs() < 0.01,
                "{name} {field}: ours {value:?}, BayesElo {e}"
            );
        }
    }
}

#[test]
fn ordo_default_ratings() {
    let expected = load("ratings_expected.json");
    for name in TOURNAMENTS {
        let ours = Ordo::default().rate(&table(name));
        let theirs = &expected["tournaments"][name]["ordo"]["default"];
        let flagged = theirs
            .get("flagged_all_wins_or_losses")
            .cloned()
            .unwrap_or(Value::Null);
        for p in theirs["players"].as_array().unwrap() {
            let player = p["name"].as_str().unwrap();
            let mine = row(&ours, player);
            if flagged.get(player).is_some() {
                assert!(mine.bound.is_some(), "{name} {player} should be flagged");
                assert!(mine.elo.is_finite() && mine.plus.is_finite());
                continue;
            }
            let e = p["rating"].as_f64().unwrap();
            assert!(
                (mine.elo - e).abs() < 1e-3,
                "{name} {player}: ours {}, Ordo {e}",
                mine.elo
            );
        }
    }
}

#[test]
fn ordo_anchored_and_standard_scale() {
    let expected = load("ratings_expected.json");
    for name in ["rr6_3000", "rr4_240", "gauntlet5_2000"] {
        let order = load("ratings_player_order.json");
        let first_white = order[name][0].as_str().unwrap().to_string();
        let anchored = Ordo {
            anchor: Some(first_white),
            average: 2500.0,
            ..Ordo::default()
        }
        .rate(&table(name));
        let standard = Ordo {
            average: 0.0,
            rating_for_76pct: 200.240_940_227_674_14,
            anchor: None,
        }
        .rate(&table(name));
        for (run, ours) in [("anchored", anchored), ("stdscale", standard)] {
            for p in expected["tournaments"][name]["ordo"][run]["players"]
                .as_array()
                .unwrap()
            {
                let mine = row(&ours, p["name"].as_str().unwrap());
                let e = p["rating"].as_f64().unwrap();
                assert!(
                    (mine.elo - e).abs() < 1e-3,
                    "{name} {run} {}: ours {}, Ordo {e}",
                    p["name"],
                    mine.elo
                );
            }
        }
    }
}
