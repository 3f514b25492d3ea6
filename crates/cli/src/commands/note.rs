//! `tourney note`: a test annotated with a note and links.

use std::process::ExitCode;

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Set a test's note and links, shown in its report.
///
/// The note is free text (at most 2,000 characters: what the patch does); links are
/// http:// or https:// addresses (at most 10: the diff, the pull request). Allowed to its
/// author, approvers and admins. Example: `tourney note 7 "Faster move ordering" --link
/// https://github.com/me/engine/pull/12`.
#[derive(clap::Args)]
pub(crate) struct NoteArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament id.
    id: u64,
    /// The note ("" for none).
    note: String,
    /// A link (repeatable).
    #[arg(long = "link", value_name = "URL")]
    links: Vec<String>,
}

pub(crate) fn run(args: &NoteArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.annotate(pb::AnnotateRequest {
        id: args.id,
        note: args.note.clone(),
        links: args.links.clone(),
    })?;
    println!("noted");
    Ok(ExitCode::SUCCESS)
}
