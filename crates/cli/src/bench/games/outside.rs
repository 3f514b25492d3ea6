//! `tourney bench outside`: what the outside-engine path costs. The same pairs of
//! `random` against `random` are played through a worker's game slots, first with both
//! sides as outside engines (`tourney engine random`, processes kept across pairs as a
//! worker keeps them), then in process; plies per second and CPU time per ply: the whole
//! machine's (it should have nothing else to do), the runner's own and the rest (the
//! engines, and the kernel's work for them) apart, and how many engine processes were
//! started (CodinGame bots need one a game).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tourney_model::TimeControl;
use tourney_model::job::{Engine, EngineKind, GameSettings, PairJob};
use tourney_rules::{GameKind, Position, with_position};
use tourney_runner::dialect::Dialect;

use crate::bench::harness::{machine_busy, own_cpu, wait_for_idle};

/// A pair of `random` against `random` in `game` from the start, to at most `max_plies`.
fn job(pair: u64, game: GameKind, engine: &dyn Fn(&str) -> Engine, max_plies: u32) -> PairJob {
    PairJob {
        tournament: 1,
        pair,
        settings: GameSettings {
            tournament_name: "bench-outside".into(),
            game,
            rules: String::new(),
            time_control: TimeControl::Infinite,
            nodes: None,
            depth: None,
            movetime_ms: None,
            max_plies: Some(max_plies),
            adjudicate: false,
            margin_ms: 100,
            scale_by_speed: false,
            score_rules: Default::default(),
            engine_limits: Default::default(),
            engine_logs: Default::default(),
            engine_openings: false,
        },
        first: engine("a"),
        second: engine("b"),
        opening: with_position!(game, P => P::start().to_string()),
        opening_index: 0,
        second_opening: None,
        ticket: String::new(),
        gpus: Default::default(),
        seed: pair + 1,
    }
}

/// What one way of playing measured.
struct Measured {
    plies: u64,
    wall: Duration,
    /// The runner's own CPU time (this process).
    runner: Duration,
    /// The rest of the machine's: the engines and the kernel's work for them.
    others: Duration,
    /// Engine processes started (a CodinGame bot's is per game: its cost is the game's).
    starts: u64,
}

/// Plays `pairs` pairs on `slots` threads through the worker's game slots.
fn measure(
    pairs: usize,
    slots: usize,
    max_plies: u32,
    game: GameKind,
    engine: Arc<dyn Fn(&str) -> Engine + Send + Sync>,
) -> Result<Measured> {
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let policy = crate::support::engines::own_engines();
    let next = Arc::new(AtomicUsize::new(0));
    // Work left over from before (the kernel tearing down engines) is not this run's.
    wait_for_idle(Duration::from_secs(30));
    let (own_before, machine_before) = (own_cpu(), machine_busy());
    let started = Instant::now();
    let threads: Vec<_> = (0..slots)
        .map(|_| {
            let (next, engine, metrics) = (Arc::clone(&next), Arc::clone(&engine), metrics.clone());
            let policy = policy.clone();
            std::thread::spawn(move || -> Result<Vec<Vec<u8>>> {
                let mut results = Vec::new();
                loop {
                    let pair = next.fetch_add(1, Ordering::Relaxed);
                    if pair >= pairs {
                        return Ok(results);
                    }
                    let job = job(pair as u64, game, engine.as_ref(), max_plies);
                    let result = tourney_worker::play_here(&job, &policy, &metrics)?;
                    results.push(result.games_lz4);
                }
            })
        })
        .collect();
    let mut records = Vec::new();
    for t in threads {
        records.extend(
            t.join()
                .map_err(|_| anyhow::anyhow!("a game slot panicked"))??,
        );
    }
    let wall = started.elapsed();
    tourney_worker::retire_engines(&metrics);
    // What the kernel still does for the exited engines is counted too.
    wait_for_idle(Duration::from_secs(30));
    let own = own_cpu() - own_before;
    let machine = machine_busy()
        .zip(machine_before)
        .map_or(own, |(after, before)| after.saturating_sub(before));
    let mut plies = 0u64;
    for lz4 in records {
        let json = lz4_flex::decompress_size_prepended(&lz4).context("a pair's records")?;
        let games: Vec<tourney_model::GameRecord> = serde_json::from_slice(&json)?;
        plies += games.iter().map(|g| g.moves.len() as u64).sum::<u64>();
    }
    Ok(Measured {
        plies,
        wall,
        runner: own,
        others: machine.saturating_sub(own),
        starts: metrics.engine_starts.get(),
    })
}

