//! The referee: plays one game between two contestants, keeps the clocks, enforces the
//! rules and the adjudication settings, and writes the complete record.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tourney_model::adjudication::centi;
use tourney_model::{GameRecord, GameResult, MoveRecord, PlayerRecord, Termination, TimeControl};

pub use tourney_rules::Adjudicate;
use tourney_rules::{Color, EndReason, Game, MoveError, Position};

use crate::contestant::{Contestant, Failure, Unfit};
use crate::protocol::Go;

mod setup;

pub use setup::{Setup, SideLimits};

/// Rule options that do not parse for the game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rules '{rules}': {source}")]
pub struct RulesError {
    /// The options given.
    pub rules: String,
    /// What is wrong with them.
    pub source: tourney_rules::ParseError,
}

/// The record's `meta` key of the moves that reach its start from the standard one (when
/// the opening came with them), as engines were told them: `position startpos moves …`.
pub const START_MOVES: &str = "start_moves";

/// A named contestant for one colour.
pub struct Seat<'a, P: Position> {
    /// The name in the tournament (the record's `White`/`Black`).
    pub name: String,
    /// Who plays.
    pub player: &'a mut dyn Contestant<P>,
}

/// Game `game` (0 or 1) of a pair: in game 0 `first` makes the game's first move, in game 1
/// the colours are swapped. Returns the white and black seats and the colour `first` has.
pub fn pair_seats<'a, P: Position>(
    game: usize,
    first: Seat<'a, P>,
    second: Seat<'a, P>,
) -> (Seat<'a, P>, Seat<'a, P>, Color) {
    let moves_first = P::start().turn();
    let first_has = if game == 0 {
        moves_first
    } else {
        moves_first.opponent()
    };
    match first_has {
        Color::White => (first, second, first_has),
        Color::Black => (second, first, first_has),
    }
}

/// Why a game could not be played.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefereeError {
    /// A player cannot take part; nothing is scored.
    Unfit {
        /// The player's name.
        name: String,
        /// Why.
        reason: Unfit,
    },
    /// The opening does not fit the start position.
    BadOpening(String),
    /// The caller stopped the game before its end (its `on_move` broke off); nothing is
    /// recorded.
    Stopped,
}

impl std::fmt::Display for RefereeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefereeError::Unfit { name, reason } => write!(f, "{name}: {reason}"),
            RefereeError::BadOpening(why) => write!(f, "bad opening: {why}"),
            RefereeError::Stopped => write!(f, "stopped before its end"),
        }
    }
}

impl std::error::Error for RefereeError {}

/// A side's clock during the game.
struct SideClock {
    left: Duration,
    moves: u32,
}

/// How a game ended: the winner (none for a draw), why, and the detail.
type Ending = (Option<Color>, Termination, Option<String>);

/// Milliseconds of `d`.
fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

/// `detail` of a move never made, with how long it was waited for (`took` ms, the figure
/// the record's `forfeit_ms` keeps) and, on a clock, what was allowed.
fn waited(detail: String, took: u64, allowed: Option<Duration>, margin: Duration) -> String {
    let took = took as f64 / 1000.0;
    match allowed {
        Some(allowed) => format!(
            "{detail} (waited {took:.3} s with {:.3} s allowed and a margin of {:.3} s)",
            allowed.as_secs_f64(),
            margin.as_secs_f64()
        ),
        None => format!("{detail} (waited {took:.3} s)"),
    }
}

/// Both sides' clocks: each side's limits (movetime scaled), its period, base and increment
/// (scaled), and what is left of it.
struct Clocks {
    sides: [SideLimits; 2],
    periods: [(Option<u32>, Option<Duration>, Duration); 2],
    left: [SideClock; 2],
}

impl Clocks {
    /// The clocks at the start of a game under `setup`.
    fn new<P: Adjudicate>(setup: &Setup<P>) -> Self {
        let scale = |d: Duration| d.mul_f64(setup.clock_scale);
        let sides = Color::ALL.map(|c| {
            let mut side = setup.side(c);
            side.limits.movetime = side.limits.movetime.map(scale);
            side
        });
        let periods = sides.map(|side| match side.time_control {
            TimeControl::Infinite => (None, None, Duration::ZERO),
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => (moves, Some(scale(base)), scale(increment)),
        });
        let left = periods.map(|(_, base, _)| SideClock {
            left: base.unwrap_or_default(),
            moves: 0,
        });
        Clocks {
            sides,
            periods,
            left,
        }
    }

