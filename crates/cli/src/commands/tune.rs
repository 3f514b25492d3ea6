//! `tourney tune texel`: a built-in player's evaluation weights fitted to a data set.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use tourney_ai::{Heuristics, PlayerSpec};
use tourney_dataset::record::Packing;
use tourney_rules::{Amazons, GameKind, Loa};
use tourney_texel::{Settings, Split};

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;

/// Tune a built-in player's evaluation from data (docs/tuning.md says when to use which).
#[derive(Args)]
pub(crate) struct TuneArgs {
    #[command(subcommand)]
    command: TuneCommand,
}

#[derive(Subcommand)]
enum TuneCommand {
    Texel(TexelArgs),
}

/// Texel tuning: fit evaluation weights so that a logistic of the evaluation predicts
/// each position's game result.
///
/// Reads data files (`tourney data export ID -o FILE`, or the run's directory on the
/// coordinator, `DATA/positions/ID`), splits the positions by game into a training and a
/// held-out part, finds the logistic's scale K for the player's weights (`--k auto`), and
/// fits the weights named by `--params` (default: all but the first, which sets the
/// evaluation's scale) by full-batch Adam over all positions on `--threads` threads. Each
/// iteration prints the loss on both parts; the weights kept are those of the lowest
/// held-out loss. It ends with the tuned spec, and with `--verify FILE` writes an SPRT of
/// the tuned against the untuned player (`--submit` submits it); a fit that kept the start
/// weights says so, and with `--verify` is an error with no SPRT written.
///
/// Example: `tourney tune texel loa.bin --player ab --params centralisation,quads
/// --verify verify.toml --submit --coordinator http://coord:50051`.
#[derive(Args)]
struct TexelArgs {
    /// Data files, or directories of them (their `*.bin`, in name order).
    #[arg(required = true, value_name = "DATA")]
    files: Vec<PathBuf>,
    /// The built-in player whose evaluation is tuned (`ab`, `ab:depth=6,quads=20`): its
    /// weights are where the fit starts.
    #[arg(long, value_name = "SPEC")]
    player: String,
    /// The weights to fit, comma-separated (default: all but the game's first).
    #[arg(long, value_delimiter = ',', value_name = "A,B,C")]
    params: Vec<String>,
    /// The logistic's scale: `auto` fits it to the player's weights first.
    #[arg(long, default_value = "auto", value_name = "auto|K")]
    k: String,
    /// The target's share of the engine's score, 0 to 1: `λ·σ(K·score) + (1−λ)·result`
    /// (0: results alone, classic Texel, which rarely improves weights tuned for play).
    #[arg(long, default_value_t = 0.7)]
    lambda: f64,
    /// Passes over the data.
    #[arg(long, default_value_t = 200)]
    iterations: u32,
    /// Adam's step, in weight units.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// The share of games held out to measure the fit, 0 to 0.9.
    #[arg(long, default_value_t = 0.1)]
    holdout: f64,
    /// Threads (default: the cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Read at most this many positions (each takes 4 bytes a weight in memory).
    #[arg(long, default_value_t = 20_000_000)]
    max_positions: u64,
    /// Write an SPRT tournament file of the tuned player against the untuned one here.
    #[arg(long, value_name = "FILE")]
    verify: Option<PathBuf>,
    /// The SPRT's bounds, `ELO0,ELO1`.
    #[arg(long, default_value = "0,5", value_name = "ELO0,ELO1")]
    verify_bounds: String,
    /// The SPRT's nodes a move.
    #[arg(long, default_value_t = 20_000)]
    verify_nodes: u64,
    /// Submit the verification SPRT (--verify) to the coordinator.
    #[arg(long, requires = "verify")]
    submit: bool,
    #[command(flatten)]
    client: AdminTarget,
}

