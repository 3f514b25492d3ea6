//! A test engine that speaks the engine protocol and misbehaves on purpose.
//!
//! `misbehave <mode> [moves]`: plays `moves` legal random moves (default 2), then:
//! - `good`: keeps playing legal moves;
//! - `crash`: exits with status 3 when asked for a move;
//! - `hang`: never answers `go`;
//! - `illegal`: answers a move that is not legal;
//! - `junk`: writes junk lines, then an unparsable `bestmove`;
//! - `close`: closes its stdout and stays alive;
//! - `slow`: thinks for 3 seconds per move;
//! - `nohandshake`: never finishes the handshake;
//! - `unsupported`: refuses every game with `error unsupported`.
//! - `env`: at the handshake, writes to stderr `env: NAME,NAME,...` (its environment's
//!   names) and `cwd: <its working directory>`; exits as `crash` does;
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
        let named = tourney_runner::dialect::canonical_move(game.position(), mv);
        game.play_text(&named).ok()?;
    }
    game.position()
        .random_move(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .map(|m| m.to_string())
}

fn main() {
    let mut args: Vec<String> = std::env::args().collect();
    let dialect: Dialect = match args.iter().position(|a| a == "--protocol") {
        Some(at) if at + 1 < args.len() => {
            let name = args.remove(at + 1);
            args.remove(at);
            name.parse().unwrap_or_default()
        }
        _ => Dialect::Tourney,
    };
    let mode = args.get(1).cloned().unwrap_or_else(|| "good".into());
    let good_moves: usize = match mode.as_str() {
        "net" => 2,
        _ => args.get(2).and_then(|n| n.parse().ok()).unwrap_or(2),
    };
    let stdin = std::io::stdin();
    let mut out = DialectWriter::new(std::io::stdout(), dialect);
    let mut game_name = String::from("loa");
    let mut start: Option<String> = None;
    let mut moves: Vec<String> = Vec::new();
    let mut played = 0usize;
    eprintln!("misbehave: mode {mode}");
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
