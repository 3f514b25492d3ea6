//! `tourney submit`: a tournament file submitted to a coordinator.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::support::client::submit_file;
use crate::support::local::AdminTarget;

/// Submit a tournament file to a coordinator; prints the new tournament's id last.
///
/// The file, its player specs and its openings file are checked first; a program an
/// `[[engine]]` names by path is uploaded (unless the coordinator already has it) and must
/// lie beside or below the file.
///
/// Example: `tourney submit config/sprt-loa.toml`.
#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament file.
    file: PathBuf,
}

pub(crate) fn submit(args: &SubmitArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let id = submit_file(&mut admin, &args.file).await?;
        println!("{id}");
        Ok(())
    })
}
