//! The admin commands: `submit`, `status`, `report`, `export`, `cancel`, `resume`.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use serde::Serialize;
use tourney_proto::v1 as pb;

use crate::client::{fetch_report, status_error, submit_file};
use crate::local::AdminTarget;

/// Arguments of `tourney submit`.
#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament file.
    file: PathBuf,
}

pub(crate) fn submit(args: &SubmitArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let id = submit_file(&mut admin, &args.file).await?;
        println!("{id}");
        Ok(())
    })
}

/// Arguments of `tourney status`.
#[derive(Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// A tournament id (default: the most recent ones, newest first).
    id: Option<u64>,
    /// Without an id: at most this many tournaments (0: all).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct StatusJson {
    id: u64,
    name: String,
    game: String,
    format: String,
    state: String,
    pairs_done: u64,
    pairs_planned: Option<u64>,
    games: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_reason: Option<String>,
    openings: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    openings_note: Option<String>,
    pairs_excluded: u64,
    suspect_workers: u64,
    standings: Vec<StandingJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lower_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upper_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<String>,
}

#[derive(Serialize)]
struct StandingJson {
    name: String,
    elo: f64,
    plus: f64,
    minus: f64,
    games: u64,
    score: f64,
    draws: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    los_next: Option<f64>,
    /// `>` or `<` when the rating is only a bound, else empty.
    bound: String,
}

fn status_json(s: &pb::TournamentStatus) -> StatusJson {
    StatusJson {
        id: s.id,
        name: s.name.clone(),
        game: s.game.clone(),
        format: s.format.clone(),
        state: s.state.clone(),
        pairs_done: s.pairs_done,
        pairs_planned: s.pairs_planned,
        games: s.games,
        paused_reason: (!s.paused_reason.is_empty()).then(|| s.paused_reason.clone()),
        openings: s.openings,
        openings_note: (!s.openings_note.is_empty()).then(|| s.openings_note.clone()),
        pairs_excluded: s.pairs_excluded,
        suspect_workers: s.suspect_workers,
        standings: s
            .standings
            .iter()
            .map(|p| StandingJson {
                name: p.name.clone(),
                elo: p.elo,
                plus: p.plus,
                minus: p.minus,
                games: p.games,
                score: p.score,
                draws: p.draws,
                los_next: p.los_next,
                bound: p.bound.clone(),
            })
            .collect(),
        llr: s.sprt.as_ref().map(|x| x.llr),
        lower_bound: s.sprt.as_ref().map(|x| x.lower_bound),
        upper_bound: s.sprt.as_ref().map(|x| x.upper_bound),
        decision: s.sprt.as_ref().map(|x| x.decision.clone()),
    }
}

fn status_line(s: &pb::TournamentStatus) -> String {
    let planned = s
        .pairs_planned
        .map_or("open".to_string(), |p| p.to_string());
    let mut out = format!(
        "#{} {} ({}, {}): {}, {}/{planned} pairs, {} games",
        s.id, s.name, s.game, s.format, s.state, s.pairs_done, s.games
    );
    if !s.paused_reason.is_empty() {
        out += &format!(
            " ({}; fix it, then `tourney resume {}`)",
            s.paused_reason, s.id
        );
    }
    if !s.openings_note.is_empty() {
        out += &format!(" (note: {})", s.openings_note);
    }
    if s.pairs_excluded > 0 {
        out += &format!(", {} pairs excluded", s.pairs_excluded);
    }
    if s.suspect_workers > 0 {
        out += &format!(
            ", {} suspect workers (see `tourney report {}`)",
            s.suspect_workers, s.id
        );
    }
    if let Some(sprt) = &s.sprt {
        out += &format!(
            ", LLR {:.2} [{:.2}, {:.2}] {}",
            sprt.llr, sprt.lower_bound, sprt.upper_bound, sprt.decision
        );
    }
    for (rank, p) in s.standings.iter().enumerate() {
        if p.games == 0 {
            out += &format!("\n  {:>2}. {:<20} no games yet", rank + 1, p.name);
            continue;
        }
        out += &format!(
            "\n  {:>2}. {:<20} {:>6} +{:.0}/-{:.0}  {} games  {:.1}%  draws {:.1}%",
            rank + 1,
            p.name,
            format!("{}{:.0}", p.bound, p.elo),
            p.plus,
            p.minus,
            p.games,
            p.score * 100.0,
            p.draws * 100.0
        );
        if let Some(los) = p.los_next {
            out += &format!("  LOS {:.1}%", los * 100.0);
        }
    }
    out
}

