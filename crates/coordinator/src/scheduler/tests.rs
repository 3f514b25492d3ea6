//! The scheduler's tests: simulated workers that drop, delay, repeat and reorder reports.

use tourney_model::tournament::TournamentConfig;

use super::*;

fn config(format: &str, extra: &str) -> TournamentConfig {
    let text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"{format}\"\n{extra}\nlimits = {{ nodes = 100 }}\n\
         [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n"
    );
    TournamentConfig::parse(&text, "t.toml").unwrap()
}

fn outcome(pair: u64, half_points: [u8; 2]) -> PairOutcome {
    PairOutcome {
        pair,
        first: 0,
        second: 1,
        half_points,
        white: [1, 0],
    }
}

/// A simulated worker: leases, then reports what it was given.
fn play_all(s: &mut Scheduler, worker: &str, max: usize, now: u64) -> usize {
    let Some((_, assignments)) = s.lease(worker, max, now, &|_| true) else {
        return 0;
    };
    let results: Vec<_> = assignments
        .iter()
        .map(|a| (a.tournament, outcome(a.pair, [1, 1])))
        .collect();
    s.report("w#1", &results, 0);
    assignments.len()
}

#[test]
fn a_host_that_cannot_play_a_tournament_is_offered_none_of_it_until_resumed() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 4"), State::Queued, vec![]);
    s.add(2, config("match", "pairs = 4"), State::Queued, vec![]);
    let (_, given) = s.lease("broken#1", 1, 0, &|_| true).unwrap();
    let (t, pair) = (given[0].tournament, given[0].pair);
    assert!(s.unfit(t, "broken#1", pair));
    assert!(s.is_unfit(t, "broken#7"), "the host, whatever its session");
    assert!(!s.is_unfit(t, "fine#1"));
    assert_eq!(
        s.tournament(t).unwrap().pairs_leased(),
        0,
        "the pair is free again"
    );
    // The broken host gets only the other tournament's pairs; the pair goes to others.
    let (_, mine) = s.lease("broken#2", 10, 0, &|_| true).unwrap();
    assert!(mine.iter().all(|a| a.tournament != t), "{mine:?}");
    let (_, theirs) = s.lease("fine#1", 10, 0, &|_| true).unwrap();
    assert!(theirs.iter().any(|a| (a.tournament, a.pair) == (t, pair)));
    // Resuming forgives.
    assert!(s.pause(t) && s.resume(t, false));
    assert!(!s.is_unfit(t, "broken#3"));
}

#[test]
fn a_match_is_played_exactly_once_by_several_workers() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 10"), State::Queued, vec![]);
    let mut played = 0;
    let mut now = 0;
    while played < 10 {
        for w in ["w1", "w2", "w3"] {
            played += play_all(&mut s, w, 2, now);
        }
        now += 10;
    }
    let t = s.tournament(1).unwrap();
    assert_eq!(
        (t.state, t.pairs_done(), t.prefix()),
        (State::Finished, 10, 10)
    );
    assert!(
        s.lease("w1", 2, now, &|_| true).is_none(),
        "no work after the end"
    );
    assert_eq!(s.leases().count(), 0);
}

