//! LOA evaluation in the spirit of Winands' MIA: concentration, centralisation, centre of
//! mass, quads (Euler number), connectedness and mobility, each our side minus theirs.

use tourney_rules::loa::Move;
use tourney_rules::{Loa, Position};

use super::{Heuristics, weights};

weights! {
    /// Weights of the LOA evaluation (per unit of each feature). `concentration` sets the
    /// scale; the others were fitted by Texel tuning to 150,000 self-play positions with
    /// the target mostly the engine's own score (experiments/strength/raised/texel-loa-lambda-verify.toml:
    /// +25 Elo at 20,000 nodes a move over the SPSA-tuned 17, 13, 12, 65, 8, 17 and 23 of
    /// experiments/strength/spsa-loa.toml, themselves +122 over the hand-set weights).
    LoaWeights {
        /// Penalty per unit of distance to the centre of mass beyond the tightest shape.
        concentration: 24,
        /// Bonus for central squares (average of the piece-square table, in %).
        centralisation: 3,
        /// Penalty per unit of distance of the centre of mass from the board centre.
        com: 0,
        /// Penalty per unit of Euler number above one (more groups, more holes).
        quads: 4,
        /// Bonus per pair of neighbouring pieces, per piece.
        connectedness: 94,
        /// Bonus per legal step.
        mobility: 10,
        /// Bonus per enemy edge piece walled in: our piece on the square next to it,
        /// towards the centre.
        walls: 12,
        /// Bonus for being the side to move.
        tempo: 21,
    }
}

/// Piece-square table: central squares are worth more, corners and edges less.
const CENTRAL: [i32; 64] = {
    const ROW: [[i32; 8]; 4] = [
        [-80, -25, -20, -20, -20, -20, -25, -80],
        [-25, 10, 10, 10, 10, 10, 10, -25],
        [-20, 10, 25, 25, 25, 25, 10, -20],
        [-20, 10, 25, 50, 50, 25, 10, -20],
    ];
    let mut out = [0; 64];
    let mut i = 0;
    while i < 64 {
        let r = i / 8;
        out[i] = ROW[if r < 4 { r } else { 7 - r }][i % 8];
        i += 1;
    }
    out
};

/// Least possible sum of Chebyshev distances of `n` pieces to their centre.
const MIN_SPREAD: [i32; 13] = [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14];

const FILE_A: u64 = 0x0101_0101_0101_0101;
const NOT_FILE_A: u64 = !FILE_A;
const NOT_FILE_H: u64 = !(FILE_A << 7);

const RANK_1: u64 = 0xff;
const RANK_8: u64 = 0xff << 56;

/// Enemy pieces on the edge whose square towards the centre holds one of ours.
fn walled(ours: u64, theirs: u64) -> i32 {
    let bottom = theirs & RANK_1 & (ours >> 8);
    let top = theirs & RANK_8 & (ours << 8);
    let left = theirs & FILE_A & ((ours >> 1) & NOT_FILE_H);
    let right = theirs & (FILE_A << 7) & ((ours << 1) & NOT_FILE_A);
    (bottom | top | left | right).count_ones() as i32
}

/// One side's raw evaluation terms.
struct SideTerms {
    /// Pieces.
    n: i32,
    /// Distance to the centre of mass beyond the tightest shape.
    surplus: i32,
    /// Sum of the piece-square table.
    central: i32,
    /// Distance of the centre of mass from the board centre.
    com_off: i32,
    /// Euler number above one.
    excess_euler: i32,
    /// Pairs of neighbouring pieces.
    neighbours: i32,
}

impl SideTerms {
    /// The terms of `pieces`, `None` for none.
    fn of(pieces: u64) -> Option<SideTerms> {
        let n = pieces.count_ones() as i32;
        if n == 0 {
            return None;
        }
        let (mut sum_file, mut sum_rank, mut central) = (0, 0, 0);
        let mut rest = pieces;
        while rest != 0 {
            let s = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            sum_file += (s % 8) as i32;
            sum_rank += (s / 8) as i32;
            central += CENTRAL[s];
        }
        // Centre of mass, rounded to a square.
        let (cf, cr) = ((2 * sum_file + n) / (2 * n), (2 * sum_rank + n) / (2 * n));
        let mut spread = 0;
        let mut rest = pieces;
        while rest != 0 {
            let s = rest.trailing_zeros() as i32;
            rest &= rest - 1;
            spread += ((s % 8) - cf).abs().max(((s / 8) - cr).abs());
        }
        // Quads: 2×2 windows by the number of pieces in them.
        let a = pieces;
        let b = (pieces >> 1) & NOT_FILE_H;
        let c = pieces >> 8;
        let d = (pieces >> 9) & NOT_FILE_H;
        // Windows anchored at each square, counting off-board squares as empty; windows that
        // start left of file a or below rank 1 are left out (a cheap approximation of MIA's
        // Euler number).
        let ones = a ^ b ^ c ^ d;
        let pairs_or_more = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d);
        let q1 = (ones & !pairs_or_more).count_ones() as i32;
        let q3 = (ones & pairs_or_more).count_ones() as i32;
        let qd = ((a & d & !b & !c) | (b & c & !a & !d)).count_ones() as i32;
        let euler = (q1 - q3 - 2 * qd) / 4;
        let neighbours = (pieces & (pieces >> 1) & NOT_FILE_H).count_ones()
            + (pieces & (pieces >> 8)).count_ones()
            + (pieces & (pieces >> 9) & NOT_FILE_H).count_ones()
            + (pieces & (pieces >> 7) & NOT_FILE_A).count_ones();
        Some(SideTerms {
            n,
            surplus: spread - MIN_SPREAD[n as usize],
            central,
            // Distance of the centre of mass from the four central squares.
            com_off: (2 * cf - 7).abs().max((2 * cr - 7).abs()) / 2,
            excess_euler: (euler - 1).max(0),
            neighbours: neighbours as i32,
        })
    }

    /// Weighted.
    fn weighted(&self, w: &LoaWeights) -> i32 {
        -w.concentration * self.surplus + w.centralisation * self.central / (self.n * 10)
            - w.com * self.com_off
            - w.quads * self.excess_euler
            + w.connectedness * self.neighbours / self.n
    }

    /// As the first five features, in [`LoaWeights::NAMES`] order.
    fn features(&self) -> [f64; 5] {
        let n = f64::from(self.n);
        [
            -f64::from(self.surplus),
            f64::from(self.central) / (n * 10.0),
            -f64::from(self.com_off),
            -f64::from(self.excess_euler),
            f64::from(self.neighbours) / n,
        ]
    }
}

