//! An outside engine made ready for its first game on a worker, on the game thread (a
//! build takes long; the worker's heartbeats go on meanwhile): built from source through
//! the host's build cache, then its bench signature measured once and checked against the
//! one expected. What was measured is told to the coordinator once per tournament.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::time::Duration;

use tourney_model::job::{EngineKind, PairJob};
use tourney_proto::v1 as pb;
use tourney_runner::ExternalEngine;
use tourney_runner::confine::EnginePolicy;

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
    /// The end of a failed build's output (empty otherwise).
    pub(crate) log: String,
}

/// What makes a pair ready: the checks to tell the coordinator, and the clock scale of
/// the engines' bench speeds here.
#[derive(Debug, Default)]
pub(crate) struct Ready {
    /// What was measured of engines checked here for the first time.
    pub(crate) checks: Vec<pb::EngineCheck>,
    /// For `limits.scale = "nps"`: the first outside engine's reference bench speed over
    /// its bench speed here (within the bounds of `tourney_ai::speed::MOST_SCALE`).
    pub(crate) clock_scale: Option<f64>,
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
    /// per worker) and checked. Returns the checks to tell the coordinator and the
    /// engines' clock scale.
    ///
    /// # Errors
    /// An engine cannot play here: a failed build, a missing toolchain, a bench signature
    /// other than the expected one.
    pub(crate) fn ready(&self, job: &mut PairJob) -> Result<Ready, NotReady> {
        let mut ready = Ready::default();
        let settings = &job.settings;
        let (game, limits, scale_by_speed) = (
            settings.game,
            settings.engine_limits,
            settings.scale_by_speed,
        );
        for engine in [&mut job.first, &mut job.second] {
            let EngineKind::Outside {
                command,
                options,
                source,
                files,
                bench,
                reference_nps,
                protocol,
                artifact_sha256,
                ..
            } = &mut engine.kind
            else {
                continue;
            };
            let not_ready = |fault: bool, reason: String| NotReady {
                engine: engine.name.clone(),
                fault,
                reason,
                log: String::new(),
            };
            let mut build_ms = 0;
            if let Some(source) = source {
                let built = self
                    .builds
                    .build(source, limits.network)
                    .map_err(|e| NotReady {
                        log: e.log().to_string(),
                        ..not_ready(e.is_engine_fault(), e.to_string())
                    })?;
                *command = crate::play::command_line(&built.program, &[]);
                build_ms = built.build_ms;
            }
            // A bench is run where its answer is wanted: a signature to check or to learn
            // (a build's), or a speed to scale clocks by; an uploaded program with none of
            // these plays as it always has.
            let wanted = bench.is_some() || source.is_some() || scale_by_speed;
            let key = format!("{game}\u{1f}{command}\u{1f}{options:?}\u{1f}{files:?}");
            let known = lock(&self.measured).get(&key).copied();
            let measured = match known {
                Some(m) => m,
                None if !wanted => None,
                None => {
                    let mut config = crate::play::outside_config(
                        command,
                        options,
                        files,
                        protocol,
                        // The bench signature does not depend on the threads.
                        None,
                        &limits,
                        &self.policy,
                    );
                    config.program_sha256 = artifact_sha256.clone();
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
            if let (None, Some(reference), Some((_, nps))) =
                (ready.clock_scale, *reference_nps, measured)
                && nps > 0
            {
                let most = tourney_ai::speed::MOST_SCALE;
                ready.clock_scale = Some((reference as f64 / nps as f64).clamp(1.0 / most, most));
            }
            let mut told = lock(&self.told);
            if told.len() >= MOST_REMEMBERED {
                told.clear();
            }
            if told.insert((job.tournament, engine.name.clone())) {
                ready.checks.push(pb::EngineCheck {
                    tournament: job.tournament,
                    engine: engine.name.clone(),
                    bench_nodes: measured.map(|(nodes, _)| nodes),
                    bench_nps: measured.map_or(0, |(_, nps)| nps),
                    build_ms,
                });
            }
        }
        Ok(ready)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// An engine that answers the handshake and, given `bench`, that line to `bench`.
    fn engine(dir: &std::path::Path, name: &str, bench: Option<&str>) -> String {
        let answer = bench.map_or(String::new(), |b| format!("bench) echo \"{b}\" ;;"));
        let script = format!(
            "#!/bin/sh\nwhile read -r cmd rest; do\n case \"$cmd\" in\n \
             ugi) echo ugiok ;;\n {answer}\n isready) echo readyok ;;\n quit) exit 0 ;;\n \
             esac\ndone\n"
        );
        let path = dir.join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.display().to_string()
    }

    fn readiness(dir: &std::path::Path) -> Readiness {
        let policy = EnginePolicy {
            allow_root: true,
            ..EnginePolicy::default()
        };
        let builds = BuildCache::new(
            dir.join("cache"),
            1 << 20,
            Duration::from_secs(5),
            policy.clone(),
        );
        Readiness::new(builds, policy)
    }

    fn job(command: &str, bench: Option<u64>, reference_nps: Option<u64>) -> PairJob {
        let mut job = crate::desk::tests::queued(1, 0).job;
        job.first.name = "patch".into();
        job.first.kind = EngineKind::Outside {
            command: command.into(),
            artifact_sha256: None,
            options: Vec::new(),
            source: None,
            files: Vec::new(),
            bench,
            reference_nps,
            protocol: String::new(),
            threads: 1,
        };
        job
    }

    #[test]
    fn a_bench_is_checked_told_once_and_scales_clocks_by_its_speed() {
        let dir = tempfile::tempdir().unwrap();
        let ready = readiness(dir.path());
        let command = engine(dir.path(), "e", Some("bench nodes 1000 nps 500000"));
        let first = ready
            .ready(&mut job(&command, Some(1000), Some(1_000_000)))
            .unwrap();
        assert_eq!(first.checks.len(), 1);
        let check = &first.checks[0];
        assert_eq!((check.bench_nodes, check.bench_nps), (Some(1000), 500_000));
        assert_eq!(check.engine, "patch");
        // Half the reference speed here: twice the time.
        assert_eq!(first.clock_scale, Some(2.0));
        // Measured and told once; a tenth of the reference speed is cut to the bound.
        let again = ready
            .ready(&mut job(&command, Some(1000), Some(5_000_000)))
            .unwrap();
        assert!(again.checks.is_empty());
        assert_eq!(again.clock_scale, Some(tourney_ai::speed::MOST_SCALE));
        // Without a reference the worker's own speed decides (no engine scale).
        let plain = ready.ready(&mut job(&command, None, None)).unwrap();
        assert_eq!(plain.clock_scale, None);
    }

    #[test]
    fn a_wrong_or_missing_signature_refuses_the_engine_on_this_worker() {
        let dir = tempfile::tempdir().unwrap();
        let ready = readiness(dir.path());
        let command = engine(dir.path(), "e", Some("bench nodes 1000 nps 500000"));
        let refused = ready
            .ready(&mut job(&command, Some(999), None))
            .unwrap_err();
        assert_eq!((refused.engine.as_str(), refused.fault), ("patch", false));
        assert!(
            refused
                .reason
                .contains("expected 999 nodes, this worker found 1000"),
            "{}",
            refused.reason
        );
        let silent = engine(dir.path(), "silent", None);
        let refused = ready.ready(&mut job(&silent, Some(5), None)).unwrap_err();
        assert!(
            refused.reason.contains("answered no bench"),
            "{}",
            refused.reason
        );
        // No signature expected: an engine without a bench plays, and says it has none.
        let ok = ready.ready(&mut job(&silent, None, None)).unwrap();
        assert_eq!(ok.checks[0].bench_nodes, None);
    }
}
