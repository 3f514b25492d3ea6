//! The coordinator as a whole, on a real store, by subject; the helpers they share.

use std::collections::BTreeMap;
use std::sync::Arc;

use prometheus::Registry;
use tourney_model::job::PairJob;
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;

use crate::clock::ManualClock;
use crate::scheduler::LeaseId;
use crate::state::Coordinator;
use crate::types::Reported;
use crate::types::{Finished, Settings};

mod accounts;
mod adjudication;
mod datagen;
mod exports;
mod fleet;
mod headers;
mod lifecycle;
mod pools;
mod reports;
mod sources;
mod status_view;
mod tuning;
mod versions;
mod workers;

/// Four pairs of two seeded random players at one node a move.
pub(super) fn match_file() -> String {
    MatchFile {
        name: "late",
        limits: "{ nodes = 1, tc = \"10+0.1\" }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml()
}

pub(super) async fn coordinator(dir: &tempfile::TempDir, lease_ms: u64) -> (Arc<Coordinator>, u64) {
    let (c, id, _) = on_manual_clock(dir, lease_ms).await;
    (c, id)
}

/// A coordinator on `dir` with the [`match_file`] tournament submitted, going by a clock the test
/// moves.
pub(super) async fn on_manual_clock(
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
pub(super) fn player(job: &PairJob, name: &str) -> String {
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
pub(super) fn won_by_a_json(job: &PairJob, endings: [&str; 2]) -> String {
    pair_json(job, ["a", "a"], endings)
}

/// The records of a pair whose game `g` engine `winners[g]` wins, the loser failing by
/// `endings[g]` once it is to move (after one legal move of the winner when the winner is
/// to move first).
pub(super) fn pair_json(job: &PairJob, winners: [&str; 2], endings: [&str; 2]) -> String {
    use tourney_rules::{Color, Loa, Position};
    let (first, second) = (job.first.name.as_str(), job.second.name.as_str());
    let start: Loa = tourney_model::opening::position(&job.opening)
        .parse()
        .unwrap();
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
            tourney_model::opening::position(&job.opening)
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
pub(super) fn pair_won_by(
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
pub(super) fn won_by_a(c: &Coordinator, worker: &str, job: &PairJob, lease: LeaseId) -> Finished {
    won_by_a_ending(c, worker, job, lease, ["crash", "crash"])
}

/// Leases up to `pairs` pairs to `worker` and reports each as won by `a` (durably); the
/// jobs it played.
pub(super) async fn lease_and_win(c: &Coordinator, worker: &str, pairs: usize) -> Vec<PairJob> {
    let (lease, jobs) = c.lease(worker, pairs).unwrap();
    let results = jobs.iter().map(|j| won_by_a(c, worker, j, lease)).collect();
    c.report(worker, results).await.unwrap();
    jobs
}

/// [`won_by_a`], the games ending by `endings`.
pub(super) fn won_by_a_ending(
    c: &Coordinator,
    worker: &str,
    job: &PairJob,
    lease: LeaseId,
    endings: [&str; 2],
) -> Finished {
    pair_won_by(c, worker, job, lease, ["a", "a"], endings)
}

/// Every line an export of `filter` gives, page by page.
pub(super) fn exported(c: &Coordinator, id: u64, filter: &crate::ExportFilter) -> Vec<String> {
    let (mut lines, mut from) = (Vec::new(), Some(0));
    while let Some(at) = from {
        let (page, next) = c.export_page(id, filter, at).unwrap();
        lines.extend(page);
        from = next;
    }
    lines
}

/// The pair of each exported line.
pub(super) fn pairs_of(lines: &[String]) -> Vec<u64> {
    (lines.iter())
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["pair"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// A coordinator on a store in memory, with the default settings.
pub(super) fn on_temporary_store() -> Arc<Coordinator> {
    Coordinator::open(
        Store::temporary().unwrap(),
        Settings::default(),
        &Registry::new(),
    )
    .unwrap()
}

/// The store in `dir` opened again once the coordinator that had it is dropped: sled lets
/// go of its lock once the committer task and its background flusher have stopped.
pub(super) async fn reopen(dir: &tempfile::TempDir) -> Store {
    tourney_tests::wait::until_async(5, "the store to reopen", || async {
        Store::open(dir.path()).map_err(|e| e.to_string())
    })
    .await
}

/// Plays `pairs` pairs of a two-engine match on `c`: honest workers `h1`..`h3` in turn
/// report a mix of results (a split pair, `a` winning both, a split pair, `b` winning both,
/// in that order of their pairs), and worker `odd` reports every fourth pair as `odd_pair`
/// makes it. Returns the workers' ids.
pub(super) async fn play_with_an_odd_worker(
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

pub(super) fn a_file(pairs: u64) -> String {
    MatchFile {
        name: "odd",
        pairs,
        limits: "{ nodes = 1, tc = \"10+0.1\" }",
        engines: [("a", "random"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml()
}

/// Settings whose one webhook posts to `port`, signed with `secret`.
pub(super) fn with_webhook(port: u16, secret: &str) -> Settings {
    Settings {
        webhooks: tourney_notify::NotifySettings {
            dashboard: "http://dash.example".into(),
            queue: 100,
            webhooks: vec![tourney_notify::Webhook {
                url: format!("http://127.0.0.1:{port}/hooks/tourney"),
                secret: Some(secret.into()),
                secret_file: None,
                events: None,
                retries: 2,
                retry_ms: 50,
                timeout_ms: 5_000,
            }],
        },
        ..Settings::default()
    }
}
