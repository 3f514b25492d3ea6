//! The coordinator's Prometheus metrics: counters and histograms updated as events happen,
//! gauges refreshed from the coordinator's state on every scrape.
//!
//! Label sets are bounded: a tournament, a game, a result, a termination, an engine name,
//! an RPC service; never a pair or a game. A rating pool's ratings are bounded apart
//! ([`crate::pool_metrics`]).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use prometheus::core::Collector;
use prometheus::{
    GaugeVec, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry,
};
use tourney_model::{GameSummary, Termination};

use crate::fleet::WorkerInfo;
use crate::pool_metrics::{POOL_ENGINES_EXPORTED, POOLS_EXPORTED, PoolEngine, PoolGauges};

/// Every coordinator metric, registered in one registry.
pub struct CoordinatorMetrics {
    registry: Registry,
    /// `tourney_games_total{tournament,game,result,termination}`.
    pub games: IntCounterVec,
    /// `tourney_pair_results_committed_total`.
    pub pairs_committed: IntCounter,
    /// `tourney_datagen_searched_again_total{result}`: sampled data generation games of
    /// built-in players searched again by the coordinator, `agreed` or `refused`.
    pub searched_again: IntCounterVec,
    /// `tourney_pair_results_late_total`: results committed after their lease had expired
    /// (a sign that `lease_ms` is short for the games or the workers' links).
    pub pairs_late: IntCounter,
    /// `tourney_game_duration_seconds{game}`: thinking time of both sides.
    pub game_duration: HistogramVec,
    /// `tourney_game_plies{game}`.
    pub game_plies: HistogramVec,
    /// `tourney_nodes_searched_total{tournament}`, as the players reported them.
    pub nodes: IntCounterVec,
    /// `tourney_engine_failures_total{reason}`: games lost to a crash, timeout, illegal move.
    pub engine_failures: IntCounterVec,
    /// `tourney_leases_granted_total`.
    pub leases_granted: IntCounter,
    /// `tourney_artifact_bytes_sent_total`.
    pub artifact_bytes_sent: IntCounter,
    /// `tourney_calls_deferred_total{call}`: leases and registrations past their budget
    /// of calls a second, told to come back later.
    pub calls_deferred: IntCounterVec,
    /// `tourney_leases_expired_total`.
    pub leases_expired: IntCounter,
    /// `tourney_lease_request_duration_seconds`: time to answer a lease request.
    pub lease_latency: Histogram,
    /// `tourney_auth_failures_total{service}`.
    pub auth_failures: IntCounterVec,
    /// `tourney_insecure`: 1 when served beyond loopback without both tokens.
    pub insecure: IntGauge,
    /// `tourney_store_failing`: 1 while the store fails (no leases until it recovers).
    pub store_failing: IntGauge,
    /// `tourney_store_commit_duration_seconds`: one group commit, write and flush.
    pub commit_latency: Histogram,
    /// `tourney_results_rejected_total{reason}`: results that fail the checks (forged,
    /// or from a broken worker).
    pub results_rejected: IntCounterVec,
    /// `tourney_reports_deferred_total{reason}`: whole reports turned away for honest
    /// reasons, to be sent again (`too-large`: in parts; `busy`: later).
    pub reports_deferred: IntCounterVec,
    /// `tourney_games_duplicate_total{tournament}`.
    pub duplicate_games: IntCounterVec,
    pairs_pending: IntGaugeVec,
    pairs_leased: IntGaugeVec,
    pairs_done: IntGaugeVec,
    pairs_excluded: IntGaugeVec,
    workers_suspect: IntGaugeVec,
    tournament_state: IntGaugeVec,
    workers: IntGauge,
    worker_slots: IntGauge,
    sprt_llr: GaugeVec,
    share: GaugeVec,
    share_target: GaugeVec,
    elo: GaugeVec,
    tournament_info: IntGaugeVec,
    pools: PoolGauges,
    /// The label sets of `games` per tournament, to remove them when it is forgotten.
    games_labels: Mutex<HashMap<u64, HashSet<[String; 4]>>>,
}

