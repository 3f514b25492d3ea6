//! Grouped tests of several takes, simulated: 1,000 groups a scenario keep the family-wise
//! false-positive rate and the power they state, accept at most one take, and play fewer
//! pairs than separate SPRTs when a take is good. Tolerances are three binomial standard
//! errors of the simulation's size.

use tourney_stats::takes::{Group, Takes, Verdict, simulate};
use tourney_stats::{EloModel, Sprt};

const GROUPS: u64 = 1_000;
const K: usize = 4;

fn settings() -> Takes {
    Takes {
        sprt: Sprt {
            elo0: 0.0,
            elo1: 30.0,
            alpha: 0.05,
            beta: 0.05,
            model: EloModel::Normalized,
        },
        count: K,
    }
}

/// Three binomial standard errors of a rate near `p` over [`GROUPS`] runs.
fn tolerance(p: f64) -> f64 {
    3.0 * (p * (1.0 - p) / GROUPS as f64).sqrt()
}

fn groups(truth: [f64; K], seed: u64) -> simulate::Outcomes {
    let out = simulate::groups(settings(), &truth, GROUPS, 8, seed).unwrap();
    eprintln!(
        "{truth:?}: accepted {:?} of {GROUPS}, {:.0} pairs a group",
        out.accepted,
        out.mean_pairs()
    );
    assert_eq!(out.several_accepted, 0, "a group accepts at most one take");
    out
}

#[test]
fn with_every_take_at_elo0_the_family_wise_false_positive_rate_is_at_most_alpha() {
    let alpha = settings().sprt.alpha;
    let out = groups([0.0; K], 11);
    let rate = out.any_accepted as f64 / GROUPS as f64;
    assert!(rate <= alpha + tolerance(alpha), "family-wise rate {rate}");
    // Bonferroni is conservative, but not so much that nothing is ever accepted.
    assert!(
        rate >= alpha / 4.0,
        "family-wise rate {rate} implausibly low"
    );
}

#[test]
fn a_take_at_elo1_among_takes_at_elo0_is_accepted_with_the_stated_power() {
    let s = settings();
    let out = groups([30.0, 0.0, 0.0, 0.0], 12);
    // Power 1 − β, less at most the α of a take at elo0 accepted first.
    let floor = 1.0 - s.sprt.beta - s.sprt.alpha;
    assert!(
        out.rate(0) >= floor - tolerance(floor),
        "power {}",
        out.rate(0)
    );
    let wrong = (out.any_accepted - out.accepted[0]) as f64 / GROUPS as f64;
    assert!(wrong <= s.sprt.alpha + tolerance(s.sprt.alpha), "{wrong}");
    // K separate SPRTs each run to the end; the group stops at its verdict and sends
    // most pairs to the leader.
    let separate = simulate::separate(s.sprt, &[30.0, 0.0, 0.0, 0.0], 300, 13).unwrap();
    assert!(
        out.mean_pairs() < 0.8 * separate.mean_pairs(),
        "{} pairs a group against {} for separate SPRTs",
        out.mean_pairs(),
        separate.mean_pairs()
    );
}

#[test]
fn two_takes_between_the_bounds_share_the_verdict_and_takes_at_elo0_stay_rare() {
    let alpha = settings().sprt.alpha;
    let out = groups([15.0, 15.0, 0.0, 0.0], 14);
    let middle = (out.accepted[0] + out.accepted[1]) as f64 / GROUPS as f64;
    let null = (out.accepted[2] + out.accepted[3]) as f64 / GROUPS as f64;
    assert!(
        null <= alpha + tolerance(alpha),
        "takes at elo0 accepted: {null}"
    );
    // Halfway between the hypotheses a take is close to a coin flip: one of two is
    // accepted far more often than a take at elo0.
    assert!(middle >= 0.2, "takes between the bounds accepted: {middle}");
    // Neither is favoured by its number.
    let (a, b) = (out.rate(0), out.rate(1));
    assert!((a - b).abs() <= 2.0 * tolerance(0.25), "{a} against {b}");
}

#[test]
fn a_group_drops_takes_below_the_lower_bound_and_ends_at_the_first_acceptance() {
    let mut group = Group::new(settings()).unwrap();
    let (lower, upper) = group.bounds;
    assert!((upper - ((1.0f64 - 0.05) * K as f64 / 0.05).ln()).abs() < 1e-12);
    assert!((lower - (0.05f64 / (1.0 - 0.05 / K as f64)).ln()).abs() < 1e-12);
    // Take 3 loses every pair until it is dropped; its later pairs count for the group only.
    while group.takes[3].dropped.is_none() {
        group.add(3, [0, 0]).unwrap();
    }
    let dropped_after = group.takes[3].counts.pairs;
    assert_eq!(group.takes[3].decided_after, Some(group.pairs));
    group.add(3, [2, 2]).unwrap();
    assert_eq!(group.takes[3].counts.pairs, dropped_after);
    assert_eq!(group.takes[3].played, dropped_after + 1);
    assert_eq!(group.verdict(), Verdict::Continue);
    // Pairs go to alive takes only; with no LLR ahead, they are shared out.
    let mut assigned = [0u64; K];
    for _ in 0..30 {
        let k = group.next_take(&assigned).unwrap();
        assert_ne!(k, 3);
        assigned[k] += 1;
    }
    assert!(assigned[..3].iter().all(|&n| n >= 5), "{assigned:?}");
    // A leader gets three quarters of what follows.
    for _ in 0..6 {
        group.add(1, [2, 1]).unwrap();
    }
    let mut assigned = [0u64; K];
    for _ in 0..40 {
        assigned[group.next_take(&assigned).unwrap()] += 1;
    }
    assert_eq!(assigned, [5, 30, 5, 0]);
    // Take 1 wins until accepted: the others are dropped with it, and nothing is handed out.
    while group.verdict() == Verdict::Continue {
        group.add(1, [2, 2]).unwrap();
    }
    assert_eq!(group.verdict(), Verdict::Accepted(1));
    assert_eq!(
        group.takes[0].dropped,
        Some(tourney_stats::takes::Dropped::Beaten(1))
    );
    assert_eq!(
        group.takes[3].dropped,
        Some(tourney_stats::takes::Dropped::H0)
    );
    assert_eq!(group.next_take(&[0; K]), None);
    assert!(
        Group::new(Takes {
            count: 17,
            ..settings()
        })
        .is_err()
    );
}
