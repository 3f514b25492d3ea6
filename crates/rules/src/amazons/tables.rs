//! Lookup tables for the 10×10 Amazons board, built at compile time.
//!
//! Besides `u128` bitboards (bit `i` = square `rank * 10 + file`), a position keeps the
//! occupancy of each of its 58 lines as a 10-bit word: 10 ranks, 10 files, 19 diagonals and
//! 19 anti-diagonals. A square has a position 0..10 on each of its four lines (its file on
//! ranks and both diagonal kinds, its rank on files); positions a short diagonal does not
//! have are permanently occupied ("walls"). One table lookup on such a word then gives how
//! far a queen slides each way, which is what move counting needs.
//!
//! ```text
//! line kind   words     position in word   "up" step   "down" step
//! rank        0..10     file               +1  (E)     -1  (W)
//! file        10..20    rank               +10 (N)     -10 (S)
//! diagonal    20..39    file               +11 (NE)    -11 (SW)
//! anti-diag   39..58    file               -9  (SE)    +9  (NW)
//! ```

/// Number of line words.
pub(crate) const LINES: usize = 58;

/// `LINE_OF[s][k]`: the word of the line of kind `k` through square `s`.
pub(crate) static LINE_OF: [[u8; 4]; 100] = {
    let mut out = [[0u8; 4]; 100];
    let mut s = 0;
    while s < 100 {
        let (f, r) = (s % 10, s / 10);
        out[s] = [
            r as u8,
            10 + f as u8,
            20 + (f + 9 - r) as u8,
            39 + (f + r) as u8,
        ];
        s += 1;
    }
    out
};

/// `POS_ON[s][k]`: the position of square `s` in its line of kind `k`.
pub(crate) static POS_ON: [[u8; 4]; 100] = {
    let mut out = [[0u8; 4]; 100];
    let mut s = 0;
    while s < 100 {
        let (f, r) = ((s % 10) as u8, (s / 10) as u8);
        out[s] = [f, r, f, f];
        s += 1;
    }
    out
};

/// `LINE_SQUARES[w][p]`: the square at position `p` of line word `w` (0 where the line has
/// no such square), padded so that any 16 bytes from a position `p < 10` can be copied.
pub(crate) static LINE_SQUARES: [[u8; 32]; LINES] = {
    let mut out = [[0u8; 32]; LINES];
    let mut s = 0;
    while s < 100 {
        let mut k = 0;
        while k < 4 {
            out[LINE_OF[s][k] as usize][POS_ON[s][k] as usize] = s as u8;
            k += 1;
        }
        s += 1;
    }
    out
};

/// The line words of an empty board: only the walls of short diagonals are set.
pub(crate) static EMPTY_LINES: [u16; LINES] = {
    let mut out = [0x3ffu16; LINES];
    let mut w = 0;
    while w < 20 {
        out[w] = 0;
        w += 1;
    }
    let mut s = 0;
    while s < 100 {
        let mut k = 2;
        while k < 4 {
            out[LINE_OF[s][k] as usize] &= !(1 << POS_ON[s][k]);
            k += 1;
        }
        s += 1;
    }
    out
};

/// `SLIDE[word][p]`: free squares next to position `p` of a line with occupancy `word`,
/// packed as `down | up << 4` (the bit of `p` itself is ignored).
pub(crate) static SLIDE: [[u8; 16]; 1024] = {
    let mut out = [[0u8; 16]; 1024];
    let mut word = 0;
    while word < 1024 {
        let mut p = 0;
        while p < 10 {
            let mut down = 0;
            while down < p && word & (1 << (p - down - 1)) == 0 {
                down += 1;
            }
            let mut up = 0;
            while p + up + 1 < 10 && word & (1 << (p + up + 1)) == 0 {
                up += 1;
            }
            out[word][p] = (down | (up << 4)) as u8;
            p += 1;
        }
        word += 1;
    }
    out
};

/// `RUN[word][p]`: free squares next to position `p` on both sides (down + up of [`SLIDE`]).
pub(crate) static RUN: [[u8; 16]; 1024] = {
    let mut out = [[0u8; 16]; 1024];
    let mut word = 0;
    while word < 1024 {
        let mut p = 0;
        while p < 16 {
            out[word][p] = (SLIDE[word][p] & 15) + (SLIDE[word][p] >> 4);
            p += 1;
        }
        word += 1;
    }
    out
};

/// `NEIGHBOURS[s]`: the up to 8 squares next to `s`.
pub(crate) static NEIGHBOURS: [u128; 100] = {
    let mut out = [0u128; 100];
    let mut s = 0;
    while s < 100 {
        let (f, r) = ((s % 10) as i32, (s / 10) as i32);
        let mut df = -1;
        while df <= 1 {
            let mut dr = -1;
            while dr <= 1 {
                let (nf, nr) = (f + df, r + dr);
                if (df != 0 || dr != 0) && nf >= 0 && nf < 10 && nr >= 0 && nr < 10 {
                    out[s] |= 1 << (nr * 10 + nf);
                }
                dr += 1;
            }
            df += 1;
        }
        s += 1;
    }
    out
};

/// Zobrist keys of an amazon of each colour on each square.
pub(crate) static AMAZON_KEYS: [[u64; 100]; 2] = [
    crate::zobrist::keys(0x414d_415a_424c_4b21),
    crate::zobrist::keys(0x414d_415a_5748_5421),
];

/// Zobrist keys of an arrow on each square.
pub(crate) static ARROW_KEYS: [u64; 100] = crate::zobrist::keys(0x4152_524f_5753_2121);

/// Zobrist key XORed in when Black is to move.
pub(crate) const BLACK_TO_MOVE_KEY: u64 = crate::zobrist::mix(0x424c_4143_4b5f_4b45);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slide_counts_stop_at_occupied_squares_and_walls() {
        assert_eq!(SLIDE[0][0], 9 << 4);
        assert_eq!(SLIDE[0][9], 9);
        // Occupied at 2 and 7; from 4: down to 3 (1 square), up to 6 (2 squares).
        assert_eq!(SLIDE[(1 << 2) | (1 << 7)][4], 1 | (2 << 4));
        assert_eq!(RUN[(1 << 2) | (1 << 7)][4], 3);
        // The a1-j10 diagonal has no walls; the one through a10 alone is all wall but a10.
        assert_eq!(EMPTY_LINES[LINE_OF[0][2] as usize], 0);
        assert_eq!(EMPTY_LINES[LINE_OF[90][2] as usize], 0x3fe);
        assert_eq!(NEIGHBOURS[0].count_ones(), 3);
        // The anti-diagonal through a10 runs a10 (file 0) to j1 (file 9).
        let anti = LINE_OF[90][3] as usize;
        assert_eq!((LINE_SQUARES[anti][0], LINE_SQUARES[anti][9]), (90, 9));
        assert_eq!(NEIGHBOURS[55].count_ones(), 8);
    }
}