/// The features of one side, already weighted.
fn side(pieces: u64, w: &LoaWeights) -> i32 {
    SideTerms::of(pieces).map_or(0, |t| t.weighted(w))
}

impl Heuristics for Loa {
    type Weights = LoaWeights;
    const WEIGHTS: &'static [&'static str] = LoaWeights::NAMES;
    const CAPTURES: bool = true;
    const REPEATS: bool = true;
    const MOVE_INDICES: usize = 64 * 64;

    fn set_weight(weights: &mut LoaWeights, name: &str, value: i32) -> bool {
        weights.set(name, value)
    }

    fn weight(weights: &LoaWeights, name: &str) -> Option<i32> {
        weights.get(name)
    }

    fn evaluate(&self, w: &LoaWeights) -> i32 {
        let us = self.turn();
        let them = us.opponent();
        let mobility = if w.mobility != 0 {
            w.mobility * (self.mobility(us) as i32 - self.mobility(them) as i32)
        } else {
            0
        };
        let (ours, theirs) = (self.pieces(us), self.pieces(them));
        let walls = w.walls * (walled(ours, theirs) - walled(theirs, ours));
        side(ours, w) - side(theirs, w) + mobility + walls + w.tempo
    }

    fn features(&self, out: &mut [f64]) {
        let us = self.turn();
        let them = us.opponent();
        let (ours, theirs) = (self.pieces(us), self.pieces(them));
        let terms = |pieces| SideTerms::of(pieces).map_or([0.0; 5], |t| t.features());
        let (a, b) = (terms(ours), terms(theirs));
        for i in 0..5 {
            out[i] = a[i] - b[i];
        }
        out[5] = f64::from(self.mobility(us)) - f64::from(self.mobility(them));
        out[6] = f64::from(walled(ours, theirs) - walled(theirs, ours));
        out[7] = 1.0;
    }

    fn move_index(mv: Move) -> usize {
        match mv {
            Move::Step { from, to, .. } => from.index() * 64 + to.index(),
            Move::Pass => 0,
        }
    }

    fn is_capture(&self, mv: Move) -> bool {
        matches!(mv, Move::Step { capture: true, .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_position_is_balanced_and_symmetric() {
        let w = LoaWeights::default();
        let start = Loa::start();
        assert_eq!(start.evaluate(&w), w.tempo);
    }

    #[test]
    fn walls_count_enemy_edge_pieces_blocked_inwards() {
        // White a4 has a black piece on b4; white h5 is free. Black d1 has white d2 above it.
        let position: Loa = "8/8/8/7w/wb6/8/3w4/3b4 b".parse().unwrap();
        assert_eq!(
            walled(
                position.pieces(tourney_rules::Color::Black),
                position.pieces(tourney_rules::Color::White)
            ),
            1
        );
        assert_eq!(
            walled(
                position.pieces(tourney_rules::Color::White),
                position.pieces(tourney_rules::Color::Black)
            ),
            1
        );
    }

    #[test]
    fn a_compact_group_beats_a_scattered_one() {
        let w = LoaWeights::default();
        // Black: a 2×3 block in the centre; White: spread over the edges. Black to move.
        let tight: Loa = "8/8/8/2bbb3/2bbb3/8/w6w/w1w2w1w b".parse().unwrap();
        assert!(tight.evaluate(&w) > 200, "{}", tight.evaluate(&w));
        let (mut spread, mut compact) = (LoaWeights::default(), LoaWeights::default());
        spread.set("concentration", 0);
        compact.set("concentration", 100);
        assert!(tight.evaluate(&compact) > tight.evaluate(&spread));
    }
}
