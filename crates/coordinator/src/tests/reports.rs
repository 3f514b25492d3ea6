//! Reported pairs: checked against their own records and their leases, counted once,
//! and read within a shared budget.

use std::collections::BTreeMap;
use std::sync::Arc;

use prometheus::Registry;
use tourney_model::job::PairJob;
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;

use super::*;
use crate::scheduler::LeaseId;
use crate::state::Coordinator;
use crate::types::Reported;
use crate::types::Settings;

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
    let other_start = good.replace(
        tourney_model::opening::position(&job.opening),
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w",
    );
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
        let mut d = crate::tournaments::history::Duplicates::default();
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
    assert_eq!(refused.unwrap_err(), crate::types::Refusal::Ticket);
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
        crate::types::Refusal::NotHeld
    );
    let other_token = c.register("w", "test", 2, "u").unwrap().0;
    assert!(c.check_reported(&other_token, result()).is_err());
    assert!(c.check_reported(&again, result()).is_ok());
}

/// A gRPC report of `result` by `worker`, with its registration's secret.
fn report_request(
    worker: &str,
    session: &str,
    result: tourney_proto::v1::PairResult,
) -> tonic::Request<tourney_proto::v1::ReportRequest> {
    let mut request = tonic::Request::new(tourney_proto::v1::ReportRequest {
        worker_id: worker.to_string(),
        results: vec![result],
        failures: Vec::new(),
        checks: Vec::new(),
    });
    request.metadata_mut().insert(
        crate::api::service::SESSION_HEADER,
        session.parse().unwrap(),
    );
    request
}

