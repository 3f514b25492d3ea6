//! `tourney archive`: a finished tournament's games moved out of the store into files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_proto::v1 as pb;

use crate::support::admin::export;
use crate::support::local::AdminTarget;
use crate::support::records::pgn_of_line;
use crate::support::refusal::reply;
use crate::support::signals::Interrupted;

/// Move a finished tournament's games out of the coordinator's store into files.
///
/// Writes `tournament-ID.jsonl.gz` (as `export --format jsonl`) and `tournament-ID.pgn.gz`
/// (in `--out`, the current directory by default) with a progress bar, reads the JSON Lines
/// back, and only then has the coordinator remove the games (Admin `Archive`, which refuses
/// unless the archive holds every stored game). The tournament's summary stays: `status`,
/// `report`, the dashboard and restarts are as before; its `export` then says the games
/// were archived.
///
/// Existing files are never overwritten; a failed archive leaves none, and one stopped with
/// Ctrl-C or SIGTERM removes its partial `.gz.part` files and exits 130.
///
/// Example: `tourney archive 12 --out /srv/tourney/archive`.
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
pub(crate) fn run(args: &ArchiveArgs) -> Result<ExitCode> {
    crate::support::admin::block_on(async {
        // Stopped (Ctrl-C, SIGTERM), the archive under way is dropped with its partial
        // files; a part an earlier, killed archive left is replaced when it starts again.
        let stop = crate::support::signals::stop_signal();
        let archived = tokio::select! {
            archived = archive_games(args) => Some(archived),
            () = stop => None,
        };
        // The archive's future, with its files, is dropped by now.
        archived.unwrap_or_else(|| {
            eprintln!("archive stopped: nothing removed from the store, no file left");
            Err(Interrupted.into())
        })
    })??;
    Ok(ExitCode::SUCCESS)
}

/// The lines of the gzipped file at `path`, each read back.
fn lines_read_back(path: &std::path::Path) -> Result<u64> {
    use std::io::BufRead;
    std::io::BufReader::new(flate2::read::GzDecoder::new(std::fs::File::open(path)?))
        .lines()
        .try_fold(0u64, |n, line| line.map(|_| n + 1))
        .with_context(|| format!("{} does not read back", path.display()))
}

/// The work of `tourney archive`.
async fn archive_games(args: &ArchiveArgs) -> Result<()> {
    let mut admin = args.client.admin().await?;
    let status = reply(admin.status(pb::StatusRequest { id: args.id })).await?;
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
    let request = pb::ExportRequest {
        id: args.id,
        ..Default::default()
    };
    let mut games = 0u64;
    export(&mut admin, request, |chunk| {
        for line in &chunk.lines {
            jsonl.write_all(line.as_bytes())?;
            jsonl.write_all(b"\n")?;
            pgn.write_all(pgn_of_line(line)?.as_bytes())?;
        }
        games += chunk.lines.len() as u64;
        bar.set_position(games);
        Ok(())
    })
    .await?;
    bar.finish_and_clear();
    let (jsonl_path, pgn_path) = (jsonl.path.clone(), pgn.path.clone());
    let sizes = (jsonl.finish()?, pgn.finish()?);
    // What is on disk, read back, before anything is removed.
    let lines = lines_read_back(&jsonl_path)?;
    if lines != games {
        bail!(
            "{} reads back {lines} games of {games}: nothing removed from the store",
            jsonl_path.display()
        );
    }
    let answer = reply(admin.archive(pb::ArchiveRequest { id: args.id, games })).await?;
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
