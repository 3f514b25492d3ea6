//! `tourney submit`: a tournament file submitted to a coordinator.

use crate::support::client::submit_file;
use crate::support::local::AdminTarget;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `tourney submit`.
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
