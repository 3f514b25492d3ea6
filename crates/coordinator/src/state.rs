//! The coordinator's state: the scheduler, the store, the workers, and the group commit
//! that makes every acknowledged result durable.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prometheus::{Histogram, Registry};
use tokio::sync::{mpsc, oneshot, watch};
use tourney_model::job::{Engine, GameSettings, PairJob};
use tourney_model::tournament::{Format, PairOutcome, State, TournamentConfig};
use tourney_model::{GameRecord, GameSummary, Termination};
use tourney_rules::{Color, GameKind, Position, with_position};
use tourney_stats::report::{Crosstable, Report, SprtReport};
use tourney_stats::{BayesElo, GameResult, GameTable, RatingTable, SprtStatus};
use tourney_store::{PairRecord, Store, StoreError, TournamentRecord};

use crate::fleet::{Fleet, RecentGame, Throughput, WorkerInfo};
use crate::metrics::{CoordinatorMetrics, TournamentGauges};
use crate::scheduler::{LeaseId, ReportAck, Scheduler, TournamentId, sprt_of};

/// Settings of a coordinator.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a lease lasts without a heartbeat.
    pub lease_ms: u64,
    /// How often workers should send heartbeats.
    pub heartbeat_ms: u64,
    /// How long the series of a finished or cancelled tournament stay in `/metrics` (so
    /// that Prometheus scrapes its final values), after which they are removed: the
    /// `tournament` label takes only the values of live and recently ended tournaments.
    pub metrics_retention_ms: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            lease_ms: 30_000,
            heartbeat_ms: 5_000,
            metrics_retention_ms: 15 * 60_000,
        }
    }
}

/// A finished pair as a worker reports it.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The tournament.
    pub tournament: TournamentId,
    /// What it contributes.
    pub outcome: PairOutcome,
    /// The lease it was played under.
    pub lease: LeaseId,
    /// Both games' records, a JSON array as the worker sent it.
    pub games: Box<serde_json::value::RawValue>,
}

/// A tournament's status as clients see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// Its number.
    pub id: TournamentId,
    /// Its file.
    pub config: Arc<TournamentConfig>,
    /// Where it is.
    pub state: State,
    /// Completed pairs.
    pub pairs_done: u64,
    /// Pairs in live leases.
    pub pairs_leased: u64,
    /// Joint ratings of the completed games.
    pub ratings: RatingTable,
    /// The SPRT on the completed prefix.
    pub sprt: Option<SprtStatus>,
    /// Why it is paused, while it is.
    pub paused_reason: Option<String>,
    /// When it was submitted, Unix milliseconds.
    pub created_ms: u64,
    /// When it finished or was cancelled, Unix milliseconds.
    pub ended_ms: Option<u64>,
}

struct CommitJob {
    records: Vec<PairRecord>,
    reply: oneshot::Sender<Result<Vec<bool>, String>>,
}

struct Inner {
    scheduler: Scheduler,
    records: BTreeMap<TournamentId, TournamentRecord>,
    configs: BTreeMap<TournamentId, Arc<TournamentConfig>>,
    artifacts: BTreeMap<TournamentId, Arc<BTreeMap<String, String>>>,
    fleet: Fleet,
    /// The latest ratings of each tournament.
    ratings: HashMap<TournamentId, CachedRatings>,
    /// Games of each tournament by how they ended (stored games that fit a record).
    terminations: HashMap<TournamentId, BTreeMap<Termination, u64>>,
}

/// The coordinator.
pub struct Coordinator {
    inner: Mutex<Inner>,
    store: Store,
    commits: mpsc::Sender<CommitJob>,
    started: Instant,
    /// The settings it runs with.
    pub settings: Settings,
    changes: watch::Sender<u64>,
    metrics: CoordinatorMetrics,
}

/// The colour that moves first in a game.
fn first_mover(game: GameKind) -> Color {
    with_position!(game, P => P::start().turn())
}

/// The opening suite of a tournament: from the openings file's text or generated.
fn openings_of(config: &TournamentConfig, file_text: &str) -> Result<Vec<String>, String> {
    let o = &config.openings;
    if let Some(name) = &o.file {
        return tourney_plan::check::openings_file(config, file_text, name)
            .map_err(|e| e.to_string());
    }
    let settings = tourney_plan::openings::OpeningSettings {
        plies: o.plies.unwrap_or(4),
        count: (config.max_pairs().min(2_000) as usize).max(1),
        seed: o.seed,
        balanced: o.balanced.clone().map(|spec| (spec, o.max_score)),
    };
    with_position!(config.game, P => tourney_plan::openings::generate_up_to::<P>(&settings))
        .map_err(|e| format!("openings: {e}"))
}

/// The most pairs `worker` may lease now: its slots' share of the pairs left to offer (and
/// at least one per slot). Workers queue pairs ahead; near the end of the work, a worker
/// that took a deep queue would keep the others idle while it plays it alone.
fn tail_share(inner: &Inner, worker: &str, now: u64, lease_ms: u64) -> usize {
    let (mine, all) = inner.fleet.slots(worker, now, lease_ms);
    let share = (inner.scheduler.offerable() * mine).div_ceil(all.max(1));
    share.max(mine) as usize
}

/// The summaries of a pair's stored games (none if they do not fit game records: only the
/// JSON syntax is checked when results arrive, and such records are stored as sent but not
/// counted in the metrics, the fleet or the terminations).
fn summaries(games: &serde_json::value::RawValue) -> Vec<GameSummary> {
    serde_json::from_str(games.get()).unwrap_or_default()
}

