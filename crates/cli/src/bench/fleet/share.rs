//! `tourney bench share`: the fleet shared by core-time, simulated on the real scheduler.
//! 500 workers of 8 cores each take pairs as their cores free up, for four hours of
//! simulated time; tests at weight 1: 10+0.1 with one thread, 60+0.6 with one thread,
//! 10+0.1 with eight, one author's five 10+0.1 tests, and a 10+0.1 test submitted an hour
//! in. Each pair runs its expected length, give or take a fifth. For every 10-minute
//! window: each test's share of the core-seconds played against its target, and the
//! largest relative error.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use anyhow::Result;
use tourney_coordinator::scheduler::{Scheduler, pair_core_seconds};
use tourney_model::tournament::{PairOutcome, State, TournamentConfig};

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

/// A pair under way: when it ends, on which worker, its test, pair and cores.
type Running = Reverse<(u64, usize, u64, u64, u32, u64)>;

pub(crate) fn share() -> Result<()> {
    let mut s = Scheduler::new(u64::MAX / 4);
    let configs: Vec<TournamentConfig> = (TESTS.iter())
        .map(|(_, tc, threads, ..)| config(tc, *threads))
        .collect::<Result<_>>()?;
    let cores: Vec<u32> = TESTS.iter().map(|t| t.2).collect();
    let mut free = vec![CORES; WORKERS];
    let mut running: BinaryHeap<Running> = BinaryHeap::new();
    // Core-seconds played by test in each window, and the targets seen there.
    let mut played: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    let mut targets: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
    let mut submitted = vec![false; TESTS.len()];
    let mut random = 0x2545_f491_4f6c_dd1du64;
    let end = HOURS * 3_600_000;
    let mut now = 0;
    while now < end {
        for (i, test) in TESTS.iter().enumerate() {
            if !submitted[i] && test.4 <= now {
                let id = i as u64 + 1;
                s.add(id, configs[i].clone(), State::Queued, Vec::new());
                s.set_author(id, test.3);
                submitted[i] = true;
            }
        }
        // Every worker with free cores takes pairs that fit them.
        for (w, left) in free.iter_mut().enumerate() {
            while *left > 0 {
                let room = *left;
                let fits = |c: &TournamentConfig| c.requires.cores.unwrap_or(1) <= room;
                let Some((lease, jobs)) = s.lease(&format!("w{w}#1"), 1, now, &fits) else {
                    break;
                };
                let job = &jobs[0];
                let i = (job.tournament - 1) as usize;
                random ^= random << 13;
                random ^= random >> 7;
                random ^= random << 17;
                let jitter = 0.8 + 0.4 * (random % 1000) as f64 / 1000.0;
                let seconds = pair_core_seconds(&configs[i]) / f64::from(cores[i]) * jitter;
                let done = now + (seconds * 1000.0) as u64;
                *left -= cores[i];
                running.push(Reverse((
                    done,
                    w,
                    job.tournament,
                    job.pair,
                    cores[i],
                    lease.id,
                )));
                let _ = (job.first, job.second);
                played.entry(now / WINDOW_MS).or_default();
                let mut spread = now;
                while spread < done {
                    let window = spread / WINDOW_MS;
                    let until = ((window + 1) * WINDOW_MS).min(done);
                    *played
                        .entry(window)
                        .or_default()
                        .entry(job.tournament)
                        .or_default() += f64::from(cores[i]) * (until - spread) as f64 / 1000.0;
                    spread = until;
                }
            }
        }
        let window = now / WINDOW_MS;
        if !targets.contains_key(&window) && now % WINDOW_MS >= WINDOW_MS / 2 {
            let shares = s.shares(now);
            targets.insert(
                window,
                shares.iter().map(|(&id, x)| (id, x.target)).collect(),
            );
        }
        // The next pair to end frees its cores.
        let Some(Reverse((done, w, tournament, pair, used, _))) = running.pop() else {
            break;
        };
        now = done;
        free[w] += used;
        let outcome = PairOutcome {
            pair,
            first: 0,
            second: 1,
            half_points: [1, 1],
            white: [1, 0],
        };
        s.report(&format!("w{w}#1"), &[(tournament, outcome)]);
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
