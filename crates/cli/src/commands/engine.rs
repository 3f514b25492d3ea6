//! `tourney engine`: a built-in player served over the engine protocol.

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
/// Example: `tourney engine ab:depth=6`, then type `ugi`, `newgame loa`, `isready`,
/// `position startpos`, `go movetime 500`.
#[derive(Args)]
pub(crate) struct EngineArgs {
    /// The built-in player to serve, e.g. `ab:depth=6` or `mcts`.
    spec: PlayerSpec,
    /// The protocol to speak: tourney, ugi or uci.
    #[arg(long, default_value = "tourney")]
    protocol: tourney_runner::dialect::Dialect,
    /// The game of a dialect's new game (`uginewgame`, `ucinewgame` name none): loa or
    /// amazons.
    #[arg(long, default_value = "loa")]
    game: tourney_rules::GameKind,
}

pub(crate) fn engine(args: &EngineArgs) -> Result<()> {
    let stdin = std::io::stdin().lock();
    tourney_runner::engine_server::serve_dialect(
        &args.spec,
        args.protocol,
        args.game,
        stdin,
        Box::new(std::io::stdout()),
    )
    .context("serving the engine protocol")
}
