//! `tourney version add|list|show`: registered engine versions.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::client::program_path;
use crate::support::command_files::engine_files;
use crate::support::local::AdminTarget;

/// Register engine versions, list them, and show one (`tourney version add|list|show`).
///
/// A version names what an engine is: a built-in player spec (its weights and seed
/// included), an outside program (uploaded, known by its sha256), or a commit of a git
/// repository that every worker builds for itself, with its options, data files and bench
/// signature, and optionally the version it was made from. Tournament files then say
/// `version = "NAME"`, and the timeline rates it across tournaments. A program or data
/// file given as a path may lie anywhere (it is given on the command line) and is
/// uploaded. See docs/versions.md.
#[derive(Args)]
pub(crate) struct VersionArgs {
    #[command(subcommand)]
    action: VersionAction,
}

#[derive(Subcommand)]
enum VersionAction {
    /// Register a version: a built-in player spec, an outside engine's command, or a
    /// source to build.
    ///
    /// A program given as a path is uploaded, with its options, and the files the command
    /// names after it (a script), as `submit` uploads a tournament's. A version that has
    /// played never changes (`--replace` works only before): register the changed engine
    /// under a new name, with `--parent` saying where it came from.
    ///
    /// From source, `--commit` (a branch, tag or hash) is resolved to its full hash here,
    /// and that is what is stored: every worker fetches that commit, runs `--build` in the
    /// checkout, and plays the program at `--binary`.
    ///
    /// Examples: `tourney version add ab-v2 --player ab:connectedness=80 --parent ab-v1`;
    /// `tourney version add mine-17 --command "./build/engine --uci" --option Hash=64`;
    /// `tourney version add mine-18 --git https://github.com/me/engine --commit main
    /// --build "make -j" --binary build/engine --file nn.bin=nets/nn.bin --parent mine-17
    /// --pool nightly` (registered, then rated in the running pool `nightly`).
    Add(Box<AddArgs>),
    /// List the registered versions, oldest first.
    List(ListArgs),
    /// Show one version: what it is, its bench signature, and each worker's last build and
    /// bench of it (or why it could not play there: a failed build's log, a bench
    /// mismatch).
    Show(ShowArgs),
}

#[derive(Args)]
struct AddArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// Its name, as tournament files (`version = "NAME"`) and the timeline call it.
    name: String,
    /// A built-in player spec (`ab:depth=6,connectedness=80`).
    #[arg(long, conflicts_with_all = ["command", "git"], required_unless_present_any = ["command", "git"])]
    player: Option<String>,
    /// An outside engine's command line; a program given as a path is uploaded, and so
    /// are the files it names after the program under the working directory (a script:
    /// `python3 engines/bot.py`, which must be there), placed at the same path in the
    /// engine's directory on each worker.
    #[arg(long, conflicts_with = "git")]
    command: Option<String>,
    /// Where workers fetch the program instead of uploading it (an object store or CDN;
    /// http:// or https://), with --sha256: the command's first word is then only its
    /// name. Workers refuse what does not hash to --sha256.
    #[arg(long, value_name = "URL", requires_all = ["command", "sha256"])]
    program_url: Option<String>,
    /// The sha256 of the program at --program-url (64 hex digits; `sha256sum` prints it).
    #[arg(long, value_name = "HEX", requires = "program_url")]
    sha256: Option<String>,
    /// An engine built from source: its git repository (https://, ssh://, git://, file://).
    #[arg(long, value_name = "URL", requires_all = ["commit", "build", "binary"])]
    git: Option<String>,
    /// The commit to build: a branch, tag or hash, resolved to the full hash now.
    #[arg(long, value_name = "REV", requires = "git")]
    commit: Option<String>,
    /// The build command, run by `sh -c` in the checkout on each worker.
    #[arg(long, value_name = "CMD", requires = "git")]
    build: Option<String>,
    /// The built program's path in the checkout.
    #[arg(long, value_name = "PATH", requires = "git")]
    binary: Option<String>,
    /// The protocol the outside engine speaks: tourney (the default), ugi, uci, codingame or gtp (`gtp:first=white`).
    #[arg(long, value_name = "PROTOCOL")]
    protocol: Option<String>,
    /// A `setoption` value of the outside engine (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = option_pair)]
    options: Vec<(String, String)>,
    /// A data file (a network, a book) placed in the engine's working directory as NAME
    /// (repeatable); uploaded, fetched once per worker host.
    #[arg(long = "file", value_name = "NAME=PATH", value_parser = option_pair)]
    files: Vec<(String, String)>,
    /// The expected bench signature (the nodes of the engine's `bench`); left out, the
    /// first worker's count is taken. A worker that counts another refuses the engine.
    #[arg(long, value_name = "NODES")]
    bench: Option<u64>,
    /// The version it was made from.
    #[arg(long)]
    parent: Option<String>,
    /// What changed.
    #[arg(long, default_value = "")]
    note: String,
    /// Replace a version of this name that has not played yet.
    #[arg(long)]
    replace: bool,
    /// A preset of its line, NAME=KEY:VALUE,... (repeatable): what `tourney clone --preset
    /// NAME`, `submit --preset NAME` and the dashboard's form set in a test whose first
    /// engine is this version: tc, nodes, depth, movetime, threads, elo0, elo1, max_pairs,
    /// priority, weight, book (an openings file's path, uploaded here, or the sha256 of
    /// one uploaded before) with book_format (positions, moves, pgn) and book_order
    /// (sequential, random), and option.NAME (an option of every outside engine of the
    /// test): `--preset ltc=tc:60+0.6,elo0:0.5,elo1:2.5,option.Hash:64,book:uho.epd`.
    #[arg(long = "preset", value_name = "NAME=KEY:VALUE,...", value_parser = preset_pair)]
    presets: Vec<(String, String)>,
    /// Once registered, add it to this rating pool (its id, or its name), as `tourney pool
    /// add` does (repeatable).
    #[arg(long = "pool", value_name = "POOL")]
    pools: Vec<String>,
}

