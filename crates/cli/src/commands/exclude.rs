//! `tourney exclude`: a worker's results left out of a tournament's figures, or counted again.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Leave a worker's results out of a tournament's figures, or count them again.
///
/// For a worker the report lists as suspect (its results unlike the others', many time
/// losses or refused reports). Its pairs are left out of every figure (standings, SPRT,
/// report, terminations, openings); they stay stored and are not played again. The decision
/// is recorded with its time and reason, shown in the report and kept across restarts;
/// `--include` counts the results again. See docs/workers.md.
///
/// Example: `tourney exclude 3 box7 --reason "overclocked, loses on time"`.
#[derive(Args)]
pub(crate) struct ExcludeArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// The worker, as the report and the dashboard name it.
    worker: String,
    /// Why (recorded and shown in the report).
    #[arg(long)]
    reason: String,
    /// Count the worker's results again.
    #[arg(long)]
    include: bool,
}

pub(crate) fn run(args: &ExcludeArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let answer = admin.exclude_worker(pb::ExcludeWorkerRequest {
        id: args.id,
        worker: args.worker.clone(),
        reason: args.reason.clone(),
        include: args.include,
    })?;
    println!(
        "{} pairs of {} in tournament {} {}",
        answer.pairs,
        args.worker,
        args.id,
        if args.include {
            "counted again"
        } else {
            "excluded"
        }
    );
    Ok(ExitCode::SUCCESS)
}
