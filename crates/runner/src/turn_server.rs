//! Serving a built-in player in the turn-by-turn shapes (`tourney engine --protocol
//! codingame|gtp`): the reference implementations that the runner's CodinGame and GTP
//! drivers, and `tourney check-engine`, are tested against.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tourney_ai::{Heuristics, Limits, Player, PlayerSpec};
use tourney_rules::{Amazons, Color, Game, GameKind, Loa};

use crate::dialect::{Dialect, canonical_move, codingame, compact_move, first_mover, gtp};

/// Serves `spec` in `dialect` (CodinGame or GTP) for `game`; `movetime` is what a move
/// takes when the runner says nothing of time.
///
/// # Errors
/// Reading or writing failed, the input is not the dialect's, or the dialect is not a
/// turn-by-turn one (or GTP with LOA).
pub fn serve(
    spec: &PlayerSpec,
    dialect: Dialect,
    game: GameKind,
    movetime: Duration,
    input: impl Read,
    output: &mut dyn Write,
) -> io::Result<()> {
    let input = BufReader::with_capacity(64 << 10, input);
    match (dialect, game) {
        (Dialect::CodinGame, GameKind::Loa) => {
            serve_codingame::<Loa>(spec, movetime, input, output)
        }
        (Dialect::CodinGame, GameKind::Amazons) => {
            serve_codingame::<Amazons>(spec, movetime, input, output)
        }
        (Dialect::Gtp { first }, GameKind::Amazons) => {
            serve_gtp::<Amazons>(spec, first, movetime, input, output)
        }
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{dialect} is not served turn by turn for {game}"),
        )),
    }
}

/// A built-in player and the game it plays, for one session.
struct Seat<P: Heuristics> {
    player: Box<dyn Player<P>>,
    game: Game<P>,
    /// What a move may take when the runner says nothing of time.
    movetime: Duration,
}

impl<P: Heuristics> Seat<P> {
    fn new(spec: &PlayerSpec, movetime: Duration) -> Result<Self, String> {
        let mut player = spec.build::<P>().map_err(|e| e.0)?;
        player.new_game(0);
        Ok(Seat {
            player,
            game: Game::new(P::start(), P::Rules::default()),
            movetime,
        })
    }

    /// The player's move in the current game within `limits`.
    fn choose(&mut self, limits: &Limits) -> P::Move {
        let stop = AtomicBool::new(false);
        self.player
            .choose(&self.game, limits, &stop, &mut |_| {})
            .mv
    }

    fn movetime_limits(&self) -> Limits {
        Limits {
            movetime: Some(self.movetime),
            ..Limits::default()
        }
    }
}

fn read_trimmed(input: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut line = String::new();
    Ok((input.read_line(&mut line)? > 0).then(|| line.trim().to_string()))
}

/// Plays as a CodinGame bot: reads the initial input, then each turn's situation, and
/// answers each with a move, until the input ends.
///
/// # Errors
/// Reading or writing failed, or the input is not what a CodinGame referee sends.
pub fn serve_codingame<P: Heuristics>(
    spec: &PlayerSpec,
    movetime: Duration,
    mut input: impl BufRead,
    output: &mut dyn Write,
) -> io::Result<()> {
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let mut seat = Seat::<P>::new(spec, movetime).map_err(bad)?;
    let Some(size) = read_trimmed(&mut input)? else {
        return Ok(());
    };
    let size: usize = size
        .parse()
        .map_err(|_| bad(format!("board size: '{size}'")))?;
    // Amazons on 8×8 says so in its rules; LOA has no size option.
    let rules: P::Rules = format!("size={size}").parse().unwrap_or_default();
    let mut colour = None;
    if P::GAME == tourney_rules::GameKind::Loa {
        colour = read_trimmed(&mut input)?;
    }
    loop {
        if P::GAME == tourney_rules::GameKind::Amazons {
            colour = read_trimmed(&mut input)?;
        }
        let Some(letter) = colour.clone() else {
            return Ok(());
        };
        let turn = match letter.as_str() {
            "w" => Color::White,
            "b" => Color::Black,
            other => return Err(bad(format!("colour: '{other}'"))),
        };
        let mut rows = Vec::with_capacity(size);
        for _ in 0..size {
            match read_trimmed(&mut input)? {
                Some(row) => rows.push(row),
                None => return Ok(()),
            }
        }
        let last = read_trimmed(&mut input)?.unwrap_or_default();
        let count = read_trimmed(&mut input)?.unwrap_or_default();
        let count: usize = count
            .parse()
            .map_err(|_| bad(format!("move count: '{count}'")))?;
        for _ in 0..count {
            input.skip_until(b'\n')?;
        }
        let text = codingame::position_text(&rows, turn);
        let position: P = text
            .parse()
            .map_err(|e| bad(format!("board '{text}': {e}")))?;
        // The game goes on from the last one when the opponent's move leads here (so that
        // repetitions count); else it starts at this board.
        let mut next = seat.game.clone();
        let follows = last != "null"
            && next.play_text(&canonical_move(&last)).is_ok()
            && *next.position() == position;
        seat.game = if follows {
            next
        } else {
            Game::new(position, rules)
        };
        let mv = seat.choose(&seat.movetime_limits());
        writeln!(output, "{}", compact_move(&mv.to_string()))?;
        output.flush()?;
        let _ = seat.game.play(mv);
    }
}

