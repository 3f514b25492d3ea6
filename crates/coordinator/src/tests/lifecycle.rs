//! A tournament's life on the coordinator: metrics retention, report details, late
//! results, restarts, pauses, the end of a tournament, ratings, opening suites, bounds.

use std::collections::BTreeMap;
use std::sync::Arc;

use prometheus::Registry;
use tourney_model::tournament::{State, TournamentConfig};
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;

use super::*;
use crate::state::Coordinator;
use crate::types::RATINGS_EVERY;
use crate::types::Settings;

#[tokio::test]
async fn an_ended_tournament_leaves_metrics_after_the_retention_and_failures_start_at_zero() {
    for (retention, kept) in [(60_000, true), (0, false)] {
        let settings = Settings {
            metrics_retention_ms: retention,
            ..Settings::default()
        };
        let c = Coordinator::open(Store::temporary().unwrap(), settings, &Registry::new()).unwrap();
        let text = c.metrics_text();
        assert!(
            text.contains("tourney_engine_failures_total{reason=\"crash\"} 0"),
            "{text}"
        );
        let id = c
            .submit(&match_file(), "m.toml", "", BTreeMap::new())
            .await
            .unwrap();
        let text = c.metrics_text();
        let before_any_game = format!(
            "tourney_games_total{{game=\"loa\",result=\"0-1\",termination=\"connection\",tournament=\"{id}\"}} 0"
        );
        assert!(text.contains(&before_any_game), "{text}");
        let worker = c.register("w", "test", 4, "t").unwrap().0;
        lease_and_win(&c, &worker, 4).await;
        assert_eq!(c.state(id), Some(State::Finished));
        let text = c.metrics_text();
        let series = [
            format!("tourney_pairs_done{{tournament=\"{id}\"}}"),
            format!(
                "tourney_tournament_info{{format=\"match\",game=\"loa\",name=\"late\",tournament=\"{id}\"}} 1"
            ),
            format!("tourney_tournament_state{{state=\"finished\",tournament=\"{id}\"}}"),
            format!("tourney_elo_estimate{{engine=\"a\",tournament=\"{id}\"}}"),
            format!(
                "tourney_games_total{{game=\"loa\",result=\"1-0\",termination=\"connection\",tournament=\"{id}\"}}"
            ),
        ];
        for s in &series {
            assert_eq!(
                text.contains(s.as_str()),
                kept,
                "{s} with retention {retention}:\n{text}"
            );
        }
        assert!(
            !text.contains(&format!("tournament=\"{id}\"")) || kept,
            "{text}"
        );
    }
}

#[tokio::test]
async fn reports_say_what_was_played_and_when() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let details = |c: &Coordinator| -> BTreeMap<String, String> {
        c.report_of(id).unwrap().1.details.into_iter().collect()
    };
    let d = details(&c);
    assert_eq!(d["Game"], "loa");
    assert_eq!(d["Format"], "match: 4 pairs, 8 games");
    assert_eq!(
        d["Limits"],
        "clock 10+0.1 (margin 100 ms), 1 nodes per move"
    );
    assert_eq!(
        d["Openings"],
        "0 used, generated (2 random plies, seed 1; a suite of 4), each played with both colours"
    );
    assert_eq!(
        d["Rules"],
        "a move that connects both sides' groups at once: the mover wins"
    );
    assert!(d["Statistics"].ends_with("see docs/statistics.md"), "{d:?}");
    assert_eq!(
        d["Tourney"],
        format!("coordinator {}", env!("CARGO_PKG_VERSION"))
    );
    assert!(!d.contains_key("Hosts"), "nobody played yet: {d:?}");
    assert_eq!(
        (d["Engine a"].as_str(), d["Engine b"].as_str()),
        ("random", "random:seed=2")
    );
    // Nothing played yet: when it was submitted, not a start or a time run.
    assert!(d["Submitted"].ends_with(" UTC"), "{d:?}");
    assert!(
        !d.contains_key("Started") && !d.contains_key("Elapsed"),
        "{d:?}"
    );
    assert_eq!(d["ETA"], "after the first pairs");
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let jobs = lease_and_win(&c, &worker, 2).await;
    let d = details(&c);
    assert!(d["Started"].ends_with(" UTC"));
    assert!(d["Openings"].starts_with("2 used, "), "{d:?}");
    assert_eq!(d["Hosts"], "w", "the host that played");
    let eta = details(&c)["ETA"].clone();
    assert!(eta.starts_with("0:00:0") && eta.contains("(at "), "{eta}");
    let (_, report) = c.report_of(id).unwrap();
    // White's results per opening: `a` won both games of each pair, once with each colour.
    assert_eq!(report.openings.len(), 2);
    for o in &report.openings {
        assert_eq!((o.games, o.white_points), (2, 1.0));
        assert_eq!(
            o.position,
            tourney_model::opening::position(&jobs[o.index as usize].opening),
            "{o:?}"
        );
    }
    assert!(
        report.text().contains("Engine b      random:seed=2"),
        "{}",
        report.text()
    );
}

