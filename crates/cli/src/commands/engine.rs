//! `tourney engine`: a built-in player served over the engine protocol.

use anyhow::{Context, Result};
use clap::Args;
use tourney_ai::PlayerSpec;

/// Arguments of `tourney engine`.
#[derive(Args)]
pub(crate) struct EngineArgs {
    /// The built-in player to serve, e.g. `ab:depth=6` or `mcts`.
    spec: PlayerSpec,
}

pub(crate) fn engine(args: &EngineArgs) -> Result<()> {
    let stdin = std::io::stdin().lock();
    tourney_runner::server::serve(&args.spec, stdin, Box::new(std::io::stdout()))
        .context("serving the engine protocol")
}
