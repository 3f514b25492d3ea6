//! `tourney bench`: the benchmark suites, each printing the figures it measures.

mod fleet;
mod games;
pub(crate) mod harness;
mod stats;

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
    /// The dashboard with many tests: `--tournaments` ended tests stored, a coordinator
    /// process started on them, and the page, the overview, searches, a test's detail and
    /// the machines each timed over loopback; median and slowest ms.
    Pages,
    /// The store at scale: `--pairs` pairs of synthetic valid random LOA games written,
    /// then a coordinator process restarted on them and the games exported and downloaded
    /// over HTTP; write rate, bytes a game, time until serving, resident memory, export
    /// and download rates.
    Store,
    /// The outside-engine path: `random` against `random` through a worker's game slots
    /// (`--slots`), as outside engines (`tourney engine random`, kept across pairs) in each
    /// protocol dialect (`--protocol`: one) and in process; plies/s and the machine's CPU
    /// µs per ply, the runner's and the rest (engines, kernel) apart, and the engine
    /// processes started.
    Outside,
    /// Time keeping of the built-in players, one thread: each player of both games plays
    /// the first `--moves` plies of a game against itself (two instances, each kept across
    /// its moves as in a tournament), under `--movetime` and under a clock of
    /// `--clock-ms`; the worst and median overrun per player and game.
    Time,
    /// A coordinator process flooded: `--reports` reports of `--report-mb` MiB of records
    /// at once, then `--streams` dashboard event streams, then 128 guesses at one
    /// password and 400 logins at once; its resident memory before, at its peak and
    /// after, its threads, what it read, deferred, refused and checked.
    Flood,
    /// Engines from source: three commits of a C engine in a local git repository, each
    /// made ready as a worker does (build and bench) with the host cache empty and then
    /// warm; then a small SPRT between two of them, `submit --wait` to verdict.
    Source,
    /// The coordinator's check of reported games, one thread: LOA games of `ab:depth=1`
    /// against itself from random 4-ply openings, read from their JSON and replayed on the
    /// rules core; games validated per second.
    Validate,
    /// Pinned cores: `--slots` games (0: one a physical core) search at once for
    /// `--seconds`, `--rounds` times, unpinned and then pinned as `worker --affinity auto`
    /// pins them; the spread of nodes/s between games each way.
    Affinity,
    /// Programs and networks at fleet scale: one `--mib` MiB file is uploaded to a
    /// coordinator process, then `--fetchers` simulated workers on one host fetch it over
    /// HTTP, sharing the host cache and (when it fits in 4 GiB) each with its own; times,
    /// bytes the coordinator sent, and both processes' peak memory.
    Artifacts,
    /// Data generation on one core: `ab:nodes=N` (`--nodes`) against itself from genfens
    /// openings for `--seconds`, positions kept under datagen's default filters per
    /// second; then a Texel loss pass over them, positions a second.
    Datagen,
    /// Grouped tests of several takes (`format = "takes"`), simulated: `--groups` groups
    /// of `--takes` takes with nElo bounds [`--elo0`, `--elo1`] against as many sets of
    /// separate SPRTs, in three scenarios (all takes at elo0, one at elo1, two halfway);
    /// mean pairs of each and how often each accepts.
    Takes,
    /// The fleet shared by core-time, on the real scheduler: 500 simulated workers of 8
    /// cores for 4 hours, tests of 10+0.1 and 60+0.6 with one thread and 10+0.1 with eight,
    /// one author's five tests, one test an hour late; each test's share of the
    /// core-seconds in every 10-minute window against its target.
    Share,
    /// A rating pool, simulated: 32 versions with known ratings played until every 95 %
    /// interval is under ±15 Elo, by the pool's pairing by information, by a round robin
    /// and by a chain of SPRTs (`--runs` runs from `--seed`); games each needed, the
    /// widest interval, rating and rank errors; then the time a fit and a choice take at
    /// 50 members and 100,000 games.
    Pool,
}

