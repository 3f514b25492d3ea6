//! `tourney pool`: a rating pool's members as it runs, and its best.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// A rating pool (`format = "pool"`) as it runs: add versions, ask for its best.
///
/// A pool is named by its id or its name (the newest pool of that name that has not
/// ended). See docs/formats.md, "Rating pool".
#[derive(Args)]
pub(crate) struct PoolArgs {
    #[command(subcommand)]
    action: PoolAction,
}

#[derive(Subcommand)]
enum PoolAction {
    /// Add registered versions to a running pool (its author, an approver or an admin).
    ///
    /// Each is a member from the pool's next pair on: rated and paired once every pair
    /// handed out before it is counted. Versions are added in the order given; the first
    /// refused (unknown, already a member, of another game) stops the rest.
    ///
    /// Example: `tourney pool add nightly mine-18 mine-19`.
    Add(AddArgs),
    /// Print the pool's best member now: with a gate (`[pool] gate`), the one its gates
    /// promoted last (the anchor before any); without, the highest rated of those that
    /// have played.
    ///
    /// For scripts: the name alone on stdout (a version's name), or with `--json` its
    /// rating too. Fails while no member has played (without a gate).
    ///
    /// Example: `tourney pool best nightly`.
    Best(BestArgs),
}

#[derive(Args)]
struct AddArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The pool: its id, or its name.
    pool: String,
    /// Registered versions (`tourney version list`).
    #[arg(required = true)]
    versions: Vec<String>,
}

#[derive(Args)]
struct BestArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The pool: its id, or its name.
    pool: String,
    /// JSON for scripts: the pool's id, the best member's name, Elo, interval and games.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &PoolArgs) -> Result<ExitCode> {
    match &args.action {
        PoolAction::Add(a) => {
            let mut admin = BlockingAdmin::connect(&a.client)?;
            add_to(&mut admin, &a.pool, &a.versions)?;
        }
        PoolAction::Best(b) => best(b)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Adds `versions` to `pool`, saying from which pair each is a member.
pub(crate) fn add_to(admin: &mut BlockingAdmin, pool: &str, versions: &[String]) -> Result<()> {
    let added = admin.add_to_pool(pb::AddToPoolRequest {
        pool: pool.to_string(),
        versions: versions.to_vec(),
    })?;
    for (version, from) in versions.iter().zip(&added.from_pairs) {
        println!("{version} joins pool {} from pair {from}", added.id);
    }
    Ok(())
}

fn best(args: &BestArgs) -> Result<()> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let best = admin.pool_best(pb::PoolBestRequest {
        pool: args.pool.clone(),
    })?;
    if args.json {
        let json = serde_json::json!({
            "pool": best.id,
            "best": best.best,
            "elo": best.elo,
            "plus": best.plus,
            "minus": best.minus,
            "games": best.games,
        });
        println!("{json}");
    } else {
        println!("{}", best.best);
    }
    Ok(())
}
