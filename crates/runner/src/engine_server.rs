//! Serving a built-in player over the engine protocol (`tourney engine <spec>`), so that
//! tourney's players and outside engines are driven the same way and other programs can
//! use tourney's AI.
//!
//! Cheap per move: one search thread for the whole session (a player that never needs
//! `stop`, `random`, answers on the protocol thread), the player built once per game kind
//! and kept across `newgame`, the position advanced by the moves that are new since the
//! last `position`, and the input read into one reused line.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tourney_ai::{Heuristics, Player, PlayerSpec, SearchInfo};
use tourney_rules::{Amazons, Game, GameKind, Loa, Position};

use crate::contestant::limits_for;
use crate::dialect::{Dialect, DialectWriter, canonical_move, first_mover, is_compact};
use crate::protocol::{Command, Go, Info, parse_command};

type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Output, line: &str) {
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    // A closed stdout ends the session at the next read; nothing to do here.
    let _ = out.write_all(line.as_bytes());
    let _ = out.write_all(b"\n");
    let _ = out.flush();
}

/// What a session shares with its search thread: the player and the game.
struct Shared<P: Heuristics> {
    player: Mutex<Box<dyn Player<P>>>,
    game: Mutex<Option<Game<P>>>,
    stop: AtomicBool,
    out: Output,
}

impl<P: Heuristics> Shared<P> {
    /// Searches the current game within `limits` and answers `bestmove`.
    fn search(&self, limits: &tourney_ai::Limits) {
        let game = self.game.lock().unwrap_or_else(|e| e.into_inner());
        let Some(game) = game.as_ref() else {
            return;
        };
        let mut player = self.player.lock().unwrap_or_else(|e| e.into_inner());
        let line = |info: &SearchInfo<P::Move>, time: Duration| {
            Info {
                depth: Some(info.depth),
                seldepth: Some(info.seldepth),
                score: info.score.map(|s| s.to_string()),
                nodes: Some(info.nodes),
                nps: Some(info.nps()),
                time: Some(time.as_millis() as u64),
                pv: info.pv.iter().map(ToString::to_string).collect(),
            }
            .to_string()
        };
        let report = |info: &SearchInfo<P::Move>| say(&self.out, &line(info, info.time));
        let started = Instant::now();
        let result = player.choose(game, limits, &self.stop, &mut { report });
        // The search's last word, with its whole time: what a runner sets against its own
        // measure of the move (the difference is the protocol's and the process's latency).
        say(&self.out, &line(&result.info, started.elapsed()));
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = writeln!(out, "bestmove {}", result.mv);
        let _ = out.flush();
    }
}

/// A session's search thread, started with its first search: searches are handed to it
/// by their limits.
struct SearchThread {
    limits: Sender<tourney_ai::Limits>,
    done: Receiver<()>,
    handle: JoinHandle<()>,
}

/// The player for one game kind, kept across `newgame`, and the game being played.
struct Session<P: Heuristics> {
    shared: Arc<Shared<P>>,
    rules: P::Rules,
    /// Searches on the protocol thread: the player never needs `stop` (`random`).
    inline: bool,
    thread: Option<SearchThread>,
    /// A search is under way on the thread.
    busy: bool,
    /// The moves of the game after its start, as the last `position` wrote them.
    played: String,
    /// The start of the game as the last `position` wrote it (empty: the start position).
    start: String,
}

/// What the server cannot do for the runner: said on the protocol (`error unsupported
/// ...`, or `info string error: ...`), never fatal to the session.
#[derive(Debug, thiserror::Error)]
enum SessionError {
    /// The player cannot be built for this game.
    #[error("{0}")]
    Player(String),
    /// A game the server does not know.
    #[error("game {0}")]
    UnknownGame(String),
    /// Rule options it does not know.
    #[error("{0}")]
    Rules(tourney_rules::ParseError),
    /// A `position` before any `newgame`.
    #[error("position before newgame")]
    NoGame,
    /// A start position that does not parse.
    #[error("position '{start}': {error}")]
    Position {
        /// The position string given.
        start: String,
        /// What is wrong with it.
        error: tourney_rules::ParseError,
    },
    /// A move that is not legal or not a move.
    #[error("move '{mv}': {error}")]
    Move {
        /// The move given.
        mv: String,
        /// What is wrong with it.
        error: String,
    },
}

