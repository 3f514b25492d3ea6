//! Protocol dialects: the shapes of engine protocol that outside programs speak besides
//! tourney's own, as translations of its commands and messages. Plain data, no I/O: the
//! runner writes each [`Command`] through [`Dialect::line`] and reads each line through
//! [`Dialect::message`]; `tourney engine --protocol` reads through [`Dialect::incoming`]
//! and writes through [`Dialect::outgoing`].
//!
//! - `ugi` (cutegames' game-agnostic UCI): `uginewgame`, `position fen <string>`, clocks as
//!   `p1time`/`p2time`/`p1inc`/`p2inc` where p1 is the side that moves first in the game
//!   (LOA: Black; Amazons: White), and `query gameover|p1turn|result`.
//! - `uci` (UCI as LOA programs such as LOABot speak it): `uci`/`uciok`, `ucinewgame`,
//!   `position fen <placement> <colour>`, moves without separators (`b1b3`, Amazons
//!   `d1d7g7`), `bestmove (none)` when the game is over.
//!
//! Both take a [`Spelling`] for programs whose letters or moves differ from tourney's
//! (`uci:pieces=Ll,turn=wb` for LOABot, `uci:moves=separated` for Amazons programs that
//! write `d1-d7/g7`).
//!
//! Two shapes are not line for line translations of tourney's commands, and the runner
//! drives them turn by turn instead ([`Dialect::speaks_commands`] is false):
//! - `codingame` ([`codingame`]): the whole situation written each turn, one move back;
//! - `gtp` ([`gtp`]): Amazons over the Go Text Protocol, a turn as three GTP moves.

pub mod codingame;
pub mod gtp;

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use tourney_rules::{Color, GameKind, Position, with_position};

use crate::protocol::{Command, Go, Message, parse_message};

/// A protocol an outside engine speaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// tourney's own (`docs/engine-protocol.md`).
    #[default]
    Tourney,
    /// UGI, the game-agnostic UCI of cutegames.
    Ugi(Spelling),
    /// UCI as LOA programs speak it.
    Uci(Spelling),
    /// CodinGame's per-turn input ([`codingame`]).
    CodinGame,
    /// GTP for Amazons ([`gtp`]).
    Gtp {
        /// GTP's colour of the side that moves first (black unless `gtp:first=white`).
        first: Color,
    },
}

impl Dialect {
    /// Every dialect (GTP with its default colours).
    pub const ALL: [Dialect; 5] = [
        Dialect::Tourney,
        Dialect::Ugi(Spelling::UGI),
        Dialect::Uci(Spelling::UCI),
        Dialect::CodinGame,
        Dialect::Gtp {
            first: Color::Black,
        },
    ];

