//! `tourney bench affinity`: how pinning changes the spread of nodes per second between
//! games played at once. Each game is a thread searching the built-in speed positions
//! for the time given; first unpinned, then each pinned to a unit of its own as
//! `tourney worker --affinity auto` pins them.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use tourney_worker::affinity::{self, Affinity, Pinned, Unit};

/// Nodes per second of `games` threads searching at once for `seconds`, each pinned to
/// `units[i]` when given.
fn speeds(games: usize, seconds: f64, units: Option<&[Unit]>) -> Vec<f64> {
    std::thread::scope(|scope| {
        let running: Vec<_> = (0..games)
            .map(|i| {
                let cpus = units
                    .map(|u| u[i % u.len()].cpus.clone())
                    .unwrap_or_default();
                scope.spawn(move || {
                    let _pinned = Pinned::new(&cpus);
                    let started = Instant::now();
                    let mut rates = Vec::new();
                    while started.elapsed().as_secs_f64() < seconds || rates.is_empty() {
                        rates.push(tourney_ai::speed::nodes_per_second());
                    }
                    rates.iter().sum::<f64>() / rates.len() as f64
                })
            })
            .collect();
        running
            .into_iter()
            .map(|r| r.join().unwrap_or(0.0))
            .collect()
    })
}

/// The mean, the coefficient of variation and the slowest over the fastest.
fn spread(speeds: &[f64]) -> (f64, f64, f64) {
    let n = speeds.len().max(1) as f64;
    let mean = speeds.iter().sum::<f64>() / n;
    let variance = speeds.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n;
    let (min, max) =
        (speeds.iter().copied()).fold((f64::MAX, 0f64), |(lo, hi), s| (lo.min(s), hi.max(s)));
    (mean, variance.sqrt() / mean.max(1e-9), min / max.max(1e-9))
}

/// Runs the benchmark: `games` at once (0: one a unit), `rounds` times each way.
pub(crate) fn affinity(games: usize, seconds: f64, rounds: usize) -> Result<()> {
    let allowed = affinity::allowed();
    let units = affinity::units(
        &Affinity::Auto,
        &allowed,
        Path::new("/sys/devices/system/cpu"),
    )
    .map_err(anyhow::Error::msg)?;
    let games = if games == 0 { units.len() } else { games };
    println!(
        "{games} games at once on {} CPUs ({} physical cores), {seconds} s each, {rounds} rounds",
        allowed.len(),
        units.len()
    );
    for (name, pinned) in [
        ("unpinned", None),
        ("pinned (auto)", Some(units.as_slice())),
    ] {
        let all: Vec<f64> = (0..rounds.max(1))
            .flat_map(|_| speeds(games, seconds, pinned))
            .collect();
        let (mean, cv, ratio) = spread(&all);
        println!(
            "{name:<14} mean {:>8.0} nodes/s  spread (stdev/mean) {:>5.2} %  slowest/fastest {ratio:.3}",
            mean,
            100.0 * cv
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_spread_of_equal_speeds_is_nil_and_of_unequal_ones_is_not() {
        assert_eq!(super::spread(&[5.0, 5.0, 5.0]), (5.0, 0.0, 1.0));
        let (mean, cv, ratio) = super::spread(&[1.0, 3.0]);
        assert_eq!((mean, ratio), (2.0, 1.0 / 3.0));
        assert!((cv - 0.5).abs() < 1e-12);
    }
}
