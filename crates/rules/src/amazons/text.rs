//! The text forms: rule options (`size=8`), moves (`d1-d7/g7`) and position strings
//! (`3b2b3/10/.../3w2w3 w`), written and read.

use std::fmt;
use std::str::FromStr;

use super::{Amazons, AmazonsRules, Move, Piece, Square};
use crate::board_text;
use crate::error::ParseError;
use crate::position::Color;

impl fmt::Display for AmazonsRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.size {
            10 => Ok(()),
            n => write!(f, "size={n}"),
        }
    }
}

impl FromStr for AmazonsRules {
    type Err = ParseError;
    fn from_str(text: &str) -> Result<Self, ParseError> {
        let mut rules = AmazonsRules::default();
        let mut column = 1;
        for item in text.split(',') {
            let trimmed = item.trim();
            match trimmed.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                _ if trimmed.is_empty() => {}
                Some(("size", "8")) => rules.size = 8,
                Some(("size", "10")) => rules.size = 10,
                Some(("size", other)) => {
                    return Err(ParseError::at(
                        column,
                        format!("size must be 8 or 10, found '{other}'"),
                    ));
                }
                _ => {
                    return Err(ParseError::at(
                        column,
                        format!(
                            "unknown Amazons rule option '{trimmed}': expected size=8 or size=10"
                        ),
                    ));
                }
            }
            column += item.len() + 1;
        }
        Ok(rules)
    }
}

impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}/{}", self.from, self.to, self.arrow)
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Move {
    type Err = ParseError;

    fn from_str(text: &str) -> Result<Self, ParseError> {
        let (from, mut at) = Square::parse_prefix(text)?;
        let expect = |sep: u8, what: &str, at: usize| match text.as_bytes().get(at) {
            Some(&b) if b == sep => Ok(()),
            Some(_) => {
                let found = text[at..].chars().next().unwrap_or_default();
                Err(ParseError::at(
                    at + 1,
                    format!("expected '{}' {what}, found '{found}'", sep as char),
                ))
            }
            None => Err(ParseError::at(
                at + 1,
                format!("expected '{}' {what}", sep as char),
            )),
        };
        expect(b'-', "after the start square", at)?;
        at += 1;
        let (to, len) = Square::parse_prefix(&text[at..]).map_err(|e| e.shifted(at))?;
        at += len;
        expect(b'/', "before the arrow square", at)?;
        at += 1;
        let (arrow, len) = Square::parse_prefix(&text[at..]).map_err(|e| e.shifted(at))?;
        at += len;
        if at != text.len() {
            return Err(ParseError::at(at + 1, "unexpected text after the move"));
        }
        Ok(Move { from, to, arrow })
    }
}

impl fmt::Display for Amazons {
    /// The position string, e.g. `3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.size();
        f.write_str(&board_text::format(n, self.turn, |i| {
            self.piece_at(Square::from_index_unchecked(i / n * 10 + i % n))
                .map(|p| match p {
                    Piece::Amazon(Color::Black) => b'b',
                    Piece::Amazon(Color::White) => b'w',
                    Piece::Arrow => b'x',
                })
        }))
    }
}

impl fmt::Debug for Amazons {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Amazons(\"{self}\")")
    }
}

impl FromStr for Amazons {
    type Err = ParseError;

    /// A position string of either size: 10 ranks (`3b2b3/10/...`) or 8 (`2b2b2/8/...`).
    fn from_str(text: &str) -> Result<Self, ParseError> {
        let ranks = text
            .split(' ')
            .next()
            .unwrap_or_default()
            .split('/')
            .count();
        let n = if ranks == 8 { 8 } else { 10 };
        let parsed = board_text::parse(text, n, b"bwx")?;
        // Bit `rank * n + file` of an n×n board, as bit `rank * 10 + file`.
        let widen = |bb: u128| {
            (0..n * n)
                .filter(|i| bb >> i & 1 == 1)
                .fold(0u128, |out, i| out | 1 << (i / n * 10 + i % n))
        };
        let [black, white, arrows] = parsed.pieces[..] else {
            unreachable!("three piece letters")
        };
        Amazons::sized(n, widen(black), widen(white), widen(arrows), parsed.turn)
    }
}
