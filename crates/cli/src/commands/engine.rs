//! `tourney engine`: a built-in player served over the engine protocol.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use tourney_ai::PlayerSpec;

/// Serve a built-in player over the engine protocol on stdin/stdout.
///
/// One search thread for the session (`random` answers on the protocol thread); the player
/// is built once per game kind and kept across `newgame`, and each `position` advances it
/// by its new moves only. See docs/engine-protocol.md.
///
/// With `--protocol ugi` or `--protocol uci` it speaks that dialect instead (UGI's
/// `uginewgame`, `position fen`, `p1time`/`p2time` clocks and `query`; UCI's `uci`,
/// `ucinewgame` and moves without separators), so that other runners (cutegames for UGI)
/// can play tourney's players; `--game` is the game their new games are of.
///
/// With `--protocol codingame` it plays one game as a CodinGame bot (the situation read
/// each turn, a move written back, `--movetime` a move); with `--protocol gtp` (or
/// `gtp:first=white`) it is a GTP program for Amazons (`boardsize`, `clear_board`, a turn
/// as three `genmove`s, `time_settings`/`time_left`).
///
/// Example: `tourney engine ab:depth=6`, then type `ugi`, `newgame loa`, `isready`,
/// `position startpos`, `go movetime 500`.
#[derive(Args)]
pub(crate) struct EngineArgs {
    /// The built-in player to serve, e.g. `ab:depth=6` or `mcts`.
    spec: PlayerSpec,
    /// The protocol to speak: tourney, ugi, uci, codingame or gtp (`gtp:first=white`).
    #[arg(long, default_value = "tourney")]
    protocol: tourney_runner::dialect::Dialect,
    /// The game of a dialect's new game (`uginewgame`, `ucinewgame`, CodinGame and GTP
    /// name none): loa or amazons.
    #[arg(long, default_value = "loa")]
    game: tourney_rules::GameKind,
    /// CodinGame and GTP: what a move may take, in milliseconds, when the runner says
    /// nothing of time (CodinGame never does).
    #[arg(long, default_value_t = 100)]
    movetime: u64,
}

pub(crate) fn run(args: &EngineArgs) -> Result<ExitCode> {
    let stdin = std::io::stdin().lock();
    if !args.protocol.speaks_commands() {
        return tourney_runner::turn_server::serve(
            &args.spec,
            args.protocol,
            args.game,
            std::time::Duration::from_millis(args.movetime),
            stdin,
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
        )
        .context("serving the engine protocol")
        .map(|()| ExitCode::SUCCESS);
    }
    tourney_runner::engine_server::serve_dialect(
        &args.spec,
        args.protocol,
        args.game,
        stdin,
        Box::new(std::io::stdout()),
    )
    .context("serving the engine protocol")?;
    Ok(ExitCode::SUCCESS)
}
