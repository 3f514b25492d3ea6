//! Engines built from source: what workers find of them (bench signatures, speeds, failed
//! builds) and what the coordinator does with it, and the webhooks it tells.

use std::collections::BTreeMap;

use tourney_model::job::EngineKind;
use tourney_model::source::Source;
use tourney_model::tournament::State;
use tourney_model::version::EngineVersion;
use tourney_notify::signature;
use tourney_tests::http::Receiver;
use tourney_tests::tournaments::MatchFile;
use tourney_tests::wait;

use super::*;
use crate::types::EngineCheck;

/// A version built from source.
fn from_source(name: &str) -> EngineVersion {
    EngineVersion {
        name: name.into(),
        source: Some(Source {
            git: "https://example.org/engine.git".into(),
            commit: "c".repeat(40),
            build: "make".into(),
            binary: "engine".into(),
        }),
        ..EngineVersion::default()
    }
}

/// A match of version `name` against a random player.
fn against_random(name: &str) -> String {
    MatchFile {
        name: "from-source",
        pairs: 4,
        limits: "{ nodes = 1, tc = \"10+0.1\" }",
        engines: [(name, &format!("version:{name}")), ("base", "random")],
        ..Default::default()
    }
    .toml()
}

/// A coordinator on `dir` with version `src` registered, its match against a random player
/// submitted, and workers `a` and `b` registered.
async fn source_match(
    dir: &tempfile::TempDir,
    settings: Settings,
) -> (std::sync::Arc<Coordinator>, u64, [String; 2]) {
    let c =
        Coordinator::open(Store::open(dir.path()).unwrap(), settings, &Registry::new()).unwrap();
    c.add_version(from_source("src"), false).unwrap();
    let id = c
        .submit(&against_random("src"), "s.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let workers = ["a", "b"].map(|name| c.register(name, "test", 1, "t").unwrap().0);
    (c, id, workers)
}

fn check(id: u64, engine: &str, nodes: u64, nps: u64) -> EngineCheck {
    EngineCheck {
        tournament: id,
        engine: engine.into(),
        bench_nodes: Some(nodes),
        bench_nps: nps,
        build_ms: 1200,
    }
}

/// The bench and reference speed a job gives `engine`.
fn job_bench(job: &PairJob, engine: &str) -> (Option<u64>, Option<u64>) {
    let e = [&job.first, &job.second]
        .into_iter()
        .find(|e| e.name == engine)
        .unwrap();
    match &e.kind {
        EngineKind::Outside {
            bench,
            reference_nps,
            source,
            ..
        } => {
            assert_eq!(source.as_ref().unwrap().commit, "c".repeat(40));
            (*bench, *reference_nps)
        }
        EngineKind::BuiltIn(_) => panic!("{engine} is built in"),
    }
}

#[tokio::test]
async fn the_first_worker_s_signature_and_speed_are_taken_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id, [a, b]) = source_match(&dir, Settings::default()).await;
    let (_, jobs) = c.lease(&a, 1).unwrap();
    assert_eq!(
        job_bench(&jobs[0], "src"),
        (None, None),
        "nothing known yet"
    );
    // A worker that holds none of the tournament's pairs is not heard.
    assert!(!c.plays_in(&b, id));
    assert!(c.plays_in(&a, id));
    c.engine_checked(&a, check(id, "src", 4242, 900_000))
        .await
        .unwrap();
    // A later worker's count changes nothing (it was checked against it).
    c.engine_checked(&a, check(id, "src", 1, 1)).await.unwrap();
    let (_, jobs) = c.lease(&b, 1).unwrap();
    assert_eq!(job_bench(&jobs[0], "src"), (Some(4242), Some(900_000)));
    assert_eq!(c.versions()[0].bench, Some(4242), "the version takes it");
    let checks = c.version_checks("src");
    assert_eq!(
        checks.len(),
        1,
        "one per worker host and tournament: {checks:?}"
    );
    assert_eq!((checks[0].bench_nodes, checks[0].build_ms), (Some(1), 1200));
    // When, in Unix milliseconds (as the dashboard and `version show` read it).
    let now = tourney_model::unix_ms_now();
    assert!(
        now - checks[0].at_ms < 60_000,
        "{} against {now}",
        checks[0].at_ms
    );
    // Kept across a restart, with the tournament and the version.
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(c.versions()[0].bench, Some(4242));
    let w = c.register("c", "test", 1, "t").unwrap().0;
    let (_, jobs) = c.lease(&w, 1).unwrap();
    assert_eq!(job_bench(&jobs[0], "src"), (Some(4242), Some(900_000)));
}

