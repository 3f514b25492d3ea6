//! `tourney legal`: the legal moves of positions, one line each.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_rules::{GameKind, Position, with_position};

use crate::support::parse_position;

/// Print the legal moves of positions, one line per position.
///
/// With a position string, prints its legal moves on one line, sorted, separated by single
/// spaces (`pass` for a forced LOA pass, an empty line for a finished game). Without one,
/// reads position strings from stdin, one per line, answers each with one line, and stops
/// with an error naming the line and column at the first malformed one.
///
/// Example: `echo "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b" | tourney legal loa`.
#[derive(Args)]
pub(crate) struct LegalArgs {
    /// The game: `loa` or `amazons`.
    game: GameKind,
    /// Position string; without it, position strings are read from stdin, one per line.
    position: Option<String>,
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

pub(crate) fn run(args: &LegalArgs) -> Result<ExitCode> {
    with_position!(args.game, P => run_legal::<P>(args))?;
    Ok(ExitCode::SUCCESS)
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