    /// The `go` of `mover`'s turn, and the time it is allowed (none: no limit of time).
    fn go(&self, mover: Color) -> (Go, Option<Duration>) {
        let clock = &self.left[mover.index()];
        let (period_moves, base, _) = self.periods[mover.index()];
        let limits = self.sides[mover.index()].limits;
        let clock_of = |c: Color| {
            self.periods[c.index()]
                .1
                .map(|_| ms(self.left[c.index()].left))
        };
        let increment_of = |c: Color| {
            self.periods[c.index()]
                .1
                .map(|_| ms(self.periods[c.index()].2))
        };
        let go = Go {
            wtime: clock_of(Color::White),
            btime: clock_of(Color::Black),
            winc: increment_of(Color::White),
            binc: increment_of(Color::Black),
            movestogo: period_moves.map(|p| p - clock.moves % p),
            movetime: limits.movetime.map(ms),
            nodes: limits.nodes,
            depth: limits.depth,
        };
        let allowed = match (base, limits.movetime) {
            (Some(_), Some(t)) => Some(clock.left.min(t)),
            (Some(_), None) => Some(clock.left),
            (None, t) => t,
        };
        (go, allowed)
    }

    /// Charges `mover`'s clock with a move that took `elapsed`: the increment added, and a
    /// new period's base at its end.
    fn spend(&mut self, mover: Color, elapsed: Duration) {
        let (period_moves, base, increment) = self.periods[mover.index()];
        if base.is_some() {
            let clock = &mut self.left[mover.index()];
            clock.left = clock.left.saturating_sub(elapsed) + increment;
            clock.moves += 1;
            if period_moves.is_some_and(|p| clock.moves.is_multiple_of(p)) {
                clock.left += base.unwrap_or_default();
            }
        }
    }
}

