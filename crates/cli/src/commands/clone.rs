//! `tourney clone`: a test submitted again, changed (fishtest's reschedule: a passed STC
//! as its LTC), with the programs, data files, commits and openings it was played with.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use tourney_model::TimeControl;
use tourney_model::source::EngineFacts;
use tourney_model::tournament::TournamentConfig;
use tourney_model::tournament::followup::{Changes, bound_preset, follow_up, preset_changes};
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Submit a test again, changed: a passed STC rescheduled as its LTC; prints the new id.
///
/// The coordinator gives the test's file as submitted with what it was played with
/// (Admin/GetFile; users and up, like the dashboard's Clone): the sha256 of its uploaded
/// programs and data files, the full commit each engine from source was built at, and its
/// openings file's suite in the order its pairs played it. The clone is submitted with
/// them, so it plays the same engines and openings and needs none of the original files:
/// it works from any machine. A branch in `commit = "main"` stays at the commit the test
/// was built at; a registered version stays that version.
///
/// The flags change the file: `--tc` sets `limits.tc` (the clock) and keeps per-move
/// limits (`nodes`, `depth`, `movetime`) unless `--no-move-limits` drops them; an engine
/// with its own `limits` keeps them (said on stderr). `--preset NAME` applies the preset
/// the test's first engine's version registered (`tourney version add --preset`: clock,
/// per-move limits, threads, bounds, pair budget, priority, weight, book, engine options),
/// else the SPRT bounds the dashboard's form names
/// so (`stc` [0, 2], `ltc` [0.5, 2.5], `nonreg` [-1.75, 0.25], normalized Elo); the other
/// flags change what it sets (`--elo0`/`--elo1` one bound).
/// `--pair-budget` (or `--max-pairs`) is an SPRT's or grouped test's `sprt.max_pairs` or a match's `pairs`. A
/// changed file keeps its keys but not its comments or layout; with no flag (and no
/// openings file) the text is the original. An openings file becomes the suite as played
/// (`format = "positions"`, `order = "sequential"`, no `offset`), sent with the clone.
///
/// With `--print` the file is written to stdout instead, nothing submitted, its engines'
/// commits and data files pinned in it (full hash, sha256); `tourney submit` of it needs
/// its openings file and programs given by path, as for the original.
///
/// Example: `tourney clone 12 --tc 60+0.6 --preset ltc --name "patch LTC"`;
/// `tourney clone 12 --print > again.toml`.
#[derive(Args)]
pub(crate) struct CloneArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament to clone.
    id: u64,
    /// The new clock, `limits.tc` (`60+0.6`, `40/60+0.5`).
    #[arg(long, value_name = "TC", value_parser = clock)]
    tc: Option<String>,
    /// Drop the per-move limits (`limits.nodes`, `depth`, `movetime`), e.g. with `--tc`.
    #[arg(long)]
    no_move_limits: bool,
    /// The new test's name.
    #[arg(long)]
    name: Option<String>,
    /// A preset by name: one the test's first engine's version registered (`tourney
    /// version add --preset`), else SPRT bounds: `stc` [0, 2], `ltc` [0.5, 2.5], `nonreg`
    /// [-1.75, 0.25]. The other flags change what it sets.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
    /// The SPRT's lower bound, `sprt.elo0`.
    #[arg(long, allow_hyphen_values = true)]
    elo0: Option<f64>,
    /// The SPRT's upper bound, `sprt.elo1`.
    #[arg(long, allow_hyphen_values = true)]
    elo1: Option<f64>,
    /// The pair budget: an SPRT's `sprt.max_pairs`, a match's `pairs`.
    #[arg(
        long = "pair-budget",
        visible_alias = "max-pairs",
        value_name = "PAIRS"
    )]
    pair_budget: Option<u64>,
    /// Its priority (higher first).
    #[arg(long, allow_hyphen_values = true)]
    priority: Option<i32>,
    /// Its weight: its share of the workers among tests of its priority.
    #[arg(long)]
    weight: Option<f64>,
    /// Write the changed file to stdout instead of submitting it.
    #[arg(long)]
    print: bool,
}

