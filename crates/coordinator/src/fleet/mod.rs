//! What the coordinator knows of its fleet: registered workers and when they were last
//! heard from, throughput over time, and the most recent games. No I/O; times are the
//! coordinator's clock in milliseconds.

pub mod cadence;
pub(crate) mod checks;
pub(crate) mod leasing;
pub(crate) mod machines;
pub mod profiles;
pub(crate) mod registration;
pub mod release;
pub mod workers;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde::Serialize;
use tourney_model::fleet::{ProfileClaim, WorkerProfile};
use tourney_model::tournament::TournamentConfig;
use tourney_model::{GameKind, GameResult, GameSummary};

use crate::fleet::profiles::{Eligibility, Profiles, eligibility};

/// How long throughput samples are kept (the dashboard's chart spans this).
const HISTORY_MS: u64 = 300_000;
/// Time between throughput samples.
const SAMPLE_MS: u64 = 1_000;
/// Window of the current games/s and nodes/s figures.
const RATE_WINDOW_MS: u64 = 10_000;
/// Recent games kept for the dashboard.
const RECENT_GAMES: usize = 40;
/// A worker not heard from for this long is forgotten.
const FORGET_MS: u64 = 3_600_000;
/// How often the silent workers are looked for (each look walks the whole fleet, under
/// the coordinator's lock).
const SWEEP_MS: u64 = 10_000;

/// A registered worker.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WorkerInfo {
    /// The id the coordinator gave it (`name#n`).
    pub id: String,
    /// The name it registered with (usually its host).
    pub name: String,
    /// Its tourney version.
    pub version: String,
    /// Games it plays at once.
    pub slots: u32,
    /// When it registered.
    pub registered_ms: u64,
    /// When it last called (lease, report or heartbeat).
    pub last_seen_ms: u64,
    /// Games it reported that were stored.
    pub games: u64,
    /// Nodes its players reported searching in those games.
    pub nodes: u64,
    /// Its reported pairs refused (see `Refusal`).
    pub rejected: u64,
    /// The name of the token it registered with (its later calls must carry the same).
    pub token: String,
    /// What it said of its machine.
    pub host: HostFacts,
    /// What it offers and takes (shared with every worker of the same kind).
    #[serde(skip)]
    pub profile: Arc<WorkerProfile>,
}

/// What a worker says of its machine when it registers (each text at most
/// [`MAX_HOST_TEXT`] characters).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostFacts {
    /// The CPU's model name.
    pub cpu_model: String,
    /// Its logical cores.
    pub cores: u32,
    /// Its memory, MiB.
    pub memory_mb: u64,
    /// The operating system and its version.
    pub os: String,
    /// One core's nodes per second on the built-in speed benchmark (0: not measured).
    pub speed_nps: u64,
    /// Its GPUs (at most [`MAX_GPUS`](tourney_model::gpu::MAX_GPUS), bounded as its
    /// profile's).
    pub gpus: Vec<tourney_model::gpu::GpuFacts>,
}

/// The longest text of [`HostFacts`] kept.
pub const MAX_HOST_TEXT: usize = 128;

impl HostFacts {
    /// The facts with their texts cut to [`MAX_HOST_TEXT`] printable characters.
    pub fn bounded(self) -> HostFacts {
        let cut = |text: String| {
            (text.chars())
                .filter(|c| !c.is_control())
                .take(MAX_HOST_TEXT)
                .collect()
        };
        HostFacts {
            cpu_model: cut(self.cpu_model),
            os: cut(self.os),
            gpus: tourney_model::gpu::bounded(self.gpus),
            ..self
        }
    }
}

/// The bounds on registrations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RegistrationLimits {
    /// Slots a worker may claim; more are cut to this.
    pub max_slots: u32,
    /// Registrations a token may hold at once. Past this, those of the token not heard
    /// from within `silence_ms` are forgotten; if that is not enough, the registration is
    /// refused.
    pub per_token: usize,
    /// How long a registration may be silent before a new one of its token replaces it.
    pub silence_ms: u64,
}

/// The longest worker name (a host name) and version.
pub const MAX_WORKER_NAME: usize = 64;