/// Tells both players a new game begins.
fn start_players<P: Adjudicate>(
    setup: &Setup<P>,
    seats: &mut [Seat<'_, P>; 2],
) -> Result<(), RefereeError> {
    for seat in seats.iter_mut() {
        seat.player
            .new_game(setup.rules, setup.seed, &setup.start_path)
            .map_err(|reason| RefereeError::Unfit {
                name: seat.name.clone(),
                reason,
            })?;
    }
    Ok(())
}

/// The game after its opening moves, with their records (no time spent).
fn play_opening<P: Adjudicate>(
    setup: &Setup<P>,
) -> Result<(Game<P>, Vec<MoveRecord>), RefereeError> {
    let mut game = Game::new(setup.start, setup.rules);
    let mut moves = Vec::new();
    for &mv in &setup.opening {
        game.play(mv)
            .map_err(|e| RefereeError::BadOpening(e.to_string()))?;
        moves.push(MoveRecord {
            mv: mv.to_string(),
            time_ms: 0,
            nodes: None,
            depth: None,
            score: None,
            ..Default::default()
        });
    }
    Ok((game, moves))
}

/// The end the rules, the ply limit or an adjudication give the game before the next
/// move, if any. A score adjudication of a game that is played on (`plays_on`) is noted
/// in `adjudicated` with its ply instead, and the game goes on.
fn rule_ending<P: Adjudicate>(
    setup: &Setup<P>,
    game: &Game<P>,
    moves: &[MoveRecord],
    plays_on: bool,
    adjudicated: &mut Option<(Option<Color>, String, usize)>,
) -> Option<Ending> {
    if let Some(outcome) = game.outcome() {
        let termination = match outcome.reason {
            EndReason::Connection => Termination::Connection,
            EndReason::NoMoves => Termination::NoMoves,
            EndReason::Repetition => Termination::Repetition,
        };
        return Some((outcome.winner, termination, None));
    }
    if setup
        .max_plies
        .is_some_and(|max| game.ply() >= max as usize)
    {
        return Some((
            None,
            Termination::MaxPlies,
            Some(format!("{} plies", game.ply())),
        ));
    }
    if setup.adjudicate
        && let Some(w) = game.position().adjudicate()
    {
        return Some((
            Some(w),
            Termination::Adjudication,
            Some("the board is split into regions".into()),
        ));
    }
    if setup.score_rules.any() && adjudicated.is_none() {
        let scores: Vec<Option<i32>> = (moves.iter())
            .map(|m| m.score.as_deref().and_then(centi))
            .collect();
        if let Some((w, why)) = setup.score_rules.verdict(setup.start.turn(), &scores) {
            if !plays_on {
                return Some((w, Termination::Adjudication, Some(why)));
            }
            *adjudicated = Some((w, why, moves.len()));
        }
    }
    None
}

/// One turn of `mover`: its move played and recorded, or the end its failure gives the
/// game with, for a time forfeit, how long the losing move took.
fn turn<P: Adjudicate>(
    setup: &Setup<P>,
    game: &mut Game<P>,
    clocks: &mut Clocks,
    player: &mut dyn Contestant<P>,
) -> Result<MoveRecord, (Ending, Option<u64>)> {
    let mover = game.position().turn();
    let (go, allowed) = clocks.go(mover);
    let deadline = allowed.map_or(setup.unresponsive, |a| a + setup.time_margin);
    let started = Instant::now();
    let reply = player.go(game, &go, deadline);
    let elapsed = started.elapsed();
    let reply = match reply {
        Ok(reply) => reply,
        Err(Failure {
            termination,
            detail,
        }) => {
            let took = (termination == Termination::TimeForfeit).then(|| ms(elapsed));
            let detail = match termination {
                // How long it was waited for, as the record's `forfeit_ms` has it: the
                // engine knows only the deadline it was given, not the whole wait.
                Termination::TimeForfeit | Termination::Unresponsive => {
                    waited(detail, ms(elapsed), allowed, setup.time_margin)
                }
                _ => detail,
            };
            return Err(((Some(mover.opponent()), termination, Some(detail)), took));
        }
    };
    if let Some(allowed) = allowed
        && elapsed > allowed + setup.time_margin
    {
        let detail = format!(
            "{mover} took {:.3} s with {:.3} s allowed",
            elapsed.as_secs_f64(),
            allowed.as_secs_f64()
        );
        let ending = (
            Some(mover.opponent()),
            Termination::TimeForfeit,
            Some(detail),
        );
        return Err((ending, Some(ms(elapsed))));
    }
    clocks.spend(mover, elapsed);
    match game.play_text(&reply.mv) {
        Ok(mv) => Ok(MoveRecord {
            mv: mv.to_string(),
            time_ms: ms(elapsed),
            nodes: reply.nodes,
            depth: reply.depth,
            score: reply.score,
            seldepth: reply.seldepth,
            nps: reply.nps,
            engine_ms: reply.engine_ms,
            // Kept within the record's bounds: at most so many moves, none too long.
            pv: (reply.pv.into_iter())
                .take(tourney_model::MAX_PV_MOVES)
                .take_while(|m| m.chars().count() <= tourney_model::MAX_PV_MOVE_CHARS)
                .collect(),
        }),
        Err(e) => {
            let detail = wrong_move(&reply.mv, game, &e);
            let ending = (
                Some(mover.opponent()),
                Termination::IllegalMove,
                Some(detail),
            );
            Err((ending, None))
        }
    }
}

/// What was wrong with the move `text` the side to move gave in `game`, which is not over:
/// a claim that the game is over, a move in no notation tourney reads, or a move that is
/// not legal here.
fn wrong_move<P: Position>(text: &str, game: &Game<P>, error: &MoveError) -> String {
    let mover = game.position().turn();
    let legal = game.position().legal_moves().len();
    let moves = if legal == 1 { "move" } else { "moves" };
    match (text, error) {
        ("none" | "(none)" | "0000" | "resign" | "", _) => format!(
            "{mover} says the game is over (bestmove '{text}'); it is not: {mover} has {legal} \
             legal {moves}"
        ),
        (_, MoveError::Parse(e)) => {
            format!("{mover} played '{text}', which is not a move ({e})")
        }
        (_, _) => format!("{mover} played '{text}', which is not legal here ({error})"),
    }
}

/// Plays one game and returns its record. `on_move` sees the game after every move (for
/// a board display).
///
/// # Errors
/// [`RefereeError`] if a player is unfit or the opening is illegal; no game is recorded.
pub fn play<'a, P: Adjudicate>(
    setup: &Setup<P>,
    white: Seat<'a, P>,
    black: Seat<'a, P>,
    on_move: &mut dyn FnMut(&Game<P>),
) -> Result<GameRecord, RefereeError> {
    play_until(setup, white, black, &mut |game| {
        on_move(game);
        ControlFlow::Continue(())
    })
}

