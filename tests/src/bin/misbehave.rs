//! A test engine that speaks the engine protocol and misbehaves on purpose.
//!
//! `misbehave <mode> [moves]`: plays `moves` legal random moves (default 2), then:
//! - `good`: keeps playing legal moves;
//! - `crash`: exits with status 3 when asked for a move;
//! - `hang`: never answers `go`;
//! - `illegal`: answers a move that is not legal;
//! - `none`: says the game is over (`bestmove none`) when it is not;
//! - `junk`: writes junk lines, then an unparsable `bestmove`;
//! - `close`: closes its stdout and stays alive;
//! - `slow`: thinks for 3 seconds per move;
//! - `nohandshake`: never finishes the handshake;
//! - `unsupported`: refuses every game with `error unsupported`.
//! - `env`: at the handshake, writes to stderr `env: NAME,NAME,...` (its environment's
//!   names), `cwd: <its working directory>` and `cpus: <the CPUs it may run on>`; exits
//!   as `crash` does;
//! - `fork`: starts `sleep 1000.N` (writing `child: sleep 1000.N` to stderr), then exits as `crash`
//!   does, leaving the child behind;
//! - `alloc`: allocates and touches 2 GiB;
//! - `flood`: writes 50 MB to stderr without a newline;
//! - `spin`: burns CPU without answering;
//! - `net <port>`: tries to connect to 127.0.0.1:<port>, writes `net: reached` or
//!   `net: <error>` to stderr; exits as `crash` does.
//!
//! `--protocol ugi|uci` anywhere on the command line makes it speak that dialect (through
//! the runner's translation), so that each misbehaviour can be tried in each dialect.
//! `--game amazons` plays Amazons where the dialect's new game does not name the game.
//! `--protocol codingame` (with `--game amazons` for Amazons) and `--protocol gtp` (Amazons)
//! speak those shapes, in the modes `good`, `crash`, `hang`, `illegal` and `nohandshake`.
//!
//! It writes a few lines to stderr so that the runner's stderr tail can be checked.

use std::io::{BufRead, Write};
use std::time::Duration;

use tourney_rules::{Amazons, Game, Loa, Position};
use tourney_runner::dialect::{Dialect, DialectWriter};

/// A random legal move for the game so far, as text.
fn random_move<P: Position>(start: Option<&str>, moves: &[String], seed: u64) -> Option<String> {
    let start: P = match start {
        Some(text) => text.parse().ok()?,
        None => P::start(),
    };
    let mut game = Game::new(start, Default::default());
    for mv in moves {
        // A dialect's move without separators is the legal move it names.
        let named = tourney_runner::dialect::canonical_move(mv);
        game.play_text(&named).ok()?;
    }
    game.position()
        .random_move(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .map(|m| m.to_string())
}

/// The value of `--flag VALUE`, taken out of `args`.
fn take_flag(args: &mut Vec<String>, flag: &str) -> Option<String> {
    let at = args.iter().position(|a| a == flag)?;
    if at + 1 >= args.len() {
        return None;
    }
    let value = args.remove(at + 1);
    args.remove(at);
    Some(value)
}

/// What a misbehaving turn does once its good moves are played: `None` to play on.
fn misbehave_now(mode: &str, turn: usize, good_moves: usize) -> Option<&'static str> {
    if turn <= good_moves {
        return None;
    }
    eprintln!("misbehave: now doing '{mode}' at move {turn}");
    match mode {
        "crash" => std::process::exit(3),
        "hang" => loop {
            std::thread::sleep(Duration::from_secs(60));
        },
        "illegal" => Some("a1a1"),
        _ => None,
    }
}

/// Plays as a CodinGame bot: a listed move each turn.
fn codingame(mode: &str, good_moves: usize, amazons: bool) {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines().map_while(Result::ok);
    let mut next = || lines.next();
    let Some(size) = next().and_then(|s| s.trim().parse::<usize>().ok()) else {
        return;
    };
    if !amazons {
        next();
    }
    let mut out = std::io::stdout();
    for turn in 1.. {
        if amazons && next().is_none() {
            return;
        }
        for _ in 0..size + 1 {
            if next().is_none() {
                return;
            }
        }
        let count: usize = next().and_then(|c| c.trim().parse().ok()).unwrap_or(0);
        let moves: Vec<String> = (0..count).filter_map(|_| next()).collect();
        let mv = match misbehave_now(mode, turn, good_moves) {
            Some(bad) => bad.to_string(),
            None => moves[turn * 7 % moves.len().max(1)].clone(),
        };
        let _ = writeln!(out, "{mv}");
        let _ = out.flush();
    }
}

