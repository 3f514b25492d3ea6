//! `tourney`: the command-line front end of the tournament runner.

/// `println!` for text that carries what others wrote (names, notes, an engine's stderr
/// and protocol): its terminal control characters are written out, not obeyed
/// ([`tourney_model::printable`]).
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{}", tourney_model::printable(&format!($($arg)*)))
    };
}

mod bench;
mod commands;
mod support;

use std::process::ExitCode;

/// mimalloc: the coordinator and workers allocate many small buffers per request, where it
/// is markedly faster than the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay`: its value in the C enum of the mimalloc v3 that
/// `libmimalloc-sys` builds (whose Rust constants follow v2 and lack it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// How long freed memory stays with the allocator before it goes back to the OS, in ms.
/// At mimalloc's 1 s, the buffers of reports of fast games (hundreds of KiB, a few a
/// second) kept coming back from the kernel as fresh zeroed pages: about 5,400 page faults
/// in `tourney bench cluster --pairs 4000`, about 480 at 10 s.
const PURGE_DELAY_MS: std::os::raw::c_long = 10_000;

/// Keeps freed memory for [`PURGE_DELAY_MS`] (unless `MIMALLOC_PURGE_DELAY` says otherwise).
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets an option of the allocator in use; any value is allowed.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

use clap::{Parser, Subcommand};

/// Self-play tournament runner for Lines of Action and Amazons.
///
/// Logs go to stderr, filtered by `RUST_LOG` (e.g. `RUST_LOG=tourney_coordinator=debug`;
/// default: `info` for `coordinator` and `worker`, `warn` otherwise).
#[derive(Parser)]
#[command(name = "tourney", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// Log format: `text` for people, `json` (one object per line) for log collectors.
    #[arg(
        long,
        global = true,
        env = "TOURNEY_LOG_FORMAT",
        value_enum,
        default_value = "text"
    )]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// How log lines are written.
#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, with the span fields (lease, tournament, pair, game).
    Json,
}

/// Sends `tracing` events to stderr, filtered by `RUST_LOG` or else at `default` level.
fn init_logging(format: LogFormat, default: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Text => logs.try_init(),
        LogFormat::Json => logs.json().try_init(),
    };
    // Only fails when a subscriber is already installed, which then stays.
    drop(installed);
}

