//! Shares by core-time: tests of other lengths, threads, arrival times and authors.

use std::collections::BTreeMap;

use tourney_model::tournament::{PairOutcome, State, TournamentConfig};

use super::*;
use crate::scheduler::pair_core_seconds;
use crate::scheduler::simulate::SimulatedFleet;

/// A match of two built-in players under `limits` (TOML), threads `threads`.
fn test_of(limits: &str, cores: u32) -> TournamentConfig {
    let text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 1000000\nlimits = {limits}\n\
         requires = {{ cores = {cores} }}\n\
         [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n"
    );
    TournamentConfig::parse(&text, "t.toml").unwrap()
}

/// Plays `fleet` on `s` until `to`: the core-seconds each test played from `from` on.
fn play(
    fleet: &mut SimulatedFleet,
    s: &mut Scheduler,
    from: u64,
    to: u64,
) -> BTreeMap<TournamentId, f64> {
    let mut got = BTreeMap::new();
    fleet.play(s, to, &mut |p| {
        let within = p.core_seconds_within(from, to);
        if within > 0.0 {
            *got.entry(p.tournament).or_insert(0.0) += within;
        }
    });
    got
}

fn fractions(got: &BTreeMap<TournamentId, f64>) -> BTreeMap<TournamentId, f64> {
    let all: f64 = got.values().sum();
    got.iter().map(|(&id, &c)| (id, c / all)).collect()
}

#[test]
fn a_pair_costs_its_games_cores_times_their_expected_length() {
    let short = pair_core_seconds(&test_of("{ tc = \"10+0.1\" }", 1));
    let long = pair_core_seconds(&test_of("{ tc = \"60+0.6\" }", 1));
    let wide = pair_core_seconds(&test_of("{ tc = \"10+0.1\" }", 8));
    // Two games, two sides, base and 40 increments each.
    assert!((short - 2.0 * 2.0 * 14.0).abs() < 1e-9, "{short}");
    assert!((long / short - 6.0).abs() < 1e-9);
    assert!((wide / short - 8.0).abs() < 1e-9);
    let moves = pair_core_seconds(&test_of("{ movetime = 100 }", 1));
    assert!((moves - 2.0 * 2.0 * 4.0).abs() < 1e-9, "{moves}");
}

#[test]
fn long_and_wide_tests_get_the_same_core_time_as_short_ones() {
    let mut s = Scheduler::new(60_000);
    for (id, (limits, cores)) in [
        ("{ tc = \"10+0.1\" }", 1),
        ("{ tc = \"60+0.6\" }", 1),
        ("{ tc = \"10+0.1\" }", 8),
    ]
    .into_iter()
    .enumerate()
    {
        s.add(
            id as u64 + 1,
            test_of(limits, cores),
            State::Queued,
            Vec::new(),
        );
    }
    // From an empty fleet: the first window is shared as well as the next.
    let mut fleet = SimulatedFleet::new(40, 8);
    let first = fractions(&play(&mut fleet, &mut s, 0, 600_000));
    let played = play(&mut fleet, &mut s, 600_000, 1_200_000);
    let window = fractions(&played);
    for shares in [&first, &window] {
        for (id, share) in shares {
            assert!(
                (share - 1.0 / 3.0).abs() < 0.03,
                "test {id}: {first:?} {window:?}"
            );
        }
    }
    let shares = s.shares(1_200_000);
    for share in shares.values() {
        assert!((share.target - 1.0 / 3.0).abs() < 1e-9, "{shares:?}");
        assert!((share.now - 1.0 / 3.0).abs() < 0.05, "{shares:?}");
    }
    // Each test's rate in pairs an hour is the cores it held over its pair's cost.
    for id in 1..=3 {
        let cost = s.tournaments[&id].pair_cost;
        let measured = played[&id] / 600.0 / cost * 3600.0;
        let said = shares[&id].pairs_per_hour;
        assert!(
            (said / measured - 1.0).abs() < 0.1,
            "{id}: {said} against {measured}: {shares:?}"
        );
    }
}

