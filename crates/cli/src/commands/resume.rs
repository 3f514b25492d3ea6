//! `tourney resume`: resumes a paused or cancelled tournament.

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::client::status_error;
use crate::support::local::TournamentArgs;

pub(crate) fn resume(args: &TournamentArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        admin
            .resume(pb::ResumeRequest { id: args.id })
            .await
            .map_err(status_error)?;
        println!("resumed");
        Ok(())
    })
}
