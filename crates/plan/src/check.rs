//! What a tournament file refers to, checked before anything is played or stored: every
//! built-in player spec builds for the tournament's game, the balance judge of generated
//! openings builds, and an openings file holds positions of the game. Errors name the
//! file, the line and the key (or the openings file and its line).

use tourney_ai::{Heuristics, PlayerSpec};
use tourney_model::tournament::{ConfigError, TournamentConfig};
use tourney_rules::with_position;

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

/// The positions of an openings file: one position string per line; blank lines and
/// lines starting with `#` are skipped. `name` names the file in errors.
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
    let mut positions = Vec::new();
    for (n, line) in openings_text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parsed = with_position!(config.game, P => line.parse::<P>().map(drop));
        // The file's text is not repeated: only where on the line the problem is.
        parsed.map_err(|e| {
            let at = e.column.map_or(String::new(), |c| format!(" (column {c})"));
            error(
                Some(n + 1),
                format!("not a {} position string{at}", config.game),
            )
        })?;
        positions.push(line.to_string());
    }
    if positions.is_empty() {
        return Err(error(
            None,
            "no positions (one position string per line)".into(),
        ));
    }
    Ok(positions)
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
}