pub(crate) fn status(args: &StatusArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let list = match args.id {
            Some(id) => vec![
                admin
                    .status(pb::StatusRequest { id })
                    .await
                    .map_err(status_error)?
                    .into_inner(),
            ],
            None => {
                let wanted = if args.limit == 0 {
                    usize::MAX
                } else {
                    args.limit
                };
                let mut all = Vec::new();
                let mut page_token = String::new();
                while all.len() < wanted {
                    let page = admin
                        .list(pb::ListRequest {
                            page_size: (wanted - all.len()).min(1000) as u32,
                            page_token,
                        })
                        .await
                        .map_err(status_error)?
                        .into_inner();
                    all.extend(page.tournaments);
                    if page.next_page_token.is_empty() {
                        break;
                    }
                    page_token = page.next_page_token;
                }
                all
            }
        };
        if args.json {
            let json: Vec<StatusJson> = list.iter().map(status_json).collect();
            let out = if args.id.is_some() {
                serde_json::to_string_pretty(&json[0])?
            } else {
                serde_json::to_string_pretty(&json)?
            };
            println!("{out}");
        } else {
            for s in &list {
                say!("{}", status_line(s));
            }
        }
        Ok(())
    })
}

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

/// Arguments of `tourney report`.
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

pub(crate) fn report(args: &ReportArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let format = match args.format {
            ReportFormat::Text => "text",
            ReportFormat::Json => "json",
            ReportFormat::Csv => "csv",
            ReportFormat::Html => "html",
        };
        let links = args.client.tournament_links();
        let out = fetch_report(&mut admin, args.id, format, &links).await?;
        // Names and notes come from others: no terminal control characters go out.
        let out = tourney_model::printable(&out);
        match &args.output {
            Some(p) => std::fs::write(p, out.as_bytes())
                .with_context(|| format!("writing {}", p.display()))?,
            None => print!("{out}"),
        }
        Ok(())
    })
}

/// Export formats.
#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// PGN-style text.
    Pgn,
    /// One JSON record per line.
    Jsonl,
}

/// Arguments of `tourney export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: ExportFormat,
    /// Only pairs A to B (`100..200`, `100..` or `..200`; both ends included).
    #[arg(long, value_name = "A..B", value_parser = pair_range)]
    pairs: Option<(Option<u64>, Option<u64>)>,
    /// Only games this engine played (either colour).
    #[arg(long)]
    engine: Option<String>,
    /// Only games started at or after this moment: `2026-12-01`, `2026-12-01T08:30` (UTC).
    #[arg(long, value_name = "WHEN", value_parser = moment)]
    since: Option<u64>,
}

/// `A..B`, `A..` or `..B`.
fn pair_range(text: &str) -> Result<(Option<u64>, Option<u64>), String> {
    let (from, to) = text
        .split_once("..")
        .ok_or_else(|| format!("'{text}': expected A..B, A.. or ..B"))?;
    let end = |s: &str| {
        (!s.is_empty())
            .then(|| {
                s.parse::<u64>()
                    .map_err(|_| format!("'{s}' is not a pair number"))
            })
            .transpose()
    };
    Ok((end(from)?, end(to)?))
}

/// A UTC date or date and time, as Unix milliseconds.
fn moment(text: &str) -> Result<u64, String> {
    tourney_model::Utc::parse_unix_ms(text)
        .ok_or_else(|| format!("'{text}': expected 2026-12-01 or 2026-12-01T08:30 (UTC)"))
}

pub(crate) fn export(args: &ExportArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let (from_pair, to_pair) = args.pairs.unwrap_or((None, None));
        let request = pb::ExportRequest {
            id: args.id,
            from_pair,
            to_pair,
            engine: args.engine.clone().unwrap_or_default(),
            since_ms: args.since,
        };
        let mut stream = admin
            .export(request)
            .await
            .map_err(status_error)?
            .into_inner();
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        use std::io::Write;
        while let Some(chunk) = stream.message().await.map_err(status_error)? {
            for line in &chunk.lines {
                match args.format {
                    ExportFormat::Jsonl => writeln!(out, "{line}")?,
                    ExportFormat::Pgn => write!(out, "{}", pgn_of_line(line)?)?,
                }
            }
        }
        Ok(())
    })
}

