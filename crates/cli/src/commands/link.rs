//! `tourney link`: a program or data file kept elsewhere, named by its sha256.

use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::Args;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Name a file kept elsewhere (an object store, a CDN) by its sha256 for workers to fetch.
///
/// A network or program too big to upload, or already in an object store, is linked:
/// `/artifacts/<sha256>` then redirects there, and each worker host streams it once into its
/// cache, refusing anything that does not hash to the sha256 (the test pauses). Prints the
/// sha256 to name it by: `files = { "net.bin" = "<sha256>" }` in a tournament file. Example:
/// `tourney link https://objects.example/nets/nn-42.bin --sha256 $(sha256sum nn-42.bin | cut
/// -c1-64)`.
#[derive(Args)]
pub(crate) struct LinkArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// Where workers fetch it (http:// or https://).
    url: String,
    /// Its sha256, 64 hex digits (`sha256sum` prints it).
    #[arg(long)]
    sha256: String,
}

pub(crate) fn run(args: &LinkArgs) -> Result<ExitCode> {
    let sha256 = args.sha256.to_ascii_lowercase();
    if !tourney_model::source::is_sha256(&sha256) {
        bail!("--sha256 '{}': expected 64 hex digits", args.sha256);
    }
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.link_artifact(pb::LinkArtifactRequest {
        sha256: sha256.clone(),
        url: args.url.clone(),
    })?;
    println!("{sha256}");
    Ok(ExitCode::SUCCESS)
}