#[test]
fn expired_leases_are_offered_again_and_late_results_still_count_once() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 3"), State::Queued, vec![]);
    let (lost, first) = s.lease("slow", 3, 0, &|_| true).unwrap();
    assert_eq!(first.len(), 3);
    assert!(
        s.lease("fast", 3, 10, &|_| true).is_none(),
        "everything is leased"
    );
    // A heartbeat keeps the lease alive past its first deadline.
    assert!(s.heartbeat("slow", &[lost.id], 900).is_empty());
    assert!(s.tick(1500).is_empty());
    assert_eq!(s.tick(1900), vec![lost.id]);
    let (_, again) = s.lease("fast", 3, 2000, &|_| true).unwrap();
    assert_eq!(
        again.iter().map(|a| a.pair).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    // The slow worker's late result for pair 1 arrives first and is kept...
    let (ack, _) = s.report("w#1", &[(1, outcome(1, [2, 2]))], 0);
    assert_eq!((ack.accepted, ack.duplicates), (1, 0));
    // ... so the fast worker's result for it is a duplicate; the rest are new.
    let (ack, changed) = s.report(
        "w#1",
        &[
            (1, outcome(0, [1, 1])),
            (1, outcome(1, [0, 0])),
            (1, outcome(2, [1, 1])),
        ],
        0,
    );
    assert_eq!((ack.accepted, ack.duplicates), (2, 1));
    assert_eq!(changed, vec![1]);
    let t = s.tournament(1).unwrap();
    assert_eq!(
        t.counted().find(|o| o.pair == 1).unwrap().half_points,
        [2, 2]
    );
    assert_eq!(t.state, State::Finished);
    // The expired lease is told to drop its work.
    assert_eq!(s.heartbeat("slow", &[lost.id], 2100), vec![lost.id]);
}

#[test]
fn unknown_results_are_rejected() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 2"), State::Queued, vec![]);
    let (ack, _) = s.report(
        "w#1",
        &[(9, outcome(0, [1, 1])), (1, outcome(7, [1, 1]))],
        0,
    );
    assert_eq!(ack.rejected, 2);
}

#[test]
fn the_sprt_decides_on_the_longest_completed_prefix() {
    let mut s = Scheduler::new(1000);
    s.add(
        1,
        config("sprt", "sprt = { elo0 = 0, elo1 = 10, max_pairs = 1000 }"),
        State::Queued,
        vec![],
    );
    s.lease("w", 200, 0, &|_| true).unwrap();
    // Overwhelming wins in pairs 1..200 while pair 0 is still out: no decision yet.
    let wins: Vec<_> = (1..200).map(|p| (1, outcome(p, [2, 2]))).collect();
    s.report("w#1", &wins, 0);
    let t = s.tournament(1).unwrap();
    assert_eq!((t.prefix(), t.state), (0, State::Running));
    assert!(t.sprt_status().is_none());
    // Pair 0 completes the prefix: now the SPRT decides.
    s.report("w#1", &[(1, outcome(0, [1, 1]))], 0);
    let t = s.tournament(1).unwrap();
    assert_eq!(t.prefix(), 200);
    assert_eq!(t.state, State::Finished);
    assert_eq!(
        t.sprt_status().unwrap().decision,
        tourney_stats::Decision::AcceptH1
    );
    // It stopped counting at its decision, before the end of the prefix.
    let counted = t.sprt_counts();
    assert!(counted.pairs < 200, "{counted:?}");
    assert_eq!(counted.pentanomial.bins[2], 1, "pair 0 is counted first");
    let status = t.sprt_status();
    let config = t.config.clone();
    assert!(s.lease("w", 10, 10, &|_| true).is_none());
    // Results that arrive after the decision change nothing in the test.
    s.report(
        "w#1",
        &[(1, outcome(200, [0, 0])), (1, outcome(201, [0, 0]))],
        0,
    );
    let t = s.tournament(1).unwrap();
    assert_eq!((t.sprt_counts(), t.sprt_status()), (counted, status));
    // A restart on the stored results reaches the same decision at the same pair.
    let done: Vec<PairOutcome> = t.counted().collect();
    let mut restarted = Scheduler::new(1000);
    restarted.add(1, config, State::Finished, done);
    let again = restarted.tournament(1).unwrap();
    assert_eq!(
        (again.sprt_counts(), again.sprt_status()),
        (counted, status)
    );
}

