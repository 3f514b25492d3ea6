//! Adjudicated games, and those played on to check the adjudication.

use std::collections::BTreeMap;

use prometheus::Registry;
use tourney_model::job::PairJob;
use tourney_model::tournament::State;
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;

use super::*;
use crate::scheduler::LeaseId;
use crate::state::Coordinator;
use crate::types::Reported;
use crate::types::{Finished, Settings};

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
    let start: Loa = tourney_model::opening::position(&job.opening)
        .parse()
        .unwrap();
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
            tourney_model::opening::position(&job.opening),
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