/// What a GTP session keeps besides the game: the squares of a turn being told (`play`)
/// or being given out (`genmove`), and the time it was given.
struct GtpSession<P: Heuristics> {
    seat: Seat<P>,
    /// The rules of `boardsize` (Amazons: the size).
    rules: P::Rules,
    /// The board's size (squares a side).
    size: usize,
    first: Color,
    played: Vec<String>,
    to_give: VecDeque<String>,
    per_turn: Option<Duration>,
    left: Option<Duration>,
}

impl<P: Heuristics> GtpSession<P> {
    /// Starts a game on a `size`×`size` board; false when the game has no such board.
    fn set_board(&mut self, size: &str) -> bool {
        let text = if size == "10" {
            String::new()
        } else {
            format!("size={size}")
        };
        let Ok(rules) = text.parse::<P::Rules>() else {
            return false;
        };
        let sides = codingame::rows(&P::start_for(rules).to_string()).len();
        if sides.to_string() != size {
            return false;
        }
        self.rules = rules;
        self.size = sides;
        self.clear();
        true
    }

    fn clear(&mut self) {
        self.seat.game = Game::new(P::start_for(self.rules), self.rules);
        self.seat.player.new_game(0);
        self.played.clear();
        self.to_give.clear();
    }

    /// The side a GTP colour word names.
    fn side(&self, word: &str) -> Option<Color> {
        let gtp_black = match word.to_ascii_lowercase().as_str() {
            "b" | "black" => true,
            "w" | "white" => false,
            _ => return None,
        };
        let p1 = first_mover(P::GAME);
        Some(if gtp_black == (self.first == Color::Black) {
            p1
        } else {
            p1.opponent()
        })
    }

    /// The answer to one command: `Ok(text)` or `Err(error)`.
    fn answer(&mut self, command: &str, args: &[&str]) -> Result<String, String> {
        match (command, args) {
            ("protocol_version", _) => Ok("2".into()),
            ("name", _) => Ok("tourney".into()),
            ("version", _) => Ok(env!("CARGO_PKG_VERSION").into()),
            ("known_command", [what]) => Ok(COMMANDS.contains(what).to_string()),
            ("list_commands", _) => Ok(COMMANDS.join("\n")),
            ("boardsize", [n]) if self.set_board(n) => Ok(String::new()),
            ("boardsize", _) => Err("unacceptable size".into()),
            ("clear_board", _) => {
                self.clear();
                Ok(String::new())
            }
            ("komi", _) | ("quit", _) => Ok(String::new()),
            ("time_settings", [main, byo, stones]) => {
                let (main, byo, stones): (u64, u64, u64) = (
                    main.parse().map_err(|_| "syntax error")?,
                    byo.parse().map_err(|_| "syntax error")?,
                    stones.parse().map_err(|_| "syntax error")?,
                );
                self.per_turn =
                    (main == 0 && stones > 0).then(|| Duration::from_secs(byo * 3 / stones));
                self.left = (main > 0).then(|| Duration::from_secs(main));
                Ok(String::new())
            }
            ("time_left", [_, secs, _]) => {
                self.left = Some(Duration::from_secs(
                    secs.parse().map_err(|_| "syntax error")?,
                ));
                Ok(String::new())
            }
            ("play", [colour, vertex]) => {
                self.side(colour).ok_or("syntax error")?;
                let square = gtp::square(vertex)
                    .filter(|s| gtp::on_board(s, self.size))
                    .ok_or("invalid coordinate")?;
                self.played.push(square);
                if self.played.len() == 3 {
                    let text = std::mem::take(&mut self.played).concat();
                    let named = canonical_move(&text);
                    self.seat
                        .game
                        .play_text(&named)
                        .map_err(|_| "illegal move".to_string())?;
                }
                Ok(String::new())
            }
            ("genmove", [colour]) => {
                let side = self.side(colour).ok_or("syntax error")?;
                if let Some(square) = self.to_give.pop_front() {
                    return Ok(gtp::vertex(&square).unwrap_or(square));
                }
                if self.seat.game.outcome().is_some() {
                    return Ok("resign".into());
                }
                if side != self.seat.game.position().turn() {
                    return Err("not this colour's turn".into());
                }
                let limits = self.limits();
                let mv = self.seat.choose(&limits);
                self.seat.game.play(mv).map_err(|e| e.to_string())?;
                self.to_give = gtp::turn_squares(&mv.to_string()).into();
                let square = self.to_give.pop_front().unwrap_or_default();
                Ok(gtp::vertex(&square).unwrap_or(square))
            }
            _ => Err("unknown command".into()),
        }
    }

