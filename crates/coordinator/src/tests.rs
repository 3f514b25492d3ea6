//! The coordinator as a whole, on a real store: late results, metrics retention,
//! report details, terminations across a restart, failures and exclusions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use prometheus::Registry;
use tourney_model::job::PairJob;
use tourney_model::tournament::{State, TournamentConfig};
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;

use crate::clock::ManualClock;
use crate::commit::Reported;
use crate::scheduler::LeaseId;
use crate::state::{Coordinator, Finished, Settings};
use crate::views::RATINGS_EVERY;

/// Four pairs of two seeded random players at one node a move.
fn match_file() -> String {
    MatchFile {
        name: "late",
        limits: "{ nodes = 1, tc = \"10+0.1\" }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml()
}

async fn coordinator(dir: &tempfile::TempDir, lease_ms: u64) -> (Arc<Coordinator>, u64) {
    let (c, id, _) = on_manual_clock(dir, lease_ms).await;
    (c, id)
}

/// A coordinator on `dir` with the [`match_file`] tournament submitted, going by a clock the test
/// moves.
async fn on_manual_clock(
    dir: &tempfile::TempDir,
    lease_ms: u64,
) -> (Arc<Coordinator>, u64, Arc<ManualClock>) {
    let settings = Settings {
        lease_ms,
        heartbeat_ms: lease_ms / 2,
        ..Settings::default()
    };
    let store = Store::open(dir.path()).unwrap();
    let clock = Arc::new(ManualClock::default());
    let c = Coordinator::open_with_clock(store, settings, &Registry::new(), clock.clone()).unwrap();
    let id = c
        .submit(&match_file(), "late.toml", "", BTreeMap::new())
        .await
        .unwrap();
    (c, id, clock)
}

/// A record's player: the job's engine named `name`, as a worker names it.
fn player(job: &PairJob, name: &str) -> String {
    let engine = [&job.first, &job.second]
        .into_iter()
        .find(|e| e.name == name)
        .expect("an engine of the job");
    let mut player = tourney_model::PlayerRecord::default();
    engine.describe(&mut player);
    serde_json::to_string(&player).unwrap()
}

/// The records of a pair `a` wins both games of, from the job's opening: in each the
/// other side, once it is to move (after one legal move of `a` when `a` is to move first),
/// ends the game by `endings` (engine failures: the side to move loses). LOA: the
/// pairing's first engine has Black in game 0 and White in game 1.
fn won_by_a_json(job: &PairJob, endings: [&str; 2]) -> String {
    pair_json(job, ["a", "a"], endings)
}

/// The records of a pair whose game `g` engine `winners[g]` wins, the loser failing by
/// `endings[g]` once it is to move (after one legal move of the winner when the winner is
/// to move first).
fn pair_json(job: &PairJob, winners: [&str; 2], endings: [&str; 2]) -> String {
    use tourney_rules::{Color, Loa, Position};
    let (first, second) = (job.first.name.as_str(), job.second.name.as_str());
    let start: Loa = job.opening.parse().unwrap();
    let game = |white: &str, black: &str, winner: &str, ending: &str| {
        let winner_plays = if white == winner {
            Color::White
        } else {
            Color::Black
        };
        let moves = if start.turn() == winner_plays {
            format!(r#"{{"move":"{}","time_ms":1}}"#, start.legal_moves()[0])
        } else {
            String::new()
        };
        let result = if winner_plays == Color::White {
            "1-0"
        } else {
            "0-1"
        };
        // A time forfeit says how long the losing move took: past a 10 s clock.
        let meta = if ending == "time-forfeit" {
            r#","meta":{"forfeit_ms":10200}"#
        } else {
            ""
        };
        format!(
            r#"{{"game":"loa","white":{},"black":{},"time_control":"10+0.1","start":"{}","moves":[{moves}],"result":"{result}","termination":"{ending}"{meta}}}"#,
            player(job, white),
            player(job, black),
            job.opening
        )
    };
    format!(
        "[{},{}]",
        game(second, first, winners[0], endings[0]),
        game(first, second, winners[1], endings[1])
    )
}

/// A pair whose game `g` `winners[g]` wins, as `worker` reports it and the coordinator
/// checks it.
fn pair_won_by(
    c: &Coordinator,
    worker: &str,
    job: &PairJob,
    lease: LeaseId,
    winners: [&str; 2],
    endings: [&str; 2],
) -> Finished {
    let first = job.first.name.as_str();
    c.check_reported(
        worker,
        Reported {
            tournament: job.tournament,
            pair: job.pair,
            lease,
            half_points: winners.map(|w| if w == first { 2 } else { 0 }),
            games_json: pair_json(job, winners, endings),
            ticket: job.ticket.clone(),
        },
    )
    .expect("a consistent result")
}

/// `a` wins both games of the job's pair (by the other side's crash), as a worker reports
/// it and the coordinator checks it.
fn won_by_a(c: &Coordinator, worker: &str, job: &PairJob, lease: LeaseId) -> Finished {
    won_by_a_ending(c, worker, job, lease, ["crash", "crash"])
}

/// Leases up to `pairs` pairs to `worker` and reports each as won by `a` (durably); the
/// jobs it played.
async fn lease_and_win(c: &Coordinator, worker: &str, pairs: usize) -> Vec<PairJob> {
    let (lease, jobs) = c.lease(worker, pairs).unwrap();
    let results = jobs.iter().map(|j| won_by_a(c, worker, j, lease)).collect();
    c.report(worker, results).await.unwrap();
    jobs
}

/// [`won_by_a`], the games ending by `endings`.
fn won_by_a_ending(
    c: &Coordinator,
    worker: &str,
    job: &PairJob,
    lease: LeaseId,
    endings: [&str; 2],
) -> Finished {
    pair_won_by(c, worker, job, lease, ["a", "a"], endings)
}

/// Every line an export of `filter` gives, page by page.
fn exported(c: &Coordinator, id: u64, filter: &crate::ExportFilter) -> Vec<String> {
    let (mut lines, mut from) = (Vec::new(), Some(0));
    while let Some(at) = from {
        let (page, next) = c.export_page(id, filter, at).unwrap();
        lines.extend(page);
        from = next;
    }
    lines
}

/// The pair of each exported line.
fn pairs_of(lines: &[String]) -> Vec<u64> {
    (lines.iter())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["pair"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// A coordinator on a store in memory, with the default settings.
fn on_temporary_store() -> Arc<Coordinator> {
    Coordinator::open(
        Store::temporary().unwrap(),
        Settings::default(),
        &Registry::new(),
    )
    .unwrap()
}

/// The store in `dir` opened again once the coordinator that had it is dropped: sled lets
/// go of its lock once the committer task and its background flusher have stopped.
async fn reopen(dir: &tempfile::TempDir) -> Store {
    for _ in 0..100 {
        if let Ok(store) = Store::open(dir.path()) {
            return store;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the store does not reopen")
}

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
    assert!(
        d["Openings"].starts_with("4 generated: 2 random plies, seed 1"),
        "{d:?}"
    );
    assert_eq!(
        (d["Engine a"].as_str(), d["Engine b"].as_str()),
        ("random", "random:seed=2")
    );
    assert!(d["Started"].ends_with(" UTC"), "{d:?}");
    assert_eq!(d["ETA"], "after the first pairs");
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let jobs = lease_and_win(&c, &worker, 2).await;
    let eta = details(&c)["ETA"].clone();
    assert!(eta.starts_with("0:00:0") && eta.contains("(at "), "{eta}");
    let (_, report) = c.report_of(id).unwrap();
    // White's results per opening: `a` won both games of each pair, once with each colour.
    assert_eq!(report.openings.len(), 2);
    for o in &report.openings {
        assert_eq!((o.games, o.white_points), (2, 1.0));
        assert_eq!(o.position, jobs[o.index as usize].opening, "{o:?}");
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
async fn a_reported_pair_must_agree_with_its_own_records() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let job = &jobs[0];
    let reported = |half_points: [u32; 2], games_json: String| Reported {
        tournament: id,
        pair: job.pair,
        lease,
        half_points,
        games_json,
        ticket: job.ticket.clone(),
    };
    let good = won_by_a_json(job, ["crash", "crash"]);
    let checked = c
        .check_reported(&worker, reported([2, 2], good.clone()))
        .unwrap();
    // Colours come from the records: LOA's first engine ("a") had Black in game 0.
    assert_eq!(checked.outcome.white, [1, 0]);
    assert_eq!(checked.summaries.len(), 2);
    // Half points that contradict the results decide nothing.
    assert!(
        c.check_reported(&worker, reported([2, 0], good.clone()))
            .is_err()
    );
    assert!(
        c.check_reported(&worker, reported([0, 0], good.clone()))
            .is_err()
    );
    // Players who are not the pair's, colours not swapped, another game, not two games.
    let stranger = good.replacen("\"name\":\"a\"", "\"name\":\"z\"", 1);
    assert!(
        c.check_reported(&worker, reported([2, 2], stranger))
            .is_err()
    );
    let same_colours = format!(
        "[{g},{g}]",
        g = good
            .trim_start_matches('[')
            .split("},{\"game\"")
            .next()
            .unwrap()
            .to_string()
            + "}"
    );
    assert!(
        c.check_reported(&worker, reported([2, 2], same_colours))
            .is_err()
    );
    let amazons = good.replace("\"loa\"", "\"amazons\"");
    assert!(
        c.check_reported(&worker, reported([2, 2], amazons))
            .is_err()
    );
    assert!(
        c.check_reported(&worker, reported([2, 2], "[]".into()))
            .is_err()
    );
    assert!(
        c.check_reported(&worker, reported([2, 2], "not json".into()))
            .is_err()
    );
    // Games that do not replay: another start, an illegal move, an ending the moves do not
    // reach, a failure blamed on the side that was not to move.
    let refusal = |json: String| {
        c.check_reported(&worker, reported([2, 2], json))
            .unwrap_err()
            .kind()
    };
    let other_start = good.replace(&job.opening, "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w");
    assert_eq!(refusal(other_start), "start");
    let illegal = won_by_a_json(job, ["crash", "crash"]).replacen(
        r#""moves":[]"#,
        r#""moves":[{"move":"a1-a8","time_ms":1}]"#,
        1,
    );
    assert_eq!(refusal(illegal), "move");
    assert_eq!(
        refusal(won_by_a_json(job, ["connection", "crash"])),
        "ending"
    );
    assert_eq!(
        refusal(won_by_a_json(job, ["max-plies", "crash"])),
        "ending"
    );
    assert_eq!(
        refusal(won_by_a_json(job, ["adjudication", "crash"])),
        "ending"
    );
    let blamed = won_by_a_json(job, ["crash", "crash"]).replacen(
        r#""result":"0-1""#,
        r#""result":"1-0""#,
        1,
    );
    assert!(matches!(refusal(blamed), "ending" | "half-points"));
    // Unknown tournaments and pairs past the end.
    let mut unknown = reported([2, 2], good.clone());
    unknown.tournament = 999;
    assert!(c.check_reported(&worker, unknown).is_err());
    let mut far = reported([2, 2], good);
    far.pair = 1_000_000;
    assert!(c.check_reported(&worker, far).is_err());
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

#[test]
fn repeated_games_are_counted_in_pair_order_whatever_order_they_come_in() {
    let game = |white: &str| -> tourney_model::GameSummary {
        serde_json::from_str(&format!(
            r#"{{"game":"loa","white":{{"name":"{white}"}},"black":{{"name":"x"}},"moves":[{{"move":"b1-b3","time_ms":1}}],"result":"1-0","termination":"connection"}}"#
        ))
        .unwrap()
    };
    let pair = || [game("a").fingerprint(), game("b").fingerprint()];
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let mut d = crate::history::Duplicates::default();
        for p in order {
            d.count(p, &pair());
        }
        assert_eq!(d.repeats, 4, "{order:?}");
        assert_eq!(
            d.pairs.iter().copied().collect::<Vec<_>>(),
            vec![1, 2],
            "{order:?}"
        );
    }
}

/// Plays `pairs` pairs of a two-engine match on `c`: honest workers `h1`..`h3` in turn
/// report a mix of results (a split pair, `a` winning both, a split pair, `b` winning both,
/// in that order of their pairs), and worker `odd` reports every fourth pair as `odd_pair`
/// makes it. Returns the workers' ids.
async fn play_with_an_odd_worker(
    c: &Coordinator,
    pairs: usize,
    mut odd_pair: impl FnMut(&Coordinator, &str, &PairJob, LeaseId) -> Finished,
) -> Vec<String> {
    let workers: Vec<String> = ["h1", "h2", "h3", "odd"]
        .iter()
        .map(|name| c.register(name, "test", 1, "t").unwrap().0)
        .collect();
    for turn in 0..pairs {
        let worker = &workers[turn % 4];
        let (lease, jobs) = c.lease(worker, 1).unwrap();
        let job = &jobs[0];
        let result = if worker.starts_with("odd") {
            odd_pair(c, worker, job, lease)
        } else {
            let winners = match (turn / 4) % 4 {
                0 | 2 => ["a", "b"],
                1 => ["a", "a"],
                _ => ["b", "b"],
            };
            pair_won_by(c, worker, job, lease, winners, ["crash", "crash"])
        };
        c.report(worker, vec![result]).await.unwrap();
    }
    workers
}

fn a_file(pairs: u64) -> String {
    MatchFile {
        name: "odd",
        pairs,
        limits: "{ nodes = 1, tc = \"10+0.1\" }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml()
}

#[tokio::test]
async fn a_worker_unlike_the_others_is_suspect_and_excluding_it_makes_every_figure_again() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Registry::new();
    let c = Coordinator::open(
        Store::open(dir.path()).unwrap(),
        Settings::default(),
        &registry,
    )
    .unwrap();
    let id = c
        .submit(&a_file(64), "odd.toml", "", BTreeMap::new())
        .await
        .unwrap();
    // `odd` reports every one of its 16 pairs as won twice by `a`.
    play_with_an_odd_worker(&c, 64, won_by_a).await;
    let (status, report) = c.report_of(id).unwrap();
    assert_eq!(status.state, State::Finished);
    assert_eq!((status.suspect_workers, status.pairs_excluded), (1, 0));
    let w = &report.workers;
    assert!(w.p < 0.01 && w.dof == 6, "{w:?}");
    let odd = &w.workers[0];
    assert_eq!((odd.worker.as_str(), odd.pairs), ("odd", 16));
    assert_eq!(odd.pentanomial, [0, 0, 0, 0, 16]);
    assert!(odd.residual > 3.0, "{odd:?}");
    assert!(odd.suspect[0].starts_with("results unlike the other workers'"));
    for honest in &w.workers[1..] {
        assert!(
            honest.suspect.is_empty() && honest.residual < 3.0,
            "{honest:?}"
        );
        assert_eq!(honest.pentanomial, [4, 0, 8, 0, 4]);
    }
    assert!(
        report
            .text()
            .contains("suspect: results unlike the other workers'")
    );
    assert!(
        c.metrics_text()
            .contains(&format!("tourney_workers_suspect{{tournament=\"{id}\"}} 1"))
    );
    let with_odd = status.ratings.players.clone();
    assert_eq!(with_odd[0].name, "a");
    assert_eq!(report.terminations, [("crash".to_string(), 128)]);

    // Excluded: the standings, terminations and openings are made from the 48 honest
    // pairs, where `a` and `b` are even.
    assert!(
        c.exclude_worker(id, "odd", true, "").await.is_err(),
        "a reason is required"
    );
    assert!(c.exclude_worker(id, "nobody", true, "x").await.is_err());
    assert_eq!(c.exclude_worker(99, "odd", true, "x").await.unwrap(), None);
    let pairs = c
        .exclude_worker(id, "odd#4", true, "always wins for a")
        .await
        .unwrap();
    assert_eq!(pairs, Some(16));
    assert!(c.exclude_worker(id, "odd", true, "again").await.is_err());
    let (status, report) = c.report_of(id).unwrap();
    assert_eq!((status.suspect_workers, status.pairs_excluded), (0, 16));
    let players = &status.ratings.players;
    assert!(players.iter().all(|p| p.games == 96), "{players:?}");
    assert!((players[0].score - 0.5).abs() < 1e-9, "{players:?}");
    assert_eq!(report.terminations, [("crash".to_string(), 96)]);
    let games_per_opening: u64 = report.openings.iter().map(|o| o.games).sum();
    assert_eq!(games_per_opening, 96);
    let odd = report
        .workers
        .workers
        .iter()
        .find(|w| w.worker == "odd")
        .unwrap();
    assert!(
        odd.excluded
            .as_ref()
            .unwrap()
            .ends_with(": always wins for a")
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.starts_with("16 completed pairs are left out"))
    );
    assert!(
        report.workers.p > 0.5,
        "the others agree: {:?}",
        report.workers
    );
    assert!(
        c.metrics_text()
            .contains(&format!("tourney_pairs_excluded{{tournament=\"{id}\"}} 16"))
    );

    // The decision survives a restart, with its history.
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    let (status, _) = c.report_of(id).unwrap();
    assert_eq!(status.pairs_excluded, 16);
    assert!(status.ratings.players.iter().all(|p| p.games == 96));

    // Counted again: the figures are those from before.
    c.exclude_worker(id, "odd", false, "checked: a fluke")
        .await
        .unwrap();
    let (status, _) = c.report_of(id).unwrap();
    assert_eq!((status.suspect_workers, status.pairs_excluded), (1, 0));
    assert_eq!(status.ratings.players, with_odd);
    let record = &c.store().tournaments().unwrap()[0];
    let history: Vec<(bool, &str)> = record
        .exclusions
        .iter()
        .map(|e| (e.excluded, e.reason.as_str()))
        .collect();
    assert_eq!(
        history,
        [(true, "always wins for a"), (false, "checked: a fluke")]
    );
}

#[tokio::test]
async fn a_worker_that_loses_on_time_far_more_than_the_others_is_suspect() {
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(48), "odd.toml", "", BTreeMap::new())
        .await
        .unwrap();
    // Its results are like the others', but every game it plays is lost on time.
    let mut n = 0;
    play_with_an_odd_worker(&c, 48, move |c, w, job, lease| {
        n += 1;
        let winners = [["a", "b"], ["a", "a"], ["a", "b"], ["b", "b"]][(n - 1) % 4];
        pair_won_by(c, w, job, lease, winners, ["time-forfeit", "time-forfeit"])
    })
    .await;
    let (status, report) = c.report_of(id).unwrap();
    assert_eq!(status.suspect_workers, 1);
    let odd = &report.workers.workers[0];
    assert_eq!((odd.worker.as_str(), odd.time_losses), ("odd", 24));
    assert_eq!(odd.suspect.len(), 1, "{odd:?}");
    assert!(
        odd.suspect[0].starts_with("time losses: 24 of 24"),
        "{odd:?}"
    );
    // Who lost those games is counted per engine too.
    let time: u64 = report
        .engine_failures
        .iter()
        .filter(|(_, t, _)| t == "time-forfeit")
        .map(|(_, _, n)| n)
        .sum();
    assert_eq!(time, 24);
}

#[tokio::test]
async fn a_worker_claiming_endless_slots_leases_a_bounded_fair_share() {
    let c = on_temporary_store();
    let file = MatchFile {
        name: "big",
        pairs: 20_000,
        limits: "{ nodes = 1 }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml();
    c.submit(&file, "big.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let greedy = c.register("greedy", "test", u32::MAX, "t").unwrap().0;
    let (_, taken) = c.lease(&greedy, usize::MAX).unwrap();
    assert_eq!(taken.len(), Settings::default().max_pairs_per_lease);
    // Near the end a worker gets its slots' share of what is left, not all of it.
    let modest = c.register("modest", "test", 256, "t").unwrap().0;
    let mut leased = taken.len();
    while let Some((_, jobs)) = c.lease(&greedy, usize::MAX) {
        leased += jobs.len();
        if 20_000 - leased < 2_000 {
            break;
        }
    }
    let (_, share) = c.lease(&greedy, usize::MAX).unwrap();
    assert!(
        share.len() <= (20_000 - leased).div_ceil(2),
        "{}",
        share.len()
    );
    assert!(
        c.lease(&modest, usize::MAX).is_some(),
        "the other worker still gets work"
    );
}

#[tokio::test]
async fn a_thousand_tournaments_are_listed_by_pages_and_the_overview_shows_the_recent_ones() {
    let c = on_temporary_store();
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    for _ in 0..1000 {
        c.submit(&match_file(), "m.toml", "", BTreeMap::new())
            .await
            .unwrap();
        lease_and_win(&c, &worker, 4).await;
    }
    // Pages of 300, newest first, cover every tournament once.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (page, next) = c.page(after, 300);
        assert!(page.len() <= 300);
        seen.extend(page.iter().map(|s| s.id));
        match next {
            Some(id) => after = Some(id),
            None => break,
        }
    }
    assert_eq!(seen, (1..=1000).rev().collect::<Vec<u64>>());
    let overview = serde_json::to_value(crate::dashboard::overview_of(&c)).unwrap();
    let listed = overview["tournaments"].as_array().unwrap();
    assert_eq!(listed.len(), crate::dashboard::TOURNAMENTS_LISTED);
    assert_eq!(listed[0]["id"], 1000);
    assert_eq!(overview["tournaments_total"], 1000);
}

#[tokio::test]
async fn exports_keep_the_pairs_engine_and_times_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    lease_and_win(&c, &worker, 4).await;
    let count = |filter: crate::ExportFilter| exported(&c, id, &filter).len();
    assert_eq!(count(Default::default()), 8);
    let pairs = |from, to| crate::ExportFilter {
        pairs: Some((from, to)),
        ..Default::default()
    };
    assert_eq!(count(pairs(1, 2)), 4);
    assert_eq!(count(pairs(3, u64::MAX)), 2);
    assert_eq!(count(pairs(9, 20)), 0);
    let lines = exported(&c, id, &pairs(2, 2));
    assert!(lines.iter().all(|l| l.contains(r#""pair":2"#)), "{lines:?}");
    let engine = |name: &str| crate::ExportFilter {
        engine: Some(name.into()),
        ..Default::default()
    };
    assert_eq!((count(engine("a")), count(engine("nobody"))), (8, 0));
    // These records carry no start time: a time filter keeps none of them.
    let since = crate::ExportFilter {
        since_ms: Some(0),
        ..Default::default()
    };
    assert_eq!(count(since), 0);
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
    let [digests, summary] = [false, true]
        .map(|ended| crate::history::Restored::read(&store, id, &config, ended).unwrap());
    let done = |r: &crate::history::Restored| r.done.outcomes(&config).collect::<Vec<_>>();
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
    let mut kept = crate::history::Duplicates::default();
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
async fn an_export_holds_only_acknowledged_pairs() {
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(10), "ack.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    lease_and_win(&c, &worker, 2).await;
    // A batch on its way to disk is readable in the store before it is acknowledged (and
    // counted): as pairs 2 and 3, copies of pair 0 written past the scheduler.
    let stored = c.store().pair(id, 0).unwrap().unwrap();
    let unacknowledged: Vec<_> = [2, 3]
        .map(|pair| {
            let mut record = stored.clone();
            record.outcome.pair = pair;
            record
        })
        .into();
    c.store().commit_pairs(&unacknowledged).await.unwrap();
    let lines = exported(&c, id, &crate::ExportFilter::default());
    assert_eq!(pairs_of(&lines), [0, 0, 1, 1]);
    assert_eq!(c.status(id).unwrap().pairs_done, 2);
}

#[tokio::test]
async fn an_export_comes_in_pages_of_about_a_mebibyte_in_pair_order() {
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(5000), "odd.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 256, "t").unwrap().0;
    for _ in 0..10 {
        lease_and_win(&c, &worker, 500).await;
    }
    let all = crate::ExportFilter::default();
    let (first, next) = c.export_page(id, &all, 0).unwrap();
    let bytes: usize = first.iter().map(String::len).sum();
    assert!(
        next.is_some() && bytes >= crate::views::EXPORT_PAGE_BYTES,
        "{bytes} bytes, then {next:?}"
    );
    let lines = exported(&c, id, &all);
    let pairs = pairs_of(&lines);
    assert_eq!(pairs.len(), 10_000);
    assert!(pairs.windows(2).all(|w| w[0] <= w[1]), "pair order");
    assert_eq!(pairs.iter().filter(|&&p| p == 4999).count(), 2);
    let tail = crate::ExportFilter {
        pairs: Some((1400, 1449)),
        ..Default::default()
    };
    assert_eq!(exported(&c, id, &tail).len(), 100);
}

/// A version of a built-in player.
fn version(
    name: &str,
    player: &str,
    parent: Option<&str>,
) -> tourney_model::version::EngineVersion {
    tourney_model::version::EngineVersion {
        name: name.into(),
        player: Some(player.into()),
        command: None,
        artifact: None,
        options: BTreeMap::new(),
        parent: parent.map(str::to_string),
        note: String::new(),
        created_ms: 0,
    }
}

/// Submits a match of `pairs` pairs between versions `a` and `b` and plays it to the end,
/// `b` winning every game; its id.
async fn versions_match(c: &Coordinator, a: &str, b: &str, pairs: u64) -> u64 {
    let file = MatchFile {
        name: "versions",
        pairs,
        limits: "{ nodes = 1 }",
        engines: [(a, &format!("version:{a}")), (b, &format!("version:{b}"))],
        ..Default::default()
    };
    let id = c
        .submit(&file.toml(), "versions.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, pairs as usize).unwrap();
    let results = jobs
        .iter()
        .map(|j| pair_won_by(c, &worker, j, lease, [b, b], ["crash", "crash"]))
        .collect();
    c.report(&worker, results).await.unwrap();
    assert_eq!(c.status(id).unwrap().state, State::Finished);
    id
}

#[tokio::test]
async fn versions_are_used_by_name_never_changed_once_played_and_rated_on_one_timeline() {
    let c = on_temporary_store();
    c.add_version(version("v1", "random:seed=1", None), false)
        .unwrap();
    c.add_version(version("v2", "random:seed=2", Some("v1")), false)
        .unwrap();
    c.add_version(version("v3", "random:seed=3", Some("v2")), false)
        .unwrap();
    let refused = |v, replace| c.add_version(v, replace).unwrap_err().to_string();
    assert!(refused(version("v4", "random", Some("v0")), false).contains("no parent version 'v0'"));
    assert!(refused(version("v4", "nosuch:depth=1", None), false).contains("player nosuch"));
    assert!(refused(version("v1", "random", None), false).contains("exists already"));
    let unknown = MatchFile {
        engines: [("a", "version:v1"), ("b", "version:v9")],
        ..Default::default()
    }
    .toml();
    let e = c
        .submit(&unknown, "unknown.toml", "", BTreeMap::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("engine[1].version: no version 'v9'"), "{e}");

    let first = versions_match(&c, "v1", "v2", 6).await;
    let second = versions_match(&c, "v2", "v3", 6).await;
    assert!(refused(version("v1", "random:seed=9", None), true).contains("has played"));
    c.add_version(version("v4", "random", None), false).unwrap();
    c.add_version(version("v4", "random:seed=4", None), true)
        .unwrap();

    let timeline = c.timeline(None).unwrap();
    assert_eq!(timeline.anchor.as_deref(), Some("v1"));
    assert_eq!(timeline.games, 24);
    let rows: Vec<(&str, Option<f64>, Vec<u64>)> = timeline
        .entries
        .iter()
        .map(|e| {
            (
                e.version.name.as_str(),
                e.rating.as_ref().map(|r| r.elo),
                e.tournaments.clone(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[0].0, rows[0].1), ("v1", Some(0.0)));
    let (v2, v3) = (rows[1].1.unwrap(), rows[2].1.unwrap());
    assert!(
        0.0 < v2 && v2 < v3,
        "each version beat its parent: {rows:?}"
    );
    assert_eq!(rows[0].2, [first]);
    assert_eq!(rows[1].2, [first, second]);
    assert_eq!(rows[2].2, [second]);
    assert_eq!((rows[3].0, rows[3].1), ("v4", None), "no games yet");
    let at_v3 = c.timeline(Some("v3")).unwrap();
    let elo = |t: &crate::Timeline, name: &str| {
        t.entries
            .iter()
            .find(|e| e.version.name == name)
            .unwrap()
            .rating
            .as_ref()
            .unwrap()
            .elo
    };
    assert_eq!(elo(&at_v3, "v3"), 0.0);
    assert!((elo(&at_v3, "v1") - (-v3)).abs() < 1e-6);
    assert!(
        c.timeline(Some("v4"))
            .unwrap_err()
            .to_string()
            .contains("anchor 'v4'")
    );
    // A tournament between versions shows them all in its HTML report.
    let (_, report) = c.report_with_timeline(second).unwrap();
    assert_eq!(
        c.report_of(second).unwrap().1.timeline,
        None,
        "the live view does without"
    );
    let html = report.html(|id| Some(format!("report-{id}.html")));
    assert!(html.contains("<section id=\"timeline\">"), "{html}");
    assert!(html.contains(&format!("<a href=\"report-{first}.html\">#{first}</a>")));

    // Listed oldest first.
    let versions = c.versions();
    assert_eq!(
        versions.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["v1", "v2", "v3", "v4"]
    );
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
        jobs[0].opening,
        after("d1-d3"),
        "pair 0 plays the opening at offset 1"
    );
    assert_eq!(
        jobs[1].opening,
        after("b1-b3"),
        "and the suite wraps around"
    );
}

/// A tuning run of `concentration` (start 20 in 0..60) over `pairs` pairs of `ab:depth=1`,
/// verified by an SPRT.
fn tuning_file(pairs: u64) -> String {
    format!(
        r#"name = "tune"
game = "loa"
format = "spsa"
openings = {{ plies = 2, seed = 1 }}
limits = {{ nodes = 1 }}

[spsa]
pairs = {pairs}
verify = {{ elo0 = 0, elo1 = 10, max_pairs = 50 }}

[[spsa.param]]
name = "concentration"
start = 20
min = 0
max = 60
c_end = 4
r_end = 0.05

[[engine]]
name = "t"
player = "ab:depth=1"
"#
    )
}

#[tokio::test]
async fn a_long_tuning_run_keeps_a_bounded_evenly_spaced_trajectory_of_the_values_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let pairs = 1_000;
    let id = c
        .submit(&tuning_file(pairs), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    // The latest values of every report along the way.
    let mut seen = Vec::new();
    while c.status(id).unwrap().state != State::Finished {
        let (lease, jobs) = c.lease(&worker, 64).unwrap();
        let results = jobs
            .iter()
            .map(|j| {
                let winner = [&j.first, &j.second][(j.pair % 3 == 0) as usize];
                let w = winner.name.as_str();
                pair_won_by(&c, &worker, j, lease, [w, w], ["crash", "crash"])
            })
            .collect();
        c.report(&worker, results).await.unwrap();
        let spsa = c.report_of(id).unwrap().1.spsa.unwrap();
        let last = spsa.trajectory.last().unwrap();
        assert_eq!(last.pairs, spsa.pairs);
        seen.push((last.pairs, last.values.clone()));
    }
    let spsa = c.report_of(id).unwrap().1.spsa.unwrap();
    let points = &spsa.trajectory;
    let bound = crate::tuning::TRAJECTORY_POINTS;
    assert!(
        (bound..=2 * bound + 1).contains(&points.len()),
        "{} points",
        points.len()
    );
    assert_eq!((points[0].pairs, &points[0].values[..]), (0, &[20.0][..]));
    assert_eq!(points.last().unwrap().pairs, pairs);
    let stride = points[1].pairs;
    for (i, p) in points[..points.len() - 1].iter().enumerate() {
        assert_eq!(p.pairs, i as u64 * stride, "evenly spaced");
    }
    // A point kept is the values the run had then, as its report said at the time.
    let mut matched = 0;
    for (at, values) in &seen {
        if let Some(p) = points.iter().find(|p| p.pairs == *at) {
            assert_eq!(&p.values, values, "after {at} pairs");
            matched += 1;
        }
    }
    assert!(matched >= 3, "{matched} reports on the trajectory");
}

/// The `concentration` a job's engine plays with.
fn concentration(engine: &tourney_model::job::Engine) -> i64 {
    let tourney_model::job::EngineKind::BuiltIn(spec) = &engine.kind else {
        panic!("a built-in player");
    };
    let value = spec
        .split("concentration=")
        .nth(1)
        .expect("the tuned weight");
    value.split(',').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_tuning_run_moves_its_parameters_by_the_results_and_then_verifies_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let bad = tuning_file(40).replace("\"concentration\"", "\"speed\"");
    let e = c.submit(&bad, "tune.toml", "", BTreeMap::new()).await;
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("spsa.param[0].name") && e.contains("unknown key 'speed'"),
        "{e}"
    );

    let id = c
        .submit(&tuning_file(40), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let mut played = Vec::new();
    // A few pairs at a time, so later pairs are played around the moved values.
    while c.status(id).unwrap().state != State::Finished {
        let (lease, jobs) = c.lease(&worker, 5).unwrap();
        let results = jobs
            .iter()
            .map(|j| {
                let (first, second) = (concentration(&j.first), concentration(&j.second));
                played.push((j.pair, first, second));
                // The side with the higher concentration wins both games.
                let winner = if first > second { &j.first } else { &j.second };
                let w = winner.name.as_str();
                pair_won_by(&c, &worker, j, lease, [w, w], ["crash", "crash"])
            })
            .collect();
        c.report(&worker, results).await.unwrap();
    }
    assert_eq!(played.len(), 40);
    let first_jobs = &played[..5];
    for &(pair, plus, minus) in first_jobs {
        // The first lease: both sides around the start, moved opposite ways.
        assert!(
            (plus + minus - 40).abs() <= 1,
            "pair {pair}: {plus} {minus}"
        );
        assert!(plus != minus, "pair {pair} is perturbed");
    }
    let (_, report) = c.report_of(id).unwrap();
    let spsa = report.spsa.clone().expect("a tuning section");
    assert_eq!((spsa.pairs, spsa.planned), (40, 40));
    let tuned = spsa.params[0].value;
    assert!(
        tuned > 25.0,
        "the parameter moved towards the winners: {tuned}"
    );
    assert!(spsa.trajectory.len() >= 2);
    assert_eq!(spsa.trajectory[0].values, [20.0]);
    assert_eq!(spsa.trajectory.last().unwrap().values, [tuned]);
    let rounded = tourney_model::spsa::played(tuned);
    assert_eq!(spsa.result, format!("ab:depth=1,concentration={rounded}"));
    assert_eq!(spsa.start, "ab:depth=1,concentration=20");
    assert!(
        report
            .text()
            .contains(&format!("Tuned: ab:depth=1,concentration={rounded}"))
    );
    let html = report.html(|id| Some(format!("/#t={id}")));
    assert!(html.contains("<section id=\"spsa\">"));

    // The verification SPRT: tuned against start, linked both ways.
    let vid = spsa.verification.expect("a verification SPRT");
    assert!(
        html.contains(&format!(
            "Verification SPRT: <a href=\"/#t={vid}\">tournament #{vid}</a>"
        )),
        "{html}"
    );
    let unlinked = report.html(|_| None);
    assert!(unlinked.contains(&format!("Verification SPRT: tournament #{vid}</p>")));
    let v = c.status(vid).unwrap();
    assert_eq!(v.config.format, tourney_model::tournament::Format::Sprt);
    let engines: Vec<(&str, &str)> = (v.config.engines.iter())
        .map(|e| (e.name.as_str(), e.player.as_deref().unwrap()))
        .collect();
    let tuned_spec = format!("ab:depth=1,concentration={rounded}");
    assert_eq!(
        engines,
        [
            ("t-tuned", tuned_spec.as_str()),
            ("t-start", "ab:depth=1,concentration=20")
        ]
    );
    assert_eq!(v.config.sprt.as_ref().unwrap().elo1, 10.0);
    assert_eq!(
        v.openings,
        c.status(id).unwrap().openings,
        "the run's openings"
    );
    let records = c.store.tournaments().unwrap();
    let of = |id| records.iter().find(|r| r.id == id).unwrap();
    assert_eq!(
        (of(id).verification, of(vid).tuned_by),
        (Some(vid), Some(id))
    );

    // A restart folds the same values again and submits no second verification.
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let again = c.report_of(id).unwrap().1.spsa.unwrap();
    assert_eq!(again.params[0].value, tuned);
    assert_eq!(again.verification, Some(vid));
    assert_eq!(c.store.tournaments().unwrap().len(), 2);
}

/// A pair whose two games the scores adjudicate for White after two plies (resign at 600
/// for one move each), played on and ending `played_on[g]`.
fn adjudicated_pair(
    c: &Coordinator,
    worker: &str,
    job: &PairJob,
    lease: LeaseId,
    played_on: [&str; 2],
) -> Finished {
    use tourney_rules::{Color, Loa, Position};
    let (first, second) = (job.first.name.as_str(), job.second.name.as_str());
    let start: Loa = job.opening.parse().unwrap();
    let mut position = start;
    let mut moves = Vec::new();
    for _ in 0..2 {
        let mv = position.legal_moves()[0];
        // Each mover's score from its own view: White ahead by 7.
        let score = if position.turn() == Color::White {
            700
        } else {
            -700
        };
        moves.push(format!(
            r#"{{"move":"{mv}","time_ms":1,"score":"cp {score}"}}"#
        ));
        position = position.play(mv).unwrap();
    }
    let game = |white: &str, black: &str, end: &str| {
        format!(
            r#"{{"game":"loa","white":{},"black":{},"time_control":"nodes=1","start":"{}","moves":[{}],"result":"1-0","termination":"adjudication","meta":{{"played_on":"{end}"}}}}"#,
            player(job, white),
            player(job, black),
            job.opening,
            moves.join(",")
        )
    };
    let games_json = format!(
        "[{},{}]",
        game(second, first, played_on[0]),
        game(first, second, played_on[1])
    );
    c.check_reported(
        worker,
        Reported {
            tournament: job.tournament,
            pair: job.pair,
            lease,
            half_points: [0, 2],
            games_json,
            ticket: job.ticket.clone(),
        },
    )
    .expect("a consistent result")
}

#[tokio::test]
async fn adjudicated_games_played_on_say_how_often_adjudication_was_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let file = MatchFile {
        name: "judged",
        pairs: 3,
        limits: "{ nodes = 1 }",
        adjudication: Some("{ resign = { score = 600, moves = 1 }, play_on = 0.5 }"),
        engines: [("a", "ab:depth=1"), ("b", "ab:depth=2")],
        ..Default::default()
    }
    .toml();
    let id = c
        .submit(&file, "judged.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 2).unwrap();
    let results = vec![
        adjudicated_pair(&c, &worker, &jobs[0], lease, ["1-0", "0-1"]),
        adjudicated_pair(&c, &worker, &jobs[1], lease, ["1-0", "1/2-1/2"]),
    ];
    c.report(&worker, results).await.unwrap();
    let check = c.report_of(id).unwrap().1.adjudication_check.unwrap();
    assert_eq!(
        (
            check.adjudicated,
            check.played_on,
            check.overturned,
            check.share
        ),
        (4, 4, 2, 0.5)
    );
    let (p, lo, hi) = check.wrong().unwrap();
    assert!((p - 0.5).abs() < 1e-12 && lo < 0.5 && hi > 0.5);
    assert!(
        check.text().contains("2 ended otherwise"),
        "{}",
        check.text()
    );
    // A running tournament restarts from its digests with the same counts.
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(c.report_of(id).unwrap().1.adjudication_check, Some(check));
    // Scores that do not call it are refused, played on or not.
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let mut bad = adjudicated_pair(&c, &worker, &jobs[0], lease, ["1-0", "1-0"]);
    let json = bad.games.get().replace("cp 700", "cp 100");
    let refused = c.check_reported(
        &worker,
        Reported {
            tournament: id,
            pair: jobs[0].pair,
            lease,
            half_points: [0, 2],
            games_json: json,
            ticket: jobs[0].ticket.clone(),
        },
    );
    assert!(refused.is_err());
    bad.tournament = id;
    c.report(&worker, vec![bad]).await.unwrap();
    assert_eq!(c.status(id).unwrap().state, State::Finished);
    let ended = c.report_of(id).unwrap().1.adjudication_check.unwrap();
    assert_eq!((ended.played_on, ended.overturned), (6, 2));
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(
        c.report_of(id).unwrap().1.adjudication_check,
        Some(ended),
        "from the summary"
    );
}

#[tokio::test]
async fn records_must_name_the_engines_as_leased_and_are_stored_as_typed_records() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 2).unwrap();
    let reported = |job: &PairJob, games_json: String| Reported {
        tournament: id,
        pair: job.pair,
        lease,
        half_points: [2, 2],
        games_json,
        ticket: job.ticket.clone(),
    };
    // Played with another spec than the one leased (as an SPSA run's games played at
    // values other than their perturbation): refused.
    let json = won_by_a_json(&jobs[0], ["crash", "crash"]);
    let other_spec = json.replace(r#""spec":"random:seed=2""#, r#""spec":"random:seed=9""#);
    assert_ne!(other_spec, json);
    let refused = c.check_reported(&worker, reported(&jobs[0], other_spec));
    assert_eq!(refused.unwrap_err(), crate::commit::Refusal::Ticket);
    // Another pair's ticket does not do either.
    let mut swapped = reported(&jobs[0], json.clone());
    swapped.ticket = jobs[1].ticket.clone();
    assert!(c.check_reported(&worker, swapped).is_err());
    // No meta (as `tourney play --json` writes records) and a field the records do not
    // have, in a shape the exporters cannot read: stored as the typed record writes itself.
    let odd = json.replacen(r#""game":"loa""#, r#""game":"loa","white_stderr":"x""#, 2);
    let checked = c.check_reported(&worker, reported(&jobs[0], odd)).unwrap();
    c.report(&worker, vec![checked]).await.unwrap();
    let (lines, _) = c
        .export_page(id, &crate::ExportFilter::default(), 0)
        .unwrap();
    assert_eq!(lines.len(), 2);
    for (g, line) in lines.iter().enumerate() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(value.get("white_stderr").is_none(), "{line}");
        assert_eq!(value["meta"]["pair"], jobs[0].pair, "{line}");
        assert_eq!(value["meta"]["game"], g, "{line}");
    }
}

#[tokio::test]
async fn results_of_leases_from_before_a_restart_are_taken_while_their_pair_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 2).unwrap();
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    let again = c.register("w", "test", 2, "t").unwrap().0;
    // Its lease is not dropped by the new run (its pairs are played on), and the new run's
    // leases never take an old one's id.
    assert_eq!(c.heartbeat(&again, &[lease]), Vec::<LeaseId>::new());
    let (new_lease, _) = c.lease(&again, 1).unwrap();
    assert!(new_lease > lease, "{new_lease} after {lease}");
    assert_eq!(c.heartbeat(&again, &[new_lease + 1]), vec![new_lease + 1]);
    let taken = won_by_a(&c, &again, &jobs[0], lease);
    assert!(!taken.held, "taken on its ticket");
    let ack = c.report(&again, vec![taken]).await.unwrap();
    assert_eq!((ack.accepted, ack.rejected), (1, 0));
    assert_eq!(c.status(id).unwrap().pairs_done, 1);
    // Another host's registration cannot use it, nor one of another token.
    let other = c.register("x", "test", 2, "t").unwrap().0;
    let result = || Reported {
        tournament: id,
        pair: jobs[1].pair,
        lease,
        half_points: [2, 2],
        games_json: won_by_a_json(&jobs[1], ["crash", "crash"]),
        ticket: jobs[1].ticket.clone(),
    };
    assert_eq!(
        c.check_reported(&other, result()).unwrap_err(),
        crate::commit::Refusal::NotHeld
    );
    let other_token = c.register("w", "test", 2, "u").unwrap().0;
    assert!(c.check_reported(&other_token, result()).is_err());
    assert!(c.check_reported(&again, result()).is_ok());
}

#[tokio::test]
async fn reports_in_flight_share_one_budget_and_are_deferred_when_it_is_full() {
    use tonic::Request;
    use tourney_proto::v1 as pb;
    use tourney_proto::v1::worker_server::Worker;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let settings = Settings {
        report_room_wait_ms: 100,
        ..Settings::default()
    };
    let c = Coordinator::open(store, settings, &Registry::new()).unwrap();
    let id = c
        .submit(&match_file(), "late.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let (worker, session) = c.register("w", "test", 1, "open").unwrap();
    let service = crate::service::WorkerService(Arc::clone(&c));
    // One pair result claiming 1 MiB of records (not records: refused once read).
    let request = || {
        let mut request = Request::new(pb::ReportRequest {
            worker_id: worker.clone(),
            results: vec![pb::PairResult {
                tournament: id,
                half_points: vec![1, 1],
                games_lz4: lz4_flex::compress_prepend_size(&vec![b' '; 1 << 20]),
                ..Default::default()
            }],
            failures: Vec::new(),
        });
        request
            .metadata_mut()
            .insert(crate::service::SESSION_HEADER, session.parse().unwrap());
        request
    };
    // Every byte of room taken, as by reports being read: this one waits, then is
    // deferred with a pushback, read not at all, counted apart from rejections.
    let all = (crate::state::REPORTS_IN_FLIGHT >> 10) as u32;
    let taken = c.report_room.acquire_many(all).await.unwrap();
    let e = service.report(request()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert_eq!(
        e.metadata().get(crate::service::RETRY_PUSHBACK).unwrap(),
        "1000"
    );
    let m = c.metrics();
    assert_eq!(m.reports_deferred.with_label_values(&["busy"]).get(), 1);
    let rejected = |m: &crate::metrics::CoordinatorMetrics| {
        crate::commit::Refusal::kinds()
            .map(|k| m.results_rejected.with_label_values(&[k]).get())
            .sum::<u64>()
    };
    assert_eq!(rejected(m), 0);
    // With room again it is read (and its junk refused), and the room is given back.
    drop(taken);
    let ack = service.report(request()).await.unwrap().into_inner();
    assert_eq!(ack.rejected, 1);
    assert_eq!(rejected(c.metrics()), 1);
    assert_eq!(c.report_room.available_permits(), all as usize);
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
        matches!(&refused, crate::state::CoordinatorError::Exhausted(m) if m.contains("2 tournaments")),
        "{refused}"
    );
    assert_eq!(c.ids().len(), 2, "nothing stored for the refused one");
    assert!(c.cancel(first).await.unwrap());
    submit().await.unwrap();
}

#[tokio::test]
async fn a_tuning_runs_games_must_be_played_at_the_values_leased() {
    let c = on_temporary_store();
    let id = c
        .submit(&tuning_file(10), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let job = &jobs[0];
    let specs = [&job.first, &job.second].map(|e| e.identity().spec);
    assert!(
        specs.iter().all(|s| s.contains("concentration=")),
        "{specs:?}"
    );
    let (w, first) = (job.first.name.as_str(), job.first.name.clone());
    let json = pair_json(job, [w, w], ["crash", "crash"]);
    let reported = |games_json: String| Reported {
        tournament: id,
        pair: job.pair,
        lease,
        half_points: [2, 2],
        games_json,
        ticket: job.ticket.clone(),
    };
    // Played at other values than the perturbation leased: refused, not folded in.
    let leased = &specs[0];
    let other = json.replace(leased.as_str(), "ab:depth=1,concentration=59");
    assert_ne!(other, json, "{leased}");
    assert_eq!(
        c.check_reported(&worker, reported(other)).unwrap_err(),
        crate::commit::Refusal::Ticket
    );
    assert!(c.check_reported(&worker, reported(json)).is_ok(), "{first}");
}
