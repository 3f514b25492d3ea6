//! `tourney bench share`: the fleet shared by core-time, simulated on the real scheduler.
//! 500 workers of 8 cores each take pairs as their cores free up, for four hours of
//! simulated time; tests at weight 1: 10+0.1 with one thread, 60+0.6 with one thread,
//! 10+0.1 with eight, one author's five 10+0.1 tests, and a 10+0.1 test submitted an hour
//! in. Each pair runs its expected length, give or take a fifth. For every 10-minute
//! window: each test's share of the core-seconds played against its target, and the
//! largest relative error.

use std::collections::BTreeMap;

use anyhow::Result;
use tourney_coordinator::scheduler::Scheduler;
use tourney_coordinator::scheduler::simulate::{Played, SimulatedFleet};
use tourney_model::tournament::{State, TournamentConfig};

const WORKERS: usize = 500;
const CORES: u32 = 8;
const WINDOW_MS: u64 = 10 * 60_000;
const HOURS: u64 = 4;
const LATE_MS: u64 = 3_600_000;

/// The tests: name, time control, threads, author, when submitted.
const TESTS: [(&str, &str, u32, &str, u64); 9] = [
    ("stc", "10+0.1", 1, "ann", 0),
    ("ltc", "60+0.6", 1, "bob", 0),
    ("smp", "10+0.1", 8, "cyd", 0),
    ("x1", "10+0.1", 1, "xu", 0),
    ("x2", "10+0.1", 1, "xu", 0),
    ("x3", "10+0.1", 1, "xu", 0),
    ("x4", "10+0.1", 1, "xu", 0),
    ("x5", "10+0.1", 1, "xu", 0),
    ("late", "10+0.1", 1, "dee", LATE_MS),
];

fn config(tc: &str, threads: u32) -> Result<TournamentConfig> {
    let text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 100000000\n\
         limits = {{ tc = \"{tc}\" }}\nrequires = {{ cores = {threads} }}\n\
         [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n"
    );
    Ok(TournamentConfig::parse(&text, "share.toml")?)
}

pub(crate) fn share() -> Result<()> {
    let mut s = Scheduler::new(u64::MAX / 4);
    let mut fleet = SimulatedFleet::new(WORKERS, CORES).with_jitter(0x2545_f491_4f6c_dd1d);
    // Core-seconds played by test in each window, and the targets seen there.
    let mut played: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    let mut targets: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    let end = HOURS * 3_600_000;
    // Half a window at a time: the tests due are submitted, and the targets read in the
    // middle of each window.
    while fleet.now() < end {
        let now = fleet.now();
        for (i, (_, tc, threads, author, at)) in TESTS.iter().enumerate() {
            let id = i as u64 + 1;
            if *at <= now && s.tournament(id).is_none() {
                s.add(id, config(tc, *threads)?, State::Queued, Vec::new());
                s.set_author(id, author);
            }
        }
        if now % WINDOW_MS >= WINDOW_MS / 2 && !targets.contains_key(&(now / WINDOW_MS)) {
            let shares = s.shares(now);
            targets.insert(
                now / WINDOW_MS,
                shares.iter().map(|(&id, x)| (id, x.target)).collect(),
            );
        }
        let to = (now / (WINDOW_MS / 2) + 1) * (WINDOW_MS / 2);
        fleet.play(&mut s, to, &mut |p: Played| {
            // Its core-seconds, spread over the windows it plays in.
            for window in p.start_ms / WINDOW_MS..=p.end_ms / WINDOW_MS {
                let within = p.core_seconds_within(window * WINDOW_MS, (window + 1) * WINDOW_MS);
                *(played.entry(window).or_default())
                    .entry(p.tournament)
                    .or_default() += within;
            }
        });
    }
    report(&played, &targets, end)
}

fn report(
    played: &BTreeMap<u64, BTreeMap<u64, f64>>,
    targets: &BTreeMap<u64, BTreeMap<u64, f64>>,
    end: u64,
) -> Result<()> {
    println!(
        "{WORKERS} workers of {CORES} cores, {HOURS} h simulated; each test's share of the \
         core-seconds played in each 10-minute window, against its target"
    );
    print!("{:>7}", "window");
    for t in TESTS {
        print!(" {:>13}", t.0);
    }
    println!("  worst error");
    let mut worst_all: f64 = 0.0;
    for (&window, by_test) in played {
        // The last window is cut short by the simulation's end.
        if (window + 1) * WINDOW_MS > end {
            continue;
        }
        let Some(target) = targets.get(&window) else {
            continue;
        };
        let all: f64 = by_test.values().sum();
        print!("{:>5}m ", window * 10);
        let mut worst: f64 = 0.0;
        for (i, _) in TESTS.iter().enumerate() {
            let id = i as u64 + 1;
            let share = by_test.get(&id).copied().unwrap_or(0.0) / all.max(1e-9);
            match target.get(&id) {
                Some(&want) if want > 0.0 => {
                    worst = worst.max((share - want).abs() / want);
                    print!(" {:>5.1}% ({:>4.1}%)", 100.0 * share, 100.0 * want);
                }
                _ => print!(" {:>13}", "-"),
            }
        }
        println!("  {:>6.1}%", 100.0 * worst);
        worst_all = worst_all.max(worst);
    }
    println!(
        "worst relative error, every window (the first from an empty fleet included): {:.1}% \
         (the bound: 10%)",
        100.0 * worst_all
    );
    Ok(())
}
