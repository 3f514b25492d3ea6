//! The engine protocol (UGI: UCI made game-agnostic) as plain data: formatting the runner's
//! commands, parsing the engine's lines, and the reverse for serving an engine. No I/O.

use std::fmt;

/// Search limits of a `go` command, in milliseconds where they are times.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Go {
    /// White's clock.
    pub wtime: Option<u64>,
    /// Black's clock.
    pub btime: Option<u64>,
    /// White's increment.
    pub winc: Option<u64>,
    /// Black's increment.
    pub binc: Option<u64>,
    /// Moves to the next time control.
    pub movestogo: Option<u32>,
    /// Think exactly this long.
    pub movetime: Option<u64>,
    /// Search this many nodes.
    pub nodes: Option<u64>,
    /// Search to this depth.
    pub depth: Option<u32>,
}

/// A command from the runner to an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Start of the session.
    Ugi,
    /// Set an option.
    SetOption {
        /// Option name.
        name: String,
        /// Its value.
        value: String,
    },
    /// Ping: the engine answers `readyok`.
    IsReady,
    /// A new game of `game` with rule options `key=value`.
    NewGame {
        /// `loa` or `amazons`.
        game: String,
        /// Rule options, e.g. `double-connection=draw`.
        rules: Vec<String>,
    },
    /// The game so far: start position (`None` for the standard start) and moves.
    Position {
        /// Position string, or `None` for `startpos`.
        start: Option<String>,
        /// Moves played since.
        moves: Vec<String>,
    },
    /// Search with these limits.
    Go(Go),
    /// Answer `bestmove` now.
    Stop,
    /// Search the engine's fixed bench positions (of `game`, or of the last `newgame`'s)
    /// and answer `bench nodes N nps M`.
    Bench {
        /// `loa` or `amazons` (`None`: the game of the last `newgame`, else LOA).
        game: Option<String>,
    },
    /// Make `n` opening positions from `seed` (OpenBench's convention), optionally from a
    /// book the engine knows by `book`; the engine answers one `info string genfens
    /// <position>` line each.
    GenFens {
        /// Positions wanted.
        n: u32,
        /// Their seed: the same seed, the same positions.
        seed: u64,
        /// The book named (absent: the engine's own choice).
        book: Option<String>,
    },
    /// End the process.
    Quit,
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Ugi => f.write_str("ugi"),
            Command::SetOption { name, value } => write!(f, "setoption name {name} value {value}"),
            Command::IsReady => f.write_str("isready"),
            Command::NewGame { game, rules } => {
                f.write_str("newgame ")?;
                f.write_str(game)?;
                rules.iter().try_for_each(|r| write!(f, " {r}"))
            }
            Command::Position { start, moves } => {
                match start {
                    Some(s) => write!(f, "position {s}")?,
                    None => f.write_str("position startpos")?,
                }
                if !moves.is_empty() {
                    write!(f, " moves {}", moves.join(" "))?;
                }
                Ok(())
            }
            Command::Go(go) => {
                f.write_str("go")?;
                let fields: [(&str, Option<u64>); 8] = [
                    ("wtime", go.wtime),
                    ("btime", go.btime),
                    ("winc", go.winc),
                    ("binc", go.binc),
                    ("movestogo", go.movestogo.map(u64::from)),
                    ("movetime", go.movetime),
                    ("nodes", go.nodes),
                    ("depth", go.depth.map(u64::from)),
                ];
                for (name, value) in fields {
                    if let Some(v) = value {
                        write!(f, " {name} {v}")?;
                    }
                }
                Ok(())
            }
            Command::Stop => f.write_str("stop"),
            Command::Bench { game: None } => f.write_str("bench"),
            Command::Bench { game: Some(g) } => write!(f, "bench {g}"),
            Command::GenFens { n, seed, book } => {
                write!(f, "genfens {n} seed {seed}")?;
                book.iter().try_for_each(|b| write!(f, " book {b}"))
            }
            Command::Quit => f.write_str("quit"),
        }
    }
}

