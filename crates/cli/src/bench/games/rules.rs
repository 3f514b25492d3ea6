//! `tourney bench rules`: single-threaded perft and random-playout rates of both games.

use std::time::{Duration, Instant};

use rand_xoshiro::Xoshiro256PlusPlus;
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use tourney_rules::{Amazons, Loa, Position, perft, random_playout};

use crate::bench::BenchArgs;

pub(crate) fn rules(args: &BenchArgs) {
    println!("rules core, one thread");
    bench_perft(&Loa::start(), 5, "LOA perft(5) from the start");
    bench_perft(&Amazons::start(), 3, "Amazons perft(3) from the start");
    let budget = Duration::from_secs_f64(args.seconds);
    bench_playouts::<Loa>("LOA random playouts", budget, args.seed);
    bench_playouts::<Amazons>("Amazons random playouts", budget, args.seed);
}

fn bench_perft<P: Position>(position: &P, depth: u32, label: &str) {
    let started = Instant::now();
    let leaves = perft(position, depth);
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{label}: {leaves} leaves in {seconds:.3} s = {:.1} M leaves/s",
        leaves as f64 / seconds / 1e6
    );
}

fn bench_playouts<P: Position>(label: &str, budget: Duration, seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let started = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while started.elapsed() < budget {
        for _ in 0..64 {
            let game = random_playout(P::start(), P::Rules::default(), || rng.next_u64());
            games += 1;
            plies += game.ply() as u64;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{label}: {games} games in {seconds:.2} s = {:.0} games/s ({:.1} plies/game)",
        games as f64 / seconds,
        plies as f64 / games as f64
    );
}
