//! Amazons on a 10×10 board, or 8×8 (four amazons a side on both).
//!
//! A turn moves one amazon like a chess queen and then shoots an arrow like a queen from
//! where it landed (the square it left is free again). Arrows block for the rest of the
//! game; nothing is captured; a side with no complete turn loses.
//!
//! An 8×8 board is the 10×10 one with files i, j and ranks 9, 10 walled off: squares keep
//! their names and indices, and walls block like arrows without being arrows, so one move
//! generator serves both sizes.
//!
//! Besides `u128` bitboards the position keeps the occupancy of every line as a 10-bit
//! word (see `tables.rs`), so counting the turns of a position needs no per-arrow work:
//! for each amazon and each destination, one table lookup per line gives the number of
//! arrow squares.

mod tables;
mod text;

use crate::error::{MoveError, ParseError};
use crate::position::{Color, EndReason, GameKind, Outcome, Position};
use tables::{
    AMAZON_KEYS, ARROW_KEYS, BLACK_TO_MOVE_KEY, EMPTY_LINES, LINE_OF, LINE_SQUARES, LINES,
    NEIGHBOURS, POS_ON, RUN, SLIDE,
};

/// A square of the Amazons board (`a1` … `j10`).
pub type Square = crate::square::Square<10>;

/// The board sizes Amazons is played on.
pub const SIZES: [usize; 2] = [8, 10];

/// Amazons rule options: the board size. Text form: empty for 10×10 (the default),
/// `size=8` for 8×8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AmazonsRules {
    /// The board is `size`×`size`: 8 or 10.
    pub size: u8,
}

impl Default for AmazonsRules {
    fn default() -> Self {
        AmazonsRules { size: 10 }
    }
}

/// The squares of the 10×10 board outside a `size`×`size` one (files and ranks from
/// `size` up).
pub const fn walls(size: usize) -> u128 {
    let mut bb = 0u128;
    let mut s = 0;
    while s < 100 {
        if s % 10 >= size || s / 10 >= size {
            bb |= 1 << s;
        }
        s += 1;
    }
    bb
}

/// One turn: an amazon moves `from`-`to` and shoots an arrow to `arrow` (`d1-d7/g7`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move {
    /// The amazon's start square.
    pub from: Square,
    /// Where the amazon lands.
    pub to: Square,
    /// Where the arrow lands.
    pub arrow: Square,
}

/// What stands on a square.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Piece {
    /// An amazon of that colour.
    Amazon(Color),
    /// An arrow.
    Arrow,
}

/// An Amazons position: its board size, four amazons a side, arrows, side to move.
#[derive(Clone, Copy)]
pub struct Amazons {
    /// Occupancy word of each line (amazons, arrows and walls; walls on short diagonals).
    lines: [u16; LINES],
    /// The squares outside the board ([`walls`] of its size).
    walls: u128,
    /// The squares of each side's amazons, in no particular order.
    squares: [[u8; 4]; 2],
    /// Each side's amazons as a bitboard.
    amazons: [u128; 2],
    arrows: u128,
    hash: u64,
    turn: Color,
}

/// Flips square `s` in the line words.
#[inline(always)]
fn toggle(lines: &mut [u16; LINES], s: usize) {
    for k in 0..4 {
        lines[LINE_OF[s][k] as usize] ^= 1 << POS_ON[s][k];
    }
}

/// The free squares a queen on `s` reaches along all four lines.
#[inline(always)]
fn queen_count(lines: &[u16; LINES], s: usize) -> u32 {
    let mut n = 0;
    for k in 0..4 {
        // Line words hold 10 bits and positions are below 10: the masks only spare bounds checks.
        n += RUN[lines[LINE_OF[s][k] as usize] as usize & 1023][POS_ON[s][k] as usize & 15] as u32;
    }
    n
}

/// Room for the squares a queen reaches (at most 35) plus the slack of 16-byte copies.
const SPAN: usize = 64;

/// Writes the squares a queen on `s` reaches into `out` and returns how many.
///
/// The squares along each line form one run on either side of `s`, so each run is copied
/// from [`LINE_SQUARES`] with a fixed-size copy: no loop whose length depends on the board,
/// hence few mispredicted branches.
#[inline(always)]
fn queen_targets(lines: &[u16; LINES], s: usize, out: &mut [u8; SPAN]) -> usize {
    let mut n = 0;
    for k in 0..4 {
        let word = LINE_OF[s][k] as usize;
        let p = POS_ON[s][k] as usize;
        let slide = SLIDE[lines[word] as usize & 1023][p & 15] as usize;
        let (down, up) = (slide & 15, slide >> 4);
        let squares = &LINE_SQUARES[word];
        out[n..n + 16].copy_from_slice(&squares[p - down..p - down + 16]);
        n += down;
        out[n..n + 16].copy_from_slice(&squares[p + 1..p + 17]);
        n += up;
    }
    n
}

