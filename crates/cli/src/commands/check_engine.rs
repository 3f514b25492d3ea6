//! `tourney check-engine`: an outside engine put through the exchanges a tournament needs.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_runner::check::{CheckResult, Verdict, check_engine};
use tourney_runner::dialect::Dialect;

use crate::support::engines::{own_engines, until_stopped};

/// Check that an outside engine speaks its protocol as tournaments need.
///
/// Starts the engine as a worker would (confined, in its own directory) and puts it through
/// one named check after another, printing each with PASS or FAIL and, for a failure, what
/// went wrong and the exchange that broke (`>` sent, `<` received). For tourney's protocol,
/// UGI and UCI: the handshake, its options set to their defaults, `newgame`, `go` with a
/// movetime (answered within it), with moves, a position string, nodes, depth and clocks,
/// `isready` during a search, `stop`, `newgame` between games, an LOA forced pass, a
/// repeated position, a game that is over (`bestmove none`), and `quit`. For CodinGame
/// bots: the first turn within 1,000 ms, later turns within 150 ms, a forced pass. For GTP
/// programs: `protocol_version`, `name`, `list_commands`, `boardsize`, a whole turn by
/// `genmove`, the opponent's turn by `play`, an off-board play refused, time commands,
/// `quit`. The check that finds the engine's process ended says how it ended and the end
/// of its stderr (a missing script, a missing library), as a tournament's pause reason
/// does; the checks after it are skipped.
///
/// Exit status: 0 when every check passed, 1 when one failed, 2 when the engine cannot be
/// started (not found, or its process ends at the first check: a missing script or
/// library). Example: `tourney check-engine "./my-engine --uci" --protocol uci`.
#[derive(Args)]
pub(crate) struct CheckEngineArgs {
    /// The engine's command line (quotes group words).
    command: String,
    /// The protocol it speaks: tourney, ugi, uci, codingame or gtp (`gtp:first=white`).
    #[arg(long, default_value = "tourney")]
    protocol: Dialect,
    /// The game to check it in: loa or amazons (GTP: amazons).
    #[arg(long, default_value = "loa")]
    game: tourney_rules::GameKind,
    /// Seconds an answer may take when no limit times it (the handshake, `readyok`, a
    /// search to a depth or a node count).
    #[arg(long, default_value_t = 10.0)]
    timeout: f64,
}

/// One line per check; a failure's exchange indented below it. Output that cannot be
/// written (a reader gone, `| head`) is dropped: the checks still run to their end.
fn print(result: &CheckResult) {
    let mark = match result.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Skip => "SKIP",
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{mark}  {:<36} {}", result.name, result.detail);
    for line in &result.exchange {
        let _ = writeln!(out, "        {line}");
    }
}

pub(crate) fn run(args: &CheckEngineArgs) -> Result<ExitCode> {
    if !tourney_model::source::protocol_plays(args.protocol.name(), args.game) {
        anyhow::bail!("{} is for Amazons: give --game amazons", args.protocol);
    }
    let mut config = tourney_runner::EngineConfig::new(&args.command);
    config.policy = own_engines();
    config.protocol = args.protocol;
    config.unresponsive_timeout = std::time::Duration::try_from_secs_f64(args.timeout)
        .map_err(|_| anyhow::anyhow!("--timeout: {} is not a number of seconds", args.timeout))?;
    let game = args.game;
    let results = until_stopped(move || Ok(check_engine(&config, game, print)))?;
    let results = match results {
        Ok(results) => results,
        Err(why) => {
            eprintln!("error: the engine cannot be started: {why}");
            return Ok(ExitCode::from(2));
        }
    };
    // Its process ended at the first check (a missing script, a missing library).
    let unstarted = results.first().filter(|r| r.ended);
    let count = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
    let (passed, failed, skipped) = (
        count(Verdict::Pass),
        count(Verdict::Fail),
        count(Verdict::Skip),
    );
    let _ = writeln!(
        std::io::stdout(),
        "{passed} of {} checks passed, {failed} failed, {skipped} skipped ({} in {})",
        results.len(),
        args.protocol,
        args.game
    );
    if let Some(first) = unstarted {
        eprintln!(
            "error: the engine cannot be started: its process ended at the first check ({})",
            first.name
        );
        return Ok(ExitCode::from(2));
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
