//! CodinGame's per-turn shape, as the site's LOA and Amazons arenas feed their bots: no
//! handshake and no commands, the whole situation written to the bot's stdin each turn, and
//! one move read back.
//!
//! ```text
//! initial input  LOA: boardSize, then the bot's colour (w or b)
//!                Amazons: boardSize
//! each turn      Amazons: the bot's colour first
//!                boardSize rows, top to bottom ('.' empty, 'w', 'b', '-' an arrow)
//!                the opponent's last move ("null" on the bot's first turn)
//!                the number of legal moves, then one per line
//! the bot says   one move: e2e3 (LOA), d8d1d7 (Amazons), pass (an LOA forced pass)
//! ```
//!
//! Moves are written without separators ([`super::compact_move`]). A bot cannot be told that
//! a new game begins, so the runner starts a fresh process for each game.

use std::fmt::Write as _;

use tourney_rules::{Color, Game, GameKind, Position};

use super::{compact_move, is_separator};

/// The lines a bot reads once, before its first turn.
pub fn initial_input(game: GameKind, size: usize, colour: Color) -> Vec<String> {
    match game {
        GameKind::Loa => vec![size.to_string(), colour.letter().to_string()],
        GameKind::Amazons => vec![size.to_string()],
    }
}

/// The board rows of a position string, top to bottom, one character a square (`x`, an
/// arrow, written `-`).
pub fn rows(position: &str) -> Vec<String> {
    let placement = position.split(' ').next().unwrap_or_default();
    placement
        .split('/')
        .map(|rank| {
            let mut row = String::new();
            let mut run = 0usize;
            for c in rank.chars() {
                if let Some(d) = c.to_digit(10) {
                    run = run * 10 + d as usize;
                    continue;
                }
                row.extend(std::iter::repeat_n('.', run));
                run = 0;
                row.push(if c == 'x' { '-' } else { c });
            }
            row.extend(std::iter::repeat_n('.', run));
            row
        })
        .collect()
}

/// The position string of board `rows` (as [`rows`] writes them) with `turn` to move.
pub fn position_text(rows: &[String], turn: Color) -> String {
    let ranks: Vec<String> = rows
        .iter()
        .map(|row| {
            let mut rank = String::new();
            let mut run = 0;
            for c in row.chars() {
                if c == '.' {
                    run += 1;
                    continue;
                }
                if run > 0 {
                    rank += &run.to_string();
                    run = 0;
                }
                rank.push(if c == '-' { 'x' } else { c });
            }
            if run > 0 {
                rank += &run.to_string();
            }
            rank
        })
        .collect();
    format!("{} {}", ranks.join("/"), turn.letter())
}

/// One turn's input: the lines a transcript shows, then the legal moves listed.
#[derive(Debug)]
pub struct TurnInput {
    /// Amazons' colour, the board rows, the last move and the count of legal moves.
    pub head: Vec<String>,
    /// The legal moves, one a line (written into one string: Amazons lists thousands).
    pub listing: String,
    /// How many moves `listing` holds.
    pub listed: usize,
}

impl TurnInput {
    /// The whole input as one text, without the last line's newline.
    pub fn text(&self) -> String {
        let mut text = self.head.join("\n");
        if self.listed > 0 {
            text.push('\n');
            text.push_str(self.listing.trim_end_matches('\n'));
        }
        text
    }
}

/// The input of one turn of `game`, for the side to move.
pub fn turn_input<P: Position>(game: &Game<P>) -> TurnInput {
    let position = game.position();
    let mut head = Vec::with_capacity(16);
    if P::GAME == GameKind::Amazons {
        head.push(position.turn().letter().to_string());
    }
    head.extend(rows(&position.to_string()));
    head.push(
        game.moves()
            .last()
            .map_or_else(|| "null".to_string(), |m| compact_move(&m.to_string())),
    );
    let moves = position.legal_moves();
    head.push(moves.len().to_string());
    let mut listing = String::with_capacity(moves.len() * 8);
    let mut compact = Compact(&mut listing);
    for mv in &moves {
        // Writing to a string cannot fail.
        let _ = writeln!(compact, "{mv}");
    }
    TurnInput {
        head,
        listing,
        listed: moves.len(),
    }
}

/// A writer that leaves out a move's separators as it writes (see [`compact_move`]).
struct Compact<'a>(&'a mut String);

impl std::fmt::Write for Compact<'_> {
    fn write_str(&mut self, text: &str) -> std::fmt::Result {
        self.0.extend(text.chars().filter(|&c| !is_separator(c)));
        Ok(())
    }
}

/// The move in a bot's answer: its first word (CodinGame bots may add a message after it).
pub fn answer(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Amazons, Loa};

    #[test]
    fn a_turn_is_the_board_the_last_move_and_the_legal_moves() {
        let mut game = Game::new(Loa::start(), Default::default());
        let input = turn_input(&game);
        let text = input.text();
        let first: Vec<&str> = text.lines().collect();
        assert_eq!(first[0], ".bbbbbb.");
        assert_eq!(first[1], "w......w");
        assert_eq!(first[8], "null");
        let count: usize = first[9].parse().unwrap();
        assert_eq!(count, Loa::start().legal_moves().len());
        assert_eq!(
            (first.len(), input.listed, input.head.len()),
            (10 + count, count, 10)
        );
        assert!(first.contains(&"b1b3"));
        assert!(!input.listing.contains(['-', 'x']), "moves are compact");
        game.play_text("b1-b3").unwrap();
        let second = turn_input(&game).head;
        assert_eq!(second[8], "b1b3");
        assert_eq!(second[7], "..bbbbb.");
        assert_eq!(initial_input(GameKind::Loa, 8, Color::White), ["8", "w"]);

        let mut amazons = Game::new(Amazons::start(), Default::default());
        let mv = amazons.legal_moves()[0];
        amazons.play(mv).unwrap();
        let turn = turn_input(&amazons).head;
        assert_eq!(turn[0], "b", "Amazons says the colour every turn");
        assert_eq!(turn[11], compact_move(&mv.to_string()));
        assert!(turn[1..11].iter().any(|row| row.contains('-')), "{turn:?}");
        assert_eq!(initial_input(GameKind::Amazons, 10, Color::White), ["10"]);
    }

    #[test]
    fn rows_and_position_strings_convert_both_ways() {
        for text in [
            Loa::start().to_string(),
            "3b2b3/10/10/b8b/10/4x5/w8w/10/10/3w2w3 b".to_string(),
        ] {
            let turn = if text.ends_with('b') {
                Color::Black
            } else {
                Color::White
            };
            assert_eq!(position_text(&rows(&text), turn), text);
        }
        assert_eq!(rows("3b2b3/10 w")[1], "..........");
        assert_eq!(answer("e2e3 MSG hello"), "e2e3");
        assert_eq!(answer("  "), "");
    }
}
