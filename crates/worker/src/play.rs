//! Playing one leased pair: both games of an opening, colours swapped.

use std::ops::ControlFlow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tourney_ai::Heuristics;
use tourney_model::job::{Engine, EngineKind, PairJob};
use tourney_model::tournament::EngineLimits;
use tourney_proto::v1 as pb;
use tourney_rules::with_position;
use tourney_runner::confine::EnginePolicy;
use tourney_runner::{
    Adjudicate, BuiltIn, Contestant, EngineConfig, ExternalEngine, RefereeError, Seat, Setup,
    SideLimits, pair_seats, play_until,
};

use crate::WorkerMetrics;
use crate::pool::{self, Pool};

mod fetch;

pub(crate) use fetch::prepare;
pub use fetch::{Fetcher, command_line};

/// Why a pair cannot be played on this worker; reported to the coordinator as the
/// failure's reason.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PlayError {
    /// An outside engine's program could not be fetched.
    #[error("fetching artifact of {engine}: {message}")]
    Fetch {
        /// The engine.
        engine: String,
        /// The coordinator's answer.
        message: String,
    },
    /// A fetched program is not the one named.
    #[error("artifact of {0} does not match its sha256")]
    Mismatch(String),
    /// The artifact cache could not be written.
    #[error("cache {path}: {source}")]
    Cache {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// A built-in player's spec does not build for the game.
    #[error(transparent)]
    Spec(#[from] tourney_ai::SpecError),
    /// The rule options do not parse.
    #[error(transparent)]
    Rules(#[from] tourney_runner::RulesError),
    /// The opening is not a position of the game.
    #[error("opening: {0}")]
    Opening(tourney_rules::ParseError),
    /// The engine that makes a data generation run's openings did not make them.
    #[error("genfens: {0}")]
    GenFens(String),
    /// No game could be played (an engine unfit to play).
    #[error(transparent)]
    Referee(#[from] tourney_runner::RefereeError),
    /// The job does not fit the model (an unknown game, say).
    #[error("malformed job: {0}")]
    Wire(#[from] tourney_proto::convert::WireError),
    /// The records could not be written.
    #[error("records: {0}")]
    Records(#[from] serde_json::Error),
    /// Its games take more cores than the worker offers.
    #[error("its games take {needs} cores; this worker offers {offers} (--cores)")]
    TooFewCores {
        /// The cores one of its games takes.
        needs: u32,
        /// The worker's `--cores`.
        offers: usize,
    },
}

/// Players kept between pairs, by game and spec (built-in) or by game, command, options and
/// limits (outside engines, with their processes), within [`pool::BOUNDS`].
static PLAYERS: Mutex<Pool> = Mutex::new(Pool::new(pool::BOUNDS));

/// The key of outside engines in the pool (a different one never shares a process); it
/// holds the CPUs the engine is pinned to (`--affinity`) and the environment the worker
/// set (its GPUs), so that a kept engine serves only games pinned where it runs, on its
/// own GPUs.
fn outside_key(game: tourney_rules::GameKind, config: &EngineConfig) -> String {
    let EngineConfig {
        command,
        options,
        limits,
        files,
        protocol,
        threads,
        policy,
        ..
    } = config;
    let cpus = crate::affinity::list_text(&policy.cpus);
    let env = &policy.env;
    format!(
        "{game}:cmd:{command}\u{1f}{options:?}\u{1f}{files:?}\u{1f}{limits:?}\u{1f}{protocol}\
         \u{1f}{threads:?}\u{1f}{cpus}\u{1f}{env:?}"
    )
}

/// How an outside engine of a job is started: its (prepared) command, options, data files
/// (name → cached path), protocol and threads, confined by `limits` and `policy`.
pub(crate) fn outside_config(
    command: &str,
    options: &[(String, String)],
    files: &[(String, String)],
    protocol: &str,
    threads: Option<u32>,
    limits: &EngineLimits,
    policy: &EnginePolicy,
) -> EngineConfig {
    let mut config = EngineConfig::new(command);
    config.threads = threads;
    config.options = options.to_vec();
    config.limits = *limits;
    config.policy = policy.clone();
    config.files = (files.iter())
        .map(|(name, path)| (name.clone(), path.into()))
        .collect();
    // Checked where the job came in: empty is tourney's own.
    config.protocol = protocol.parse().unwrap_or_default();
    // Its relative paths name the files placed in its own directory (an uploaded script),
    // never what the worker's working directory holds.
    config.paths_from_cwd = false;
    config
}

/// Ends the kept engines' processes (when the worker stops), off the calling thread's
/// clock: each gets `quit` and a second, in parallel.
pub(crate) fn retire_engines(metrics: &WorkerMetrics) {
    let mut pool = players();
    let kept = pool.take_engines();
    show_pool(&pool, metrics);
    drop(pool);
    let quitting: Vec<_> = kept
        .into_iter()
        .map(|e| std::thread::spawn(move || drop(e)))
        .collect();
    for q in quitting {
        let _ = q.join();
    }
}

/// Shows the pool's size on the idle gauges.
fn show_pool(pool: &Pool, metrics: &WorkerMetrics) {
    let (kept, bytes) = pool.size();
    metrics.idle_players.set(kept as i64);
    metrics.idle_player_bytes.set(bytes as i64);
}

fn players() -> std::sync::MutexGuard<'static, Pool> {
    PLAYERS.lock().unwrap_or_else(|e| e.into_inner())
}

/// One side of a pair.
enum Side<P: Heuristics> {
    BuiltIn(String, BuiltIn<P>),
    Outside(String, Box<ExternalEngine>),
}

impl<P: Heuristics> Side<P> {
    fn new(
        engine: &Engine,
        limits: &EngineLimits,
        policy: &EnginePolicy,
    ) -> Result<Self, PlayError> {
        let spec = match &engine.kind {
            EngineKind::Outside {
                command,
                options,
                files,
                protocol,
                threads,
                artifact_sha256,
                ..
            } => {
                let threads = Some(*threads);
                let mut config =
                    outside_config(command, options, files, protocol, threads, limits, policy);
                // An uploaded program runs from a copy checked as it starts.
                config.program_sha256 = artifact_sha256.clone();
                let key = outside_key(P::GAME, &config);
                let kept = players().take(&key);
                let engine = match kept.and_then(|b| b.downcast::<ExternalEngine>().ok()) {
                    Some(engine) => engine,
                    None => Box::new(ExternalEngine::new(config)),
                };
                return Ok(Side::Outside(key, engine));
            }
            EngineKind::BuiltIn(spec) => spec,
        };
        let key = format!("{}:{spec}", P::GAME);
        let cached = players().take(&key);
        let player = match cached.and_then(|b| b.downcast::<BuiltIn<P>>().ok()) {
            Some(player) => *player,
            None => BuiltIn::<P>::new(spec)?,
        };
        Ok(Side::BuiltIn(key, player))
    }

    fn contestant(&mut self) -> &mut dyn Contestant<P> {
        match self {
            Side::BuiltIn(_, p) => p,
            Side::Outside(_, e) => e.as_mut(),
        }
    }

    /// Returns the player to the pool (an outside engine with its process, which the next
    /// game tells `newgame`, or restarts if it died or used up half a limit); counts an
    /// outside engine's restarts. What no longer fits in the pool is dropped off this game
    /// slot's clock (an engine's `quit` and grace second).
    fn release(self, metrics: &WorkerMetrics) {
        let mut pool = players();
        let evicted = match self {
            Side::BuiltIn(key, player) => {
                let bytes = player.memory();
                pool.keep_built_in(key, Box::new(player), bytes)
            }
            Side::Outside(key, mut engine) => {
                let (starts, restarts) = engine.take_starts();
                metrics.engine_starts.inc_by(u64::from(starts));
                metrics.engine_restarts.inc_by(u64::from(restarts));
                pool.keep_engine(key, engine)
            }
        };
        show_pool(&pool, metrics);
        drop(pool);
        if !evicted.is_empty() {
            std::thread::spawn(move || drop(evicted));
        }
    }
}

/// The most a `genfens` answer may take.
const GENFENS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Two openings `side` makes from `seed` (`genfens 2 seed S`; a built-in player makes
/// them as `tourney engine` does), each a position of the game's rules that is not over.
fn made_openings<P: Heuristics>(
    side: &mut Side<P>,
    seed: u64,
    rules: P::Rules,
) -> Result<[P; 2], PlayError> {
    let texts: Vec<String> = match side {
        Side::BuiltIn(..) => (tourney_ai::genfens::genfens(P::start_for(rules), 2, seed).iter())
            .map(ToString::to_string)
            .collect(),
        Side::Outside(_, engine) => engine
            .genfens(P::GAME, &rules.to_string(), 2, seed, GENFENS_TIMEOUT)
            .map_err(|e| PlayError::GenFens(e.to_string()))?,
    };
    if texts.len() < 2 {
        return Err(PlayError::GenFens(format!(
            "the engine gave {} of the 2 openings asked for (does it answer genfens?)",
            texts.len()
        )));
    }
    let parse = |text: &String| -> Result<P, PlayError> {
        let position: P = text
            .parse()
            .map_err(|e| PlayError::GenFens(format!("'{text}': {e}")))?;
        if position.is_game_over() || !position.fits(rules) {
            return Err(PlayError::GenFens(format!(
                "'{text}' is over, or not a board of the game's rules"
            )));
        }
        Ok(position)
    };
    Ok([parse(&texts[0])?, parse(&texts[1])?])
}

/// This machine's nodes per second on the built-in speed benchmark, measured once (a
/// fraction of a second), for the machines page and scaled clocks.
pub(crate) fn speed_nps() -> f64 {
    static NPS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *NPS.get_or_init(|| {
        let nps = tourney_ai::speed::nodes_per_second();
        tracing::info!(nodes_per_second = nps as u64, "speed measured");
        nps
    })
}

/// This worker's clock factor for `scale = "nps"` tournaments: its speed on the built-in
/// benchmark against the reference machine's.
fn clock_scale() -> f64 {
    tourney_ai::speed::clock_scale(speed_nps())
}

fn play_typed<P: Heuristics + Adjudicate>(
    job: &PairJob,
    leased: &[Engine; 2],
    cancelled: &AtomicBool,
    policy: &EnginePolicy,
    engine_scale: Option<f64>,
    metrics: &WorkerMetrics,
) -> Result<Option<pb::PairResult>, PlayError> {
    let settings = &job.settings;
    let mut setup = Setup::<P>::from_settings(settings)?;
    if !settings.engine_openings {
        setup
            .set_opening(&job.opening)
            .map_err(PlayError::Opening)?;
    }
    // Game 1's start, the moves that reach it, and its index, when it has its own.
    let mut second_start = match &job.second_opening {
        Some((text, index)) => {
            let mut second = setup.clone();
            second.set_opening(text).map_err(PlayError::Opening)?;
            Some((second.start, second.start_path, *index))
        }
        None => None,
    };
    if settings.scale_by_speed {
        // An outside engine's own bench speed here against its reference, when known;
        // else this worker's speed on the built-in benchmark.
        setup.clock_scale = engine_scale.unwrap_or_else(clock_scale);
        setup.meta.insert(
            "clock_scale".into(),
            format!("{:.3}", setup.clock_scale).into(),
        );
    }
    setup
        .meta
        .insert("tournament".into(), settings.tournament_name.clone().into());
    setup.meta.insert("pair".into(), job.pair.into());
    setup
        .meta
        .insert("opening".into(), job.opening_index.into());
    setup
        .meta
        .insert("tourney_version".into(), env!("CARGO_PKG_VERSION").into());
    let (first, second) = (&job.first, &job.second);
    for (key, engine) in [("artifact_first", first), ("artifact_second", second)] {
        if let EngineKind::Outside {
            artifact_sha256: Some(sha),
            ..
        } = &engine.kind
        {
            setup.meta.insert(key.into(), sha.clone().into());
        }
    }
    let limits = &job.settings.engine_limits;
    let mut a = Side::<P>::new(first, limits, policy)?;
    let mut b = Side::<P>::new(second, limits, policy)?;
    // A data generation run's openings made by its first engine, one for each game.
    if settings.engine_openings {
        match made_openings(&mut a, job.seed, setup.rules) {
            Ok([first_start, other]) => {
                setup.start = first_start;
                second_start = Some((other, Vec::new(), 1));
            }
            Err(e) => {
                a.release(metrics);
                b.release(metrics);
                return Err(e);
            }
        }
    }
    let mut games = Vec::with_capacity(2);
    let mut points = Vec::with_capacity(2);
    let ended = 'games: {
        for game in 0..2 {
            let _span = tracing::debug_span!("game", game).entered();
            if cancelled.load(Ordering::Relaxed) {
                break 'games Err(RefereeError::Stopped);
            }
            let (white, black, first_has) = pair_seats(
                game,
                Seat {
                    name: first.name.clone(),
                    player: a.contestant(),
                },
                Seat {
                    name: second.name.clone(),
                    player: b.contestant(),
                },
            );
            // Engines with limits of their own (time odds) keep them whichever colour they
            // play.
            let own = |e: &tourney_model::job::Engine| e.limits.as_ref().map(SideLimits::of);
            setup.sides[first_has.index()] = own(first);
            setup.sides[first_has.opponent().index()] = own(second);
            setup.meta.insert("game".into(), (game as u64).into());
            // A data generation run plays each opening once: game 1 has its own.
            if game == 1
                && let Some((start, path, index)) = second_start.take()
            {
                setup.start = start;
                setup.start_path = path;
                setup.meta.insert("opening".into(), index.into());
            }
            setup.seed = tourney_model::tournament::game_seed(job.seed, game as u64);
            // A dropped lease stops the game after the move in play, not at its end.
            let mut go_on = |_: &_| match cancelled.load(Ordering::Relaxed) {
                true => ControlFlow::Break(()),
                false => ControlFlow::Continue(()),
            };
            let mut record = match play_until(&setup, white, black, &mut go_on) {
                Ok(record) => record,
                Err(e) => break 'games Err(e),
            };
            // Named as leased (an outside engine by its command, not by this worker's copy
            // of its program): the coordinator checks the seats against the lease.
            let [white, black] = if first_has == tourney_rules::Color::White {
                [&leased[0], &leased[1]]
            } else {
                [&leased[1], &leased[0]]
            };
            white.describe(&mut record.white);
            black.describe(&mut record.black);
            points.push(u32::from(record.result.half_points(first_has)));
            games.push(record);
        }
        Ok(())
    };
    a.release(metrics);
    b.release(metrics);
    match ended {
        Ok(()) => {}
        Err(RefereeError::Stopped) => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    Ok(Some(pb::PairResult {
        tournament: job.tournament,
        pair: job.pair,
        half_points: points,
        games_json: String::new(),
        // The lease is the caller's to fill in.
        lease_id: 0,
        ticket: job.ticket.clone(),
        games_lz4: lz4_flex::compress_prepend_size(&serde_json::to_vec(&games)?),
    }))
}

/// Plays both games of a pair.
///
/// Returns `Ok(None)` when `cancelled` is set before the pair ends: the coordinator dropped
/// the lease (the tournament was decided, cancelled or paused), so the pair is abandoned,
/// a game under way after the move in play.
///
/// # Errors
/// No game could be played: an engine is unfit (it did not start, does not support the
/// game, failed its handshake) or the job is malformed. Nothing is scored; the worker
/// reports the failure and the coordinator pauses the tournament.
///
/// With `limits.scale = "nps"`, clocks are scaled by `engine_scale` (an outside engine's
/// bench speed against its reference) when given, else by this worker's built-in speed.
pub(crate) fn play_pair(
    job: &PairJob,
    leased: &[Engine; 2],
    cancelled: &AtomicBool,
    policy: &EnginePolicy,
    engine_scale: Option<f64>,
    metrics: &WorkerMetrics,
) -> Result<Option<pb::PairResult>, PlayError> {
    with_position!(job.settings.game, P => play_typed::<P>(job, leased, cancelled, policy, engine_scale, metrics))
}

#[cfg(test)]
mod tests;
