//! Evaluation and move features per game: what the searches need to know about a game
//! beyond its rules.

mod amazons;
mod loa;

use std::fmt::Debug;
use tourney_rules::Position;

pub use amazons::AmazonsWeights;
pub use loa::LoaWeights;

/// Game knowledge for the searches: a static evaluation with named, settable weights
/// (so "an engine version" is a player plus its weights), and move features for ordering.
pub trait Heuristics: Position {
    /// The evaluation weights.
    type Weights: Clone + Debug + Default + Send + Sync + 'static;

    /// The names of the weights, as spec strings set them.
    const WEIGHTS: &'static [&'static str];

    /// The number of distinct [`Heuristics::move_index`] values.
    const MOVE_INDICES: usize;

    /// Sets the weight `name` to `value`; `false` if there is no such weight.
    fn set_weight(weights: &mut Self::Weights, name: &str, value: i32) -> bool;

    /// The static evaluation for the side to move (positive: better for it), for positions
    /// that are not decided.
    fn evaluate(&self, weights: &Self::Weights) -> i32;

    /// The best `k` moves by the evaluation of the positions they lead to, best first, each
    /// with that evaluation for the side to move here (the negated evaluation of the child),
    /// and how many positions were evaluated to find them. The default evaluates every move
    /// (ties keep generation order); a game may find them more cheaply, exactly when `k`
    /// is at least the number of moves.
    fn best_moves(&self, weights: &Self::Weights, k: usize) -> (Vec<(i32, Self::Move)>, u64) {
        let mut scored = Vec::new();
        self.generate_moves(|mv| {
            let mut child = *self;
            child.play_unchecked(mv);
            scored.push((-child.evaluate(weights), mv));
        });
        let evaluated = scored.len() as u64;
        scored.sort_by_key(|&(score, _)| std::cmp::Reverse(score));
        scored.truncate(k);
        (scored, evaluated)
    }

    /// An index of the move (its squares) for history tables.
    fn move_index(mv: Self::Move) -> usize;

    /// Whether the move captures (searched early).
    fn is_capture(&self, mv: Self::Move) -> bool;
}

/// Defines a weights struct with its defaults and the name table behind
/// [`Heuristics::WEIGHTS`] and [`Heuristics::set_weight`].
macro_rules! weights {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $default:expr),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: i32,)*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { $($field: $default,)* }
            }
        }

        impl $name {
            /// The weight names.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),*];

            /// Sets a weight by name; `false` if unknown.
            pub fn set(&mut self, name: &str, value: i32) -> bool {
                match name {
                    $(stringify!($field) => self.$field = value,)*
                    _ => return false,
                }
                true
            }
        }
    };
}
pub(crate) use weights;
