//! The position record: 40 bytes, little-endian, the same for both games.
//!
//! | bytes | field |
//! |---|---|
//! | 0..24 | the board, packed by its game ([`Packing`]) |
//! | 24 | the game: 0 LOA, 1 Amazons |
//! | 25 | the board's side: 8 or 10 |
//! | 26 | the side to move: 0 Black, 1 White |
//! | 27 | the game's result for the side to move: 0 loss, 1 draw, 2 win |
//! | 28..30 | the mover's engine's score, centi-units from its view (i16) |
//! | 30..32 | the ply: moves played from the game's start (its opening position; the opening's own plies are not counted) before this position (u16) |
//! | 32..40 | the game id: pair × 2 + game (u64) |
//!
//! LOA packs Black's and White's pieces as two bitboards (bit `rank * 8 + file`); Amazons
//! packs the arrows as a 128-bit bitboard (bit `rank * 10 + file`) and then each side's
//! four amazons as square indices on that grid, Black's then White's, ascending.

use std::fmt;

use tourney_rules::{Amazons, Color, GameKind, Loa, Position};

/// The size of a record in bytes.
pub const RECORD_BYTES: usize = 40;

/// The game's result for the side to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MoverResult {
    /// The side to move lost the game.
    Loss = 0,
    /// Drawn.
    Draw = 1,
    /// The side to move won the game.
    Win = 2,
}

impl MoverResult {
    /// From half-points of the side to move (0, 1 or 2).
    pub fn of_half_points(half_points: u8) -> Option<MoverResult> {
        match half_points {
            0 => Some(MoverResult::Loss),
            1 => Some(MoverResult::Draw),
            2 => Some(MoverResult::Win),
            _ => None,
        }
    }

    /// The score of the side to move: 0, ½ or 1.
    pub fn score(self) -> f64 {
        f64::from(self as u8) / 2.0
    }

    /// `loss`, `draw` or `win`.
    pub fn name(self) -> &'static str {
        match self {
            MoverResult::Loss => "loss",
            MoverResult::Draw => "draw",
            MoverResult::Win => "win",
        }
    }
}

/// How a game's boards fit in a record's 24 bytes.
pub trait Packing: Position {
    /// The game's code in byte 24.
    const CODE: u8;

    /// The board in 24 bytes and its side.
    fn pack(&self) -> ([u8; 24], u8);

    /// The position of a packed board.
    ///
    /// # Errors
    /// What is wrong with the board (a piece count, an overlap, a square off the board).
    fn unpack(board: &[u8; 24], size: u8, turn: Color) -> Result<Self, String>;

    /// Whether `mv` captures (LOA); no Amazons move does.
    fn captures(&self, mv: Self::Move) -> bool {
        let _ = mv;
        false
    }
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

impl Packing for Loa {
    const CODE: u8 = 0;

    fn pack(&self) -> ([u8; 24], u8) {
        let mut board = [0; 24];
        board[0..8].copy_from_slice(&self.pieces(Color::Black).to_le_bytes());
        board[8..16].copy_from_slice(&self.pieces(Color::White).to_le_bytes());
        (board, 8)
    }

    fn unpack(board: &[u8; 24], size: u8, turn: Color) -> Result<Self, String> {
        if size != 8 {
            return Err(format!("an LOA board is 8×8, not {size}×{size}"));
        }
        if board[16..].iter().any(|&b| b != 0) {
            return Err("bytes 16..24 of an LOA board must be 0".into());
        }
        Loa::from_bitboards(u64_at(board, 0), u64_at(board, 8), turn).map_err(|e| e.to_string())
    }

    fn captures(&self, mv: Self::Move) -> bool {
        matches!(mv, tourney_rules::loa::Move::Step { capture: true, .. })
    }
}

impl Packing for Amazons {
    const CODE: u8 = 1;

    fn pack(&self) -> ([u8; 24], u8) {
        let mut board = [0; 24];
        board[0..16].copy_from_slice(&self.arrows().to_le_bytes());
        for (side, color) in [Color::Black, Color::White].into_iter().enumerate() {
            let mut amazons = self.amazons(color);
            for k in 0..4 {
                board[16 + side * 4 + k] = amazons.trailing_zeros() as u8;
                amazons &= amazons.wrapping_sub(1);
            }
        }
        (board, self.size() as u8)
    }

