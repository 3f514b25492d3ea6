//! A game pair as the coordinator hands it to a worker: how its games are played and by
//! whom. The wire form (`tourney.v1.PairJob`) converts to and from these types in the proto
//! crate; coordinator and worker work on these.

use std::collections::BTreeMap;

use crate::TimeControl;
use crate::record::PlayerRecord;
use crate::tournament::TournamentConfig;
use tourney_rules::GameKind;

/// How the games of a tournament are played: the game, its rules, limits and adjudication.
#[derive(Debug, Clone, PartialEq)]
pub struct GameSettings {
    /// The tournament's name (recorded in each game's `meta`).
    pub tournament_name: String,
    /// The game.
    pub game: GameKind,
    /// Rule options as `key=value,...` (empty for the defaults).
    pub rules: String,
    /// The clock ([`TimeControl::Infinite`] for none).
    pub time_control: TimeControl,
    /// Nodes per move.
    pub nodes: Option<u64>,
    /// Depth per move.
    pub depth: Option<u32>,
    /// Milliseconds per move.
    pub movetime_ms: Option<u64>,
    /// Draw after this many plies.
    pub max_plies: Option<u32>,
    /// Amazons: decide once the board is split into regions of one side each.
    pub adjudicate: bool,
    /// Milliseconds over the clock before a time forfeit.
    pub margin_ms: u64,
    /// Scale clocks and movetimes by the worker's speed (`limits.scale = "nps"`).
    pub scale_by_speed: bool,
    /// Resign and draw adjudication by the engines' scores.
    pub score_rules: crate::adjudication::ScoreRules,
    /// What outside engines' processes may use.
    pub engine_limits: crate::tournament::EngineLimits,
    /// Which games keep their outside engines' logs.
    pub engine_logs: crate::tournament::EngineLogs,
    /// The first engine makes the openings (`genfens`), two a pair.
    pub engine_openings: bool,
}

impl GameSettings {
    /// The settings a tournament file gives its games.
    pub fn of(config: &TournamentConfig) -> GameSettings {
        let l = &config.limits;
        GameSettings {
            tournament_name: config.name.clone(),
            game: config.game,
            rules: config.rules_text(),
            time_control: MoveLimits::of(l).time_control,
            nodes: l.nodes,
            depth: l.depth,
            movetime_ms: l.movetime,
            max_plies: config.adjudication.max_plies,
            adjudicate: config.adjudication.regions,
            margin_ms: l.margin,
            scale_by_speed: l.scale == crate::tournament::ClockScale::Nps,
            score_rules: config.adjudication.score_rules(),
            engine_limits: config.engine_limits,
            engine_logs: config.engine_logs,
            engine_openings: config
                .datagen()
                .is_some_and(|d| d.openings == crate::tournament::DatagenOpenings::Engine),
        }
    }
}

/// The most a worker's speed scales a clock (`limits.scale = "nps"`), either way: the
/// bound of `tourney_ai::speed::clock_scale`, which a worker's test holds to this one.
pub const MOST_CLOCK_SCALE: f64 = 4.0;

/// An engine's own clock and per-move limits (time odds), in place of the tournament's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveLimits {
    /// The clock ([`TimeControl::Infinite`] for none).
    pub time_control: TimeControl,
    /// Nodes per move.
    pub nodes: Option<u64>,
    /// Depth per move.
    pub depth: Option<u32>,
    /// Milliseconds per move.
    pub movetime_ms: Option<u64>,
}

impl MoveLimits {
    /// The limits of a validated `limits` table.
    pub fn of(l: &crate::tournament::LimitSettings) -> MoveLimits {
        MoveLimits {
            // A validated file's clock parses; an absent one means no clock.
            time_control: l
                .tc
                .as_deref()
                .and_then(|tc| tc.parse().ok())
                .unwrap_or(TimeControl::Infinite),
            nodes: l.nodes,
            depth: l.depth,
            movetime_ms: l.movetime,
        }
    }
}

/// Who plays one side of a pair.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "two engines a pair job: their size does not matter, their plain fields do"
)]
pub enum EngineKind {
    /// A built-in player, by its spec (`ab:depth=6`).
    BuiltIn(String),
    /// An outside engine.
    Outside {
        /// Its command line.
        command: String,
        /// The sha256 of its uploaded program, which the worker fetches and runs in place
        /// of the command's first word.
        artifact_sha256: Option<String>,
        /// `setoption` values.
        options: Vec<(String, String)>,
        /// Built from source on the worker: the command is then the built program.
        source: Option<crate::source::Source>,
        /// Data files for its working directory: name → sha256.
        files: Vec<(String, String)>,
        /// The expected bench signature.
        bench: Option<u64>,
        /// Its reference bench speed, nodes per second (`limits.scale = "nps"` scales a
        /// worker's clocks by it over the worker's own bench speed of the engine).
        reference_nps: Option<u64>,
        /// The protocol it speaks ([`crate::source::PROTOCOLS`]; empty: tourney's own).
        protocol: String,
        /// The threads it is given: the cores a worker keeps for it while its game runs,
        /// and its `Threads` option when it declares one (at least 1).
        threads: u32,
    },
}

/// An engine of a pair: its name in the tournament and who it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    /// The name in the standings.
    pub name: String,
    /// Built-in or outside.
    pub kind: EngineKind,
    /// Its own limits, in place of the tournament's.
    pub limits: Option<MoveLimits>,
}