/// The PGN-style text of an exported game.
pub(crate) fn pgn_of_line(line: &str) -> Result<String> {
    Ok(record_of_line(line)?.to_pgn())
}

/// The game record of an export line (the worker that played it in its meta).
pub(crate) fn record_of_line(line: &str) -> Result<tourney_model::GameRecord> {
    let mut value: serde_json::Value = serde_json::from_str(line)?;
    let object = value
        .as_object_mut()
        .context("an export line is a JSON object")?;
    // The worker that played it is PGN's Site (a record may come without a meta).
    let worker = object.get("worker").cloned().unwrap_or_default();
    if let Some(meta) = object
        .entry("meta")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
    {
        meta.insert("worker".into(), worker);
    }
    // Restore the record's own shape (players as objects) for the PGN writer.
    for side in ["white", "black"] {
        let name = value[side].clone();
        let mut player =
            serde_json::json!({ "name": name, "spec": value[format!("{side}_spec")].clone() });
        for kept in ["stderr", "transcript"] {
            if let Some(lines) = value.get(format!("{side}_{kept}")) {
                player[kept] = lines.clone();
            }
        }
        value[side] = player;
    }
    Ok(serde_json::from_value(value)?)
}

/// Arguments of `tourney archive`.
#[derive(Args)]
pub(crate) struct ArchiveArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id (finished or cancelled).
    id: u64,
    /// Where to write `tournament-ID.jsonl.gz` and `tournament-ID.pgn.gz`.
    #[arg(long, value_name = "DIR", default_value = ".")]
    out: PathBuf,
}

/// A gzip file written under a temporary name, renamed into place once it is whole and
/// on disk; removed if it is dropped before.
struct GzipFile {
    path: PathBuf,
    part: PathBuf,
    gz: Option<flate2::write::GzEncoder<std::io::BufWriter<std::fs::File>>>,
}

impl GzipFile {
    fn create(path: PathBuf) -> Result<GzipFile> {
        if path.exists() {
            bail!(
                "{} exists already: move it away or pick another --out",
                path.display()
            );
        }
        let part = path.with_extension("gz.part");
        let file = std::fs::File::create(&part)
            .with_context(|| format!("cannot create {}", part.display()))?;
        let gz = flate2::write::GzEncoder::new(
            std::io::BufWriter::new(file),
            flate2::Compression::default(),
        );
        Ok(GzipFile {
            path,
            part,
            gz: Some(gz),
        })
    }

    fn write_all(&mut self, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        if let Some(gz) = &mut self.gz {
            gz.write_all(bytes)?;
        }
        Ok(())
    }

    /// Finishes it, syncs it and renames it into place; its size.
    fn finish(mut self) -> Result<u64> {
        let gz = self.gz.take().context("finished once")?;
        let file = gz.finish()?.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&self.part, &self.path)?;
        Ok(file.metadata()?.len())
    }
}

impl Drop for GzipFile {
    fn drop(&mut self) {
        if self.gz.is_some() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

/// `tourney archive`: writes a finished tournament's games to gzipped JSON Lines and
/// PGN-style files, reads the JSON Lines back, and only then has the coordinator remove
/// the games from its store.
pub(crate) fn archive(args: &ArchiveArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        // Stopped (Ctrl-C, SIGTERM), the archive under way is dropped with its partial
        // files; a part an earlier, killed archive left is replaced when it starts again.
        let stop = crate::serve_cmd::stop_signal();
        let archived = tokio::select! {
            archived = archive_games(args) => Some(archived),
            () = stop => None,
        };
        // The archive's future, with its files, is dropped by now.
        archived.unwrap_or_else(|| {
            eprintln!("archive stopped: nothing removed from the store, no file left");
            std::process::exit(130);
        })
    })
}