/// `NAME=KEY:VALUE,...`, checked (a book given by path as if uploaded).
fn preset_pair(text: &str) -> Result<(String, String), String> {
    let (name, spec) = option_pair(text)?;
    let checked = match book_path(&spec) {
        Some(_) => with_book(&spec, &"0".repeat(64)),
        None => spec.clone(),
    };
    tourney_model::tournament::followup::preset_changes(&checked)?;
    Ok((name, spec))
}

/// The book of preset `spec` when it is given by path (`book:books/8moves.txt`), not by
/// the sha256 of a file uploaded before.
fn book_path(spec: &str) -> Option<&str> {
    (spec.split(',').filter_map(|pair| pair.split_once(':')))
        .find(|(key, _)| key.trim() == "book")
        .map(|(_, value)| value.trim())
        .filter(|value| !tourney_model::source::is_sha256(value))
}

/// Preset `spec` with its book named by `sha256`.
fn with_book(spec: &str, sha256: &str) -> String {
    (spec.split(','))
        .map(|pair| match pair.split_once(':') {
            Some((key, _)) if key.trim() == "book" => format!("book:{sha256}"),
            _ => pair.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[derive(Args)]
struct ShowArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The version.
    name: String,
    /// JSON for scripts.
    #[arg(long)]
    json: bool,
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

pub(crate) fn run(args: &VersionArgs) -> Result<ExitCode> {
    match &args.action {
        VersionAction::Add(a) => add(a)?,
        VersionAction::List(l) => list(l)?,
        VersionAction::Show(s) => show(s)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn add(args: &AddArgs) -> Result<()> {
    let program = (args.command.as_deref())
        .filter(|_| args.program_url.is_none())
        .and_then(program_path);
    if let Some(program) = &program {
        // Given here on the command line, it may be anywhere; it must be a program.
        crate::support::client::executable(Path::new(program)).context("--command")?;
    }
    if args.player.is_some() && (!args.options.is_empty() || !args.files.is_empty()) {
        anyhow::bail!("--option and --file are for outside engines (--command or --git)");
    }
    // The files the command names after its program (a script), under the working
    // directory, go with it as a tournament's engines' do with theirs.
    let named: std::collections::BTreeMap<String, String> = args.files.iter().cloned().collect();
    let script_files = match &args.command {
        Some(command) => engine_files(Path::new(""), "the working directory", command, &named)
            .context("--command")?,
        None => Vec::new(),
    };
    let source = match (&args.git, &args.commit, &args.build, &args.binary) {
        (Some(git), Some(rev), Some(build), Some(binary)) => Some(pb::Source {
            git: git.clone(),
            commit: crate::support::git::resolve_commit(git, rev).context("--commit")?,
            build: build.clone(),
            binary: binary.clone(),
        }),
        _ => None,
    };
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let mut artifact = String::new();
    if let Some(program) = program {
        artifact = admin.upload(Path::new(&program))?;
    }
    if let (Some(url), Some(sha)) = (&args.program_url, &args.sha256) {
        admin
            .link_artifact(pb::LinkArtifactRequest {
                sha256: sha.to_ascii_lowercase(),
                url: url.clone(),
            })
            .context("--program-url")?;
        artifact = sha.to_ascii_lowercase();
    }
    let (mut files, presets) = upload_files_and_books(&mut admin, args)?;
    for (name, path) in script_files {
        let sha = (admin.upload(&path)).with_context(|| format!("--command: {name}"))?;
        files.insert(name, sha);
    }
    if let Some(s) = &source {
        eprintln!(
            "{} at {}: commit {}",
            s.git,
            args.commit.as_deref().unwrap_or_default(),
            s.commit
        );
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
        source,
        files,
        bench: args.bench,
        checks: Vec::new(),
        protocol: args.protocol.clone().unwrap_or_default(),
        presets,
    };
    admin.add_version(pb::AddVersionRequest {
        version: Some(version),
        replace: args.replace,
    })?;
    println!("version {} registered", args.name);
    for pool in &args.pools {
        super::pool::add_to(&mut admin, pool, std::slice::from_ref(&args.name))
            .with_context(|| format!("--pool {pool}"))?;
    }
    Ok(())
}

/// The `--file`s uploaded, by name, and the `--preset`s with a book given by path
/// uploaded and named by its sha256.
fn upload_files_and_books(
    admin: &mut BlockingAdmin,
    args: &AddArgs,
) -> Result<(
    std::collections::HashMap<String, String>,
    std::collections::HashMap<String, String>,
)> {
    let mut files = std::collections::HashMap::new();
    for (name, path) in &args.files {
        let sha =
            (admin.upload(Path::new(path))).with_context(|| format!("--file {name}={path}"))?;
        files.insert(name.clone(), sha);
    }
    let mut presets = std::collections::HashMap::new();
    for (name, spec) in &args.presets {
        // A book given by path is uploaded, and named by its sha256.
        let spec = match book_path(spec) {
            Some(path) => {
                let sha = (admin.upload(Path::new(path)))
                    .with_context(|| format!("--preset {name}: book {path}"))?;
                with_book(spec, &sha)
            }
            None => spec.clone(),
        };
        presets.insert(name.clone(), spec);
    }
    Ok((files, presets))
}

/// Every registered version, with its workers' checks.
fn versions(client: &AdminTarget) -> Result<Vec<pb::EngineVersion>> {
    let mut admin = BlockingAdmin::connect(client)?;
    Ok(admin.list_versions(pb::ListVersionsRequest {})?.versions)
}

fn list(args: &ListArgs) -> Result<()> {
    let versions = versions(&args.client)?;
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

fn show(args: &ShowArgs) -> Result<()> {
    let versions = versions(&args.client)?;
    let Some(v) = versions.into_iter().find(|v| v.name == args.name) else {
        anyhow::bail!("no version '{}' (see `tourney version list`)", args.name);
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&version_json(&v))?);
        return Ok(());
    }
    let model = tourney_model::version::EngineVersion::from(v.clone());
    say!("version    {}", v.name);
    say!("plays      {}", model.describe());
    if let Some(s) = &v.source {
        say!("source     {} at {}", s.git, s.commit);
        say!("build      {}  (program {})", s.build, s.binary);
    }
    for (name, sha) in &v.files {
        say!("file       {name}  sha256 {sha}");
    }
    say!(
        "bench      {}",
        v.bench.map_or(
            "none yet (taken from the first worker that measures it)".into(),
            |n| format!("{n} nodes")
        )
    );
    for (name, spec) in &v.presets {
        say!("preset     {name}: {spec}");
    }
    if !v.parent.is_empty() {
        say!("parent     {}", v.parent);
    }
    if !v.note.is_empty() {
        say!("note       {}", v.note);
    }
    say!(
        "registered {}",
        tourney_model::Utc::from_unix_ms(v.created_ms).clock()
    );
    if v.checks.is_empty() {
        say!("workers    none has checked it yet");
        return Ok(());
    }
    say!("");
    say!(
        "{:<24} {:>11} {:>12} {:>10} {:>6}  result",
        "worker",
        "bench",
        "nps",
        "build",
        "tourn"
    );
    for c in &v.checks {
        let bench = c.bench_nodes.map_or("-".into(), |n| n.to_string());
        let build = match c.build_ms {
            0 => "-".to_string(),
            ms => format!("{:.1} s", ms as f64 / 1000.0),
        };
        let result = if c.problem.is_empty() {
            "ok"
        } else {
            "refused"
        };
        say!(
            "{:<24} {:>11} {:>12} {:>10} {:>6}  {result}",
            c.worker,
            bench,
            c.bench_nps,
            build,
            c.tournament
        );
        if !c.problem.is_empty() {
            for line in c.problem.lines() {
                say!("    {line}");
            }
        }
    }
    Ok(())
}

/// A version with its checks, for `--json`.
fn version_json(v: &pb::EngineVersion) -> serde_json::Value {
    let mut value = serde_json::to_value(tourney_model::version::EngineVersion::from(v.clone()))
        .unwrap_or_default();
    value["checks"] = v
        .checks
        .iter()
        .map(|c| {
            serde_json::json!({
                "worker": c.worker,
                "at_ms": c.at_ms,
                "tournament": c.tournament,
                "bench_nodes": c.bench_nodes,
                "bench_nps": c.bench_nps,
                "build_ms": c.build_ms,
                "problem": c.problem,
            })
        })
        .collect();
    value
}