/// Why a registration is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// The name is empty, too long or has characters a host name does not.
    #[error(
        "worker name: 1 to {MAX_WORKER_NAME} letters, digits, '.', '_' or '-' (like a host name)"
    )]
    Name,
    /// The version is too long or unprintable.
    #[error("version: at most {MAX_WORKER_NAME} printable characters")]
    Version,
    /// The token holds as many live registrations as it may.
    #[error("token '{token}' already holds {max} live registrations")]
    TooMany {
        /// The token's name.
        token: String,
        /// The limit.
        max: usize,
    },
}

/// A finished game, as the dashboard lists it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentGame {
    /// Its tournament.
    pub tournament: u64,
    /// Its pair.
    pub pair: u64,
    /// 0 or 1: which game of the pair.
    pub index: usize,
    /// `loa` or `amazons`.
    #[serde(with = "tourney_model::game_kind")]
    pub game: GameKind,
    /// White's engine name.
    pub white: String,
    /// Black's engine name.
    pub black: String,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: GameResult,
    /// Why it ended.
    pub termination: String,
    /// Plies played.
    pub plies: usize,
    /// The worker that played it.
    pub worker: String,
}

/// Games and nodes finished so far, at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Sample {
    at_ms: u64,
    games: u64,
    nodes: u64,
}

/// Fleet throughput now: rates over the last few seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Throughput {
    /// Games finished per second.
    pub games_per_s: f64,
    /// Nodes searched per second (as the players reported them).
    pub nodes_per_s: f64,
    /// Games stored since the coordinator started.
    pub games_total: u64,
}

/// Workers, throughput and recent games.
#[derive(Debug, Default)]
pub struct Fleet {
    workers: HashMap<String, WorkerInfo>,
    /// Each registration's secret, by worker id: later calls must carry it.
    sessions: HashMap<String, String>,
    next_worker: u64,
    totals: Sample,
    samples: VecDeque<Sample>,
    recent: VecDeque<RecentGame>,
    profiles: Profiles,
    /// The connected workers' slots and profiles, counted at most every [`SAMPLE_MS`]
    /// (leases and status pages ask for them far more often than workers come and go).
    live: Option<Live>,
    /// When the silent workers were last looked for.
    swept_ms: u64,
}

/// What the connected workers offer, counted at one moment.
#[derive(Debug)]
struct Live {
    at_ms: u64,
    timeout_ms: u64,
    slots: u64,
    kinds: Vec<(Arc<WorkerProfile>, u64)>,
}

/// 128 bits from the operating system's randomness (through the standard library's
/// randomly keyed hasher), as hex: a registration's secret.
fn secret() -> String {
    use std::hash::{BuildHasher, Hasher};
    let word = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

/// Whether two secrets are equal, in time that depends only on their lengths.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    subtle::ConstantTimeEq::ct_eq(a, b).into()
}

impl Fleet {
    /// An empty fleet.
    pub fn new() -> Self {
        Fleet {
            next_worker: 1,
            ..Fleet::default()
        }
    }

    /// Notes what worker `id` said of its machine.
    pub fn set_host(&mut self, id: &str, host: HostFacts) {
        if let Some(worker) = self.workers.get_mut(id) {
            worker.host = host.bounded();
        }
    }

    /// Notes what worker `id` offers and takes (until then: its slots' worth of cores, no
    /// labels).
    pub fn set_profile(&mut self, id: &str, profile: WorkerProfile) {
        let profile = self.profiles.intern(profile);
        if let Some(worker) = self.workers.get_mut(id) {
            worker.profile = profile;
        }
        self.live = None;
        self.profiles.prune();
    }

    /// What worker `id` offers and takes.
    pub fn profile(&self, id: &str) -> Option<Arc<WorkerProfile>> {
        self.workers.get(id).map(|w| Arc::clone(&w.profile))
    }

    /// How many workers heard from within `timeout_ms` can take `config`'s pairs.
    pub fn eligibility(
        &mut self,
        config: &TournamentConfig,
        now: u64,
        timeout_ms: u64,
    ) -> Eligibility {
        let live = self.live(now, timeout_ms);
        eligibility(config, live.kinds.iter().map(|(p, n)| (p, *n)))
    }

