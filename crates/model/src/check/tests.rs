//! Tests of the checks of reported games.

use super::*;
use crate::adjudication::{ResignRule, ScoreRules};
use crate::record::{MoveRecord, PlayerRecord};
use tourney_rules::{Amazons, GameKind, Loa};

const AMAZONS_ALMOST_SPLIT: &str = "3b2b3/10/10/b8b/xxxxxxxxx1/10/w8w/10/10/3w2w3 w";

fn settings(game: GameKind, tc: &str) -> GameSettings {
    GameSettings {
        tournament_name: "t".into(),
        game,
        rules: String::new(),
        time_control: tc.parse().unwrap(),
        nodes: None,
        depth: None,
        movetime_ms: None,
        max_plies: None,
        adjudicate: false,
        margin_ms: 100,
        scale_by_speed: false,
        score_rules: ScoreRules::default(),
        engine_limits: Default::default(),
        engine_logs: Default::default(),
        engine_openings: false,
    }
}

/// A record of `moves` (each taking `time_ms`) from `start`, ending as said.
fn record(
    game: GameKind,
    start: &str,
    moves: &[&str],
    time_ms: u64,
    termination: Termination,
    result: GameResult,
) -> GameRecord {
    let player = |name: &str| PlayerRecord {
        name: name.into(),
        spec: "ab".into(),
        ..Default::default()
    };
    GameRecord {
        game,
        rules: String::new(),
        start: start.into(),
        opening_plies: 0,
        time_control: "10+0.1".into(),
        white: player("a"),
        black: player("b"),
        moves: moves
            .iter()
            .map(|m| MoveRecord {
                mv: m.to_string(),
                time_ms,
                nodes: None,
                depth: None,
                score: None,
                ..Default::default()
            })
            .collect(),
        result,
        termination,
        detail: None,
        started_ms: None,
        meta: Default::default(),
    }
}

/// The first legal move at each of `plies` plies of LOA from the start.
fn loa_moves(plies: usize) -> Vec<String> {
    let mut position = Loa::start();
    (0..plies)
        .map(|_| {
            let mv = position.legal_moves()[0];
            position = position.play(mv).unwrap();
            mv.to_string()
        })
        .collect()
}

fn searchers() -> [Side; 2] {
    [Side {
        limits: None,
        reports_scores: true,
    }; 2]
}

fn refs(moves: &[String]) -> Vec<&str> {
    moves.iter().map(String::as_str).collect()
}

#[test]
fn a_board_adjudication_is_checked_on_the_board() {
    let mut s = settings(GameKind::Amazons, "inf");
    s.adjudicate = true;
    let start = Amazons::start().to_string();
    let mut position = Amazons::start();
    let two: Vec<String> = (0..2)
        .map(|_| {
            let mv = position.legal_moves()[0];
            position = position.play(mv).unwrap();
            mv.to_string()
        })
        .collect();
    let early = record(
        GameKind::Amazons,
        &start,
        &refs(&two),
        1,
        Termination::Adjudication,
        GameResult::WhiteWins,
    );
    let refused = check(&early, &start, &s, searchers());
    assert!(
        matches!(&refused, Err(Rejection::Ending { actual, .. }) if actual.contains("not split")),
        "{refused:?}"
    );
    // One arrow closes the wall: the board is split, White's side the larger.
    let split = |result| {
        record(
            GameKind::Amazons,
            AMAZONS_ALMOST_SPLIT,
            &["j4-j5/j6"],
            1,
            Termination::Adjudication,
            result,
        )
    };
    let start = AMAZONS_ALMOST_SPLIT;
    assert_eq!(
        check(&split(GameResult::WhiteWins), start, &s, searchers()),
        Ok(())
    );
    assert!(check(&split(GameResult::BlackWins), start, &s, searchers()).is_err());
    // Without the setting, no adjudication is believed.
    s.adjudicate = false;
    assert!(check(&split(GameResult::WhiteWins), start, &s, searchers()).is_err());
    // A game played on past the split (a crash later) should have ended there.
    s.adjudicate = true;
    let mut later = split(GameResult::WhiteWins);
    later.moves.push(MoveRecord {
        mv: "a7-a8/a9".into(),
        ..later.moves[0].clone()
    });
    later.termination = Termination::Crash;
    later.result = GameResult::BlackWins;
    assert!(check(&later, start, &s, searchers()).is_err());
}

