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
#[cfg(test)]
mod cli_docs;
mod commands;
mod help;
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

use clap::{FromArgMatches, Parser, Subcommand};

/// Self-play tournament runner for Lines of Action and Amazons.
///
/// `tourney run FILE` plays a tournament on this machine; `tourney coordinator` and
/// `tourney worker` make a cluster, which `submit`, `status`, `report` and the other admin
/// commands drive. `tourney <command> --help` explains each command.
///
/// The admin commands (`submit`, `clone`, `status`, `report`, `export`, `archive`, `cancel`,
/// `resume`, `exclude`, `replay`, `version`, `timeline`, `pool`) reach a coordinator at
/// `--coordinator` (default `http://127.0.0.1:7070`) with `--token`, or with `--data DIR`
/// open a stopped coordinator's (or `tourney run`'s) data directory in their own process:
/// the same coordinator code over the same store, served on loopback behind a random
/// token, so opening it does what a coordinator's restart does, and what a command changes
/// there is stored as the coordinator stores it. A directory a running coordinator holds
/// is refused, saying to ask that one instead.
///
/// What others wrote (tournament and engine names, version notes, an engine's stderr and
/// protocol) is printed with its terminal control characters written out (`\x1b`,
/// `\x0d`), never obeyed.
///
/// Logs go to stderr, filtered by `RUST_LOG` (e.g. `RUST_LOG=tourney_coordinator=debug`;
/// default: `info` for `coordinator` and `worker`, `warn` otherwise), coloured only on a
/// terminal and without `NO_COLOR`.
#[derive(Parser)]
#[command(name = "tourney", version, about, propagate_version = true)]
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

/// Sends `tracing` events to stderr, filtered by `RUST_LOG` or else at `default` level;
/// coloured only where [`colour_logs`] says.
fn init_logging(format: LogFormat, default: &str) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let no_color = std::env::var_os("NO_COLOR");
    let ansi = colour_logs(std::io::stderr().is_terminal(), no_color.as_deref());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let installed = match format {
        LogFormat::Text => logs.try_init(),
        LogFormat::Json => logs.json().try_init(),
    };
    // Only fails when a subscriber is already installed, which then stays.
    drop(installed);
}

