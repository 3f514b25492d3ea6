//! Amazons evaluation: territory by queen and king distance (who reaches each free square
//! first), a distance-weighted position term, and mobility, in the manner of Lorentz and
//! Hensgens. Region separation comes out of the distances: a square only one side can reach
//! is that side's outright.

use tourney_rules::amazons::Move;
use tourney_rules::{Amazons, Position};

use super::{Heuristics, weights};

weights! {
    /// Weights of the Amazons evaluation.
    AmazonsWeights {
        /// Per free square a side reaches first by queen moves.
        territory: 100,
        /// Per free square a side reaches first by king steps.
        king: 30,
        /// Per square reached at distance d, weighted 2^-d (early-game position term).
        position: 40,
        /// Per queen move of the side's amazons.
        mobility: 4,
        /// Per amazon with at most two queen moves (nearly trapped).
        trapped: 150,
        /// Per square both sides reach at the same queen distance: the side to move gets there first.
        tie: 20,
    }
}

const BOARD: u128 = (1 << 100) - 1;
const FILE_A: u128 = {
    let mut bb = 0u128;
    let mut r = 0;
    while r < 10 {
        bb |= 1 << (r * 10);
        r += 1;
    }
    bb
};
const NOT_A: u128 = BOARD & !FILE_A;
const NOT_J: u128 = BOARD & !(FILE_A << 9);

/// The eight directions: (index shift, mask of squares a one-step shift may land on).
const DIRECTIONS: [(i32, u128); 8] = [
    (1, NOT_A),
    (-1, NOT_J),
    (10, BOARD),
    (-10, BOARD),
    (11, NOT_A),
    (9, NOT_J),
    (-9, NOT_A),
    (-11, NOT_J),
];

#[inline(always)]
fn shift(bb: u128, by: i32) -> u128 {
    if by >= 0 { bb << by } else { bb >> -by }
}

/// Free squares a queen on any square of `from` reaches over `empty` (Kogge–Stone fills).
#[inline]
fn queen_reach(from: u128, empty: u128) -> u128 {
    let mut out = 0;
    for (step, mask) in DIRECTIONS {
        let mut fill = from;
        let mut pro = empty & mask;
        fill |= pro & shift(fill, step);
        pro &= shift(pro, step);
        fill |= pro & shift(fill, 2 * step);
        pro &= shift(pro, 2 * step);
        fill |= pro & shift(fill, 4 * step);
        pro &= shift(pro, 4 * step);
        fill |= pro & shift(fill, 8 * step);
        out |= shift(fill, step) & mask & empty;
    }
    out
}

/// Free squares next to a square of `from`.
#[inline]
fn king_reach(from: u128, empty: u128) -> u128 {
    DIRECTIONS
        .iter()
        .fold(0, |acc, &(step, mask)| acc | (shift(from, step) & mask))
        & empty
}

/// Who reaches the free squares first, searching both sides' distances layer by layer:
/// (squares we reach first, squares they reach first, ties, Σ 2^-d over our layers minus
/// theirs in 1/64).
fn race(us: u128, them: u128, empty: u128, reach: fn(u128, u128) -> u128) -> (i32, i32, i32, i32) {
    let (mut seen_us, mut seen_them) = (us, them);
    let (mut front_us, mut front_them) = (us, them);
    let (mut ours, mut theirs, mut ties, mut position) = (0u128, 0u128, 0u128, 0i32);
    for d in 1..=12 {
        let new_us = reach(front_us, empty) & !seen_us;
        let new_them = reach(front_them, empty) & !seen_them;
        if new_us | new_them == 0 {
            break;
        }
        seen_us |= new_us;
        seen_them |= new_them;
        ours |= new_us & !seen_them;
        theirs |= new_them & !seen_us;
        ties |= new_us & new_them;
        position += (new_us.count_ones() as i32 - new_them.count_ones() as i32) * (64 >> d.min(6));
        front_us = new_us;
        front_them = new_them;
    }
    (
        ours.count_ones() as i32,
        theirs.count_ones() as i32,
        ties.count_ones() as i32,
        position,
    )
}

impl Heuristics for Amazons {
    type Weights = AmazonsWeights;
    const WEIGHTS: &'static [&'static str] = AmazonsWeights::NAMES;
    const MOVE_INDICES: usize = 100 * 100;

    fn set_weight(weights: &mut AmazonsWeights, name: &str, value: i32) -> bool {
        weights.set(name, value)
    }

    fn evaluate(&self, w: &AmazonsWeights) -> i32 {
        let us = self.turn();
        let them = us.opponent();
        let empty = !self.occupied() & BOARD;
        let (ours, theirs, ties, position) =
            race(self.amazons(us), self.amazons(them), empty, queen_reach);
        let mut score = w.territory * (ours - theirs) + w.tie * ties + w.position * position / 64;
        if w.king != 0 {
            let (k_ours, k_theirs, _, _) =
                race(self.amazons(us), self.amazons(them), empty, king_reach);
            score += w.king * (k_ours - k_theirs);
        }
        for (color, sign) in [(us, 1), (them, -1)] {
            for square in self.amazon_squares(color) {
                let moves = self.queen_mobility(square) as i32;
                score += sign * (w.mobility * moves - if moves <= 2 { w.trapped } else { 0 });
            }
        }
        score
    }

    fn move_index(mv: Move) -> usize {
        mv.from.index() * 100 + mv.to.index()
    }

    fn is_capture(&self, _: Move) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queen_reach_matches_the_rules_mobility() {
        let mut state = 5u64;
        let mut position = Amazons::start();
        for _ in 0..40 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let Some(mv) = position.random_move(state) else {
                break;
            };
            position.play_unchecked(mv);
            let empty = !position.occupied() & BOARD;
            for color in tourney_rules::Color::ALL {
                for sq in position.amazon_squares(color) {
                    let reach = queen_reach(1 << sq.index(), empty);
                    assert_eq!(
                        reach.count_ones(),
                        position.queen_mobility(sq),
                        "{position} {sq}"
                    );
                }
            }
        }
    }

    #[test]
    fn start_position_is_symmetric_and_territory_decides() {
        let w = AmazonsWeights::default();
        let start = Amazons::start();
        // Symmetric but for the tie bonus of the side to move.
        let (_, _, ties, _) = race(
            start.amazons(tourney_rules::Color::White),
            start.amazons(tourney_rules::Color::Black),
            !start.occupied() & BOARD,
            queen_reach,
        );
        assert_eq!(start.evaluate(&w), w.tie * ties);
        // White walled into the bottom-left corner, Black free: Black to move is far ahead.
        let boxed: Amazons = "3b2b3/10/10/b8b/10/x9/xx8/1xx7/ww1x6/ww1x6 b"
            .parse()
            .unwrap();
        assert!(boxed.evaluate(&w) > 3000, "{}", boxed.evaluate(&w));
    }
}
