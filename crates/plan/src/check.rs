//! What a tournament file refers to, checked before anything is played or stored: every
//! built-in player spec builds for the tournament's game, the balance judge of generated
//! openings builds, and an openings file holds positions of the game. Errors name the
//! file, the line and the key (or the openings file and its line).

use tourney_ai::{Heuristics, PlayerSpec};
use tourney_model::opening;
use tourney_model::tournament::{ConfigError, OpeningsFormat, TournamentConfig};
use tourney_rules::{Position, with_position};

/// Checks a built-in player spec that belongs to no tournament yet (an engine version's):
/// it must build for at least one of the games.
///
/// # Errors
/// Why it builds for neither (the LOA error, then the Amazons one).
pub fn check_spec(spec: &str) -> Result<(), String> {
    let builds = |game| -> Result<(), String> {
        let parsed = spec.parse::<PlayerSpec>().map_err(|e| e.to_string())?;
        with_position!(game, P => parsed.build::<P>().map(drop).map_err(|e| e.to_string()))
    };
    match (
        builds(tourney_rules::GameKind::Loa),
        builds(tourney_rules::GameKind::Amazons),
    ) {
        (Ok(()), _) | (_, Ok(())) => Ok(()),
        (Err(loa), Err(amazons)) if loa == amazons => Err(loa),
        (Err(loa), Err(amazons)) => Err(format!("LOA: {loa}; Amazons: {amazons}")),
    }
}

/// Checks the built-in players and the openings' balance judge of `config`, parsed from
/// `text` of the file `file`.
///
/// # Errors
/// The first spec that does not parse or does not build for the game, with its line.
pub fn check_players(config: &TournamentConfig, text: &str, file: &str) -> Result<(), ConfigError> {
    with_position!(config.game, P => check_players_of::<P>(config, text, file))
}

fn check_players_of<P: Heuristics>(
    config: &TournamentConfig,
    text: &str,
    file: &str,
) -> Result<(), ConfigError> {
    let builds = |spec: &str| -> Result<(), tourney_ai::SpecError> {
        spec.parse::<PlayerSpec>()?.build::<P>().map(drop)
    };
    for (i, engine) in config.engines.iter().enumerate() {
        if let Some(spec) = &engine.player {
            builds(spec).map_err(|e| {
                ConfigError::at_key(
                    text,
                    file,
                    Some(("engine", i)),
                    format!("engine[{i}].player"),
                    e.to_string(),
                )
            })?;
        }
    }
    // A tuning run's parameters must be weights the player takes.
    if let (Some(spsa), Some(spec)) = (&config.spsa, &config.engines[0].player) {
        for (i, p) in spsa.params.iter().enumerate() {
            let tuned = tourney_model::spsa::spec_with(
                spec,
                &[(&p.name, tourney_model::spsa::played(p.start))],
            );
            builds(&tuned).map_err(|e| {
                ConfigError::at_key(
                    text,
                    file,
                    Some(("spsa.param", i)),
                    format!("spsa.param[{i}].name"),
                    e.to_string(),
                )
            })?;
        }
    }
    if let Some(judge) = &config.openings.balanced {
        builds(judge).map_err(|e| {
            ConfigError::at_key(
                text,
                file,
                Some(("openings", 0)),
                "openings.balanced".into(),
                e.to_string(),
            )
        })?;
    }
    Ok(())
}

/// The openings of an openings file ([`tourney_model::opening`]: a move sequence or a PGN
/// game from the start keeps its moves): one a line or game; blank lines and lines
/// starting with `#` are skipped. `name` names the file in errors.
///
/// # Errors
/// A line that is not a position of the tournament's game (with its line number), or a
/// file without positions.
pub fn openings_file(
    config: &TournamentConfig,
    openings_text: &str,
    name: &str,
) -> Result<Vec<String>, ConfigError> {
    let error = |line: Option<usize>, message: String| ConfigError {
        file: name.to_string(),
        line,
        key: None,
        message,
    };
    let format = config.openings.file_format(name);
    let game = config.game.name();
    let positions = with_position!(config.game, P => {
        let rules: <P as Position>::Rules = config.rules_text().parse().unwrap_or_default();
        match format {
            OpeningsFormat::Positions => positions_of::<P>(openings_text, game, rules),
            OpeningsFormat::Moves => move_lines_of::<P>(openings_text, rules),
            OpeningsFormat::Pgn => pgn_games_of::<P>(openings_text, game, rules),
        }
    })
    .map_err(|(line, message)| error(Some(line), message))?;
    if positions.is_empty() {
        let what = match format {
            OpeningsFormat::Positions => "no positions (one position string per line)",
            OpeningsFormat::Moves => "no openings (one move sequence per line)",
            OpeningsFormat::Pgn => "no games",
        };
        return Err(error(None, what.into()));
    }
    Ok(positions)
}