    /// The workers heard from within `timeout_ms`, counted again when the count is a
    /// second old or the fleet changed.
    fn live(&mut self, now: u64, timeout_ms: u64) -> &Live {
        let stale = self.live.as_ref().is_none_or(|l| {
            l.timeout_ms != timeout_ms || now >= l.at_ms + SAMPLE_MS || now < l.at_ms
        });
        if stale {
            let mut kinds: HashMap<*const WorkerProfile, (Arc<WorkerProfile>, u64)> =
                HashMap::new();
            let mut slots = 0;
            for w in (self.workers.values()).filter(|w| w.last_seen_ms + timeout_ms >= now) {
                slots += u64::from(w.slots);
                let kind = kinds.entry(Arc::as_ptr(&w.profile));
                kind.or_insert_with(|| (Arc::clone(&w.profile), 0)).1 += 1;
            }
            self.live = Some(Live {
                at_ms: now,
                timeout_ms,
                slots,
                kinds: kinds.into_values().collect(),
            });
        }
        self.live.as_ref().expect("counted")
    }

    /// Registered workers (connected or silent, not yet forgotten).
    pub fn registered(&self) -> usize {
        self.workers.len()
    }

    /// Forgets every registration of the host `name` (blocked): their next calls are
    /// refused and their leases go to others when they expire.
    pub fn drop_host(&mut self, name: &str) {
        self.workers.retain(|_, w| w.name != name);
        self.live = None;
        let workers = &self.workers;
        self.sessions.retain(|id, _| workers.contains_key(id));
    }

    /// Registers a worker that called with token `token`; returns its new id and the
    /// registration's secret.
    ///
    /// # Errors
    /// A bad name or version, or a token that holds too many live registrations.
    pub fn register(
        &mut self,
        name: &str,
        version: &str,
        slots: u32,
        token: &str,
        now: u64,
        limits: RegistrationLimits,
    ) -> Result<(String, String), RegistrationError> {
        let host_like = |c: char| c.is_ascii_alphanumeric() || "._-".contains(c);
        if name.is_empty() || name.len() > MAX_WORKER_NAME || !name.chars().all(host_like) {
            return Err(RegistrationError::Name);
        }
        if version.len() > MAX_WORKER_NAME || !version.chars().all(|c| c.is_ascii_graphic()) {
            return Err(RegistrationError::Version);
        }
        let held = |workers: &HashMap<String, WorkerInfo>| {
            workers.values().filter(|w| w.token == token).count()
        };
        if held(&self.workers) >= limits.per_token {
            self.workers
                .retain(|_, w| w.token != token || w.last_seen_ms + limits.silence_ms >= now);
            let workers = &self.workers;
            self.sessions.retain(|id, _| workers.contains_key(id));
            if held(&self.workers) >= limits.per_token {
                return Err(RegistrationError::TooMany {
                    token: token.to_string(),
                    max: limits.per_token,
                });
            }
        }
        self.live = None;
        let id = format!("{name}#{}", self.next_worker);
        self.next_worker += 1;
        let session = secret();
        self.sessions.insert(id.clone(), session.clone());
        self.workers.insert(
            id.clone(),
            WorkerInfo {
                id: id.clone(),
                name: name.to_string(),
                version: version.to_string(),
                slots: slots.clamp(1, limits.max_slots.max(1)),
                registered_ms: now,
                last_seen_ms: now,
                games: 0,
                nodes: 0,
                rejected: 0,
                token: token.to_string(),
                host: HostFacts::default(),
                // Until it says more: a worker that takes any test.
                profile: self.profiles.intern(
                    (ProfileClaim::default().checked(tourney_model::fleet::MAX_THREADS))
                        .unwrap_or_default(),
                ),
            },
        );
        Ok((id, session))
    }

    /// Whether `session` is the secret of `worker`'s registration (compared in constant
    /// time) and `token` the name of the token it registered with.
    pub fn session_is(&self, worker: &str, session: &str, token: &str) -> bool {
        self.sessions
            .get(worker)
            .is_some_and(|s| same_secret(s.as_bytes(), session.as_bytes()))
            && self.workers.get(worker).is_some_and(|w| w.token == token)
    }

    /// The name of the token `worker` registered with.
    pub fn token_of(&self, worker: &str) -> Option<&str> {
        self.workers.get(worker).map(|w| w.token.as_str())
    }

    /// The tourney version `worker` registered with.
    pub fn version_of(&self, worker: &str) -> Option<&str> {
        self.workers.get(worker).map(|w| w.version.as_str())
    }

    /// Counts a refused result of `worker`.
    pub fn rejected(&mut self, worker: &str) {
        if let Some(w) = self.workers.get_mut(worker) {
            w.rejected += 1;
        }
    }

