//! `tourney bench time`: how well each built-in player keeps its time. Every player of
//! both games plays the first moves of a game against itself, under `movetime` and under a
//! clock, and the worst overrun (time taken past the limit) is printed per player, game and
//! limit.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::Result;
use tourney_ai::{Clock, Heuristics, Limits, PlayerSpec, budget};
use tourney_rules::{Amazons, Game, Loa};

/// The players measured.
const PLAYERS: [&str; 3] = ["ab", "mcts", "random"];

/// Each move's time past `allowed` in a game between two `spec` players from the start
/// (the first `moves` plies), each asked under `limits` as in a tournament: a player kept
/// across its moves, so that what it keeps from one move to the next (an MCTS tree) is
/// measured too. The worst with the ply it was at, and the median; milliseconds
/// (negative: early).
fn overruns<P: Heuristics>(
    spec: &str,
    moves: usize,
    limits: &Limits,
    allowed: Duration,
) -> Result<(f64, usize, f64)> {
    let spec: PlayerSpec = spec.parse()?;
    let mut players = [spec.build::<P>()?, spec.build::<P>()?];
    for player in &mut players {
        player.new_game(1);
    }
    let mut game = Game::new(P::start(), Default::default());
    let mut past: Vec<(f64, usize)> = Vec::new();
    while past.len() < moves && game.outcome().is_none() {
        let started = Instant::now();
        let chosen =
            players[game.ply() % 2].choose(&game, limits, &AtomicBool::new(false), &mut |_| {});
        let took = started.elapsed().as_secs_f64() * 1000.0;
        past.push((took - allowed.as_secs_f64() * 1000.0, game.ply()));
        game.play(chosen.mv)?;
    }
    past.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (worst, ply) = past.last().copied().unwrap_or_default();
    Ok((worst, ply, past.get(past.len() / 2).map_or(0.0, |p| p.0)))
}

/// Prints each player's worst and median overrun in game `P` under `movetime` and under a
/// clock of `clock_ms` (past the player's own hard budget of it).
fn game_overruns<P: Heuristics>(movetime_ms: u64, clock_ms: u64, moves: usize) -> Result<()> {
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
            overruns::<P>(spec, moves, &movetime, Duration::from_millis(movetime_ms))?;
        let (clock_worst, clock_ply, clock_median) = overruns::<P>(spec, moves, &clock, hard)?;
        println!(
            "{:<8} {:<7} {:>6} {:>+10.1} {:>6} {:>+8.1}   {:>7} {:>+10.1} {:>6} {:>+8.1}",
            P::GAME.name(),
            spec,
            moves,
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

/// Runs the time-keeping benchmark: the first `moves` plies of a game a player, game and
/// limit; `movetime_ms` a move, and a clock of `clock_ms`.
pub(crate) fn time(movetime_ms: u64, clock_ms: u64, moves: usize) -> Result<()> {
    println!(
        "Time keeping, one thread: the first {moves} plies of a game of each player against \
         itself (two instances, as in a tournament); overrun = time taken past the limit, ms \
         (goal: at most +10)"
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
    game_overruns::<Loa>(movetime_ms, clock_ms, moves)?;
    game_overruns::<Amazons>(movetime_ms, clock_ms, moves)?;
    Ok(())
}