#[test]
fn a_late_test_gets_its_share_from_its_first_minute_and_never_more() {
    let mut s = Scheduler::new(60_000);
    for id in [1, 2] {
        s.add(
            id,
            test_of("{ tc = \"10+0.1\" }", 1),
            State::Queued,
            Vec::new(),
        );
    }
    let mut fleet = SimulatedFleet::new(40, 8);
    play(&mut fleet, &mut s, 0, 3_600_000);
    s.add(
        3,
        test_of("{ tc = \"10+0.1\" }", 1),
        State::Queued,
        Vec::new(),
    );
    // Its first minute: a third, not everything until it caught up with an hour.
    let first = fractions(&play(&mut fleet, &mut s, 3_600_000, 3_660_000));
    assert!((first[&3] - 1.0 / 3.0).abs() < 0.05, "{first:?}");
    let later = fractions(&play(&mut fleet, &mut s, 3_660_000, 4_260_000));
    assert!((later[&3] - 1.0 / 3.0).abs() < 0.03, "{later:?}");
}

#[test]
fn one_author_s_many_tests_take_the_author_s_bound_together() {
    let mut s = Scheduler::new(60_000);
    for id in 1..=5 {
        s.add(
            id,
            test_of("{ tc = \"10+0.1\" }", 1),
            State::Queued,
            Vec::new(),
        );
        s.set_author(id, "prolific");
    }
    s.add(
        6,
        test_of("{ tc = \"10+0.1\" }", 1),
        State::Queued,
        Vec::new(),
    );
    s.set_author(6, "other");
    let mut fleet = SimulatedFleet::new(40, 8);
    play(&mut fleet, &mut s, 0, 600_000);
    let window = fractions(&play(&mut fleet, &mut s, 600_000, 1_200_000));
    // The author's five share two tests' worth; the other author has one: 2/3 and 1/3.
    let prolific: f64 = (1..=5).map(|id| window[&id]).sum();
    assert!((prolific - 2.0 / 3.0).abs() < 0.03, "{window:?}");
    assert!((window[&6] - 1.0 / 3.0).abs() < 0.03, "{window:?}");
    assert!((s.shares(1_200_000)[&6].target - 1.0 / 3.0).abs() < 1e-9);
}

#[test]
fn priority_comes_before_shares() {
    let mut s = Scheduler::new(60_000);
    let mut urgent = test_of("{ tc = \"60+0.6\" }", 1);
    urgent.priority = 1;
    s.add(
        1,
        test_of("{ tc = \"10+0.1\" }", 1),
        State::Queued,
        Vec::new(),
    );
    s.add(2, urgent, State::Queued, Vec::new());
    let got = play(&mut SimulatedFleet::new(40, 8), &mut s, 0, 60_000);
    assert_eq!(got.keys().collect::<Vec<_>>(), [&2]);
}

#[test]
fn the_pairs_an_hour_are_measured_not_expected() {
    // Nodes-limited games cost far less than the model's 1M nodes a second says: the
    // rate shown is the pairs that came in, from the first half-minute on.
    let mut s = Scheduler::new(60_000);
    s.add(1, test_of("{ nodes = 5000 }", 1), State::Queued, Vec::new());
    let fits = |_: &TournamentConfig| true;
    let mut now = 0;
    for step in 1..=1200u64 {
        let (_, jobs) = s.lease("w#1", 1, now, &fits).unwrap();
        now = step * 100;
        let outcome = PairOutcome {
            pair: jobs[0].pair,
            first: 0,
            second: 1,
            half_points: [1, 1],
            white: [1, 0],
        };
        s.report("w#1", &[(1, outcome)], now);
        if now == 30_000 || now == 120_000 {
            let said = s.shares(now)[&1].pairs_per_hour;
            assert!((said / 36_000.0 - 1.0).abs() < 0.02, "at {now} ms: {said}");
        }
    }
}
