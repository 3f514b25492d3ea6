//! `tourney approve`: a user's test let start.

use std::process::ExitCode;

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::TournamentArgs;

pub(crate) fn run(args: &TournamentArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.approve(pb::ApproveRequest { id: args.id })?;
    println!("approved");
    Ok(ExitCode::SUCCESS)
}