/// Whether log lines carry colour codes: only when stderr is a terminal (a file or a log
/// collector would keep them as `\x1b[2m` noise), and not when `NO_COLOR` is set to
/// anything but the empty string (<https://no-color.org>).
fn colour_logs(terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

#[derive(Subcommand)]
enum Command {
    Perft(commands::perft::PerftArgs),
    Legal(commands::legal::LegalArgs),
    Bench(bench::BenchArgs),
    Stats(commands::stats::StatsArgs),
    Run(commands::run::RunArgs),
    Coordinator(commands::coordinator::CoordinatorArgs),
    Worker(commands::worker::WorkerArgs),
    Health(commands::health::HealthArgs),
    Submit(commands::submit::SubmitArgs),
    Clone(commands::clone::CloneArgs),
    Status(commands::status::StatusArgs),
    Report(commands::report::ReportArgs),
    Export(commands::export::ExportArgs),
    Data(commands::data::DataArgs),
    Tune(commands::tune::TuneArgs),
    Archive(commands::archive::ArchiveArgs),
    Version(commands::version::VersionArgs),
    User(commands::user::UserArgs),
    Events(commands::events::EventsArgs),
    #[command(name = "whoami")]
    WhoAmI(commands::whoami::WhoAmIArgs),
    Timeline(commands::timeline::TimelineArgs),
    Pool(commands::pool::PoolArgs),
    Replay(commands::replay::ReplayArgs),
    /// Cancel a tournament.
    ///
    /// Cancels a queued, running, paused or pending tournament; an unknown id, or one
    /// already ended, is an error saying so. Example: `tourney cancel 7`.
    Cancel(support::local::TournamentArgs),
    /// Approve a test waiting for approval (state `pending`).
    ///
    /// A test submitted by a user (the `user` role) waits until an approver or admin other
    /// than its author approves it, unless the coordinator runs with `--no-approval`.
    /// Nothing of it is played until then. Example: `tourney approve 7`. See
    /// docs/accounts.md.
    Approve(support::local::TournamentArgs),
    Modify(commands::modify::ModifyArgs),
    Machines(commands::machines::MachinesArgs),
    Note(commands::note::NoteArgs),
    /// Resume a paused or cancelled tournament.
    ///
    /// A tournament pauses when no connected worker can play a pair (an engine that does
    /// not start, a program that cannot be fetched); `tourney status` says why. After the
    /// fix it goes on where it stopped, every worker host eligible again. A cancelled one
    /// goes on with the games it has (a user's test never approved waits for approval
    /// again), unless its games were archived or it was deleted from the lists (the error
    /// says so); an error too when it is neither paused nor cancelled. Example:
    /// `tourney resume 7`.
    Resume(support::local::TournamentArgs),
    Exclude(commands::exclude::ExcludeArgs),
    Link(commands::link::LinkArgs),
    Store(commands::store::StoreArgs),
    Play(commands::play::PlayArgs),
    Engine(commands::engine::EngineArgs),
    CheckEngine(commands::check_engine::CheckEngineArgs),
    Openings(commands::openings::OpeningsArgs),
    Ratings(commands::ratings::RatingsArgs),
}

fn main() -> ExitCode {
    tune_allocator();
    // Parsed with the grouped help (`help::command`), as `Cli::parse` would otherwise.
    let cli = Cli::from_arg_matches(&help::command().get_matches())
        .unwrap_or_else(|e| e.format(&mut help::command()).exit());
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
            | Command::Bench(_)
            | Command::CheckEngine(_)
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
        // `bench` keeps its own shape (its suites, crates/cli/src/bench/).
        Command::Bench(args) => bench::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Stats(args) => commands::stats::run(&args),
        Command::Ratings(args) => commands::ratings::run(&args),
        Command::Play(args) => commands::play::run(&args),
        Command::Run(args) => commands::run::run(&args),
        Command::Coordinator(args) => commands::coordinator::run(&args),
        Command::Worker(args) => commands::worker::run(&args),
        Command::Health(args) => commands::health::run(&args),
        Command::Submit(args) => commands::submit::run(&args),
        Command::Clone(args) => commands::clone::run(&args),
        Command::Status(args) => commands::status::run(&args),
        Command::Report(args) => commands::report::run(&args),
        Command::Export(args) => commands::export::run(&args),
        Command::Data(args) => commands::data::run(&args),
        Command::Tune(args) => commands::tune::run(&args),
        Command::Archive(args) => commands::archive::run(&args),
        Command::Version(args) => commands::version::run(&args),
        Command::User(args) => commands::user::run(&args),
        Command::Events(args) => commands::events::run(&args),
        Command::WhoAmI(args) => commands::whoami::run(&args),
        Command::Timeline(args) => commands::timeline::run(&args),
        Command::Pool(args) => commands::pool::run(&args),
        Command::Replay(args) => commands::replay::run(&args),
        Command::Cancel(args) => commands::cancel::run(&args),
        Command::Approve(args) => commands::approve::run(&args),
        Command::Modify(args) => commands::modify::run(&args),
        Command::Machines(args) => commands::machines::run(&args),
        Command::Note(args) => commands::note::run(&args),
        Command::Resume(args) => commands::resume::run(&args),
        Command::Link(args) => commands::link::run(&args),
        Command::Exclude(args) => commands::exclude::run(&args),
        Command::Store(args) => commands::store::run(&args),
        Command::Engine(args) => commands::engine::run(&args),
        Command::CheckEngine(args) => commands::check_engine::run(&args),
        Command::Openings(args) => commands::openings::run(&args),
    };
    match result {
        Ok(code) => code,
        Err(err) if err.is::<support::signals::Interrupted>() => {
            ExitCode::from(support::signals::INTERRUPTED_STATUS)
        }
        // The reader of our output went away (`tourney export 1 --data d | head`, where
        // SIGPIPE is ignored because the command serves a coordinator): end quietly.
        Err(err)
            if err.chain().any(|e| {
                e.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
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
    fn logs_are_coloured_only_on_a_terminal_without_no_color() {
        use std::ffi::OsStr;
        assert!(colour_logs(true, None));
        assert!(colour_logs(true, Some(OsStr::new(""))), "empty: unset");
        assert!(!colour_logs(true, Some(OsStr::new("1"))));
        assert!(!colour_logs(false, None));
        assert!(!colour_logs(false, Some(OsStr::new("1"))));
    }

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
