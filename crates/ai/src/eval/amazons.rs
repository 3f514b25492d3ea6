//! Amazons evaluation: territory by queen and king distance (who reaches each free square
//! first), a distance-weighted position term, and mobility, in the manner of Lorentz and
//! Hensgens. Region separation comes out of the distances: a square only one side can reach
//! is that side's outright.

use tourney_rules::amazons::{Move, Square};
use tourney_rules::{Amazons, Position};

use super::{Heuristics, weights};

weights! {
    /// Weights of the Amazons evaluation. `territory` sets the scale; the others were tuned
    /// by SPSA (experiments/strength/spsa-amazons.toml: +160 Elo over the hand-set 30, 40, 4, 150
    /// and 20 at 20,000 nodes a move).
    AmazonsWeights {
        /// Per free square a side reaches first by queen moves.
        territory: 100,
        /// Per free square a side reaches first by king steps.
        king: 62,
        /// Per square reached at distance d, weighted 2^-d (early-game position term).
        position: 39,
        /// Per queen move of the side's amazons.
        mobility: 3,
        /// Per amazon with at most two queen moves (nearly trapped).
        trapped: 114,
        /// Per square both sides reach at the same queen distance: the side to move gets there first.
        tie: 21,
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

/// Kogge–Stone fills over one position's free squares. For each direction, the
/// propagators: the free squares a fill may enter 1, 2, 4 and 8 steps at a time. The free
/// squares stay the same within an evaluation, so every fill of its race reuses them.
struct QueenFills {
    propagators: [[u128; 4]; 8],
}

impl QueenFills {
    #[inline]
    fn new(empty: u128) -> Self {
        let mut propagators = [[0; 4]; 8];
        for (pro, &(step, mask)) in propagators.iter_mut().zip(&DIRECTIONS) {
            let mut p = empty & mask;
            for (i, slot) in pro.iter_mut().enumerate() {
                *slot = p;
                p &= shift(p, step << i);
            }
        }
        QueenFills { propagators }
    }

    /// Free squares a queen on any square of `from` reaches.
    #[inline]
    fn reach(&self, from: u128) -> u128 {
        self.directions(from).fold(0, |out, ray| out | ray)
    }

    /// Free squares a queen on any square of `from` reaches, and the sum over the eight
    /// directions of how many it reaches in each.
    #[inline]
    fn reach_counted(&self, from: u128) -> (u128, i32) {
        self.directions(from).fold((0, 0), |(out, count), ray| {
            (out | ray, count + ray.count_ones() as i32)
        })
    }

    /// The free squares a queen on any square of `from` reaches in each direction.
    #[inline]
    fn directions(&self, from: u128) -> impl Iterator<Item = u128> + '_ {
        self.propagators
            .iter()
            .zip(&DIRECTIONS)
            .map(move |(&[p1, p2, p4, p8], &(step, _))| {
                let mut fill = from;
                fill |= p1 & shift(fill, step);
                fill |= p2 & shift(fill, 2 * step);
                fill |= p4 & shift(fill, 4 * step);
                fill |= p8 & shift(fill, 8 * step);
                shift(fill, step) & p1
            })
    }
}

/// The squares from each square in each of the eight `DIRECTIONS` to the board's edge.
const RAYS: [[u128; 100]; 8] = {
    let mut rays = [[0u128; 100]; 8];
    let steps: [(i32, i32); 8] = [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (1, 1),
        (-1, 1),
        (1, -1),
        (-1, -1),
    ];
    let mut d = 0;
    while d < 8 {
        let mut from = 0;
        while from < 100 {
            let (mut file, mut rank) = (from % 10 + steps[d].0, from / 10 + steps[d].1);
            while file >= 0 && file < 10 && rank >= 0 && rank < 10 {
                rays[d][from as usize] |= 1 << (rank * 10 + file);
                file += steps[d].0;
                rank += steps[d].1;
            }
            from += 1;
        }
        d += 1;
    }
    rays
};

/// Free squares a queen on square `from` reaches over `empty`: each ray up to its first
/// blocker, found by a bit scan (cheaper than a fill for one square).
#[inline]
fn queen_moves(from: u32, empty: u128) -> u128 {
    let mut out = 0;
    for (d, rays) in RAYS.iter().enumerate() {
        let mut ray = rays[from as usize];
        let blockers = ray & !empty;
        if blockers != 0 {
            // The nearest blocker: the lowest of a ray to higher indices, else the highest.
            let first = if DIRECTIONS[d].0 > 0 {
                blockers.trailing_zeros()
            } else {
                127 - blockers.leading_zeros()
            };
            ray ^= rays[first as usize];
        }
        out |= ray;
    }
    out & empty
}

/// Free squares next to or on a square of `from` (a race's next layer leaves out the
/// squares seen, `from` among them): a step along the rank, then along the file.
#[inline]
fn king_reach(from: u128, empty: u128) -> u128 {
    let rank = from | ((from << 1) & NOT_A) | ((from >> 1) & NOT_J);
    (rank | (rank << 10) | (rank >> 10)) & empty
}

/// Who reaches the free squares first, searching both sides' distances layer by layer
/// from their `first` layers (the squares each reaches in one move): (squares we reach
/// first, squares they reach first, ties, Σ 2^-d over our layers minus theirs in 1/64).
fn race(
    (us, them): (u128, u128),
    first: (u128, u128),
    reach: impl Fn(u128) -> u128,
) -> (i32, i32, i32, i32) {
    let (mut seen_us, mut seen_them) = (us, them);
    let (mut new_us, mut new_them) = first;
    let (mut ours, mut theirs, mut ties, mut position) = (0u128, 0u128, 0u128, 0i32);
    for d in 1..=12 {
        if new_us | new_them == 0 {
            break;
        }
        seen_us |= new_us;
        seen_them |= new_them;
        ours |= new_us & !seen_them;
        theirs |= new_them & !seen_us;
        ties |= new_us & new_them;
        position += (new_us.count_ones() as i32 - new_them.count_ones() as i32) * (64 >> d.min(6));
        if d < 12 {
            new_us = reach(new_us) & !seen_us;
            new_them = reach(new_them) & !seen_them;
        }
    }
    (
        ours.count_ones() as i32,
        theirs.count_ones() as i32,
        ties.count_ones() as i32,
        position,
    )
}

/// The raw terms of the evaluation for the side with amazons `us` to move, against
/// `them`, with `empty` the free squares; the king race only when `king`.
struct Terms {
    territory: i32,
    king: i32,
    /// Σ 2^-d in 1/64.
    position: i32,
    mobility: i32,
    trapped: i32,
    tie: i32,
}

impl Terms {
    #[inline]
    fn of(us: u128, them: u128, empty: u128, king: bool) -> Terms {
        // The race's first layer is where the amazons reach in one move. Its count in each
        // direction apart sums the amazons' moves, for no two amazons' rays in one direction
        // meet (the nearer amazon blocks the other's). An amazon with more than two free
        // neighbours has more than two moves: only the others' moves are counted one by one.
        let fills = QueenFills::new(empty);
        let (mut mobility, mut trapped) = (0, 0);
        let mut first = [0u128; 2];
        for (side, (amazons, sign)) in [(us, 1), (them, -1)].into_iter().enumerate() {
            let (reach, moves) = fills.reach_counted(amazons);
            first[side] = reach;
            mobility += sign * moves;
            for square in squares(amazons) {
                let on_board = Square::from_index(square as usize).expect("a board square");
                if (Amazons::neighbours(on_board) & empty).count_ones() <= 2
                    && queen_moves(square, empty).count_ones() <= 2
                {
                    trapped -= sign;
                }
            }
        }
        let (ours, theirs, tie, position) =
            race((us, them), (first[0], first[1]), |from| fills.reach(from));
        let king = if king {
            let first = (king_reach(us, empty), king_reach(them, empty));
            let (k_ours, k_theirs, _, _) = race((us, them), first, |from| king_reach(from, empty));
            k_ours - k_theirs
        } else {
            0
        };
        Terms {
            territory: ours - theirs,
            king,
            position,
            mobility,
            trapped,
            tie,
        }
    }
}

/// The evaluation for the side with amazons `us` to move, against `them`, with `empty` the
/// free squares.
#[inline]
fn score(us: u128, them: u128, empty: u128, w: &AmazonsWeights) -> i32 {
    let t = Terms::of(us, them, empty, w.king != 0);
    w.territory * t.territory
        + w.tie * t.tie
        + w.position * t.position / 64
        + w.king * t.king
        + w.mobility * t.mobility
        + w.trapped * t.trapped
}

/// The indices of the squares of a bitboard, lowest first.
fn squares(mut bb: u128) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        (bb != 0).then(|| {
            let index = bb.trailing_zeros();
            bb &= bb - 1;
            index
        })
    })
}