#[test]
fn an_excluded_host_counts_in_no_figure_and_its_sprt_decision_is_undone() {
    let mut s = Scheduler::new(1000);
    s.add(
        1,
        config("sprt", "sprt = { elo0 = 0, elo1 = 10, max_pairs = 1000 }"),
        State::Queued,
        vec![],
    );
    s.lease("good#1", 100, 0, &|_| true).unwrap();
    s.lease("bad#4", 100, 0, &|_| true).unwrap();
    // The good host's pairs are even; the bad host wins every pair it reports.
    let even: Vec<_> = (0..100).map(|p| (1, outcome(p, [1, 1]))).collect();
    let wins: Vec<_> = (100..200).map(|p| (1, outcome(p, [2, 2]))).collect();
    s.report("good#1", &even, 0);
    s.report("bad#4", &wins, 0);
    let t = s.tournament(1).unwrap();
    assert_eq!(t.state, State::Finished, "the bad host's wins decide");
    let bad: Vec<u64> = (100..200).collect();
    assert!(
        s.set_excluded(1, "bad", true, &bad),
        "undecided: runs again"
    );
    let t = s.tournament(1).unwrap();
    assert_eq!(t.state, State::Running);
    assert_eq!((t.pairs_done(), t.pairs_excluded()), (200, 100));
    assert_eq!(
        t.sprt_counts().pairs,
        100,
        "only the good host's pairs count"
    );
    assert_eq!(t.sprt_counts().pentanomial.bins[2], 100);
    assert_eq!(t.counted().count(), 100);
    // The excluded host gets no more of its pairs (a later session of it neither),
    // and what it still reports does not count.
    assert!(s.lease("bad#5", 10, 1, &|_| true).is_none());
    let (lease, more) = s.lease("good#1", 10, 1, &|_| true).unwrap();
    assert_eq!(more.len(), 10);
    let late: Vec<_> = more.iter().map(|a| (1, outcome(a.pair, [2, 2]))).collect();
    s.report("bad#4", &late, 0);
    let t = s.tournament(1).unwrap();
    assert_eq!((t.pairs_excluded(), t.sprt_counts().pairs), (110, 100));
    assert!(
        s.leases().all(|l| l.id != lease.id),
        "the lease's pairs are done"
    );
    // Counted again: the same decision as before.
    let bad: Vec<u64> = (100..200).chain(more.iter().map(|a| a.pair)).collect();
    assert!(s.set_excluded(1, "bad", false, &bad));
    let t = s.tournament(1).unwrap();
    assert_eq!((t.state, t.pairs_excluded()), (State::Finished, 0));
    assert_eq!(
        t.sprt_status().unwrap().decision,
        tourney_stats::Decision::AcceptH1
    );
}

#[test]
fn pair_sets_keep_ranges_and_count_each_pair_once() {
    let mut set = PairSet::default();
    set.insert_range(10, 20);
    set.insert(20);
    set.insert(5);
    set.insert_range(15, 25);
    assert_eq!(set.len(), 16);
    assert_eq!(set.ranges.len(), 2, "{set:?}");
    set.remove(12);
    set.remove(12);
    set.remove(99);
    assert_eq!((set.len(), set.first()), (15, Some(5)));
    assert!(set.contains(11) && !set.contains(12) && set.contains(13));
    set.remove(5);
    assert_eq!(set.first(), Some(10));
    set.insert_range(0, u64::MAX);
    assert_eq!((set.len(), set.ranges.len()), (u64::MAX, 1));
}

