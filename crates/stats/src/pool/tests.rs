use super::simulate::{Run, Strategy, World, round_robin, versions};
use super::*;
use crate::games::GameResult;
use crate::sprt::Sprt;

fn run() -> Run {
    Run {
        settings: PoolSettings::default(),
        target: 15.0,
        cap: 20_000_000,
        sprt: Sprt::preset("stc").unwrap(),
    }
}

/// A table of `truth.len()` members, `rounds` round robins of game pairs played.
fn played(truth: &[f64], rounds: usize, seed: u64) -> (GameTable, World, Vec<(usize, usize)>) {
    let mut table = GameTable::new();
    for k in 0..truth.len() {
        table.player(&format!("v{k}"));
    }
    let mut world = World::new(truth.to_vec(), seed);
    let mut history = Vec::new();
    for _ in 0..rounds {
        for (i, j) in round_robin(truth.len()) {
            world.pair(&mut table, i, j);
            history.push((i, j));
        }
    }
    (table, world, history)
}

#[test]
fn the_rule_pairs_the_uncertain_member_with_the_closest_rating() {
    // Four well-known members 100 Elo apart, and a fifth at 210 with few games.
    let truth = [0.0, 100.0, 200.0, 300.0, 210.0];
    let (mut table, mut world, _) = played(&truth[..4], 100, 1);
    table.player("v4");
    world.truth.push(210.0);
    for k in 0..4 {
        world.pair(&mut table, k, 4);
        world.pair(&mut table, 4, k);
    }
    let settings = PoolSettings::default();
    let ratings = settings.rate(&table, None);
    assert!(
        ratings.interval[4] > 2.0 * ratings.interval[3],
        "{ratings:?}"
    );
    assert_eq!(ratings.next_pair(&settings, &[], &[]), Some((2, 4)));
    // Close ratings carry more information a pair.
    assert!(ratings.pair_information(2, 4) > ratings.pair_information(0, 4));
}

#[test]
fn a_new_member_without_games_is_paired_first_and_rated_wide() {
    let truth = versions(6, 3);
    let (mut table, _, history) = played(&truth, 20, 2);
    let settings = PoolSettings::default();
    let before = settings.rate(&table, None);
    table.player("new");
    let ratings = settings.rate(&table, Some(&before));
    assert!(ratings.interval[6].is_finite() && ratings.interval[6] > 1000.0);
    assert!(ratings.interval[..6].iter().all(|&e| e < 100.0));
    let (i, j) = ratings.next_pair(&settings, &history, &[]).unwrap();
    assert_eq!(j, 6, "({i}, {j})");
    // A lease of a few pairs gives it more than one, and not only against one opponent.
    let plan = ratings.plan(&settings, &history, &[], 4);
    assert!(plan.iter().filter(|p| p.1 == 6).count() >= 2, "{plan:?}");
}

#[test]
fn the_floor_keeps_every_member_played() {
    let truth = versions(8, 4);
    let (mut table, mut world, mut history) = played(&truth, 4, 5);
    // Weigh the newest member so much that the information rule alone would play little
    // else.
    let settings = PoolSettings {
        emphasis: 1e6,
        ..PoolSettings::default()
    };
    let window = 8 * truth.len();
    let mut ratings = settings.rate(&table, None);
    for _ in 0..60 {
        for (i, j) in ratings.plan(&settings, &history, &[], 8) {
            world.pair(&mut table, i, j);
            history.push((i, j));
        }
        ratings = settings.rate(&table, Some(&ratings));
        let last = &history[history.len() - window..];
        for k in 0..truth.len() {
            let seen = last.iter().filter(|p| p.0 == k || p.1 == k).count();
            assert!(
                seen >= 3,
                "member {k} played {seen} of the last {window} pairs"
            );
        }
    }
    // Without the floor, some member is left out of a whole window.
    let unfloored = PoolSettings {
        floor: 0.0,
        ..settings.clone()
    };
    let plan = ratings.plan(&unfloored, &history, &[], window);
    assert!((0..truth.len()).any(|k| !plan.iter().any(|p| p.0 == k || p.1 == k)));
}

#[test]
fn intervals_cover_the_true_ratings_at_about_the_stated_rate() {
    let (mut covered, mut total) = (0, 0);
    for seed in 0..40 {
        let truth = versions(8, seed);
        let (table, _, _) = played(&truth, 12, 1000 + seed);
        let ratings = PoolSettings::default().rate(&table, None);
        for (k, t) in truth.iter().enumerate().skip(1) {
            total += 1;
            covered += usize::from((ratings.elo[k] - t).abs() <= ratings.interval[k]);
        }
    }
    let rate = covered as f64 / total as f64;
    eprintln!("{covered} of {total} intervals cover the truth");
    assert!((0.9..=0.99).contains(&rate), "{covered} of {total}");
}

#[test]
fn ratings_are_relative_to_the_anchor() {
    let truth = versions(7, 6);
    let (table, _, _) = played(&truth, 10, 7);
    let first = PoolSettings::default().rate(&table, None);
    let third = PoolSettings {
        anchor: 3,
        ..PoolSettings::default()
    }
    .rate(&table, None);
    assert_eq!((first.elo[0], first.interval[0]), (0.0, 0.0));
    assert_eq!((third.elo[3], third.interval[3]), (0.0, 0.0));
    for k in 0..7 {
        assert!((first.elo[k] - first.elo[3] - third.elo[k]).abs() < 1e-6);
    }
    // The interval of 3 relative to 0 is the interval of 0 relative to 3.
    assert!((first.interval[3] - third.interval[0]).abs() < 1e-6);
    // The fit is the same from any start.
    let again = PoolSettings::default().rate(&table, Some(&third));
    for k in 0..7 {
        assert!((again.elo[k] - first.elo[k]).abs() < 1e-6);
    }
}

