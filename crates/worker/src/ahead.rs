//! How far ahead a worker leases: enough queued pairs per game slot to cover the time a
//! lease takes to arrive, judged from how long pairs take. Fast pairs (a few milliseconds)
//! need a deeper queue, or game threads wait for the coordinator; slow pairs need only one
//! waiting, so a tournament's tail is not stuck on one worker's queue.

use std::time::Duration;

/// Queued work per slot to aim for: well above a lease's round trip under load.
const BUFFER: Duration = Duration::from_millis(100);
/// The most pairs queued per slot, however fast they are.
const MOST_PER_SLOT: usize = 32;

/// The lease-ahead depth, from a moving average of pair durations.
#[derive(Debug, Clone, Default)]
pub(crate) struct LeaseAhead {
    /// Exponential moving average of a pair's duration, in seconds (`None`: none seen).
    average: Option<f64>,
}

impl LeaseAhead {
    /// Notes how long a pair took to play.
    pub(crate) fn observe(&mut self, pair: Duration) {
        let seconds = pair.as_secs_f64();
        self.average = Some(match self.average {
            Some(average) => average + 0.1 * (seconds - average),
            None => seconds,
        });
    }

    /// Pairs to lease now, holding `held` (in play and queued) for `slots` game slots: none
    /// until the queue is down to half its depth, then enough to fill it, so leases come
    /// in batches rather than one call per finished pair.
    pub(crate) fn wanted(&self, held: usize, slots: usize) -> usize {
        let hold = slots * (1 + self.queued_per_slot());
        if held <= self.low_water(slots) {
            hold - held
        } else {
            0
        }
    }

    /// Pairs held (in play and queued) at or below which more are leased.
    pub(crate) fn low_water(&self, slots: usize) -> usize {
        slots * (1 + self.queued_per_slot() / 2)
    }

    /// Pairs to keep queued per slot: enough to cover [`BUFFER`], at least one.
    fn queued_per_slot(&self) -> usize {
        match self.average {
            Some(average) if average > 0.0 => {
                ((BUFFER.as_secs_f64() / average).ceil() as usize).clamp(1, MOST_PER_SLOT)
            }
            Some(_) => MOST_PER_SLOT,
            None => 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_pairs_keep_one_queued_and_fast_pairs_a_deeper_queue() {
        let mut ahead = LeaseAhead::default();
        assert_eq!(
            ahead.queued_per_slot(),
            1,
            "one queued per slot before any pair"
        );
        ahead.observe(Duration::from_secs(30));
        assert_eq!(ahead.queued_per_slot(), 1);
        let mut fast = LeaseAhead::default();
        fast.observe(Duration::from_millis(10));
        assert_eq!(fast.queued_per_slot(), 10);
        let mut instant = LeaseAhead::default();
        instant.observe(Duration::ZERO);
        assert_eq!(instant.queued_per_slot(), MOST_PER_SLOT);
    }

    #[test]
    fn leases_come_in_batches_when_the_queue_is_half_empty() {
        let mut fast = LeaseAhead::default();
        fast.observe(Duration::from_millis(10));
        // Two slots: hold 22 pairs, lease again at 12 or fewer.
        assert_eq!(fast.wanted(0, 2), 22);
        assert_eq!(fast.wanted(13, 2), 0);
        assert_eq!(fast.wanted(12, 2), 10);
        // Slow pairs: one queued per slot, leased when the slots have none queued.
        let slow = LeaseAhead::default();
        assert_eq!(slow.wanted(0, 4), 8);
        assert_eq!(slow.wanted(4, 4), 4);
        assert_eq!(slow.wanted(5, 4), 0);
    }

    #[test]
    fn the_average_follows_a_change_of_pace() {
        let mut ahead = LeaseAhead::default();
        ahead.observe(Duration::from_secs(10));
        for _ in 0..200 {
            ahead.observe(Duration::from_millis(5));
        }
        assert_eq!(ahead.queued_per_slot(), 20);
    }
}
