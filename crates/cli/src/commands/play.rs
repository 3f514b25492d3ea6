//! `tourney play`: one game between two players, shown as it goes, and its record.

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use tourney_ai::Heuristics;
use tourney_model::TimeControl;
use tourney_model::job::GameSettings;
use tourney_rules::with_position;
use tourney_rules::{Game, GameKind, Position};
use tourney_runner::{Adjudicate, BuiltIn, Contestant, Seat, Setup, play as referee_play};

use crate::support::engines::{own_engine, until_stopped};

/// Play one game between two players and print its record.
///
/// Shows the board on stderr as it goes and prints the PGN-style record (or `--json`). A
/// player is a built-in spec (`ab:depth=6`, `mcts:c=0.7`, `random:seed=7`) or an outside
/// engine as `cmd:<command line>` (`cmd:python3 my_engine.py --fast`). `--seed` replays a
/// tournament game (its `meta.seed`). Ctrl-C (or SIGTERM) ends an outside engine with
/// whatever it started and exits 130.
///
/// Example: `tourney play --game loa --white ab:depth=4 --black mcts --tc 10+0.1`.
#[derive(Args, Clone)]
pub(crate) struct PlayArgs {
    /// The game: `loa` or `amazons`.
    #[arg(long)]
    game: GameKind,
    /// The white player: a built-in spec or `cmd:<command line>`.
    #[arg(long)]
    white: String,
    /// The black player.
    #[arg(long)]
    black: String,
    /// Time control: `40/60+0.5` (40 moves in 60 s, 0.5 s increment), `10+0.1`, or `inf`.
    #[arg(long, default_value = "inf")]
    tc: TimeControl,
    /// Nodes per move.
    #[arg(long)]
    nodes: Option<u64>,
    /// Depth per move.
    #[arg(long)]
    depth: Option<u32>,
    /// Milliseconds per move.
    #[arg(long)]
    movetime: Option<u64>,
    /// Rule options, e.g. `double-connection=draw`.
    #[arg(long, default_value = "")]
    rules: String,
    /// Start from a position string, optionally followed by `moves m1 m2 ...`, or from
    /// moves alone (from the start position).
    #[arg(long)]
    opening: Option<String>,
    /// Draw when this many plies have been played.
    #[arg(long)]
    max_plies: Option<u32>,
    /// Amazons: decide the game once the board is split into regions of one side each.
    #[arg(long)]
    adjudicate: bool,
    /// Extra time (ms) over the clock before a time forfeit.
    #[arg(long, default_value_t = 100)]
    margin: u64,
    /// Do not show the board as the game goes.
    #[arg(long)]
    quiet: bool,
    /// Print the JSON record instead of the PGN-style one.
    #[arg(long)]
    json: bool,
    /// The game's seed, mixed into seeded players' own (0: their own alone). A tournament
    /// game replays with the `seed` of its record's `meta`, its start position and limits.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// The board of a position string as a diagram (ranks top down, files a.. across).
fn diagram(position: &str) -> String {
    let (board, side) = position.split_once(' ').unwrap_or((position, ""));
    let ranks: Vec<&str> = board.split('/').collect();
    let n = ranks.len();
    let mut out = String::new();
    for (i, rank) in ranks.iter().enumerate() {
        let mut row = String::new();
        let mut digits = String::new();
        for c in rank.chars() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            if !digits.is_empty() {
                row.push_str(&" .".repeat(digits.parse().unwrap_or(0)));
                digits.clear();
            }
            row.push(' ');
            row.push(c);
        }
        if !digits.is_empty() {
            row.push_str(&" .".repeat(digits.parse().unwrap_or(0)));
        }
        out.push_str(&format!("{:>2} {row}\n", n - i));
    }
    let files: String = (0..n)
        .map(|f| format!(" {}", (b'a' + f as u8) as char))
        .collect();
    out.push_str(&format!("   {files}   ({side} to move)\n"));
    out
}

/// Parses `--opening`: a position string with optional `moves ...`, or moves alone.
fn opening<P: Position>(text: &str) -> Result<(P, Vec<P::Move>)> {
    let (start_text, moves_text) = match text.split_once("moves") {
        Some((s, m)) => (s.trim(), m.trim()),
        None if text.contains('/') => (text.trim(), ""),
        None => ("", text.trim()),
    };
    let start: P = if start_text.is_empty() {
        P::start()
    } else {
        start_text
            .parse()
            .with_context(|| format!("opening position '{start_text}'"))?
    };
    let mut game = Game::new(start, Default::default());
    let mut moves = Vec::new();
    for mv in moves_text.split_whitespace() {
        moves.push(
            game.play_text(mv)
                .with_context(|| format!("opening move '{mv}'"))?,
        );
    }
    Ok((start, moves))
}

/// A contestant from `--white`/`--black`.
fn contestant<P: Heuristics>(spec: &str) -> Result<Box<dyn Contestant<P>>> {
    match spec.strip_prefix("cmd:") {
        Some(command) => Ok(Box::new(own_engine(
            command,
            Default::default(),
            Vec::new(),
        ))),
        None => Ok(Box::new(
            BuiltIn::<P>::new(spec)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("player '{spec}'"))?,
        )),
    }
}

pub(crate) fn run(args: &PlayArgs) -> Result<ExitCode> {
    let args = args.clone();
    until_stopped(move || with_position!(args.game, P => play_game::<P>(&args)))?;
    Ok(ExitCode::SUCCESS)
}

fn play_game<P: Heuristics + Adjudicate>(args: &PlayArgs) -> Result<()> {
    let settings = GameSettings {
        tournament_name: String::new(),
        game: args.game,
        rules: args.rules.clone(),
        time_control: args.tc,
        nodes: args.nodes,
        depth: args.depth,
        movetime_ms: args.movetime,
        max_plies: args.max_plies,
        adjudicate: args.adjudicate,
        margin_ms: args.margin,
        engine_limits: Default::default(),
        engine_logs: Default::default(),
        engine_openings: false,
        scale_by_speed: false,
        score_rules: Default::default(),
    };
    let mut setup = Setup::<P>::from_settings(&settings)
        .map_err(anyhow::Error::msg)
        .context("--rules")?;
    if let Some(text) = &args.opening {
        (setup.start, setup.opening) = opening::<P>(text)?;
    }
    setup.seed = args.seed;
    let mut white = contestant::<P>(&args.white)?;
    let mut black = contestant::<P>(&args.black)?;
    let quiet = args.quiet;
    if !quiet {
        eprint!("{}", diagram(&setup.start.to_string()));
    }
    let mut show = |game: &Game<P>| {
        if !quiet {
            let last = game
                .moves()
                .last()
                .map(ToString::to_string)
                .unwrap_or_default();
            eprintln!("\n{}. {last}", game.ply());
            eprint!("{}", diagram(&game.position().to_string()));
        }
    };
    let record = referee_play(
        &setup,
        Seat {
            name: args.white.clone(),
            player: white.as_mut(),
        },
        Seat {
            name: args.black.clone(),
            player: black.as_mut(),
        },
        &mut show,
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&record)?);
    } else {
        print!("{}", record.to_pgn());
    }
    Ok(())
}
