//! The worker's Prometheus metrics (`tourney_worker_` prefix), registered in the registry
//! the binary hands down and served by it (`tourney worker --metrics ADDR`).

use prometheus::{IntCounter, IntCounterVec, IntGauge, Opts, Registry};

/// The worker's metrics. Clones share the series, so several workers in one process
/// (the embedded mode, benchmarks) add up.
#[derive(Clone)]
pub struct WorkerMetrics {
    /// `tourney_worker_games_total{game}`: games played (rate: games/s).
    pub games: IntCounterVec,
    /// `tourney_worker_pairs_in_play`: pairs on the game threads now.
    pub pairs_in_play: IntGauge,
    /// `tourney_worker_pairs_queued`: leased pairs waiting for a game thread.
    pub pairs_queued: IntGauge,
    /// `tourney_worker_slots`: game threads the worker may run.
    pub slots: IntGauge,
    /// `tourney_worker_cores`: cores the worker offers its games (`--cores`).
    pub cores: IntGauge,
    /// `tourney_worker_cores_busy`: cores kept for the games in play (each game its
    /// costliest side's threads), never above `tourney_worker_cores`.
    pub cores_busy: IntGauge,
    /// `tourney_worker_results_unreported`: finished results (pairs, failures, engine
    /// checks) the coordinator has not acknowledged yet.
    pub results_unreported: IntGauge,
    /// `tourney_worker_engine_restarts_total`: outside engine processes started again
    /// after a failure (or after using half a limit that counts over a process's life).
    pub engine_restarts: IntCounter,
    /// `tourney_worker_engine_starts_total`: outside engine processes started (kept
    /// across pairs, so about one per game slot and engine while all goes well).
    pub engine_starts: IntCounter,
    /// `tourney_worker_reconnects_total`: sessions lost and opened again.
    pub reconnects: IntCounter,
    /// `tourney_worker_results_rejected_total`: reported pair results the coordinator
    /// refused.
    pub results_rejected: IntCounter,
    /// `tourney_worker_idle_players`: players kept for the next pairs (built-in ones and
    /// outside engines), within the pool's bound.
    pub idle_players: IntGauge,
    /// `tourney_worker_idle_player_bytes`: what the built-in ones among them hold (tables,
    /// trees), within the pool's bound.
    pub idle_player_bytes: IntGauge,
}

impl WorkerMetrics {
    /// Registers the worker's metrics in `registry`.
    ///
    /// # Panics
    /// The registry already holds metrics of these names.
    pub fn new(registry: &Registry) -> Self {
        let games = IntCounterVec::new(
            Opts::new("tourney_worker_games_total", "Games played by this worker."),
            &["game"],
        )
        .expect("valid metric");
        let gauge = |name: &str, help: &str| IntGauge::new(name, help).expect("valid metric");
        let counter = |name: &str, help: &str| IntCounter::new(name, help).expect("valid metric");
        let metrics = WorkerMetrics {
            games,
            pairs_in_play: gauge(
                "tourney_worker_pairs_in_play",
                "Pairs being played on game threads.",
            ),
            pairs_queued: gauge(
                "tourney_worker_pairs_queued",
                "Leased pairs waiting for a game thread.",
            ),
            slots: gauge("tourney_worker_slots", "Game threads the worker may run."),
            cores: gauge("tourney_worker_cores", "Cores the worker offers its games."),
            cores_busy: gauge(
                "tourney_worker_cores_busy",
                "Cores kept for the games in play (each its costliest side's threads).",
            ),
            results_unreported: gauge(
                "tourney_worker_results_unreported",
                "Finished results the coordinator has not acknowledged yet.",
            ),
            engine_restarts: counter(
                "tourney_worker_engine_restarts_total",
                "Outside engine processes started again after a failure or a limit half used.",
            ),
            engine_starts: counter(
                "tourney_worker_engine_starts_total",
                "Outside engine processes started.",
            ),
            reconnects: counter(
                "tourney_worker_reconnects_total",
                "Connections to the coordinator lost and opened again.",
            ),
            results_rejected: counter(
                "tourney_worker_results_rejected_total",
                "Reported pair results the coordinator refused (its log says why).",
            ),
            idle_players: gauge(
                "tourney_worker_idle_players",
                "Players kept for the next pairs: built-in ones and outside engines.",
            ),
            idle_player_bytes: gauge(
                "tourney_worker_idle_player_bytes",
                "Bytes of the tables and trees of the built-in players kept for the next pairs.",
            ),
        };
        // Exported from 0, so that rates and alerts see the first game.
        for game in ["loa", "amazons"] {
            metrics.games.with_label_values(&[game]);
        }
        let collectors: [Box<dyn prometheus::core::Collector>; 13] = [
            Box::new(metrics.games.clone()),
            Box::new(metrics.pairs_in_play.clone()),
            Box::new(metrics.pairs_queued.clone()),
            Box::new(metrics.slots.clone()),
            Box::new(metrics.cores.clone()),
            Box::new(metrics.cores_busy.clone()),
            Box::new(metrics.results_unreported.clone()),
            Box::new(metrics.engine_restarts.clone()),
            Box::new(metrics.engine_starts.clone()),
            Box::new(metrics.reconnects.clone()),
            Box::new(metrics.results_rejected.clone()),
            Box::new(metrics.idle_players.clone()),
            Box::new(metrics.idle_player_bytes.clone()),
        ];
        for c in collectors {
            registry.register(c).expect("unique metric");
        }
        metrics
    }
}

/// This worker's share of a gauge that several workers in one process add to; the share
/// is taken back when it is dropped.
pub(crate) struct GaugeShare {
    gauge: IntGauge,
    shown: i64,
}

impl GaugeShare {
    /// A share of `gauge`, starting at 0.
    pub(crate) fn new(gauge: &IntGauge) -> Self {
        GaugeShare {
            gauge: gauge.clone(),
            shown: 0,
        }
    }

    /// Makes this worker's share `value`.
    pub(crate) fn set(&mut self, value: i64) {
        self.gauge.add(value - self.shown);
        self.shown = value;
    }
}

impl Drop for GaugeShare {
    fn drop(&mut self) {
        self.gauge.sub(self.shown);
    }
}
