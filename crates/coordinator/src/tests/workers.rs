//! Bad workers: suspects by homogeneity and by rates, and exclusions that make every
//! figure again.

use std::collections::BTreeMap;

use prometheus::Registry;
use tourney_model::tournament::State;
use tourney_store::Store;

use super::*;
use crate::state::Coordinator;
use crate::types::Settings;

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
async fn a_worker_newly_suspect_is_told_to_the_webhooks_once() {
    let receiver = tourney_tests::http::Receiver::start(
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        &[200],
    );
    let dir = tempfile::tempdir().unwrap();
    let mut settings = with_webhook(receiver.port, "k");
    settings.webhooks.webhooks[0].events = Some(vec![tourney_notify::EventKind::Suspect]);
    let c =
        Coordinator::open(Store::open(dir.path()).unwrap(), settings, &Registry::new()).unwrap();
    let id = c
        .submit(&a_file(64), "odd.toml", "", BTreeMap::new())
        .await
        .unwrap();
    play_with_an_odd_worker(&c, 64, won_by_a).await;
    assert_eq!(c.status(id).unwrap().suspect_workers, 1);
    let told = tourney_tests::wait::until_async(10, "the suspect event", || {
        let taken = receiver.taken();
        async move {
            if taken.is_empty() {
                Err("nothing yet".to_string())
            } else {
                Ok(taken)
            }
        }
    })
    .await;
    let body: serde_json::Value = serde_json::from_slice(&told[0].body).unwrap();
    assert_eq!(body["event"], "suspect");
    assert_eq!(body["figures"]["suspect_workers"], 1);
    assert!(
        body["text"].as_str().unwrap().contains("1 suspect worker"),
        "{body}"
    );
    // The worker stayed suspect over the reports after it became so: the coordinator
    // decided to tell it once, and nothing else (what it queued, not what arrived yet).
    assert_eq!(c.notifier.sent(), 1);
    assert_eq!(receiver.taken().len(), 1, "{:?}", receiver.taken());
}

#[tokio::test]
async fn a_machine_is_last_seen_in_unix_time_not_the_coordinator_s_clock() {
    let c = on_temporary_store();
    c.register("box", "test", 1, "t").unwrap();
    let machines = c.machines();
    let seen = machines[0].last_seen_ms;
    let now = tourney_model::unix_ms_now();
    // Was "1970-01-01 00:09:36": milliseconds since the coordinator started.
    assert!(now - seen < 60_000 && seen <= now, "{seen} against {now}");
}

#[tokio::test]
async fn a_machine_shows_at_most_16_gpus_its_worker_claimed_with_bounded_texts() {
    let c = on_temporary_store();
    let (id, _) = c.register("gpu-box", "test", 1, "t").unwrap();
    let gpus = (0..40)
        .map(|i| tourney_model::gpu::GpuFacts {
            vendor: "NVIDIA".into(),
            model: format!("{}\u{7}{i}", "x".repeat(100)),
            memory_mb: 24_576,
        })
        .collect();
    c.set_host_facts(
        &id,
        crate::fleet::HostFacts {
            gpus,
            ..Default::default()
        },
    );
    let machines = c.machines();
    let gpus = &machines[0].facts.gpus;
    assert_eq!(gpus.len(), tourney_model::gpu::MAX_GPUS);
    assert!(
        gpus.iter()
            .all(|g| g.model.chars().count() == 64 && !g.model.contains('\u{7}'))
    );
    assert_eq!(gpus[0].vendor, "nvidia");
    let json = serde_json::to_value(&machines[0]).unwrap();
    assert_eq!(
        json["facts"]["gpus"][0]["memory_mb"], 24_576,
        "the machines page's JSON"
    );
}