#[tokio::test]
async fn a_result_after_its_lease_expired_is_kept_and_counted_late() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _, clock) = on_manual_clock(&dir, 20).await;
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 2).unwrap();
    let ack = c
        .report(&worker, vec![won_by_a(&c, &worker, &jobs[0], lease)])
        .await
        .unwrap();
    assert_eq!(ack.accepted, 1);
    assert_eq!(c.metrics().pairs_late.get(), 0, "in time");
    clock.advance(40);
    c.tick();
    assert_eq!(c.metrics().leases_expired.get(), 1);
    // Nobody else completed the pair: the late result counts, and is noted as late.
    let ack = c
        .report(&worker, vec![won_by_a(&c, &worker, &jobs[1], lease)])
        .await
        .unwrap();
    assert_eq!(ack.accepted, 1);
    assert_eq!(c.metrics().pairs_late.get(), 1);
    assert_eq!(c.metrics().pairs_committed.get(), 2);
    // Once more: a duplicate, neither committed nor late.
    let ack = c
        .report(&worker, vec![won_by_a(&c, &worker, &jobs[1], lease)])
        .await
        .unwrap();
    assert_eq!((ack.accepted, ack.duplicates), (0, 1));
    assert_eq!(c.metrics().pairs_late.get(), 1);
}

#[tokio::test]
async fn terminations_are_counted_as_games_arrive_and_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let expected = vec![("crash".to_string(), 3), ("time-forfeit".to_string(), 1)];
    {
        let (c, id) = coordinator(&dir, 60_000).await;
        let worker = c.register("w", "test", 2, "t").unwrap().0;
        let (lease, jobs) = c.lease(&worker, 2).unwrap();
        let results = vec![
            won_by_a_ending(&c, &worker, &jobs[0], lease, ["crash", "time-forfeit"]),
            won_by_a(&c, &worker, &jobs[1], lease),
        ];
        c.report(&worker, results).await.unwrap();
        let (status, report) = c.report_of(id).unwrap();
        assert_eq!(report.terminations, expected);
        // Two openings, four distinct games.
        assert_eq!(
            (status.duplicate_games, status.duplicate_pairs),
            (0, vec![])
        );
    }
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    let (status, report) = c.report_of(c.ids()[0]).unwrap();
    assert_eq!(report.terminations, expected, "restored from the store");
    assert_eq!(status.duplicate_games, 0, "recounted from the store");
    assert!(report.notes.is_empty(), "{:?}", report.notes);
}

