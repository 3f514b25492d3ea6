//! The dashboard's tests: replaying games for the viewer, query strings.

use super::pair::game_view;
use super::*;
use tourney_model::{GameRecord, GameResult, MoveRecord, PlayerRecord, Termination};
use tourney_rules::{Amazons, Loa, Position};

fn record(game: &str, start: String, moves: &[&str]) -> GameRecord {
    GameRecord {
        game: game.parse().unwrap(),
        rules: String::new(),
        start,
        opening_plies: 0,
        time_control: "inf".into(),
        white: PlayerRecord::default(),
        black: PlayerRecord::default(),
        moves: moves
            .iter()
            .map(|m| MoveRecord {
                mv: (*m).into(),
                time_ms: 0,
                nodes: None,
                depth: None,
                score: None,
                ..Default::default()
            })
            .collect(),
        result: GameResult::Draw,
        termination: Termination::MaxPlies,
        detail: None,
        started_ms: None,
        meta: Default::default(),
    }
}

#[test]
fn a_game_replays_to_a_position_after_every_ply() {
    let view = game_view(record("loa", Loa::start().to_string(), &["b1-b3", "a2-c2"]));
    assert_eq!(view.positions.len(), 3);
    assert_eq!(view.positions[0], Loa::start().to_string());
    assert_eq!(
        view.positions[1],
        "1bbbbbb1/w6w/w6w/w6w/w6w/wb5w/w6w/2bbbbb1 w"
    );
    assert_eq!(
        view.positions[2],
        "1bbbbbb1/w6w/w6w/w6w/w6w/wb5w/2w4w/2bbbbb1 b"
    );
    assert!(view.replay_error.is_none());
    let amazons = game_view(record(
        "amazons",
        Amazons::start().to_string(),
        &["d1-d7/g7"],
    ));
    assert_eq!(
        amazons.positions[1],
        "3b2b3/10/10/b2w2x2b/10/10/w8w/10/10/6w3 b"
    );
    // 8×8 Amazons: positions of 8 ranks, which the viewer draws as an 8×8 board (it
    // takes the size from the rows).
    let small = game_view(record(
        "amazons",
        Amazons::start_sized(8).to_string(),
        &["c1-c6/e4", "a6-a4/b4"],
    ));
    assert!(small.replay_error.is_none(), "{:?}", small.replay_error);
    assert_eq!(small.positions[1], "2b2b2/8/b1w4b/8/4x3/w6w/8/5w2 b");
    assert!(small.positions.iter().all(|p| p.split('/').count() == 8));
}

#[test]
fn query_strings_are_percent_decoded_and_bounded() {
    let pairs = query_pairs("q=fast+lmr%21&author=ann&bad=%zz&&size=5");
    assert_eq!(pairs[0], ("q".to_string(), "fast lmr!".to_string()));
    assert_eq!(pairs[1], ("author".to_string(), "ann".to_string()));
    assert_eq!(pairs[2].1, "%zz", "a malformed escape stays as written");
    assert_eq!(pairs.len(), 4);
    let many = vec!["a=1"; 100].join("&");
    assert_eq!(query_pairs(&many).len(), 32);
    assert_eq!(
        query_pairs("q=%e2%82").len(),
        1,
        "bad UTF-8 is replaced, not refused"
    );
}

#[test]
fn a_move_that_does_not_replay_stops_the_replay_and_says_where() {
    let view = game_view(record("loa", Loa::start().to_string(), &["b1-b3", "b3-b4"]));
    assert_eq!(view.positions.len(), 2);
    let error = view.replay_error.expect("the second move is illegal");
    assert!(error.starts_with("ply 2 (b3-b4)"), "{error}");
    let bad_start = game_view(record("amazons", "nonsense".into(), &[]));
    assert!(bad_start.positions.is_empty());
    assert!(
        bad_start
            .replay_error
            .unwrap()
            .starts_with("start position")
    );
}
