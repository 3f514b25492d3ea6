//! `tourney`: the command-line front end of the tournament runner.

mod bench;
mod ratings_cmd;
mod rules_cmd;
mod stats_cmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Self-play tournament runner for Lines of Action and Amazons.
#[derive(Parser)]
#[command(name = "tourney", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Count move sequences of a given depth (checks a move generator).
    ///
    /// The node count is the last line of stdout; time and leaves/s go to stderr.
    /// Example: `tourney perft loa 5` prints 55963132.
    Perft(rules_cmd::PerftArgs),
    /// Print the legal moves of positions, one line per position.
    ///
    /// With a position string, prints its legal moves separated by single spaces (sorted;
    /// a forced LOA pass prints `pass`, a finished game an empty line). Without one, reads
    /// position strings from stdin, one per line, and answers each with one line.
    Legal(rules_cmd::LegalArgs),
    /// Measure speed: `tourney bench rules` prints perft and random-playout rates.
    Bench(bench::BenchArgs),
    /// Two-player statistics from result counts: Elo with its 95 % interval, LOS, nElo.
    ///
    /// `tourney stats --wdl 120,100,80` (wins, draws, losses of the tested player) or
    /// `tourney stats --penta 10,40,100,45,12` (game pairs scoring 0, ½, 1, 1½, 2 points).
    /// `tourney stats sprt ...` is an SPRT calculator like fishtest's.
    Stats(stats_cmd::StatsArgs),
    /// Joint rating table of all players in a PGN file or tourney's JSON Lines records.
    ///
    /// BayesElo by default (`elo`, `mm`, `exactdist`, `ratings`), or an Ordo-style fit.
    Ratings(ratings_cmd::RatingsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Perft(args) => rules_cmd::run_perft_command(&args),
        Command::Legal(args) => rules_cmd::run_legal_command(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Stats(args) => stats_cmd::run(&args),
        Command::Ratings(args) => ratings_cmd::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
