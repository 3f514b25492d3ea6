//! `tourney export`: a tournament's games as JSON Lines or PGN-style text.

use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, ValueEnum};
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;
use crate::support::records::pgn_of_line;

/// Export formats.
#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// PGN-style text.
    Pgn,
    /// One JSON record per line.
    Jsonl,
}

/// A tournament's games as PGN-style text or JSON Lines.
///
/// All games, or those of pairs A to B (`--pairs`), of one engine (`--engine`), or started
/// since a UTC moment (`--since`): one JSON record per line (with `tournament`, `pair`,
/// `white`, `black`, and the `worker` that played it) or PGN-style (see docs/records.md).
///
/// Example: `tourney export 3 --format pgn --since 2026-12-01T08:30 > games.pgn`.
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

pub(crate) fn run(args: &ExportArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let (from_pair, to_pair) = args.pairs.unwrap_or((None, None));
    let request = pb::ExportRequest {
        id: args.id,
        from_pair,
        to_pair,
        engine: args.engine.clone().unwrap_or_default(),
        since_ms: args.since,
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    use std::io::Write;
    admin.export(request, |chunk| {
        for line in &chunk.lines {
            match args.format {
                ExportFormat::Jsonl => writeln!(out, "{line}")?,
                ExportFormat::Pgn => write!(out, "{}", pgn_of_line(line)?)?,
            }
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
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
}
