//! The checks of the turn-by-turn shapes: a CodinGame bot's turns, and a GTP program's
//! commands and whole Amazons turns in three `genmove`s.

use std::time::{Duration, Instant};

use tourney_rules::{Amazons, Game, GameKind, Loa, Position, with_position};

use super::{LOA_BLACK_PASS, MARGIN, Probe, Step, from, legal, quit, walk};
use crate::dialect::{Dialect, codingame, compact_move, gtp};

/// The checks of a CodinGame bot: turns of one game, then the forced pass.
pub(super) fn codingame_checks(game: GameKind) -> Vec<Step> {
    let mut steps: Vec<Step> = vec![
        ("first turn within 1000 ms", |p| {
            with_position!(p.game, P => {
                let game = walk::<P>(0);
                let size = codingame::rows(&game.position().to_string()).len();
                let mut lines = codingame::initial_input(p.game, size, game.position().turn());
                lines.push(codingame::turn_input(&game).text());
                p.send(lines.join("\n"))?;
                let started = Instant::now();
                let answer = p.line(Duration::from_millis(1000), "move")?;
                let mv = legal(&game, codingame::answer(&answer))?;
                p.last = mv.clone();
                Ok(format!("{mv} in {} ms", started.elapsed().as_millis()))
            })
        }),
        ("later turns within 150 ms", |p| {
            with_position!(p.game, P => {
                // The bot moved first from the start; the game goes on from its move, an
                // answer of the other side, and so on for four turns.
                let mut game = walk::<P>(0);
                game.play_text(&p.last).map_err(|e| e.to_string())?;
                let mut slowest = 0;
                for i in 0..4u64 {
                    let Some(reply) = game.position().random_move(i.wrapping_mul(0x9e37_79b9) + 1) else { break };
                    game.play(reply).map_err(|e| e.to_string())?;
                    if game.outcome().is_some() { break; }
                    p.send(codingame::turn_input(&game).text())?;
                    let started = Instant::now();
                    let answer = p.line(Duration::from_millis(150), "move")?;
                    slowest = slowest.max(started.elapsed().as_millis());
                    let mv = legal(&game, codingame::answer(&answer))?;
                    game.play_text(&mv).map_err(|e| e.to_string())?;
                    if game.outcome().is_some() { break; }
                }
                Ok(format!("slowest {slowest} ms"))
            })
        }),
    ];
    if game == GameKind::Loa {
        steps.push(("a forced pass", |p| {
            let game = from::<Loa>(LOA_BLACK_PASS);
            p.send(codingame::turn_input(&game).text())?;
            let answer = p.line(Duration::from_millis(150) + MARGIN, "move")?;
            legal(&game, codingame::answer(&answer))
        }));
    }
    steps
}

/// The checks of a GTP program (Amazons).
pub(super) fn gtp_checks() -> Vec<Step> {
    vec![
        ("protocol_version", |p| {
            gtp_ask(p, "protocol_version").map(|v| format!("version {v}"))
        }),
        ("name and version", |p| {
            let name = gtp_ask(p, "name")?;
            let version = gtp_ask(p, "version")?;
            Ok(format!("{name} {version}"))
        }),
        ("list_commands has play and genmove", |p| {
            gtp_ask(p, "list_commands")?;
            let listed: Vec<String> = (p.log.iter().filter_map(|l| l.strip_prefix("< ")))
                .map(|l| l.trim_start_matches('=').trim().to_string())
                .collect();
            for needed in ["play", "genmove", "boardsize", "clear_board"] {
                if !listed.iter().any(|c| c == needed) {
                    return Err(format!("'{needed}' is not listed"));
                }
            }
            Ok("listed".into())
        }),
        ("boardsize and clear_board", |p| {
            gtp_ask(p, "boardsize 10")?;
            gtp_ask(p, "clear_board").map(|_| "ok".into())
        }),
        ("genmove: a whole turn", |p| {
            let game = walk::<Amazons>(0);
            gtp_turn(p, &game, Side::First)
        }),
        ("play: the opponent's turn", |p| {
            gtp_ask(p, "clear_board")?;
            let mut game = walk::<Amazons>(0);
            let first = game.position().random_move(11).ok_or("no turn")?;
            let colour = gtp_colour(p, Side::First);
            for square in gtp::turn_squares(&first.to_string()) {
                gtp_ask(
                    p,
                    &format!("play {colour} {}", gtp::vertex(&square).unwrap_or(square)),
                )?;
            }
            game.play(first).map_err(|e| e.to_string())?;
            gtp_turn(p, &game, Side::Second)
        }),
        ("an off-board play is refused", |p| {
            let colour = gtp_colour(p, Side::First);
            match gtp_ask(p, &format!("play {colour} Z99")) {
                Err(why) if why.contains("refused") => Ok("refused".into()),
                Err(why) => Err(why),
                Ok(_) => Err(format!("'play {colour} Z99' taken: Z99 is off the board")),
            }
        }),
        ("time_settings and time_left", |p| {
            gtp_ask(p, "time_settings 0 1 3")?;
            gtp_ask(p, "time_left b 1 3").map(|_| "ok".into())
        }),
        ("quit", quit),
    ]
}

/// Sends a GTP command and reads its whole answer, to the empty line that ends it: its
/// first line's text, or why it failed.
fn gtp_ask(p: &mut Probe, command: &str) -> Result<String, String> {
    p.send(command.to_string())?;
    // The whole answer within the patience, however many lines it has.
    let until = Instant::now() + p.patience;
    let left = || until.saturating_duration_since(Instant::now());
    let answer = loop {
        let line = p.line(left(), &format!("answer to '{command}'"))?;
        if let Some(answer) = gtp::answer(&line) {
            break answer.map(String::from).map_err(String::from);
        }
    };
    while !p
        .line(
            left(),
            &format!("the end of the answer to '{command}' (an empty line)"),
        )?
        .trim()
        .is_empty()
    {}
    answer.map_err(|why| format!("'{command}' refused: {why}"))
}

/// The side that moves first or second.
#[derive(Clone, Copy)]
enum Side {
    First,
    Second,
}

/// The GTP colour word of `side` in the probe's dialect.
fn gtp_colour(p: &Probe, side: Side) -> &'static str {
    let Dialect::Gtp { first } = p.dialect else {
        return "b";
    };
    let mover = tourney_rules::Color::White;
    let who = match side {
        Side::First => mover,
        Side::Second => mover.opponent(),
    };
    gtp::colour(who, mover, first)
}

/// Three `genmove`s of `side`: a legal turn of `game`.
fn gtp_turn(p: &mut Probe, game: &Game<Amazons>, side: Side) -> Result<String, String> {
    let colour = gtp_colour(p, side);
    let mut squares = Vec::new();
    for _ in 0..3 {
        let vertex = gtp_ask(p, &format!("genmove {colour}"))?;
        squares.push(gtp::square(&vertex).unwrap_or(vertex));
    }
    legal(game, &compact_move(&squares.concat()))
}
