//! Lines of Action on 8×8 bitboards.
//!
//! A move goes exactly as many squares as there are pieces (both colours) on the whole line
//! of its direction; it may jump its own pieces but not enemy ones and may capture by
//! landing on an enemy piece. A side whose pieces form one 8-connected group has
//! connected; see [`Loa::outcome`] for the double-connection option.

mod tables;

use std::fmt;
use std::str::FromStr;

use crate::board_text;
use crate::error::{MoveError, ParseError};
use crate::position::{Color, EndReason, GameKind, Outcome, Position};
use tables::{DELTA, LINE, PIECE_KEYS, RAY, REACH, WHITE_TO_MOVE_KEY, dilate, neighbours};

/// A square of the LOA board (`a1` … `h8`).
pub type Square = crate::square::Square<8>;

/// The most moves an LOA position can have: 12 pieces × 8 directions.
pub const MAX_MOVES: usize = 96;

/// What happens when one move connects both sides at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum DoubleConnection {
    /// The side that just moved wins (Soucie's amended rule).
    #[default]
    MoverWins,
    /// The game is drawn (tournament rule).
    Draw,
}

/// LOA rule options, fixed for a whole game. Text form: `double-connection=mover-wins`
/// (the default) or `double-connection=draw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LoaRules {
    /// The double-connection rule.
    pub double_connection: DoubleConnection,
}

impl fmt::Display for LoaRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.double_connection {
            DoubleConnection::MoverWins => "double-connection=mover-wins",
            DoubleConnection::Draw => "double-connection=draw",
        })
    }
}

impl FromStr for LoaRules {
    type Err = ParseError;

    /// Parses comma-separated `key=value` options; the empty string gives the defaults.
    fn from_str(text: &str) -> Result<Self, ParseError> {
        let mut rules = LoaRules::default();
        let mut column = 1;
        for item in text.split(',') {
            let trimmed = item.trim();
            if !trimmed.is_empty() {
                let (key, value) = trimmed.split_once('=').unwrap_or((trimmed, ""));
                match (key.trim(), value.trim()) {
                    ("double-connection", "mover-wins") => {
                        rules.double_connection = DoubleConnection::MoverWins;
                    }
                    ("double-connection", "draw") => {
                        rules.double_connection = DoubleConnection::Draw;
                    }
                    ("double-connection", other) => {
                        return Err(ParseError::at(
                            column,
                            format!(
                                "double-connection must be 'mover-wins' or 'draw', found '{other}'"
                            ),
                        ));
                    }
                    (other, _) => {
                        return Err(ParseError::at(
                            column,
                            format!("unknown LOA rule option '{other}' (known: double-connection)"),
                        ));
                    }
                }
            }
            column += item.len() + 1;
        }
        Ok(rules)
    }
}

/// An LOA move: a step `from-to` (`fromxto` when it captures) or a forced `pass`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// A piece moves; `capture` is whether it lands on an enemy piece.
    Step {
        /// Start square.
        from: Square,
        /// Landing square.
        to: Square,
        /// Whether an enemy piece is captured on `to`.
        capture: bool,
    },
    /// The forced pass of a side with no legal step.
    Pass,
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Move::Step { from, to, capture } => {
                write!(f, "{from}{}{to}", if *capture { 'x' } else { '-' })
            }
            Move::Pass => f.write_str("pass"),
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Move {
    type Err = ParseError;

    /// Parses `b1-b3`, `d4xf6` or `pass`. The capture mark is taken as written; use
    /// [`Position::parse_move`] to have it set from the board.
    fn from_str(text: &str) -> Result<Self, ParseError> {
        if text == "pass" {
            return Ok(Move::Pass);
        }
        let (from, len) = Square::parse_prefix(text)?;
        let capture = match text.as_bytes().get(len) {
            Some(b'-') => false,
            Some(b'x') => true,
            Some(_) => {
                let found = text[len..].chars().next().unwrap_or_default();
                return Err(ParseError::at(
                    len + 1,
                    format!("expected '-' or 'x', found '{found}'"),
                ));
            }
            None => {
                return Err(ParseError::at(
                    len + 1,
                    "expected '-' or 'x' after the start square",
                ));
            }
        };
        let rest = &text[len + 1..];
        let (to, to_len) = Square::parse_prefix(rest).map_err(|e| e.shifted(len + 1))?;
        if to_len != rest.len() {
            return Err(ParseError::at(
                len + 2 + to_len,
                "unexpected text after the move",
            ));
        }
        Ok(Move::Step { from, to, capture })
    }
}

