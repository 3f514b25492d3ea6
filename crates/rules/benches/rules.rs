//! Criterion benchmarks of the rules core: perft (leaves/s) and random playouts (games/s).
//! `tourney bench rules` prints the headline figures; these back them with statistics.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tourney_rules::{Amazons, Loa, Position, perft, random_playout};

fn splitmix(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

fn perft_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    group.throughput(Throughput::Elements(55_963_132));
    group.bench_function("loa_start_depth5", |b| {
        b.iter(|| perft(black_box(&Loa::start()), 5))
    });
    group.throughput(Throughput::Elements(4_307_152));
    group.bench_function("amazons_start_depth2", |b| {
        b.iter(|| perft(black_box(&Amazons::start()), 2))
    });
    group.finish();
}

fn playout_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("random_playout");
    group.throughput(Throughput::Elements(1));
    let mut random = splitmix(1);
    group.bench_function("loa", |b| {
        b.iter(|| random_playout(Loa::start(), Default::default(), &mut random).ply())
    });
    group.bench_function("amazons", |b| {
        b.iter(|| random_playout(Amazons::start(), Default::default(), &mut random).ply())
    });
    group.finish();
}

fn movegen_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("movegen");
    let loa = Loa::start();
    let amazons = Amazons::start();
    group.bench_function("loa_count_start", |b| {
        b.iter(|| black_box(&loa).count_moves())
    });
    group.bench_function("loa_list_start", |b| {
        b.iter(|| black_box(&loa).legal_moves().len())
    });
    group.bench_function("amazons_count_start", |b| {
        b.iter(|| black_box(&amazons).count_moves())
    });
    group.bench_function("amazons_random_move_start", |b| {
        b.iter(|| black_box(&amazons).random_move(black_box(0x1234_5678_9abc_def0)))
    });
    group.finish();
}

criterion_group!(benches, perft_benches, playout_benches, movegen_benches);
criterion_main!(benches);
