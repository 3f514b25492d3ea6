//! `tourney bench`: the benchmark suites, each printing the figures it measures.

mod cluster;
mod coordinator;
mod flood;
pub(crate) mod harness;
mod outside;
mod rules;
mod search;
mod selfplay;
mod store;
mod time;
mod validate;

use anyhow::Result;
use clap::{Args, ValueEnum};
use tourney_rules::{Amazons, Loa};

/// What to benchmark.
#[derive(Clone, Copy, ValueEnum)]
enum Suite {
    /// Perft and random playouts of both games, single-threaded.
    Rules,
    /// Alpha-beta on fixed positions to fixed depths: total nodes (the search's signature)
    /// and nodes/s.
    Search,
    /// Self-play through the referee: `ab:depth=2` against itself from random 4-ply
    /// openings, one thread; games per minute.
    Selfplay,
    /// Load test of the coordinator: simulated workers on loopback lease pairs and report
    /// instant results; pair results committed durably per second, lease latency p50/p99.
    Coordinator,
    /// Distribution overhead: the same pairs played by the referee alone (2 threads) and
    /// by a 2-worker cluster on loopback; games/s of each.
    Cluster,
    /// The store at scale: `--pairs` pairs of synthetic valid random LOA games written,
    /// then a coordinator process restarted on them and the games exported; write rate,
    /// bytes a game, time until serving, resident memory, export rate.
    Store,
    /// The outside-engine path: `random` against `random` through a worker's game slots
    /// (`--slots`), as outside engines (`tourney engine random`, kept across pairs) and in
    /// process; plies/s and CPU µs per ply, the runner's and the engines' apart.
    Outside,
    /// Time keeping of the built-in players, one thread: each player of both games plays
    /// the first `--moves` plies of a game against itself (two instances, each kept across
    /// its moves as in a tournament), under `--movetime` and under a clock of
    /// `--clock-ms`; the worst and median overrun per player and game.
    Time,
    /// A coordinator process flooded: `--reports` reports of `--report-mb` MiB of records
    /// at once, then `--streams` dashboard event streams; its resident memory before, at
    /// its peak and after, its threads, what it read, deferred and refused.
    Flood,
    /// The coordinator's check of reported games, one thread: LOA games of `ab:depth=1`
    /// against itself from random 4-ply openings, read from their JSON and replayed on the
    /// rules core; games validated per second.
    Validate,
}

/// Arguments of `tourney bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// The benchmark suite.
    suite: Suite,
    /// Seconds spent on each playout measurement.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Seed of the random playouts.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Search depth of the LOA positions (bench search).
    #[arg(long, default_value_t = 6)]
    loa_depth: u32,
    /// Search depth of the Amazons positions (bench search).
    #[arg(long, default_value_t = 2)]
    amazons_depth: u32,
    /// Simulated workers (bench coordinator).
    #[arg(long, default_value_t = 1000)]
    workers: usize,
    /// Pace the simulated workers to about this many pair results/s in total, to measure
    /// latency at a given load (bench coordinator; 0: as fast as they can).
    #[arg(long, default_value_t = 0)]
    rate: u64,
    /// The coordinator's store cache, MiB (bench coordinator): as `--cache-mb` of
    /// `tourney coordinator`.
    #[arg(long, default_value_t = tourney_store::DEFAULT_CACHE_MB)]
    cache_mb: u64,
    /// Pairs played (bench cluster) or stored (bench store): enough that the start (connections, first leases, the
    /// players' tables, buffers growing), a fixed cost, weighs as little as in a tournament.
    #[arg(long, default_value_t = 10000)]
    pairs: usize,
    /// Search depth of the stronger player (bench cluster): `ab:depth=D` against
    /// `ab:depth=D-1`; 2 gives games of about a millisecond, 3 of a few.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(2..=6))]
    depth: u32,
    /// Milliseconds a move (bench time).
    #[arg(long, default_value_t = 200)]
    movetime: u64,
    /// The clock, milliseconds (bench time): each player spends what its own time
    /// management gives a move of it.
    #[arg(long, default_value_t = 10_000)]
    clock_ms: u64,
    /// Plies timed per player and game (bench time).
    #[arg(long, default_value_t = 20)]
    moves: usize,
    /// Game slots (bench outside).
    #[arg(long, default_value_t = 2)]
    slots: usize,
    /// The longest game, plies (bench outside).
    #[arg(long, default_value_t = 200)]
    max_plies: u32,
    /// Reports sent at once (bench flood).
    #[arg(long, default_value_t = 16)]
    reports: usize,
    /// MiB of records in each (bench flood).
    #[arg(long, default_value_t = 63)]
    report_mb: usize,
    /// Dashboard event streams opened (bench flood).
    #[arg(long, default_value_t = 2000)]
    streams: usize,
}

pub(crate) fn run(args: &BenchArgs) -> Result<()> {
    match args.suite {
        Suite::Rules => rules::rules(args),
        Suite::Coordinator => {
            coordinator::coordinator(args.workers, args.seconds, args.rate, args.cache_mb)?
        }
        Suite::Cluster => cluster::cluster(args.pairs, args.depth)?,
        Suite::Validate => validate::validate(args)?,
        Suite::Time => crate::bench::time::time(args.movetime, args.clock_ms, args.moves)?,
        Suite::Outside => crate::bench::outside::outside(args.pairs, args.slots, args.max_plies)?,
        Suite::Store => crate::bench::store::store(args.pairs)?,
        Suite::Flood => crate::bench::flood::flood(args.reports, args.report_mb, args.streams)?,
        Suite::Selfplay => {
            selfplay::selfplay::<Loa>(args)?;
            selfplay::selfplay::<Amazons>(args)?;
        }
        Suite::Search => {
            println!("alpha-beta (ab), one thread, fixed depths");
            search::search::<Loa>(search::LOA_POSITIONS, args.loa_depth)?;
            search::search::<Amazons>(search::AMAZONS_POSITIONS, args.amazons_depth)?;
        }
    }
    Ok(())
}
