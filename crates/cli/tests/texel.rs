//! `tourney tune texel` as docs/tuning.md gives it: the documented command tunes, and a fit
//! that keeps its start weights says so and writes no SPRT of a player against itself.

use std::path::Path;
use std::process::{Command, Output};

use tourney_ai::Heuristics;
use tourney_dataset::{MoverResult, Record};
use tourney_rules::{Loa, Position};

/// LOA's default weights, as `--player ab` starts from them.
fn defaults() -> Vec<f64> {
    let spec: tourney_ai::PlayerSpec = "ab".parse().unwrap();
    let weights = spec.weights::<Loa>().unwrap();
    weights.into_iter().map(f64::from).collect()
}

/// SplitMix64: a deterministic stream.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A data file of `games` random LOA games, as a self-play run of a player tuned for play
/// makes them: every position from the 4th ply has a result drawn from the logistic of
/// the evaluation with the player's own weights `start` (the results are what it already
/// fits), and the engine's score by the weights `scores` (what its searches saw).
fn write_data(path: &Path, games: u64, start: &[f64], scores: &[f64]) {
    let mut out = Vec::new();
    tourney_dataset::write_header(&mut out).unwrap();
    let mut state = 11;
    let mut features = vec![0.0; Loa::WEIGHTS.len()];
    let eval = |w: &[f64], f: &[f64]| -> f64 { f.iter().zip(w).map(|(f, w)| f * w).sum() };
    for game in 0..games {
        let mut position = Loa::start();
        for ply in 0..40 {
            let Some(mv) = position.random_move(next(&mut state)) else {
                break;
            };
            position.play_unchecked(mv);
            if ply < 4 || position.is_game_over() {
                continue;
            }
            position.features(&mut features);
            let draw = (next(&mut state) >> 11) as f64 / (1u64 << 53) as f64;
            let p = 1.0 / (1.0 + 10f64.powf(-0.5 * eval(start, &features) / 400.0));
            let result = if draw < p {
                MoverResult::Win
            } else {
                MoverResult::Loss
            };
            let score = eval(scores, &features).clamp(-2000.0, 2000.0) as i16;
            out.extend(Record::of(&position, result, score, ply, game).encode());
        }
    }
    std::fs::write(path, out).unwrap();
}

fn texel(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(["tune", "texel"])
        .arg(data)
        .args(["--player", "ab", "--threads", "2"])
        .args(args)
        .output()
        .unwrap()
}

/// The weights of a spec written over `ab`, in `Loa::WEIGHTS` order.
fn weights_of(spec: &str) -> Vec<f64> {
    let spec: tourney_ai::PlayerSpec = spec.parse().unwrap();
    let weights = spec.weights::<Loa>().unwrap();
    weights.into_iter().map(f64::from).collect()
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).skip(1).map(|(x, y)| (x - y).abs()).sum()
}

#[test]
fn the_documented_command_tunes_and_a_fit_that_kept_its_start_writes_no_sprt() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("positions.bin");
    // The engine's scores come from weights some way off the defaults.
    let start = defaults();
    let mut truth = start.clone();
    for (i, w) in truth.iter_mut().enumerate().skip(1) {
        *w += if i % 2 == 0 { 12.0 } else { -8.0 };
    }
    write_data(&data, 1500, &start, &truth);

    // docs/tuning.md: `tourney tune texel DATA --player ab --verify verify.toml`.
    let verify = dir.path().join("verify.toml");
    let out = texel(&data, &["--verify", verify.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}{err}");
    assert!(
        !text.contains("kept     the weights after iteration 0 "),
        "nothing tuned:\n{text}"
    );
    let sprt = std::fs::read_to_string(&verify).unwrap();
    let sprt = tourney_model::tournament::TournamentConfig::parse(&sprt, "verify.toml").unwrap();
    let [tuned, untuned] = [0, 1].map(|i| sprt.engines[i].player.clone().unwrap());
    assert_ne!(tuned, untuned, "an SPRT of a player against itself");
    let tuned = weights_of(&tuned);
    assert_eq!(weights_of(&untuned), start);
    // Toward the scores' weights (a results-only fit, `--lambda 0`, stays by the start:
    // the results are what the start weights predict best).
    assert!(
        distance(&tuned, &truth) < 0.75 * distance(&start, &truth),
        "tuned {tuned:?}, start {start:?}, the scores' weights {truth:?}\n{text}"
    );

    // A fit that ends where it started (no pass at all here) says so and writes no SPRT.
    let same = dir.path().join("same.toml");
    let out = texel(
        &data,
        &["--iterations", "0", "--verify", same.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("the start weights"), "{err}");
    assert!(err.contains("no verification SPRT"), "{err}");
    assert!(!same.exists(), "an SPRT of a player against itself written");
}
