//! Early endings a referee may apply before the rules end a game, as pure functions of a
//! position: the referee applies them while it plays, and the coordinator applies them
//! again to a reported game before it believes the ending.

use crate::{Amazons, Color, Loa, Position};

/// Game-specific early endings the referee may apply.
pub trait Adjudicate: Position {
    /// The winner if the position can be decided before its end (`None`: play on).
    fn adjudicate(&self) -> Option<Color> {
        None
    }
}

impl Adjudicate for Loa {}

impl Adjudicate for Amazons {
    /// Once no region holds amazons of both sides, the side with more free squares in its
    /// regions wins (each turn fills one square of the mover's own regions); on equal
    /// counts the side to move runs out first and loses.
    fn adjudicate(&self) -> Option<Color> {
        let territory = self.separated_territory()?;
        let me = self.turn();
        Some(
            if territory[me.index()] > territory[me.opponent().index()] {
                me
            } else {
                me.opponent()
            },
        )
    }
}
