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

    /// The weight `name`; `None` if there is no such weight.
    fn weight(weights: &Self::Weights, name: &str) -> Option<i32>;

    /// The static evaluation for the side to move (positive: better for it), for positions
    /// that are not decided.
    fn evaluate(&self, weights: &Self::Weights) -> i32;

    /// The evaluation's features, one a weight in [`Heuristics::WEIGHTS`] order, into
    /// `out` (as long as the weights): the evaluation is their sum weighted, up to a unit
    /// of rounding a divided term. Texel tuning fits the weights to them.
    fn features(&self, out: &mut [f64]);

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

    /// Whether the game has captures. Captures are searched before killer moves; in a game
    /// without them the searches try the TT move and the killers before generating a
    /// node's moves.
    const CAPTURES: bool;

    /// Whether the move captures (searched early).
    fn is_capture(&self, mv: Self::Move) -> bool;

    /// Whether a position can come again in a game. Where it cannot (every Amazons move
    /// shoots an arrow), the searches do not look for repetitions.
    const REPEATS: bool;
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

            /// A weight by name; `None` if unknown.
            pub fn get(&self, name: &str) -> Option<i32> {
                match name {
                    $(stringify!($field) => Some(self.$field),)*
                    _ => None,
                }
            }

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

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Amazons, Loa};

    /// The evaluation with random weights against the features so weighted, over the
    /// positions of random games: equal within `rounding`.
    fn features_weigh_to_the_evaluation<P: Heuristics>(rounding: f64) {
        let mut state = 0x9e37_79b9_u64;
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 16
        };
        let mut features = vec![0.0; P::WEIGHTS.len()];
        for _ in 0..20 {
            let mut weights = P::Weights::default();
            let values: Vec<i32> = (P::WEIGHTS.iter())
                .map(|name| {
                    let value = (next() % 201) as i32 - 50;
                    assert!(P::set_weight(&mut weights, name, value));
                    value
                })
                .collect();
            let mut position = P::start();
            for _ in 0..60 {
                if position.is_game_over() {
                    break;
                }
                position.features(&mut features);
                let weighted: f64 = (values.iter().zip(&features))
                    .map(|(&w, f)| f64::from(w) * f)
                    .sum();
                let evaluated = f64::from(position.evaluate(&weights));
                assert!(
                    (evaluated - weighted).abs() <= rounding,
                    "{position}: evaluated {evaluated}, features weighted {weighted}"
                );
                let mv = position.random_move(next()).expect("not over");
                position.play_unchecked(mv);
            }
        }
    }

    #[test]
    fn loa_features_weigh_to_its_evaluation() {
        // Two divided terms a side.
        features_weigh_to_the_evaluation::<Loa>(4.0);
    }

    #[test]
    fn amazons_features_weigh_to_its_evaluation() {
        // The position term is divided.
        features_weigh_to_the_evaluation::<Amazons>(1.0);
    }
}
