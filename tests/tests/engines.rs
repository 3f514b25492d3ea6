//! Outside engines that misbehave, driven through real processes: each failure class of the
//! engine protocol loses the game with its recorded reason (or makes the engine unfit),
//! never panics or hangs the referee.

use std::time::{Duration, Instant};

use tourney_ai::Limits;
use tourney_model::{GameRecord, Termination, TimeControl};
use tourney_rules::Loa;
use tourney_runner::{BuiltIn, EngineConfig, ExternalEngine, RefereeError, Seat, Setup, play};

fn engine(mode: &str) -> ExternalEngine {
    let mut config = EngineConfig::new(&format!("{} {mode}", env!("CARGO_BIN_EXE_misbehave")));
    config.handshake_timeout = Duration::from_millis(500);
    config.unresponsive_timeout = Duration::from_secs(1);
    ExternalEngine::new(config)
}

/// Plays the misbehaving engine (White) against a random built-in (Black).
fn game(mode: &str, setup: &Setup<Loa>) -> Result<GameRecord, RefereeError> {
    let mut outside = engine(mode);
    let mut random = BuiltIn::<Loa>::new("random:seed=1").unwrap();
    play(
        setup,
        Seat {
            name: "outside".into(),
            player: &mut outside,
        },
        Seat {
            name: "random".into(),
            player: &mut random,
        },
        &mut |_| {},
    )
}

fn with_clock() -> Setup<Loa> {
    let mut setup = Setup::new(Default::default());
    setup.time_control = "2+0.1".parse::<TimeControl>().unwrap();
    setup.time_margin = Duration::from_millis(200);
    setup
}

fn assert_lost(record: &GameRecord, termination: Termination) {
    assert_eq!(record.termination, termination, "{record:?}");
    assert_eq!(
        record.result.as_str(),
        "0-1",
        "the outside engine (White) loses"
    );
    assert!(
        record.white.stderr.iter().any(|l| l.contains("misbehave")),
        "stderr tail kept: {:?}",
        record.white.stderr
    );
    assert!(record.detail.is_some());
}

#[test]
fn a_good_engine_plays_whole_games() {
    let mut setup = with_clock();
    setup.max_plies = Some(60);
    let record = game("good", &setup).unwrap();
    assert!(!record.termination.is_failure(), "{record:?}");
    assert!(record.moves.len() >= 2);
    assert_eq!(
        record.white.spec,
        format!("cmd:{} good", env!("CARGO_BIN_EXE_misbehave"))
    );
}

#[test]
fn crash_loses_with_the_exit_status() {
    let record = game("crash", &with_clock()).unwrap();
    assert_lost(&record, Termination::Crash);
    assert!(
        record.detail.as_deref().unwrap().contains("exited"),
        "{:?}",
        record.detail
    );
}

#[test]
fn hanging_with_a_clock_is_a_time_forfeit() {
    let started = Instant::now();
    let record = game("hang", &with_clock()).unwrap();
    assert_lost(&record, Termination::TimeForfeit);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn hanging_without_a_clock_is_unresponsive() {
    let mut setup = Setup::new(Default::default());
    setup.limits = Limits {
        nodes: Some(100),
        ..Limits::default()
    };
    setup.unresponsive = Duration::from_millis(500);
    let record = game("hang", &setup).unwrap();
    assert_lost(&record, Termination::Unresponsive);
}

#[test]
fn illegal_and_junk_moves_lose() {
    let record = game("illegal", &with_clock()).unwrap();
    assert_lost(&record, Termination::IllegalMove);
    assert!(
        record.detail.as_deref().unwrap().contains("'a1-a1'"),
        "{:?}",
        record.detail
    );
    let record = game("junk", &with_clock()).unwrap();
    assert_lost(&record, Termination::IllegalMove);
    assert!(
        record.detail.as_deref().unwrap().contains("'!!!'"),
        "{:?}",
        record.detail
    );
}

#[test]
fn closing_stdout_is_a_crash() {
    let record = game("close", &with_clock()).unwrap();
    assert_lost(&record, Termination::Crash);
    assert!(
        record
            .detail
            .as_deref()
            .unwrap()
            .contains("closed its output"),
        "{:?}",
        record.detail
    );
}

#[test]
fn thinking_past_the_movetime_is_a_time_forfeit() {
    let mut setup = Setup::new(Default::default());
    setup.limits = Limits {
        movetime: Some(Duration::from_millis(300)),
        ..Limits::default()
    };
    let record = game("slow", &setup).unwrap();
    assert_lost(&record, Termination::TimeForfeit);
}

#[test]
fn failed_handshakes_and_unsupported_games_make_the_engine_unfit() {
    let err = game("nohandshake", &with_clock()).unwrap_err();
    let RefereeError::Unfit { name, reason } = err else {
        panic!("{err}")
    };
    assert_eq!(name, "outside");
    assert!(reason.0.contains("no 'ugiok'"), "{reason}");
    let err = game("unsupported", &with_clock()).unwrap_err();
    assert!(err.to_string().contains("unsupported: game loa"), "{err}");
    let mut missing = ExternalEngine::new(EngineConfig::new("/nonexistent/engine"));
    let mut random = BuiltIn::<Loa>::new("random").unwrap();
    let err = play(
        &with_clock(),
        Seat {
            name: "missing".into(),
            player: &mut missing,
        },
        Seat {
            name: "random".into(),
            player: &mut random,
        },
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("cannot start"), "{err}");
}

#[test]
fn an_engine_is_restarted_after_a_failure() {
    let mut outside = engine("crash");
    let mut random = BuiltIn::<Loa>::new("random").unwrap();
    for _ in 0..2 {
        let record = play(
            &with_clock(),
            Seat {
                name: "outside".into(),
                player: &mut outside,
            },
            Seat {
                name: "random".into(),
                player: &mut random,
            },
            &mut |_| {},
        )
        .unwrap();
        // Each game gets a fresh process that plays its two good moves again.
        assert_eq!(record.termination, Termination::Crash);
        assert!(record.moves.len() >= 3, "{}", record.moves.len());
    }
}