    /// Its name, as tournament files and `--protocol` write it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Tourney => "tourney",
            Dialect::Ugi(_) => "ugi",
            Dialect::Uci(_) => "uci",
            Dialect::CodinGame => "codingame",
            Dialect::Gtp { .. } => "gtp",
        }
    }

    /// Whether it is spoken as tourney's commands translated line for line (`tourney`,
    /// `ugi`, `uci`); the others are driven turn by turn.
    pub fn speaks_commands(self) -> bool {
        matches!(self, Dialect::Tourney | Dialect::Ugi(_) | Dialect::Uci(_))
    }

    /// The line an engine of this dialect reads for `command` in `game`; `None` for a
    /// command the dialect has no word for (UCI's `bench`).
    pub fn line(self, command: &Command, game: GameKind) -> Option<String> {
        match (self, command) {
            (Dialect::CodinGame | Dialect::Gtp { .. }, _) => None,
            (Dialect::Tourney, _) => Some(command.to_string()),
            (Dialect::Ugi(_), Command::NewGame { .. }) => Some("uginewgame".into()),
            (Dialect::Uci(_), Command::NewGame { .. }) => Some("ucinewgame".into()),
            (Dialect::Uci(_), Command::Ugi) => Some("uci".into()),
            (Dialect::Uci(_), Command::Bench { .. }) => None,
            (_, Command::Position { start, moves }) => {
                // Written straight into one string: this line grows with the game and is
                // sent every move.
                let mut line =
                    String::with_capacity(32 + moves.iter().map(|m| m.len() + 1).sum::<usize>());
                let spelling = self.spelling().unwrap_or(Spelling::UGI);
                match start {
                    Some(s) => {
                        line += "position fen ";
                        spelling.write_position(s, &mut line);
                    }
                    None => line += "position startpos",
                }
                if !moves.is_empty() {
                    line += " moves";
                    for m in moves {
                        line.push(' ');
                        match spelling.compact {
                            true => line.extend(m.split(['-', 'x', '/'])),
                            false => line += m,
                        }
                    }
                }
                Some(line)
            }
            (Dialect::Ugi(_), Command::Go(go)) => Some(ugi_go(go, first_mover(game))),
            _ => Some(command.to_string()),
        }
    }

    /// What a line an engine of this dialect wrote means.
    pub fn message(self, line: &str) -> Message {
        match (self, line.trim()) {
            (Dialect::Uci(_), "uciok") => Message::UgiOk,
            _ => parse_message(line),
        }
    }

    /// Whether its moves may be written without separators (`b1b3`): read back with
    /// [`canonical_move`].
    pub fn compact_moves(self) -> bool {
        !matches!(self, Dialect::Tourney)
    }

    /// How it writes positions and moves, for the UCI family.
    pub fn spelling(self) -> Option<Spelling> {
        match self {
            Dialect::Ugi(s) | Dialect::Uci(s) => Some(s),
            _ => None,
        }
    }

    /// A line a runner of this dialect sent, as tourney's own protocol says it (for
    /// `tourney engine --protocol`): `None` for a line to answer apart (`query`).
    /// A line that needs no translation is returned as it is, without a copy (the
    /// `position` of every move is the longest line of a session).
    pub fn incoming(self, line: &str, game: GameKind) -> Option<Cow<'_, str>> {
        let line = line.trim();
        let word = line.split_whitespace().next().unwrap_or_default();
        match (self, word) {
            (Dialect::Tourney, _) => Some(Cow::Borrowed(line)),
            (Dialect::Uci(_), "uci") => Some(Cow::Borrowed("ugi")),
            (Dialect::Uci(_), "ucinewgame") | (Dialect::Ugi(_), "uginewgame") => {
                Some(Cow::Owned(format!("newgame {game}")))
            }
            // `position fen <string> ...` read as `position <string> ...`: the same line
            // from its fourth character on, with `position` written over `fen`.
            (_, "position") => Some(match line.strip_prefix("position fen ") {
                Some(rest) => Cow::Owned(format!("position {rest}")),
                None => Cow::Borrowed(line),
            }),
            (Dialect::Ugi(_), "go") => Some(Cow::Owned(tourney_go(line, first_mover(game)))),
            (Dialect::Ugi(_), "query") => None,
            _ => Some(Cow::Borrowed(line)),
        }
    }

    /// A line tourney's own protocol says, as an engine of this dialect writes it (for
    /// `tourney engine --protocol`).
    /// A line that needs no translation (an `info`) is returned as it is, without a copy.
    pub fn outgoing(self, line: &str) -> Cow<'_, str> {
        match self {
            Dialect::Uci(_) => match line {
                "ugiok" => Cow::Borrowed("uciok"),
                "bestmove none" => Cow::Borrowed("bestmove (none)"),
                _ => match line.strip_prefix("bestmove ") {
                    Some(mv) => Cow::Owned(format!("bestmove {}", compact_move(mv))),
                    None => Cow::Borrowed(line),
                },
            },
            _ => Cow::Borrowed(line),
        }
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dialect::Gtp {
                first: Color::White,
            } => f.write_str("gtp:first=white"),
            Dialect::Ugi(s) => s.write_options("ugi", Spelling::UGI, f),
            Dialect::Uci(s) => s.write_options("uci", Spelling::UCI, f),
            _ => f.write_str(self.name()),
        }
    }
}

impl FromStr for Dialect {
    type Err = String;