/// The values of `tourney_tournament_state`'s `state` label.
const STATES: [&str; 5] = ["queued", "running", "finished", "cancelled", "paused"];

/// What the scrape-time gauges show of one tournament.
pub struct TournamentGauges<'a> {
    /// Its number.
    pub id: u64,
    /// Name, game and format, for `tourney_tournament_info`.
    pub info: [&'a str; 3],
    /// `queued`, `running`, `finished`, `cancelled` or `paused`.
    pub state: &'a str,
    /// Pairs not yet leased or done (`None`: open-ended SPRT).
    pub pending: Option<u64>,
    /// Pairs in live leases.
    pub leased: u64,
    /// Pairs completed.
    pub done: u64,
    /// Completed pairs left out of the figures (excluded workers').
    pub excluded: u64,
    /// Workers whose results look suspect.
    pub suspects: u64,
    /// The SPRT's log-likelihood ratio, if it is one.
    pub llr: Option<f64>,
    /// Its share of the fleet now and its target, while it is live.
    pub share: Option<crate::scheduler::Share>,
    /// Ratings by engine name.
    pub elo: Vec<(&'a str, f64)>,
    /// A rating pool's engines in the order they joined, while it has not ended.
    pub pool: Option<Vec<PoolEngine<'a>>>,
}

/// Registers a new metric (names and buckets here are constants, so failure is a bug).
fn register<M: Collector + Clone + 'static>(
    registry: &Registry,
    metric: prometheus::Result<M>,
) -> M {
    let metric = metric.expect("valid metric");
    registry
        .register(Box::new(metric.clone()))
        .expect("unique metric");
    metric
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    register(registry, IntCounter::new(name, help))
}

fn counter_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    register(registry, IntCounterVec::new(Opts::new(name, help), labels))
}

fn int_gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    register(registry, IntGauge::new(name, help))
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    register(registry, IntGaugeVec::new(Opts::new(name, help), labels))
}

fn float_gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> GaugeVec {
    register(registry, GaugeVec::new(Opts::new(name, help), labels))
}

fn histogram_vec(
    registry: &Registry,
    name: &str,
    help: &str,
    buckets: Vec<f64>,
    labels: &[&str],
) -> HistogramVec {
    let opts = HistogramOpts::new(name, help).buckets(buckets);
    register(registry, HistogramVec::new(opts, labels))
}

fn histogram(registry: &Registry, name: &str, help: &str, buckets: Vec<f64>) -> Histogram {
    register(
        registry,
        Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets)),
    )
}

impl CoordinatorMetrics {
    /// Registers the coordinator's metrics in `registry`.
    ///
    /// # Panics
    /// The registry already holds metrics of these names.
    pub fn new(registry: &Registry) -> Self {
        let metrics = Self::register(registry);
        for reason in crate::types::Refusal::kinds() {
            metrics.results_rejected.with_label_values(&[reason]);
        }
        for result in ["agreed", "refused"] {
            metrics.searched_again.with_label_values(&[result]);
        }
        for reason in ["too-large", "busy"] {
            metrics.reports_deferred.with_label_values(&[reason]);
        }
        for call in ["lease", "register"] {
            metrics.calls_deferred.with_label_values(&[call]);
        }
        // Every reason exported from 0, so that an alert fires on the first failure.
        let failures = Termination::ALL.into_iter().filter(|t| t.is_failure());
        for reason in failures.map(Termination::name).chain(["unfit"]) {
            metrics.engine_failures.with_label_values(&[reason]);
        }
        metrics
    }