#[tokio::test]
async fn a_pair_one_host_cannot_play_goes_to_another_and_pauses_when_none_can() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let (broken, fine) = (
        c.register("broken", "test", 1, "t").unwrap().0,
        c.register("fine", "test", 1, "t").unwrap().0,
    );
    let (_, jobs) = c.lease(&broken, 1).unwrap();
    let pair = jobs[0].pair;
    c.pair_failed(&broken, id, pair, "engine unsupported")
        .await
        .unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(
        status.state,
        State::Running,
        "another worker can still play it"
    );
    assert_eq!(status.paused_reason, None);
    assert!(
        c.lease(&broken, 4).is_none(),
        "nothing more for the broken host"
    );
    let (_, jobs) = c.lease(&fine, 4).unwrap();
    assert!(
        jobs.iter().any(|j| j.pair == pair),
        "the pair is offered again"
    );
    // The last host that could play it fails too: the tournament waits for a fix.
    c.pair_failed(&fine, id, pair, "engine unsupported")
        .await
        .unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.state, State::Paused);
    let reason = status.paused_reason.unwrap();
    assert!(
        reason.contains("fine#2") && reason.contains("unsupported"),
        "{reason}"
    );
    assert!(c.resume(id).await.unwrap());
    assert!(
        c.lease(&broken, 1).is_some(),
        "resuming makes every host eligible again"
    );
}

#[tokio::test]
async fn near_the_end_a_worker_leases_only_its_share_of_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let (c, _) = coordinator(&dir, 60_000).await;
    let (one, three) = (
        c.register("one", "test", 1, "t").unwrap().0,
        c.register("three", "test", 3, "t").unwrap().0,
    );
    // 4 pairs left for 4 slots: one may take 1, three may take 3 of them.
    let (_, jobs) = c.lease(&one, 10).unwrap();
    assert_eq!(jobs.len(), 1);
    let (_, jobs) = c.lease(&three, 10).unwrap();
    assert_eq!(jobs.len(), 3, "3 of the 3 left, at least one per slot");
    assert!(c.lease(&one, 10).is_none(), "nothing left");
    // Alone, a worker takes all it asks for.
    let dir = tempfile::tempdir().unwrap();
    let (c, _) = coordinator(&dir, 60_000).await;
    let alone = c.register("alone", "test", 1, "t").unwrap().0;
    assert_eq!(c.lease(&alone, 10).unwrap().1.len(), 4);
}

#[tokio::test]
async fn running_ratings_are_reused_briefly_and_final_ratings_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id, clock) = on_manual_clock(&dir, 60_000).await;
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 4).unwrap();
    let games = |c: &Coordinator| -> Vec<u64> {
        let status = c.status(id).unwrap();
        status.ratings.players.iter().map(|p| p.games).collect()
    };
    c.report(&worker, vec![won_by_a(&c, &worker, &jobs[0], lease)])
        .await
        .unwrap();
    assert_eq!(games(&c), vec![2, 2]);
    c.report(&worker, vec![won_by_a(&c, &worker, &jobs[1], lease)])
        .await
        .unwrap();
    assert_eq!(c.status(id).unwrap().pairs_done, 2);
    assert_eq!(
        games(&c),
        vec![2, 2],
        "not computed again within {RATINGS_EVERY:?}"
    );
    clock.advance(RATINGS_EVERY.as_millis() as u64);
    assert_eq!(
        games(&c),
        vec![4, 4],
        "computed again after {RATINGS_EVERY:?}"
    );
    let rest = jobs[2..]
        .iter()
        .map(|j| won_by_a(&c, &worker, j, lease))
        .collect();
    c.report(&worker, rest).await.unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.state, State::Finished);
    assert_eq!(
        games(&c),
        vec![8, 8],
        "a finished tournament's ratings are exact"
    );
    assert_eq!(status.ratings.players[0].name, "a");
    assert!(status.ratings.players[0].elo > status.ratings.players[1].elo);
}