    /// A protocol as [`tourney_model::source::check_protocol`] accepts it: a name, and
    /// its options ([`tourney_model::source::protocol_options`]).
    fn from_str(text: &str) -> Result<Self, String> {
        let (name, options) = tourney_model::source::protocol_options(text)?;
        let dialect = Dialect::ALL
            .into_iter()
            .find(|d| d.name() == name)
            .expect("checked above");
        Ok(match dialect {
            Dialect::Gtp { .. } if options.contains(&("first", "white")) => Dialect::Gtp {
                first: Color::White,
            },
            Dialect::Ugi(s) => Dialect::Ugi(s.with(&options)),
            Dialect::Uci(s) => Dialect::Uci(s.with(&options)),
            _ => dialect,
        })
    }
}

/// How a program of the UCI family writes positions and moves: its letters for tourney's
/// pieces and side to move, and whether its moves have separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Spelling {
    /// Its letters for tourney's `b`, `w` and `x` (a black piece, a white piece, an
    /// Amazons arrow).
    pub pieces: [u8; 3],
    /// Its letters for Black to move and White to move.
    pub turn: [u8; 2],
    /// Whether its moves are written without separators (`b1b3`, `d1d7g7`).
    pub compact: bool,
}

impl Spelling {
    /// UGI's: tourney's letters and moves.
    pub const UGI: Spelling = Spelling {
        pieces: *b"bwx",
        turn: *b"bw",
        compact: false,
    };
    /// UCI's: tourney's letters, moves without separators.
    pub const UCI: Spelling = Spelling {
        compact: true,
        ..Spelling::UGI
    };

    /// This spelling with checked `options` (`pieces`, `turn`, `moves`) applied.
    fn with(mut self, options: &[(&str, &str)]) -> Spelling {
        for &(key, value) in options {
            let bytes = value.as_bytes();
            match key {
                "pieces" => self.pieces[..bytes.len()].copy_from_slice(bytes),
                "turn" => self.turn.copy_from_slice(bytes),
                "moves" => self.compact = value == "compact",
                _ => {}
            }
        }
        self
    }

    /// `name` with the options where this spelling differs from `default`.
    fn write_options(
        self,
        name: &str,
        default: Spelling,
        f: &mut fmt::Formatter<'_>,
    ) -> fmt::Result {
        let mut options = Vec::new();
        if self.pieces != default.pieces {
            let arrow = self.pieces[2] != default.pieces[2];
            let letters = &self.pieces[..if arrow { 3 } else { 2 }];
            options.push(format!("pieces={}", String::from_utf8_lossy(letters)));
        }
        if self.turn != default.turn {
            options.push(format!("turn={}", String::from_utf8_lossy(&self.turn)));
        }
        if self.compact != default.compact {
            let moves = if self.compact { "compact" } else { "separated" };
            options.push(format!("moves={moves}"));
        }
        match options.is_empty() {
            true => f.write_str(name),
            false => write!(f, "{name}:{}", options.join(",")),
        }
    }

    /// Writes tourney's position string `position` in these letters onto `line`.
    fn write_position(self, position: &str, line: &mut String) {
        let (board, turn) = position.rsplit_once(' ').unwrap_or((position, ""));
        line.extend(board.chars().map(|c| match c {
            'b' => char::from(self.pieces[0]),
            'w' => char::from(self.pieces[1]),
            'x' => char::from(self.pieces[2]),
            other => other,
        }));
        line.push(' ');
        line.push(match turn {
            "b" => char::from(self.turn[0]),
            "w" => char::from(self.turn[1]),
            _ => '?',
        });
    }
}

/// A writer of tourney's protocol lines that writes each whole line as `dialect` says it
/// ([`Dialect::outgoing`]): how an engine in a dialect is served.
pub struct DialectWriter<W: Write> {
    inner: W,
    dialect: Dialect,
    pending: Vec<u8>,
}

impl<W: Write> DialectWriter<W> {
    /// Lines to `inner`, translated into `dialect`.
    pub fn new(inner: W, dialect: Dialect) -> Self {
        DialectWriter {
            inner,
            dialect,
            pending: Vec::new(),
        }
    }
}

