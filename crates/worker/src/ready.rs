//! An outside engine made ready for its first game on a worker, on the game thread (a
//! build takes long; the worker's heartbeats go on meanwhile): built from source through
//! the host's build cache, then its bench signature measured once and checked against the
//! one expected. What was measured is told to the coordinator once per tournament.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use tourney_model::job::{EngineKind, PairJob};
use tourney_proto::v1 as pb;
use tourney_runner::confine::EnginePolicy;
use tourney_runner::{EngineConfig, ExternalEngine};

use crate::builds::BuildCache;

/// How long an engine's `bench` may take.
const BENCH_TIMEOUT: Duration = Duration::from_secs(120);

/// The most engines whose bench a worker remembers (more: it forgets them all and measures
/// again), and the most (tournament, engine) checks it remembers having told.
const MOST_REMEMBERED: usize = 1024;

/// Why an engine cannot play on this worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotReady {
    /// The engine's name.
    pub(crate) engine: String,
    /// The engine is at fault wherever it runs (its build failed), not this worker.
    pub(crate) fault: bool,
    /// Why.
    pub(crate) reason: String,
}

/// A worker's builds and bench measurements.
pub(crate) struct Readiness {
    builds: BuildCache,
    policy: EnginePolicy,
    /// Bench answers by engine (game, program, options, files): `None` for no bench.
    measured: Mutex<BTreeMap<String, Option<(u64, u64)>>>,
    /// The (tournament, engine) checks already told.
    told: Mutex<BTreeSet<(u64, String)>>,
}

impl Readiness {
    pub(crate) fn new(builds: BuildCache, policy: EnginePolicy) -> Self {
        Readiness {
            builds,
            policy,
            measured: Mutex::new(BTreeMap::new()),
            told: Mutex::new(BTreeSet::new()),
        }
    }

    /// Makes `job`'s outside engines ready: each built from source is built (or taken from
    /// the cache) and its command set to the program; each has its bench measured (once
    /// per worker) and checked. Returns the checks to tell the coordinator.
    ///
    /// # Errors
    /// An engine cannot play here: a failed build, a missing toolchain, a bench signature
    /// other than the expected one.
    pub(crate) fn ready(&self, job: &mut PairJob) -> Result<Vec<pb::EngineCheck>, NotReady> {
        let mut checks = Vec::new();
        let (game, limits) = (job.settings.game, job.settings.engine_limits);
        for engine in [&mut job.first, &mut job.second] {
            let EngineKind::Outside {
                command,
                options,
                source,
                files,
                bench,
                ..
            } = &mut engine.kind
            else {
                continue;
            };
            let not_ready = |fault: bool, reason: String| NotReady {
                engine: engine.name.clone(),
                fault,
                reason,
            };
            let mut build_ms = 0;
            if let Some(source) = source {
                let built = self
                    .builds
                    .build(source, limits.network)
                    .map_err(|e| not_ready(e.is_engine_fault(), e.to_string()))?;
                *command = crate::play::command_line(&built.program, &[]);
                build_ms = built.build_ms;
            }
            let key = format!("{game}\u{1f}{command}\u{1f}{options:?}\u{1f}{files:?}");
            let known = lock(&self.measured).get(&key).copied();
            let measured = match known {
                Some(m) => m,
                None => {
                    let mut config = EngineConfig::new(command);
                    config.options = options.clone();
                    config.limits = limits;
                    config.policy = self.policy.clone();
                    config.files = (files.iter())
                        .map(|(name, path)| (name.clone(), path.into()))
                        .collect();
                    let mut process = ExternalEngine::new(config);
                    match process.bench(game, BENCH_TIMEOUT) {
                        Ok(m) => {
                            let mut measured = lock(&self.measured);
                            if measured.len() >= MOST_REMEMBERED {
                                measured.clear();
                            }
                            measured.insert(key, m);
                            m
                        }
                        // An engine that cannot even start loses its game with the reason;
                        // one expected to have a signature cannot be checked.
                        Err(e) if bench.is_some() => {
                            return Err(not_ready(
                                false,
                                format!("its bench could not be run: {e}"),
                            ));
                        }
                        Err(_) => None,
                    }
                }
            };
            match (*bench, measured) {
                (Some(expected), Some((nodes, _))) if nodes != expected => {
                    return Err(not_ready(
                        false,
                        format!(
                            "bench signature mismatch: expected {expected} nodes, this worker found {nodes}; the engine is refused here"
                        ),
                    ));
                }
                (Some(expected), None) => {
                    return Err(not_ready(
                        false,
                        format!(
                            "bench signature mismatch: expected {expected} nodes, the engine answered no bench"
                        ),
                    ));
                }
                _ => {}
            }
            let mut told = lock(&self.told);
            if told.len() >= MOST_REMEMBERED {
                told.clear();
            }
            if told.insert((job.tournament, engine.name.clone())) {
                checks.push(pb::EngineCheck {
                    tournament: job.tournament,
                    engine: engine.name.clone(),
                    bench_nodes: measured.map(|(nodes, _)| nodes),
                    bench_nps: measured.map_or(0, |(_, nps)| nps),
                    build_ms,
                });
            }
        }
        Ok(checks)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
