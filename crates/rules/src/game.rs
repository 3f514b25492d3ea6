//! A game: a start position, the moves played, and what the history decides (repetition).

use crate::error::MoveError;
use crate::position::{EndReason, Outcome, Position};

/// A game in progress or finished: start position, rule options, moves and positions.
///
/// The position type judges connection and move-less sides; the game adds what needs
/// history: the third occurrence of the same board with the same side to move is a draw
/// (positions reached by a pass count too).
#[derive(Debug, Clone)]
pub struct Game<P: Position> {
    rules: P::Rules,
    moves: Vec<P::Move>,
    /// `positions[i]` is the position after `i` moves.
    positions: Vec<P>,
    /// Index of the first position that could still recur (the one after the last
    /// irreversible move).
    reversible_from: usize,
    outcome: Option<Outcome>,
}

impl<P: Position> Game<P> {
    /// A game from `start` under `rules`. A start position that is already decided gives a
    /// finished game.
    pub fn new(start: P, rules: P::Rules) -> Self {
        Game {
            rules,
            moves: Vec::new(),
            positions: vec![start],
            reversible_from: 0,
            outcome: start.outcome(rules),
        }
    }

    /// The rule options of this game.
    pub fn rules(&self) -> P::Rules {
        self.rules
    }

    /// The start position.
    pub fn start(&self) -> &P {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &P {
        self.positions
            .last()
            .expect("a game always has its start position")
    }

    /// Every position of the game: the start, then the position after each move.
    pub fn positions(&self) -> &[P] {
        &self.positions
    }

    /// The moves played so far.
    pub fn moves(&self) -> &[P::Move] {
        &self.moves
    }

    /// The number of moves (plies) played, passes included.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The result, once the game is over.
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// The legal moves now; none once the game is over.
    pub fn legal_moves(&self) -> Vec<P::Move> {
        if self.outcome.is_some() {
            Vec::new()
        } else {
            self.position().legal_moves()
        }
    }

    /// How often the current board with the current side to move has occurred in this game,
    /// the current occurrence included.
    pub fn occurrences(&self) -> usize {
        let current = self.positions.len() - 1;
        let now = self.positions[current];
        (self.reversible_from..=current)
            .rev()
            .step_by(2)
            .filter(|&i| {
                let p = &self.positions[i];
                p.zobrist_hash() == now.zobrist_hash() && *p == now
            })
            .count()
    }

    /// Plays a legal move.
    ///
    /// # Errors
    /// [`MoveError::GameOver`] after the end, [`MoveError::Illegal`] for an illegal move;
    /// the game is unchanged.
    pub fn play(&mut self, mv: P::Move) -> Result<(), MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver { mv: mv.to_string() });
        }
        let position = *self.position();
        let next = position.play(mv)?;
        self.push(position, mv, next);
        Ok(())
    }

    /// Parses move text (see [`Position::parse_move`]) and plays it.
    ///
    /// # Errors
    /// As [`Game::play`], plus [`MoveError::Parse`] for malformed text.
    pub fn play_text(&mut self, text: &str) -> Result<P::Move, MoveError> {
        if self.outcome.is_some() {
            return Err(MoveError::GameOver {
                mv: text.to_string(),
            });
        }
        let position = *self.position();
        let mv = position.parse_move(text)?;
        let mut next = position;
        next.play_unchecked(mv);
        self.push(position, mv, next);
        Ok(mv)
    }

    /// Plays a move known to be legal (from [`Position::generate_moves`] or
    /// [`Position::random_move`] of the current position) without checking it.
    ///
    /// # Panics
    /// If the game is over. An illegal move corrupts the game.
    pub fn play_unchecked(&mut self, mv: P::Move) {
        assert!(
            self.outcome.is_none(),
            "move {mv} after the end of the game"
        );
        let position = *self.position();
        let mut next = position;
        next.play_unchecked(mv);
        self.push(position, mv, next);
    }

    fn push(&mut self, before: P, mv: P::Move, after: P) {
        if before.is_irreversible(mv) {
            self.reversible_from = self.positions.len();
        }
        self.moves.push(mv);
        self.positions.push(after);
        self.outcome = after.outcome(self.rules);
        if self.outcome.is_none() && self.occurrences() >= 3 {
            self.outcome = Some(Outcome {
                winner: None,
                reason: EndReason::Repetition,
            });
        }
    }
}
