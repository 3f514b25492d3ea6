//! `tourney version add|list`: registered engine versions.

use std::path::Path;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tourney_proto::v1 as pb;

use crate::support::client::{program_path, status_error, upload};
use crate::support::local::AdminTarget;

/// Register engine versions and list them (`tourney version add|list`).
///
/// A version names what an engine is: a built-in player spec (its weights and seed
/// included), or an outside program (uploaded, known by its sha256) with its options, and
/// optionally the version it was made from. Tournament files then say `version = "NAME"`,
/// and the timeline rates it across tournaments. A program given as a path may lie anywhere
/// (it is given on the command line), must be an executable file, and is uploaded. See
/// docs/versions.md.
#[derive(Args)]
pub(crate) struct VersionArgs {
    #[command(subcommand)]
    action: VersionAction,
}

#[derive(Subcommand)]
enum VersionAction {
    /// Register a version: a built-in player spec, or an outside engine's command.
    ///
    /// A program given as a path is uploaded, with its options. A version that has played
    /// never changes (`--replace` works only before): register the changed engine under a
    /// new name, with `--parent` saying where it came from.
    ///
    /// Examples: `tourney version add ab-v2 --player ab:connectedness=80 --parent ab-v1`;
    /// `tourney version add mine-17 --command "./build/engine --uci" --option Hash=64`.
    Add(AddArgs),
    /// List the registered versions, oldest first.
    List(ListArgs),
}

#[derive(Args)]
struct AddArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// Its name, as tournament files (`version = "NAME"`) and the timeline call it.
    name: String,
    /// A built-in player spec (`ab:depth=6,connectedness=80`).
    #[arg(long, conflicts_with = "command", required_unless_present = "command")]
    player: Option<String>,
    /// An outside engine's command line; a program given as a path is uploaded.
    #[arg(long)]
    command: Option<String>,
    /// A `setoption` value of the outside engine (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = option_pair, requires = "command")]
    options: Vec<(String, String)>,
    /// The version it was made from.
    #[arg(long)]
    parent: Option<String>,
    /// What changed.
    #[arg(long, default_value = "")]
    note: String,
    /// Replace a version of this name that has not played yet.
    #[arg(long)]
    replace: bool,
}

#[derive(Args)]
struct ListArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// JSON for scripts.
    #[arg(long)]
    json: bool,
}

/// `NAME=VALUE`.
fn option_pair(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}': expected NAME=VALUE"))?;
    if name.trim().is_empty() {
        return Err(format!("'{text}': the option has no name"));
    }
    Ok((name.trim().to_string(), value.to_string()))
}

pub(crate) fn version(args: &VersionArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        match &args.action {
            VersionAction::Add(a) => add(a).await,
            VersionAction::List(l) => list(l).await,
        }
    })
}

async fn add(args: &AddArgs) -> Result<()> {
    let program = args.command.as_deref().and_then(program_path);
    if let Some(program) = &program {
        // Given here on the command line, it may be anywhere; it must be a program.
        crate::support::client::executable(Path::new(program)).context("--command")?;
    }
    let mut admin = args.client.admin().await?;
    let mut artifact = String::new();
    if let Some(program) = program {
        artifact = upload(&mut admin, Path::new(&program)).await?;
    }
    let version = pb::EngineVersion {
        name: args.name.clone(),
        player: args.player.clone().unwrap_or_default(),
        command: args.command.clone().unwrap_or_default(),
        artifact,
        options: args.options.iter().cloned().collect(),
        parent: args.parent.clone().unwrap_or_default(),
        note: args.note.clone(),
        created_ms: 0,
    };
    admin
        .add_version(pb::AddVersionRequest {
            version: Some(version),
            replace: args.replace,
        })
        .await
        .map_err(status_error)?;
    println!("version {} registered", args.name);
    Ok(())
}

async fn list(args: &ListArgs) -> Result<()> {
    let mut admin = args.client.admin().await?;
    let versions = admin
        .list_versions(pb::ListVersionsRequest {})
        .await
        .map_err(status_error)?
        .into_inner()
        .versions;
    if args.json {
        let all: Vec<tourney_model::version::EngineVersion> =
            versions.into_iter().map(Into::into).collect();
        println!("{}", serde_json::to_string_pretty(&all)?);
        return Ok(());
    }
    say!(
        "{:<24} {:<24} {:<20} plays",
        "version",
        "parent",
        "registered"
    );
    for v in versions {
        let described = tourney_model::version::EngineVersion::from(v.clone()).describe();
        say!(
            "{:<24} {:<24} {:<20} {described}{}",
            v.name,
            v.parent,
            tourney_model::Utc::from_unix_ms(v.created_ms).clock(),
            if v.note.is_empty() {
                String::new()
            } else {
                format!("  ({})", v.note)
            }
        );
    }
    Ok(())
}