fn row(label: &str, m: &Measured) {
    let per_ply = |d: Duration| d.as_secs_f64() * 1e6 / m.plies.max(1) as f64;
    println!(
        "{label:<34} {:>9} {:>11.0} {:>10.2} {:>10.2} {:>10.2} {:>8}",
        m.plies,
        m.plies as f64 / m.wall.as_secs_f64(),
        per_ply(m.runner + m.others),
        per_ply(m.runner),
        per_ply(m.others),
        m.starts
    );
}

/// Runs the benchmark: `pairs` pairs at `slots` game slots, games of at most `max_plies`,
/// the outside engines speaking `protocol` (all the dialects in turn when `None`).
pub(crate) fn outside(
    pairs: usize,
    slots: usize,
    max_plies: u32,
    game: GameKind,
    protocol: Option<Dialect>,
) -> Result<()> {
    crate::support::engines::until_stopped(move || {
        measure_all(pairs, slots, max_plies, game, protocol)
    })
}

/// The measurements of [`outside`]: outside engines in each dialect, then in process.
fn measure_all(
    pairs: usize,
    slots: usize,
    max_plies: u32,
    game: GameKind,
    protocol: Option<Dialect>,
) -> Result<()> {
    let exe = std::env::current_exe().context("finding this program")?;
    println!(
        "random against random, {game} from the start, {pairs} pairs at {slots} game slots, at \
         most {max_plies} plies a game, through a worker's game slots"
    );
    println!(
        "{:<34} {:>9} {:>11} {:>10} {:>10} {:>10} {:>8}",
        "players", "plies", "plies/s", "CPU µs/ply", "runner", "engines", "starts"
    );
    let mut dialects = protocol.map_or(Dialect::ALL.to_vec(), |d| vec![d]);
    // CodinGame's process a game goes last: the kernel tears down each one's namespaces
    // after it exits, for a while, and would slow the dialects measured after it.
    dialects.sort_by_key(|&d| d == Dialect::CodinGame);
    for dialect in dialects {
        if !tourney_model::source::protocol_plays(dialect.name(), game) {
            continue;
        }
        let command = format!(
            "\"{}\" engine random --protocol {dialect} --game {game}",
            exe.display()
        );
        let outside: Arc<dyn Fn(&str) -> Engine + Send + Sync> =
            Arc::new(move |name: &str| Engine {
                name: name.into(),
                kind: EngineKind::Outside {
                    command: command.clone(),
                    artifact_sha256: None,
                    options: Vec::new(),
                    source: None,
                    files: Vec::new(),
                    bench: None,
                    reference_nps: None,
                    protocol: dialect.to_string(),
                    threads: 1,
                },
                limits: None,
            });
        row(
            &format!("tourney engine random ({dialect})"),
            &measure(pairs, slots, max_plies, game, outside)?,
        );
    }
    let builtin: Arc<dyn Fn(&str) -> Engine + Send + Sync> = Arc::new(|name: &str| Engine {
        name: name.into(),
        kind: EngineKind::BuiltIn("random".into()),
        limits: None,
    });
    row(
        "random (in process)",
        &measure(pairs, slots, max_plies, game, builtin)?,
    );
    Ok(())
}