/// Measure speed: each suite prints the figures it measures.
///
/// `rules`, `search`, `selfplay`, `time` and `validate` measure the rules core, the players
/// and the coordinator's check on one thread; `coordinator`, `cluster`, `store`, `outside`
/// and `flood` measure the service under load. Run them on your own hardware; the figures
/// in docs/operations.md come from a 2-core VM.
///
/// `coordinator` load-tests a `tourney coordinator` process: simulated workers (sharing
/// HTTP/2 connections, one for every 500 workers and at least 8) register, then lease and
/// report instant games (the side to move crashes at once: games that pass the checks in
/// no time); it prints durable pair results/s, lease latency p50/p99 (`--rate` paces them
/// to a given load), and the coordinator's resident memory before the workers, with all of
/// them registered (KiB a worker) and at the end.
///
/// `cluster` (10,000 pairs by default, about 20 s) plays the same pairs (`ab:depth=D`
/// against `ab:depth=D-1`, LOA) by the referee alone (2 threads) and by a 2-worker cluster
/// over loopback, timed from submission to the last result; it prints games/s, CPU per game
/// and how busy the cores were for both, and the coordinator's lease and group-commit
/// counts.
///
/// `store` (10,000 pairs by default) writes synthetic, valid random LOA games (about 214
/// plies each) through the store's commit path in commits of 64 pairs, then restarts a
/// `tourney coordinator` process on them and exports every game, then downloads them from
/// its dashboard's server as gzip PGN and JSON Lines: write rate, bytes a game on disk,
/// time until the restarted coordinator serves, its resident memory, export and download
/// games/s.
///
/// `outside` plays the same pairs of `random` against `random` (`--game`, LOA by default,
/// from the start) through a worker's game slots, first as outside engines (`tourney
/// engine random`, processes kept across pairs as a worker keeps them) speaking each
/// protocol dialect that plays the game in turn (tourney, ugi, uci, codingame, and gtp for
/// Amazons; `--protocol` picks one), then in process: plies/s and CPU µs per ply of the
/// whole machine (from `/proc/stat`, waiting for it to be idle before and after: run it on
/// an otherwise idle machine), the runner's own and the rest (the engines and the kernel's
/// work for them, such as tearing down an exited engine's namespaces) apart, and how many
/// engine processes were started (a CodinGame bot needs one a game, so its start is part of
/// each game's cost).
///
/// `time` has every built-in player (`ab`, `mcts`, `random`) of both games play the first
/// `--moves` plies of a game against itself (two instances, each kept across its moves, so
/// an MCTS tree carried from one move to the next is timed too) under `--movetime` and
/// under a clock: the worst overrun (ms past the limit, or past the player's own budget of
/// the clock) with the ply it was at, and the median. Goal: at most +10 ms on an idle core.
///
/// `flood` floods a `tourney coordinator` process: `--reports` reports of `--report-mb` MiB
/// of records at once (each from a registration of its own), then `--streams` dashboard
/// event streams from one address, each part against a fresh process: its resident memory
/// before, at its peak (`VmHWM`) and after, its threads, and how many reports were read or
/// deferred and streams served or refused; then 128 wrong passwords for one user at once
/// (how many it checks: goal, the throttle's 5) and 400 logins of unknown names at once
/// (its peak memory: goal, under 300 MiB).
///
/// `pages` stores `--tournaments` ended tests (10,000 by default), starts a `tourney
/// coordinator` process on them, and times what a browser asks of the dashboard, each 20
/// times over loopback: the page, the overview, searches (by name, by author and state, a
/// page from the middle, one that matches nothing), one test's detail and the machines;
/// the median and slowest milliseconds and the answer's size, after the time until it
/// serves and its resident memory.
///
/// `source` builds three commits of a small C engine kept in a local git repository as a
/// worker does before an engine's first game (fetch, `cc`, bench), first with the host's
/// build cache empty and then warm, and prints both times per commit; then it runs a
/// coordinator and two worker processes sharing one host cache and times `tourney submit
/// --wait` of an SPRT between two commits to its verdict.
///
/// `validate` runs the coordinator's check of reported games on one thread (read the typed
/// record, replay it on the rules core with its clocks and scores, summarise it, write it
/// again as stored): games validated per second, with their length.
///
/// `pool` simulates a rating pool of 32 versions with known ratings (small steps and four
/// jumps, two of them regressions) brought to every 95 % interval under ±15 Elo relative to
/// the first, three ways: the pool's pairing by information, a round robin, and a chain of
/// SPRTs (each version against the one before, nElo [0, 2], then more pairs along the
/// chain); it prints the games each needed, the widest interval, rating and rank errors and
/// the ratios, then how long a fit and a choice of pairs take at 50 members and 100,000
/// games. Under half a minute with `--runs 3` on two cores.
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
    /// The protocol the outside engines speak (bench outside): tourney, ugi, uci,
    /// codingame or gtp [default: each that plays the game, in turn].
    #[arg(long)]
    protocol: Option<tourney_runner::dialect::Dialect>,
    /// The game played (bench outside): loa or amazons.
    #[arg(long, default_value = "loa")]
    game: tourney_rules::GameKind,
    /// Reports sent at once (bench flood).
    #[arg(long, default_value_t = 16)]
    reports: usize,
    /// MiB of records in each (bench flood).
    #[arg(long, default_value_t = 63)]
    report_mb: usize,
    /// Dashboard event streams opened (bench flood).
    #[arg(long, default_value_t = 2000)]
    streams: usize,
    /// Tests stored (bench pages).
    #[arg(long, default_value_t = 10_000)]
    tournaments: u64,
    /// Simulated workers on one host (bench artifacts).
    #[arg(long, default_value_t = 200)]
    fetchers: usize,
    /// The artifact's size, MiB (bench artifacts).
    #[arg(long, default_value_t = 16)]
    mib: u64,
    /// Rounds of each measurement (bench affinity).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Nodes a move of the players (bench datagen).
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Takes in each simulated group (bench takes).
    #[arg(long, default_value_t = 4)]
    takes: usize,
    /// Groups simulated a scenario (bench takes).
    #[arg(long, default_value_t = 1000)]
    groups: u64,
    /// The bounds' elo0, normalized Elo (bench takes).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    elo0: f64,
    /// The bounds' elo1, normalized Elo (bench takes).
    #[arg(long, default_value_t = 10.0, allow_negative_numbers = true)]
    elo1: f64,
    /// Simulated runs averaged (bench pool), each with versions and games of its own seed.
    #[arg(long, default_value_t = 3)]
    runs: u64,
}