/// Parses a command line as an engine reads it; `None` for unknown or malformed commands
/// (which engines ignore).
pub fn parse_command(line: &str) -> Option<Command> {
    let mut tokens = line.split_whitespace();
    let command = match tokens.next()? {
        "ugi" => Command::Ugi,
        "isready" => Command::IsReady,
        "stop" => Command::Stop,
        "quit" => Command::Quit,
        "bench" => Command::Bench {
            game: tokens.next().map(String::from),
        },
        "genfens" => {
            let n = tokens.next()?.parse().ok()?;
            let (mut seed, mut book) = (0, None);
            while let Some(key) = tokens.next() {
                match (key, tokens.next()) {
                    ("seed", Some(v)) => seed = v.parse().ok()?,
                    ("book", Some(v)) if v != "None" => book = Some(v.to_string()),
                    _ => {}
                }
            }
            Command::GenFens { n, seed, book }
        }
        "setoption" => {
            let rest: Vec<&str> = tokens.collect();
            let name_at = rest.iter().position(|t| *t == "name")?;
            let value_at = rest.iter().position(|t| *t == "value");
            let name_end = value_at.unwrap_or(rest.len());
            Command::SetOption {
                name: rest.get(name_at + 1..name_end)?.join(" "),
                value: value_at
                    .map(|v| rest[v + 1..].join(" "))
                    .unwrap_or_default(),
            }
        }
        "newgame" => Command::NewGame {
            game: tokens.next()?.to_string(),
            rules: tokens.map(String::from).collect(),
        },
        "position" => {
            let rest: Vec<&str> = tokens.collect();
            let moves_at = rest
                .iter()
                .position(|t| *t == "moves")
                .unwrap_or(rest.len());
            let start = match rest.first() {
                Some(&"startpos") => None,
                Some(_) => Some(rest[..moves_at].join(" ")),
                None => return None,
            };
            let moves = rest
                .get(moves_at + 1..)
                .unwrap_or(&[])
                .iter()
                .map(|m| m.to_string())
                .collect();
            Command::Position { start, moves }
        }
        "go" => {
            let mut go = Go::default();
            while let Some(key) = tokens.next() {
                let value = tokens.next();
                let n = || value.and_then(|v| v.parse::<u64>().ok());
                match key {
                    "wtime" => go.wtime = n(),
                    "btime" => go.btime = n(),
                    "winc" => go.winc = n(),
                    "binc" => go.binc = n(),
                    "movestogo" => go.movestogo = n().map(|v| v as u32),
                    "movetime" => go.movetime = n(),
                    "nodes" => go.nodes = n(),
                    "depth" => go.depth = n().map(|v| v as u32),
                    _ => {}
                }
            }
            Command::Go(go)
        }
        _ => return None,
    };
    Some(command)
}

/// Search progress an engine reports in an `info` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Info {
    /// Depth.
    pub depth: Option<u32>,
    /// Selective depth.
    pub seldepth: Option<u32>,
    /// `cp N`, `win N` or `loss N`.
    pub score: Option<String>,
    /// Nodes.
    pub nodes: Option<u64>,
    /// Nodes per second.
    pub nps: Option<u64>,
    /// Milliseconds.
    pub time: Option<u64>,
    /// Principal variation.
    pub pv: Vec<String>,
}

impl fmt::Display for Info {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("info")?;
        if let Some(d) = self.depth {
            write!(f, " depth {d}")?;
        }
        if let Some(d) = self.seldepth {
            write!(f, " seldepth {d}")?;
        }
        if let Some(s) = &self.score {
            write!(f, " score {s}")?;
        }
        if let Some(n) = self.nodes {
            write!(f, " nodes {n}")?;
        }
        if let Some(n) = self.nps {
            write!(f, " nps {n}")?;
        }
        if let Some(t) = self.time {
            write!(f, " time {t}")?;
        }
        if !self.pv.is_empty() {
            write!(f, " pv {}", self.pv.join(" "))?;
        }
        Ok(())
    }
}

