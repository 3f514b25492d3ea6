//! `tourney bench`: speed figures of the rules core.

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::{Args, ValueEnum};
use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use std::sync::atomic::AtomicBool;
use tourney_ai::{Heuristics, Limits, PlayerSpec};
use tourney_plan::openings::{OpeningSettings, generate};
use tourney_rules::{Amazons, Game, GameKind, Loa, Position, perft, random_playout};
use tourney_runner::{Adjudicate, BuiltIn, Seat, Setup, play as referee_play};

/// The search benchmark's LOA positions: the start and the oracle's perft positions.
const LOA_POSITIONS: &[&str] = &[
    "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
    "1bb1bw2/w6w/w2b2b1/w7/w1b4w/w3w3/2w3ww/2bb1bb1 b",
    "1b1b2b1/w2b3w/b1w2w2/w7/7w/wb3b1w/2wb3w/1b2bb2 w",
    "1b1w2b1/w4w1w/7b/1w3w2/1b2w3/w2b4/7w/2bb2bw b",
    "8/2bb1b1w/w6w/1bw2ww1/2bw4/wb2b2w/w6b/4b3 b",
    "bw4bb/2b5/w2bb3/2w2w2/3w1w2/1ww2bwb/w6w/b7 b",
];

/// The search benchmark's Amazons positions: the start and three of the oracle's.
const AMAZONS_POSITIONS: &[&str] = &[
    "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w",
    "3b1b4/1x2xw4/3x1x4/5x3b/8x1/6x3/3w3x1w/2x3w3/5bx3/10 w",
    "10/xx1x3xx1/x2xx4w/w3x1bx2/2x2b2x1/2x1x1x3/1b4x2b/3w1x4/2x3w3/1x1x6 w",
    "x3x5/xw4xb2/x3x2x2/2xx1xx2x/xwb1xx4/1bx1x1xxxx/1x2x2w2/1w5x1x/3xx3b1/1x1x4x1 w",
];

/// Plays `ab:depth=2` against itself through the referee for `args.seconds`.
fn selfplay<P: Heuristics + Adjudicate>(args: &BenchArgs) -> Result<()> {
    let settings = OpeningSettings {
        plies: 4,
        count: 200,
        seed: args.seed,
        balanced: None,
        judge_budget: None,
    };
    let openings = generate::<P>(&settings).map_err(anyhow::Error::msg)?;
    let spec = match P::GAME {
        GameKind::Loa => "ab:depth=2",
        GameKind::Amazons => "ab:depth=1",
    };
    let (mut white, mut black) = (
        BuiltIn::<P>::new(spec).map_err(anyhow::Error::msg)?,
        BuiltIn::<P>::new(spec).map_err(anyhow::Error::msg)?,
    );
    let started = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while started.elapsed().as_secs_f64() < args.seconds {
        let mut setup = Setup::<P>::new(Default::default());
        setup.start = openings[games as usize % openings.len()]
            .parse()
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        setup.max_plies = Some(1000);
        let record = play_a_b(&setup, &mut white, &mut black)?;
        games += 1;
        plies += record.moves.len() as u64;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} self-play {spec} vs {spec}: {games} games in {seconds:.2} s = {:.0} games/minute ({:.1} plies/game)",
        P::GAME,
        games as f64 / seconds * 60.0,
        plies as f64 / games.max(1) as f64
    );
    Ok(())
}

/// Searches each position to `depth` with a fresh `ab` player; prints nodes and nodes/s.
fn search<P: Heuristics>(positions: &[&str], depth: u32) -> Result<()> {
    let (mut nodes, mut seconds) = (0u64, 0f64);
    for text in positions {
        let position: P = text
            .parse()
            .map_err(|e| anyhow::anyhow!("bench position '{text}': {e}"))?;
        let mut player = "ab".parse::<PlayerSpec>()?.build::<P>()?;
        let game = Game::new(position, Default::default());
        let limits = Limits {
            depth: Some(depth),
            ..Limits::default()
        };
        let started = Instant::now();
        let result = player.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        seconds += started.elapsed().as_secs_f64();
        nodes += result.info.nodes;
        println!("  {text}: {} ({} nodes)", result.mv, result.info.nodes);
    }
    println!(
        "{} depth {depth}: {nodes} nodes in {seconds:.3} s = {:.2} M nodes/s",
        P::GAME,
        nodes as f64 / seconds / 1e6
    );
    Ok(())
}

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
        Suite::Rules => rules(args),
        Suite::Coordinator => {
            crate::load::coordinator(args.workers, args.seconds, args.rate, args.cache_mb)?
        }
        Suite::Cluster => crate::load::cluster(args.pairs, args.depth)?,
        Suite::Validate => validate(args)?,
        Suite::Time => crate::bench_time::time(args.movetime, args.clock_ms, args.moves)?,
        Suite::Outside => crate::bench_outside::outside(args.pairs, args.slots, args.max_plies)?,
        Suite::Store => crate::bench_store::store(args.pairs)?,
        Suite::Flood => crate::bench_flood::flood(args.reports, args.report_mb, args.streams)?,
        Suite::Selfplay => {
            selfplay::<Loa>(args)?;
            selfplay::<Amazons>(args)?;
        }
        Suite::Search => {
            println!("alpha-beta (ab), one thread, fixed depths");
            search::<Loa>(LOA_POSITIONS, args.loa_depth)?;
            search::<Amazons>(AMAZONS_POSITIONS, args.amazons_depth)?;
        }
    }
    Ok(())
}

