//! `tourney modify`: a test given another priority, weight or pair budget, or deleted
//! from the lists.

use std::process::ExitCode;

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Change a test's priority, weight or pair budget, or delete it from the lists.
///
/// Tests of higher priority are leased first; among tests of one priority, each gets pairs
/// in proportion to its weight (its throughput share). The change is kept across restarts
/// and recorded in the events log. `--pair-budget` (or `--max-pairs`) changes its pair budget, `--delete` takes an
/// ended test off the lists. Allowed to its author, approvers and admins. Example:
/// `tourney modify 7 --priority 5`, `tourney modify 7 --weight 3 --pair-budget 20000` or
/// `tourney modify 7 --delete`.
#[derive(clap::Args)]
pub(crate) struct ModifyArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// The new priority (higher first), from -1,000,000 to 1,000,000.
    #[arg(long, allow_hyphen_values = true, required_unless_present_any = ["weight", "pair_budget", "delete", "restore"])]
    priority: Option<i32>,
    /// The new weight: its share of the workers among tests of its priority (above 0).
    #[arg(long)]
    weight: Option<f64>,
    /// The new pair budget: an SPRT's most pairs, a match's pairs (at least the pairs
    /// handed out already).
    #[arg(
        long = "pair-budget",
        visible_alias = "max-pairs",
        value_name = "PAIRS"
    )]
    pair_budget: Option<u64>,
    /// Delete an ended test from the lists (the dashboard's, searches); its games, figures
    /// and page stay.
    #[arg(long, conflicts_with = "restore")]
    delete: bool,
    /// Bring a deleted test back into the lists.
    #[arg(long)]
    restore: bool,
}

pub(crate) fn run(args: &ModifyArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.modify(pb::ModifyRequest {
        id: args.id,
        priority: args.priority,
        weight: args.weight,
        pair_budget: args.pair_budget,
        hidden: (args.delete || args.restore).then_some(args.delete),
    })?;
    println!("modified");
    Ok(ExitCode::SUCCESS)
}