    fn unpack(board: &[u8; 24], size: u8, turn: Color) -> Result<Self, String> {
        let arrows = u128::from_le_bytes(board[0..16].try_into().expect("16 bytes"));
        let mut sides = [0u128; 2];
        for (side, bits) in sides.iter_mut().enumerate() {
            for &square in &board[16 + side * 4..20 + side * 4] {
                if square >= 100 {
                    return Err(format!("amazon square {square} is off the 10×10 grid"));
                }
                *bits |= 1 << square;
            }
        }
        Amazons::sized(usize::from(size), sides[0], sides[1], arrows, turn)
            .map_err(|e| e.to_string())
    }
}

/// One position of a game, with what the game and the engine said of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Record {
    /// The game.
    pub game: GameKind,
    /// The board's side (8 or 10).
    pub size: u8,
    /// The packed board ([`Packing`]).
    pub board: [u8; 24],
    /// The side to move.
    pub turn: Color,
    /// The game's result for the side to move.
    pub result: MoverResult,
    /// The mover's engine's score in centi-units, from its view.
    pub score: i16,
    /// Moves played in the game before this position.
    pub ply: u16,
    /// The game: pair × 2 + the game in the pair (0 or 1).
    pub game_id: u64,
}

/// A record that is not one, with the field at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// The field (`game`, `size`, `turn`, `result`, `board`).
    pub field: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for RecordError {}

fn wrong(field: &'static str, message: impl Into<String>) -> RecordError {
    RecordError {
        field,
        message: message.into(),
    }
}

impl Record {
    /// The record of `position`.
    pub fn of<P: Packing>(
        position: &P,
        result: MoverResult,
        score: i16,
        ply: u16,
        game_id: u64,
    ) -> Record {
        let (board, size) = position.pack();
        Record {
            game: P::GAME,
            size,
            board,
            turn: position.turn(),
            result,
            score,
            ply,
            game_id,
        }
    }

    /// The 40 bytes.
    pub fn encode(&self) -> [u8; RECORD_BYTES] {
        let mut out = [0; RECORD_BYTES];
        out[0..24].copy_from_slice(&self.board);
        out[24] = match self.game {
            GameKind::Loa => Loa::CODE,
            GameKind::Amazons => Amazons::CODE,
        };
        out[25] = self.size;
        out[26] = self.turn.index() as u8;
        out[27] = self.result as u8;
        out[28..30].copy_from_slice(&self.score.to_le_bytes());
        out[30..32].copy_from_slice(&self.ply.to_le_bytes());
        out[32..40].copy_from_slice(&self.game_id.to_le_bytes());
        out
    }

    /// A record from its 40 bytes, every field checked and the board unpacked.
    ///
    /// # Errors
    /// The field that is not valid, and why.
    pub fn decode(bytes: &[u8; RECORD_BYTES]) -> Result<Record, RecordError> {
        let game = match bytes[24] {
            Loa::CODE => GameKind::Loa,
            Amazons::CODE => GameKind::Amazons,
            other => return Err(wrong("game", format!("{other} is neither 0 (LOA) nor 1"))),
        };
        let turn = match bytes[26] {
            0 => Color::Black,
            1 => Color::White,
            other => return Err(wrong("turn", format!("{other} is neither 0 nor 1"))),
        };
        let result = MoverResult::of_half_points(bytes[27])
            .ok_or_else(|| wrong("result", format!("{} is not 0, 1 or 2", bytes[27])))?;
        let record = Record {
            game,
            size: bytes[25],
            board: bytes[0..24].try_into().expect("24 bytes"),
            turn,
            result,
            score: i16::from_le_bytes([bytes[28], bytes[29]]),
            ply: u16::from_le_bytes([bytes[30], bytes[31]]),
            game_id: u64_at(bytes, 32),
        };
        tourney_rules::with_position!(game, P => record.position::<P>().map(|_| ()))?;
        Ok(record)
    }

