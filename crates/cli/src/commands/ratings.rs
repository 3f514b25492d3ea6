//! `tourney ratings`: the joint rating table of a PGN file or of tourney's game records.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde_json::Value;
use tourney_report::{Crosstable, Report};
use tourney_stats::{BayesElo, ErrorMethod, GameResult, GameTable, Ordo};

/// Rating method.
#[derive(Clone, Copy, ValueEnum)]
enum Method {
    /// BayesElo 0057's model and fit (draw and first-move parameters, prior of 2 draws).
    Bayeselo,
    /// Ordo-style logistic maximum likelihood (draws count half, 202 points = 76 %).
    Ordo,
}

/// BayesElo error bars.
#[derive(Clone, Copy, ValueEnum)]
enum Errors {
    /// Distribution of each rating with the others fixed (BayesElo `exactdist`).
    Exactdist,
    /// From the covariance matrix (BayesElo `covariance`).
    Covariance,
}

/// Output format.
#[derive(Clone, Copy, ValueEnum, PartialEq)]
enum Format {
    /// A table for people.
    Text,
    /// `{"method", "players": [{name, elo, plus, minus, games, score, draws, ...}]}`.
    Json,
    /// The standings as CSV.
    Csv,
    /// A self-contained page with standings, chart and cross-table.
    Html,
}

/// Joint rating table of all players in a PGN file or tourney's JSON Lines records.
///
/// Every player's rank, name, Elo, +/−, games, score, draws and LOS to the next, with the
/// cross-table: BayesElo by default (`elo`, `mm`, `exactdist`, `ratings`), or an Ordo-style
/// fit (`--method ordo`). `--format json` gives `{"players": [{name, elo, plus, minus,
/// games, score, draws, ...}]}`.
///
/// Example: `tourney ratings games.pgn --format html -o report.html`.
#[derive(Args)]
pub(crate) struct RatingsArgs {
    /// A PGN file (White, Black and Result tags are read) or JSON Lines game records (one
    /// object per line with `white`, `black` and `result`).
    file: PathBuf,
    /// Rating method.
    #[arg(long, value_enum, default_value = "bayeselo")]
    method: Method,
    /// Player whose rating is fixed at the offset (default: the pool average is fixed).
    #[arg(long)]
    anchor: Option<String>,
    /// Rating of the anchor or of the pool average [default: 0 for bayeselo, 2300 for ordo].
    #[arg(long, allow_hyphen_values = true)]
    offset: Option<f64>,
    /// How BayesElo computes error bars.
    #[arg(long, value_enum, default_value = "exactdist")]
    errors: Errors,
    /// Fit BayesElo's first-move advantage and draw parameter to the games (`mm 1 1`)
    /// instead of using its defaults (32.8 and 97.3).
    #[arg(long)]
    fit: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Games read from a file, with termination reasons where the file gives them.
struct Games {
    table: GameTable,
    terminations: BTreeMap<String, u64>,
}

fn read_pgn(text: &str, path: &Path) -> Result<Games> {
    let table =
        GameTable::from_pgn(text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let mut terminations = BTreeMap::new();
    for line in text.lines() {
        if let Some(reason) = line
            .trim()
            .strip_prefix("[Termination \"")
            .and_then(|r| r.strip_suffix("\"]"))
        {
            *terminations.entry(reason.to_string()).or_insert(0) += 1;
        }
    }
    Ok(Games {
        table,
        terminations,
    })
}

fn read_jsonl(text: &str, path: &Path) -> Result<Games> {
    let mut table = GameTable::new();
    let mut terminations = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let record: Value =
            serde_json::from_str(line).with_context(|| format!("{}: not JSON", at()))?;
        let field = |name: &str| -> Result<&str> {
            record
                .get(name)
                .and_then(Value::as_str)
                .with_context(|| format!("{}: missing string field '{name}'", at()))
        };
        let (white, black, result) = (field("white")?, field("black")?, field("result")?);
        let Some(result) = GameResult::parse(result) else {
            if result == "*" {
                continue;
            }
            bail!(
                "{}: result must be 1-0, 0-1, 1/2-1/2 or *, found '{result}'",
                at()
            );
        };
        table.add(white, black, result);
        if let Some(reason) = record.get("termination").and_then(Value::as_str) {
            *terminations.entry(reason.to_string()).or_insert(0) += 1;
        }
    }
    Ok(Games {
        table,
        terminations,
    })
}

/// The players of `table` rated by the method and options of `args`.
fn rate(args: &RatingsArgs, table: &GameTable) -> tourney_stats::RatingTable {
    match args.method {
        Method::Bayeselo => BayesElo {
            errors: match args.errors {
                Errors::Exactdist => ErrorMethod::ExactDist,
                Errors::Covariance => ErrorMethod::Covariance,
            },
            offset: args.offset.unwrap_or(0.0),
            anchor: args.anchor.clone(),
            fit_advantage: args.fit,
            fit_drawelo: args.fit,
            ..BayesElo::default()
        }
        .rate(table),
        Method::Ordo => Ordo {
            average: args.offset.unwrap_or(2300.0),
            anchor: args.anchor.clone(),
            ..Ordo::default()
        }
        .rate(table),
    }
}

pub(crate) fn run(args: &RatingsArgs) -> Result<ExitCode> {
    let path = &args.file;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let jsonl = path
        .extension()
        .is_some_and(|e| e == "jsonl" || e == "json")
        || text.trim_start().starts_with('{');
    let games = if jsonl {
        read_jsonl(&text, path)?
    } else {
        read_pgn(&text, path)?
    };
    if games.table.is_empty() {
        bail!("{}: no finished games", path.display());
    }
    if let Some(anchor) = &args.anchor
        && !games.table.names().contains(anchor)
    {
        bail!("--anchor '{anchor}' is not a player of {}", path.display());
    }
    let ratings = rate(args, &games.table);
    let names: Vec<String> = ratings.players.iter().map(|p| p.name.clone()).collect();
    let mut terminations: Vec<(String, u64)> = games.terminations.into_iter().collect();
    terminations.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let report = Report {
        title: format!("Ratings of {}", path.display()),
        details: Vec::new(),
        notes: Vec::new(),
        crosstable: Crosstable::new(&games.table, &names),
        ratings,
        sprt: None,
        terminations,
        openings: Vec::new(),
        engine_failures: Vec::new(),
        latency: Vec::new(),
        workers: Default::default(),
        timeline: None,
        spsa: None,
        progress: None,
        adjudication_check: None,
    };
    let format = if args.json { Format::Json } else { args.format };
    let out = match format {
        Format::Text => report.text(),
        Format::Json => serde_json::to_string_pretty(&report.ratings)? + "\n",
        Format::Csv => report.csv(),
        // Games from files, of no tournament: nothing to link.
        Format::Html => report.html(|_| None),
    };
    match &args.output {
        Some(file) => {
            std::fs::write(file, out).with_context(|| format!("writing {}", file.display()))?
        }
        None => print!("{out}"),
    }
    Ok(ExitCode::SUCCESS)
}
