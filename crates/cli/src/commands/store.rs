//! `tourney store verify`: reads a data directory's store back and says what is damaged.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use tourney_store::{DEFAULT_CACHE_MB, Store};

/// Check a data directory's store: `tourney store verify --data DIR`.
///
/// Reads every record of a stopped coordinator's (or `run`'s) store back: tournaments and
/// pairs decode, each pair belongs to a tournament, holds two games and has a digest that
/// matches them, each tournament's count of pairs matches its digests, each artifact
/// matches its sha256. Lists what is damaged and exits 1 if anything is.
#[derive(Args)]
pub(crate) struct StoreArgs {
    #[command(subcommand)]
    command: StoreCommand,
}

#[derive(Subcommand)]
enum StoreCommand {
    /// Read every record of a stopped coordinator's store back and say what is damaged.
    ///
    /// Reads every record of a stopped coordinator's (or `run`'s) store and checks it:
    /// tournaments and pairs decode, each pair belongs to a tournament and holds two game
    /// records, each artifact matches its sha256. Changes nothing; exits 1 when something
    /// is damaged, listing what.
    Verify {
        /// The data directory (`--data` of `coordinator` or `run`).
        #[arg(long, default_value = "tourney-data")]
        data: PathBuf,
    },
}

pub(crate) fn run(args: &StoreArgs) -> Result<ExitCode> {
    match &args.command {
        StoreCommand::Verify { data } => {
            let store = Store::open_data_dir(data, DEFAULT_CACHE_MB).with_context(|| {
                format!(
                    "opening the store in {} (a running coordinator holds it: stop it first)",
                    data.display()
                )
            })?;
            let found = store
                .verify()
                .with_context(|| format!("reading the store in {}", data.display()))?;
            for problem in &found.problems {
                println!("damaged: {problem}");
            }
            println!(
                "{}: {} tournaments, {} pairs, {} artifacts read back whole; {} damaged",
                data.display(),
                found.tournaments,
                found.pairs,
                found.artifacts,
                found.damaged
            );
            if found.damaged > 0 {
                bail!(
                    "{} damaged records in {} (restore it from a backup, or export what reads)",
                    found.damaged,
                    data.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
