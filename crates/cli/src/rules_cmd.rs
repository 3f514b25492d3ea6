//! `tourney perft` and `tourney legal`: the rules core on the command line.

use std::io::{BufRead, Write};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_rules::{GameKind, Position, perft, perft_divide, with_position};

/// Arguments of `tourney perft`.
#[derive(Args)]
pub(crate) struct PerftArgs {
    /// The game: `loa` or `amazons`.
    game: GameKind,
    /// Plies to count (one Amazons ply is a whole turn: move plus arrow).
    depth: u32,
    /// Position string to start from (default: the start position),
    /// e.g. "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b".
    #[arg(long)]
    position: Option<String>,
    /// Also print each legal move with the count below it.
    #[arg(long)]
    divide: bool,
}

/// Arguments of `tourney legal`.
#[derive(Args)]
pub(crate) struct LegalArgs {
    /// The game: `loa` or `amazons`.
    game: GameKind,
    /// Position string; without it, position strings are read from stdin, one per line.
    position: Option<String>,
}

fn parse_position<P: Position>(text: &str) -> Result<P> {
    text.parse::<P>()
        .with_context(|| format!("invalid {} position '{text}'", P::GAME))
}

pub(crate) fn run_perft_command(args: &PerftArgs) -> Result<()> {
    with_position!(args.game, P => run_perft::<P>(args))
}

fn run_perft<P: Position>(args: &PerftArgs) -> Result<()> {
    let position: P = match &args.position {
        Some(text) => parse_position(text)?,
        None => P::start(),
    };
    let started = Instant::now();
    let nodes = if args.divide {
        let mut out = std::io::stdout().lock();
        let mut total = 0;
        for (mv, n) in perft_divide(&position, args.depth) {
            writeln!(out, "{mv}: {n}")?;
            total += n;
        }
        if args.depth == 0 { 1 } else { total }
    } else {
        perft(&position, args.depth)
    };
    let seconds = started.elapsed().as_secs_f64();
    println!("{nodes}");
    eprintln!(
        "perft({}) of {} in {seconds:.3} s: {:.1} M leaves/s",
        args.depth,
        P::GAME,
        nodes as f64 / seconds.max(1e-9) / 1e6
    );
    Ok(())
}

/// The legal moves of `position` as one line: sorted, separated by single spaces.
fn legal_line<P: Position>(position: &P) -> String {
    let mut moves: Vec<String> = position
        .legal_moves()
        .iter()
        .map(ToString::to_string)
        .collect();
    moves.sort_unstable();
    moves.join(" ")
}

pub(crate) fn run_legal_command(args: &LegalArgs) -> Result<()> {
    with_position!(args.game, P => run_legal::<P>(args))
}

fn run_legal<P: Position>(args: &LegalArgs) -> Result<()> {
    if let Some(text) = &args.position {
        println!("{}", legal_line(&parse_position::<P>(text)?));
        return Ok(());
    }
    let stdin = std::io::stdin().lock();
    let mut out = std::io::stdout().lock();
    for (n, line) in stdin.lines().enumerate() {
        let line = line.context("reading stdin")?;
        let text = line.trim_end_matches('\r');
        if text.trim().is_empty() {
            bail!(
                "stdin line {}: empty line, expected a position string",
                n + 1
            );
        }
        let position =
            parse_position::<P>(text).with_context(|| format!("stdin line {}", n + 1))?;
        writeln!(out, "{}", legal_line(&position))?;
        out.flush()?;
    }
    Ok(())
}