/// Connection flags kept in [`Loa`].
const BLACK_CONNECTED: u8 = 1;
const WHITE_CONNECTED: u8 = 2;

/// An LOA position: pieces of both sides, side to move, and derived data (Zobrist hash,
/// which sides are connected), all maintained incrementally.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loa {
    pieces: [u64; 2],
    turn: Color,
    connected: u8,
    hash: u64,
}

/// Whether `pieces` (non-empty) form one 8-connected group.
#[inline]
fn is_connected(pieces: u64) -> bool {
    // Cheap rejection: two or more pieces, one of them without a neighbour of its colour.
    if pieces & !neighbours(pieces) != 0 && pieces & (pieces - 1) != 0 {
        return false;
    }
    let mut group = pieces & pieces.wrapping_neg();
    loop {
        let grown = dilate(group) & pieces;
        if grown == group {
            return group == pieces;
        }
        group = grown;
    }
}

impl Loa {
    /// A position from the pieces of each side (bit `i` = square index `i`) and the side
    /// to move.
    ///
    /// # Errors
    /// If the sides overlap, or a side has no pieces or more than 12.
    pub fn from_bitboards(black: u64, white: u64, turn: Color) -> Result<Loa, ParseError> {
        if black & white != 0 {
            return Err(ParseError::whole(
                "a square holds both a black and a white piece",
            ));
        }
        for (color, bb) in [(Color::Black, black), (Color::White, white)] {
            let n = bb.count_ones();
            if n == 0 {
                return Err(ParseError::whole(format!("{color} has no pieces")));
            }
            if n > 12 {
                return Err(ParseError::whole(format!(
                    "{color} has {n} pieces, at most 12"
                )));
            }
        }
        let mut hash = if turn == Color::White {
            WHITE_TO_MOVE_KEY
        } else {
            0
        };
        for color in Color::ALL {
            let mut bb = [black, white][color.index()];
            while bb != 0 {
                hash ^= PIECE_KEYS[color.index()][bb.trailing_zeros() as usize];
                bb &= bb - 1;
            }
        }
        let mut connected = 0;
        if is_connected(black) {
            connected |= BLACK_CONNECTED;
        }
        if is_connected(white) {
            connected |= WHITE_CONNECTED;
        }
        Ok(Loa {
            pieces: [black, white],
            turn,
            connected,
            hash,
        })
    }

    /// The pieces of `color` as a bitboard (bit `i` = square index `i`).
    pub fn pieces(&self, color: Color) -> u64 {
        self.pieces[color.index()]
    }

    /// The colour of the piece on `square`, if any.
    pub fn piece_at(&self, square: Square) -> Option<Color> {
        let bit = 1u64 << square.index();
        Color::ALL
            .into_iter()
            .find(|c| self.pieces[c.index()] & bit != 0)
    }

    /// Whether all pieces of `color` form one 8-connected group.
    pub fn is_connected(&self, color: Color) -> bool {
        self.connected & (1 << color.index()) != 0
    }

    /// Calls `f(from, to, capture, legal)` for every piece and direction; the steps with
    /// `legal` set are the legal ones (no pass, no game-over check). `to` is meaningless
    /// for the others.
    #[inline(always)]
    fn for_each_step(&self, f: impl FnMut(usize, usize, bool, bool)) {
        self.for_each_step_of(self.turn, f);
    }

    /// As [`Loa::for_each_step`] for the pieces of `us`, whoever is to move.
    #[inline(always)]
    fn for_each_step_of(&self, us: Color, mut f: impl FnMut(usize, usize, bool, bool)) {
        let own = self.pieces[us.index()];
        let enemy = self.pieces[us.opponent().index()];
        let occupied = own | enemy;
        let mut rest = own;
        while rest != 0 {
            let from = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            for (line, mask) in LINE[from].iter().enumerate() {
                let distance = (occupied & mask).count_ones();
                for dir in [2 * line, 2 * line + 1] {
                    // Branch-free on purpose: whether a move exists is unpredictable, so the
                    // checks are combined into one flag that the caller accumulates.
                    let on_board = distance <= REACH[from][dir] as u32;
                    let to = (from as i32 + DELTA[dir] * distance as i32) as usize & 63;
                    let to_bit = 1u64 << to;
                    let between = RAY[from][dir] ^ RAY[to][dir] ^ to_bit;
                    let legal = on_board & (own & to_bit == 0) & (enemy & between == 0);
                    f(from, to, enemy & to_bit != 0, legal);
                }
            }
        }
    }

