//! `tourney bench time`: how well each built-in player keeps its time. Every player of
//! both games is asked for a move at positions along a game, under `movetime` and under a
//! clock, and the worst overrun (time taken past the limit) is printed per player, game and
//! limit.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Result;
use tourney_ai::{Clock, Heuristics, Limits, PlayerSpec, budget};
use tourney_rules::{Amazons, Game, Loa};

/// The players measured.
const PLAYERS: [&str; 3] = ["ab", "mcts", "random"];

/// Positions along a game of `ab:depth=1` against itself (a ply in every `every`), at
/// most `count` of them, from the start.
fn positions<P: Heuristics>(count: usize, every: usize) -> Result<Vec<Game<P>>> {
    let spec: PlayerSpec = "ab:depth=1".parse()?;
    let mut player = spec.build::<P>()?;
    let mut game = Game::new(P::start(), Default::default());
    let mut out = Vec::new();
    while out.len() < count && game.outcome().is_none() {
        if game.ply() % every == 0 {
            out.push(game.clone());
        }
        let chosen = player.choose(
            &game,
            &Limits::default(),
            &AtomicBool::new(false),
            &mut |_| {},
        );
        game.play(chosen.mv)?;
    }
    Ok(out)
}

/// The worst time past `allowed` over `games` (each asked once under `limits`, one player
/// in turn, as in a game) with the ply it was at, and the median; milliseconds (negative:
/// early).
fn overruns<P: Heuristics>(
    spec: &str,
    games: &[Game<P>],
    limits: &Limits,
    allowed: Duration,
) -> Result<(f64, usize, f64)> {
    let spec: PlayerSpec = spec.parse()?;
    let mut player = spec.build::<P>()?;
    let mut past: Vec<(f64, usize)> = Vec::new();
    for game in games {
        let started = Instant::now();
        player.choose(game, limits, &AtomicBool::new(false), &mut |_| {});
        let took = started.elapsed().as_secs_f64() * 1000.0;
        past.push((took - allowed.as_secs_f64() * 1000.0, game.ply()));
    }
    past.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (worst, ply) = past.last().copied().unwrap_or_default();
    Ok((worst, ply, past.get(past.len() / 2).map_or(0.0, |p| p.0)))
}

/// Prints each player's worst and median overrun in game `P` under `movetime` and under a
/// clock of `clock_ms` (past the player's own hard budget of it).
fn game_overruns<P: Heuristics>(movetime_ms: u64, clock_ms: u64, count: usize) -> Result<()> {
    let games = positions::<P>(count, 4)?;
    let movetime = Limits {
        movetime: Some(Duration::from_millis(movetime_ms)),
        ..Limits::default()
    };
    let clock = Limits {
        clock: Some(Clock {
            time: Duration::from_millis(clock_ms),
            increment: Duration::ZERO,
            moves_to_go: None,
        }),
        ..Limits::default()
    };
    let hard = budget(&clock).map_or(Duration::ZERO, |b| b.hard);
    for spec in PLAYERS {
        let (worst, ply, median) =
            overruns::<P>(spec, &games, &movetime, Duration::from_millis(movetime_ms))?;
        let (clock_worst, clock_ply, clock_median) = overruns::<P>(spec, &games, &clock, hard)?;
        println!(
            "{:<8} {:<7} {:>6} {:>+10.1} {:>6} {:>+8.1}   {:>7} {:>+10.1} {:>6} {:>+8.1}",
            P::GAME.name(),
            spec,
            games.len(),
            worst,
            ply,
            median,
            hard.as_millis(),
            clock_worst,
            clock_ply,
            clock_median
        );
    }
    Ok(())
}

/// Runs the time-keeping benchmark: `count` positions a game, `movetime_ms` a move, and a
/// clock of `clock_ms`.
pub(crate) fn time(movetime_ms: u64, clock_ms: u64, count: usize) -> Result<()> {
    println!(
        "Time keeping, one thread: each player asked at {count} positions per game; overrun = \
         time taken past the limit, ms (goal: at most +10)"
    );
    println!(
        "{:<8} {:<7} {:>6} {:>10} {:>6} {:>8}   {:>7} {:>10} {:>6} {:>8}",
        "game",
        "player",
        "moves",
        "worst",
        "at ply",
        "median",
        "budget",
        "worst",
        "at ply",
        "median"
    );
    println!(
        "{:<8} {:<7} {:>6} {:>26}   {:>34}",
        "",
        "",
        "",
        format!("movetime {movetime_ms}"),
        format!("clock {clock_ms} ms, past its budget")
    );
    game_overruns::<Loa>(movetime_ms, clock_ms, count)?;
    game_overruns::<Amazons>(movetime_ms, clock_ms, count)?;
    Ok(())
}
