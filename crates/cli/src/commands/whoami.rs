//! `tourney whoami`: who a coordinator takes the token for.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Who the coordinator takes the token for: a user and its role, or the operator.
#[derive(Args)]
pub(crate) struct WhoAmIArgs {
    #[command(flatten)]
    client: AdminTarget,
}

pub(crate) fn run(args: &WhoAmIArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let me = admin.who_am_i(pb::WhoAmIRequest {})?;
    let what = if me.operator {
        "the operator's token"
    } else {
        "a user"
    };
    println!("{} ({}, {what})", me.name, me.role);
    Ok(ExitCode::SUCCESS)
}