/// A problem in an openings file: its line and what is wrong (the file's text is not
/// repeated, only where on the line).
type Problem = (usize, String);

/// The lines that are not blank or comments (`#`), with their numbers from 1.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(n, l)| (n + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

fn positions_of<P: Position>(
    text: &str,
    game: &str,
    rules: P::Rules,
) -> Result<Vec<String>, Problem> {
    content_lines(text)
        .map(|(n, line)| {
            let position = line.parse::<P>().map_err(|e| {
                let at = e.column.map_or(String::new(), |c| format!(" (column {c})"));
                (n, format!("not a {game} position string{at}"))
            })?;
            fits(&position, rules).map_err(|why| (n, why))?;
            Ok(line.to_string())
        })
        .collect()
}

/// `Ok` when `position` is a board of `rules` (Amazons: of their size).
fn fits<P: Position>(position: &P, rules: P::Rules) -> Result<(), String> {
    if position.fits(rules) {
        Ok(())
    } else {
        let size = P::start_for(rules).to_string().split('/').count();
        Err(format!(
            "a board of another size: these rules ('{rules}') play on {size}×{size}"
        ))
    }
}

/// Whether a movetext token is a move number (`12.`, `12...`) or a result.
fn not_a_move(token: &str) -> bool {
    matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*")
        || (token.ends_with('.')
            && token
                .trim_end_matches('.')
                .bytes()
                .all(|b| b.is_ascii_digit()))
}

/// `start` after the moves `tokens` (the `k`th move counted from 1 in errors), which must
/// leave the game unfinished, and those moves.
fn after_moves<'a, P: Position>(
    start: P,
    rules: P::Rules,
    tokens: impl Iterator<Item = (usize, &'a str)>,
) -> Result<(P, Vec<P::Move>), Problem> {
    let mut position = start;
    let mut played = Vec::new();
    let mut k = 0;
    for (line, token) in tokens.filter(|(_, t)| !not_a_move(t)) {
        k += 1;
        let mv = position
            .parse_move(token)
            .map_err(|e| (line, format!("move {k} '{token}': {e}")))?;
        played.push(mv);
        position = position
            .play(mv)
            .map_err(|e| (line, format!("move {k} '{token}': {e}")))?;
        if position.outcome(rules).is_some() {
            return Err((line, format!("the game is over after move {k} '{token}'")));
        }
    }
    Ok((position, played))
}

fn move_lines_of<P: Position>(text: &str, rules: P::Rules) -> Result<Vec<String>, Problem> {
    content_lines(text)
        .map(|(n, line)| {
            after_moves(
                P::start_for(rules),
                rules,
                line.split_whitespace().map(|t| (n, t)),
            )
            .map(|(p, moves)| opening::with_moves(&p.to_string(), &moves))
        })
        .collect()
}