#[test]
fn the_rule_and_the_simulation_are_deterministic() {
    let truth = versions(10, 8);
    let (table, _, history) = played(&truth, 3, 9);
    let settings = PoolSettings::default();
    let ratings = settings.rate(&table, None);
    let plan = ratings.plan(&settings, &history, &[(0, 1)], 12);
    assert_eq!(
        plan,
        settings
            .rate(&table, None)
            .plan(&settings, &history, &[(0, 1)], 12)
    );
    assert!(plan.iter().all(|&(i, j)| i < j && j < 10));
    let mut small = run();
    small.target = 40.0;
    let a = small.play(Strategy::Pool, &mut World::new(truth.clone(), 10));
    let b = small.play(Strategy::Pool, &mut World::new(truth, 10));
    assert_eq!(a, b);
}

#[test]
fn the_pool_needs_fewer_games_than_a_round_robin() {
    // Ten versions to ±25 Elo, two seeds: a rule that paired at random (or evenly) would
    // need as many games as the round robin.
    let mut small = run();
    small.target = 25.0;
    let (mut pool, mut rr) = (0, 0);
    for seed in [11, 12] {
        let truth = versions(10, seed);
        pool += small
            .play(Strategy::Pool, &mut World::new(truth.clone(), seed))
            .games;
        rr += small
            .play(Strategy::RoundRobin, &mut World::new(truth, seed))
            .games;
    }
    eprintln!("pool {pool} games, round robin {rr}");
    assert!(
        (pool as f64) < 0.85 * rr as f64,
        "pool {pool} games, round robin {rr}"
    );
}

#[test]
fn an_empty_or_single_member_pool_has_no_pair() {
    let settings = PoolSettings::default();
    let mut table = GameTable::new();
    let empty = settings.rate(&table, None);
    assert!(empty.is_empty() && empty.plan(&settings, &[], &[], 3).is_empty());
    table.player("only");
    let one = settings.rate(&table, None);
    assert_eq!(
        (one.elo.clone(), one.interval.clone()),
        (vec![0.0], vec![0.0])
    );
    assert_eq!(one.next_pair(&settings, &[], &[]), None);
    table.player("second");
    let two = settings.rate(&table, Some(&one));
    assert_eq!(two.next_pair(&settings, &[], &[]), Some((0, 1)));
}

#[test]
fn perfect_scores_and_unlinked_members_stay_finite() {
    let mut table = GameTable::new();
    for name in ["a", "b", "c", "d", "e"] {
        table.player(name);
    }
    let mut pair = |x: &str, y: &str, first: GameResult, second: GameResult| {
        table.add(x, y, first);
        table.add(y, x, second);
    };
    for _ in 0..10 {
        pair("a", "b", GameResult::WhiteWins, GameResult::Draw);
        // c wins every game against a and b.
        pair("c", "a", GameResult::WhiteWins, GameResult::BlackWins);
        pair("c", "b", GameResult::WhiteWins, GameResult::BlackWins);
        // d and e play only each other.
        pair("d", "e", GameResult::WhiteWins, GameResult::Draw);
    }
    let settings = PoolSettings::default();
    let ratings = settings.rate(&table, None);
    assert!(
        ratings
            .elo
            .iter()
            .chain(&ratings.interval)
            .all(|x| x.is_finite())
    );
    assert!(ratings.elo[2] > 150.0 && ratings.interval[2] > ratings.interval[1]);
    // Too few games to fit the advantage and the draw parameter: BayesElo's.
    assert_eq!((ratings.advantage, ratings.drawelo), (32.8, 97.3));
    // d and e are tied to the others by the prior alone: wide, and paired soon.
    assert!(
        ratings.interval[3] > 1000.0 && ratings.interval[4] > 1000.0,
        "{ratings:?}"
    );
    let (i, j) = ratings.next_pair(&settings, &[], &[]).unwrap();
    assert!(i < 3 && j >= 3, "({i}, {j})");
}

#[test]
fn a_member_that_loses_every_game_is_left_out_once_out_of_reach() {
    // Three close members and one that loses every game: a few games leave it in reach.
    let truth = [0.0, 15.0, 30.0, -3000.0];
    let settings = PoolSettings::default();
    let (table, _, _) = played(&truth, 1, 4);
    let early = settings.rate(&table, None);
    assert!(!early.out_of_reach(&settings, 3), "{early:?}");
    assert!((0..3).all(|k| !early.out_of_reach(&settings, k)));
    // Many: its interval is about as wide, but all of it far below the others.
    let (table, _, _) = played(&truth, 40, 4);
    let late = settings.rate(&table, None);
    assert!(late.out_of_reach(&settings, 3), "{late:?}");
    assert!((0..3).all(|k| !late.out_of_reach(&settings, k)));
    assert!(late.interval[3] > 0.5 * early.interval[3], "{late:?}");
    let next = late.plan(&settings, &[], &[], 8);
    assert!(next.iter().all(|&(i, j)| i != 3 && j != 3), "{next:?}");
    // Counted as in reach, it would take the pairs: its interval is the widest.
    let unreached = PoolSettings {
        reach: f64::INFINITY,
        ..PoolSettings::default()
    };
    assert!(!late.out_of_reach(&unreached, 3));
    let next = late.plan(&unreached, &[], &[], 8);
    assert!(next.iter().all(|&(_, j)| j == 3), "{next:?}");
}
