//! What a pair costs and what a test was given, in core-seconds: the measures the shares
//! ([`super::share`]) compare, apart from the tests they are kept for; and the pairs it
//! completed lately, for the rate it plays at.

use tourney_model::TimeControl;
use tourney_model::tournament::TournamentConfig;

/// How long what a test was given takes to count half.
pub const SHARE_HALF_LIFE_MS: u64 = 5 * 60_000;

/// Moves a side is expected to make in a game (clocked games spend about their base time
/// and this many increments).
const MOVES_PER_SIDE: f64 = 40.0;

/// Nodes a second a built-in or outside engine is taken to search, to cost games limited
/// by nodes.
const NODES_PER_SECOND: f64 = 1_000_000.0;

/// A move's cost when nothing says it (depth limits), in seconds.
const UNKNOWN_SECONDS_A_MOVE: f64 = 0.05;

/// The mean life of what a test was given (the half-life over ln 2), in seconds.
fn mean_life_s() -> f64 {
    SHARE_HALF_LIFE_MS as f64 / 1000.0 / std::f64::consts::LN_2
}

/// What a test was given: the core-seconds its pairs out held, decaying.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Given {
    core_seconds: f64,
    at_ms: u64,
    /// The cores it held at `at_ms` (taken to be held until it is looked at again).
    held: f64,
    /// It was given its start (levelled with the least-served test).
    pub(super) started: bool,
}

impl Given {
    /// What it was given, as of `now`.
    pub(super) fn at(&self, now: u64) -> f64 {
        let ago = now.saturating_sub(self.at_ms) as f64;
        let kept = 0.5f64.powf(ago / SHARE_HALF_LIFE_MS as f64);
        self.core_seconds * kept + self.held * mean_life_s() * (1.0 - kept)
    }

    /// Counts what it held until `now`, and that it holds `held` cores from now on.
    pub(super) fn hold(&mut self, now: u64, held: f64) {
        self.core_seconds = self.at(now);
        self.at_ms = now.max(self.at_ms);
        self.held = held;
    }

    pub(super) fn set(&mut self, now: u64, core_seconds: f64) {
        self.core_seconds = core_seconds;
        self.at_ms = now;
        self.started = true;
    }
}

/// The pairs a test completed lately: a count decaying at the shares' half-life, for the
/// rate its pairs come in at (measured, whatever a pair was expected to cost).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Completed {
    count: f64,
    at_ms: u64,
    /// When it was first handed pairs in this run: a count younger than the mean life
    /// is divided by the time it had.
    since_ms: Option<u64>,
}

impl Completed {
    /// Notes that it plays from `now` on, if it did not already.
    pub(super) fn start(&mut self, now: u64) {
        self.since_ms.get_or_insert(now);
    }

    /// Counts `pairs` completed at `now`.
    pub(super) fn add(&mut self, now: u64, pairs: f64) {
        self.start(now);
        self.count = self.decayed(now) + pairs;
        self.at_ms = self.at_ms.max(now);
    }

    fn decayed(&self, now: u64) -> f64 {
        let ago = now.saturating_sub(self.at_ms) as f64;
        self.count * 0.5f64.powf(ago / SHARE_HALF_LIFE_MS as f64)
    }

    /// Pairs an hour lately. A steady rate r fills the decaying count to r times the
    /// mean life τ, times 1 − e^(−age/τ) while it is young: the count over that is r.
    pub(super) fn per_hour(&self, now: u64) -> f64 {
        let Some(since) = self.since_ms else {
            return 0.0;
        };
        let tau = mean_life_s();
        let age = now.saturating_sub(since) as f64 / 1000.0;
        let filled = tau * (1.0 - (-age / tau).exp());
        match filled > 0.0 {
            true => self.decayed(now) / filled * 3600.0,
            false => 0.0,
        }
    }
}

/// The cores one pair of `config`'s holds while it is out: its games' (the costliest
/// side's threads, or what the test requires).
pub(super) fn pair_cores(config: &TournamentConfig) -> f64 {
    f64::from(
        config
            .cores_per_game()
            .max(config.requires.cores.unwrap_or(1)),
    )
}

/// The expected cost of one pair of `config`'s games, in core-seconds.
pub fn pair_core_seconds(config: &TournamentConfig) -> f64 {
    let cores = pair_cores(config);
    let limits = &config.limits;
    let clocked = (limits.tc.as_deref())
        .and_then(|tc| tc.parse::<TimeControl>().ok())
        .and_then(|tc| match tc {
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => {
                let periods = moves.map_or(1.0, |m| (MOVES_PER_SIDE / f64::from(m.max(1))).ceil());
                Some(base.as_secs_f64() * periods + increment.as_secs_f64() * MOVES_PER_SIDE)
            }
            TimeControl::Infinite => None,
        });
    let per_move = (limits.movetime.map(|ms| ms as f64 / 1000.0))
        .or(limits.nodes.map(|n| n as f64 / NODES_PER_SECOND))
        .unwrap_or(UNKNOWN_SECONDS_A_MOVE);
    let side = clocked.unwrap_or(per_move * MOVES_PER_SIDE);
    // Two games, each the two sides' time.
    cores * 2.0 * 2.0 * side.max(0.001)
}
