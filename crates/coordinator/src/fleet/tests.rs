//! The fleet's registrations, sessions, liveness, throughput and recent games.

use super::*;
use tourney_model::{MoveCost, PlayerName, Termination};

fn game(plies: usize, nodes: u64) -> GameSummary {
    GameSummary {
        game: GameKind::Loa,
        white: PlayerName { name: "a".into() },
        black: PlayerName { name: "b".into() },
        start: String::new(),
        moves: vec![
            MoveCost {
                time_ms: 1,
                nodes: Some(nodes),
                notation: "b1-b3".parse().unwrap(),
                score: None,
            };
            plies
        ],
        result: GameResult::WhiteWins,
        termination: Termination::Connection,
        meta: Default::default(),
    }
}

const LIMITS: RegistrationLimits = RegistrationLimits {
    max_slots: 64,
    per_token: 3,
    silence_ms: 5_000,
};

fn register(fleet: &mut Fleet, name: &str, slots: u32, now: u64) -> String {
    fleet
        .register(name, "0.1.0", slots, "t", now, LIMITS)
        .unwrap()
        .0
}

#[test]
fn registrations_are_bounded_per_token_and_their_names_and_slots_checked() {
    let mut fleet = Fleet::new();
    for bad in ["", "a b", "x/y", &"n".repeat(MAX_WORKER_NAME + 1)] {
        assert_eq!(
            fleet.register(bad, "v", 1, "t", 0, LIMITS),
            Err(RegistrationError::Name)
        );
    }
    assert_eq!(
        fleet.register("ok", "v\n", 1, "t", 0, LIMITS),
        Err(RegistrationError::Version)
    );
    let greedy = register(&mut fleet, "greedy", u32::MAX, 0);
    assert_eq!(fleet.workers[&greedy].slots, 64, "slots are capped");
    let quiet = register(&mut fleet, "quiet", 0, 0);
    assert_eq!(fleet.workers[&quiet].slots, 1);
    register(&mut fleet, "c", 1, 0);
    // The token holds three live registrations: a fourth is refused ...
    fleet.seen(&greedy, 4_000);
    assert!(matches!(
        fleet.register("d", "v", 1, "t", 4_000, LIMITS),
        Err(RegistrationError::TooMany { max: 3, .. })
    ));
    // ... another token's is not, and once some fall silent they make room.
    assert!(fleet.register("d", "v", 1, "other", 4_000, LIMITS).is_ok());
    let d = register(&mut fleet, "d", 1, 6_000);
    assert!(fleet.workers.contains_key(&greedy) && fleet.workers.contains_key(&d));
    assert!(
        !fleet.workers.contains_key(&quiet),
        "silent ones are forgotten"
    );
    assert!(!fleet.sessions.contains_key(&quiet));
}

#[test]
fn a_session_belongs_to_its_token() {
    let mut fleet = Fleet::new();
    let (id, secret) = fleet.register("w", "v", 1, "box1", 0, LIMITS).unwrap();
    assert!(fleet.session_is(&id, &secret, "box1"));
    assert!(!fleet.session_is(&id, &secret, "box2"));
    assert!(!fleet.session_is(&id, "", "box1"));
    assert_eq!(fleet.token_of(&id), Some("box1"));
}

#[test]
fn workers_are_connected_until_they_fall_silent_and_then_forgotten() {
    let mut fleet = Fleet::new();
    let a = register(&mut fleet, "host", 4, 0);
    let b = register(&mut fleet, "host", 2, 0);
    assert_ne!(a, b, "two workers on one host get distinct ids");
    fleet.seen(&a, 9_000);
    let live = fleet.connected(10_000, 5_000);
    assert_eq!(live.len(), 1);
    assert_eq!((live[0].id.as_str(), live[0].slots), (a.as_str(), 4));
    fleet.tick(9_000 + FORGET_MS + 1);
    assert!(fleet.workers.is_empty());
}

#[test]
fn throughput_is_the_rate_over_the_recent_window() {
    let mut fleet = Fleet::new();
    let w = register(&mut fleet, "w", 1, 0);
    fleet.tick(0);
    for second in 1..=20u64 {
        // Three games a second, each of 10 plies at 100 nodes a ply.
        for _ in 0..3 {
            fleet.record_game(&w, 1, second, 0, &game(10, 100));
        }
        fleet.tick(second * 1000);
    }
    let t = fleet.throughput(20_000);
    assert!((t.games_per_s - 3.0).abs() < 1e-9, "{t:?}");
    assert!((t.nodes_per_s - 3000.0).abs() < 1e-6, "{t:?}");
    assert_eq!(t.games_total, 60);
    let history = fleet.history(5_000);
    assert_eq!(history, vec![3.0; 4]);
    fleet.seen(&w, 20_000);
    let worker = &fleet.connected(20_000, 1_000)[0];
    assert_eq!((worker.games, worker.nodes), (60, 60_000));
}

#[test]
fn recent_games_are_newest_first_and_bounded() {
    let mut fleet = Fleet::new();
    for pair in 0..(RECENT_GAMES as u64 + 5) {
        fleet.record_game("gone#1", 7, pair, 1, &game(3, 0));
    }
    let recent: Vec<&RecentGame> = fleet.recent().collect();
    assert_eq!(recent.len(), RECENT_GAMES);
    assert_eq!(recent[0].pair, RECENT_GAMES as u64 + 4);
    assert_eq!(
        (recent[0].white.as_str(), recent[0].plies, recent[0].index),
        ("a", 3, 1)
    );
    assert_eq!(fleet.throughput(0).games_total, RECENT_GAMES as u64 + 5);
}
