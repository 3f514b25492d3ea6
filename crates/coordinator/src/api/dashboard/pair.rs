//! The board viewer's pair: both games of a pair, each with every position it passed
//! through (`GET /api/v1/tournaments/{id}/pairs/{pair}`).

use serde::Serialize;
use tourney_model::{GameRecord, GameResult, MoveRecord, Termination};
use tourney_rules::{GameKind, Position, with_position};

use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// A game for the board viewer: the record and every position it passed through.
#[derive(Debug, Serialize)]
pub(super) struct GameView {
    #[serde(with = "tourney_model::game_kind")]
    game: GameKind,
    white: String,
    black: String,
    result: GameResult,
    termination: Termination,
    detail: Option<String>,
    opening_plies: u32,
    moves: Vec<MoveRecord>,
    /// `positions[i]`: the position string after `i` plies (`positions[0]` is the start).
    pub(super) positions: Vec<String>,
    /// Why the replay stopped early, if a move did not replay (a corrupt record).
    pub(super) replay_error: Option<String>,
    /// White's engine log as the record kept it: the protocol transcript (with stderr), or
    /// stderr alone; empty when the game kept none.
    white_log: Vec<String>,
    /// Black's, likewise.
    black_log: Vec<String>,
    /// The mover's clock left after each move, in milliseconds (`None`: no clock).
    clock_ms: Vec<Option<u64>>,
}

/// Both games of a pair.
#[derive(Debug, Serialize)]
pub struct PairView {
    tournament: u64,
    pair: u64,
    games: Vec<GameView>,
}

/// A stored pair with its games replayed (`None`: not stored).
///
/// # Errors
/// The store failed.
pub fn pair_of(c: &Coordinator, id: u64, pair: u64) -> Result<Option<PairView>, CoordinatorError> {
    let Some(games) = c.pair_games(id, pair)? else {
        return Ok(None);
    };
    if games.is_empty() {
        return Err(CoordinatorError::Invalid(format!(
            "pair {pair} of tournament {id} has no stored games"
        )));
    }
    Ok(Some(PairView {
        tournament: id,
        pair,
        games: games.into_iter().map(game_view).collect(),
    }))
}

pub(super) fn game_view(record: GameRecord) -> GameView {
    let replayed = with_position!(record.game, P => replay::<P>(&record));
    let (positions, replay_error) = match replayed {
        Ok(positions) => (positions, None),
        Err((positions, e)) => (positions, Some(e)),
    };
    let log = |p: &tourney_model::PlayerRecord| match p.transcript.is_empty() {
        true => p.stderr.iter().map(|l| format!("! {l}")).collect(),
        false => p.transcript.clone(),
    };
    let (white_log, black_log) = (log(&record.white), log(&record.black));
    let clock_ms = tourney_model::check::clocks_left(&record);
    GameView {
        clock_ms,
        white_log,
        black_log,
        game: record.game,
        white: record.white.name,
        black: record.black.name,
        result: record.result,
        termination: record.termination,
        detail: record.detail,
        opening_plies: record.opening_plies,
        moves: record.moves,
        positions,
        replay_error,
    }
}

/// The position strings from the record's start through each of its moves; on a move
/// that does not replay, those so far and what went wrong.
fn replay<P: Position>(record: &GameRecord) -> Result<Vec<String>, (Vec<String>, String)> {
    let mut position: P = record
        .start
        .parse()
        .map_err(|e| (Vec::new(), format!("start position: {e}")))?;
    let mut positions = vec![position.to_string()];
    for (ply, m) in record.moves.iter().enumerate() {
        let next = position
            .parse_move(&m.mv)
            .map_err(|e| e.to_string())
            .and_then(|mv| position.play(mv).map_err(|e| e.to_string()));
        match next {
            Ok(next) => position = next,
            Err(e) => return Err((positions, format!("ply {} ({}): {e}", ply + 1, m.mv))),
        }
        positions.push(position.to_string());
    }
    Ok(positions)
}