impl<P: Heuristics> Session<P> {
    fn new(spec: &PlayerSpec, out: &Output) -> Result<Self, SessionError> {
        let player = spec.build::<P>().map_err(|e| SessionError::Player(e.0))?;
        Ok(Session {
            shared: Arc::new(Shared {
                player: Mutex::new(player),
                game: Mutex::new(None),
                stop: AtomicBool::new(false),
                out: Arc::clone(out),
            }),
            rules: P::Rules::default(),
            inline: spec.kind == tourney_ai::Kind::Random,
            thread: None,
            busy: false,
            played: String::new(),
            start: String::new(),
        })
    }

    /// Stops the search under way, if any, and waits for its answer.
    fn finish(&mut self) {
        if let (true, Some(t)) = (self.busy, &self.thread) {
            self.shared.stop.store(true, Ordering::Relaxed);
            let _ = t.done.recv();
        }
        self.busy = false;
    }

    fn game(&self) -> std::sync::MutexGuard<'_, Option<Game<P>>> {
        self.shared.game.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn new_game(&mut self, rules: &[String]) -> Result<(), SessionError> {
        self.finish();
        self.rules = rules.join(",").parse().map_err(SessionError::Rules)?;
        *self.game() = None;
        self.shared
            .player
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .new_game(0);
        Ok(())
    }

    /// `genfens`: `n` openings from `seed` on the board of the game's rules.
    fn genfens(&self, n: u32, seed: u64) -> Vec<String> {
        (tourney_ai::genfens::genfens(P::start_for(self.rules), n, seed).iter())
            .map(ToString::to_string)
            .collect()
    }

    /// Sets the position of a `position` line's arguments (`startpos` or a position string,
    /// then `moves ...`): when it extends the last one, only the new moves are played.
    fn position(&mut self, args: &str) -> Result<(), SessionError> {
        self.finish();
        let (start, moves) = match args.split_once(" moves") {
            Some((start, moves)) => (start.trim(), moves.trim()),
            None => (args.trim(), ""),
        };
        let start = if start == "startpos" { "" } else { start };
        let mut game = self.shared.game.lock().unwrap_or_else(|e| e.into_inner());
        let extends = game.is_some()
            && self.start == start
            && moves.starts_with(self.played.as_str())
            && (moves.len() == self.played.len()
                || self.played.is_empty()
                || moves.as_bytes()[self.played.len()] == b' ');
        let new = if extends {
            &moves[self.played.len()..]
        } else {
            let position: P = if start.is_empty() {
                P::start_for(self.rules)
            } else {
                start.parse().map_err(|error| SessionError::Position {
                    start: start.to_string(),
                    error,
                })?
            };
            *game = Some(Game::new(position, self.rules));
            self.start.clear();
            self.start.push_str(start);
            self.played.clear();
            moves
        };
        let current = game.as_mut().expect("set above");
        for mv in new.split_whitespace() {
            // A move without separators (a UCI dialect's `b1b3`) is the legal move it names.
            let played = if is_compact(mv) {
                current.play_text(&canonical_move(mv))
            } else {
                current.play_text(mv)
            };
            if let Err(e) = played {
                *game = None;
                return Err(SessionError::Move {
                    mv: mv.to_string(),
                    error: e.to_string(),
                });
            }
            if !self.played.is_empty() {
                self.played.push(' ');
            }
            self.played.push_str(mv);
        }
        Ok(())
    }

    /// The answer to a UGI `query` (`gameover`, `p1turn`, `result`), p1 being the side that
    /// moves first.
    fn query(&self, what: &str) -> String {
        let game = self.game();
        let Some(game) = game.as_ref() else {
            return "response none".into();
        };
        let p1 = first_mover(P::GAME);
        let answer = match what {
            "gameover" => game.outcome().is_some().to_string(),
            "p1turn" => (game.position().turn() == p1).to_string(),
            "result" => match game.outcome() {
                None => "none".into(),
                Some(o) => match o.winner {
                    None => "draw".into(),
                    Some(w) if w == p1 => "p1win".into(),
                    Some(_) => "p2win".into(),
                },
            },
            _ => "none".into(),
        };
        format!("response {answer}")
    }

