//! A machine's speed, measured the same way everywhere: the built-in alpha-beta searching
//! fixed LOA positions to a fixed depth. Clocks scaled by speed (`scale = "nps"`) give a
//! slower worker proportionally more time, so that a game means the same search effort on
//! every worker of a fleet.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use tourney_rules::{Game, Loa};

use crate::{Limits, PlayerSpec};

/// Nodes per second of the speed benchmark on the reference machine (one core of the
/// 2-core VM tourney is developed on): a worker that measures this gets clocks as written.
pub const REFERENCE_NODES_PER_SECOND: f64 = 3_000_000.0;

/// The most a clock is scaled either way: a worker measured more than this much slower or
/// faster than the reference plays as if it were this much.
pub const MOST_SCALE: f64 = 4.0;

/// Positions the benchmark searches (the start, and two after 12 random plies).
const POSITIONS: [&str; 3] = [
    "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
    "1bwbbb2/w6w/4b1b1/w6w/3w1w1w/w6b/w6w/1bbb2b1 b",
    "1wb1bbbb/6w1/w2b4/w7/w2wb2w/w1b2wb1/w5ww/1b1bb3 b",
];

/// Search depth of the benchmark: about a fifth of a second on the reference machine.
const DEPTH: u32 = 6;

/// This machine's nodes per second on the speed benchmark (one thread).
pub fn nodes_per_second() -> f64 {
    let (mut nodes, mut seconds) = (0u64, 0f64);
    let limits = Limits {
        depth: Some(DEPTH),
        ..Limits::default()
    };
    for text in POSITIONS {
        let (Ok(position), Ok(spec)) = (text.parse::<Loa>(), "ab".parse::<PlayerSpec>()) else {
            continue;
        };
        let Ok(mut player) = spec.build::<Loa>() else {
            continue;
        };
        let game = Game::new(position, Default::default());
        let started = Instant::now();
        let result = player.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        seconds += started.elapsed().as_secs_f64();
        nodes += result.info.nodes;
    }
    nodes as f64 / seconds.max(1e-9)
}

/// The factor a clock is multiplied by on a machine of `nodes_per_second`: the reference
/// speed over it, within [1/[`MOST_SCALE`], [`MOST_SCALE`]].
pub fn clock_scale(nodes_per_second: f64) -> f64 {
    (REFERENCE_NODES_PER_SECOND / nodes_per_second.max(1.0)).clamp(1.0 / MOST_SCALE, MOST_SCALE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::Position;

    #[test]
    fn a_slower_machine_gets_more_time_within_bounds() {
        assert_eq!(clock_scale(REFERENCE_NODES_PER_SECOND), 1.0);
        assert_eq!(clock_scale(REFERENCE_NODES_PER_SECOND / 2.0), 2.0);
        assert_eq!(clock_scale(REFERENCE_NODES_PER_SECOND * 2.0), 0.5);
        assert_eq!(clock_scale(1.0), MOST_SCALE);
        assert_eq!(clock_scale(0.0), MOST_SCALE);
        assert_eq!(clock_scale(1e12), 1.0 / MOST_SCALE);
    }

    #[test]
    fn the_benchmark_searches_every_position() {
        for text in POSITIONS {
            let position: Loa = text.parse().unwrap();
            assert!(position.outcome(Default::default()).is_none(), "{text}");
        }
    }

    #[test]
    fn the_benchmark_measures_a_speed() {
        let nps = nodes_per_second();
        assert!(nps > 1000.0, "{nps}");
        eprintln!("speed benchmark: {nps:.0} nodes/s");
    }
}