pub(crate) fn run(args: &TuneArgs) -> Result<ExitCode> {
    let TuneCommand::Texel(args) = &args.command;
    let files = data_files(&args.files)?;
    let game = first_game(&files)?;
    let (tuned, start) = match game {
        GameKind::Loa => texel::<Loa>(args, &files)?,
        GameKind::Amazons => texel::<Amazons>(args, &files)?,
    };
    println!("tuned    {tuned}");
    if tuned == start {
        // Nothing to verify: an SPRT of a player against itself would run to its limit
        // for nothing, and a script submitting the file would not notice.
        let why = "the fit kept the start weights (no pass lowered the held-out loss \
                   enough to change a weight); try a larger --lambda, more data, other \
                   --params or a larger --rate";
        match &args.verify {
            Some(path) => bail!(
                "{why}: no verification SPRT written to {}, it would play the player \
                 against itself",
                path.display()
            ),
            None => eprintln!("warning: {why}"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &args.verify {
        let text = verification(args, game, &tuned, &start)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
        println!("verify   {} (tourney submit {0})", path.display());
        if args.submit {
            let id = BlockingAdmin::connect(&args.client)?.submit_file(path, None)?;
            println!("submitted {id}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The data files named: files as given, directories by their `*.bin` in name order.
fn data_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("listing {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "bin"))
                .collect();
            if found.is_empty() {
                bail!("{}: no data files (*.bin) in it", path.display());
            }
            found.sort();
            out.extend(found);
        } else {
            out.push(path.clone());
        }
    }
    Ok(out)
}

/// Reads each file's records in order, at most `most` in all.
fn each_record(
    files: &[PathBuf],
    most: u64,
    mut each: impl FnMut(&Path, tourney_dataset::Record) -> std::io::Result<()>,
) -> Result<()> {
    let mut left = most;
    for path in files {
        let file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let read = tourney_dataset::read_records(std::io::BufReader::new(file), |r| {
            if left == 0 {
                return Err(std::io::Error::other(Full));
            }
            left -= 1;
            each(path, r)
        });
        match read {
            Ok(_) => {}
            Err(tourney_dataset::FileError::Io(e))
                if e.get_ref().is_some_and(|e| e.is::<Full>()) =>
            {
                return Ok(());
            }
            Err(e) => bail!("{}: {e}", path.display()),
        }
    }
    Ok(())
}

/// Reading stopped at the most positions wanted.
#[derive(Debug)]
struct Full;

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("enough positions")
    }
}

impl std::error::Error for Full {}

/// The game of the data's first record.
fn first_game(files: &[PathBuf]) -> Result<GameKind> {
    let mut game = None;
    each_record(&files[..1], 1, |_, r| {
        game = Some(r.game);
        Ok(())
    })?;
    game.with_context(|| format!("{}: no positions in it", files[0].display()))
}

/// The indices of the weights `--params` names (all but the first by default).
fn tuned_weights<P: Heuristics>(params: &[String]) -> Result<Vec<usize>> {
    if params.is_empty() {
        return Ok((1..P::WEIGHTS.len()).collect());
    }
    (params.iter())
        .map(|name| {
            P::WEIGHTS.iter().position(|w| w == name).with_context(|| {
                format!(
                    "--params: {name} is not a weight of {} (its weights: {})",
                    P::GAME,
                    P::WEIGHTS.join(", ")
                )
            })
        })
        .collect()
}

/// `--k` given as a number: a positive one.
fn given_k(text: &str) -> Result<f64> {
    (text.parse::<f64>().ok())
        .filter(|k| *k > 0.0 && k.is_finite())
        .with_context(|| format!("--k: auto or a positive number, not '{text}'"))
}

/// Fits `P`'s weights; the tuned spec and the start spec.
fn texel<P: Heuristics + Packing>(args: &TexelArgs, files: &[PathBuf]) -> Result<(String, String)> {
    let spec: PlayerSpec = args.player.parse().map_err(anyhow::Error::msg)?;
    spec.build::<P>()
        .map_err(|e| anyhow::anyhow!("--player {}: {e}", args.player))?;
    let start: Vec<f64> = (spec.weights::<P>().map_err(anyhow::Error::msg)?)
        .into_iter()
        .map(f64::from)
        .collect();
    let tuned = tuned_weights::<P>(&args.params)?;
    if !(0.0..=0.9).contains(&args.holdout) {
        bail!("--holdout: a share from 0 to 0.9, not {}", args.holdout);
    }
    if !(0.0..=1.0).contains(&args.lambda) {
        bail!("--lambda: a share from 0 to 1, not {}", args.lambda);
    }
    let mut split = Split::new(args.holdout);
    each_record(files, args.max_positions, |path, r| {
        split
            .push::<P>(&r)
            .map_err(|e| std::io::Error::other(format!("{}: {e}", path.display())))
    })?;
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    if split.train.is_empty() {
        bail!("no positions to fit on (all held out, or none read)");
    }
    let k = match args.k.as_str() {
        "auto" => tourney_texel::fit_k(&split.train, &start, threads),
        text => given_k(text)?,
    };
    println!(
        "data     {} positions: {} to fit, {} held out; K {k:.4}; tuning {}",
        split.train.len() + split.test.len(),
        split.train.len(),
        split.test.len(),
        tuned
            .iter()
            .map(|&i| P::WEIGHTS[i])
            .collect::<Vec<_>>()
            .join(", ")
    );
    let settings = Settings {
        tuned,
        k,
        lambda: args.lambda,
        iterations: args.iterations,
        rate: args.rate,
        threads,
    };
    // Each pass reports the losses of the weights it starts from: those after the pass
    // before, the numbering the kept weights are named by.
    let fit = tourney_texel::tune(&split, &start, &settings, |i| {
        println!(
            "after {:>3}  train {:.6}  held-out {:.6}",
            i.iteration - 1,
            i.train,
            i.test
        );
    });
    println!(
        "kept     the weights after iteration {} (loss {:.6})",
        fit.after, fit.loss
    );
    let fitted = fit.weights;
    let values: Vec<(&str, i64)> = (P::WEIGHTS.iter().zip(&fitted))
        .map(|(&name, &w)| (name, w.round() as i64))
        .collect();
    for (name, (from, to)) in P::WEIGHTS.iter().zip(start.iter().zip(&fitted)) {
        println!("weight   {name:<16} {from:>6} -> {:>6}", to.round());
    }
    let untuned: Vec<(&str, i64)> = (P::WEIGHTS.iter().zip(&start))
        .map(|(&name, &w)| (name, w as i64))
        .collect();
    Ok((
        tourney_model::spsa::spec_with(&args.player, &values),
        tourney_model::spsa::spec_with(&args.player, &untuned),
    ))
}

/// The verification SPRT's tournament file: tuned against untuned.
fn verification(args: &TexelArgs, game: GameKind, tuned: &str, start: &str) -> Result<String> {
    let (elo0, elo1) = (args.verify_bounds.split_once(','))
        .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
        .with_context(|| {
            format!(
                "--verify-bounds: ELO0,ELO1 such as 0,5, not '{}'",
                args.verify_bounds
            )
        })?;
    // A JSON string is a TOML basic string.
    let quote = |s: &str| serde_json::Value::String(s.to_string()).to_string();
    Ok(format!(
        "# Written by tourney tune texel: the tuned player against its start.\n\
         name = {name}\ngame = \"{game}\"\nformat = \"sprt\"\n\
         sprt = {{ elo0 = {elo0:?}, elo1 = {elo1:?} }}\n\
         openings = {{ plies = 4, seed = 1 }}\nlimits = {{ nodes = {nodes} }}\n\
         adjudication = {{ max_plies = 300 }}\n\n\
         [[engine]]\nname = \"tuned\"\nplayer = {tuned}\n\n\
         [[engine]]\nname = \"start\"\nplayer = {start}\n",
        // Names are at most 100 characters: the specs are in the engines.
        name = quote(&format!("texel-{game}-verify")),
        nodes = args.verify_nodes,
        tuned = quote(tuned),
        start = quote(start),
    ))
}
