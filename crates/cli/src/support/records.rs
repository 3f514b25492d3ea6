//! Game records as the coordinator's exports give them, one JSON line each.

use anyhow::Result;

/// The PGN-style text of an exported game.
pub(crate) fn pgn_of_line(line: &str) -> Result<String> {
    Ok(record_of_line(line)?.to_pgn())
}

/// The game record of an export line (the worker that played it in its meta).
pub(crate) fn record_of_line(line: &str) -> Result<tourney_model::GameRecord> {
    Ok(tourney_coordinator::record_of_export_line(line)?)
}
