//! `tourney bench takes`: grouped tests of several takes simulated against K separate
//! SPRTs in the same scenarios: the pairs each plays and how often each accepts.

use anyhow::Result;
use tourney_stats::takes::{Takes, simulate};
use tourney_stats::{EloModel, Sprt};

use crate::bench::BenchArgs;

/// The true normalized Elo of each take in the three scenarios: all at `elo0`; one at
/// `elo1`; two halfway between the bounds.
fn scenarios(k: usize, elo0: f64, elo1: f64) -> [(&'static str, Vec<f64>); 3] {
    let mut one = vec![elo0; k];
    one[0] = elo1;
    let mut two = vec![elo0; k];
    for e in two.iter_mut().take(2) {
        *e = (elo0 + elo1) / 2.0;
    }
    [
        ("all at elo0", vec![elo0; k]),
        ("one at elo1", one),
        ("two halfway", two),
    ]
}

/// Simulates `args.groups` groups of `args.takes` takes and as many sets of separate
/// SPRTs per scenario, in parallel, and prints both side by side.
pub(crate) fn takes(args: &BenchArgs) -> Result<()> {
    let sprt = Sprt {
        elo0: args.elo0,
        elo1: args.elo1,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Normalized,
    };
    let settings = Takes {
        sprt,
        count: args.takes,
    };
    settings.validate()?;
    let runs = args.groups;
    println!(
        "grouped tests of {} takes against {} separate SPRTs, nElo [{}, {}], alpha = beta = \
         0.05 (family-wise for the group), {runs} runs a scenario, pairs leased 8 at a time",
        args.takes, args.takes, args.elo0, args.elo1
    );
    let cases = scenarios(args.takes, args.elo0, args.elo1);
    let results: Vec<_> = std::thread::scope(|s| {
        let jobs: Vec<_> = (cases.iter().enumerate())
            .map(|(i, (_, truth))| {
                let seed = args.seed.wrapping_add(i as u64 * 2);
                s.spawn(move || {
                    let group = simulate::groups(settings, truth, runs, 8, seed);
                    let separate = simulate::separate(sprt, truth, runs, seed + 1);
                    (group, separate)
                })
            })
            .collect();
        jobs.into_iter()
            .map(|j| j.join().expect("simulation thread"))
            .collect()
    });
    println!(
        "{:<12} {:>12} {:>12} {:>7} {:>14} {:>14} {:>14}",
        "scenario",
        "group pairs",
        "K SPRTs",
        "ratio",
        "group accepts",
        "SPRTs accept",
        "best accepted"
    );
    for ((name, truth), (group, separate)) in cases.iter().zip(results) {
        let (group, separate) = (group?, separate?);
        let rate = |o: &simulate::Outcomes| o.any_accepted as f64 / o.runs.max(1) as f64;
        // The best take (the first at the highest Elo) accepted, where it is better.
        let best = if truth[0] > args.elo0 {
            format!("{:.3}", group.rate(0))
        } else {
            "-".into()
        };
        println!(
            "{name:<12} {:>12.0} {:>12.0} {:>7.2} {:>14.3} {:>14.3} {best:>14}",
            group.mean_pairs(),
            separate.mean_pairs(),
            group.mean_pairs() / separate.mean_pairs(),
            rate(&group),
            rate(&separate),
        );
    }
    println!(
        "group accepts: runs in which a take was accepted (at most one; the family-wise \
         false-positive rate when all are at elo0); SPRTs accept: runs in which any of the \
         separate SPRTs accepted"
    );
    Ok(())
}
