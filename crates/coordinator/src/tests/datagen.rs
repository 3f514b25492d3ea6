//! Data generation runs: each pair's two games checked from their own openings, their
//! positions written only once their games are taken, and a data set that follows the
//! store across a restart.

use std::collections::BTreeMap;

use tourney_model::job::PairJob;
use tourney_rules::{Color, Game, Loa, Position};

use super::*;

const DATAGEN: &str = r#"
name = "data"
game = "loa"
format = "datagen"
openings = { plies = 4, seed = 2 }
limits = { nodes = 10, tc = "10+0.1" }

[datagen]
positions = 30
skip_plies = 2
"#;

fn datagen_file(engines: &str) -> String {
    format!("{DATAGEN}\n{engines}")
}

/// A game of random legal moves from `start` to its end by the rules, every move with a
/// score, as a record between `white` and `black` of `job`.
fn random_game(job: &PairJob, start: &str, white: &str, black: &str, seed: u64) -> String {
    let start = tourney_model::opening::position(start);
    let start_position: Loa = start.parse().unwrap();
    let mut game = Game::new(start_position, Default::default());
    let mut state = seed;
    let mut moves = Vec::new();
    while game.outcome().is_none() {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mv = game.position().random_move(state >> 1).unwrap();
        moves.push(format!(
            r#"{{"move":"{mv}","time_ms":1,"score":"cp {}"}}"#,
            moves.len() % 7
        ));
        game.play(mv).unwrap();
    }
    let outcome = game.outcome().unwrap();
    let result = match outcome.winner {
        Some(Color::White) => "1-0",
        Some(Color::Black) => "0-1",
        None => "1/2-1/2",
    };
    format!(
        r#"{{"game":"loa","white":{},"black":{},"time_control":"10+0.1","start":"{start}","moves":[{}],"result":"{result}","termination":"{}"}}"#,
        player(job, white),
        player(job, black),
        moves.join(","),
        outcome.reason.name()
    )
}

/// Pair `job` as a worker reports it: game 0 from its opening, game 1 from its second.
fn reported(job: &PairJob, lease: LeaseId, game1_start: &str, seed: u64) -> Reported {
    let (first, second) = (job.first.name.as_str(), job.second.name.as_str());
    // LOA: Black moves first, so the first engine has Black in game 0.
    let games = [
        random_game(job, &job.opening, second, first, seed),
        random_game(job, game1_start, first, second, seed + 1),
    ];
    let records: Vec<tourney_model::GameRecord> = games
        .iter()
        .map(|g| serde_json::from_str(g).unwrap())
        .collect();
    let half_points = [
        u32::from(records[0].result.half_points(Color::Black)),
        u32::from(records[1].result.half_points(Color::White)),
    ];
    Reported {
        tournament: job.tournament,
        pair: job.pair,
        lease,
        half_points,
        games_json: format!("[{},{}]", games[0], games[1]),
        ticket: job.ticket.clone(),
    }
}

#[tokio::test]
async fn datagen_pairs_are_checked_from_their_two_openings_and_fill_the_data_set() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let settings = Settings {
        data_dir: Some(data.path().to_path_buf()),
        ..Settings::default()
    };
    let c = Coordinator::open(
        Store::open(dir.path()).unwrap(),
        settings.clone(),
        &Registry::new(),
    )
    .unwrap();
    let id = c
        .submit(
            &datagen_file("[[engine]]\nname = \"ab\"\nplayer = \"ab\""),
            "d.toml",
            "",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let mut seed = 1;
    let mut reports = 0;
    while c.status(id).unwrap().state != tourney_model::tournament::State::Finished {
        let (lease, jobs) = c.lease(&worker, 1).unwrap();
        let job = &jobs[0];
        let (second, _) = job.second_opening.clone().expect("each opening once");
        assert_ne!(second, job.opening, "pair {}", job.pair);
        // Game 1 from game 0's opening (the opening played twice) is refused, and writes
        // nothing.
        let twice = reported(job, lease, &job.opening, seed);
        assert!(c.check_reported(&worker, twice).is_err());
        // A game with an illegal move is refused too.
        let mut forged = reported(job, lease, &second, seed);
        forged.games_json = forged
            .games_json
            .replacen(r#""move":""#, r#""move":"a1-a1","x":""#, 1);
        assert!(c.check_reported(&worker, forged).is_err());
        // Scores that cannot be a training target: both sides winning by 900 all game, or
        // one beyond any score. Refused before a position is taken.
        let mut poisoned = reported(job, lease, &second, seed);
        for n in 0..7 {
            let score = format!(r#""score":"cp {n}""#);
            poisoned.games_json = poisoned.games_json.replace(&score, r#""score":"cp 900""#);
        }
        match c.check_reported(&worker, poisoned) {
            Err(crate::types::Refusal::Scores(0, why)) => {
                assert!(why.contains("contradict"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let mut huge = reported(job, lease, &second, seed);
        huge.games_json =
            huge.games_json
                .replacen(r#""score":"cp 0""#, r#""score":"cp 999999""#, 1);
        assert!(matches!(
            c.check_reported(&worker, huge),
            Err(crate::types::Refusal::Scores(..))
        ));
        let before = c.data_summary(id).unwrap().positions;
        assert_eq!(before, c.datasets.summary(id).map_or(0, |s| s.positions));
        let honest = c
            .check_reported(&worker, reported(job, lease, &second, seed))
            .unwrap();
        assert!(
            honest
                .positions
                .as_ref()
                .is_some_and(|p| !p.records.is_empty())
        );
        c.report(&worker, vec![honest]).await.unwrap();
        assert!(c.data_summary(id).unwrap().positions > before);
        seed += 2;
        reports += 1;
        assert!(reports < 30, "30 positions within 30 pairs");
    }
    let summary = c.data_summary(id).unwrap();
    assert!(
        summary.positions >= 30 && summary.pairs == reports,
        "{summary:?}"
    );
    // Its files hold what the summary says, past the skipped plies.
    let files = c.data_files(id).unwrap();
    let mut records = 0;
    for (path, counted) in &files {
        let bytes = std::fs::read(path).unwrap();
        let n = tourney_dataset::read_records(&bytes[..], |r| {
            assert!(r.ply >= 2);
            Ok(())
        })
        .unwrap();
        assert_eq!(n, *counted);
        records += n;
    }
    assert_eq!(records, summary.positions);

    // A restart finds the same data set; a tail written after its last summary is cut.
    drop(c);
    let (path, _) = files.last().unwrap().clone();
    let mut tail = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut tail, &[7; 57]).unwrap();
    drop(tail);
    let c = Coordinator::open(reopen(&dir).await, settings, &Registry::new()).unwrap();
    assert_eq!(c.data_summary(id).unwrap(), summary);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        tourney_dataset::read_records(&bytes[..], |_| Ok(())).unwrap(),
        files.last().unwrap().1
    );
    assert_eq!(
        c.status(id).unwrap().state,
        tourney_model::tournament::State::Finished
    );
}

#[tokio::test]
async fn a_tournament_that_is_not_a_datagen_run_has_no_data() {
    let c = on_temporary_store();
    let id = c
        .submit(&match_file(), "m.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let err = c.data_summary(id).unwrap_err().to_string();
    assert!(err.contains("not a data generation run"), "{err}");
    assert!(c.data_files(id).is_err());
}
