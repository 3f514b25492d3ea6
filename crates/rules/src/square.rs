//! Squares of an N×N board, named like `a1` … `j10`.

use std::fmt;
use std::str::FromStr;

use crate::error::ParseError;

/// A square of an `N`×`N` board: files `a`.. left to right, ranks `1`.. bottom to top.
///
/// The index is `rank * N + file`, so `a1` is 0 and the top-right corner is `N*N - 1`.
/// LOA uses `Square<8>` ([`crate::loa::Square`]), Amazons `Square<10>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square<const N: usize>(u8);

impl<const N: usize> Square<N> {
    /// Number of squares on the board.
    pub const COUNT: usize = N * N;

    /// The square at `file` (0 = `a`) and `rank` (0 = rank 1).
    ///
    /// # Panics
    /// If either coordinate is off the board.
    pub const fn new(file: usize, rank: usize) -> Self {
        assert!(file < N && rank < N, "square off the board");
        Square((rank * N + file) as u8)
    }

    /// The square with index `index` (`rank * N + file`), if it is on the board.
    pub const fn from_index(index: usize) -> Option<Self> {
        if index < N * N {
            Some(Square(index as u8))
        } else {
            None
        }
    }

    /// Like [`Square::from_index`] for indices known to be on the board.
    pub(crate) const fn from_index_unchecked(index: usize) -> Self {
        debug_assert!(index < N * N);
        Square(index as u8)
    }

    /// The index `rank * N + file`.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// File, 0 = `a`.
    pub const fn file(self) -> usize {
        self.0 as usize % N
    }

    /// Rank, 0 = rank 1.
    pub const fn rank(self) -> usize {
        self.0 as usize / N
    }

    /// Parses a square at the start of `text` (`a1`, `j10`) and returns it with the number
    /// of bytes it took. Errors report columns relative to `text`.
    pub(crate) fn parse_prefix(text: &str) -> Result<(Self, usize), ParseError> {
        let bytes = text.as_bytes();
        let digits = bytes
            .iter()
            .skip(1)
            .take_while(|b| b.is_ascii_digit())
            .count();
        let len = 1 + digits;
        let token = &text[..text.char_indices().nth(len).map_or(text.len(), |(i, _)| i)];
        match bytes.first() {
            None => {
                return Err(ParseError::at(
                    1,
                    "expected a square, found the end of the text",
                ));
            }
            Some(b) if !b.is_ascii_lowercase() => {
                let found = text.chars().next().unwrap_or_default();
                return Err(ParseError::at(
                    1,
                    format!("expected a square, found '{found}'"),
                ));
            }
            _ => {}
        }
        let file = (bytes[0] - b'a') as usize;
        let rank = text[1..len]
            .parse::<usize>()
            .ok()
            .filter(|r| (1..=N).contains(r));
        match rank {
            Some(rank) if digits <= 2 && file < N => Ok((Square::new(file, rank - 1), len)),
            _ => Err(ParseError::at(1, format!("unknown square '{token}'"))),
        }
    }
}

impl<const N: usize> fmt::Display for Square<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            (b'a' + self.file() as u8) as char,
            self.rank() + 1
        )
    }
}

impl<const N: usize> fmt::Debug for Square<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<const N: usize> FromStr for Square<N> {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let (square, len) = Square::parse_prefix(text)?;
        if len != text.len() {
            return Err(ParseError::at(1, format!("unknown square '{text}'")));
        }
        Ok(square)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squares_round_trip_on_both_boards() {
        for i in 0..64 {
            let sq = Square::<8>::from_index(i).unwrap();
            assert_eq!(sq.to_string().parse::<Square<8>>(), Ok(sq));
        }
        for i in 0..100 {
            let sq = Square::<10>::from_index(i).unwrap();
            assert_eq!(sq.to_string().parse::<Square<10>>(), Ok(sq));
        }
        assert_eq!(Square::<10>::new(9, 9).to_string(), "j10");
        assert_eq!(Square::<8>::new(0, 0).to_string(), "a1");
    }

    #[test]
    fn off_board_squares_are_named_in_the_error() {
        let err = "k3".parse::<Square<10>>().unwrap_err();
        assert_eq!(err.to_string(), "unknown square 'k3' at column 1");
        assert!("i1".parse::<Square<8>>().is_err());
        assert!("a9".parse::<Square<8>>().is_err());
        assert!("a0".parse::<Square<8>>().is_err());
        assert!("a11".parse::<Square<10>>().is_err());
        assert!("a10".parse::<Square<10>>().is_ok());
        assert!("".parse::<Square<8>>().is_err());
        assert!("A1".parse::<Square<8>>().is_err());
        assert!("a".parse::<Square<8>>().is_err());
    }
}