#[test]
fn a_restore_with_a_far_pair_costs_nothing_per_skipped_pair() {
    // What a store written before results were checked against leases may hold: one
    // pair far beyond the others.
    let far = 999_999_999;
    let mut s = Scheduler::new(1000);
    s.add(
        1,
        config("match", "pairs = 1000000000"),
        State::Running,
        vec![outcome(0, [1, 1]), outcome(far, [1, 1])],
    );
    let t = s.tournament(1).unwrap();
    assert_eq!(t.offerable(), 1_000_000_000 - 2);
    let (_, first) = s.lease("w#1", 2, 0, &|_| true).unwrap();
    assert_eq!(first.iter().map(|a| a.pair).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn cancelled_tournaments_stop_and_their_leases_are_dropped() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 50"), State::Queued, vec![]);
    let (lease, _) = s.lease("w", 5, 0, &|_| true).unwrap();
    assert!(s.cancel(1));
    assert!(!s.cancel(1));
    assert_eq!(s.heartbeat("w", &[lease.id], 10), vec![lease.id]);
    assert!(s.lease("w", 5, 20, &|_| true).is_none());
    assert_eq!(s.tournament(1).unwrap().state, State::Cancelled);
}

#[test]
fn a_cancelled_tournament_resumes_with_its_pairs_and_the_ones_that_were_out_first() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 6"), State::Queued, vec![]);
    let (lease, given) = s.lease("w", 3, 0, &|_| true).unwrap();
    assert_eq!(given.len(), 3);
    s.report("w#1", &[(1, outcome(0, [1, 1]))], 0);
    assert!(s.cancel(1));
    assert_eq!(s.heartbeat("w", &[lease.id], 10), vec![lease.id]);
    assert!(s.lease("w", 6, 10, &|_| true).is_none());
    assert!(s.resume(1, true), "a cancelled test is resumed");
    assert!(!s.resume(1, true));
    let t = s.tournament(1).unwrap();
    assert_eq!(
        (t.state, t.pairs_done()),
        (State::Running, 1),
        "with its pair kept; it had started, so it waits for no approval"
    );
    let (_, again) = s.lease("w", 6, 30, &|_| true).unwrap();
    let offered: Vec<u64> = again.iter().map(|a| a.pair).collect();
    assert_eq!(
        offered,
        vec![1, 2, 3, 4, 5],
        "the pairs that were out come first"
    );
    // One cancelled before it started waits for approval again when asked to.
    s.add(2, config("match", "pairs = 4"), State::Pending, vec![]);
    assert!(s.cancel(2) && s.resume(2, true));
    assert_eq!(s.tournament(2).unwrap().state, State::Pending);
    assert!(s.cancel(2) && s.resume(2, false));
    assert_eq!(s.tournament(2).unwrap().state, State::Queued);
}

#[test]
fn a_paused_tournament_hands_out_nothing_until_it_resumes() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 4"), State::Queued, vec![]);
    let (lease, pairs) = s.lease("w", 2, 0, &|_| true).unwrap();
    assert_eq!(pairs.len(), 2);
    s.report("w#1", &[(1, outcome(0, [1, 1]))], 0);
    assert!(s.pause(1));
    assert!(!s.pause(1), "pausing twice is a no-op");
    assert_eq!(s.tournament(1).unwrap().state, State::Paused);
    assert!(s.lease("w", 4, 10, &|_| true).is_none());
    assert_eq!(s.heartbeat("w", &[lease.id], 10), vec![lease.id]);
    assert!(s.resume(1, false));
    assert!(!s.resume(1, false));
    assert_eq!(s.tournament(1).unwrap().state, State::Running);
    // The pair that was out (1) comes back first, then the rest.
    let (_, again) = s.lease("w", 4, 20, &|_| true).unwrap();
    let offered: Vec<u64> = again.iter().map(|a| a.pair).collect();
    assert_eq!(offered, vec![1, 2, 3]);
    // A paused tournament can still be cancelled.
    assert!(s.pause(1));
    assert!(s.cancel(1));
    assert_eq!(s.tournament(1).unwrap().state, State::Cancelled);
}