#[tokio::test]
async fn reports_in_flight_share_one_budget_and_are_deferred_when_it_is_full() {
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
    let service = crate::api::service::WorkerService(Arc::clone(&c));
    // One pair result claiming 1 MiB of records (not records: refused once read).
    let request = || {
        let result = pb::PairResult {
            tournament: id,
            half_points: vec![1, 1],
            games_lz4: lz4_flex::compress_prepend_size(&vec![b' '; 1 << 20]),
            ..Default::default()
        };
        report_request(&worker, &session, result)
    };
    // Every byte of room taken, as by reports being read: this one waits, then is
    // deferred with a pushback, read not at all, counted apart from rejections.
    let all = (crate::state::REPORTS_IN_FLIGHT >> 10) as u32;
    let taken = c.report_room.acquire_many(all).await.unwrap();
    let e = service.report(request()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert_eq!(
        e.metadata()
            .get(crate::api::service::RETRY_PUSHBACK)
            .unwrap(),
        "1000"
    );
    let m = c.metrics();
    assert_eq!(m.reports_deferred.with_label_values(&["busy"]).get(), 1);
    let rejected = |m: &crate::metrics::CoordinatorMetrics| {
        crate::types::Refusal::kinds()
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
async fn a_report_whose_worker_goes_away_while_it_commits_is_still_counted() {
    use tourney_proto::v1 as pb;
    use tourney_proto::v1::worker_server::Worker;
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let (worker, session) = c.register("w", "test", 1, "open").unwrap();
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let job = &jobs[0];
    let result = pb::PairResult {
        tournament: id,
        pair: job.pair,
        lease_id: lease,
        half_points: vec![2, 2],
        games_json: won_by_a_json(job, ["crash", "crash"]),
        ticket: job.ticket.clone(),
        ..Default::default()
    };
    let request = report_request(&worker, &session, result);
    // The call is polled once (its pair checked, its commit sent) and then dropped, as
    // tonic drops a call whose client has gone.
    let service = crate::api::service::WorkerService(Arc::clone(&c));
    let mut call = service.report(request);
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(call.as_mut().poll(cx))).await;
    assert!(first.is_pending(), "the call was not cut off: {first:?}");
    drop(call);
    // Its pair is counted all the same: not left stored but never scheduled as done.
    for _ in 0..1000 {
        if c.status(id).unwrap().pairs_done == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(c.status(id).unwrap().pairs_done, 1);
    assert!(c.is_done(id, job.pair));
}

/// `job`'s result with `games_json`, as a report carries it under `lease`.
fn carried(job: &PairJob, lease: LeaseId, games_json: Option<String>) -> crate::ReportedResult {
    crate::ReportedResult {
        tournament: job.tournament,
        pair: job.pair,
        lease,
        half_points: vec![2, 2],
        games_json,
        ticket: job.ticket.clone(),
    }
}

/// A report of `results` alone.
fn report_of(results: Vec<crate::ReportedResult>) -> crate::Report {
    crate::Report {
        results,
        ..Default::default()
    }
}

/// The results refused for `reason` so far.
fn refused_for(c: &Coordinator, reason: &str) -> u64 {
    (c.metrics().results_rejected)
        .with_label_values(&[reason])
        .get()
}

#[tokio::test]
async fn an_honest_report_is_taken_once_and_its_repeat_acknowledged_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let honest = || {
        let games = won_by_a_json(&jobs[0], ["crash", "crash"]);
        report_of(vec![carried(&jobs[0], lease, Some(games))])
    };
    let ack = c.take_report(&worker, honest()).await.unwrap();
    assert_eq!((ack.accepted, ack.duplicates, ack.rejected), (1, 0, 0));
    assert_eq!(c.status(id).unwrap().pairs_done, 1);
    let again = c.take_report(&worker, honest()).await.unwrap();
    assert_eq!(
        (again.accepted, again.duplicates, again.rejected),
        (0, 1, 0)
    );
    assert_eq!(c.status(id).unwrap().pairs_done, 1);
}

#[tokio::test]
async fn forged_reports_are_refused_by_reason_and_bar_their_worker_at_the_third() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    // Games that could not be read off the wire: refused as records, and counted.
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let unread = report_of(vec![carried(&jobs[0], lease, None)]);
    let ack = c.take_report(&worker, unread).await.unwrap();
    assert_eq!((ack.accepted, ack.rejected), (0, 1));
    assert_eq!(refused_for(&c, "records"), 1);
    assert!(!c.lock().scheduler.is_unfit(id, &worker));
    // Played with another spec than the one leased: each refused and its pair given back,
    // the worker barred at its third refusal and offered nothing more.
    for n in 1..=crate::REFUSALS_TO_BAR - 1 {
        let (lease, jobs) = c.lease(&worker, 1).expect("not barred yet");
        let games = won_by_a_json(&jobs[0], ["crash", "crash"])
            .replace(r#""spec":"random:seed=2""#, r#""spec":"random:seed=9""#);
        let forged = report_of(vec![carried(&jobs[0], lease, Some(games))]);
        let ack = c.take_report(&worker, forged).await.unwrap();
        assert_eq!((ack.accepted, ack.rejected), (0, 1));
        assert_eq!(refused_for(&c, "ticket"), n);
        let barred = n + 1 == crate::REFUSALS_TO_BAR;
        assert_eq!(c.lock().scheduler.is_unfit(id, &worker), barred, "{n}");
    }
    assert!(c.lease(&worker, 1).is_none());
    assert_eq!(c.status(id).unwrap().pairs_done, 0);
}

#[tokio::test]
async fn results_of_another_workers_lease_are_refused_without_barring() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let holder = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&holder, 1).unwrap();
    // Another host's report of that pair on its ticket: not its own lease, so no blame.
    let stale = c.register("x", "test", 1, "t").unwrap().0;
    for n in 1..=crate::REFUSALS_TO_BAR + 1 {
        let games = won_by_a_json(&jobs[0], ["crash", "crash"]);
        let report = report_of(vec![carried(&jobs[0], lease, Some(games))]);
        let ack = c.take_report(&stale, report).await.unwrap();
        assert_eq!((ack.accepted, ack.rejected), (0, 1));
        assert_eq!(refused_for(&c, "not-held"), n);
    }
    assert!(!c.lock().scheduler.is_unfit(id, &stale));
    assert!(c.lease(&stale, 1).is_some(), "still offered pairs");
    assert_eq!(c.status(id).unwrap().pairs_done, 0);
}

#[tokio::test]
async fn a_reported_build_failure_pauses_the_test_and_one_of_a_pair_not_held_is_ignored() {
    use tourney_model::tournament::State;
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let failure = |pair: u64| crate::Failure {
        tournament: id,
        pair,
        lease,
        engine: "a".into(),
        engine_fault: true,
        reason: "the build failed".into(),
        log: "cc: error".into(),
    };
    let failed = |pair| crate::Report {
        failures: vec![failure(pair)],
        ..Default::default()
    };
    let ack = c
        .take_report(&worker, failed(jobs[0].pair + 1))
        .await
        .unwrap();
    assert_eq!((ack.accepted, ack.duplicates, ack.rejected), (0, 0, 0));
    assert_eq!(c.status(id).unwrap().state, State::Running);
    c.take_report(&worker, failed(jobs[0].pair)).await.unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.state, State::Paused);
    let reason = status.paused_reason.unwrap();
    assert!(reason.contains("engine a could not play"), "{reason}");
    assert!(reason.contains("the build failed"), "{reason}");
}