    fn go(&mut self, go: &Go) {
        self.finish();
        let out = &self.shared.out;
        let limits = match self.game().as_ref() {
            None => {
                say(out, "info string error: go without a position");
                return;
            }
            Some(game) if game.outcome().is_some() => {
                say(out, "info string error: the game is over");
                say(out, "bestmove none");
                return;
            }
            Some(game) => limits_for(go, game.position().turn()),
        };
        self.shared.stop.store(false, Ordering::Relaxed);
        if self.inline {
            self.shared.search(&limits);
            return;
        }
        let thread = self.thread.get_or_insert_with(|| {
            let (limits, take) = channel::<tourney_ai::Limits>();
            let (done, finished) = channel();
            let shared = Arc::clone(&self.shared);
            let handle = std::thread::spawn(move || {
                for limits in take {
                    shared.search(&limits);
                    if done.send(()).is_err() {
                        break;
                    }
                }
            });
            SearchThread {
                limits,
                done: finished,
                handle,
            }
        });
        self.busy = thread.limits.send(limits).is_ok();
    }
}

impl<P: Heuristics> Drop for Session<P> {
    /// Lets the search under way answer, then ends the search thread.
    fn drop(&mut self) {
        if let (true, Some(t)) = (self.busy, &self.thread) {
            let _ = t.done.recv();
        }
        if let Some(t) = self.thread.take() {
            drop(t.limits);
            let _ = t.handle.join();
        }
    }
}

enum AnySession {
    Loa(Session<Loa>),
    Amazons(Session<Amazons>),
}

impl AnySession {
    fn kind(&self) -> GameKind {
        match self {
            AnySession::Loa(_) => GameKind::Loa,
            AnySession::Amazons(_) => GameKind::Amazons,
        }
    }
}

/// Runs the protocol for the built-in player `spec` until `quit` or the end of the input.
///
/// # Errors
/// Reading the input failed.
pub fn serve(
    spec: &PlayerSpec,
    input: impl BufRead,
    output: Box<dyn Write + Send>,
) -> io::Result<()> {
    serve_dialect(spec, Dialect::Tourney, GameKind::Loa, input, output)
}