/// [`play`], where `on_move` can break off the game after any move (a worker whose lease
/// was dropped).
///
/// # Errors
/// [`RefereeError`] if a player is unfit or the opening is illegal, or
/// [`RefereeError::Stopped`] if `on_move` broke off; no game is recorded.
pub fn play_until<'a, P: Adjudicate>(
    setup: &Setup<P>,
    white: Seat<'a, P>,
    black: Seat<'a, P>,
    on_move: &mut dyn FnMut(&Game<P>) -> ControlFlow<()>,
) -> Result<GameRecord, RefereeError> {
    let mut seats = [black, white];
    start_players(setup, &mut seats)?;
    let started_ms = tourney_model::unix_ms_now();
    let (mut game, mut moves) = play_opening(setup)?;
    let mut clocks = Clocks::new(setup);
    // A score adjudication of a game that is played on: the verdict and its ply.
    let plays_on = setup.score_rules.plays_on(setup.seed);
    let mut adjudicated: Option<(Option<Color>, String, usize)> = None;
    // How long the move that lost on time took (the coordinator checks it on the clock).
    let mut forfeit_ms = None;
    let (winner, termination, detail) = loop {
        if let Some(ending) = rule_ending(setup, &game, &moves, plays_on, &mut adjudicated) {
            break ending;
        }
        let mover = game.position().turn();
        match turn(
            setup,
            &mut game,
            &mut clocks,
            &mut *seats[mover.index()].player,
        ) {
            Ok(record) => moves.push(record),
            Err((ending, took)) => {
                forfeit_ms = took;
                break ending;
            }
        }
        if on_move(&game).is_break() {
            return Err(RefereeError::Stopped);
        }
    };
    if termination.is_failure()
        && let Some(w) = winner
    {
        seats[w.opponent().index()].player.abandon();
    }
    let ending = (winner, termination, detail);
    Ok(game_record(
        setup,
        seats,
        moves,
        ending,
        adjudicated,
        forfeit_ms,
        started_ms,
    ))
}

/// The record of a game that ended with `ending`. A game played on past its adjudication
/// is recorded as adjudicated, up to that ply; how it really ended goes into its meta. The
/// side that lost by failing keeps its stderr and the game's protocol transcript; with
/// [`Setup::keep_logs`] every side does.
fn game_record<P: Adjudicate>(
    setup: &Setup<P>,
    seats: [Seat<'_, P>; 2],
    mut moves: Vec<MoveRecord>,
    (winner, termination, detail): Ending,
    adjudicated: Option<(Option<Color>, String, usize)>,
    forfeit_ms: Option<u64>,
    started_ms: u64,
) -> GameRecord {
    let mut meta = setup.meta.clone();
    let (winner, termination, detail) = match adjudicated {
        Some((adjudged, why, ply)) => {
            meta.insert(
                "played_on".into(),
                GameResult::of_winner(winner).as_str().into(),
            );
            meta.insert("played_on_end".into(), termination.name().into());
            meta.insert("played_on_plies".into(), (moves.len() as u64).into());
            moves.truncate(ply);
            (adjudged, Termination::Adjudication, Some(why))
        }
        None => (winner, termination, detail),
    };
    let failed = termination.is_failure();
    let [black, white] = seats;
    let record = |seat: &Seat<'_, P>, color: Color| {
        let kept = (failed && winner != Some(color)) || setup.keep_logs;
        PlayerRecord {
            name: seat.name.clone(),
            spec: seat.player.spec(),
            artifact: None,
            options: seat.player.options().into_iter().collect(),
            stderr: if kept {
                seat.player.stderr_tail()
            } else {
                Vec::new()
            },
            transcript: if kept {
                seat.player.transcript()
            } else {
                Vec::new()
            },
        }
    };
    if setup.seed != 0 {
        meta.insert("seed".into(), setup.seed.into());
    }
    if !setup.start_path.is_empty() {
        let path: Vec<String> = setup.start_path.iter().map(ToString::to_string).collect();
        meta.insert(START_MOVES.into(), path.join(" ").into());
    }
    if let (Termination::TimeForfeit, Some(took)) = (termination, forfeit_ms) {
        meta.insert(tourney_model::check::FORFEIT_MS.into(), took.into());
    }
    GameRecord {
        game: P::GAME,
        rules: setup.rules.to_string(),
        start: setup.start.to_string(),
        opening_plies: setup.opening.len() as u32,
        time_control: setup.time_control_text(),
        white: record(&white, Color::White),
        black: record(&black, Color::Black),
        moves,
        result: GameResult::of_winner(winner),
        termination,
        detail,
        started_ms: Some(started_ms),
        meta,
    }
}