#[tokio::test]
async fn the_stored_state_is_the_schedulers_and_a_file_that_no_longer_parses_is_left_alone() {
    let store = Store::temporary().unwrap();
    let c = Coordinator::open(store.clone(), Settings::default(), &Registry::new()).unwrap();
    let id = c
        .submit(&match_file(), "m.toml", "", BTreeMap::new())
        .await
        .unwrap();
    assert!(c.cancel(id).await.unwrap());
    let stored = store.tournament(id).unwrap().unwrap();
    assert_eq!(stored.state, State::Cancelled);
    assert!(stored.ended_ms.is_some());
    // A stored file that does not parse (here: written by hand) stays in the store and
    // is not scheduled; the others are.
    let mut broken = stored.clone();
    broken.id = 99;
    broken.config_text = "name = ".into();
    store.put_tournament(&broken).unwrap();
    let reopened = Coordinator::open(store.clone(), Settings::default(), &Registry::new()).unwrap();
    assert_eq!(reopened.ids(), vec![id]);
    assert_eq!(reopened.state(id), Some(State::Cancelled));
    assert!(store.tournament(99).unwrap().is_some());
}

#[tokio::test]
async fn the_opening_suite_is_as_large_as_the_tournament_or_says_it_is_not() {
    let c = on_temporary_store();
    // Generated: one opening per pair, past the old cap of 2,000.
    let big = MatchFile {
        pairs: 3000,
        openings: "{ plies = 4, seed = 1 }",
        ..Default::default()
    }
    .toml();
    let id = c
        .submit(&big, "big.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.openings, 3000);
    assert_eq!(status.openings_note(), None);
    // A file the tournament will exhaust is said.
    let small = MatchFile {
        pairs: 5,
        openings: "{ file = \"two.txt\" }",
        ..Default::default()
    }
    .toml();
    let two = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w\n";
    let id = c
        .submit(&small, "small.toml", two, BTreeMap::new())
        .await
        .unwrap();
    let note = c.status(id).unwrap().openings_note().unwrap();
    assert!(note.contains("2 openings for up to 5 pairs"), "{note}");
    let (_, report) = c.report_of(id).unwrap();
    let details: BTreeMap<String, String> = report.details.into_iter().collect();
    assert!(
        details["Openings"].contains("pairs past 2 replay"),
        "{details:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_balance_judge_gets_a_smaller_suite_within_its_budget_and_leases_go_on() {
    let c = Coordinator::open(
        Store::temporary().unwrap(),
        Settings {
            judge_budget: 200_000,
            ..Settings::default()
        },
        &Registry::new(),
    )
    .unwrap();
    let running = c
        .submit(&match_file(), "m.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let slow = MatchFile {
        name: "slow-judge",
        pairs: 1000,
        openings: r#"{ plies = 4, seed = 1, balanced = "ab:depth=60", max_score = 10000 }"#,
        limits: "{ nodes = 1 }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml();
    let submitting = {
        let c = Arc::clone(&c);
        tokio::spawn(async move { c.submit(&slow, "slow.toml", "", BTreeMap::new()).await })
    };
    // The runtime keeps serving while the suite is made.
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (_, jobs) = c.lease(&worker, 1).unwrap();
    assert_eq!(jobs[0].tournament, running);
    let id = submitting.await.unwrap().unwrap();
    let status = c.status(id).unwrap();
    assert!(
        (1..1000).contains(&status.openings),
        "{} openings",
        status.openings
    );
    assert!(status.openings_note().is_some());
}

#[tokio::test]
async fn an_openings_file_of_move_sequences_is_played_from_its_offset() {
    let c = on_temporary_store();
    let file = MatchFile {
        pairs: 2,
        openings: "{ file = \"book.txt\", format = \"moves\", offset = 1 }",
        limits: "{ nodes = 1 }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    };
    let id = c
        .submit(
            &file.toml(),
            "t.toml",
            "b1-b3\n# a comment\nd1-d3\n",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    assert_eq!(c.status(id).unwrap().openings, 2);
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let (_, jobs) = c.lease(&worker, 2).unwrap();
    let after = |m: &str| {
        use tourney_rules::Position;
        let start = tourney_rules::Loa::start();
        start
            .play(start.parse_move(m).unwrap())
            .unwrap()
            .to_string()
    };
    assert_eq!(
        tourney_model::opening::position(&jobs[0].opening),
        after("d1-d3"),
        "pair 0 plays the opening at offset 1"
    );
    assert_eq!(
        tourney_model::opening::position(&jobs[1].opening),
        after("b1-b3"),
        "and the suite wraps around"
    );
}

#[tokio::test]
async fn an_ended_tournament_restarts_from_its_summary_with_the_same_report() {
    let dir = tempfile::tempdir().unwrap();
    let (id, before) = {
        let store = Store::open(dir.path()).unwrap();
        let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
        let id = c
            .submit(&a_file(48), "odd.toml", "", BTreeMap::new())
            .await
            .unwrap();
        play_with_an_odd_worker(&c, 48, won_by_a).await;
        c.exclude_worker(id, "odd", true, "always wins for a")
            .await
            .unwrap();
        let (status, report) = c.report_of(id).unwrap();
        assert_eq!(status.state, State::Finished);
        assert!(
            c.lock().tournaments[&id].games.is_folded(),
            "its fingerprints are let go of as it ends"
        );
        (id, serde_json::to_value(&report).unwrap())
    };
    let store = reopen(&dir).await;
    assert!(store.summary(id).unwrap().is_some(), "written as it ended");
    // The summary holds what the digests say.
    let config = TournamentConfig::parse(&a_file(48), "odd.toml").unwrap();
    let [digests, summary] = [false, true].map(|ended| {
        crate::tournaments::history::Restored::read(&store, id, &config, ended).unwrap()
    });
    let done =
        |r: &crate::tournaments::history::Restored| r.done.outcomes(&config).collect::<Vec<_>>();
    assert_eq!(done(&digests), done(&summary));
    assert_eq!(done(&digests).len(), 48);
    assert_eq!(
        serde_json::to_value(&digests.workers).unwrap(),
        serde_json::to_value(&summary.workers).unwrap()
    );
    assert_eq!(
        (digests.games.repeats, &digests.games.pairs),
        (summary.games.repeats, &summary.games.pairs)
    );
    assert!(summary.games.is_folded() && !digests.games.is_folded());
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let (status, report) = c.report_of(id).unwrap();
    assert_eq!(
        (status.state, status.pairs_done, status.pairs_excluded),
        (State::Finished, 48, 12)
    );
    assert_eq!(serde_json::to_value(&report).unwrap(), before);
}

#[tokio::test]
async fn games_let_go_of_are_read_back_before_more_are_counted() {
    let store = Store::temporary().unwrap();
    let c = Coordinator::open(store.clone(), Settings::default(), &Registry::new()).unwrap();
    // Every pair from the start position: each repeats the games of pair 0.
    let file = MatchFile {
        pairs: 6,
        openings: "{ plies = 0 }",
        limits: "{ nodes = 1 }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    };
    let id = c
        .submit(&file.toml(), "same.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    lease_and_win(&c, &worker, 3).await;
    let counted = |c: &Coordinator| {
        let inner = c.lock();
        let games = &inner.tournaments[&id].games;
        (
            games.repeats,
            games.pairs.iter().copied().collect::<Vec<_>>(),
        )
    };
    // As an ended tournament read back from its summary: counts, no fingerprints.
    c.lock().tournaments.get_mut(&id).unwrap().games.fold();
    lease_and_win(&c, &worker, 1).await;
    assert!(!c.lock().tournaments[&id].games.is_folded());
    // What counting every game from the start finds.
    let mut kept = crate::tournaments::history::Duplicates::default();
    for d in store.digests(id).unwrap() {
        kept.count(
            d.outcome.pair,
            &d.games.iter().map(|g| g.1).collect::<Vec<_>>(),
        );
    }
    assert_eq!(kept.repeats, 6, "pairs 1 to 3 repeat pair 0");
    let (repeats, pairs) = counted(&c);
    assert_eq!(
        (repeats, pairs),
        (kept.repeats, kept.pairs.into_iter().collect())
    );
}

#[tokio::test]
async fn live_tournaments_are_bounded_and_an_ended_one_makes_room() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        max_live_tournaments: 2,
        ..Settings::default()
    };
    let c =
        Coordinator::open(Store::open(dir.path()).unwrap(), settings, &Registry::new()).unwrap();
    let file = match_file();
    let submit = || c.submit(&file, "late.toml", "", BTreeMap::new());
    let first = submit().await.unwrap();
    submit().await.unwrap();
    let refused = submit().await.unwrap_err();
    assert!(
        matches!(&refused, crate::types::CoordinatorError::Exhausted(m) if m.contains("2 tournaments")),
        "{refused}"
    );
    assert_eq!(c.ids().len(), 2, "nothing stored for the refused one");
    assert!(c.cancel(first).await.unwrap());
    submit().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_tournament_resumes_with_its_games_and_not_once_they_are_archived() {
    let dir = tempfile::tempdir().unwrap();
    let id = {
        let (c, id) = coordinator(&dir, 60_000).await;
        let worker = c.register("w", "test", 4, "t").unwrap().0;
        lease_and_win(&c, &worker, 1).await;
        // A pair is out when it is stopped.
        let (_, out) = c.lease(&worker, 1).unwrap();
        assert!(c.cancel(id).await.unwrap());
        assert!(c.status(id).unwrap().ended_ms.is_some());
        assert!(c.lease(&worker, 4).is_none(), "nothing of it is offered");
        assert!(c.resume(id).await.unwrap());
        assert!(!c.resume(id).await.unwrap(), "it is running, not cancelled");
        let status = c.status(id).unwrap();
        assert_eq!(
            (status.state, status.pairs_done, status.ended_ms),
            (State::Running, 1, None),
            "its pair kept"
        );
        // The pair that was out comes first; it plays to the end.
        let played = lease_and_win(&c, &worker, 4).await;
        assert_eq!(played[0].pair, out[0].pair);
        assert_eq!(played.len(), 3);
        let status = c.status(id).unwrap();
        assert_eq!((status.state, status.pairs_done), (State::Finished, 4));
        let games: Vec<u64> = status.ratings.players.iter().map(|p| p.games).collect();
        assert_eq!(games, vec![8, 8], "each game counted once");
        // Stopped again, its games archived: they are gone from the store, so it cannot
        // be resumed, and the error says why.
        let second = c
            .submit(&match_file(), "again.toml", "", BTreeMap::new())
            .await
            .unwrap();
        lease_and_win(&c, &worker, 1).await;
        assert!(c.cancel(second).await.unwrap());
        assert_eq!(c.archive(second, 2).await.unwrap(), Some(1));
        let refused = c.resume(second).await.unwrap_err().to_string();
        assert!(
            refused.contains("cannot be resumed") && refused.contains("archived"),
            "{refused}"
        );
        assert_eq!(c.state(second), Some(State::Cancelled));
        (id, second)
    };
    // After a restart: the finished one is not resumed, the archived one still says why.
    let (id, second) = id;
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(c.state(id), Some(State::Finished));
    assert!(!c.resume(id).await.unwrap());
    assert!(c.resume(second).await.is_err());
}

#[tokio::test]
async fn a_pool_without_a_budget_says_so_not_a_billion_pairs() {
    let c = on_temporary_store();
    let open = "name = \"open\"\ngame = \"loa\"\nformat = \"pool\"\n\
                openings = { plies = 2 }\nlimits = { nodes = 1 }\n\
                [[engine]]\nname = \"a\"\nplayer = \"random:seed=1\"\n\
                [[engine]]\nname = \"b\"\nplayer = \"random:seed=2\"\n";
    let id = c
        .submit(open, "pool.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.pairs_planned(), None);
    let note = status.openings_note().unwrap();
    assert!(
        note.contains("until it is cancelled") && !note.contains("1000000000"),
        "{note}"
    );
}
