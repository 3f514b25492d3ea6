//! `tourney cancel`: cancels a tournament.

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::client::status_error;
use crate::support::local::TournamentArgs;

pub(crate) fn cancel(args: &TournamentArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        admin
            .cancel(pb::CancelRequest { id: args.id })
            .await
            .map_err(status_error)?;
        println!("cancelled");
        Ok(())
    })
}