/// A line from an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// `id name ...`.
    IdName(String),
    /// `id author ...`.
    IdAuthor(String),
    /// `option ...` (kept as written).
    Option(String),
    /// End of the handshake.
    UgiOk,
    /// Answer to `isready`.
    ReadyOk,
    /// Search progress.
    Info(Info),
    /// The chosen move (as written; checked by the referee).
    BestMove(String),
    /// `error unsupported ...`: the engine cannot play this game or rule.
    Unsupported(String),
    /// The answer to `bench`: the signature (nodes) and the speed.
    Bench {
        /// Nodes searched over the bench positions.
        nodes: u64,
        /// Nodes per second.
        nps: u64,
    },
    /// `info string genfens <position>`: one of the positions `genfens` asked for.
    GenFen(String),
    /// Anything else (ignored).
    Other(String),
}

/// Parses an engine's line. Never fails: unknown lines are [`Message::Other`].
pub fn parse_message(line: &str) -> Message {
    let line = line.trim();
    let mut tokens = line.split_whitespace();
    match tokens.next() {
        Some("id") => match tokens.next() {
            Some("name") => Message::IdName(tokens.collect::<Vec<_>>().join(" ")),
            Some("author") => Message::IdAuthor(tokens.collect::<Vec<_>>().join(" ")),
            _ => Message::Other(line.to_string()),
        },
        Some("option") => Message::Option(line.to_string()),
        Some("ugiok") => Message::UgiOk,
        Some("readyok") => Message::ReadyOk,
        Some("bench") => {
            let rest: Vec<&str> = tokens.collect();
            let field = |name: &str| {
                let at = rest.iter().position(|t| *t == name)?;
                rest.get(at + 1)?.parse::<u64>().ok()
            };
            match (field("nodes"), field("nps")) {
                (Some(nodes), nps) => Message::Bench {
                    nodes,
                    nps: nps.unwrap_or(0),
                },
                (None, _) => Message::Other(line.to_string()),
            }
        }
        Some("bestmove") => match tokens.next() {
            Some(mv) => Message::BestMove(mv.to_string()),
            None => Message::Other(line.to_string()),
        },
        Some("error") => match tokens.next() {
            Some("unsupported") => Message::Unsupported(tokens.collect::<Vec<_>>().join(" ")),
            _ => Message::Other(line.to_string()),
        },
        Some("info") if line.starts_with("info string genfens ") => {
            Message::GenFen(line["info string genfens ".len()..].trim().to_string())
        }
        Some("info") => {
            let mut info = Info::default();
            let rest: Vec<&str> = tokens.collect();
            let mut i = 0;
            while i < rest.len() {
                let next = rest.get(i + 1).copied();
                let num = || next.and_then(|v| v.parse::<u64>().ok());
                match rest[i] {
                    "depth" => info.depth = num().map(|v| v as u32),
                    "seldepth" => info.seldepth = num().map(|v| v as u32),
                    "nodes" => info.nodes = num(),
                    "nps" => info.nps = num(),
                    "time" => info.time = num(),
                    "score" => {
                        if let (Some(kind @ ("cp" | "win" | "loss")), Some(v)) =
                            (next, rest.get(i + 2))
                        {
                            if v.parse::<i64>().is_ok() {
                                info.score = Some(format!("{kind} {v}"));
                            }
                            i += 1;
                        }
                    }
                    "pv" => {
                        info.pv = rest[i + 1..].iter().map(|m| m.to_string()).collect();
                        break;
                    }
                    _ => {
                        i += 1;
                        continue;
                    }
                }
                i += 2;
            }
            Message::Info(info)
        }
        _ => Message::Other(line.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn genfens_reads_openbench_lines() {
        assert_eq!(
            parse_command("genfens 4 seed 99 book None"),
            Some(Command::GenFens {
                n: 4,
                seed: 99,
                book: None
            })
        );
        assert_eq!(parse_command("genfens many seed 1"), None);
        assert_eq!(
            parse_message("info string genfens 8/8/8/8/8/8/8/8 b "),
            Message::GenFen("8/8/8/8/8/8/8/8 b".into())
        );
        assert!(matches!(
            parse_message("info string other"),
            Message::Info(_)
        ));
    }

    #[test]
    fn commands_print_and_parse_back() {
        let commands = [
            Command::Ugi,
            Command::SetOption {
                name: "Hash Size".into(),
                value: "64".into(),
            },
            Command::IsReady,
            Command::GenFens {
                n: 8,
                seed: 12345,
                book: None,
            },
            Command::GenFens {
                n: 1,
                seed: 7,
                book: Some("books/loa.epd".into()),
            },
            Command::NewGame {
                game: "loa".into(),
                rules: vec!["double-connection=draw".into()],
            },
            Command::Position {
                start: None,
                moves: vec!["b1-b3".into(), "a2-c2".into()],
            },
            Command::Position {
                start: Some("3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w".into()),
                moves: vec![],
            },
            Command::Go(Go {
                wtime: Some(1000),
                btime: Some(900),
                winc: Some(10),
                binc: Some(10),
                movestogo: Some(20),
                ..Go::default()
            }),
            Command::Go(Go {
                nodes: Some(5000),
                ..Go::default()
            }),
            Command::Stop,
            Command::Bench { game: None },
            Command::Bench {
                game: Some("amazons".into()),
            },
            Command::Quit,
        ];
        for c in commands {
            assert_eq!(parse_command(&c.to_string()), Some(c.clone()), "{c}");
        }
        assert_eq!(parse_command("bogus 1 2"), None);
    }

    #[test]
    fn engine_lines_are_parsed() {
        assert_eq!(
            parse_message("id name My Engine 1.0"),
            Message::IdName("My Engine 1.0".into())
        );
        assert_eq!(
            parse_message("bestmove b1-b3"),
            Message::BestMove("b1-b3".into())
        );
        assert_eq!(
            parse_message("error unsupported game amazons"),
            Message::Unsupported("game amazons".into())
        );
        let Message::Info(info) = parse_message(
            "info depth 5 seldepth 9 score cp -35 nodes 12345 nps 100000 time 123 pv b1-b3 a2-c2",
        ) else {
            panic!()
        };
        assert_eq!(info.depth, Some(5));
        assert_eq!(info.score.as_deref(), Some("cp -35"));
        assert_eq!(info.nodes, Some(12345));
        assert_eq!(info.pv, ["b1-b3", "a2-c2"]);
        assert_eq!(parse_message(&info.to_string()), Message::Info(info));
        let Message::Info(win) = parse_message("info score win 7") else {
            panic!()
        };
        assert_eq!(win.score.as_deref(), Some("win 7"));
        assert!(matches!(parse_message("hello"), Message::Other(_)));
        assert!(matches!(parse_message("bestmove"), Message::Other(_)));
        assert_eq!(
            parse_message("bench nodes 123456 nps 2000000"),
            Message::Bench {
                nodes: 123456,
                nps: 2_000_000
            }
        );
        assert_eq!(
            parse_message("bench nodes 7"),
            Message::Bench { nodes: 7, nps: 0 }
        );
        assert!(matches!(parse_message("bench nodes x"), Message::Other(_)));
    }

    proptest! {
        #[test]
        fn parsers_never_panic(line in "\\PC{0,80}") {
            let _ = parse_message(&line);
            let _ = parse_command(&line);
        }

        #[test]
        fn info_parser_never_panics_on_near_misses(line in "info( (depth|score|cp|win|nodes|pv|time|[0-9]{1,3}|x))*") {
            let _ = parse_message(&line);
        }
    }
}