impl Engine {
    /// Engine `index` of `config`, with its artifact (sha256 by engine name) if uploaded.
    ///
    /// # Panics
    /// `index` is not an engine of `config`.
    pub fn of(
        config: &TournamentConfig,
        index: usize,
        artifacts: &std::collections::BTreeMap<String, String>,
    ) -> Engine {
        let e = &config.engines[index];
        let kind = match (&e.player, &e.command) {
            (Some(spec), _) => EngineKind::BuiltIn(spec.clone()),
            (None, command) => EngineKind::Outside {
                command: command.clone().unwrap_or_default(),
                artifact_sha256: artifacts.get(&e.name).cloned(),
                options: e.option_values(),
                source: e.source(),
                files: e.files.clone().into_iter().collect(),
                bench: e.bench,
                reference_nps: e.reference_nps,
                protocol: e.protocol.clone().unwrap_or_default(),
                threads: config.threads_of(index).unwrap_or(1),
            },
        };
        Engine {
            name: e.name.clone(),
            kind,
            limits: e.limits.as_ref().map(MoveLimits::of),
        }
    }
}

impl Engine {
    /// How a game record names this engine's player ([`Identity`]).
    pub fn identity(&self) -> Identity {
        let (spec, artifact, options) = match &self.kind {
            EngineKind::BuiltIn(spec) => (spec.clone(), None, BTreeMap::new()),
            EngineKind::Outside {
                command,
                artifact_sha256,
                options,
                source,
                ..
            } => (
                source
                    .as_ref()
                    .map_or_else(|| format!("cmd:{command}"), |s| s.spec()),
                artifact_sha256.clone(),
                options.iter().cloned().collect(),
            ),
        };
        Identity {
            name: self.name.clone(),
            spec,
            artifact,
            options,
        }
    }

    /// Writes this engine's [`identity`](Engine::identity) into a record's player.
    pub fn describe(&self, player: &mut PlayerRecord) {
        let Identity {
            name,
            spec,
            artifact,
            options,
        } = self.identity();
        (player.name, player.spec, player.artifact, player.options) =
            (name, spec, artifact, options);
    }

    /// This engine with parameters set (a tuning run's values): weights added to a built-in
    /// player's spec, or `setoption` values of an outside engine, replacing those it has.
    pub fn with_values(mut self, values: &[(&str, i64)]) -> Engine {
        match &mut self.kind {
            EngineKind::BuiltIn(spec) => *spec = crate::spsa::spec_with(spec, values),
            EngineKind::Outside { options, .. } => {
                options.retain(|(name, _)| values.iter().all(|(n, _)| n != name));
                options.extend(values.iter().map(|(n, v)| (n.to_string(), v.to_string())));
            }
        }
        self
    }
}

/// How a game record names an engine: its name, its built-in spec or `cmd:` and its
/// command line as the tournament gave it, its artifact's sha256 and its options (a tuning
/// run's values included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The name in the tournament.
    pub name: String,
    /// `ab:depth=6`, or `cmd:./engine --fast`.
    pub spec: String,
    /// The sha256 of an outside engine's uploaded program.
    pub artifact: Option<String>,
    /// An outside engine's options.
    pub options: BTreeMap<String, String>,
}

impl Identity {
    /// The identity a record's player gives.
    pub fn of(player: &PlayerRecord) -> Identity {
        Identity {
            name: player.name.clone(),
            spec: player.spec.clone(),
            artifact: player.artifact.clone(),
            options: player.options.clone(),
        }
    }
}

/// One game pair: the opening played twice, `first` moving first in game 0 and `second`
/// in game 1.
#[derive(Debug, Clone, PartialEq)]
pub struct PairJob {
    /// The tournament.
    pub tournament: u64,
    /// The pair's index.
    pub pair: u64,
    /// How its games are played.
    pub settings: GameSettings,
    /// The engine that moves first in game 0.
    pub first: Engine,
    /// The other engine.
    pub second: Engine,
    /// The start position, as the suite keeps it ([`crate::opening`]): a position string,
    /// and after a tab the moves from the standard start that reach it, when known.
    pub opening: String,
    /// Its index in the tournament's opening suite.
    pub opening_index: u64,
    /// Game 1's opening (as `opening` is written) and its index when it is not game 0's
    /// (data generation runs play each opening once).
    pub second_opening: Option<(String, u64)>,
    /// The pair's seed: game `g` is played with
    /// [`game_seed`](crate::tournament::game_seed)`(seed, g)`.
    pub seed: u64,
    /// The coordinator's seal of this pair as leased (its tournament, pair, the worker's
    /// host and token, both engines' identities): sent back with the result, it lets the
    /// coordinator take a result of a lease it no longer knows (after a restart), and only
    /// as leased.
    pub ticket: String,
    /// What each of its games needs of the worker's GPUs (`[requires] gpus`): the worker
    /// gives the game that many devices of its own.
    pub gpus: crate::gpu::GpuNeed,
}

impl Engine {
    /// The threads it is given (`None`: a built-in player, on the game thread).
    pub fn threads(&self) -> Option<u32> {
        match &self.kind {
            EngineKind::BuiltIn(_) => None,
            EngineKind::Outside { threads, .. } => Some(*threads),
        }
    }
}

impl PairJob {
    /// The cores one of its games takes while it runs
    /// ([`cores_of_game`](crate::fleet::cores_of_game)).
    pub fn cores(&self) -> u32 {
        crate::fleet::cores_of_game([self.first.threads(), self.second.threads()])
    }
}
