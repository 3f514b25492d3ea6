//! Game records as the coordinator's exports give them, one JSON line each.

use anyhow::{Context, Result};

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
        for kept in ["stderr", "transcript", "artifact", "options"] {
            if let Some(lines) = value.get(format!("{side}_{kept}")) {
                player[kept] = lines.clone();
            }
        }
        value[side] = player;
    }
    Ok(serde_json::from_value(value)?)
}