    /// Notes that a worker called.
    pub fn seen(&mut self, worker: &str, now: u64) {
        if let Some(w) = self.workers.get_mut(worker) {
            w.last_seen_ms = w.last_seen_ms.max(now);
        }
    }

    /// Counts a stored game played by `worker`.
    pub fn record_game(
        &mut self,
        worker: &str,
        tournament: u64,
        pair: u64,
        index: usize,
        game: &GameSummary,
    ) {
        let nodes = game.nodes();
        self.totals.games += 1;
        self.totals.nodes += nodes;
        if let Some(w) = self.workers.get_mut(worker) {
            w.games += 1;
            w.nodes += nodes;
        }
        if self.recent.len() == RECENT_GAMES {
            self.recent.pop_back();
        }
        self.recent.push_front(RecentGame {
            tournament,
            pair,
            index,
            game: game.game,
            white: game.white.name.clone(),
            black: game.black.name.clone(),
            result: game.result,
            termination: game.termination.name().to_string(),
            plies: game.plies(),
            worker: worker.to_string(),
        });
    }

    /// Takes a throughput sample if one is due and forgets long-silent workers (looked for
    /// every [`SWEEP_MS`]).
    pub fn tick(&mut self, now: u64) {
        if self
            .samples
            .back()
            .is_none_or(|last| now >= last.at_ms + SAMPLE_MS)
        {
            self.samples.push_back(Sample {
                at_ms: now,
                ..self.totals
            });
            while self
                .samples
                .front()
                .is_some_and(|first| first.at_ms + HISTORY_MS < now)
            {
                self.samples.pop_front();
            }
        }
        if now < self.swept_ms + SWEEP_MS && now >= self.swept_ms {
            return;
        }
        self.swept_ms = now;
        let before = self.workers.len();
        self.workers
            .retain(|_, w| w.last_seen_ms + FORGET_MS >= now);
        if self.workers.len() != before {
            self.live = None;
            let workers = &self.workers;
            self.sessions.retain(|id, _| workers.contains_key(id));
            self.profiles.prune();
        }
    }

    /// Game slots of `worker`, and of all workers heard from within `timeout_ms` (as
    /// counted at most a second ago).
    pub fn slots(&mut self, worker: &str, now: u64, timeout_ms: u64) -> (u64, u64) {
        let mine = self
            .workers
            .get(worker)
            .map_or(1, |w| u64::from(w.slots).max(1));
        (mine, self.live(now, timeout_ms).slots)
    }

    /// Workers heard from within `timeout_ms`, by name then id.
    pub fn connected(&self, now: u64, timeout_ms: u64) -> Vec<WorkerInfo> {
        let mut workers: Vec<WorkerInfo> = self
            .workers
            .values()
            .filter(|w| w.last_seen_ms + timeout_ms >= now)
            .cloned()
            .collect();
        workers.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.id.cmp(&b.id)));
        workers
    }

    /// Games/s and nodes/s over the last few seconds.
    pub fn throughput(&self, now: u64) -> Throughput {
        let since = now.saturating_sub(RATE_WINDOW_MS);
        let base = self
            .samples
            .iter()
            .find(|s| s.at_ms >= since)
            .copied()
            .unwrap_or(self.totals);
        let seconds = now.saturating_sub(base.at_ms) as f64 / 1000.0;
        let rate = |now_count: u64, then: u64| {
            if seconds > 0.0 {
                (now_count - then) as f64 / seconds
            } else {
                0.0
            }
        };
        Throughput {
            games_per_s: rate(self.totals.games, base.games),
            nodes_per_s: rate(self.totals.nodes, base.nodes),
            games_total: self.totals.games,
        }
    }

    /// Games/s in consecutive `bucket_ms` intervals over the kept history, oldest first.
    pub fn history(&self, bucket_ms: u64) -> Vec<f64> {
        let mut rates = Vec::new();
        let mut start: Option<Sample> = None;
        for &s in &self.samples {
            match start {
                None => start = Some(s),
                Some(b) if s.at_ms >= b.at_ms + bucket_ms => {
                    rates.push((s.games - b.games) as f64 * 1000.0 / (s.at_ms - b.at_ms) as f64);
                    start = Some(s);
                }
                Some(_) => {}
            }
        }
        rates
    }

    /// The most recent games, newest first.
    pub fn recent(&self) -> impl Iterator<Item = &RecentGame> {
        self.recent.iter()
    }
}

#[cfg(test)]
mod tests;