/// `--tc`: a clock as a tournament file writes it, checked.
fn clock(text: &str) -> Result<String, String> {
    text.parse::<TimeControl>()
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// Preset `name` of a test (`text`, named `file`): the one its first engine's version
/// registered, else the SPRT bounds of that name.
///
/// # Errors
/// Neither has it (the message names both kinds), or the versions cannot be listed.
pub(crate) fn preset_of(
    admin: &mut BlockingAdmin,
    text: &str,
    file: &str,
    name: &str,
) -> Result<Changes> {
    let config = TournamentConfig::parse(text, file)?;
    let line = config.engines.first().and_then(|e| e.version.clone());
    if let Some(line) = &line {
        let versions = admin.list_versions(pb::ListVersionsRequest {})?.versions;
        let spec = (versions.iter().find(|v| &v.name == line)).and_then(|v| v.presets.get(name));
        if let Some(spec) = spec {
            let mut changes =
                preset_changes(spec).map_err(|e| anyhow::anyhow!("--preset {name}: {e}"))?;
            // Built-in players take none of its options.
            changes.players = (versions.iter())
                .filter(|v| !v.player.is_empty())
                .map(|v| v.name.clone())
                .collect();
            return Ok(changes);
        }
    }
    let (elo0, elo1) = bound_preset(name).map_err(|e| {
        let of = line.map_or(String::new(), |l| {
            format!("version '{l}' has no preset '{name}'; ")
        });
        anyhow::anyhow!("--preset: {of}{e}")
    })?;
    Ok(Changes {
        elo0: Some(elo0),
        elo1: Some(elo1),
        ..Changes::default()
    })
}

pub(crate) fn run(args: &CloneArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let id = args.id;
    let got = (admin.get_file(pb::GetFileRequest { id }))
        .with_context(|| format!("tourney clone {id}"))?;
    let mut pins = std::collections::BTreeMap::<String, EngineFacts>::new();
    for (engine, commit) in &got.commits {
        pins.entry(engine.clone()).or_default().commit = Some(commit.clone());
    }
    for f in &got.files {
        let files = &mut pins.entry(f.engine.clone()).or_default().files;
        files.insert(f.name.clone(), f.sha256.clone());
    }
    let preset = match &args.preset {
        Some(name) => preset_of(&mut admin, &got.config, &got.file, name)?,
        None => Changes::default(),
    };
    // A preset's book (an uploaded file) replaces the openings played.
    let book = preset.book.is_some();
    let changes = Changes {
        name: args.name.clone(),
        tc: args.tc.clone(),
        no_move_limits: args.no_move_limits,
        elo0: args.elo0,
        elo1: args.elo1,
        pair_budget: args.pair_budget,
        priority: args.priority,
        weight: args.weight,
        openings_as_played: !args.print && !book && !got.openings.is_empty(),
        pins: if args.print { pins } else { Default::default() },
        ..Changes::default()
    }
    .over(preset);
    let (text, notes) = follow_up(&got.config, &got.file, &changes)
        .map_err(|e| anyhow::anyhow!("tourney clone {id}: {e}"))?;
    for note in notes {
        eprintln!("note: {note}");
    }
    if args.print {
        print!("{text}");
        return Ok(ExitCode::SUCCESS);
    }
    let request = pb::SubmitRequest {
        config: text,
        file: got.file.clone(),
        openings: if book { String::new() } else { got.openings },
        artifacts: got.artifacts,
        files: got.files,
        commits: got.commits,
    };
    let reply = admin.submit(request)?;
    for warning in &reply.warnings {
        eprintln!("warning: {}: {warning}", got.file);
    }
    println!("{}", reply.id);
    Ok(ExitCode::SUCCESS)
}