/// [`serve`] in `dialect`: what its runner sends is read as tourney's protocol says it, and
/// what the player answers is written as the dialect says it. `game` is the game of a
/// dialect's new game (`ucinewgame`, `uginewgame`), which does not name one.
///
/// # Errors
/// Reading the input failed.
pub fn serve_dialect(
    spec: &PlayerSpec,
    dialect: Dialect,
    game: GameKind,
    mut input: impl BufRead,
    output: Box<dyn Write + Send>,
) -> io::Result<()> {
    // UGI writes what tourney's protocol writes: only UCI's answers are translated.
    let output: Box<dyn Write + Send> = match dialect {
        Dialect::Uci(_) => Box::new(DialectWriter::new(output, dialect)),
        _ => output,
    };
    let out: Output = Arc::new(Mutex::new(output));
    let mut session: Option<AnySession> = None;
    let mut unsupported: Option<SessionError> = None;
    let mut line = String::new();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        let text = line.trim_end();
        let translated;
        let text = if dialect == Dialect::Tourney {
            text
        } else if let Some(what) = text.strip_prefix("query ") {
            let answer = match session.as_ref() {
                Some(AnySession::Loa(s)) => s.query(what.trim()),
                Some(AnySession::Amazons(s)) => s.query(what.trim()),
                None => "response none".into(),
            };
            say(&out, &answer);
            continue;
        } else {
            match dialect.incoming(text, game) {
                Some(t) => {
                    translated = t;
                    &*translated
                }
                None => continue,
            }
        };
        // The line of every move, read without building a command.
        if let Some(args) = text.strip_prefix("position ") {
            let result = match session.as_mut() {
                Some(AnySession::Loa(s)) => s.position(args),
                Some(AnySession::Amazons(s)) => s.position(args),
                None => Err(SessionError::NoGame),
            };
            if let Err(why) = result {
                say(&out, &format!("info string error: {why}"));
            }
            continue;
        }
        let Some(command) = parse_command(text) else {
            continue;
        };
        match command {
            Command::Ugi => {
                say(&out, &format!("id name tourney {spec}"));
                say(&out, "id author the tourney developers");
                say(&out, "ugiok");
            }
            Command::IsReady => match unsupported.take() {
                Some(why) => say(&out, &format!("error unsupported {why}")),
                None => say(&out, "readyok"),
            },
            Command::SetOption { .. } | Command::Position { .. } => {}
            Command::NewGame { game, rules } => {
                let kind: Option<GameKind> = game.parse().ok();
                // The player is built once per game kind and kept across games.
                if kind.is_some() && session.as_ref().map(AnySession::kind) != kind {
                    drop(session.take());
                    session = match kind {
                        Some(GameKind::Loa) => Session::new(spec, &out).map(AnySession::Loa),
                        _ => Session::new(spec, &out).map(AnySession::Amazons),
                    }
                    .map_err(|why| unsupported = Some(why))
                    .ok();
                }
                let ready = match (kind, session.as_mut()) {
                    (None, _) => Err(SessionError::UnknownGame(game)),
                    (_, None) => Ok(()),
                    (_, Some(AnySession::Loa(s))) => s.new_game(&rules),
                    (_, Some(AnySession::Amazons(s))) => s.new_game(&rules),
                };
                if let Err(why) = ready {
                    session = None;
                    unsupported = Some(why);
                }
            }
            Command::Go(go) => match session.as_mut() {
                Some(AnySession::Loa(s)) => s.go(&go),
                Some(AnySession::Amazons(s)) => s.go(&go),
                None => say(&out, "info string error: go before newgame"),
            },
            Command::Bench { game } => {
                let kind = match game.as_deref().map(str::parse::<GameKind>) {
                    Some(Ok(kind)) => kind,
                    Some(Err(_)) => {
                        say(
                            &out,
                            &format!(
                                "info string error: bench of an unknown game {:?}",
                                game.unwrap_or_default()
                            ),
                        );
                        continue;
                    }
                    None => session.as_ref().map_or(GameKind::Loa, AnySession::kind),
                };
                // The search under way (if any) answers first: one search at a time.
                match session.as_mut() {
                    Some(AnySession::Loa(s)) => s.finish(),
                    Some(AnySession::Amazons(s)) => s.finish(),
                    None => {}
                }
                let measured = match kind {
                    GameKind::Loa => tourney_ai::bench::bench::<Loa>(spec),
                    GameKind::Amazons => tourney_ai::bench::bench::<Amazons>(spec),
                };
                match measured {
                    Ok(b) => say(&out, &format!("bench nodes {} nps {}", b.nodes, b.nps())),
                    Err(e) => say(&out, &format!("info string error: bench: {e}")),
                }
            }
            Command::GenFens { n, seed, .. } => {
                // Random plies from the start of the last `newgame`'s game and rules (else
                // LOA's); a book is not read.
                let positions = match session.as_ref() {
                    Some(AnySession::Loa(s)) => s.genfens(n, seed),
                    Some(AnySession::Amazons(s)) => s.genfens(n, seed),
                    None => (tourney_ai::genfens::genfens(Loa::start(), n, seed).iter())
                        .map(ToString::to_string)
                        .collect(),
                };
                for position in positions {
                    say(&out, &format!("info string genfens {position}"));
                }
            }
            Command::Stop => match session.as_mut() {
                Some(AnySession::Loa(s)) => s.finish(),
                Some(AnySession::Amazons(s)) => s.finish(),
                None => {}
            },
            Command::Quit => {
                if let Some(AnySession::Loa(s)) = session.as_mut() {
                    s.finish();
                }
                if let Some(AnySession::Amazons(s)) = session.as_mut() {
                    s.finish();
                }
                return Ok(());
            }
        }
    }
    // End of input without `quit`: the running search finishes and answers (the session's
    // drop waits for it).
    Ok(())
}