#[tokio::test]
async fn a_failed_build_pauses_at_once_and_the_webhooks_are_told() {
    let receiver = Receiver::start(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), &[200]);
    let dir = tempfile::tempdir().unwrap();
    let (c, id, [a, b]) = source_match(&dir, with_webhook(receiver.port, "k")).await;
    let (_, jobs) = c.lease(&a, 1).unwrap();
    let log = "cc -o engine engine.c\nengine.c:1:27: error: expected ';' before '}' token";
    let failure = crate::Unplayable {
        engine: "src",
        engine_fault: true,
        reason: "the build failed (exit status: 1)",
        log,
    };
    c.engine_failed(&a, id, jobs[0].pair, failure)
        .await
        .unwrap();
    // Another worker is connected, but a build fails everywhere: paused at once.
    let status = c.status(id).unwrap();
    assert_eq!(status.state, State::Paused);
    let reason = status.paused_reason.unwrap();
    assert!(
        reason.contains("engine src could not play") && reason.contains("the build failed"),
        "{reason}"
    );
    // Its log is for those who may read it alone, not in the reason everyone sees.
    assert!(!reason.contains("error: expected ';'"), "{reason}");
    let operator = crate::accounts::Principal::operator("ops");
    let viewer = crate::accounts::Principal {
        name: "vera".into(),
        role: tourney_model::account::Role::Viewer,
        operator: false,
    };
    assert!(
        c.paused_log(&operator, id)
            .unwrap()
            .contains("error: expected ';'")
    );
    assert_eq!(c.paused_log(&viewer, id), None);
    assert!(c.lease(&b, 4).is_none(), "nothing is leased while paused");
    let (_, report) = c.report_of(id).unwrap();
    assert!(
        report.notes[0].starts_with("Paused: engine src"),
        "{:?}",
        report.notes
    );
    assert!(
        !report.notes[0].contains("error: expected"),
        "{:?}",
        report.notes
    );
    let checks = c.version_checks("src");
    assert!(checks[0].problem.contains("the build failed"), "{checks:?}");
    // The events log says which worker's build failed, and why.
    let events = c.events(0, 10).unwrap();
    let failed = events.iter().find(|e| e.action == "build-failed").unwrap();
    assert_eq!(
        (failed.who.as_str(), failed.subject.clone()),
        (a.as_str(), format!("tournament {id}"))
    );
    assert!(failed.detail.contains("the build failed"));

    // The webhook hears `paused` and `build_failed`, signed, with the reason and a link.
    let delivered = |n: usize| {
        let taken = receiver.taken();
        async move {
            if taken.len() >= n {
                Ok(taken)
            } else {
                Err(format!("{taken:?}"))
            }
        }
    };
    let taken = wait::until_async(10, "two deliveries", || delivered(2)).await;
    let mut events: Vec<&str> = taken
        .iter()
        .filter_map(|r| r.header("x-tourney-event"))
        .collect();
    events.sort_unstable();
    assert_eq!(events, ["build_failed", "paused"]);
    for r in &taken {
        assert!(r.head.starts_with("POST /hooks/tourney HTTP/1.1"));
        assert_eq!(
            r.header("x-tourney-signature-256"),
            Some(signature("k", &r.body).as_str())
        );
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["tournament"]["id"], id);
        assert_eq!(body["tournament"]["state"], "paused");
        let reason = body["reason"].as_str().unwrap();
        assert!(
            reason.contains("the build failed") && !reason.contains("error: expected"),
            "the reason, without the log: {reason}"
        );
        assert_eq!(body["link"], format!("http://dash.example/#t={id}"));
    }

    // Resumed and played out: `finished` (a match decides no SPRT: no `sprt` event).
    assert!(c.resume(id).await.unwrap());
    while c.status(id).unwrap().state != State::Finished {
        let (lease, jobs) = c.lease(&b, 4).unwrap();
        let results = (jobs.iter())
            .map(|j| pair_won_by(&c, &b, j, lease, ["src", "src"], ["crash", "crash"]))
            .collect();
        c.report(&b, results).await.unwrap();
    }
    let taken = wait::until_async(10, "the finished event", || delivered(3)).await;
    let last: serde_json::Value = serde_json::from_slice(&taken[2].body).unwrap();
    assert_eq!(last["event"], "finished");
    assert_eq!(last["figures"]["pairs"], 4);
    assert!(last["text"].as_str().unwrap().contains("finished"));
    // The coordinator queued no more than these three: no `sprt` event for a match.
    assert_eq!(c.notifier.sent(), 3, "no sprt event for a match");
}