impl Amazons {
    /// A 10×10 position from each side's amazons and the arrows (bit `i` = square index
    /// `i`).
    ///
    /// # Errors
    /// If a side does not have exactly four amazons or two pieces share a square.
    pub fn from_bitboards(
        black: u128,
        white: u128,
        arrows: u128,
        turn: Color,
    ) -> Result<Amazons, ParseError> {
        Amazons::sized(10, black, white, arrows, turn)
    }

    /// A `size`×`size` position ([`SIZES`]) from each side's amazons and the arrows, with
    /// the squares named as on 10×10 (bit `rank * 10 + file`).
    ///
    /// # Errors
    /// An unsupported size, a piece off the board, a side without exactly four amazons, or
    /// two pieces on one square.
    pub fn sized(
        size: usize,
        black: u128,
        white: u128,
        arrows: u128,
        turn: Color,
    ) -> Result<Amazons, ParseError> {
        if !SIZES.contains(&size) {
            return Err(ParseError::whole(format!(
                "Amazons boards are 8×8 or 10×10, not {size}×{size}"
            )));
        }
        if black & white != 0 || (black | white) & arrows != 0 {
            return Err(ParseError::whole("two pieces on one square"));
        }
        let walls = walls(size);
        if (black | white | arrows) & walls != 0 || (black | white | arrows) >> 100 != 0 {
            return Err(ParseError::whole(format!(
                "a piece off the {size}×{size} board"
            )));
        }
        let mut lines = EMPTY_LINES;
        let mut rest = walls;
        while rest != 0 {
            toggle(&mut lines, rest.trailing_zeros() as usize);
            rest &= rest - 1;
        }
        let mut position = Amazons {
            lines,
            walls,
            squares: [[0; 4]; 2],
            amazons: [black, white],
            arrows,
            hash: if turn == Color::Black {
                BLACK_TO_MOVE_KEY
            } else {
                0
            },
            turn,
        };
        for color in Color::ALL {
            let bb = position.amazons[color.index()];
            if bb.count_ones() != 4 {
                return Err(ParseError::whole(format!(
                    "{color} has {} amazons, expected 4",
                    bb.count_ones()
                )));
            }
            let mut rest = bb;
            for slot in 0..4 {
                let s = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                position.squares[color.index()][slot] = s as u8;
                position.hash ^= AMAZON_KEYS[color.index()][s];
                toggle(&mut position.lines, s);
            }
        }
        let mut rest = arrows;
        while rest != 0 {
            let s = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            position.hash ^= ARROW_KEYS[s];
            toggle(&mut position.lines, s);
        }
        Ok(position)
    }

    /// The amazons of `color` as a bitboard.
    pub fn amazons(&self, color: Color) -> u128 {
        self.amazons[color.index()]
    }

    /// The arrows as a bitboard.
    pub fn arrows(&self) -> u128 {
        self.arrows
    }

    /// Amazons, arrows and the squares off the board, as a bitboard.
    pub fn occupied(&self) -> u128 {
        self.amazons[0] | self.amazons[1] | self.arrows | self.walls
    }

    /// The board is `size()`×`size()`: 8 or 10.
    pub fn size(&self) -> usize {
        if self.walls == 0 { 10 } else { 8 }
    }

    /// The start position on a `size`×`size` board ([`SIZES`]): White on the first ranks
    /// and moving first, Black on the last, each amazon a third of the way in from a
    /// corner (10×10: a4 d1 g1 j4 and a7 d10 g10 j7; 8×8, as on Botzone and CodinGame: a3
    /// c1 f1 h3 and a6 c8 f8 h6).
    ///
    /// # Panics
    /// A size that is not one of [`SIZES`].
    pub fn start_sized(size: usize) -> Amazons {
        let k = (size - 1) / 3;
        let top = size - 1;
        let bits = |squares: [(usize, usize); 4]| {
            squares
                .iter()
                .fold(0u128, |bb, &(f, r)| bb | (1 << (r * 10 + f)))
        };
        let white = bits([(0, k), (k, 0), (top - k, 0), (top, k)]);
        let black = bits([(0, top - k), (k, top), (top - k, top), (top, top - k)]);
        Amazons::sized(size, black, white, 0, Color::White).expect("a supported size")
    }

    /// The squares of the four amazons of `color`, in no particular order.
    pub fn amazon_squares(&self, color: Color) -> [Square; 4] {
        self.squares[color.index()].map(|s| Square::from_index_unchecked(s as usize))
    }