    /// The limits of a turn: a share of the time left, the time per turn, or the default.
    fn limits(&self) -> Limits {
        let movetime = match (self.per_turn, self.left) {
            (Some(turn), _) => turn.mul_f64(0.8),
            (None, Some(left)) => left / 30,
            (None, None) => return self.seat.movetime_limits(),
        };
        Limits {
            movetime: Some(movetime.max(Duration::from_millis(10))),
            ..Limits::default()
        }
    }
}

/// The commands the GTP reference answers.
const COMMANDS: [&str; 13] = [
    "protocol_version",
    "name",
    "version",
    "known_command",
    "list_commands",
    "boardsize",
    "clear_board",
    "komi",
    "play",
    "genmove",
    "time_settings",
    "time_left",
    "quit",
];

/// Plays as a GTP program until `quit` or the end of the input. `first` is GTP's colour of
/// the side that moves first. Answers are flushed once no command is waiting, so that a
/// turn's commands sent together are answered in one write.
///
/// # Errors
/// Reading or writing failed, or the player cannot play this game.
pub fn serve_gtp<P: Heuristics>(
    spec: &PlayerSpec,
    first: Color,
    movetime: Duration,
    mut input: BufReader<impl Read>,
    output: &mut dyn Write,
) -> io::Result<()> {
    let seat = Seat::<P>::new(spec, movetime)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut session = GtpSession {
        seat,
        rules: P::Rules::default(),
        size: codingame::rows(&P::start().to_string()).len(),
        first,
        played: Vec::new(),
        to_give: VecDeque::new(),
        per_turn: None,
        left: None,
    };
    while let Some(line) = read_trimmed(&mut input)? {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() || line.starts_with('#') {
            continue;
        }
        let id = words[0]
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| words.remove(0));
        let Some((&command, args)) = words.split_first() else {
            continue;
        };
        let (sign, text) = match session.answer(command, args) {
            Ok(text) => ('=', text),
            Err(why) => ('?', why),
        };
        let id = id.unwrap_or_default();
        match text.is_empty() {
            true => write!(output, "{sign}{id}\n\n")?,
            false => write!(output, "{sign}{id} {text}\n\n")?,
        }
        // Commands sent together (a turn's `play`s and `genmove`s) are answered together.
        if input.buffer().is_empty() {
            output.flush()?;
        }
        if command == "quit" {
            break;
        }
    }
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Input that arrives in the chunks given, one a read (as from a pipe).
    struct Chunks(VecDeque<&'static [u8]>);

    impl Read for Chunks {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let Some(chunk) = self.0.pop_front() else {
                return Ok(0);
            };
            buf[..chunk.len()].copy_from_slice(chunk);
            Ok(chunk.len())
        }
    }

    /// Output that notes how much was written at each flush.
    #[derive(Default)]
    struct Flushes {
        written: Vec<u8>,
        at: Vec<usize>,
    }

    impl Write for Flushes {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.written.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            self.at.push(self.written.len());
            Ok(())
        }
    }

    #[test]
    fn gtp_commands_sent_together_are_answered_in_one_write() {
        let spec: PlayerSpec = "random".parse().unwrap();
        let input = Chunks(VecDeque::from([
            &b"protocol_version\n"[..],
            b"play b D1\nplay b D7\nplay b G7\ngenmove w\ngenmove w\ngenmove w\n",
        ]));
        let mut output = Flushes::default();
        let input = BufReader::new(input);
        serve_gtp::<Amazons>(
            &spec,
            Color::Black,
            Duration::from_millis(5),
            input,
            &mut output,
        )
        .unwrap();
        let text = String::from_utf8(output.written).unwrap();
        let answers: Vec<&str> = text.split("\n\n").filter(|a| !a.is_empty()).collect();
        assert_eq!(answers.len(), 7, "{text}");
        assert_eq!(answers[..4], ["= 2", "=", "=", "="]);
        // The first answer went out alone (nothing else was waiting); the turn's six in one.
        assert_eq!(output.at[0], "= 2\n\n".len());
        assert_eq!(output.at[1], text.len(), "{:?}", output.at);
    }
}
