//! Perft: counting move sequences, the standard check of a move generator.

use crate::position::Position;

/// The number of move sequences of exactly `depth` plies from `position`.
///
/// A decided position has no moves (it counts 1 at depth 0 and 0 deeper); a forced LOA pass
/// is a move; one Amazons ply is a whole turn. The last ply is bulk-counted with
/// [`Position::count_moves`]. Repetition, which needs history, is ignored (it cannot occur
/// within 7 plies of a position without history).
///
/// ```
/// use tourney_rules::{Amazons, Loa, Position, perft};
/// assert_eq!(perft(&Loa::start(), 3), 44_952);
/// assert_eq!(perft(&Amazons::start(), 1), 2_176);
/// ```
pub fn perft<P: Position>(position: &P, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => position.count_moves(),
        _ => {
            let mut nodes = 0;
            position.generate_moves(|mv| {
                let mut child = *position;
                child.play_unchecked(mv);
                nodes += perft(&child, depth - 1);
            });
            nodes
        }
    }
}

/// Perft split by first move: each legal move with the count of `depth - 1` plies after it.
/// At depth 0 the list is empty.
pub fn perft_divide<P: Position>(position: &P, depth: u32) -> Vec<(P::Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    position.generate_moves(|mv| {
        let mut child = *position;
        child.play_unchecked(mv);
        out.push((mv, perft(&child, depth - 1)));
    });
    out
}