/// The work of `tourney archive`.
async fn archive_games(args: &ArchiveArgs) -> Result<()> {
    use std::io::BufRead;
    let mut admin = args.client.admin().await?;
    let status = admin
        .status(pb::StatusRequest { id: args.id })
        .await
        .map_err(status_error)?
        .into_inner();
    if !matches!(status.state.as_str(), "finished" | "cancelled") {
        bail!(
            "tournament {} is {}: only a finished or cancelled tournament is archived",
            args.id,
            status.state
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let name = |ext: &str| args.out.join(format!("tournament-{}.{ext}.gz", args.id));
    let (mut jsonl, mut pgn) = (
        GzipFile::create(name("jsonl"))?,
        GzipFile::create(name("pgn"))?,
    );
    let bar = indicatif::ProgressBar::new(2 * status.pairs_done);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} games  {per_sec}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    let mut stream = admin
        .export(pb::ExportRequest {
            id: args.id,
            ..Default::default()
        })
        .await
        .map_err(status_error)?
        .into_inner();
    let mut games = 0u64;
    while let Some(chunk) = stream.message().await.map_err(status_error)? {
        for line in &chunk.lines {
            jsonl.write_all(line.as_bytes())?;
            jsonl.write_all(b"\n")?;
            pgn.write_all(pgn_of_line(line)?.as_bytes())?;
        }
        games += chunk.lines.len() as u64;
        bar.set_position(games);
    }
    bar.finish_and_clear();
    let (jsonl_path, pgn_path) = (jsonl.path.clone(), pgn.path.clone());
    let sizes = (jsonl.finish()?, pgn.finish()?);
    // What is on disk, read back, before anything is removed.
    let lines = std::io::BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(
        &jsonl_path,
    )?))
    .lines()
    .try_fold(0u64, |n, line| line.map(|_| n + 1))
    .with_context(|| format!("{} does not read back", jsonl_path.display()))?;
    if lines != games {
        bail!(
            "{} reads back {lines} games of {games}: nothing removed from the store",
            jsonl_path.display()
        );
    }
    let answer = admin
        .archive(pb::ArchiveRequest { id: args.id, games })
        .await
        .map_err(status_error)?
        .into_inner();
    println!(
        "tournament {}: {games} games archived to {} ({:.1} MiB) and {} ({:.1} MiB); the games of {} pairs removed from the store (its report and ratings stay)",
        args.id,
        jsonl_path.display(),
        sizes.0 as f64 / (1 << 20) as f64,
        pgn_path.display(),
        sizes.1 as f64 / (1 << 20) as f64,
        answer.pairs
    );
    Ok(())
}

/// Arguments of `tourney cancel` and `tourney resume`.
#[derive(Args)]
pub(crate) struct TournamentArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
}

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

pub(crate) fn resume(args: &TournamentArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        admin
            .resume(pb::ResumeRequest { id: args.id })
            .await
            .map_err(status_error)?;
        println!("resumed");
        Ok(())
    })
}

/// Arguments of `tourney exclude`.
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

pub(crate) fn exclude(args: &ExcludeArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let answer = admin
            .exclude_worker(pb::ExcludeWorkerRequest {
                id: args.id,
                worker: args.worker.clone(),
                reason: args.reason.clone(),
                include: args.include,
            })
            .await
            .map_err(status_error)?
            .into_inner();
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
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_filters_read_ranges_and_dates() {
        assert_eq!(pair_range("100..200"), Ok((Some(100), Some(200))));
        assert_eq!(pair_range("100.."), Ok((Some(100), None)));
        assert_eq!(pair_range("..7"), Ok((None, Some(7))));
        assert!(pair_range("100").unwrap_err().contains("expected A..B"));
        assert!(
            pair_range("x..2")
                .unwrap_err()
                .contains("'x' is not a pair number")
        );
        assert_eq!(moment("1970-01-02"), Ok(86_400_000));
        assert!(
            moment("tomorrow")
                .unwrap_err()
                .contains("expected 2026-12-01")
        );
    }

    #[test]
    fn status_lines_show_bounds_and_players_without_games() {
        let standing = |name: &str, elo: f64, games: u64, bound: &str| pb::Standing {
            name: name.into(),
            elo,
            plus: 50.0,
            minus: 60.0,
            games,
            score: 1.0,
            draws: 0.0,
            los_next: (games > 0).then_some(0.99),
            bound: bound.into(),
        };
        let status = pb::TournamentStatus {
            id: 3,
            name: "t".into(),
            state: "running".into(),
            standings: vec![
                standing("perfect", 400.0, 6, ">"),
                standing("later", 64.0, 0, ""),
            ],
            ..Default::default()
        };
        let text = status_line(&status);
        assert!(
            text.contains("perfect") && text.contains(">400") && text.contains("LOS 99.0%"),
            "{text}"
        );
        assert!(
            text.contains("2. later                no games yet"),
            "{text}"
        );
        assert!(!text.contains("+50/-60  0 games"), "{text}");
    }
}