    /// Number of legal steps (no pass, no game-over check).
    #[inline(always)]
    fn count_steps(&self) -> u64 {
        let mut n = 0;
        self.for_each_step(|_, _, _, legal| n += legal as u64);
        n
    }

    /// The number of steps `color` could make here if it were to move (its mobility),
    /// whether or not the game is over.
    pub fn mobility(&self, color: Color) -> u32 {
        let mut n = 0;
        self.for_each_step_of(color, |_, _, _, legal| n += legal as u32);
        n
    }

    /// The legal moves into a fixed-size buffer; returns how many.
    #[inline]
    pub fn moves_into(&self, buf: &mut [Move; MAX_MOVES]) -> usize {
        if self.is_game_over() {
            return 0;
        }
        let mut n = 0;
        self.for_each_step(|from, to, capture, legal| {
            // Written unconditionally, kept only if legal (branch-free).
            buf[n] = Move::Step {
                from: Square::from_index_unchecked(from),
                to: Square::from_index_unchecked(to),
                capture,
            };
            n += legal as usize;
        });
        if n == 0 {
            buf[0] = Move::Pass;
            n = 1;
        }
        n
    }
}

impl Position for Loa {
    type Move = Move;
    type Rules = LoaRules;
    const GAME: GameKind = GameKind::Loa;