#[test]
fn time_forfeits_only_under_a_clock_that_ran_out() {
    let start = Loa::start().to_string();
    let moves = loa_moves(3);
    // After 3 plies Black (who moved first in LOA) has moved twice: White is to move.
    let forfeit = |forfeit_ms: Option<u64>| {
        let mut r = record(
            GameKind::Loa,
            &start,
            &refs(&moves),
            1,
            Termination::TimeForfeit,
            GameResult::BlackWins,
        );
        if let Some(ms) = forfeit_ms {
            r.meta.insert(FORFEIT_MS.into(), ms.into());
        }
        r
    };
    let clock = settings(GameKind::Loa, "10+0.1");
    let refused = |r: Result<(), Rejection>| matches!(r, Err(Rejection::Clock(_)));
    assert!(refused(check(&forfeit(None), &start, &clock, searchers())));
    assert!(refused(check(
        &forfeit(Some(3)),
        &start,
        &clock,
        searchers()
    )));
    // White has 10 s plus an increment after its one move, less 1 ms: it must have
    // taken more than that and the margin.
    assert!(refused(check(
        &forfeit(Some(10_050)),
        &start,
        &clock,
        searchers()
    )));
    assert_eq!(
        check(&forfeit(Some(10_300)), &start, &clock, searchers()),
        Ok(())
    );
    // No clock: no time forfeit at all.
    let none = settings(GameKind::Loa, "inf");
    assert!(refused(check(
        &forfeit(Some(60_000)),
        &start,
        &none,
        searchers()
    )));
    // A movetime: a move past it and the margin.
    let mut movetime = none.clone();
    movetime.movetime_ms = Some(200);
    assert_eq!(
        check(&forfeit(Some(350)), &start, &movetime, searchers()),
        Ok(())
    );
    assert!(refused(check(
        &forfeit(Some(250)),
        &start,
        &movetime,
        searchers()
    )));
    // An engine's own clock (time odds) replaces the tournament's for its side.
    let mut sides = searchers();
    sides[Color::White.index()].limits = Some(MoveLimits {
        time_control: "1+0".parse().unwrap(),
        nodes: None,
        depth: None,
        movetime_ms: None,
    });
    assert_eq!(check(&forfeit(Some(1_200)), &start, &clock, sides), Ok(()));
    assert!(refused(check(
        &forfeit(Some(1_200)),
        &start,
        &clock,
        searchers()
    )));
}

#[test]
fn every_move_fits_its_sides_clock() {
    let start = Loa::start().to_string();
    let moves = loa_moves(2);
    let clock = settings(GameKind::Loa, "10+0.1");
    let game = |time_ms| {
        record(
            GameKind::Loa,
            &start,
            &refs(&moves),
            time_ms,
            Termination::Crash,
            GameResult::WhiteWins,
        )
    };
    assert_eq!(check(&game(9_000), &start, &clock, searchers()), Ok(()));
    // An hour a move under 10+0.1: it would have lost on time at its first move.
    let refused = check(&game(3_600_000), &start, &clock, searchers());
    assert!(
        matches!(&refused, Err(Rejection::Clock(m)) if m.starts_with("ply 1:")),
        "{refused:?}"
    );
    // Without a clock any time goes.
    let none = settings(GameKind::Loa, "inf");
    assert_eq!(check(&game(3_600_000), &start, &none, searchers()), Ok(()));
    // A scaled tournament's game says its factor, within the bounds.
    let mut scaled = clock.clone();
    scaled.scale_by_speed = true;
    let mut slow = game(30_000);
    assert!(
        check(&slow, &start, &scaled, searchers()).is_err(),
        "no factor"
    );
    slow.meta.insert("clock_scale".into(), "4.000".into());
    assert_eq!(check(&slow, &start, &scaled, searchers()), Ok(()));
    slow.meta.insert("clock_scale".into(), "400.000".into());
    assert!(check(&slow, &start, &scaled, searchers()).is_err());
}

