//! A tournament's state and a completed pair's outcome.

use serde::{Deserialize, Serialize};

/// Where a tournament is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Submitted, no pair played yet.
    Queued,
    /// Pairs are being played.
    Running,
    /// Every planned pair played, or the SPRT decided (or reached its maximum).
    Finished,
    /// Stopped by a person; `tourney resume` takes it up again with its games.
    Cancelled,
    /// Stopped because a pair could not be played (an engine that does not start, does not
    /// support the game, or whose program cannot be fetched); `tourney resume` goes on.
    Paused,
    /// Submitted by a user, waiting for an approver other than its author
    /// (`tourney approve`); nothing is leased meanwhile.
    Pending,
}

impl State {
    /// `queued`, `running`, `finished`, `cancelled`, `paused` or `pending`.
    pub fn name(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Finished => "finished",
            State::Cancelled => "cancelled",
            State::Paused => "paused",
            State::Pending => "pending",
        }
    }

    /// Whether pairs can still be leased.
    pub fn is_active(self) -> bool {
        matches!(self, State::Queued | State::Running)
    }

    /// Whether it has ended: finished, or cancelled (until it is resumed).
    pub fn has_ended(self) -> bool {
        matches!(self, State::Finished | State::Cancelled)
    }
}

/// What a finished pair contributes to the standings: the two engines, the half-points of
/// `first` in each game (game 0: `first` moves first; game 1: colours swapped), and who
/// played White in each, as the game records say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairOutcome {
    /// The pair's index.
    pub pair: u64,
    /// Index of the pairing's first engine.
    pub first: usize,
    /// Index of the second engine.
    pub second: usize,
    /// Half-points of `first` in game 0 and game 1 (0, 1 or 2 each).
    pub half_points: [u8; 2],
    /// The engine (index) that played White in game 0 and in game 1. Records stored before
    /// colours were kept read as [`PairOutcome::COLOURS_UNKNOWN`] until
    /// [`PairOutcome::with_legacy_colours`] fills them in.
    #[serde(default = "colours_unknown")]
    pub white: [usize; 2],
}

fn colours_unknown() -> [usize; 2] {
    PairOutcome::COLOURS_UNKNOWN
}

impl PairOutcome {
    /// `white` of a stored outcome that did not record colours.
    pub const COLOURS_UNKNOWN: [usize; 2] = [usize::MAX; 2];

    /// Fills in the colours of an outcome stored without them: then `first` always moved
    /// first in game 0, so it had `first_mover`'s colour there and the other in game 1.
    pub fn with_legacy_colours(mut self, first_mover: tourney_rules::Color) -> PairOutcome {
        if self.white == Self::COLOURS_UNKNOWN {
            self.white = match first_mover {
                tourney_rules::Color::White => [self.first, self.second],
                tourney_rules::Color::Black => [self.second, self.first],
            };
        }
        self
    }

    /// White's half-points (0, 1 or 2) in game `g`.
    pub fn white_half_points(&self, g: usize) -> u8 {
        if self.white[g] == self.first {
            self.half_points[g]
        } else {
            2 - self.half_points[g]
        }
    }
}