/// One game of `white` ("a") against `black` ("b") under `setup`.
fn play_a_b<P: Adjudicate + Heuristics>(
    setup: &Setup<P>,
    white: &mut BuiltIn<P>,
    black: &mut BuiltIn<P>,
) -> Result<tourney_model::GameRecord> {
    let white = Seat {
        name: "a".into(),
        player: white,
    };
    let black = Seat {
        name: "b".into(),
        player: black,
    };
    Ok(referee_play(setup, white, black, &mut |_| {})?)
}

/// Plays typical LOA tournament games, then reads and replays them as the coordinator
/// checks reported games, for `--seconds`; prints games validated per second.
fn validate(args: &BenchArgs) -> Result<()> {
    use tourney_model::job::GameSettings;
    use tourney_model::{GameRecord, GameSummary};
    let settings = OpeningSettings {
        plies: 4,
        count: 100,
        seed: args.seed,
        balanced: None,
        judge_budget: None,
    };
    let openings = generate::<Loa>(&settings).map_err(anyhow::Error::msg)?;
    let (mut white, mut black) = (
        BuiltIn::<Loa>::new("ab:depth=1").map_err(anyhow::Error::msg)?,
        BuiltIn::<Loa>::new("ab:depth=1").map_err(anyhow::Error::msg)?,
    );
    let rules = GameSettings {
        tournament_name: "bench".into(),
        game: GameKind::Loa,
        rules: String::new(),
        time_control: tourney_model::TimeControl::Infinite,
        nodes: None,
        depth: Some(1),
        movetime_ms: None,
        max_plies: Some(300),
        adjudicate: false,
        margin_ms: 100,
        engine_limits: Default::default(),
        scale_by_speed: false,
        score_rules: Default::default(),
    };
    let searcher = tourney_model::replay::Side {
        limits: None,
        reports_scores: true,
    };
    let mut records = Vec::new();
    for opening in &openings {
        let mut setup = Setup::<Loa>::from_settings(&rules)?;
        setup.start = opening.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        let record = play_a_b(&setup, &mut white, &mut black)?;
        records.push((serde_json::to_string(&record)?, opening.clone()));
    }
    let plies: usize = records
        .iter()
        .map(|(json, _)| serde_json::from_str::<GameRecord>(json).map_or(0, |g| g.moves.len()))
        .sum();
    let bytes: usize = records.iter().map(|(json, _)| json.len()).sum();
    let started = Instant::now();
    let mut validated = 0u64;
    while started.elapsed().as_secs_f64() < args.seconds {
        for (json, opening) in &records {
            let game: GameRecord = serde_json::from_str(json)?;
            tourney_model::replay::check(&game, opening, &rules, [searcher; 2])?;
            GameSummary::of(&game).map_err(anyhow::Error::msg)?;
            // Stored as the typed record writes itself.
            serde_json::value::to_raw_value(&game)?;
            validated += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "game validation (read the record, replay it on the rules core, check its clocks and \
         scores, summarise it, write it again to store it), one thread: \
         {validated} LOA games in {seconds:.2} s = {:.0} games/s ({:.0} plies and {:.0} \
         bytes of JSON a game)",
        validated as f64 / seconds,
        plies as f64 / records.len() as f64,
        bytes as f64 / records.len() as f64
    );
    Ok(())
}

fn rules(args: &BenchArgs) {
    println!("rules core, one thread");
    bench_perft(&Loa::start(), 5, "LOA perft(5) from the start");
    bench_perft(&Amazons::start(), 3, "Amazons perft(3) from the start");
    let budget = Duration::from_secs_f64(args.seconds);
    bench_playouts::<Loa>("LOA random playouts", budget, args.seed);
    bench_playouts::<Amazons>("Amazons random playouts", budget, args.seed);
}

fn bench_perft<P: Position>(position: &P, depth: u32, label: &str) {
    let started = Instant::now();
    let leaves = perft(position, depth);
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{label}: {leaves} leaves in {seconds:.3} s = {:.1} M leaves/s",
        leaves as f64 / seconds / 1e6
    );
}

fn bench_playouts<P: Position>(label: &str, budget: Duration, seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let started = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while started.elapsed() < budget {
        for _ in 0..64 {
            let game = random_playout(P::start(), P::Rules::default(), || rng.next_u64());
            games += 1;
            plies += game.ply() as u64;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{label}: {games} games in {seconds:.2} s = {:.0} games/s ({:.1} plies/game)",
        games as f64 / seconds,
        plies as f64 / games as f64
    );
}
