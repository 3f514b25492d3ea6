//! `tourney perft`: counts move sequences, to check a move generator.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use tourney_rules::{GameKind, Position, perft, perft_divide, with_position};

use crate::support::parse_position;

/// Count move sequences of a given depth (checks a move generator).
///
/// Counts the move sequences of `depth` plies from the start position, or from
/// `--position`. The count is the last line of stdout; the time and leaves/s go to stderr.
/// `--divide` first prints each legal move with the count below it.
///
/// Example: `tourney perft loa 5` prints 55963132; `tourney perft amazons 2 --position
/// "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w"`.
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

pub(crate) fn run(args: &PerftArgs) -> Result<ExitCode> {
    with_position!(args.game, P => run_perft::<P>(args))?;
    Ok(ExitCode::SUCCESS)
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