/// How long a running tournament's ratings are shown before they are computed again: a
/// rating takes longer than a report of fast games, and many reports come in a second.
const RATINGS_EVERY: Duration = Duration::from_millis(250);

/// Ratings as computed at a number of completed pairs.
struct CachedRatings {
    pairs: u64,
    at: Instant,
    ratings: RatingTable,
}

impl CachedRatings {
    /// Whether these ratings can be shown for `pairs` completed pairs: exactly those pairs,
    /// or, while the tournament runs, computed within [`RATINGS_EVERY`].
    fn fresh(&self, pairs: u64, active: bool) -> bool {
        self.pairs == pairs || (active && self.at.elapsed() < RATINGS_EVERY)
    }
}

fn game_table(config: &TournamentConfig, outcomes: &[PairOutcome]) -> GameTable {
    // Counted by engine index first: the table's lookups by name would cost more than the
    // rating itself over thousands of pairs.
    let n = config.engines.len();
    let mut counts = vec![[0u64; 3]; n * n];
    let first_moves = first_mover(config.game);
    for o in outcomes {
        for (g, &half) in o.half_points.iter().enumerate() {
            let (leader, other) = if g == 0 {
                (o.first, o.second)
            } else {
                (o.second, o.first)
            };
            // `half` is for the pairing's first engine; make it the leader's.
            let leader_half = if g == 0 { half } else { 2 - half };
            let (white, black, white_half) = if first_moves == Color::White {
                (leader, other, leader_half)
            } else {
                (other, leader, 2 - leader_half)
            };
            // White wins, draw, black wins.
            counts[white * n + black][2 - white_half as usize] += 1;
        }
    }
    let mut table = GameTable::new();
    for engine in &config.engines {
        table.player(&engine.name);
    }
    let results = [
        GameResult::WhiteWins,
        GameResult::Draw,
        GameResult::BlackWins,
    ];
    for (cell, count) in counts.iter().enumerate() {
        let (white, black) = (
            &config.engines[cell / n].name,
            &config.engines[cell % n].name,
        );
        for (result, &k) in results.iter().zip(count) {
            if k > 0 {
                table.add_many(white, black, *result, k);
            }
        }
    }
    table
}