pub(crate) fn run(args: &BenchArgs) -> Result<()> {
    use fleet::{artifacts, cluster, coordinator, flood, pages, share, source, store};
    use games::{affinity, datagen, outside, rules, search, selfplay, time, validate};
    use stats::{pool, takes};
    match args.suite {
        Suite::Rules => rules::rules(args),
        Suite::Coordinator => {
            coordinator::coordinator(args.workers, args.seconds, args.rate, args.cache_mb)?
        }
        Suite::Cluster => cluster::cluster(args.pairs, args.depth)?,
        Suite::Validate => validate::validate(args)?,
        Suite::Source => source::source()?,
        Suite::Artifacts => artifacts::artifacts(args.fetchers, args.mib)?,
        Suite::Affinity => affinity::affinity(args.slots, args.seconds, args.rounds)?,
        Suite::Time => time::time(args.movetime, args.clock_ms, args.moves)?,
        Suite::Outside => outside::outside(
            args.pairs,
            args.slots,
            args.max_plies,
            args.game,
            args.protocol,
        )?,
        Suite::Store => store::store(args.pairs)?,
        Suite::Pages => pages::pages(args.tournaments)?,
        Suite::Flood => flood::flood(args.reports, args.report_mb, args.streams)?,
        Suite::Takes => takes::takes(args)?,
        Suite::Share => share::share()?,
        Suite::Pool => pool::pool(args)?,
        Suite::Datagen => {
            datagen::datagen::<Loa>(args)?;
            datagen::datagen::<Amazons>(args)?;
        }
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