#[test]
fn scores_come_only_from_players_that_report_them() {
    let start = Loa::start().to_string();
    let mut s = settings(GameKind::Loa, "inf");
    s.score_rules = ScoreRules {
        resign: Some(ResignRule {
            score: 600,
            moves: 1,
        }),
        ..Default::default()
    };
    let mut game = record(
        GameKind::Loa,
        &start,
        &refs(&loa_moves(2)),
        1,
        Termination::Adjudication,
        GameResult::WhiteWins,
    );
    // Black moved first, seeing itself 7 down; White 7 up.
    game.moves[0].score = Some("cp -700".into());
    game.moves[1].score = Some("cp 700".into());
    assert_eq!(check(&game, &start, &s, searchers()), Ok(()));
    let random = Side::default();
    for sides in [[random, searchers()[1]], [searchers()[0], random]] {
        assert!(matches!(
            check(&game, &start, &s, sides),
            Err(Rejection::Scores(_))
        ));
    }
}

#[test]
fn the_clock_left_after_each_move_runs_down_each_sides_own() {
    let start = Loa::start().to_string();
    let mut r = record(
        GameKind::Loa,
        &start,
        &refs(&loa_moves(4)),
        300,
        Termination::MaxPlies,
        GameResult::Draw,
    );
    r.time_control = "10+0.1".into();
    // Black moves first: 10 s - 0.3 s + 0.1 s each move, each side its own clock.
    assert_eq!(
        clocks_left(&r),
        [Some(9_800), Some(9_800), Some(9_600), Some(9_600)]
    );
    r.time_control = "white 1+0; black inf".into();
    assert_eq!(clocks_left(&r), [None, Some(700), None, Some(400)]);
    r.opening_plies = 2;
    assert_eq!(clocks_left(&r), [None, None, None, Some(700)]);
    r.time_control = "inf".into();
    assert!(clocks_left(&r).iter().all(Option::is_none));
}

#[test]
fn a_record_is_its_tournaments_and_within_a_workers_bounds() {
    let start = Loa::start().to_string();
    let s = settings(GameKind::Loa, "inf");
    let good = record(
        GameKind::Loa,
        &start,
        &refs(&loa_moves(1)),
        1,
        Termination::Crash,
        GameResult::BlackWins,
    );
    assert_eq!(check(&good, &start, &s, searchers()), Ok(()));
    let mut other_rules = good.clone();
    other_rules.rules = "double-connection=draw".into();
    let mut opening = good.clone();
    opening.opening_plies = 1;
    let mut stderr = good.clone();
    stderr.white.stderr = vec!["x".into(); crate::MAX_STDERR_LINES + 1];
    let mut long_line = good.clone();
    long_line.white.stderr = vec!["x".repeat(crate::MAX_STDERR_LINE_CHARS + 1)];
    let mut transcript = good.clone();
    transcript.black.transcript = vec!["y".repeat(1000); 100];
    let mut long_pv = good.clone();
    long_pv.moves[0].pv = vec!["b1-b3".into(); crate::MAX_PV_MOVES + 1];
    let mut wide_pv = good.clone();
    wide_pv.moves[0].pv = vec!["b".repeat(crate::MAX_PV_MOVE_CHARS + 1)];
    // Telemetry within the bounds is taken.
    let mut telemetry = good.clone();
    telemetry.moves[0].pv = vec!["b1-b3".into(); crate::MAX_PV_MOVES];
    (telemetry.moves[0].seldepth, telemetry.moves[0].nps) = (Some(9), Some(1_000_000));
    telemetry.moves[0].engine_ms = Some(0);
    assert_eq!(check(&telemetry, &start, &s, searchers()), Ok(()));
    for (what, r) in [
        ("a long principal variation", long_pv),
        ("a principal variation move", wide_pv),
        ("rules", other_rules),
        ("opening plies", opening),
        ("stderr lines", stderr),
        ("a stderr line", long_line),
        ("transcript", transcript),
    ] {
        assert!(
            matches!(
                check(&r, &start, &s, searchers()),
                Err(Rejection::Record(_))
            ),
            "{what}"
        );
    }
}
