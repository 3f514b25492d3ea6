//! The game-agnostic interface: [`Position`], sides, outcomes.

use std::fmt;
use std::hash::Hash;
use std::str::FromStr;

use crate::error::{IllegalMoveError, MoveError, ParseError};

/// A side. Black moves first in LOA, White in Amazons.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Black (`b` in position strings).
    Black,
    /// White (`w` in position strings).
    White,
}

impl Color {
    /// Both colours, Black first (the order of [`Color::index`]).
    pub const ALL: [Color; 2] = [Color::Black, Color::White];

    /// 0 for Black, 1 for White.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The other side.
    pub const fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// `b` or `w`, as in position strings.
    pub const fn letter(self) -> char {
        match self {
            Color::Black => 'b',
            Color::White => 'w',
        }
    }
}

impl std::ops::Not for Color {
    type Output = Color;
    fn not(self) -> Color {
        self.opponent()
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Color::Black => "black",
            Color::White => "white",
        })
    }
}

/// Which game a position belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameKind {
    /// Lines of Action, 8×8.
    Loa,
    /// Amazons, 10×10.
    Amazons,
}

impl GameKind {
    /// The name used on the command line and in configs: `loa` or `amazons`.
    pub const fn name(self) -> &'static str {
        match self {
            GameKind::Loa => "loa",
            GameKind::Amazons => "amazons",
        }
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for GameKind {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        match s.to_ascii_lowercase().as_str() {
            "loa" | "lines-of-action" => Ok(GameKind::Loa),
            "amazons" => Ok(GameKind::Amazons),
            _ => Err(ParseError::whole(format!(
                "unknown game '{s}': expected 'loa' or 'amazons'"
            ))),
        }
    }
}

/// Why a game ended under the rules (adjudications and forfeits live above this crate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// LOA: a side's pieces form one group.
    Connection,
    /// Amazons: the side to move has no complete turn.
    NoMoves,
    /// LOA: the third occurrence of the same board with the same side to move.
    Repetition,
}

impl EndReason {
    /// Lower-case name used in game records: `connection`, `no-moves`, `repetition`.
    pub const fn name(self) -> &'static str {
        match self {
            EndReason::Connection => "connection",
            EndReason::NoMoves => "no-moves",
            EndReason::Repetition => "repetition",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Color>,
    /// What ended the game.
    pub reason: EndReason,
}

impl Outcome {
    /// The result as `1-0` (White won), `0-1` (Black won) or `1/2-1/2`.
    pub const fn result_str(self) -> &'static str {
        match self.winner {
            Some(Color::White) => "1-0",
            Some(Color::Black) => "0-1",
            None => "1/2-1/2",
        }
    }
}

/// A position of one game: board plus side to move, no history.
///
/// Required methods are the game-specific core; the provided ones are the same for every
/// game. Move generation yields nothing once the position is decided (for the rules alone,
/// without history), so [`crate::perft`] and playouts need no special cases.
pub trait Position:
    Copy + Eq + Hash + fmt::Debug + fmt::Display + FromStr<Err = ParseError> + Send + Sync + 'static
{
    /// A move (an LOA step or pass, an Amazons turn with its arrow).
    type Move: Copy
        + Eq
        + Hash
        + fmt::Debug
        + fmt::Display
        + FromStr<Err = ParseError>
        + Send
        + Sync
        + 'static;
    /// Rule options fixed for a whole game (LOA's double-connection rule).
    type Rules: Copy
        + Eq
        + Default
        + fmt::Debug
        + fmt::Display
        + FromStr<Err = ParseError>
        + Send
        + Sync
        + 'static;

    /// Which game this is.
    const GAME: GameKind;

    /// The start position under the default rules.
    fn start() -> Self;

    /// The start position under `rules` (Amazons: of the board size they give).
    fn start_for(rules: Self::Rules) -> Self {
        let _ = rules;
        Self::start()
    }

    /// Whether this is a board of the game `rules` describe (Amazons: of their size).
    fn fits(&self, rules: Self::Rules) -> bool {
        let _ = rules;
        true
    }

    /// The side to move.
    fn turn(&self) -> Color;

    /// Zobrist hash of board and side to move, maintained incrementally.
    fn zobrist_hash(&self) -> u64;

    /// The outcome if the position is decided by the rules alone (without history).
    fn outcome(&self, rules: Self::Rules) -> Option<Outcome>;

    /// Whether the position is decided, whatever the rule options.
    fn is_game_over(&self) -> bool;

    /// Calls `f` with every legal move (none once the game is over).
    fn generate_moves(&self, f: impl FnMut(Self::Move));

    /// The number of legal moves, without listing them.
    fn count_moves(&self) -> u64;

    /// A uniformly random legal move, chosen by the 64 random bits in `random`;
    /// `None` once the game is over.
    fn random_move(&self, random: u64) -> Option<Self::Move>;

    /// Plays `mv`, which must be legal.
    ///
    /// # Panics
    /// May panic or corrupt the position if `mv` is not legal here; use [`Position::play`]
    /// for moves from outside.
    fn play_unchecked(&mut self, mv: Self::Move);

    /// The same board with the other side to move: a null move, which searches use to
    /// bound a position cheaply (never a move of the game).
    fn pass_turn(&self) -> Self;

    /// Whether `mv` is legal here, exactly as written (an LOA capture must be marked).
    fn is_legal(&self, mv: Self::Move) -> bool;

    /// Whether playing `mv` makes every earlier position impossible to recur
    /// (an LOA capture, every Amazons turn), which bounds the repetition search.
    fn is_irreversible(&self, mv: Self::Move) -> bool;

    /// Parses move text and checks it against the position, returning the legal move
    /// (for LOA with its capture mark set from the board: `-` and `x` are both accepted).
    ///
    /// # Errors
    /// [`MoveError::Parse`] for malformed text, [`MoveError::Illegal`] for a move the
    /// rules do not allow here.
    fn parse_move(&self, text: &str) -> Result<Self::Move, MoveError>;

    /// All legal moves in generation order.
    fn legal_moves(&self) -> Vec<Self::Move> {
        let mut moves = Vec::with_capacity(64);
        self.generate_moves(|m| moves.push(m));
        moves
    }

    /// The position after `mv`, or an error naming the move if it is not legal.
    ///
    /// # Errors
    /// [`IllegalMoveError`] if `mv` is not legal here.
    fn play(&self, mv: Self::Move) -> Result<Self, IllegalMoveError> {
        if !self.is_legal(mv) {
            return Err(self.illegal(mv));
        }
        let mut next = *self;
        next.play_unchecked(mv);
        Ok(next)
    }

    /// The error for playing `mv` here.
    fn illegal(&self, mv: Self::Move) -> IllegalMoveError {
        IllegalMoveError {
            mv: mv.to_string(),
            position: self.to_string(),
        }
    }
}
