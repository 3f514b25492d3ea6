//! Error types shared by both games.

use std::fmt;

/// Text that could not be parsed: a square, a move, a position string or a rules option.
///
/// `column` is the 1-based character column in the parsed text where the problem starts,
/// when the problem has a place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What is wrong, e.g. `unknown square 'k3'`.
    pub message: String,
    /// 1-based column of the offending text, if the problem has a place.
    pub column: Option<usize>,
}

impl ParseError {
    pub(crate) fn at(column: usize, message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            column: Some(column),
        }
    }

    pub(crate) fn whole(message: impl Into<String>) -> Self {
        ParseError {
            message: message.into(),
            column: None,
        }
    }

    /// The same error with its column moved right by `offset` characters, for text that
    /// was parsed as part of a longer string.
    pub(crate) fn shifted(mut self, offset: usize) -> Self {
        self.column = self.column.map(|c| c + offset);
        self
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.column {
            Some(column) => write!(f, "{} at column {column}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParseError {}

/// A well-formed move that the rules do not allow in the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IllegalMoveError {
    /// The rejected move, in notation.
    pub mv: String,
    /// The position it was tried in, as a position string.
    pub position: String,
}

impl fmt::Display for IllegalMoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "illegal move '{}' in position '{}'",
            self.mv, self.position
        )
    }
}

impl std::error::Error for IllegalMoveError {}

/// Why move text was rejected: it did not parse, or it is not legal in the position.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MoveError {
    /// The text is not a move in the game's notation.
    Parse(ParseError),
    /// The move is well formed but not legal here.
    Illegal(IllegalMoveError),
    /// The game is already over (by the rules or by repetition): no move is legal.
    GameOver {
        /// The rejected move, in notation.
        mv: String,
    },
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Parse(e) => write!(f, "malformed move: {e}"),
            MoveError::Illegal(e) => e.fmt(f),
            MoveError::GameOver { mv } => write!(f, "move '{mv}' after the end of the game"),
        }
    }
}

impl std::error::Error for MoveError {}

impl From<ParseError> for MoveError {
    fn from(e: ParseError) -> Self {
        MoveError::Parse(e)
    }
}

impl From<IllegalMoveError> for MoveError {
    fn from(e: IllegalMoveError) -> Self {
        MoveError::Illegal(e)
    }
}
