//! Shares by core-time: tests of other lengths, threads, arrival times and authors.

use std::collections::BTreeMap;

use tourney_model::tournament::{PairOutcome, State, TournamentConfig};

use super::*;
use crate::scheduler::pair_core_seconds;

/// A match of two built-in players under `limits` (TOML), threads `threads`.
fn test_of(limits: &str, cores: u32) -> TournamentConfig {
    let text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 1000000\nlimits = {limits}\n\
         requires = {{ cores = {cores} }}\n\
         [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n"
    );
    TournamentConfig::parse(&text, "t.toml").unwrap()
}

/// A fleet of simulated workers, each of `cores` cores, playing pairs for their expected
/// length (a leased pair holds its cores until it ends, then is reported).
struct Fleet {
    free: Vec<u32>,
    /// Pairs in play: when they end, the worker, the test, the pair and its cores.
    running: Vec<(u64, usize, TournamentId, u64, u32)>,
    now: u64,
}

impl Fleet {
    fn new(workers: usize, cores: u32) -> Fleet {
        Fleet {
            free: vec![cores; workers],
            running: Vec::new(),
            now: 0,
        }
    }

    /// Plays until `to` (ms): the core-seconds each test played from `from` on.
    fn play(&mut self, s: &mut Scheduler, from: u64, to: u64) -> BTreeMap<TournamentId, f64> {
        let mut got = BTreeMap::new();
        while self.now < to {
            for (w, left) in self.free.iter_mut().enumerate() {
                while *left > 0 {
                    let room = *left;
                    let fits = |c: &TournamentConfig| c.requires.cores.unwrap_or(1) <= room;
                    let Some((_, jobs)) = s.lease(&format!("w{w}#1"), 1, self.now, &fits) else {
                        break;
                    };
                    let t = &s.tournaments[&jobs[0].tournament];
                    let cores = pair_cores(&t.config) as u32;
                    let ms = (t.pair_cost / f64::from(cores) * 1000.0) as u64;
                    *left -= cores;
                    let end = self.now + ms.max(1);
                    self.running.push((end, w, t.id, jobs[0].pair, cores));
                    // What it plays within [from, to).
                    let (start, stop) = (self.now.max(from), end.min(to));
                    if stop > start {
                        *got.entry(t.id).or_insert(0.0) +=
                            f64::from(cores) * (stop - start) as f64 / 1000.0;
                    }
                }
            }
            self.running
                .sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
            let Some((end, w, id, pair, cores)) = self.running.pop() else {
                break;
            };
            self.now = end;
            self.free[w] += cores;
            let outcome = PairOutcome {
                pair,
                first: 0,
                second: 1,
                half_points: [1, 1],
                white: [1, 0],
            };
            s.report(&format!("w{w}#1"), &[(id, outcome)]);
        }
        got
    }
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
    let mut fleet = Fleet::new(40, 8);
    let first = fractions(&fleet.play(&mut s, 0, 600_000));
    let played = fleet.play(&mut s, 600_000, 1_200_000);
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
    let mut fleet = Fleet::new(40, 8);
    fleet.play(&mut s, 0, 3_600_000);
    s.add(
        3,
        test_of("{ tc = \"10+0.1\" }", 1),
        State::Queued,
        Vec::new(),
    );
    // Its first minute: a third, not everything until it caught up with an hour.
    let first = fractions(&fleet.play(&mut s, 3_600_000, 3_660_000));
    assert!((first[&3] - 1.0 / 3.0).abs() < 0.05, "{first:?}");
    let later = fractions(&fleet.play(&mut s, 3_660_000, 4_260_000));
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
    let mut fleet = Fleet::new(40, 8);
    fleet.play(&mut s, 0, 600_000);
    let window = fractions(&fleet.play(&mut s, 600_000, 1_200_000));
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
    let got = Fleet::new(40, 8).play(&mut s, 0, 60_000);
    assert_eq!(got.keys().collect::<Vec<_>>(), [&2]);
}
