//! `tourney play`, `tourney engine` and `tourney openings`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;
use tourney_ai::{Heuristics, PlayerSpec};
use tourney_model::TimeControl;
use tourney_model::job::GameSettings;
use tourney_plan::openings::{OpeningSettings, generate};
use tourney_rules::{Game, GameKind, Position};
use tourney_runner::{
    Adjudicate, BuiltIn, Contestant, EngineConfig, ExternalEngine, Seat, Setup,
    play as referee_play,
};

use tourney_rules::with_position;
use tourney_stats::report::OpeningResult;

/// Arguments of `tourney play`.
#[derive(Args)]
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
        Some(command) => Ok(Box::new(ExternalEngine::new(EngineConfig::new(command)))),
        None => Ok(Box::new(
            BuiltIn::<P>::new(spec)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("player '{spec}'"))?,
        )),
    }
}

/// Engines started by `play` and `run` on the user's own command: confined like a
/// worker's, but allowed to run as the user, root included.
pub(crate) fn own_engines() {
    tourney_runner::confine::set_policy(tourney_runner::confine::EnginePolicy {
        allow_root: true,
        ..Default::default()
    });
}

/// Ends the outside engines, and the program with exit status 130, when it is stopped
/// (Ctrl-C, SIGTERM) in a command that plays them on its own threads: they run in sessions
/// of their own, so the signal does not reach them, and they would outlive it. The
/// handlers are in place when this returns.
pub(crate) fn end_engines_on_stop() {
    let (ready, handlers_installed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let Ok(runtime) = runtime else {
            let _ = ready.send(());
            return;
        };
        runtime.block_on(async {
            let stop = crate::serve_cmd::stop_signal();
            let _ = ready.send(());
            stop.await;
        });
        tourney_runner::confine::end_engines();
        eprintln!("Interrupted: the engines are stopped.");
        std::process::exit(130);
    });
    let _ = handlers_installed.recv();
}

pub(crate) fn play(args: &PlayArgs) -> Result<()> {
    own_engines();
    end_engines_on_stop();
    with_position!(args.game, P => play_game::<P>(args))
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

/// Arguments of `tourney engine`.
#[derive(Args)]
pub(crate) struct EngineArgs {
    /// The built-in player to serve, e.g. `ab:depth=6` or `mcts`.
    spec: PlayerSpec,
}

pub(crate) fn engine(args: &EngineArgs) -> Result<()> {
    let stdin = std::io::stdin().lock();
    tourney_runner::server::serve(&args.spec, stdin, Box::new(std::io::stdout()))
        .context("serving the engine protocol")
}

/// Arguments of `tourney openings`.
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

pub(crate) fn openings(args: &OpeningsArgs) -> Result<()> {
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
    let text = suite.join("\n") + "\n";
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().write_all(text.as_bytes())?,
    }
    Ok(())
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
