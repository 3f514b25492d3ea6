//! Serving a built-in player over the engine protocol (`tourney engine <spec>`), so that
//! tourney's players and outside engines are driven the same way and other programs can
//! use tourney's AI.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tourney_ai::{Heuristics, Player, PlayerSpec, SearchInfo};
use tourney_rules::{Amazons, Game, Loa};

use crate::contestant::limits_for;
use crate::protocol::{Command, Go, Info, parse_command};

type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn say(out: &Output, line: &str) {
    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
    // A closed stdout ends the session at the next read; nothing to do here.
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// One game's state: the player built for it, the rules, the current game.
struct Session<P: Heuristics> {
    player: Arc<Mutex<Box<dyn Player<P>>>>,
    rules: P::Rules,
    game: Option<Game<P>>,
}

impl<P: Heuristics> Session<P> {
    fn new(spec: &PlayerSpec, rules: &[String]) -> Result<Self, String> {
        let rules: P::Rules = rules
            .join(",")
            .parse()
            .map_err(|e: tourney_rules::ParseError| e.to_string())?;
        let player = spec.build::<P>().map_err(|e| e.0)?;
        Ok(Session {
            player: Arc::new(Mutex::new(player)),
            rules,
            game: None,
        })
    }

    fn position(&mut self, start: Option<String>, moves: &[String]) -> Result<(), String> {
        let start: P = match start {
            Some(text) => text
                .parse()
                .map_err(|e: tourney_rules::ParseError| format!("position '{text}': {e}"))?,
            None => P::start(),
        };
        let mut game = Game::new(start, self.rules);
        for mv in moves {
            game.play_text(mv)
                .map_err(|e| format!("move '{mv}': {e}"))?;
        }
        self.game = Some(game);
        Ok(())
    }

    fn go(&self, go: &Go, stop: Arc<AtomicBool>, out: Output) -> Option<JoinHandle<()>> {
        let Some(game) = self.game.clone() else {
            say(&out, "info string error: go without a position");
            return None;
        };
        if game.outcome().is_some() {
            say(&out, "info string error: the game is over");
            say(&out, "bestmove none");
            return None;
        }
        let limits = limits_for(go, game.position().turn());
        let player = Arc::clone(&self.player);
        Some(std::thread::spawn(move || {
            let mut player = player.lock().unwrap_or_else(|e| e.into_inner());
            let report = |info: &SearchInfo<P::Move>| {
                let line = Info {
                    depth: Some(info.depth),
                    seldepth: Some(info.seldepth),
                    score: info.score.map(|s| s.to_string()),
                    nodes: Some(info.nodes),
                    nps: Some(info.nps()),
                    time: Some(info.time.as_millis() as u64),
                    pv: info.pv.iter().map(ToString::to_string).collect(),
                };
                say(&out, &line.to_string());
            };
            let result = player.choose(&game, &limits, &stop, &mut { report });
            say(&out, &format!("bestmove {}", result.mv));
        }))
    }

    fn new_game(&self) {
        self.player
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .new_game(0);
    }
}

enum AnySession {
    Loa(Session<Loa>),
    Amazons(Session<Amazons>),
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
    let out: Output = Arc::new(Mutex::new(output));
    let stop = Arc::new(AtomicBool::new(false));
    let mut search: Option<JoinHandle<()>> = None;
    let mut session: Option<AnySession> = None;
    let mut unsupported: Option<String> = None;
    let finish = |search: &mut Option<JoinHandle<()>>, stop: &Arc<AtomicBool>| {
        if let Some(handle) = search.take() {
            stop.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
    };
    for line in input.lines() {
        let line = line?;
        let Some(command) = parse_command(&line) else {
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
            Command::SetOption { .. } => {}
            Command::NewGame { game, rules } => {
                finish(&mut search, &stop);
                let built = match game.as_str() {
                    "loa" => Session::<Loa>::new(spec, &rules).map(AnySession::Loa),
                    "amazons" => Session::<Amazons>::new(spec, &rules).map(AnySession::Amazons),
                    other => Err(format!("game {other}")),
                };
                match built {
                    Ok(s) => {
                        match &s {
                            AnySession::Loa(s) => s.new_game(),
                            AnySession::Amazons(s) => s.new_game(),
                        }
                        session = Some(s);
                    }
                    Err(why) => {
                        session = None;
                        unsupported = Some(why);
                    }
                }
            }
            Command::Position { start, moves } => {
                finish(&mut search, &stop);
                let result = match session.as_mut() {
                    Some(AnySession::Loa(s)) => s.position(start, &moves),
                    Some(AnySession::Amazons(s)) => s.position(start, &moves),
                    None => Err("position before newgame".into()),
                };
                if let Err(why) = result {
                    say(&out, &format!("info string error: {why}"));
                }
            }
            Command::Go(go) => {
                finish(&mut search, &stop);
                stop.store(false, Ordering::Relaxed);
                search = match &session {
                    Some(AnySession::Loa(s)) => s.go(&go, Arc::clone(&stop), Arc::clone(&out)),
                    Some(AnySession::Amazons(s)) => s.go(&go, Arc::clone(&stop), Arc::clone(&out)),
                    None => {
                        say(&out, "info string error: go before newgame");
                        None
                    }
                };
            }
            Command::Stop => finish(&mut search, &stop),
            Command::Quit => {
                finish(&mut search, &stop);
                return Ok(());
            }
        }
    }
    // End of input without `quit`: let the running search finish and answer.
    if let Some(handle) = search.take() {
        let _ = handle.join();
    }
    Ok(())
}
