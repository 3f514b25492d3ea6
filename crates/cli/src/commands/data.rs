//! `tourney data`: a data generation run's positions exported, and what they hold.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand, ValueEnum};

use tourney_dataset::Stats;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// A data generation run's positions (`format = "datagen"`, docs/datagen.md).
#[derive(Args)]
pub(crate) struct DataArgs {
    #[command(subcommand)]
    command: DataCommand,
}

#[derive(Subcommand)]
enum DataCommand {
    Export(ExportArgs),
    Stats(StatsArgs),
}

/// Export formats.
#[derive(Clone, Copy, ValueEnum)]
enum DataFormat {
    /// The data file format: a 16-byte header, then 40-byte records (docs/datagen.md).
    Binary,
    /// One JSON object per position: game, position, score, result, ply, game_id.
    Jsonl,
}

/// Export a data generation run's positions, to stdout or a file.
///
/// The positions the run's data files hold now (a run still going gives those so far),
/// as one data file (`binary`, what `tourney tune texel` reads) or as JSON Lines: `{"game":
/// "loa", "position": "...", "score": 35, "result": 1, "ply": 12, "game_id": 7}`, with
/// the score in centi-units and the result (1, 0.5 or 0) for the side to move.
///
/// Example: `tourney data export 4 -o loa.bin`; `tourney data export 4 --format jsonl |
/// head`.
#[derive(Args)]
struct ExportArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The run's tournament id.
    id: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "binary")]
    format: DataFormat,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    output: Option<std::path::PathBuf>,
}

/// What a data generation run's positions are: counts, result balance, scores.
///
/// Positions and the games they come from, how the results fall for the side to move and
/// by colour, a histogram of the engine's scores, and what the run's filters skipped
/// (duplicates, early plies, captures, decided scores, unscored moves, forfeited games).
///
/// Example: `tourney data stats 4`.
#[derive(Args)]
struct StatsArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The run's tournament id.
    id: u64,
}

pub(crate) fn run(args: &DataArgs) -> Result<ExitCode> {
    match &args.command {
        DataCommand::Export(a) => export(a)?,
        DataCommand::Stats(a) => stats(a)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn export(args: &ExportArgs) -> Result<()> {
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(std::io::BufWriter::new(
            std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
        )),
        None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
    };
    let mut decoder = Decoder::default();
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.export_data(args.id, |bytes| {
        match args.format {
            DataFormat::Binary => out.write_all(&bytes)?,
            DataFormat::Jsonl => decoder.feed(&bytes, |r| {
                serde_json::to_writer(&mut out, &r.to_json())?;
                out.write_all(b"\n")?;
                Ok(())
            })?,
        }
        Ok(())
    })?;
    out.flush()?;
    Ok(())
}

fn stats(args: &StatsArgs) -> Result<()> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let summary = admin.data_summary(pb::DataSummaryRequest { id: args.id })?;
    let mut stats = Stats::default();
    let mut decoder = Decoder::default();
    admin.export_data(args.id, |bytes| {
        decoder.feed(&bytes, |r| {
            stats.add(&r);
            Ok(())
        })
    })?;
    let skipped = tourney_dataset::Skipped {
        early: summary.early,
        captures: summary.captures,
        decided: summary.decided,
        unscored: summary.unscored,
        forfeits: summary.forfeits,
        duplicates: summary.duplicates,
    };
    println!(
        "run        {}: {} of {} positions wanted, from {} pairs, in {} files under {}",
        args.id, summary.positions, summary.target, summary.pairs, summary.files, summary.directory
    );
    print!("{}", stats.render(Some(&skipped)));
    Ok(())
}

/// Reads a data file streamed in chunks: the header checked, then each record decoded.
#[derive(Default)]
struct Decoder {
    pending: Vec<u8>,
    header_read: bool,
    record: u64,
}

impl Decoder {
    fn feed(
        &mut self,
        bytes: &[u8],
        mut each: impl FnMut(tourney_dataset::Record) -> Result<()>,
    ) -> Result<()> {
        use tourney_dataset::{HEADER_BYTES, RECORD_BYTES, Record};
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        if !self.header_read {
            if self.pending.len() < HEADER_BYTES {
                return Ok(());
            }
            let head: &[u8; HEADER_BYTES] = self.pending[..HEADER_BYTES].try_into()?;
            tourney_dataset::file::check_header(head)?;
            self.header_read = true;
            at = HEADER_BYTES;
        }
        while self.pending.len() - at >= RECORD_BYTES {
            let bytes: &[u8; RECORD_BYTES] = self.pending[at..at + RECORD_BYTES].try_into()?;
            let r = Record::decode(bytes).with_context(|| format!("record {}", self.record))?;
            each(r)?;
            self.record += 1;
            at += RECORD_BYTES;
        }
        self.pending.drain(..at);
        Ok(())
    }
}