#[test]
fn priority_first_then_weight_shares_the_workers() {
    let mut s = Scheduler::new(1000);
    let mut light = config("match", "pairs = 1000\nweight = 1");
    light.name = "light".into();
    let heavy = config("match", "pairs = 1000\nweight = 3");
    let urgent = config("match", "pairs = 5\npriority = 10");
    s.add(1, light, State::Queued, vec![]);
    s.add(2, heavy, State::Queued, vec![]);
    s.add(3, urgent, State::Queued, vec![]);
    let (_, first) = s.lease("w", 5, 0, &|_| true).unwrap();
    assert!(
        first.iter().all(|a| a.tournament == 3),
        "higher priority first"
    );
    let mut count = [0usize; 3];
    for i in 0..400 {
        let (_, got) = s.lease("w", 1, i, &|_| true).unwrap();
        count[got[0].tournament as usize - 1] += 1;
    }
    assert_eq!(count[2], 0);
    assert!(
        (count[1] as f64 / count[0] as f64 - 3.0).abs() < 0.1,
        "{count:?}"
    );
}

#[test]
fn restored_tournaments_offer_their_gaps_first() {
    let mut s = Scheduler::new(1000);
    let done = vec![outcome(0, [1, 1]), outcome(2, [1, 1]), outcome(3, [1, 1])];
    s.add(1, config("match", "pairs = 6"), State::Running, done);
    let t = s.tournament(1).unwrap();
    assert_eq!((t.pairs_done(), t.prefix()), (3, 1));
    let (_, got) = s.lease("w", 6, 0, &|_| true).unwrap();
    assert_eq!(
        got.iter().map(|a| a.pair).collect::<Vec<_>>(),
        vec![1, 4, 5]
    );
}

#[test]
fn chaotic_workers_never_lose_or_double_count_a_pair() {
    // Workers that drop reports, repeat them, deliver them late and out of order.
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut s = Scheduler::new(500);
    s.add(1, config("match", "pairs = 300"), State::Queued, vec![]);
    let mut in_flight: Vec<(u64, (TournamentId, PairOutcome))> = Vec::new();
    let mut now = 0u64;
    let mut accepted = 0;
    while s.tournament(1).unwrap().state != State::Finished {
        now += 50;
        let worker = format!("w{}", next() % 5);
        if let Some((_, got)) = s.lease(&worker, 1 + (next() % 4) as usize, now, &|_| true) {
            for a in got {
                if next() % 5 != 0 {
                    // Delivered after a random delay (sometimes past the lease's end).
                    let r = (
                        a.tournament,
                        outcome(a.pair, [(next() % 3) as u8, (next() % 3) as u8]),
                    );
                    in_flight.push((now + next() % 1500, r));
                    if next() % 4 == 0 {
                        in_flight.push((now + next() % 3000, r));
                    }
                }
            }
        }
        in_flight.sort_by_key(|(t, _)| *t);
        let due: Vec<_> = in_flight
            .iter()
            .filter(|(t, _)| *t <= now)
            .map(|(_, r)| *r)
            .collect();
        in_flight.retain(|(t, _)| *t > now);
        accepted += s.report("w#1", &due, 0).0.accepted;
        s.tick(now);
        assert!(now < 10_000_000, "the tournament must finish");
    }
    let t = s.tournament(1).unwrap();
    assert_eq!(accepted, 300);
    assert_eq!((t.pairs_done(), t.prefix()), (300, 300));
    assert_eq!(
        t.counted().map(|o| o.pair).collect::<Vec<_>>(),
        (0..300).collect::<Vec<_>>()
    );
}

#[test]
fn a_pending_tournament_is_leased_nothing_until_approved_and_can_be_cancelled() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("match", "pairs = 4"), State::Pending, vec![]);
    s.add(2, config("match", "pairs = 4"), State::Pending, vec![]);
    assert!(
        s.lease("w1", 8, 0, &|_| true).is_none(),
        "nothing pending is leased"
    );
    assert!(!s.resume(1, false), "resume is not approval");
    assert!(s.approve(1) && !s.approve(1));
    let (_, given) = s.lease("w1", 8, 0, &|_| true).unwrap();
    assert!(given.iter().all(|a| a.tournament == 1) && given.len() == 4);
    assert!(s.cancel(2));
    assert_eq!(s.tournament(2).unwrap().state, State::Cancelled);
    assert!(!s.approve(2), "a cancelled test is not approved");
}
