//! Whoever plays a side: a built-in player in-process, or an outside engine process.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use tourney_ai::{Clock, Heuristics, Limits, Player};
use tourney_model::Termination;
use tourney_rules::{Color, Game, Position};

use crate::protocol::Go;

/// A move as a player gave it, not yet checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    /// The move text.
    pub mv: String,
    /// Nodes searched, if reported.
    pub nodes: Option<u64>,
    /// Depth, if reported.
    pub depth: Option<u32>,
    /// Score (`cp 35`), if reported.
    pub score: Option<String>,
    /// Selective depth, if reported.
    pub seldepth: Option<u32>,
    /// Nodes per second, if reported.
    pub nps: Option<u64>,
    /// The search time the engine reported, in milliseconds.
    pub engine_ms: Option<u64>,
    /// The principal variation it reported last.
    pub pv: Vec<String>,
}

/// A player's failure during a game: it loses with this termination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// `crash`, `unresponsive` or `time-forfeit`.
    pub termination: Termination,
    /// What happened, for the record.
    pub detail: String,
}

/// A player that cannot take part (failed handshake, unsupported game): nothing is scored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfit(pub String);

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "engine unfit: {}", self.0)
    }
}

impl std::error::Error for Unfit {}

/// One side of a game, driven by the referee.
pub trait Contestant<P: Position>: Send {
    /// The player spec or command line, for the record.
    fn spec(&self) -> String;

    /// The options it was given (`setoption`), for the record; none for a built-in player.
    fn options(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Gets ready for a new game under `rules`, from a start that `start_path` reaches from
    /// the standard start when it is not empty (an outside engine is then told
    /// `position startpos moves …`).
    /// A seeded built-in player mixes `game_seed` into its own seed (0 keeps it).
    ///
    /// # Errors
    /// [`Unfit`] if the player cannot play it (the game is not played).
    fn new_game(
        &mut self,
        rules: P::Rules,
        game_seed: u64,
        start_path: &[P::Move],
    ) -> Result<(), Unfit>;

    /// Asks for a move in the current position of `game`. `deadline` is how long the
    /// referee waits before declaring the player out of time or unresponsive.
    ///
    /// # Errors
    /// [`Failure`] when the player crashes or does not answer in time.
    fn go(&mut self, game: &Game<P>, go: &Go, deadline: Duration) -> Result<Reply, Failure>;

    /// The last lines the player wrote to stderr.
    fn stderr_tail(&self) -> Vec<String> {
        Vec::new()
    }

    /// The current (or last) game's protocol with the player, both ways, timed and
    /// bounded (an outside engine's; empty for a player in process).
    fn transcript(&self) -> Vec<String> {
        Vec::new()
    }

    /// The player lost by a failure: stop it now (an outside engine's process is killed,
    /// and its stderr read to the end); the next game starts it afresh.
    fn abandon(&mut self) {}
}

/// A built-in player running in the referee's thread.
pub struct BuiltIn<P: Position> {
    spec: String,
    player: Box<dyn Player<P>>,
}

impl<P: Heuristics> BuiltIn<P> {
    /// The built-in player named by `spec` (`ab:depth=6`).
    ///
    /// # Errors
    /// The spec is malformed or does not fit the game (the error lists what is accepted).
    pub fn new(spec: &str) -> Result<Self, tourney_ai::SpecError> {
        let parsed: tourney_ai::PlayerSpec = spec.parse()?;
        Ok(BuiltIn {
            spec: spec.to_string(),
            player: parsed.build::<P>()?,
        })
    }

    /// Bytes the player holds between games (its transposition table or tree).
    pub fn memory(&self) -> usize {
        self.player.memory()
    }
}

/// The search limits of `go` for the side to move.
pub fn limits_for(go: &Go, side: Color) -> Limits {
    let ms = Duration::from_millis;
    let (time, inc) = match side {
        Color::White => (go.wtime, go.winc),
        Color::Black => (go.btime, go.binc),
    };
    Limits {
        nodes: go.nodes,
        depth: go.depth,
        movetime: go.movetime.map(ms),
        clock: time.map(|t| Clock {
            time: ms(t),
            increment: ms(inc.unwrap_or(0)),
            moves_to_go: go.movestogo,
        }),
    }
}

impl<P: Heuristics> Contestant<P> for BuiltIn<P> {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn new_game(&mut self, _: P::Rules, game_seed: u64, _: &[P::Move]) -> Result<(), Unfit> {
        self.player.new_game(game_seed);
        Ok(())
    }

    fn go(&mut self, game: &Game<P>, go: &Go, _: Duration) -> Result<Reply, Failure> {
        let limits = limits_for(go, game.position().turn());
        let result = self
            .player
            .choose(game, &limits, &AtomicBool::new(false), &mut |_| {});
        Ok(Reply {
            mv: result.mv.to_string(),
            nodes: Some(result.info.nodes),
            depth: Some(result.info.depth).filter(|&d| d > 0),
            score: result.info.score.map(|s| s.to_string()),
            // The rest is an outside engine's telemetry: a built-in player's moves stay
            // as compact as they always were.
            ..Reply::default()
        })
    }
}
