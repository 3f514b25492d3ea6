//! `tourney report`: a tournament's rating report as text, JSON, CSV or HTML.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Report formats.
#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    Text,
    Json,
    Csv,
    /// A page that links the other tournaments it names (an SPSA run's verification, the
    /// versions') to their dashboard pages, or with --data to the reports `run` wrote.
    Html,
}

/// A tournament's rating report as text, JSON, CSV or HTML.
///
/// The report: standings, cross-table, SPRT with its trajectory, terminations, engine
/// failures by engine, workers with their homogeneity test and suspects, and results per
/// opening with 10 games or more. The coordinator renders it from what it holds in memory
/// (Admin `GetReport`; the same report the dashboard shows). As HTML it links the
/// tournaments it names (an SPSA run's verification, the versions') to their dashboard
/// pages, or with `--data` to the reports `tourney run` wrote.
///
/// Example: `tourney report 3 --format html -o report.html`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub(crate) fn run(args: &ReportArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let format = match args.format {
        ReportFormat::Text => "text",
        ReportFormat::Json => "json",
        ReportFormat::Csv => "csv",
        ReportFormat::Html => "html",
    };
    let links = args.client.tournament_links();
    let out = admin.report(args.id, format, &links)?;
    // Names and notes come from others: no terminal control characters go out.
    let out = tourney_model::printable(&out);
    match &args.output {
        Some(p) => {
            std::fs::write(p, out.as_bytes()).with_context(|| format!("writing {}", p.display()))?
        }
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
