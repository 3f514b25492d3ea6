//! What workers find of outside engines before their first game: how long a build took,
//! the bench signature and speed, and why an engine could not play there. A tournament
//! takes an engine's bench signature from the first worker that measures it (when its file
//! or version gave none); a registered version takes it too, and keeps each worker's last
//! check (`tourney version show`).

use crate::scheduler::{TournamentId, host};
use crate::state::{Coordinator, Inner};
use crate::types::{CoordinatorError, EngineCheck, VersionCheck};

/// The most checks kept per version (the oldest go).
pub const MAX_CHECKS_PER_VERSION: usize = 64;

/// The most bytes of a worker's reason kept (its beginning and the end of a build log).
pub const MAX_REASON_BYTES: usize = 8 * 1024;

/// `text` within [`MAX_REASON_BYTES`]: its first kilobyte, then its end.
pub(crate) fn bounded(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_REASON_BYTES {
        return text.into();
    }
    let mut head = 1024;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (MAX_REASON_BYTES - 1024 - 16);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{}\n[...]\n{}", &text[..head], &text[tail..]).into()
}

/// Keeps `check` with the version engine `engine` of tournament `id` is, if it is one:
/// in place of that worker host's earlier check for the tournament.
fn keep(inner: &mut Inner, id: TournamentId, engine: &str, check: VersionCheck) {
    let Some(version) = (inner.config(id))
        .and_then(|c| c.engines.iter().find(|e| e.name == engine))
        .and_then(|e| e.version.clone())
    else {
        return;
    };
    if !inner.versions.contains_key(&version) {
        return;
    }
    let checks = inner.version_checks.entry(version).or_default();
    checks.retain(|c| !(host(&c.worker) == host(&check.worker) && c.tournament == id));
    if checks.len() >= MAX_CHECKS_PER_VERSION {
        checks.pop_front();
    }
    checks.push_back(check);
}

/// Keeps why `engine` (a version) could not play on `worker`.
pub(crate) fn note_problem(
    inner: &mut Inner,
    worker: &str,
    id: TournamentId,
    engine: &str,
    reason: &str,
) {
    let check = VersionCheck {
        worker: worker.to_string(),
        at_ms: tourney_model::unix_ms_now(),
        tournament: id,
        bench_nodes: None,
        bench_nps: 0,
        build_ms: 0,
        problem: reason.to_string(),
    };
    keep(inner, id, engine, check);
}

impl Coordinator {
    /// Takes a worker's check of an engine: an engine without an expected bench signature
    /// gets the one measured (kept with the tournament, and with its version if that has
    /// none), and a version keeps the check.
    ///
    /// # Errors
    /// The store failed.
    pub async fn engine_checked(
        &self,
        worker: &str,
        check: EngineCheck,
    ) -> Result<(), CoordinatorError> {
        let now = tourney_model::unix_ms_now();
        let (record, version) = {
            let mut inner = self.lock();
            let inner = &mut *inner;
            let id = check.tournament;
            let (Some(entry), Some(config)) =
                (inner.tournaments.get_mut(&id), inner.scheduler.config(id))
            else {
                return Ok(());
            };
            let Some(index) =
                (config.engines.iter()).position(|e| e.name == check.engine && e.player.is_none())
            else {
                return Ok(());
            };
            // What the first worker to measure the engine found: its signature (unless
            // one was expected) and its speed there, the reference for scaled clocks.
            let engine = &config.engines[index];
            let version_name = engine.version.clone();
            let learnt = check.bench_nodes.filter(|_| engine.bench.is_none());
            let speed = (check.bench_nps > 0 && check.bench_nodes.is_some())
                .then_some(check.bench_nps)
                .filter(|_| engine.reference_nps.is_none());
            let changed = learnt.is_some() || speed.is_some();
            if changed {
                let facts = entry
                    .record
                    .engines
                    .entry(check.engine.clone())
                    .or_default();
                if let Some(nodes) = learnt {
                    facts.bench = Some(nodes);
                    tracing::info!(tournament = id, engine = %check.engine, nodes, %worker, "bench signature taken from the first worker that measured it");
                }
                if let Some(nps) = speed {
                    facts.nps = Some(nps);
                }
                inner.scheduler.learn_engine(id, index, learnt, speed);
            }
            let version = match (
                learnt,
                version_name.and_then(|v| inner.versions.get_mut(&v)),
            ) {
                (Some(nodes), Some(v)) if v.bench.is_none() => {
                    v.bench = Some(nodes);
                    Some(v.clone())
                }
                _ => None,
            };
            let kept = VersionCheck {
                worker: worker.to_string(),
                at_ms: now,
                tournament: id,
                bench_nodes: check.bench_nodes,
                bench_nps: check.bench_nps,
                build_ms: check.build_ms,
                problem: String::new(),
            };
            keep(inner, id, &check.engine, kept);
            (changed.then(|| inner.record(id)).flatten(), version)
        };
        if let Some(version) = version {
            self.store.put_version(&version)?;
        }
        self.save(record).await
    }

    /// The workers' last checks of version `name`, oldest first.
    pub fn version_checks(&self, name: &str) -> Vec<VersionCheck> {
        (self.lock().version_checks.get(name))
            .map(|c| c.iter().cloned().collect())
            .unwrap_or_default()
    }
}