impl Coordinator {
    /// A coordinator over `store`, restoring every stored tournament, with its group-commit
    /// task running on the current tokio runtime and its metrics registered in `registry`.
    ///
    /// # Errors
    /// The store could not be read, or holds a tournament file that no longer parses.
    pub fn open(
        store: Store,
        settings: Settings,
        registry: &Registry,
    ) -> Result<Arc<Coordinator>, StoreError> {
        let metrics = CoordinatorMetrics::new(registry);
        let mut scheduler = Scheduler::new(settings.lease_ms);
        let mut records = BTreeMap::new();
        let mut configs = BTreeMap::new();
        let mut artifacts = BTreeMap::new();
        let mut terminations: HashMap<TournamentId, BTreeMap<Termination, u64>> = HashMap::new();
        for record in store.tournaments()? {
            let Ok(config) = TournamentConfig::parse(&record.config_text, &record.file) else {
                continue;
            };
            let pairs = store.pairs(record.id)?;
            let ended = terminations.entry(record.id).or_default();
            for p in &pairs {
                for game in summaries(&p.games) {
                    *ended.entry(game.termination).or_default() += 1;
                }
            }
            let done: Vec<PairOutcome> = pairs.into_iter().map(|p| p.outcome).collect();
            scheduler.add(record.id, config.clone(), record.state, done);
            configs.insert(record.id, Arc::new(config));
            artifacts.insert(record.id, Arc::new(record.artifacts.clone()));
            records.insert(record.id, record);
        }
        let (commits, rx) = mpsc::channel(4096);
        tokio::spawn(committer(store.clone(), rx, metrics.commit_latency.clone()));
        Ok(Arc::new(Coordinator {
            inner: Mutex::new(Inner {
                scheduler,
                records,
                configs,
                artifacts,
                fleet: Fleet::new(),
                ratings: HashMap::new(),
                terminations,
            }),
            store,
            commits,
            started: Instant::now(),
            settings,
            changes: watch::channel(0).0,
            metrics,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every step is atomic).
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Milliseconds since the coordinator started (the scheduler's clock).
    pub fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// A receiver that changes whenever a tournament does.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn changed(&self) {
        self.changes.send_modify(|v| *v += 1);
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Submits a tournament file; returns its id.
    ///
    /// # Errors
    /// A message naming the problem (file, line, key) if the tournament is not valid.
    pub async fn submit(
        &self,
        text: &str,
        file: &str,
        openings_text: &str,
        artifacts: BTreeMap<String, String>,
    ) -> Result<TournamentId, String> {
        let config = TournamentConfig::parse(text, file).map_err(|e| e.to_string())?;
        tourney_plan::check::check_players(&config, text, file).map_err(|e| e.to_string())?;
        for (name, sha) in &artifacts {
            if !config
                .engines
                .iter()
                .any(|e| &e.name == name && e.command.is_some())
            {
                return Err(format!(
                    "artifact for '{name}', which is not an outside engine of {file}"
                ));
            }
            if self
                .store
                .artifact(sha)
                .map_err(|e| e.to_string())?
                .is_none()
            {
                return Err(format!("artifact {sha} of '{name}' was not uploaded"));
            }
        }
        let openings = openings_of(&config, openings_text)?;
        let id = self.store.next_tournament_id().map_err(|e| e.to_string())?;
        let created_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let record = TournamentRecord {
            id,
            config_text: text.to_string(),
            file: file.to_string(),
            openings,
            state: State::Queued,
            created_ms,
            artifacts: artifacts.clone(),
            paused_reason: None,
            ended_ms: None,
        };
        self.store
            .put_tournament(&record)
            .map_err(|e| e.to_string())?;
        self.store.flush().await.map_err(|e| e.to_string())?;
        let mut inner = self.lock();
        inner
            .scheduler
            .add(id, config.clone(), State::Queued, Vec::new());
        inner.configs.insert(id, Arc::new(config));
        inner.artifacts.insert(id, Arc::new(artifacts));
        inner.records.insert(id, record);
        drop(inner);
        self.changed();
        Ok(id)
    }

    /// Registers a worker; returns its id.
    pub fn register(&self, name: &str, version: &str, slots: u32) -> String {
        let now = self.now_ms();
        let id = self.lock().fleet.register(name, version, slots, now);
        self.changed();
        id
    }

    /// Workers heard from within a lease period, by name.
    pub fn workers(&self) -> Vec<WorkerInfo> {
        let now = self.now_ms();
        self.lock().fleet.connected(now, self.settings.lease_ms)
    }

    /// Fleet throughput now.
    pub fn throughput(&self) -> Throughput {
        let now = self.now_ms();
        self.lock().fleet.throughput(now)
    }

    /// Games/s in `bucket_ms` intervals over the last minutes, oldest first.
    pub fn throughput_history(&self, bucket_ms: u64) -> Vec<f64> {
        self.lock().fleet.history(bucket_ms)
    }

    /// The most recent games stored, newest first.
    pub fn recent_games(&self) -> Vec<RecentGame> {
        self.lock().fleet.recent().cloned().collect()
    }

    /// Leases up to `max_pairs` pairs to a worker.
    pub fn lease(&self, worker: &str, max_pairs: usize) -> Option<(LeaseId, Vec<PairJob>)> {
        let _timer = self.metrics.lease_latency.start_timer();
        let now = self.now_ms();
        let mut inner = self.lock();
        inner.fleet.seen(worker, now);
        let max_pairs = max_pairs.min(tail_share(&inner, worker, now, self.settings.lease_ms));
        let (lease, assignments) = inner.scheduler.lease(worker, max_pairs, now)?;
        self.metrics.leases_granted.inc();
        let jobs = assignments
            .into_iter()
            .map(|a| {
                let record = &inner.records[&a.tournament];
                let config = &inner.configs[&a.tournament];
                let artifacts = &inner.artifacts[&a.tournament];
                let opening_index = a.opening % record.openings.len() as u64;
                PairJob {
                    tournament: a.tournament,
                    pair: a.pair,
                    settings: GameSettings::of(config),
                    first: Engine::of(config, a.first, artifacts),
                    second: Engine::of(config, a.second, artifacts),
                    opening: record.openings[opening_index as usize].clone(),
                    opening_index,
                }
            })
            .collect();
        Some((lease.id, jobs))
    }

    /// Records finished pairs: durable (committed and flushed) before this returns.
    ///
    /// # Errors
    /// The store failed; nothing was acknowledged.
    pub async fn report(&self, worker: &str, results: Vec<Finished>) -> Result<ReportAck, String> {
        let mut ack = ReportAck::default();
        let mut fresh_candidates = Vec::new();
        {
            let inner = self.lock();
            for r in results {
                match inner.scheduler.tournament(r.tournament) {
                    None => ack.rejected += 1,
                    Some(t) if r.outcome.pair >= t.config.max_pairs() => ack.rejected += 1,
                    Some(t) if t.is_done(r.outcome.pair) => ack.duplicates += 1,
                    Some(_) => fresh_candidates.push(r),
                }
            }
        }
        if fresh_candidates.is_empty() {
            return Ok(ack);
        }
        let records: Vec<PairRecord> = fresh_candidates
            .iter()
            .map(|r| PairRecord {
                tournament: r.tournament,
                outcome: r.outcome,
                games: r.games.clone(),
                worker: worker.to_string(),
            })
            .collect();
        let (reply, wait) = oneshot::channel();
        self.commits
            .send(CommitJob { records, reply })
            .await
            .map_err(|_| "the store is closed".to_string())?;
        let fresh = wait
            .await
            .map_err(|_| "the store is closed".to_string())??;
        let mut changed_states = Vec::new();
        {
            let mut inner = self.lock();
            // The store decides which of two racing results for a pair is the first.
            let mut applied: Vec<(TournamentId, PairOutcome)> = Vec::new();
            let mut late = 0;
            for (r, _) in fresh_candidates.iter().zip(&fresh).filter(|(_, new)| **new) {
                // Late: its lease expired, and nobody else holds the pair now or did it.
                late += u64::from(
                    inner.scheduler.lease_of(r.tournament, r.outcome.pair) != Some(r.lease),
                );
                applied.push((r.tournament, r.outcome));
            }
            ack.duplicates += fresh.iter().filter(|new| !**new).count() as u32;
            self.metrics.pairs_committed.inc_by(applied.len() as u64);
            self.metrics.pairs_late.inc_by(late);
            let (scheduler_ack, changed) = inner.scheduler.report(&applied);
            ack.accepted += scheduler_ack.accepted;
            ack.duplicates += scheduler_ack.duplicates;
            for tid in changed {
                let state = inner.scheduler.tournament(tid).map(|t| t.state);
                if let (Some(state), Some(record)) = (state, inner.records.get_mut(&tid)) {
                    record.state = state;
                    if !state.is_active() && state != State::Paused {
                        record
                            .ended_ms
                            .get_or_insert_with(tourney_model::unix_ms_now);
                    }
                    changed_states.push(record.clone());
                }
            }
        }
        let now = self.now_ms();
        let mut played = Vec::new();
        for (r, _) in fresh_candidates.iter().zip(&fresh).filter(|(_, new)| **new) {
            let games = summaries(&r.games);
            for game in &games {
                self.metrics.observe_game(r.tournament, game);
            }
            played.push((r.tournament, r.outcome.pair, games));
        }
        {
            let mut inner = self.lock();
            inner.fleet.seen(worker, now);
            for (tournament, pair, games) in &played {
                let ended = inner.terminations.entry(*tournament).or_default();
                for game in games {
                    *ended.entry(game.termination).or_default() += 1;
                }
                for (index, game) in games.iter().enumerate() {
                    inner
                        .fleet
                        .record_game(worker, *tournament, *pair, index, game);
                }
            }
        }
        for record in changed_states {
            self.store
                .put_tournament(&record)
                .map_err(|e| e.to_string())?;
        }
        self.changed();
        Ok(ack)
    }

    /// Keeps a worker's leases alive; returns those it must drop.
    pub fn heartbeat(&self, worker: &str, leases: &[LeaseId]) -> Vec<LeaseId> {
        let now = self.now_ms();
        let mut inner = self.lock();
        inner.fleet.seen(worker, now);
        inner.scheduler.heartbeat(worker, leases, now)
    }

    /// Expires overdue leases.
    pub fn tick(&self) {
        let now = self.now_ms();
        let expired = {
            let mut inner = self.lock();
            inner.fleet.tick(now);
            inner.scheduler.tick(now)
        };
        if !expired.is_empty() {
            self.metrics.leases_expired.inc_by(expired.len() as u64);
            self.changed();
        }
    }

    /// Cancels a tournament.
    ///
    /// # Errors
    /// The store failed.
    pub async fn cancel(&self, id: TournamentId) -> Result<bool, String> {
        let record = {
            let mut inner = self.lock();
            if !inner.scheduler.cancel(id) {
                return Ok(false);
            }
            let record = inner
                .records
                .get_mut(&id)
                .expect("scheduled tournaments have records");
            record.state = State::Cancelled;
            record.paused_reason = None;
            record.ended_ms = Some(tourney_model::unix_ms_now());
            record.clone()
        };
        self.save(&record).await?;
        Ok(true)
    }

    /// A pair could not be played on `worker` (an engine unfit to play, a program that
    /// cannot be fetched): nothing is scored, the pair is offered again, and the worker's
    /// host is offered no more pairs of the tournament. When no connected worker is left
    /// that could play it, the tournament is paused with the reason; resuming it makes
    /// every host eligible again.
    ///
    /// # Errors
    /// The store failed.
    pub async fn pair_failed(
        &self,
        worker: &str,
        id: TournamentId,
        pair: u64,
        reason: &str,
    ) -> Result<(), String> {
        let reason = format!("pair {pair} could not be played on worker {worker}: {reason}");
        self.metrics
            .engine_failures
            .with_label_values(&["unfit"])
            .inc();
        let now = self.now_ms();
        let record = {
            let mut inner = self.lock();
            if !inner.scheduler.unfit(id, worker, pair) {
                return Ok(());
            }
            // A broken host (a missing library, say) does not stop the others: the pair
            // goes to them. With none left that can play it, the tournament waits for a fix.
            let others = inner
                .fleet
                .connected(now, self.settings.lease_ms)
                .iter()
                .any(|w| !inner.scheduler.is_unfit(id, &w.id));
            if others {
                drop(inner);
                eprintln!("coordinator: tournament {id}: {reason}; left to other workers");
                self.changed();
                return Ok(());
            }
            if !inner.scheduler.pause(id) {
                return Ok(());
            }
            let Some(record) = inner.records.get_mut(&id) else {
                return Ok(());
            };
            record.state = State::Paused;
            record.paused_reason = Some(reason.clone());
            record.clone()
        };
        eprintln!("coordinator: tournament {id} paused: {reason}");
        self.save(&record).await
    }

    /// Stores a tournament's new state durably, then tells the watchers.
    async fn save(&self, record: &TournamentRecord) -> Result<(), String> {
        self.store
            .put_tournament(record)
            .map_err(|e| e.to_string())?;
        self.store.flush().await.map_err(|e| e.to_string())?;
        self.changed();
        Ok(())
    }

    /// Resumes a paused tournament; returns whether it was paused.
    ///
    /// # Errors
    /// The store failed.
    pub async fn resume(&self, id: TournamentId) -> Result<bool, String> {
        let record = {
            let mut inner = self.lock();
            if !inner.scheduler.resume(id) {
                return Ok(false);
            }
            let state = inner.scheduler.tournament(id).map(|t| t.state);
            let Some(record) = inner.records.get_mut(&id) else {
                return Ok(false);
            };
            record.state = state.unwrap_or(State::Running);
            record.paused_reason = None;
            record.clone()
        };
        self.save(&record).await?;
        Ok(true)
    }

    /// Where a tournament is, `None` for an unknown id.
    pub fn state(&self, id: TournamentId) -> Option<State> {
        self.lock().scheduler.tournament(id).map(|t| t.state)
    }

    /// A tournament's file.
    pub fn status_config(&self, id: TournamentId) -> Option<Arc<TournamentConfig>> {
        self.lock().configs.get(&id).cloned()
    }

    /// Ids of all tournaments.
    pub fn ids(&self) -> Vec<TournamentId> {
        self.lock().scheduler.tournaments().map(|t| t.id).collect()
    }

    /// The metrics (for counting refused calls).
    pub fn metrics(&self) -> &CoordinatorMetrics {
        &self.metrics
    }

    /// Every metric in the Prometheus text format, gauges read from the current state.
    /// Tournaments that ended more than [`Settings::metrics_retention_ms`] ago have their
    /// series removed.
    pub fn metrics_text(&self) -> String {
        let now = tourney_model::unix_ms_now();
        let retention = self.settings.metrics_retention_ms;
        let (statuses, expired): (Vec<Status>, Vec<Status>) = self
            .ids()
            .into_iter()
            .filter_map(|id| self.status(id))
            .partition(|s| {
                s.ended_ms
                    .is_none_or(|end| now.saturating_sub(end) < retention)
            });
        for s in &expired {
            let engines: Vec<&str> = s.config.engines.iter().map(|e| e.name.as_str()).collect();
            let info = [
                s.config.name.as_str(),
                s.config.game.name(),
                s.config.format.name(),
            ];
            self.metrics.forget_tournament(s.id, info, &engines);
        }
        let gauges: Vec<TournamentGauges<'_>> = statuses
            .iter()
            .map(|s| TournamentGauges {
                id: s.id,
                info: [&s.config.name, s.config.game.name(), s.config.format.name()],
                state: s.state_name(),
                pending: s
                    .pairs_planned()
                    .map(|planned| planned.saturating_sub(s.pairs_done + s.pairs_leased)),
                leased: s.pairs_leased,
                done: s.pairs_done,
                llr: s.sprt.as_ref().map(|sprt| sprt.llr),
                elo: s
                    .ratings
                    .players
                    .iter()
                    .map(|p| (p.name.as_str(), p.elo))
                    .collect(),
            })
            .collect();
        self.metrics.set_gauges(&self.workers(), &gauges);
        self.metrics.encode()
    }

    /// A tournament's status with standings.
    pub fn status(&self, id: TournamentId) -> Option<Status> {
        self.snapshot(id, false).map(|(status, _)| status)
    }

    /// A tournament's status, and with `with_outcomes` its completed pairs in pair order.
    /// Ratings are computed once for each number of completed pairs, and for a running
    /// tournament at most every [`RATINGS_EVERY`]; the pairs are copied only when they are
    /// needed.
    fn snapshot(
        &self,
        id: TournamentId,
        with_outcomes: bool,
    ) -> Option<(Status, Vec<PairOutcome>)> {
        let inner = self.lock();
        let t = inner.scheduler.tournament(id)?;
        let config = Arc::clone(&inner.configs[&id]);
        let (state, pairs_done, pairs_leased, sprt) = (
            t.state,
            t.pairs_done(),
            t.pairs_leased() as u64,
            t.sprt_status(),
        );
        let cached = inner
            .ratings
            .get(&id)
            .filter(|c| c.fresh(pairs_done, state.is_active()))
            .map(|c| c.ratings.clone());
        let outcomes: Vec<PairOutcome> = if with_outcomes || cached.is_none() {
            t.completed().copied().collect()
        } else {
            Vec::new()
        };
        let record = inner.records.get(&id);
        let paused_reason = record.and_then(|r| r.paused_reason.clone());
        let (created_ms, ended_ms) = record.map_or((0, None), |r| (r.created_ms, r.ended_ms));
        drop(inner);
        let ratings = cached.unwrap_or_else(|| {
            let ratings = BayesElo::default().rate(&game_table(&config, &outcomes));
            let cached = CachedRatings {
                pairs: pairs_done,
                at: Instant::now(),
                ratings: ratings.clone(),
            };
            self.lock().ratings.insert(id, cached);
            ratings
        });
        let status = Status {
            id,
            config,
            state,
            pairs_done,
            pairs_leased,
            ratings,
            sprt,
            paused_reason,
            created_ms,
            ended_ms,
        };
        Some((status, outcomes))
    }

    /// The report of a tournament (standings, cross-table, SPRT history, terminations),
    /// from what the coordinator holds in memory, with its status.
    pub fn report_of(&self, id: TournamentId) -> Option<(Status, Report)> {
        let (status, outcomes) = self.snapshot(id, true)?;
        let (mut terminations, details) = {
            let inner = self.lock();
            let terminations: Vec<(String, u64)> = inner
                .terminations
                .get(&id)
                .into_iter()
                .flatten()
                .map(|(t, n)| (t.name().to_string(), *n))
                .collect();
            let openings = inner.records.get(&id).map_or(0, |r| r.openings.len());
            let artifacts = inner.artifacts.get(&id).cloned().unwrap_or_default();
            let details = crate::details::details(
                &status,
                openings,
                &artifacts,
                tourney_model::unix_ms_now(),
            );
            (terminations, details)
        };
        terminations.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut report = report_from(status.clone(), &outcomes, terminations);
        report.details = details;
        Some((status, report))
    }

    /// One stored pair's games.
    ///
    /// # Errors
    /// The store failed or holds a record that does not decode.
    pub fn pair_games(
        &self,
        id: TournamentId,
        pair: u64,
    ) -> Result<Option<Vec<GameRecord>>, String> {
        match self.store.pair(id, pair).map_err(|e| e.to_string())? {
            Some(record) => record.games().map(Some).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    /// The games of a tournament as JSON lines (pair order), each with its pair index and
    /// the engine names as `white` and `black`.
    ///
    /// # Errors
    /// The store failed.
    pub fn export(&self, id: TournamentId) -> Result<Vec<String>, String> {
        let pairs = self.store.pairs(id).map_err(|e| e.to_string())?;
        let mut lines = Vec::new();
        for pair in pairs {
            for game in &pair.games().map_err(|e| e.to_string())? {
                let mut value = serde_json::to_value(game).map_err(|e| e.to_string())?;
                if let Some(map) = value.as_object_mut() {
                    map.insert("pair".into(), pair.outcome.pair.into());
                    map.insert("tournament".into(), id.into());
                    map.insert("worker".into(), pair.worker.clone().into());
                    map.insert(
                        "white_spec".into(),
                        map.get("white")
                            .and_then(|w| w.get("spec"))
                            .cloned()
                            .unwrap_or_default(),
                    );
                    map.insert(
                        "black_spec".into(),
                        map.get("black")
                            .and_then(|w| w.get("spec"))
                            .cloned()
                            .unwrap_or_default(),
                    );
                    map.insert("white".into(), game.white.name.clone().into());
                    map.insert("black".into(), game.black.name.clone().into());
                }
                lines.push(serde_json::to_string(&value).map_err(|e| e.to_string())?);
            }
        }
        Ok(lines)
    }

    /// An artifact by sha256.
    ///
    /// # Errors
    /// The store failed.
    pub fn artifact(&self, sha: &str) -> Result<Option<Vec<u8>>, String> {
        self.store.artifact(sha).map_err(|e| e.to_string())
    }
}

impl Status {
    /// `queued`, `running`, `finished`, `cancelled` or `paused`.
    pub fn state_name(&self) -> &'static str {
        self.state.name()
    }

    /// Pairs planned, `None` for an open SPRT.
    pub fn pairs_planned(&self) -> Option<u64> {
        match self.config.format {
            Format::Sprt => None,
            _ => self.config.planned_pairs(),
        }
    }
}

/// A report of `status` over its completed pairs in pair order.
fn report_from(
    status: Status,
    outcomes: &[PairOutcome],
    terminations: Vec<(String, u64)>,
) -> Report {
    let config = &status.config;
    let table = game_table(config, outcomes);
    let names: Vec<String> = status
        .ratings
        .players
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let sprt = sprt_of(config).and_then(|sprt| {
        // The prefix of completed pairs in index order, as the SPRT counts them.
        let prefix: Vec<[u8; 2]> = outcomes
            .iter()
            .enumerate()
            .take_while(|(i, o)| o.pair == *i as u64)
            .map(|(_, o)| o.half_points)
            .collect();
        SprtReport::from_pairs(sprt, &prefix, 200).ok()
    });
    Report {
        title: format!(
            "{} (#{}, {}, {}, {})",
            config.name,
            status.id,
            config.game,
            config.format.name(),
            status.state_name()
        ),
        details: Vec::new(),
        crosstable: Crosstable::new(&table, &names),
        ratings: status.ratings,
        sprt,
        terminations,
    }
}

/// The group commit: takes every commit waiting, writes them in one transaction, flushes
/// once, then answers them all.
async fn committer(store: Store, mut jobs: mpsc::Receiver<CommitJob>, latency: Histogram) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = jobs.try_recv() {
            batch.push(more);
        }
        let all: Vec<PairRecord> = batch
            .iter()
            .flat_map(|j| j.records.iter().cloned())
            .collect();
        let timer = latency.start_timer();
        let result = match store.commit_pairs(&all) {
            Ok(fresh) => store
                .flush()
                .await
                .map(|()| fresh)
                .map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        timer.observe_duration();
        let mut offset = 0;
        for job in batch {
            let n = job.records.len();
            let answer = result
                .as_ref()
                .map(|fresh| fresh[offset..offset + n].to_vec())
                .map_err(Clone::clone);
            offset += n;
            let _ = job.reply.send(answer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MATCH: &str = "name = \"late\"\ngame = \"loa\"\nformat = \"match\"\npairs = 4\n\
        openings = { plies = 2, seed = 1 }\nlimits = { nodes = 1 }\n\
        [[engine]]\nname = \"a\"\nplayer = \"random\"\n\
        [[engine]]\nname = \"b\"\nplayer = \"random:seed=2\"\n";

    async fn coordinator(dir: &tempfile::TempDir, lease_ms: u64) -> (Arc<Coordinator>, u64) {
        let settings = Settings {
            lease_ms,
            heartbeat_ms: lease_ms / 2,
            ..Settings::default()
        };
        let store = Store::open(dir.path()).unwrap();
        let c = Coordinator::open(store, settings, &Registry::new()).unwrap();
        let id = c
            .submit(MATCH, "late.toml", "", BTreeMap::new())
            .await
            .unwrap();
        (c, id)
    }

    /// `a` wins both games of the job's pair.
    fn won_by_a(job: &PairJob, lease: LeaseId) -> Finished {
        let a_first = job.first.name == "a";
        let (first, second) = if a_first { (0, 1) } else { (1, 0) };
        Finished {
            tournament: job.tournament,
            outcome: PairOutcome {
                pair: job.pair,
                first,
                second,
                half_points: if a_first { [2, 2] } else { [0, 0] },
            },
            lease,
            games: serde_json::value::RawValue::from_string("[]".into()).unwrap(),
        }
    }

    #[tokio::test]
    async fn an_ended_tournament_leaves_metrics_after_the_retention_and_failures_start_at_zero() {
        let game = r#"{"game":"loa","white":{"name":"a"},"black":{"name":"b"},"moves":[],"result":"1-0","termination":"connection"}"#;
        for (retention, kept) in [(60_000, true), (0, false)] {
            let settings = Settings {
                metrics_retention_ms: retention,
                ..Settings::default()
            };
            let c =
                Coordinator::open(Store::temporary().unwrap(), settings, &Registry::new()).unwrap();
            let text = c.metrics_text();
            assert!(
                text.contains("tourney_engine_failures_total{reason=\"crash\"} 0"),
                "{text}"
            );
            let id = c
                .submit(MATCH, "m.toml", "", BTreeMap::new())
                .await
                .unwrap();
            let text = c.metrics_text();
            let before_any_game = format!(
                "tourney_games_total{{game=\"loa\",result=\"0-1\",termination=\"connection\",tournament=\"{id}\"}} 0"
            );
            assert!(text.contains(&before_any_game), "{text}");
            let worker = c.register("w", "test", 4);
            let (lease, jobs) = c.lease(&worker, 4).unwrap();
            let results: Vec<Finished> = jobs
                .iter()
                .map(|j| Finished {
                    games: serde_json::value::RawValue::from_string(format!("[{game},{game}]"))
                        .unwrap(),
                    ..won_by_a(j, lease)
                })
                .collect();
            c.report(&worker, results).await.unwrap();
            assert_eq!(c.state(id), Some(State::Finished));
            let text = c.metrics_text();
            let series = [
                format!("tourney_pairs_done{{tournament=\"{id}\"}}"),
                format!(
                    "tourney_tournament_info{{format=\"match\",game=\"loa\",name=\"late\",tournament=\"{id}\"}} 1"
                ),
                format!("tourney_tournament_state{{state=\"finished\",tournament=\"{id}\"}}"),
                format!("tourney_elo_estimate{{engine=\"a\",tournament=\"{id}\"}}"),
                format!(
                    "tourney_games_total{{game=\"loa\",result=\"1-0\",termination=\"connection\",tournament=\"{id}\"}}"
                ),
            ];
            for s in &series {
                assert_eq!(
                    text.contains(s.as_str()),
                    kept,
                    "{s} with retention {retention}:\n{text}"
                );
            }
            assert!(
                !text.contains(&format!("tournament=\"{id}\"")) || kept,
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn reports_say_what_was_played_and_when() {
        let dir = tempfile::tempdir().unwrap();
        let (c, id) = coordinator(&dir, 60_000).await;
        let details = |c: &Coordinator| -> BTreeMap<String, String> {
            c.report_of(id).unwrap().1.details.into_iter().collect()
        };
        let d = details(&c);
        assert_eq!(d["Game"], "loa");
        assert_eq!(d["Format"], "match: 4 pairs, 8 games");
        assert_eq!(d["Limits"], "1 nodes per move");
        assert!(
            d["Openings"].starts_with("4 generated: 2 random plies, seed 1"),
            "{d:?}"
        );
        assert_eq!(
            (d["Engine a"].as_str(), d["Engine b"].as_str()),
            ("random", "random:seed=2")
        );
        assert!(d["Started"].ends_with(" UTC"), "{d:?}");
        assert_eq!(d["ETA"], "after the first pairs");
        let worker = c.register("w", "test", 2);
        let (lease, jobs) = c.lease(&worker, 2).unwrap();
        let results = jobs.iter().map(|j| won_by_a(j, lease)).collect();
        c.report(&worker, results).await.unwrap();
        let eta = details(&c)["ETA"].clone();
        assert!(eta.starts_with("0:00:0") && eta.contains("(at "), "{eta}");
        let (_, report) = c.report_of(id).unwrap();
        assert!(
            report.text().contains("Engine b      random:seed=2"),
            "{}",
            report.text()
        );
    }

    #[tokio::test]
    async fn a_result_after_its_lease_expired_is_kept_and_counted_late() {
        let dir = tempfile::tempdir().unwrap();
        let (c, _) = coordinator(&dir, 20).await;
        let worker = c.register("w", "test", 2);
        let (lease, jobs) = c.lease(&worker, 2).unwrap();
        let ack = c
            .report(&worker, vec![won_by_a(&jobs[0], lease)])
            .await
            .unwrap();
        assert_eq!(ack.accepted, 1);
        assert_eq!(c.metrics().pairs_late.get(), 0, "in time");
        std::thread::sleep(Duration::from_millis(40));
        c.tick();
        assert_eq!(c.metrics().leases_expired.get(), 1);
        // Nobody else completed the pair: the late result counts, and is noted as late.
        let ack = c
            .report(&worker, vec![won_by_a(&jobs[1], lease)])
            .await
            .unwrap();
        assert_eq!(ack.accepted, 1);
        assert_eq!(c.metrics().pairs_late.get(), 1);
        assert_eq!(c.metrics().pairs_committed.get(), 2);
        // Once more: a duplicate, neither committed nor late.
        let ack = c
            .report(&worker, vec![won_by_a(&jobs[1], lease)])
            .await
            .unwrap();
        assert_eq!((ack.accepted, ack.duplicates), (0, 1));
        assert_eq!(c.metrics().pairs_late.get(), 1);
    }

    #[tokio::test]
    async fn terminations_are_counted_as_games_arrive_and_again_after_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let game = |termination: &str| {
            format!(
                r#"{{"game":"loa","white":{{"name":"a"}},"black":{{"name":"b"}},"moves":[],"result":"1-0","termination":"{termination}"}}"#
            )
        };
        let expected = vec![("connection".to_string(), 3), ("max-plies".to_string(), 1)];
        {
            let (c, id) = coordinator(&dir, 60_000).await;
            let worker = c.register("w", "test", 2);
            let (lease, jobs) = c.lease(&worker, 2).unwrap();
            let mut results: Vec<Finished> = jobs.iter().map(|j| won_by_a(j, lease)).collect();
            results[0].games = serde_json::value::RawValue::from_string(format!(
                "[{},{}]",
                game("connection"),
                game("max-plies")
            ))
            .unwrap();
            results[1].games = serde_json::value::RawValue::from_string(format!(
                "[{},{}]",
                game("connection"),
                game("connection")
            ))
            .unwrap();
            c.report(&worker, results).await.unwrap();
            let (_, report) = c.report_of(id).unwrap();
            assert_eq!(report.terminations, expected);
        }
        // sled lets go of its lock once the committer task and its background flusher
        // have stopped.
        let mut store = None;
        for _ in 0..100 {
            store = Store::open(dir.path()).ok();
            if store.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let store = store.expect("the store reopens");
        let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
        let (_, report) = c.report_of(c.ids()[0]).unwrap();
        assert_eq!(report.terminations, expected, "restored from the store");
    }

    #[tokio::test]
    async fn a_pair_one_host_cannot_play_goes_to_another_and_pauses_when_none_can() {
        let dir = tempfile::tempdir().unwrap();
        let (c, id) = coordinator(&dir, 60_000).await;
        let (broken, fine) = (
            c.register("broken", "test", 1),
            c.register("fine", "test", 1),
        );
        let (_, jobs) = c.lease(&broken, 1).unwrap();
        let pair = jobs[0].pair;
        c.pair_failed(&broken, id, pair, "engine unsupported")
            .await
            .unwrap();
        let status = c.status(id).unwrap();
        assert_eq!(
            status.state,
            State::Running,
            "another worker can still play it"
        );
        assert_eq!(status.paused_reason, None);
        assert!(
            c.lease(&broken, 4).is_none(),
            "nothing more for the broken host"
        );
        let (_, jobs) = c.lease(&fine, 4).unwrap();
        assert!(
            jobs.iter().any(|j| j.pair == pair),
            "the pair is offered again"
        );
        // The last host that could play it fails too: the tournament waits for a fix.
        c.pair_failed(&fine, id, pair, "engine unsupported")
            .await
            .unwrap();
        let status = c.status(id).unwrap();
        assert_eq!(status.state, State::Paused);
        let reason = status.paused_reason.unwrap();
        assert!(
            reason.contains("fine#2") && reason.contains("unsupported"),
            "{reason}"
        );
        assert!(c.resume(id).await.unwrap());
        assert!(
            c.lease(&broken, 1).is_some(),
            "resuming makes every host eligible again"
        );
    }

    #[tokio::test]
    async fn near_the_end_a_worker_leases_only_its_share_of_what_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let (c, _) = coordinator(&dir, 60_000).await;
        let (one, three) = (c.register("one", "test", 1), c.register("three", "test", 3));
        // 4 pairs left for 4 slots: one may take 1, three may take 3 of them.
        let (_, jobs) = c.lease(&one, 10).unwrap();
        assert_eq!(jobs.len(), 1);
        let (_, jobs) = c.lease(&three, 10).unwrap();
        assert_eq!(jobs.len(), 3, "3 of the 3 left, at least one per slot");
        assert!(c.lease(&one, 10).is_none(), "nothing left");
        // Alone, a worker takes all it asks for.
        let dir = tempfile::tempdir().unwrap();
        let (c, _) = coordinator(&dir, 60_000).await;
        let alone = c.register("alone", "test", 1);
        assert_eq!(c.lease(&alone, 10).unwrap().1.len(), 4);
    }

    #[tokio::test]
    async fn running_ratings_are_reused_briefly_and_final_ratings_are_exact() {
        let dir = tempfile::tempdir().unwrap();
        let (c, id) = coordinator(&dir, 60_000).await;
        let worker = c.register("w", "test", 4);
        let (lease, jobs) = c.lease(&worker, 4).unwrap();
        let games = |c: &Coordinator| -> Vec<u64> {
            let status = c.status(id).unwrap();
            status.ratings.players.iter().map(|p| p.games).collect()
        };
        c.report(&worker, vec![won_by_a(&jobs[0], lease)])
            .await
            .unwrap();
        assert_eq!(games(&c), vec![2, 2]);
        let rated = Instant::now();
        c.report(&worker, vec![won_by_a(&jobs[1], lease)])
            .await
            .unwrap();
        let now = games(&c);
        assert_eq!(c.status(id).unwrap().pairs_done, 2);
        if rated.elapsed() < RATINGS_EVERY {
            assert_eq!(now, vec![2, 2], "computed again within {RATINGS_EVERY:?}");
        }
        let rest = jobs[2..].iter().map(|j| won_by_a(j, lease)).collect();
        c.report(&worker, rest).await.unwrap();
        let status = c.status(id).unwrap();
        assert_eq!(status.state, State::Finished);
        assert_eq!(
            games(&c),
            vec![8, 8],
            "a finished tournament's ratings are exact"
        );
        assert_eq!(status.ratings.players[0].name, "a");
        assert!(status.ratings.players[0].elo > status.ratings.players[1].elo);
    }
}
