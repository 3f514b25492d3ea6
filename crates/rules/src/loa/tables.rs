//! Lookup tables for the 8×8 LOA board, built at compile time.
//!
//! Square index `rank * 8 + file`; bit `i` of a bitboard is square `i`:
//!
//! ```text
//!  8 | 56 57 58 59 60 61 62 63
//!  … |
//!  1 |  0  1  2  3  4  5  6  7
//!      a  b  c  d  e  f  g  h
//! ```

/// The eight directions as (file step, rank step). Directions `2l` and `2l + 1` are the two
/// ways along line `l`: 0 = file (N, S), 1 = rank (E, W), 2 = diagonal (NE, SW),
/// 3 = anti-diagonal (NW, SE).
pub(crate) const DIRECTIONS: [(i32, i32); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (-1, -1),
    (-1, 1),
    (1, -1),
];

/// Index step of each direction.
pub(crate) const DELTA: [i32; 8] = {
    let mut out = [0; 8];
    let mut d = 0;
    while d < 8 {
        out[d] = DIRECTIONS[d].1 * 8 + DIRECTIONS[d].0;
        d += 1;
    }
    out
};

const fn on_board(file: i32, rank: i32) -> bool {
    file >= 0 && file < 8 && rank >= 0 && rank < 8
}

/// `RAY[s][d]`: the squares from `s` (exclusive) in direction `d` to the edge.
pub(crate) static RAY: [[u64; 8]; 64] = {
    let mut out = [[0u64; 8]; 64];
    let mut s = 0;
    while s < 64 {
        let mut d = 0;
        while d < 8 {
            let (mut f, mut r) = ((s % 8) as i32, (s / 8) as i32);
            let mut bb = 0u64;
            loop {
                f += DIRECTIONS[d].0;
                r += DIRECTIONS[d].1;
                if !on_board(f, r) {
                    break;
                }
                bb |= 1 << (r * 8 + f);
            }
            out[s][d] = bb;
            d += 1;
        }
        s += 1;
    }
    out
};

/// `LINE[s][l]`: every square of line `l` through `s`, `s` included.
pub(crate) static LINE: [[u64; 4]; 64] = {
    let mut out = [[0u64; 4]; 64];
    let mut s = 0;
    while s < 64 {
        let mut l = 0;
        while l < 4 {
            out[s][l] = RAY[s][2 * l] | RAY[s][2 * l + 1] | (1 << s);
            l += 1;
        }
        s += 1;
    }
    out
};

/// `REACH[s][d]`: how many squares lie beyond `s` in direction `d` (the longest move).
pub(crate) static REACH: [[u8; 8]; 64] = {
    let mut out = [[0u8; 8]; 64];
    let mut s = 0;
    while s < 64 {
        let mut d = 0;
        while d < 8 {
            out[s][d] = RAY[s][d].count_ones() as u8;
            d += 1;
        }
        s += 1;
    }
    out
};

/// Squares not on file a.
pub(crate) const NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
/// Squares not on file h.
pub(crate) const NOT_FILE_H: u64 = !0x8080_8080_8080_8080;

/// The squares next to a square of `bb` (8-neighbourhood), not counting `bb` itself
/// unless a square of `bb` is next to another.
#[inline(always)]
pub(crate) const fn neighbours(bb: u64) -> u64 {
    let vertical = (bb << 8) | (bb >> 8);
    let column = bb | vertical;
    vertical | ((column << 1) & NOT_FILE_A) | ((column >> 1) & NOT_FILE_H)
}

/// `bb` together with its 8 neighbours.
#[inline(always)]
pub(crate) const fn dilate(bb: u64) -> u64 {
    bb | neighbours(bb)
}

/// Zobrist keys: `PIECE_KEYS[color][square]`.
pub(crate) static PIECE_KEYS: [[u64; 64]; 2] = [
    crate::zobrist::keys(0x4c4f_415f_424c_4b21),
    crate::zobrist::keys(0x4c4f_415f_5748_5421),
];

/// Zobrist key XORed in when White is to move.
pub(crate) const WHITE_TO_MOVE_KEY: u64 = crate::zobrist::mix(0x5749_5445_5f4b_4559);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rays_and_lines_have_the_expected_lengths() {
        // a1: file 7 up, rank 7 right, diagonal 7, anti-diagonal 0.
        assert_eq!(REACH[0], [7, 0, 7, 0, 7, 0, 0, 0]);
        assert_eq!(LINE[0][2].count_ones(), 8);
        // d4 (index 27): long diagonal a1-h8 and anti-diagonal a7-g1.
        assert_eq!(LINE[27][2].count_ones(), 8);
        assert_eq!(LINE[27][3].count_ones(), 7);
        assert_eq!(dilate(1), 0b11 | (0b11 << 8));
        assert_eq!(dilate(1 << 63), (0b11 << 62) | (0b11 << 54));
        assert_eq!(neighbours(1), 0b10 | (0b11 << 8));
        assert_eq!(neighbours(0b11), 0b111 | (0b111 << 8));
    }
}
