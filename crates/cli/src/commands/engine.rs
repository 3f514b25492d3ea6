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
/// Example: `tourney engine ab:depth=6`, then type `ugi`, `newgame loa`, `isready`,
/// `position startpos`, `go movetime 500`.
#[derive(Args)]
pub(crate) struct EngineArgs {
    /// The built-in player to serve, e.g. `ab:depth=6` or `mcts`.
    spec: PlayerSpec,
}

pub(crate) fn engine(args: &EngineArgs) -> Result<()> {
    let stdin = std::io::stdin().lock();
    tourney_runner::engine_server::serve(&args.spec, stdin, Box::new(std::io::stdout()))
        .context("serving the engine protocol")
}