fn square(index: u32) -> tourney_rules::amazons::Square {
    tourney_rules::amazons::Square::from_index(index as usize).expect("a bitboard square")
}

impl Heuristics for Amazons {
    type Weights = AmazonsWeights;
    const WEIGHTS: &'static [&'static str] = AmazonsWeights::NAMES;
    const CAPTURES: bool = false;
    const REPEATS: bool = false;
    const MOVE_INDICES: usize = 100 * 100;

    fn set_weight(weights: &mut AmazonsWeights, name: &str, value: i32) -> bool {
        weights.set(name, value)
    }

    fn weight(weights: &AmazonsWeights, name: &str) -> Option<i32> {
        weights.get(name)
    }

    fn evaluate(&self, w: &AmazonsWeights) -> i32 {
        let us = self.turn();
        score(
            self.amazons(us),
            self.amazons(us.opponent()),
            !self.occupied() & BOARD,
            w,
        )
    }

    /// Two stages when there are more than `k` amazon moves: each is valued before its arrow
    /// is shot, then the arrows of the best `k` of them are: about 80 + 25k evaluations
    /// where there are ~2,000 moves.
    fn best_moves(&self, w: &AmazonsWeights, k: usize) -> (Vec<(i32, Move)>, u64) {
        let us = self.amazons(self.turn());
        let them = self.amazons(self.turn().opponent());
        let empty = !self.occupied() & BOARD;
        let mut steps = Vec::with_capacity(128);
        for from in squares(us) {
            for to in squares(queen_moves(from, empty)) {
                steps.push((0, from, to));
            }
        }
        let mut evaluated = 0;
        if steps.len() > k {
            for (value, from, to) in &mut steps {
                let moved = (1u128 << *from) | (1 << *to);
                *value = -score(them, us ^ moved, empty ^ moved, w);
            }
            evaluated = steps.len() as u64;
            steps.sort_by_key(|&(value, _, _)| std::cmp::Reverse(value));
            steps.truncate(k);
        }
        let mut moves = Vec::with_capacity(steps.len() * 32);
        for (_, from, to) in steps {
            let moved = (1u128 << from) | (1 << to);
            let empty = empty ^ moved;
            for arrow in squares(queen_moves(to, empty)) {
                let value = -score(them, us ^ moved, empty ^ (1 << arrow), w);
                moves.push((
                    value,
                    Move {
                        from: square(from),
                        to: square(to),
                        arrow: square(arrow),
                    },
                ));
            }
        }
        evaluated += moves.len() as u64;
        moves.sort_by_key(|&(value, _)| std::cmp::Reverse(value));
        moves.truncate(k);
        (moves, evaluated)
    }

    fn features(&self, out: &mut [f64]) {
        let us = self.turn();
        let t = Terms::of(
            self.amazons(us),
            self.amazons(us.opponent()),
            !self.occupied() & BOARD,
            true,
        );
        let values = [
            t.territory,
            t.king,
            t.position,
            t.mobility,
            t.trapped,
            t.tie,
        ];
        for (slot, value) in out.iter_mut().zip(values) {
            *slot = f64::from(value);
        }
        out[2] /= 64.0;
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
        for position in random_game(5, 40) {
            let empty = !position.occupied() & BOARD;
            for color in tourney_rules::Color::ALL {
                for sq in position.amazon_squares(color) {
                    let reach = QueenFills::new(empty).reach(1 << sq.index());
                    assert_eq!(
                        reach.count_ones(),
                        position.queen_mobility(sq),
                        "{position} {sq}"
                    );
                    assert_eq!(
                        queen_moves(sq.index() as u32, empty),
                        reach,
                        "{position} {sq}"
                    );
                }
            }
        }
    }

    #[test]
    fn mobility_and_trapped_amazons_match_each_amazons_moves() {
        let mut trapped_seen = 0;
        for seed in 0..6 {
            for position in random_game(seed, 90) {
                let us = position.turn();
                let mobility = |color| -> Vec<i32> {
                    (position.amazon_squares(color).into_iter())
                        .map(|sq| position.queen_mobility(sq) as i32)
                        .collect()
                };
                let (ours, theirs) = (mobility(us), mobility(us.opponent()));
                let trapped = |moves: &[i32]| moves.iter().filter(|&&m| m <= 2).count() as i32;
                let t = Terms::of(
                    position.amazons(us),
                    position.amazons(us.opponent()),
                    !position.occupied() & BOARD,
                    false,
                );
                let sum = |moves: &[i32]| moves.iter().sum::<i32>();
                assert_eq!(t.mobility, sum(&ours) - sum(&theirs), "{position}");
                assert_eq!(t.trapped, trapped(&theirs) - trapped(&ours), "{position}");
                trapped_seen += trapped(&ours) + trapped(&theirs);
            }
        }
        assert!(trapped_seen > 0, "some amazon was trapped");
    }

    /// The start and the positions after each of up to `plies` random moves.
    fn random_game(seed: u64, plies: usize) -> Vec<Amazons> {
        let mut state = seed;
        let mut positions = vec![Amazons::start()];
        for _ in 0..plies {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mut position = *positions.last().unwrap();
            let Some(mv) = position.random_move(state) else {
                break;
            };
            position.play_unchecked(mv);
            positions.push(position);
        }
        positions
    }

    /// Sorts valued moves best first, equal values in move order (a canonical order).
    fn best_first(moves: &mut [(i32, Move)]) {
        moves.sort_by_key(|&(value, mv)| {
            (
                std::cmp::Reverse(value),
                Amazons::move_index(mv),
                mv.arrow.index(),
            )
        });
    }

    /// Every move with the negated evaluation of its child, best first.
    fn every_move_valued(position: &Amazons, w: &AmazonsWeights) -> Vec<(i32, Move)> {
        let mut all = Vec::new();
        position.generate_moves(|mv| {
            let mut child = *position;
            child.play_unchecked(mv);
            all.push((-child.evaluate(w), mv));
        });
        best_first(&mut all);
        all
    }

    #[test]
    fn best_moves_are_legal_valued_and_exact_when_every_amazon_move_is_kept() {
        let w = AmazonsWeights::default();
        for (ply, position) in random_game(11, 30).into_iter().enumerate() {
            let all = every_move_valued(&position, &w);
            // All of them: the same moves and values as evaluating every move.
            let (mut every, evaluated) = position.best_moves(&w, usize::MAX);
            assert!(every.windows(2).all(|p| p[0].0 >= p[1].0), "best first");
            best_first(&mut every);
            assert_eq!(every, all, "ply {ply}: {position}");
            assert_eq!(evaluated, all.len() as u64, "each move valued once");
            // A few: legal, valued as their children, best first, and far cheaper.
            let (best, evaluated) = position.best_moves(&w, 8);
            assert_eq!(best.len(), all.len().min(8));
            assert!(best.windows(2).all(|p| p[0].0 >= p[1].0), "best first");
            for &(value, mv) in &best {
                assert!(position.is_legal(mv), "{mv} in {position}");
                assert!(all.contains(&(value, mv)), "{mv} valued {value}");
            }
            if all.len() > 500 {
                assert!(
                    evaluated * 2 < all.len() as u64,
                    "{evaluated} of {}",
                    all.len()
                );
            }
        }
    }

    #[test]
    fn start_position_is_symmetric_and_territory_decides() {
        let w = AmazonsWeights::default();
        let start = Amazons::start();
        // Symmetric but for the tie bonus of the side to move.
        let sides = (
            start.amazons(tourney_rules::Color::White),
            start.amazons(tourney_rules::Color::Black),
        );
        let empty = !start.occupied() & BOARD;
        let fills = QueenFills::new(empty);
        let first = (fills.reach(sides.0), fills.reach(sides.1));
        let (_, _, ties, _) = race(sides, first, |from| fills.reach(from));
        assert_eq!(start.evaluate(&w), w.tie * ties);
        // White walled into the bottom-left corner, Black free: Black to move is far ahead.
        let boxed: Amazons = "3b2b3/10/10/b8b/10/x9/xx8/1xx7/ww1x6/ww1x6 b"
            .parse()
            .unwrap();
        assert!(boxed.evaluate(&w) > 3000, "{}", boxed.evaluate(&w));
    }
}
