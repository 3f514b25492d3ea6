use super::*;
use tourney_rules::{Amazons, Loa};

/// A deterministic stream of 64-bit numbers.
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `games` random games of `P`; from each position after the 4th ply, a result drawn
/// from the logistic of the evaluation with `weights` at scale `k`: the data a player of
/// exactly those weights would make.
fn synthetic<P: Heuristics>(games: u64, weights: &[f64], k: f64, holdout: f64) -> Split {
    let mut split = Split::new(holdout);
    let mut random = Stream(7);
    let mut features = vec![0.0; P::WEIGHTS.len()];
    for game in 0..games {
        let mut position = P::start();
        for ply in 0..40 {
            let Some(mv) = position.random_move(random.next()) else {
                break;
            };
            position.play_unchecked(mv);
            if ply < 4 || position.is_game_over() {
                continue;
            }
            position.features(&mut features);
            let eval: f64 = features.iter().zip(weights).map(|(f, w)| f * w).sum();
            let result = f64::from(u8::from(random.unit() < sigmoid(k, eval)));
            split.push_features(game, &features, result);
        }
    }
    split
}

fn defaults<P: Heuristics>() -> Vec<f64> {
    let w = P::Weights::default();
    (P::WEIGHTS.iter())
        .map(|name| f64::from(P::weight(&w, name).unwrap()))
        .collect()
}

#[test]
fn a_fit_recovers_the_weights_that_made_the_data() {
    // The weights of a player: LOA's SPSA-tuned ones (fixed here, whatever the defaults).
    let truth = vec![24.0, 17.0, 13.0, 12.0, 65.0, 8.0, 17.0, 23.0];
    assert_eq!(truth.len(), Loa::WEIGHTS.len());
    let k = 0.5;
    let split = synthetic::<Loa>(4000, &truth, k, 0.2);
    assert!(split.train.len() > 80_000 && split.test.len() > 20_000);
    // Every weight but the scale-setting first starts far off.
    let mut start = truth.clone();
    for w in start.iter_mut().skip(1) {
        *w = (*w * 0.4).round();
    }
    let settings = Settings {
        tuned: (1..truth.len()).collect(),
        k,
        lambda: 0.0,
        iterations: 400,
        rate: 1.0,
        threads: 2,
    };
    let mut losses = Vec::new();
    let fit = tune(&split, &start, &settings, |i| {
        losses.push((i.train, i.test))
    });
    assert!(
        fit.after > 0 && fit.after <= 400,
        "kept after {}",
        fit.after
    );
    let fitted = fit.weights;
    assert_eq!(losses.len(), 400);
    let (first, last) = (losses[0], losses[399]);
    assert!(
        last.0 < first.0 && last.1 < first.1,
        "{first:?} -> {last:?}"
    );
    // Within 30 % (or 2.4 of the small ones): the estimate's own noise at 100,000
    // positions, where `com` comes out at 9.9 for 13 and the others within 10 %.
    for (name, (fit, want)) in Loa::WEIGHTS.iter().zip(fitted.iter().zip(&truth)) {
        assert!(
            (fit - want).abs() <= 0.3 * want.abs().max(8.0),
            "{name}: fitted {fit:.1}, made with {want}"
        );
    }
    // The held-out loss of the fit is as good as that of the truth, within noise.
    let truth_loss = loss(&split.test, &truth, k, 0.0, 2);
    assert!(loss(&split.test, &fitted, k, 0.0, 2) < truth_loss + 0.002);
}

#[test]
fn k_is_found_where_the_data_were_made() {
    let truth = defaults::<Amazons>();
    let split = synthetic::<Amazons>(300, &truth, 0.3, 0.0);
    let k = fit_k(&split.train, &truth, 2);
    assert!((k - 0.3).abs() < 0.06, "K {k}");
}

#[test]
fn games_are_split_whole_and_untuned_weights_stay() {
    let mut split = Split::new(0.5);
    for game in 0..200 {
        for _ in 0..3 {
            split.push_features(game, &[1.0, 2.0], 1.0);
        }
    }
    let (train, test) = (split.train.len(), split.test.len());
    assert_eq!(train + test, 600);
    assert!(train % 3 == 0 && test % 3 == 0 && train > 150 && test > 150);
    let settings = Settings {
        tuned: vec![0],
        k: 1.0,
        lambda: 0.0,
        iterations: 20,
        rate: 5.0,
        threads: 3,
    };
    let w = tune(&split, &[0.0, 7.0], &settings, |_| {}).weights;
    assert_eq!(w[1], 7.0);
    assert!(w[0] > 0.0, "every result a win: the tuned weight grows");
}
