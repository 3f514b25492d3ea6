//! Where the coordinator reads the time: milliseconds since it started. The scheduler's
//! leases expire by it and running ratings are reused by it. Tests hold a [`ManualClock`]
//! and move it instead of sleeping.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A source of milliseconds that never go backwards.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the clock's start.
    fn now_ms(&self) -> u64;
}

/// Real time, from when it was made.
#[derive(Debug)]
pub struct SystemClock(Instant);

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock(Instant::now())
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        self.0.elapsed().as_millis() as u64
    }
}

/// Time that moves only when told to (tests).
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// Moves the clock forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