#[derive(Subcommand)]
enum Command {
    /// Count move sequences of a given depth (checks a move generator).
    ///
    /// The node count is the last line of stdout; time and leaves/s go to stderr.
    /// Example: `tourney perft loa 5` prints 55963132.
    Perft(commands::perft::PerftArgs),
    /// Print the legal moves of positions, one line per position.
    ///
    /// With a position string, prints its legal moves separated by single spaces (sorted;
    /// a forced LOA pass prints `pass`, a finished game an empty line). Without one, reads
    /// position strings from stdin, one per line, and answers each with one line.
    Legal(commands::legal::LegalArgs),
    /// Measure speed: `tourney bench rules` prints perft and random-playout rates.
    Bench(bench::BenchArgs),
    /// Two-player statistics from result counts: Elo with its 95 % interval, LOS, nElo.
    ///
    /// `tourney stats --wdl 120,100,80` (wins, draws, losses of the tested player) or
    /// `tourney stats --penta 10,40,100,45,12` (game pairs scoring 0, ½, 1, 1½, 2 points).
    /// `tourney stats sprt ...` is an SPRT calculator like fishtest's.
    Stats(commands::stats::StatsArgs),
    /// Run a tournament on this machine: coordinator, workers and store in one process.
    ///
    /// Shows a progress bar, prints the rating report at the end and writes it as HTML
    /// into the data directory. Run again on the same data to resume; a finished
    /// tournament just prints its report. Example: `tourney run config/loa-quick.toml`.
    Run(commands::run::RunArgs),
    /// Serve the coordinator of a cluster (gRPC, with health and reflection).
    Coordinator(commands::coordinator::CoordinatorArgs),
    /// Play games for a coordinator: `tourney worker --coordinator http://host:7070`.
    Worker(commands::worker::WorkerArgs),
    /// Check that a coordinator (gRPC health) or a worker (`--http` its metrics URL)
    /// serves; exits 0 if so, for container health checks.
    Health(commands::health::HealthArgs),
    /// Submit a tournament file to a coordinator; prints the new tournament's id last.
    Submit(commands::submit::SubmitArgs),
    /// Show tournaments with their standings (`--json` for scripts).
    Status(commands::status::StatusArgs),
    /// A tournament's rating report as text, JSON, CSV or HTML.
    Report(commands::report::ReportArgs),
    /// A tournament's games as PGN-style text or JSON lines.
    Export(commands::export::ExportArgs),
    /// Move a finished tournament's games out of the coordinator's store into files.
    ///
    /// Writes `tournament-ID.jsonl.gz` and `tournament-ID.pgn.gz` (in `--out`, the current
    /// directory by default), reads them back, then removes the games from the store; the
    /// tournament's summary stays, so `status`, `report` and the dashboard are as before.
    /// Example: `tourney archive 12 --out /srv/tourney/archive`.
    Archive(commands::archive::ArchiveArgs),
    /// Register engine versions and list them (`tourney version add|list`).
    ///
    /// A version names what an engine is (a built-in spec, or an outside program by its
    /// sha256 with its options), so that tournament files say `version = "NAME"` and the
    /// timeline rates it across tournaments.
    Version(commands::version::VersionArgs),
    /// Every engine version rated on one scale from all tournaments between versions.
    ///
    /// BayesElo over every counted game between two registered versions, with 95 %
    /// intervals and the tournaments that measured each version; `--anchor` picks the
    /// version rated 0. Example: `tourney timeline --anchor ab-v1`.
    Timeline(commands::timeline::TimelineArgs),
    /// Play a stored game again against a local engine, up to the ply where an engine
    /// failed, and show what the engine does there.
    ///
    /// Shows the recorded protocol transcript of the side that failed (the last lines),
    /// replays the moves on a fresh engine (its own command by default, or `--engine`),
    /// sends the same `go` and shows the protocol and the answer; exit status 1 when the
    /// engine fails again. Example: `tourney replay 3 117 1 --engine "./build/engine"`.
    Replay(commands::replay::ReplayArgs),
    /// Cancel a tournament.
    Cancel(support::local::TournamentArgs),
    /// Resume a tournament paused because a pair could not be played (e.g. an engine that
    /// does not start); see `tourney status` for why it paused.
    Resume(support::local::TournamentArgs),
    /// Leave a worker's results out of a tournament's figures, or count them again.
    ///
    /// For a worker the report lists as suspect (its results unlike the others', many time
    /// losses or refused reports). The decision is recorded with its time and reason; the
    /// standings, SPRT and report are made again without the worker's pairs, which are not
    /// played again. Example: `tourney exclude 3 box7 --reason "overclocked, loses on time"`;
    /// undo with `--include`.
    Exclude(commands::exclude::ExcludeArgs),
    /// Check a data directory's store: `tourney store verify --data DIR` reads every
    /// record back and lists what is damaged (exit 1 if anything is).
    Store(commands::store::StoreArgs),
    /// Play one game between two players and print its record.
    ///
    /// A player is a built-in spec (`ab:depth=6`, `mcts:c=0.7`, `random:seed=7`) or an
    /// outside engine as `cmd:<command line>` (`cmd:python3 my_engine.py --fast`).
    /// Example: `tourney play --game loa --white ab:depth=4 --black mcts --tc 10+0.1`.
    Play(commands::play::PlayArgs),
    /// Serve a built-in player over the engine protocol on stdin/stdout.
    ///
    /// Example: `tourney engine ab:depth=6`, then type `ugi`, `newgame loa`, `isready`,
    /// `position startpos`, `go movetime 500`.
    Engine(commands::engine::EngineArgs),
    /// Write an opening suite: positions after random plies, one per line, deduplicated.
    ///
    /// With `--balanced ab:depth=3 --max-score 100`, only positions a quick search scores
    /// within ±100 are kept.
    Openings(commands::openings::OpeningsArgs),
    /// Joint rating table of all players in a PGN file or tourney's JSON Lines records.
    ///
    /// BayesElo by default (`elo`, `mm`, `exactdist`, `ratings`), or an Ordo-style fit.
    Ratings(commands::ratings::RatingsArgs),
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = Cli::parse();
    // Like other Unix tools, end quietly when the reader of our output goes away
    // (`tourney export 1 | head`) instead of panicking on a broken pipe. Not where outside
    // engines are driven: one that closes its input must lose its game with a reason
    // (the write fails with EPIPE), not kill the worker with the signal.
    let drives_engines = matches!(
        cli.command,
        Command::Run(_)
            | Command::Worker(_)
            | Command::Play(_)
            | Command::Coordinator(_)
            | Command::Replay(_)
    );
    #[cfg(unix)]
    if !drives_engines {
        // SAFETY: restoring the default disposition of SIGPIPE before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let serves = matches!(cli.command, Command::Coordinator(_) | Command::Worker(_));
    init_logging(cli.log_format, if serves { "info" } else { "warn" });
    let result = match cli.command {
        Command::Perft(args) => commands::perft::run(&args),
        Command::Legal(args) => commands::legal::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Stats(args) => commands::stats::run(&args),
        Command::Ratings(args) => commands::ratings::run(&args),
        Command::Play(args) => commands::play::play(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Coordinator(args) => commands::coordinator::coordinator(&args),
        Command::Worker(args) => commands::worker::worker(&args),
        Command::Health(args) => commands::health::health(&args),
        Command::Submit(args) => commands::submit::submit(&args),
        Command::Status(args) => commands::status::status(&args),
        Command::Report(args) => commands::report::report(&args),
        Command::Export(args) => commands::export::export(&args),
        Command::Archive(args) => commands::archive::archive(&args),
        Command::Version(args) => commands::version::version(&args),
        Command::Timeline(args) => commands::timeline::timeline(&args),
        Command::Replay(args) => commands::replay::replay(&args),
        Command::Cancel(args) => commands::cancel::cancel(&args),
        Command::Resume(args) => commands::resume::resume(&args),
        Command::Exclude(args) => commands::exclude::exclude(&args),
        Command::Store(args) => commands::store::run(&args),
        Command::Engine(args) => commands::engine::engine(&args),
        Command::Openings(args) => commands::openings::openings(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.is::<support::signals::Interrupted>() => {
            ExitCode::from(support::signals::INTERRUPTED_STATUS)
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_tuned_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
            return;
        }
        // SAFETY: reads and sets options of the allocator in use.
        unsafe {
            // mimalloc v3's default purge delay is 1000 ms; a wrong enum value would read
            // another option (a flag, a count, a size in KiB).
            assert_eq!(libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY), 1000);
            tune_allocator();
            assert_eq!(
                libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY),
                PURGE_DELAY_MS
            );
        }
    }
}