impl<W: Write> Write for DialectWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        let mut from = 0;
        while let Some(at) = self.pending[from..].iter().position(|&b| b == b'\n') {
            let end = from + at;
            let text = String::from_utf8_lossy(&self.pending[from..end]);
            let said = self.dialect.outgoing(&text);
            self.inner.write_all(said.as_bytes())?;
            self.inner.write_all(b"\n")?;
            from = end + 1;
        }
        self.pending.drain(..from);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// The side that moves first in `game`: UGI's p1.
pub fn first_mover(game: GameKind) -> Color {
    with_position!(game, P => P::start().turn())
}

/// Whether `text` looks like a move written without separators (`b1b3`, `d1d7g7`): letters
/// and digits only, two letters at least, a digit among them (so not `pass` or `none`).
pub fn is_compact(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric())
        && text.bytes().filter(u8::is_ascii_alphabetic).count() >= 2
        && text.bytes().any(|b| b.is_ascii_digit())
}

/// A move without its separators: `b1-b3` and `b1xb3` as `b1b3`, `d1-d7/g7` as `d1d7g7`.
pub fn compact_move(text: &str) -> String {
    text.chars().filter(|&c| !is_separator(c)).collect()
}

/// Whether `c` separates a move's squares in tourney's notation (`-`, `x`, `/`).
pub(crate) fn is_separator(c: char) -> bool {
    matches!(c, '-' | 'x' | '/')
}

/// The move `text` names, in tourney's notation: as written when it is not
/// compact, else with its separators put back (`b1b3` as `b1-b3`, `d1d7g7` as `d1-d7/g7`),
/// legal or not (the referee then says whether it is); text that is neither, as it is.
pub fn canonical_move(text: &str) -> String {
    // Text with a separator (or a word: `pass`) is taken as written.
    if !is_compact(text) {
        return text.to_string();
    }
    match squares_of(text).as_slice() {
        [from, to] => format!("{from}-{to}"),
        [from, to, arrow] => format!("{from}-{to}/{arrow}"),
        _ => text.to_string(),
    }
}

/// The squares a move without separators is made of (`d1d10g7`: `d1`, `d10`, `g7`): each a
/// letter and its digits; empty when the text is not that.
fn squares_of(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut squares = Vec::with_capacity(3);
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        if !bytes[at].is_ascii_lowercase() {
            return Vec::new();
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_digit() {
            at += 1;
        }
        if at == start + 1 {
            return Vec::new();
        }
        squares.push(&text[start..at]);
    }
    squares
}

/// A `go` with clocks as UGI writes them: p1 is `first`.
fn ugi_go(go: &Go, first: Color) -> String {
    let (p1time, p2time, p1inc, p2inc) = match first {
        Color::Black => (go.btime, go.wtime, go.binc, go.winc),
        Color::White => (go.wtime, go.btime, go.winc, go.binc),
    };
    let fields: [(&str, Option<u64>); 8] = [
        ("p1time", p1time),
        ("p2time", p2time),
        ("p1inc", p1inc),
        ("p2inc", p2inc),
        ("movestogo", go.movestogo.map(u64::from)),
        ("movetime", go.movetime),
        ("nodes", go.nodes),
        ("depth", go.depth.map(u64::from)),
    ];
    let mut line = "go".to_string();
    for (name, value) in fields {
        if let Some(v) = value {
            line += &format!(" {name} {v}");
        }
    }
    line
}

/// A UGI `go` line as tourney's own protocol says it: p1 is `first`.
fn tourney_go(line: &str, first: Color) -> String {
    let (p1, p2) = match first {
        Color::Black => ("b", "w"),
        Color::White => ("w", "b"),
    };
    line.split_whitespace()
        .map(|word| match word {
            "p1time" => format!("{p1}time"),
            "p2time" => format!("{p2}time"),
            "p1inc" => format!("{p1}inc"),
            "p2inc" => format!("{p2}inc"),
            other => other.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