/// Plays Amazons as a GTP program: random turns, given out a square at a time.
fn gtp(mode: &str, good_moves: usize) {
    use tourney_runner::dialect::gtp::{on_board, square, turn_squares, vertex};
    let mut game = Game::new(Amazons::start(), Default::default());
    let mut told: Vec<String> = Vec::new();
    let mut to_give: std::collections::VecDeque<String> = std::collections::VecDeque::new();
    let mut turn = 0;
    let mut out = std::io::stdout();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let answer: Result<String, &str> = match words.as_slice() {
            ["protocol_version"] if mode == "nohandshake" => continue,
            ["protocol_version"] => Ok("2".into()),
            ["name"] => Ok("misbehave".into()),
            ["version"] => Ok(mode.to_string()),
            ["list_commands"] => Ok(["protocol_version", "name", "version", "list_commands"]
                .into_iter()
                .chain(["boardsize", "clear_board", "play", "genmove", "quit"])
                .collect::<Vec<_>>()
                .join("\n")),
            ["clear_board"] => {
                game = Game::new(Amazons::start(), Default::default());
                to_give.clear();
                Ok(String::new())
            }
            ["play", _, v] if !square(v).is_some_and(|s| on_board(&s, 10)) => {
                Err("invalid coordinate")
            }
            ["play", _, v] => {
                told.push(square(v).unwrap_or_default());
                if told.len() == 3 {
                    let text = std::mem::take(&mut told).concat();
                    let named = tourney_runner::dialect::canonical_move(&text);
                    game.play_text(&named)
                        .map(|_| String::new())
                        .map_err(|_| "illegal move")
                } else {
                    Ok(String::new())
                }
            }
            ["genmove", _] => match to_give.pop_front() {
                Some(sq) => Ok(vertex(&sq).unwrap_or(sq)),
                None => {
                    turn += 1;
                    match misbehave_now(mode, turn, good_moves) {
                        Some(_) => Ok("A1".into()),
                        None => {
                            let mv = game
                                .position()
                                .random_move(turn as u64 * 0x9e37_79b9)
                                .unwrap();
                            game.play(mv).unwrap();
                            to_give = turn_squares(&mv.to_string()).into();
                            let sq = to_give.pop_front().unwrap_or_default();
                            Ok(vertex(&sq).unwrap_or(sq))
                        }
                    }
                }
            },
            ["quit"] => break,
            [_, ..] => Ok(String::new()),
            [] => continue,
        };
        let _ = match answer {
            Ok(text) => write!(out, "= {text}\n\n"),
            Err(why) => write!(out, "? {why}\n\n"),
        };
        let _ = out.flush();
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let dialect: Dialect = take_flag(&mut args, "--protocol")
        .and_then(|name| name.parse().ok())
        .unwrap_or_default();
    let amazons = take_flag(&mut args, "--game").as_deref() == Some("amazons");
    let mode = args.get(1).cloned().unwrap_or_else(|| "good".into());
    let good_moves: usize = match mode.as_str() {
        "net" => 2,
        _ => args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2),
    };
    eprintln!("misbehave: mode {mode}");
    match dialect {
        Dialect::CodinGame => return codingame(&mode, good_moves, amazons),
        Dialect::Gtp { .. } => return gtp(&mode, good_moves),
        _ => {}
    }
    let stdin = std::io::stdin();
    let mut out = DialectWriter::new(std::io::stdout(), dialect);
    let mut game_name = String::from(if amazons { "amazons" } else { "loa" });
    let mut start: Option<String> = None;
    let mut moves: Vec<String> = Vec::new();
    let mut played = 0usize;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let game: tourney_rules::GameKind =
            game_name.parse().unwrap_or(tourney_rules::GameKind::Loa);
        let Some(line) = dialect.incoming(&line, game) else {
            continue;
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("ugi") => {
                if mode == "nohandshake" {
                    continue;
                }
                match mode.as_str() {
                    "env" => {
                        let names: Vec<String> = std::env::vars_os()
                            .map(|(k, _)| k.to_string_lossy().into_owned())
                            .collect();
                        eprintln!("env: {}", names.join(","));
                        if let Ok(cwd) = std::env::current_dir() {
                            eprintln!("cwd: {}", cwd.display());
                        }
                        let status = std::fs::read_to_string("/proc/self/status");
                        let cpus = status
                            .as_deref()
                            .unwrap_or_default()
                            .lines()
                            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                            .map(str::trim)
                            .unwrap_or_default()
                            .to_string();
                        eprintln!("cpus: {cpus}");
                    }
                    "net" => {
                        let port = args.get(2).cloned().unwrap_or_default();
                        match std::net::TcpStream::connect(format!("127.0.0.1:{port}")) {
                            Ok(_) => eprintln!("net: reached"),
                            Err(e) => eprintln!("net: {e}"),
                        }
                    }
                    _ => {}
                }
                let _ = writeln!(out, "id name misbehave {mode}\nugiok");
            }
            Some("isready") => {
                let _ = writeln!(out, "readyok");
            }
            Some("newgame") => {
                game_name = words.get(1).unwrap_or(&"loa").to_string();
                if mode == "unsupported" {
                    let _ = writeln!(out, "error unsupported game {game_name}");
                }
            }
            Some("position") => {
                let at = words
                    .iter()
                    .position(|w| *w == "moves")
                    .unwrap_or(words.len());
                start = (words.get(1) != Some(&"startpos")).then(|| words[1..at].join(" "));
                moves = words
                    .get(at + 1..)
                    .unwrap_or(&[])
                    .iter()
                    .map(|m| m.to_string())
                    .collect();
            }
            Some("go") => {
                played += 1;
                if played > good_moves {
                    eprintln!("misbehave: now doing '{mode}' at move {played}");
                    match mode.as_str() {
                        "crash" | "env" | "net" => std::process::exit(3),
                        "hang" => continue,
                        "none" => {
                            let _ = writeln!(out, "bestmove none");
                            let _ = out.flush();
                            continue;
                        }
                        "illegal" => {
                            let _ = writeln!(out, "bestmove a1-a1");
                            let _ = out.flush();
                            continue;
                        }
                        "junk" => {
                            let _ = writeln!(out, "¿what?\ninfo depth banana\nbestmove !!!");
                            let _ = out.flush();
                            continue;
                        }
                        "close" => {
                            let _ = out.flush();
                            // SAFETY: fd 1 is this process's stdout, used through no other handle
                            // from here on; closing it is the behaviour under test.
                            drop(unsafe {
                                <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(1)
                            });
                            std::thread::sleep(Duration::from_secs(30));
                            return;
                        }
                        "slow" => std::thread::sleep(Duration::from_secs(3)),
                        "fork" => {
                            // A duration no other process sleeps: how the test finds it
                            // (its pid may be one of a PID namespace of the engine's own).
                            let nanos = std::time::SystemTime::now()
                                .duration_since(std::time::UNIX_EPOCH)
                                .map_or(0, |d| d.subsec_nanos());
                            let marker = format!("1000.{nanos:09}");
                            if std::process::Command::new("sleep")
                                .arg(&marker)
                                .spawn()
                                .is_ok()
                            {
                                eprintln!("child: sleep {marker}");
                            }
                            std::process::exit(3);
                        }
                        "alloc" => {
                            let mut big = vec![0u8; 2 << 30];
                            for i in (0..big.len()).step_by(4096) {
                                big[i] = 1;
                            }
                            eprintln!("allocated {}", big.len());
                        }
                        "flood" => {
                            let chunk = vec![b'x'; 1 << 20];
                            let mut err = std::io::stderr();
                            for _ in 0..50 {
                                let _ = err.write_all(&chunk);
                            }
                            continue;
                        }
                        "spin" => {
                            let mut x = 0u64;
                            loop {
                                x = std::hint::black_box(x.wrapping_add(1));
                            }
                        }
                        _ => {}
                    }
                }
                let mv = match game_name.as_str() {
                    "amazons" => random_move::<Amazons>(start.as_deref(), &moves, played as u64),
                    _ => random_move::<Loa>(start.as_deref(), &moves, played as u64),
                };
                let _ = writeln!(
                    out,
                    "info depth 1 nodes {played}\nbestmove {}",
                    mv.unwrap_or_else(|| "none".into())
                );
            }
            Some("quit") => break,
            _ => {}
        }
        let _ = out.flush();
    }
}