    /// The up to 8 squares next to `square`, as a bitboard (bit `rank * 10 + file`).
    pub fn neighbours(square: Square) -> u128 {
        NEIGHBOURS[square.index()]
    }

    /// How many free squares a queen on `square` reaches (the square itself is ignored).
    pub fn queen_mobility(&self, square: Square) -> u32 {
        queen_count(&self.lines, square.index())
    }

    /// When no region of the board (free squares and amazons, joined by king steps) holds
    /// amazons of both colours, the free squares of each side's regions, indexed by
    /// [`Color::index`]; `None` while the sides still share a region.
    pub fn separated_territory(&self) -> Option<[u32; 2]> {
        let open = !(self.arrows | self.walls) & ((1u128 << 100) - 1);
        let mut unvisited = open;
        let mut territory = [0u32; 2];
        while unvisited != 0 {
            // Flood one region from its lowest square.
            let mut region = unvisited & unvisited.wrapping_neg();
            let mut frontier = region;
            while frontier != 0 {
                let s = frontier.trailing_zeros() as usize;
                frontier &= frontier - 1;
                let new = NEIGHBOURS[s] & open & !region;
                region |= new;
                frontier |= new;
            }
            unvisited &= !region;
            let owners = [self.amazons[0] & region != 0, self.amazons[1] & region != 0];
            let free = (region & !self.amazons[0] & !self.amazons[1]).count_ones();
            match owners {
                [true, true] => return None,
                [true, false] => territory[0] += free,
                [false, true] => territory[1] += free,
                [false, false] => {}
            }
        }
        Some(territory)
    }

    /// What stands on `square`, if anything.
    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        let bit = 1u128 << square.index();
        if self.arrows & bit != 0 {
            Some(Piece::Arrow)
        } else {
            Color::ALL
                .into_iter()
                .find(|c| self.amazons[c.index()] & bit != 0)
                .map(Piece::Amazon)
        }
    }

    /// The line words with the amazon on `from` lifted off the board.
    #[inline(always)]
    fn lines_without(&self, from: usize) -> [u16; LINES] {
        let mut lines = self.lines;
        toggle(&mut lines, from);
        lines
    }

    /// Whether a queen on `a` reaches `b` over free squares of `lines`.
    fn queen_reaches(lines: &[u16; LINES], a: usize, b: usize) -> bool {
        let mut targets = [0; SPAN];
        let n = queen_targets(lines, a, &mut targets);
        targets[..n].contains(&(b as u8))
    }

    /// The number of turns of the amazon on `from` (`lines` has it lifted).
    #[inline(always)]
    fn count_turns_from(lines: &[u16; LINES], from: usize) -> u32 {
        let mut targets = [0; SPAN];
        let n = queen_targets(lines, from, &mut targets);
        targets[..n]
            .iter()
            .map(|&to| queen_count(lines, to as usize))
            .sum()
    }
}

impl PartialEq for Amazons {
    fn eq(&self, other: &Self) -> bool {
        self.amazons == other.amazons
            && self.arrows == other.arrows
            && self.turn == other.turn
            && self.walls == other.walls
    }
}

impl Eq for Amazons {}

impl std::hash::Hash for Amazons {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.hash.hash(state);
    }
}

impl Position for Amazons {
    type Move = Move;
    type Rules = AmazonsRules;
    const GAME: GameKind = GameKind::Amazons;

    fn start() -> Self {
        Amazons::start_sized(10)
    }

    fn start_for(rules: AmazonsRules) -> Self {
        Amazons::start_sized(usize::from(rules.size))
    }

    fn fits(&self, rules: AmazonsRules) -> bool {
        self.size() == usize::from(rules.size)
    }

    fn turn(&self) -> Color {
        self.turn
    }

    fn zobrist_hash(&self) -> u64 {
        self.hash
    }

    /// The side to move loses when it has no complete turn; there are no draws.
    fn outcome(&self, _: AmazonsRules) -> Option<Outcome> {
        self.is_game_over().then(|| Outcome {
            winner: Some(self.turn.opponent()),
            reason: EndReason::NoMoves,
        })
    }

    /// An amazon that can move at all can shoot back to the square it left, so the side to
    /// move has a turn exactly when one of its amazons has a free neighbour.
    #[inline]
    fn is_game_over(&self) -> bool {
        let free = !self.occupied();
        self.squares[self.turn.index()]
            .iter()
            .all(|&s| NEIGHBOURS[s as usize] & free == 0)
    }