/// The start of each PGN-style game (its `FEN` tag, or the start position) after its
/// moves; `{...}` comments and `;` comments to the end of the line are skipped.
fn pgn_games_of<P: Position>(
    text: &str,
    game: &str,
    rules: P::Rules,
) -> Result<Vec<String>, Problem> {
    let mut games = Vec::new();
    let mut start: Option<P> = None;
    let mut moves: Vec<(usize, String)> = Vec::new();
    let mut in_moves = false;
    let mut in_comment = false;
    let finish = |start: &mut Option<P>, moves: &mut Vec<(usize, String)>| {
        // A game without a `FEN` tag starts at the start: its moves are kept.
        let (from, from_start) = match start.take() {
            Some(fen) => (fen, false),
            None => (P::start_for(rules), true),
        };
        let tokens = std::mem::take(moves);
        after_moves(from, rules, tokens.iter().map(|(n, t)| (*n, t.as_str()))).map(|(p, moves)| {
            match from_start {
                true => opening::with_moves(&p.to_string(), &moves),
                false => p.to_string(),
            }
        })
    };
    for (n, raw) in text.lines().enumerate() {
        let (n, line) = (n + 1, raw.trim());
        if line.starts_with('[') && !in_comment {
            if in_moves {
                games.push(finish(&mut start, &mut moves)?);
                in_moves = false;
            }
            let tag = line.strip_prefix('[').and_then(|l| l.strip_suffix(']'));
            let (key, value) = tag
                .and_then(|t| t.split_once(' '))
                .and_then(|(k, v)| Some((k, v.trim().strip_prefix('"')?.strip_suffix('"')?)))
                .ok_or_else(|| (n, "a malformed tag".to_string()))?;
            if key == "FEN" {
                let position = value.parse::<P>().map_err(|e| {
                    let at = e.column.map_or(String::new(), |c| format!(" (column {c})"));
                    (n, format!("FEN: not a {game} position string{at}"))
                })?;
                fits(&position, rules).map_err(|why| (n, format!("FEN: {why}")))?;
                start = Some(position);
            }
            continue;
        }
        let mut rest = line;
        while !rest.is_empty() {
            if in_comment {
                match rest.find('}') {
                    Some(end) => {
                        in_comment = false;
                        rest = &rest[end + 1..];
                    }
                    None => rest = "",
                }
                continue;
            }
            let cut = rest.find(['{', ';']).unwrap_or(rest.len());
            for token in rest[..cut].split_whitespace() {
                in_moves = true;
                moves.push((n, token.to_string()));
            }
            match rest[cut..].chars().next() {
                Some('{') => {
                    in_comment = true;
                    rest = &rest[cut + 1..];
                }
                _ => rest = "",
            }
        }
    }
    if in_moves || start.is_some() {
        games.push(finish(&mut start, &mut moves)?);
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { depth = 1 }\n\n[[engine]]\nname = \"a\"\nplayer = \"ab\"\n\n[[engine]]\nname = \"b\"\nplayer = \"ab:depht=3\"\n";

    #[test]
    fn a_bad_player_spec_is_named_with_its_line() {
        let config = TournamentConfig::parse(FILE, "t.toml").unwrap();
        let e = check_players(&config, FILE, "t.toml").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(13), Some("engine[1].player")),
            "{e}"
        );
        assert!(e.message.contains("depht"), "{e}");
        let good = FILE.replace("depht", "depth");
        let config = TournamentConfig::parse(&good, "t.toml").unwrap();
        check_players(&config, &good, "t.toml").unwrap();
        let judge = good.replace(
            "limits =",
            "openings = { plies = 2, balanced = \"mcts:x=1\" }\nlimits =",
        );
        let config = TournamentConfig::parse(&judge, "t.toml").unwrap();
        let e = check_players(&config, &judge, "t.toml").unwrap_err();
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(5), Some("openings.balanced")),
            "{e}"
        );
    }

    #[test]
    fn an_openings_file_is_read_line_by_line() {
        let config = TournamentConfig::parse(&FILE.replace("depht", "depth"), "t.toml").unwrap();
        let start = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";
        let text =
            format!("# suite\n{start}\n\n{start}\n1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 x\n");
        let e = openings_file(&config, &text, "o.txt").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("o.txt", Some(5)), "{e}");
        assert!(
            e.to_string().starts_with("o.txt:5: not a loa position"),
            "{e}"
        );
        let text = text.lines().take(4).collect::<Vec<_>>().join("\n");
        assert_eq!(
            openings_file(&config, &text, "o.txt").unwrap(),
            vec![start, start]
        );
        let e = openings_file(&config, "# nothing\n", "o.txt").unwrap_err();
        assert!(e.to_string().contains("no positions"), "{e}");
    }

    #[test]
    fn openings_of_8x8_amazons_are_8x8_boards() {
        let file = FILE
            .replace("depht", "depth")
            .replace("game = \"loa\"", "game = \"amazons\"")
            + "\n[rules]\nsize = \"8\"\n";
        let config = TournamentConfig::parse(&file, "t.toml").unwrap();
        let small = "2b2b2/8/b6b/8/8/w6w/8/2w2w2 w";
        assert_eq!(openings_file(&config, small, "o.txt").unwrap(), [small]);
        let large = tourney_rules::Amazons::start().to_string();
        let e = openings_file(&config, &format!("{small}\n{large}\n"), "o.txt").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.message.contains("play on 8×8"), "{e}");
        // Moves are played from the 8×8 start; a 10×10 square is off that board.
        let moves = openings_file(&config, "1. c1-c6/e4\n", "o.pgn").unwrap();
        assert_eq!(moves, ["2b2b2/8/b1w4b/8/4x3/w6w/8/5w2 b\tc1-c6/e4"]);
        let e = openings_file(&config, "1. c1-c9/c8\n", "o.pgn").unwrap_err();
        assert!(e.message.contains("off the 8×8 board"), "{e}");
    }

    /// The LOA position after `moves` from the start, as the rules core writes it, and
    /// the moves.
    fn after<'a>(moves: &[&'a str]) -> (String, Vec<&'a str>) {
        let mut p = tourney_rules::Loa::start();
        for m in moves {
            p = p.play(p.parse_move(m).unwrap()).unwrap();
        }
        (p.to_string(), moves.to_vec())
    }

    #[test]
    fn openings_may_be_move_sequences_or_pgn_games() {
        let config = TournamentConfig::parse(&FILE.replace("depht", "depth"), "t.toml").unwrap();
        let moves = "# from the start\nb1-b3 a2-c2\n1. b1-b3 a2-c2 2. d1-d3\n";
        let mut with_format = config.clone();
        with_format.openings.format = Some(OpeningsFormat::Moves);
        assert_eq!(
            openings_file(&with_format, moves, "book.txt").unwrap(),
            [
                after(&["b1-b3", "a2-c2"]),
                after(&["b1-b3", "a2-c2", "d1-d3"])
            ]
            .map(|(p, m)| opening::with_moves(&p, &m))
        );
        let e = openings_file(&with_format, "b1-b3\nb1-b3 b1-b3\n", "book.txt").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(e.to_string().contains("move 2 'b1-b3'"), "{e}");

        // PGN-style: a FEN start, move numbers, comments and results skipped.
        let fen = after(&["b1-b3"]).0;
        let pgn = format!(
            "[Event \"x\"]\n[FEN \"{fen}\"]\n\n1... a2-c2 {{a comment\nover lines}} 2. d1-d3 ; rest\n1/2-1/2\n\n\
             [Event \"y\"]\n\n1... b1-b3 *\n"
        );
        assert_eq!(
            openings_file(&config, &pgn, "games.PGN").unwrap(),
            [
                after(&["b1-b3", "a2-c2", "d1-d3"]).0,
                opening::with_moves(&after(&["b1-b3"]).0, &["b1-b3"])
            ],
            "a .pgn file is read as PGN; a game from the start keeps its moves"
        );
        let bad = pgn.replace("d1-d3", "d1-d9");
        let e = openings_file(&config, &bad, "games.pgn").unwrap_err();
        assert_eq!(e.line, Some(5), "the line after the comment's: {e}");
        assert!(e.to_string().contains("move 2 'd1-d9'"), "{e}");
        let e = openings_file(&config, "[Event \"x\"]\n[FEN \"junk\"]\n", "g.pgn").unwrap_err();
        assert!(
            e.to_string().contains("g.pgn:2: FEN: not a loa position"),
            "{e}"
        );
    }

    #[test]
    fn the_example_book_replays() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config");
        let text = std::fs::read_to_string(format!("{dir}/book-loa.toml")).unwrap();
        let config = TournamentConfig::parse(&text, "book-loa.toml").unwrap();
        let book = std::fs::read_to_string(format!("{dir}/loa-book.txt")).unwrap();
        assert_eq!(
            openings_file(&config, &book, "loa-book.txt").unwrap().len(),
            5
        );
    }

    #[test]
    fn a_suite_is_shuffled_by_its_seed_and_started_at_its_offset() {
        use crate::openings::arrange;
        use tourney_model::tournament::OpeningsOrder;
        let suite: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let rotated = arrange(suite.clone(), OpeningsOrder::Sequential, 1, 13);
        assert_eq!(rotated[0], "3");
        assert_eq!(rotated[9], "2");
        let shuffled = arrange(suite.clone(), OpeningsOrder::Random, 7, 0);
        assert_ne!(shuffled, suite);
        assert_eq!(
            shuffled,
            arrange(suite.clone(), OpeningsOrder::Random, 7, 0),
            "by its seed"
        );
        assert_ne!(
            shuffled,
            arrange(suite.clone(), OpeningsOrder::Random, 8, 0)
        );
        let mut sorted = shuffled.clone();
        sorted.sort_by_key(|s| s.parse::<u32>().unwrap());
        assert_eq!(sorted, suite, "the same openings");
        assert!(arrange(Vec::new(), OpeningsOrder::Random, 1, 5).is_empty());
    }
}
