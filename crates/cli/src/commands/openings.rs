//! `tourney openings`: opening suites, generated or taken from the games that played balanced.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_model::opening;
use tourney_plan::openings::{OpeningSettings, generate};
use tourney_report::OpeningResult;
use tourney_rules::GameKind;
use tourney_rules::with_position;

/// Write an opening suite: generated positions, or the openings that played balanced.
///
/// Generated (`--game`, `--plies`, `--count`, `--seed`): positions after random plies,
/// deduplicated, one position string per line; with `--balanced ab:depth=3 --max-score 100`
/// only those a quick search scores within ±100 are kept.
///
/// From games (`--from-games FILE`, `-` for stdin, as `tourney export --format jsonl`
/// writes them): each start position (in the order first played) whose White score is
/// within ½ ± `--max-tilt` over at least `--min-games` games; says on stderr how many it
/// kept. Use the result as a tournament's `openings = { file = ... }`.
#[derive(Args)]
pub(crate) struct OpeningsArgs {
    /// The game: `loa` or `amazons`.
    #[arg(long, required_unless_present = "from_games")]
    game: Option<GameKind>,
    /// Random plies from the start.
    #[arg(long, default_value_t = 4)]
    plies: u32,
    /// Number of openings.
    #[arg(long, default_value_t = 100)]
    count: usize,
    /// Seed of the random plies.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rule options of the game, as a tournament's `[rules]` writes them (`size=8` for
    /// 8×8 Amazons).
    #[arg(long, default_value = "")]
    rules: String,
    /// Keep only positions this player (e.g. `ab:depth=3`) scores within --max-score.
    #[arg(long, conflicts_with = "from_games")]
    balanced: Option<String>,
    /// Largest |score| (centi-units) of a balanced opening.
    #[arg(long, default_value_t = 100)]
    max_score: i32,
    /// Instead of generating, keep the openings that played balanced: read games as
    /// `tourney export --format jsonl` writes them (`-` for stdin) and print each start
    /// position, in the order first played, whose White score is within ½ ± --max-tilt
    /// over at least --min-games games.
    #[arg(long, value_name = "GAMES")]
    from_games: Option<PathBuf>,
    /// With --from-games: the largest distance of White's score from ½.
    #[arg(long, default_value_t = 0.25)]
    max_tilt: f64,
    /// With --from-games: the fewest games an opening needs to be judged.
    #[arg(long, default_value_t = 2)]
    min_games: u64,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub(crate) fn run(args: &OpeningsArgs) -> Result<ExitCode> {
    let suite = match (&args.from_games, args.game) {
        (Some(path), _) => {
            let text = if path.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?
            };
            let (kept, judged) = balanced_openings(&text, args.max_tilt, args.min_games)
                .map_err(|e| anyhow::anyhow!("{}:{e}", path.display()))?;
            eprintln!(
                "kept {} of {} openings (White's score within 50% ± {:.0}%, at least {} games)",
                kept.len(),
                judged,
                args.max_tilt * 100.0,
                args.min_games
            );
            kept
        }
        (None, Some(game)) => {
            let settings = OpeningSettings {
                plies: args.plies,
                count: args.count,
                seed: args.seed,
                rules: args.rules.clone(),
                balanced: args.balanced.clone().map(|spec| (spec, args.max_score)),
                judge_budget: None,
            };
            with_position!(game, P => generate::<P>(&settings)).map_err(anyhow::Error::msg)?
        }
        (None, None) => bail!("--game or --from-games is needed"),
    };
    if suite.is_empty() {
        bail!("no openings");
    }
    // A file of positions: the moves that reached them are not written.
    let positions: Vec<&str> = suite.iter().map(|o| opening::position(o)).collect();
    let text = positions.join("\n") + "\n";
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

/// What `--from-games` reads of an exported game.
#[derive(serde::Deserialize)]
struct PlayedFrom {
    start: String,
    result: tourney_model::GameResult,
}

/// The start positions of exported games (JSON lines) whose White score is within
/// ½ ± `max_tilt` over at least `min_games` games, in the order first played; and how
/// many distinct starts there were.
///
/// # Errors
/// A line that is not a game record, as `line N: why`.
fn balanced_openings(text: &str, max_tilt: f64, min_games: u64) -> Result<(Vec<String>, usize)> {
    let mut results: Vec<OpeningResult> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let game: PlayedFrom = serde_json::from_str(line)
            .with_context(|| format!("line {}: not a game record", n + 1))?;
        let i = *index.entry(game.start.clone()).or_insert_with(|| {
            results.push(OpeningResult {
                index: results.len() as u64,
                position: game.start,
                games: 0,
                white_points: 0.0,
            });
            results.len() - 1
        });
        results[i].games += 1;
        results[i].white_points +=
            f64::from(game.result.half_points(tourney_rules::Color::White)) / 2.0;
    }
    let judged = results.len();
    let kept = results
        .into_iter()
        .filter(|o| o.games >= min_games && (o.white_score() - 0.5).abs() <= max_tilt)
        .map(|o| o.position)
        .collect();
    Ok((kept, judged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(start: &str, result: &str) -> String {
        format!(
            r#"{{"game":"loa","white":"a","black":"b","start":"{start}","moves":[],"result":"{result}","termination":"connection","pair":0}}"#
        )
    }

    #[test]
    fn openings_that_played_lopsided_or_too_rarely_are_left_out() {
        let text = [
            line("even", "1-0"),
            line("white's", "1-0"),
            line("even", "0-1"),
            line("once", "1/2-1/2"),
            line("white's", "1-0"),
            line("drawn", "1/2-1/2"),
            line("white's", "1/2-1/2"),
            line("drawn", "1/2-1/2"),
            String::new(),
        ]
        .join("\n");
        let (kept, judged) = balanced_openings(&text, 0.25, 2).unwrap();
        assert_eq!((kept, judged), (vec!["even".into(), "drawn".into()], 4));
        // White's 5/6 is within a tilt of 0.34; one game is enough when asked.
        let (kept, _) = balanced_openings(&text, 0.34, 1).unwrap();
        assert_eq!(kept, ["even", "white's", "once", "drawn"]);
    }

    #[test]
    fn a_line_that_is_not_a_game_is_named() {
        let text = format!("{}\n{{\"start\": \"x\"}}\n", line("even", "1-0"));
        let e = balanced_openings(&text, 0.25, 1).unwrap_err();
        assert!(
            format!("{e:#}").starts_with("line 2: not a game record"),
            "{e:#}"
        );
    }
}
