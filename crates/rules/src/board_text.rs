//! Position strings shared by both games: ranks from the top down separated by `/`, digit
//! runs for empty squares (`10` is one run), a space, then the side to move.

use crate::error::ParseError;
use crate::position::Color;

/// A parsed position string: for each piece letter (in the order given to [`parse`]) the
/// bitboard of its squares (bit `rank * n + file`), and the side to move.
pub(crate) struct BoardText {
    pub(crate) pieces: Vec<u128>,
    pub(crate) turn: Color,
}

/// Parses an `n`×`n` position string whose piece letters are `pieces`.
pub(crate) fn parse(text: &str, n: usize, pieces: &[u8]) -> Result<BoardText, ParseError> {
    let Some(space) = text.find(' ') else {
        return Err(ParseError::whole(format!(
            "missing side to move: expected the board, a space and 'b' or 'w' in '{text}'"
        )));
    };
    let (board, side) = (&text[..space], &text[space + 1..]);
    let side_column = space + 2;
    let turn = match side {
        "b" => Color::Black,
        "w" => Color::White,
        "" => {
            return Err(ParseError::at(
                side_column,
                "missing side to move ('b' or 'w')",
            ));
        }
        other => {
            return Err(ParseError::at(
                side_column,
                format!("side to move must be 'b' or 'w', found '{other}'"),
            ));
        }
    };

    let mut boards = vec![0u128; pieces.len()];
    let mut rank_from_top = 0;
    let mut file = 0;
    let bytes = board.as_bytes();
    let mut i = 0;
    let rank_name = |from_top: usize| n - from_top;
    while i < bytes.len() {
        let column = i + 1;
        let b = bytes[i];
        if b == b'/' {
            if file != n {
                return Err(ParseError::at(
                    column,
                    format!(
                        "rank {} has {file} squares, expected {n}",
                        rank_name(rank_from_top)
                    ),
                ));
            }
            rank_from_top += 1;
            file = 0;
            if rank_from_top == n {
                return Err(ParseError::at(column, format!("more than {n} ranks")));
            }
            i += 1;
        } else if b.is_ascii_digit() {
            let run_len = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
            let run: usize = board[i..i + run_len].parse().unwrap_or(usize::MAX);
            if run == 0 || file + run > n {
                return Err(ParseError::at(
                    column,
                    format!(
                        "empty run '{}' does not fit rank {} (at most {} squares left)",
                        &board[i..i + run_len],
                        rank_name(rank_from_top),
                        n - file
                    ),
                ));
            }
            file += run;
            i += run_len;
        } else if pieces.contains(&b) {
            if file == n {
                return Err(ParseError::at(
                    column,
                    format!(
                        "rank {} has more than {n} squares",
                        rank_name(rank_from_top)
                    ),
                ));
            }
            let kind = pieces.iter().position(|&p| p == b).expect("checked above");
            boards[kind] |= 1 << ((n - 1 - rank_from_top) * n + file);
            file += 1;
            i += 1;
        } else {
            let found = board[i..].chars().next().unwrap_or_default();
            let allowed: Vec<String> = pieces.iter().map(|&p| format!("'{}'", p as char)).collect();
            return Err(ParseError::at(
                column,
                format!(
                    "unexpected '{found}': expected a piece ({}), a digit or '/'",
                    allowed.join(", ")
                ),
            ));
        }
    }
    if rank_from_top != n - 1 || file != n {
        return Err(ParseError::at(
            board.len() + 1,
            format!(
                "board ends early: {} of {n} ranks, the last with {file} of {n} squares",
                rank_from_top + 1
            ),
        ));
    }
    Ok(BoardText {
        pieces: boards,
        turn,
    })
}

/// Formats an `n`×`n` board whose square `index` holds the letter `cell(index)`.
pub(crate) fn format(n: usize, turn: Color, cell: impl Fn(usize) -> Option<u8>) -> String {
    let mut out = String::with_capacity(n * n + 12);
    for rank in (0..n).rev() {
        let mut empty = 0;
        for file in 0..n {
            match cell(rank * n + file) {
                None => empty += 1,
                Some(letter) => {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(letter as char);
                }
            }
        }
        if empty > 0 {
            out.push_str(&empty.to_string());
        }
        if rank > 0 {
            out.push('/');
        }
    }
    out.push(' ');
    out.push(turn.letter());
    out
}
