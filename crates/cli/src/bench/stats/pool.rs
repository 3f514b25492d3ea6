//! `tourney bench pool`: a rating pool simulated against a round robin and a chain of SPRTs.
//! 32 versions with known ratings (small steps of +2 to +12 Elo and four jumps of 40 to 80,
//! two of them down) play game pairs, colours swapped, from BayesElo's model (27 % draws
//! between equals), chosen by the pool's rule, by a round robin, or by SPRTs of each
//! version against the one before (then more pairs along that chain), each until every
//! member's 95 % interval relative to the first is under ±15 Elo: the games each needed and
//! how well it rated. Then the time a fit and a choice take at 50 members and 100,000 games.

use std::time::Instant;

use anyhow::Result;
use tourney_stats::Sprt;
use tourney_stats::pool::PoolSettings;
use tourney_stats::pool::simulate::{
    Design, Outcome, Run, Strategy, World, design_games, versions,
};

use crate::bench::BenchArgs;

/// Members of the simulated pool.
const MEMBERS: usize = 32;
/// The target: every interval under ±this, Elo.
const TARGET: f64 = 15.0;
/// Games at most in one run.
const CAP: u64 = 20_000_000;

/// The rows: a name, the strategy, and whether the pool's rule aims at the widest interval
/// alone (no extra weight for the newest and top-rated members).
const STRATEGIES: [(&str, Strategy, bool); 4] = [
    ("pool", Strategy::Pool, false),
    ("pool, widest", Strategy::Pool, true),
    ("round robin", Strategy::RoundRobin, false),
    ("SPRT chain", Strategy::SprtChain, false),
];

pub(crate) fn pool(args: &BenchArgs) -> Result<()> {
    let run = Run {
        settings: PoolSettings::default(),
        target: TARGET,
        cap: CAP,
        sprt: Sprt::preset("stc")?,
    };
    let runs = args.runs.max(1);
    println!(
        "{MEMBERS} versions with known ratings to every 95 % interval under ±{TARGET} Elo \
         (relative to the first), {runs} run(s) from seed {}; SPRTs nElo [0, 2], \
         alpha = beta = 0.05; at most {CAP} games",
        args.seed
    );
    // outcomes[strategy][run], the runs of each strategy on threads of their own.
    let outcomes: Vec<Vec<Outcome>> = std::thread::scope(|s| {
        let jobs: Vec<_> = (STRATEGIES.iter())
            .map(|&(_, strategy, widest)| {
                let mut run = run.clone();
                if widest {
                    run.settings.emphasis = 0.0;
                }
                s.spawn(move || {
                    (0..runs)
                        .map(|r| {
                            let seed = args.seed.wrapping_add(r);
                            let truth = versions(MEMBERS, seed);
                            run.play(strategy, &mut World::new(truth, seed ^ 0x5eed))
                        })
                        .collect()
                })
            })
            .collect();
        (jobs.into_iter())
            .map(|j| j.join().expect("simulation thread"))
            .collect()
    });
    println!(
        "{:<13} {:>10} {:>11} {:>9} {:>11} {:>10} {:>10} {:>10}",
        "strategy",
        "games",
        "of SPRTs",
        "worst ±",
        "mean |err|",
        "max |err|",
        "discordant",
        "misranked"
    );
    let mean = |o: &[Outcome], f: &dyn Fn(&Outcome) -> f64| -> f64 {
        o.iter().map(f).sum::<f64>() / o.len() as f64
    };
    for ((name, ..), o) in STRATEGIES.iter().zip(&outcomes) {
        let capped = if o.iter().any(|x| x.capped) {
            " (capped)"
        } else {
            ""
        };
        println!(
            "{name:<13} {:>10.0} {:>11.0} {:>9.1} {:>11.1} {:>10.1} {:>10.1} {:>10.1}{capped}",
            mean(o, &|x| x.games as f64),
            mean(o, &|x| x.sprt_games as f64),
            mean(o, &|x| x.worst),
            mean(o, &|x| x.mean_error),
            mean(o, &|x| x.max_error),
            mean(o, &|x| x.discordant as f64),
            mean(o, &|x| x.misplaced as f64),
        );
    }
    let games = |k: usize| mean(&outcomes[k], &|x| x.games as f64);
    println!(
        "pool / round robin: {:.3} (widest: {:.3}); pool / SPRT chain: {:.3} (widest: {:.3}); \
         the issue's target: at most 0.5 each",
        games(0) / games(2),
        games(1) / games(2),
        games(0) / games(3),
        games(1) / games(3),
    );
    println!(
        "means over the runs; errors in Elo relative to the first version; discordant: pairs \
         of versions rated in the wrong order; misranked: versions not at their true rank; \
         pool, widest: the rule without extra weight for the newest and top-rated members"
    );
    // The rule told the truth (no noise), aiming at the widest interval alone, and the bound
    // its design gives on any choice of pairs.
    let sharp = PoolSettings {
        power: 64.0,
        emphasis: 0.0,
        ..PoolSettings::default()
    };
    let designs: Vec<Design> = (0..runs)
        .map(|r| {
            design_games(
                &versions(MEMBERS, args.seed.wrapping_add(r)),
                &sharp,
                TARGET,
            )
        })
        .collect();
    let design = designs.iter().map(|d| d.games as f64).sum::<f64>() / runs as f64;
    let bound = designs.iter().map(|d| d.bound as f64).sum::<f64>() / runs as f64;
    println!(
        "told the true ratings (no noise), pairing by information needs {design:.0} games; no \
         choice of pairs can need fewer than {bound:.0} ({:.3} of the round robin's games)",
        bound / games(2)
    );
    speed();
    Ok(())
}

/// Times a fit (from nothing and from the last fit) and a choice of pairs at 50 members and
/// 100,000 games.
fn speed() {
    let n = 50;
    let mut table = tourney_stats::GameTable::new();
    for k in 0..n {
        table.player(&format!("v{k}"));
    }
    let mut world = World::new(versions(n, 99), 99);
    let schedule = tourney_stats::pool::simulate::round_robin(n);
    let pairs: Vec<(usize, usize)> = (0..50_000).map(|p| schedule[p % schedule.len()]).collect();
    for &(i, j) in &pairs {
        world.pair(&mut table, i, j);
    }
    let settings = PoolSettings::default();
    let timed = |f: &mut dyn FnMut()| {
        let start = Instant::now();
        let times = 10;
        for _ in 0..times {
            f();
        }
        start.elapsed().as_secs_f64() * 1000.0 / f64::from(times)
    };
    let mut ratings = settings.rate(&table, None);
    let cold = timed(&mut || ratings = settings.rate(&table, None));
    let warm = timed(&mut || ratings = settings.rate(&table, Some(&ratings)));
    let one = timed(&mut || drop(ratings.plan(&settings, &pairs, &[], 1)));
    let lease = timed(&mut || drop(ratings.plan(&settings, &pairs, &[], 16)));
    println!(
        "{n} members, {} games: a fit {cold:.1} ms ({warm:.1} ms from the last fit), the next \
         pair {one:.2} ms, 16 pairs {lease:.2} ms",
        2 * pairs.len()
    );
}