    fn start() -> Self {
        const BLACK: u64 = 0x7e00_0000_0000_007e;
        const WHITE: u64 = 0x0081_8181_8181_8100;
        // The start position is valid by construction.
        Loa::from_bitboards(BLACK, WHITE, Color::Black).expect("start position is valid")
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn zobrist_hash(&self) -> u64 {
        self.hash
    }

    /// Exactly one side connected wins, even if it did not move. Both connected: under
    /// [`DoubleConnection::MoverWins`] the side that just moved (not the side to move) wins,
    /// under [`DoubleConnection::Draw`] it is a draw.
    fn outcome(&self, rules: LoaRules) -> Option<Outcome> {
        let winner = match self.connected {
            0 => return None,
            BLACK_CONNECTED => Some(Color::Black),
            WHITE_CONNECTED => Some(Color::White),
            _ => match rules.double_connection {
                DoubleConnection::MoverWins => Some(self.turn.opponent()),
                DoubleConnection::Draw => None,
            },
        };
        Some(Outcome {
            winner,
            reason: EndReason::Connection,
        })
    }

    #[inline(always)]
    fn is_game_over(&self) -> bool {
        self.connected != 0
    }

    #[inline]
    fn generate_moves(&self, mut f: impl FnMut(Move)) {
        if self.is_game_over() {
            return;
        }
        let mut any = false;
        self.for_each_step(|from, to, capture, legal| {
            if legal {
                any = true;
                f(Move::Step {
                    from: Square::from_index_unchecked(from),
                    to: Square::from_index_unchecked(to),
                    capture,
                });
            }
        });
        if !any {
            f(Move::Pass);
        }
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        if self.is_game_over() {
            return 0;
        }
        self.count_steps().max(1)
    }

    fn random_move(&self, random: u64) -> Option<Move> {
        let mut buf = [Move::Pass; MAX_MOVES];
        let n = self.moves_into(&mut buf);
        (n > 0).then(|| buf[((random as u128 * n as u128) >> 64) as usize])
    }

    #[inline]
    fn play_unchecked(&mut self, mv: Move) {
        let us = self.turn.index();
        let them = 1 - us;
        if let Move::Step { from, to, .. } = mv {
            let (from, to) = (from.index(), to.index());
            self.pieces[us] ^= (1 << from) | (1 << to);
            self.hash ^= PIECE_KEYS[us][from] ^ PIECE_KEYS[us][to];
            let mut connected = self.connected & !(1 << us);
            if is_connected(self.pieces[us]) {
                connected |= 1 << us;
            }
            if self.pieces[them] & (1 << to) != 0 {
                self.pieces[them] ^= 1 << to;
                self.hash ^= PIECE_KEYS[them][to];
                connected &= !(1 << them);
                if is_connected(self.pieces[them]) {
                    connected |= 1 << them;
                }
            }
            self.connected = connected;
        }
        self.turn = self.turn.opponent();
        self.hash ^= WHITE_TO_MOVE_KEY;
    }

    fn pass_turn(&self) -> Self {
        Loa {
            turn: self.turn.opponent(),
            hash: self.hash ^ WHITE_TO_MOVE_KEY,
            ..*self
        }
    }

    fn is_legal(&self, mv: Move) -> bool {
        if self.is_game_over() {
            return false;
        }
        let Move::Step { from, to, capture } = mv else {
            return self.count_steps() == 0;
        };
        // Only the lines through `from` can hold the step: the one whose direction leads
        // to `to` at the line's piece count.
        let (from, to) = (from.index(), to.index());
        let own = self.pieces[self.turn.index()];
        let enemy = self.pieces[self.turn.opponent().index()];
        if own & (1 << from) == 0 {
            return false;
        }
        let occupied = own | enemy;
        for (line, mask) in LINE[from].iter().enumerate() {
            let distance = (occupied & mask).count_ones();
            for dir in [2 * line, 2 * line + 1] {
                if distance > REACH[from][dir] as u32
                    || (from as i32 + DELTA[dir] * distance as i32) as usize != to
                {
                    continue;
                }
                let to_bit = 1u64 << to;
                let between = RAY[from][dir] ^ RAY[to][dir] ^ to_bit;
                return own & to_bit == 0
                    && enemy & between == 0
                    && capture == (enemy & to_bit != 0);
            }
        }
        false
    }

    fn is_irreversible(&self, mv: Move) -> bool {
        matches!(mv, Move::Step { to, .. } if self.pieces[self.turn.opponent().index()] & (1 << to.index()) != 0)
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let written: Move = text.parse()?;
        let canonical = match written {
            Move::Step { from, to, .. } => Move::Step {
                from,
                to,
                capture: self.piece_at(to) == Some(self.turn.opponent()),
            },
            Move::Pass => Move::Pass,
        };
        if self.is_legal(canonical) {
            Ok(canonical)
        } else {
            Err(self.illegal(written).into())
        }
    }
}

impl fmt::Display for Loa {
    /// The position string, e.g. `1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&board_text::format(8, self.turn, |i| {
            let bit = 1u64 << i;
            if self.pieces[0] & bit != 0 {
                Some(b'b')
            } else if self.pieces[1] & bit != 0 {
                Some(b'w')
            } else {
                None
            }
        }))
    }
}

impl fmt::Debug for Loa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Loa(\"{self}\")")
    }
}

impl FromStr for Loa {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let parsed = board_text::parse(text, 8, b"bw")?;
        Loa::from_bitboards(
            parsed.pieces[0] as u64,
            parsed.pieces[1] as u64,
            parsed.turn,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connectivity_of_simple_shapes() {
        assert!(is_connected(1));
        assert!(is_connected(0b11));
        assert!(!is_connected(0b101));
        // Diagonal neighbours connect: a1 and b2.
        assert!(is_connected(1 | (1 << 9)));
        // h1 and a2 are not neighbours (no wrap-around).
        assert!(!is_connected((1 << 7) | (1 << 8)));
        assert!(!is_connected(Loa::start().pieces(Color::Black)));
    }

    #[test]
    fn rules_options_parse_and_print() {
        assert_eq!("".parse::<LoaRules>().unwrap(), LoaRules::default());
        let draw: LoaRules = "double-connection=draw".parse().unwrap();
        assert_eq!(draw.double_connection, DoubleConnection::Draw);
        assert_eq!(draw.to_string().parse::<LoaRules>().unwrap(), draw);
        let err = "double-connection=maybe".parse::<LoaRules>().unwrap_err();
        assert!(err.to_string().contains("'maybe'"), "{err}");
        let err = "double-connection=draw,speed=fast"
            .parse::<LoaRules>()
            .unwrap_err();
        assert_eq!(err.column, Some(24));
    }
}