    fn generate_moves(&self, mut f: impl FnMut(Move)) {
        let (mut targets, mut arrows) = ([0; SPAN], [0; SPAN]);
        for &from in &self.squares[self.turn.index()] {
            let from = from as usize;
            let lines = self.lines_without(from);
            let n = queen_targets(&lines, from, &mut targets);
            for &to in &targets[..n] {
                let m = queen_targets(&lines, to as usize, &mut arrows);
                for &arrow in &arrows[..m] {
                    f(Move {
                        from: Square::from_index_unchecked(from),
                        to: Square::from_index_unchecked(to as usize),
                        arrow: Square::from_index_unchecked(arrow as usize),
                    });
                }
            }
        }
    }

    #[inline]
    fn count_moves(&self) -> u64 {
        let mut lines = self.lines;
        let mut n = 0;
        for &from in &self.squares[self.turn.index()] {
            toggle(&mut lines, from as usize);
            n += Self::count_turns_from(&lines, from as usize);
            toggle(&mut lines, from as usize);
        }
        n as u64
    }

    /// Counts the turns of each amazon, picks the amazon by the weight of its turns, then
    /// walks its destinations to the chosen one: no list of turns is built.
    fn random_move(&self, random: u64) -> Option<Move> {
        // Pass 1 keeps every amazon's destinations and their arrow counts (at most 35 each,
        // so a byte), pass 2 walks the chosen amazon's counts: no turn list is built.
        let mut lines = self.lines;
        let mut targets = [[0u8; SPAN]; 4];
        let mut counts = [[0u8; SPAN]; 4];
        let mut lens = [0usize; 4];
        let mut per_amazon = [0u32; 4];
        for (slot, &from) in self.squares[self.turn.index()].iter().enumerate() {
            toggle(&mut lines, from as usize);
            lens[slot] = queen_targets(&lines, from as usize, &mut targets[slot]);
            for i in 0..lens[slot] {
                let count = queen_count(&lines, targets[slot][i] as usize);
                counts[slot][i] = count as u8;
                per_amazon[slot] += count;
            }
            toggle(&mut lines, from as usize);
        }
        let total: u32 = per_amazon.iter().sum();
        if total == 0 {
            return None;
        }
        let mut pick = ((random as u128 * total as u128) >> 64) as u32;
        let mut slot = 0;
        while pick >= per_amazon[slot] {
            pick -= per_amazon[slot];
            slot += 1;
        }
        let mut i = 0;
        while pick >= counts[slot][i] as u32 {
            pick -= counts[slot][i] as u32;
            i += 1;
        }
        let from = self.squares[self.turn.index()][slot] as usize;
        let to = targets[slot][i] as usize;
        toggle(&mut lines, from);
        let mut arrows = [0; SPAN];
        queen_targets(&lines, to, &mut arrows);
        Some(Move {
            from: Square::from_index_unchecked(from),
            to: Square::from_index_unchecked(to),
            arrow: Square::from_index_unchecked(arrows[pick as usize] as usize),
        })
    }

    #[inline]
    fn play_unchecked(&mut self, mv: Move) {
        let us = self.turn.index();
        let (from, to, arrow) = (mv.from.index(), mv.to.index(), mv.arrow.index());
        toggle(&mut self.lines, from);
        toggle(&mut self.lines, to);
        toggle(&mut self.lines, arrow);
        self.amazons[us] ^= (1 << from) | (1 << to);
        self.arrows |= 1 << arrow;
        for slot in &mut self.squares[us] {
            if *slot as usize == from {
                *slot = to as u8;
            }
        }
        self.hash ^=
            AMAZON_KEYS[us][from] ^ AMAZON_KEYS[us][to] ^ ARROW_KEYS[arrow] ^ BLACK_TO_MOVE_KEY;
        self.turn = self.turn.opponent();
    }

    fn pass_turn(&self) -> Self {
        Amazons {
            turn: self.turn.opponent(),
            hash: self.hash ^ BLACK_TO_MOVE_KEY,
            ..*self
        }
    }

    fn is_legal(&self, mv: Move) -> bool {
        let (from, to, arrow) = (mv.from.index(), mv.to.index(), mv.arrow.index());
        if self.amazons[self.turn.index()] & (1 << from) == 0 {
            return false;
        }
        let lines = self.lines_without(from);
        Self::queen_reaches(&lines, from, to) && Self::queen_reaches(&lines, to, arrow)
    }

    fn is_irreversible(&self, _: Move) -> bool {
        true
    }

    fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let mv: Move = text.parse()?;
        let size = self.size();
        if let Some(off) = [mv.from, mv.to, mv.arrow]
            .into_iter()
            .find(|s| s.file() >= size || s.rank() >= size)
        {
            return Err(MoveError::Parse(ParseError::whole(format!(
                "{off} is off the {size}×{size} board"
            ))));
        }
        if self.is_legal(mv) {
            Ok(mv)
        } else {
            Err(self.illegal(mv).into())
        }
    }
}