    /// The position.
    ///
    /// # Errors
    /// The board does not unpack for `P` (or the record is of the other game).
    pub fn position<P: Packing>(&self) -> Result<P, RecordError> {
        if self.game != P::GAME {
            return Err(wrong("game", format!("{} is not {}", self.game, P::GAME)));
        }
        P::unpack(&self.board, self.size, self.turn).map_err(|e| wrong("board", e))
    }

    /// The position as a position string (docs/rules.md).
    ///
    /// # Errors
    /// The board does not unpack.
    pub fn position_string(&self) -> Result<String, RecordError> {
        tourney_rules::with_position!(self.game, P => self.position::<P>().map(|p| p.to_string()))
    }

    /// A 64-bit key of the position (board, size, game, side to move) that duplicates
    /// share.
    pub fn key(&self) -> u64 {
        let mut words = [0u64; 4];
        for (k, word) in words.iter_mut().take(3).enumerate() {
            *word = u64_at(&self.board, k * 8);
        }
        words[3] = u64::from(self.size) << 16 | (self.game as u64) << 8 | self.turn.index() as u64;
        words.iter().fold(0x243f_6a88_85a3_08d3, |h, &w| {
            let mut z = (h ^ w).wrapping_add(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
    }

    /// The record as one JSON object (a line of `tourney data export --format jsonl`):
    /// `game`, `position`, `score`, `result` (1, 0.5 or 0 for the side to move), `ply`,
    /// `game_id`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "game": self.game.name(),
            "position": self.position_string().unwrap_or_default(),
            "score": self.score,
            "result": self.result.score(),
            "ply": self.ply,
            "game_id": self.game_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<P: Packing>(positions: &[&str]) {
        for (i, text) in positions.iter().enumerate() {
            let position: P = text.parse().unwrap();
            let record = Record::of(&position, MoverResult::Win, -1234, 77, 1 << 40 | i as u64);
            let bytes = record.encode();
            let back = Record::decode(&bytes).unwrap();
            assert_eq!(back, record);
            assert_eq!(back.position::<P>().unwrap(), position, "{text}");
            assert_eq!(back.position_string().unwrap(), position.to_string());
        }
    }

    #[test]
    fn records_round_trip_in_both_games_and_sizes() {
        round_trip::<Loa>(&[
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
            "8/8/8/7w/wb6/8/3w4/3b4 w",
        ]);
        round_trip::<Amazons>(&[
            "3b2b3/10/10/b8b/10/x9/xx8/1xx7/ww1x6/ww1x6 b",
            &Amazons::start().to_string(),
            &Amazons::start_sized(8).to_string(),
        ]);
    }

    #[test]
    fn every_field_is_checked_and_named() {
        let good = Record::of(&Loa::start(), MoverResult::Draw, 5, 0, 3).encode();
        for (at, value, field) in [
            (24, 7, "game"),
            (25, 10, "board"),
            (26, 2, "turn"),
            (27, 3, "result"),
            (20, 1, "board"),
        ] {
            let mut bad = good;
            bad[at] = value;
            assert_eq!(Record::decode(&bad).unwrap_err().field, field, "byte {at}");
        }
        // Both sides on one square.
        let mut bad = good;
        bad[8] |= bad[0];
        assert_eq!(Record::decode(&bad).unwrap_err().field, "board");
        // An amazon off the grid.
        let mut amazons = Record::of(&Amazons::start(), MoverResult::Win, 0, 0, 0).encode();
        amazons[16] = 100;
        assert!(
            Record::decode(&amazons)
                .unwrap_err()
                .message
                .contains("off")
        );
    }

    #[test]
    fn keys_tell_positions_apart_by_board_and_side_to_move() {
        let black = Record::of(&Loa::start(), MoverResult::Draw, 5, 0, 3);
        let again = Record::of(&Loa::start(), MoverResult::Win, -9, 40, 8);
        assert_eq!(
            black.key(),
            again.key(),
            "score, result, ply and game do not count"
        );
        let white = Record {
            turn: Color::White,
            ..black
        };
        assert_ne!(black.key(), white.key());
        let amazons = Record::of(&Amazons::start(), MoverResult::Draw, 5, 0, 3);
        assert_ne!(black.key(), amazons.key());
    }
}