    fn register(registry: &Registry) -> Self {
        let r = registry;
        let seconds = prometheus::exponential_buckets(0.001, 4.0, 10).expect("valid buckets");
        CoordinatorMetrics {
            registry: r.clone(),
            games: counter_vec(
                r,
                "tourney_games_total",
                "Games finished, by tournament, game, result and termination.",
                &["tournament", "game", "result", "termination"],
            ),
            artifact_bytes_sent: counter(
                r,
                "tourney_artifact_bytes_sent_total",
                "Bytes of artifacts (programs, data files) sent to workers over HTTP and gRPC.",
            ),
            pairs_committed: counter(
                r,
                "tourney_pair_results_committed_total",
                "Pair results made durable in the store.",
            ),
            searched_again: counter_vec(
                r,
                "tourney_datagen_searched_again_total",
                "Sampled data generation games of built-in players searched again by the \
                 coordinator: agreed with the record, or refused.",
                &["result"],
            ),
            pairs_late: counter(
                r,
                "tourney_pair_results_late_total",
                "Pair results committed after their lease had expired.",
            ),
            game_duration: histogram_vec(
                r,
                "tourney_game_duration_seconds",
                "Thinking time of both sides in a game.",
                prometheus::exponential_buckets(0.01, 4.0, 10).expect("valid buckets"),
                &["game"],
            ),
            game_plies: histogram_vec(
                r,
                "tourney_game_plies",
                "Plies in a finished game.",
                prometheus::exponential_buckets(8.0, 2.0, 8).expect("valid buckets"),
                &["game"],
            ),
            nodes: counter_vec(
                r,
                "tourney_nodes_searched_total",
                "Nodes the players reported searching.",
                &["tournament"],
            ),
            engine_failures: counter_vec(
                r,
                "tourney_engine_failures_total",
                "Games lost to an engine failure, by reason; `unfit`: pairs that could not be played (the tournament pauses).",
                &["reason"],
            ),
            leases_granted: counter(
                r,
                "tourney_leases_granted_total",
                "Leases granted to workers.",
            ),
            leases_expired: counter(
                r,
                "tourney_leases_expired_total",
                "Leases that ran out without a heartbeat; their pairs went back to the queue.",
            ),
            lease_latency: histogram(
                r,
                "tourney_lease_request_duration_seconds",
                "Time to answer a worker's lease request.",
                seconds.clone(),
            ),
            store_failing: int_gauge(
                r,
                "tourney_store_failing",
                "1 while the store fails (a full disk, say): no pairs are leased and health says NOT_SERVING until it takes writes again.",
            ),
            insecure: int_gauge(
                r,
                "tourney_insecure",
                "1 when the coordinator serves beyond loopback without both tokens (--insecure).",
            ),
            auth_failures: counter_vec(
                r,
                "tourney_auth_failures_total",
                "Calls refused for a missing or wrong token, by service.",
                &["service"],
            ),
            commit_latency: histogram(
                r,
                "tourney_store_commit_duration_seconds",
                "One group commit to the store: write and flush.",
                seconds,
            ),
            pairs_pending: gauge_vec(
                r,
                "tourney_pairs_pending",
                "Pairs neither leased nor done (fixed-length tournaments).",
                &["tournament"],
            ),
            pairs_leased: gauge_vec(
                r,
                "tourney_pairs_leased",
                "Pairs in live leases.",
                &["tournament"],
            ),
            pairs_done: gauge_vec(r, "tourney_pairs_done", "Pairs completed.", &["tournament"]),
            pairs_excluded: gauge_vec(
                r,
                "tourney_pairs_excluded",
                "Completed pairs left out of every figure: their workers' results are excluded.",
                &["tournament"],
            ),
            workers_suspect: gauge_vec(
                r,
                "tourney_workers_suspect",
                "Workers whose results in the tournament look suspect (unlike the others', \
                 many time losses, engine failures or refused reports) and are not excluded.",
                &["tournament"],
            ),
            tournament_state: gauge_vec(
                r,
                "tourney_tournament_state",
                "1 for the state each tournament is in.",
                &["tournament", "state"],
            ),
            workers: int_gauge(
                r,
                "tourney_workers_connected",
                "Workers heard from within a lease period.",
            ),
            worker_slots: int_gauge(
                r,
                "tourney_slots_registered",
                "Game slots of the registered workers.",
            ),
            sprt_llr: float_gauge_vec(
                r,
                "tourney_sprt_llr",
                "Log-likelihood ratio of an SPRT tournament.",
                &["tournament"],
            ),
            share: float_gauge_vec(
                r,
                "tourney_tournament_share_ratio",
                "A live test's part of the core-seconds handed out over the last minutes.",
                &["tournament"],
            ),
            share_target: float_gauge_vec(
                r,
                "tourney_tournament_share_target_ratio",
                "A live test's part of the fleet by its (author-bounded) weight.",
                &["tournament"],
            ),
            elo: float_gauge_vec(
                r,
                "tourney_elo_estimate",
                "Rating of each engine in a tournament (BayesElo scale).",
                &["tournament", "engine"],
            ),
            results_rejected: counter_vec(
                r,
                "tourney_results_rejected_total",
                "Reported pairs refused by the checks, by reason: not-held, records, seats, ticket, start, move, clock, scores, ending, record, rules, half-points.",
                &["reason"],
            ),
            calls_deferred: counter_vec(
                r,
                "tourney_calls_deferred_total",
                "Leases and registrations past the coordinator's budget of calls a second, answered RESOURCE_EXHAUSTED with a retry delay, by call.",
                &["call"],
            ),
            reports_deferred: counter_vec(
                r,
                "tourney_reports_deferred_total",
                "Whole reports turned away for the worker to send again, by reason: too-large (in parts), busy (later). Honest, not rejections.",
                &["reason"],
            ),
            duplicate_games: counter_vec(
                r,
                "tourney_games_duplicate_total",
                "Games identical to an earlier game of their tournament (players, colours, start, moves): repeated, not new, evidence.",
                &["tournament"],
            ),
            tournament_info: gauge_vec(
                r,
                "tourney_tournament_info",
                "1 for each tournament, with its name, game and format (join on `tournament` for readable legends).",
                &["tournament", "name", "game", "format"],
            ),
            pools: PoolGauges::new(
                float_gauge_vec(
                    r,
                    "tourney_pool_rating_elo",
                    &format!(
                        "A rating pool's rating of an engine relative to its anchor (the newest \
                         {POOLS_EXPORTED} pools that have not ended; of each, the best-rated \
                         {half} and newest {half} engines with games).",
                        half = POOL_ENGINES_EXPORTED / 2
                    ),
                    &["tournament", "engine"],
                ),
                float_gauge_vec(
                    r,
                    "tourney_pool_rating_interval_elo",
                    "Half-width of the 95% interval of tourney_pool_rating_elo (0 for the anchor).",
                    &["tournament", "engine"],
                ),
                gauge_vec(
                    r,
                    "tourney_pool_engines",
                    "Engines in a rating pool whose ratings are exported, exported or not.",
                    &["tournament"],
                ),
            ),
            games_labels: Mutex::default(),
        }
    }

