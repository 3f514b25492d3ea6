//! `tourney timeline`: every engine version rated on one scale.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use tourney_proto::v1 as pb;
use tourney_report::{TimelineReport, TimelineRow};

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Every engine version rated on one scale from all tournaments between versions.
///
/// BayesElo over every counted game between two registered versions: each version's Elo
/// with its 95 % interval, games, score and the tournaments that measured it; `--anchor`
/// picks the version rated 0 (by default the oldest with games). `--html FILE` writes the
/// page with its chart, tournaments linked to the dashboard (the dashboard serves the same
/// page at `/timeline`); with `--data`, to the HTML reports `tourney run` wrote into the
/// data directory.
///
/// Example: `tourney timeline --anchor ab-v1`.
#[derive(Args)]
pub(crate) struct TimelineArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The version rated 0 [default: the oldest version with games].
    #[arg(long)]
    anchor: Option<String>,
    /// JSON for scripts.
    #[arg(long)]
    json: bool,
    /// Also write the timeline as an HTML page (chart and table, tournaments linked to
    /// the coordinator's dashboard).
    #[arg(long, value_name = "FILE")]
    html: Option<std::path::PathBuf>,
}

pub(crate) fn run(args: &TimelineArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let t = admin.timeline(pb::TimelineRequest {
        anchor: args.anchor.clone().unwrap_or_default(),
    })?;
    let report = TimelineReport {
        anchor: t.anchor,
        games: t.games,
        rows: t
            .entries
            .into_iter()
            .map(|e| {
                let v = e.version.unwrap_or_default();
                TimelineRow {
                    plays: tourney_model::version::EngineVersion::from(v.clone()).describe(),
                    name: v.name,
                    parent: v.parent,
                    elo: e.elo,
                    plus: e.plus,
                    minus: e.minus,
                    games: e.games,
                    score: e.score,
                    tournaments: e.tournaments,
                }
            })
            .collect(),
    };
    if let Some(path) = &args.html {
        std::fs::write(path, report.html(|id| args.client.tournament_link(id)))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", tourney_model::printable(&report.text()));
    }
    Ok(ExitCode::SUCCESS)
}
