//! Plumbing the commands share: reaching a coordinator, the embedded one, artifact hashes,
//! signals, the host, records and engines started on the user's command.

pub(crate) mod admin;
pub(crate) mod artifact_hashes;
pub(crate) mod client;
pub(crate) mod command_files;
pub(crate) mod engines;
pub(crate) mod git;
pub(crate) mod host;
pub(crate) mod local;
pub(crate) mod records;
pub(crate) mod refusal;
pub(crate) mod signals;
pub(crate) mod status_json;

use anyhow::{Context, Result};
use tourney_rules::Position;

pub(crate) fn parse_position<P: Position>(text: &str) -> Result<P> {
    text.parse::<P>()
        .with_context(|| format!("invalid {} position '{text}'", P::GAME))
}
