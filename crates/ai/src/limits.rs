//! Search limits and time budgeting, as pure functions (tested without a clock).

use std::time::Duration;

/// A side's clock: time left, increment per move, and moves until the next time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the clock.
    pub time: Duration,
    /// Added after each move.
    pub increment: Duration,
    /// Moves until the clock is topped up (`None`: the rest of the game).
    pub moves_to_go: Option<u32>,
}

/// What bounds one search. Several limits may be set; the first reached stops the search.
/// Under `nodes` or `depth` alone a search is deterministic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Stop after this many nodes.
    pub nodes: Option<u64>,
    /// Stop after completing this depth (plies for alpha-beta).
    pub depth: Option<u32>,
    /// Think this long.
    pub movetime: Option<Duration>,
    /// The mover's clock.
    pub clock: Option<Clock>,
}

impl Limits {
    /// Whether only `nodes`/`depth` bound the search, so that it is reproducible.
    pub fn is_deterministic(&self) -> bool {
        self.movetime.is_none() && self.clock.is_none()
    }

    /// Whether nothing bounds the search.
    pub fn is_infinite(&self) -> bool {
        self.nodes.is_none()
            && self.depth.is_none()
            && self.movetime.is_none()
            && self.clock.is_none()
    }
}

/// How long to think: a soft target (do not start a new iteration past it) and a hard
/// limit (abort the search).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Stop iterating after this much time.
    pub soft: Duration,
    /// Abort after this much time.
    pub hard: Duration,
}

/// Time kept in reserve for communication and process overhead.
const OVERHEAD: Duration = Duration::from_millis(10);

/// The time budget for a move under `limits`, or `None` without a time limit.
///
/// `movetime` is used as given (soft = hard). With a clock: the time is spread over the
/// moves to go (or 30 more moves), plus most of the increment; the hard limit allows up to
/// three times that, but never more than a third of what is left after the overhead (all
/// of it on the last move before the time control).
pub fn budget(limits: &Limits) -> Option<Budget> {
    let from_clock = limits.clock.map(|c| {
        let left = c.time.saturating_sub(OVERHEAD);
        let moves = c.moves_to_go.unwrap_or(30).clamp(1, 30);
        let share = left / moves + c.increment * 3 / 4;
        let cap = if moves == 1 { left } else { left / 3 };
        let soft = share.min(cap);
        Budget {
            soft,
            hard: (soft * 3).min(cap.max(soft)),
        }
    });
    let from_movetime = limits.movetime.map(|t| {
        let t = t.saturating_sub(OVERHEAD / 2).max(Duration::from_millis(1));
        Budget { soft: t, hard: t }
    });
    match (from_clock, from_movetime) {
        (Some(a), Some(b)) => Some(Budget {
            soft: a.soft.min(b.soft),
            hard: a.hard.min(b.hard),
        }),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(ms: u64, inc: u64, mtg: Option<u32>) -> Limits {
        Limits {
            clock: Some(Clock {
                time: Duration::from_millis(ms),
                increment: Duration::from_millis(inc),
                moves_to_go: mtg,
            }),
            ..Limits::default()
        }
    }

    #[test]
    fn movetime_is_used_as_given_less_a_little_overhead() {
        let b = budget(&Limits {
            movetime: Some(Duration::from_millis(200)),
            ..Limits::default()
        })
        .unwrap();
        assert_eq!(b.soft, b.hard);
        assert!(b.soft <= Duration::from_millis(200) && b.soft >= Duration::from_millis(190));
    }

    #[test]
    fn clock_time_is_spread_over_the_moves_to_go() {
        let b = budget(&clock(60_000, 0, Some(40))).unwrap();
        assert!(
            b.soft >= Duration::from_millis(1900) && b.soft <= Duration::from_millis(2000),
            "{b:?}"
        );
        assert!(b.hard > b.soft && b.hard <= Duration::from_millis(20_000));
        // Without moves to go: about a thirtieth, plus most of the increment.
        let b = budget(&clock(30_000, 1000, None)).unwrap();
        assert!(
            b.soft >= Duration::from_millis(1700) && b.soft <= Duration::from_millis(1760),
            "{b:?}"
        );
    }

    #[test]
    fn a_nearly_empty_clock_never_overspends() {
        for ms in [5, 50, 200, 1000] {
            let b = budget(&clock(ms, 0, None)).unwrap();
            assert!(b.hard < Duration::from_millis(ms.max(11)), "{ms} ms: {b:?}");
        }
        // The last move before the time control may use what is left.
        let b = budget(&clock(1000, 0, Some(1))).unwrap();
        assert!(b.hard <= Duration::from_millis(990));
    }

    #[test]
    fn no_time_limit_no_budget() {
        assert_eq!(
            budget(&Limits {
                depth: Some(5),
                ..Limits::default()
            }),
            None
        );
        assert!(
            Limits {
                nodes: Some(10),
                ..Limits::default()
            }
            .is_deterministic()
        );
    }
}
