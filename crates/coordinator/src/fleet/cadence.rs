//! How often workers call, set by the coordinator and growing with its fleet, and the
//! budgets of calls a second past which it answers RESOURCE_EXHAUSTED with a retry delay.
//!
//! A small fleet reports every fifth of a second and beats every few seconds; as the
//! fleet grows, both stretch so that the calls a second stay within what one coordinator
//! serves (fishtest and OpenBench workers report every 30 to 120 s). Heartbeats stay
//! within a third of a lease, so leases never expire between them.

/// Heartbeats a second the cadence aims at, over the whole fleet.
pub const HEARTBEATS_PER_SECOND: u64 = 2_000;
/// Reports a second the cadence aims at, over the whole fleet.
pub const REPORTS_PER_SECOND: u64 = 2_000;
/// The shortest time between a worker's reports.
pub const MIN_REPORT_MS: u64 = 200;
/// The longest time between a worker's reports.
pub const MAX_REPORT_MS: u64 = 120_000;

/// How often each worker calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cadence {
    /// Between heartbeats.
    pub heartbeat_ms: u64,
    /// Between reports (a worker with nothing left to play reports at once).
    pub report_ms: u64,
}

/// The cadence for a fleet of `workers`, from the coordinator's base heartbeat and its
/// lease duration.
pub fn cadence(workers: u64, base_heartbeat_ms: u64, lease_ms: u64) -> Cadence {
    let spread = |per_second: u64| workers.saturating_mul(1000) / per_second;
    let most_heartbeat = (lease_ms / 3).max(base_heartbeat_ms);
    Cadence {
        heartbeat_ms: spread(HEARTBEATS_PER_SECOND).clamp(base_heartbeat_ms, most_heartbeat),
        report_ms: spread(REPORTS_PER_SECOND).clamp(MIN_REPORT_MS, MAX_REPORT_MS),
    }
}

/// A budget of calls a second (a token bucket holding a second's worth): a call past it
/// is told how long to wait.
#[derive(Debug)]
pub struct Budget {
    per_second: u64,
    tokens: f64,
    at_ms: u64,
}

impl Budget {
    /// A full budget of `per_second` calls (0: unbounded).
    pub fn new(per_second: u64) -> Self {
        Budget {
            per_second,
            tokens: per_second as f64,
            at_ms: 0,
        }
    }

    /// Takes one call at `now_ms`, or says in how many milliseconds one is free.
    ///
    /// # Errors
    /// The budget is spent: the wait.
    pub fn take(&mut self, now_ms: u64) -> Result<(), u64> {
        if self.per_second == 0 {
            return Ok(());
        }
        let rate = self.per_second as f64 / 1000.0;
        let elapsed = now_ms.saturating_sub(self.at_ms) as f64;
        self.tokens = (self.tokens + elapsed * rate).min(self.per_second as f64);
        self.at_ms = self.at_ms.max(now_ms);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        Err((((1.0 - self.tokens) / rate).ceil() as u64).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cadence_stretches_with_the_fleet_within_its_bounds() {
        // A small fleet: the base heartbeat, reports five times a second.
        assert_eq!(
            cadence(10, 5_000, 30_000),
            Cadence {
                heartbeat_ms: 5_000,
                report_ms: 200
            }
        );
        // 50,000 workers: heartbeats at a third of a lease, reports every 25 s.
        assert_eq!(
            cadence(50_000, 5_000, 30_000),
            Cadence {
                heartbeat_ms: 10_000,
                report_ms: 25_000
            }
        );
        // Calls a second stay within the aims.
        let c = cadence(20_000, 500, 600_000);
        assert!(20_000 * 1000 / c.heartbeat_ms <= HEARTBEATS_PER_SECOND);
        assert!(20_000 * 1000 / c.report_ms <= REPORTS_PER_SECOND);
        assert_eq!(cadence(10_000_000, 5_000, 30_000).report_ms, MAX_REPORT_MS);
    }

    #[test]
    fn a_spent_budget_says_how_long_to_wait_and_refills_with_time() {
        let mut budget = Budget::new(10);
        for _ in 0..10 {
            assert!(budget.take(0).is_ok());
        }
        assert_eq!(budget.take(0), Err(100), "one call in 100 ms");
        assert!(budget.take(100).is_ok());
        assert!(budget.take(100).is_err());
        // It refills to a second's worth, no more.
        for _ in 0..10 {
            assert!(budget.take(60_000).is_ok());
        }
        assert!(budget.take(60_000).is_err());
        let mut unbounded = Budget::new(0);
        assert!((0..1000).all(|_| unbounded.take(0).is_ok()));
    }
}