    /// Counts the games of a committed pair.
    pub fn observe_game(&self, tournament: u64, game: &GameSummary) {
        let termination = game.termination.name();
        let labels = [
            tournament.to_string(),
            game.game.to_string(),
            game.result.to_string(),
            termination.to_string(),
        ];
        self.games.with_label_values(&labels).inc();
        self.games_labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(tournament)
            .or_default()
            .insert(labels);
        if game.termination.is_failure() {
            self.engine_failures.with_label_values(&[termination]).inc();
        }
        self.game_duration
            .with_label_values(&[game.game.name()])
            .observe(game.thinking_ms() as f64 / 1000.0);
        self.game_plies
            .with_label_values(&[game.game.name()])
            .observe(game.plies() as f64);
        let nodes = game.nodes();
        if nodes > 0 {
            self.nodes
                .with_label_values(&[&tournament.to_string()])
                .inc_by(nodes);
        }
    }

    /// Sets the gauges from a snapshot of the coordinator.
    pub fn set_gauges(&self, workers: &[WorkerInfo], tournaments: &[TournamentGauges<'_>]) {
        self.workers.set(workers.len() as i64);
        self.worker_slots
            .set(workers.iter().map(|w| i64::from(w.slots)).sum());
        for t in tournaments {
            let id = t.id.to_string();
            let [name, game, format] = t.info;
            self.start_games_at_zero(t.id, game);
            self.tournament_info
                .with_label_values(&[id.as_str(), name, game, format])
                .set(1);
            for state in STATES {
                self.tournament_state
                    .with_label_values(&[&id, state])
                    .set(i64::from(state == t.state));
            }
            if let Some(pending) = t.pending {
                self.pairs_pending
                    .with_label_values(&[&id])
                    .set(pending as i64);
            }
            self.pairs_leased
                .with_label_values(&[&id])
                .set(t.leased as i64);
            self.pairs_done.with_label_values(&[&id]).set(t.done as i64);
            self.pairs_excluded
                .with_label_values(&[&id])
                .set(t.excluded as i64);
            self.workers_suspect
                .with_label_values(&[&id])
                .set(t.suspects as i64);
            if let Some(llr) = t.llr {
                self.sprt_llr.with_label_values(&[&id]).set(llr);
            }
            let share = t.share.unwrap_or_default();
            self.share.with_label_values(&[&id]).set(share.now);
            self.share_target
                .with_label_values(&[&id])
                .set(share.target);
            for (engine, elo) in &t.elo {
                self.elo.with_label_values(&[id.as_str(), engine]).set(*elo);
            }
        }
        self.pools.set(
            (tournaments.iter())
                .filter_map(|t| Some((t.id, t.pool.as_deref()?)))
                .collect(),
        );
    }

    /// Exports `tourney_games_total` of a tournament seen for the first time at 0 for every
    /// result and termination, so that `rate()` and `increase()` see its first games.
    fn start_games_at_zero(&self, id: u64, game: &str) {
        let mut known = self
            .games_labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if known.contains_key(&id) {
            return;
        }
        self.duplicate_games.with_label_values(&[&id.to_string()]);
        let labels = known.entry(id).or_default();
        for result in ["1-0", "0-1", "1/2-1/2"] {
            for termination in Termination::ALL {
                let series = [
                    id.to_string(),
                    game.to_string(),
                    result.to_string(),
                    termination.name().to_string(),
                ];
                self.games.with_label_values(&series);
                labels.insert(series);
            }
        }
    }

    /// Removes every series of tournament `id` (of `info`: name, game, format; with
    /// `engines`): it ended long enough ago, and the `tournament` label must stay bounded.
    pub fn forget_tournament(&self, id: u64, info: [&str; 3], engines: &[&str]) {
        let t = id.to_string();
        let [name, game, format] = info;
        let _ = self
            .tournament_info
            .remove_label_values(&[t.as_str(), name, game, format]);
        let labels = self
            .games_labels
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id)
            .unwrap_or_default();
        for labels in labels {
            let _ = self
                .games
                .remove_label_values(&labels.each_ref().map(String::as_str));
        }
        let _ = self.nodes.remove_label_values(&[&t]);
        let _ = self.duplicate_games.remove_label_values(&[&t]);
        for state in STATES {
            let _ = self.tournament_state.remove_label_values(&[&t, state]);
        }
        for gauge in [
            &self.pairs_pending,
            &self.pairs_leased,
            &self.pairs_done,
            &self.pairs_excluded,
            &self.workers_suspect,
        ] {
            let _ = gauge.remove_label_values(&[&t]);
        }
        let _ = self.sprt_llr.remove_label_values(&[&t]);
        let _ = self.share.remove_label_values(&[&t]);
        let _ = self.share_target.remove_label_values(&[&t]);
        for engine in engines {
            let _ = self.elo.remove_label_values(&[t.as_str(), engine]);
        }
    }

    /// The registry, in the text exposition format.
    pub fn encode(&self) -> String {
        encode(&self.registry)
    }
}

/// Every metric of `registry` in the Prometheus text exposition format.
pub fn encode(registry: &Registry) -> String {
    let mut text = String::new();
    prometheus::TextEncoder::new()
        .encode_utf8(&registry.gather(), &mut text)
        .expect("text encoding of gathered metrics cannot fail");
    text
}