#[tokio::test]
async fn version_checks_and_failure_reasons_keep_to_their_bounds() {
    let c = on_temporary_store();
    c.add_version(from_source("src"), false).unwrap();
    let id = c
        .submit(&against_random("src"), "s.toml", "", BTreeMap::new())
        .await
        .unwrap();
    // More worker hosts than a version keeps checks of: the oldest go.
    for n in 0..crate::MAX_CHECKS_PER_VERSION + 10 {
        let w = c.register(&format!("host{n}"), "test", 1, "t").unwrap().0;
        c.engine_checked(&w, check(id, "src", 7, 1)).await.unwrap();
    }
    let checks = c.version_checks("src");
    assert_eq!(checks.len(), crate::MAX_CHECKS_PER_VERSION);
    assert!(checks[0].worker.starts_with("host10#"), "{:?}", checks[0]);
    // A build log of a megabyte: its beginning and its end are kept, within the bound.
    let w = c.register("loud", "test", 1, "t").unwrap().0;
    let (_, jobs) = c.lease(&w, 1).unwrap();
    let log = format!("BEGIN{}END", "x".repeat(1 << 20));
    let failure = crate::Unplayable {
        engine: "src",
        engine_fault: true,
        reason: &log,
        log: &log,
    };
    c.engine_failed(&w, id, jobs[0].pair, failure)
        .await
        .unwrap();
    let reason = c.status(id).unwrap().paused_reason.unwrap();
    assert!(
        reason.len() < crate::MAX_REASON_BYTES + 200,
        "{}",
        reason.len()
    );
    assert!(reason.contains("BEGIN") && reason.ends_with("END"));
    let kept = c
        .paused_log(&crate::accounts::Principal::operator("ops"), id)
        .unwrap();
    assert!(kept.len() < crate::MAX_REASON_BYTES + 200 && kept.ends_with("END"));
    let kept = &c.version_checks("src");
    assert!(kept.last().unwrap().problem.len() < crate::MAX_REASON_BYTES + 200);
}

#[tokio::test]
async fn a_webhook_that_refuses_its_deliveries_is_in_the_events_log() {
    let receiver = Receiver::start(std::net::TcpListener::bind("127.0.0.1:0").unwrap(), &[400]);
    let dir = tempfile::tempdir().unwrap();
    let (c, id, [a, _]) = source_match(&dir, with_webhook(receiver.port, "k")).await;
    let (_, jobs) = c.lease(&a, 1).unwrap();
    let failure = crate::Unplayable {
        engine: "src",
        engine_fault: true,
        reason: "the build failed",
        log: "",
    };
    c.engine_failed(&a, id, jobs[0].pair, failure)
        .await
        .unwrap();
    let logged = || {
        c.tick();
        let events = c.events(0, 20).unwrap();
        let failed: Vec<String> = (events.iter())
            .filter(|e| e.action == "webhook-failed" && e.who == "coordinator")
            .map(|e| e.detail.clone())
            .collect();
        async move {
            if failed.len() >= 2 {
                Ok(failed)
            } else {
                Err(format!("{failed:?}"))
            }
        }
    };
    let mut failed = wait::until_async(10, "two failed deliveries logged", logged).await;
    failed.sort();
    assert_eq!(failed, ["build_failed", "paused"]);
}
