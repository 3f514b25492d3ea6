//! `tourney events`: the events log of a coordinator.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_model::Utc;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// The events log: who did what, and when.
///
/// Every action through the Admin service or the dashboard is recorded with its author:
/// tests submitted, cancelled, resumed, archived; workers excluded; versions added; users
/// and tokens made, changed, removed. The newest 100,000 are kept. Example: `tourney
/// events --limit 20`.
#[derive(Args)]
pub(crate) struct EventsArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// How many, newest first (at most 1,000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Only events numbered below this one (to page back).
    #[arg(long, default_value_t = 0)]
    before: u64,
    /// JSON lines for scripts.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: &EventsArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let events = admin
        .list_events(pb::ListEventsRequest {
            before: args.before,
            limit: args.limit,
        })?
        .events;
    for e in events {
        if args.json {
            let line = serde_json::json!({
                "seq": e.seq, "at_ms": e.at_ms, "who": e.who, "action": e.action,
                "subject": e.subject, "detail": e.detail,
            });
            println!("{line}");
        } else {
            println!(
                "{:>6} {} {:<16} {:<18} {:<20} {}",
                e.seq,
                Utc::from_unix_ms(e.at_ms),
                e.who,
                e.action,
                e.subject,
                e.detail
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
