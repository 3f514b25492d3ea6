//! The statistics' end-to-end check: many simulated SPRTs on game pairs of known true
//! strength must accept H1 as often as α and β promise.

use tourney_stats::takes::simulate::{Rng, distribution_at, draw_pair};
use tourney_stats::{Decision, EloModel, Pentanomial, Sprt, SprtInput};

/// Runs `runs` SPRTs at true normalized Elo `truth`, checking every 8 pairs; returns the
/// fraction that accepted H1.
fn h1_rate(sprt: &Sprt, truth: f64, runs: usize, seed: u64) -> f64 {
    let p = distribution_at(truth);
    let mut rng = Rng(seed);
    let mut accepted = 0;
    for _ in 0..runs {
        let mut counts = Pentanomial::default();
        loop {
            for _ in 0..8 {
                let [a, b] = draw_pair(&p, &mut rng);
                counts.bins[usize::from(a + b)] += 1;
            }
            let status = sprt
                .status(&SprtInput {
                    pentanomial: Some(counts),
                    trinomial: None,
                })
                .unwrap();
            match status.decision {
                Decision::Continue => continue,
                Decision::AcceptH1 => accepted += 1,
                Decision::AcceptH0 => {}
            }
            break;
        }
    }
    accepted as f64 / runs as f64
}

#[test]
fn simulated_sprts_keep_their_error_rates() {
    let sprt = Sprt {
        elo0: 0.0,
        elo1: 30.0,
        alpha: 0.05,
        beta: 0.05,
        model: EloModel::Normalized,
    };
    let runs = 400;
    // Binomial standard error of a rate near 0.05 over `runs` trials.
    let se = (0.05f64 * 0.95 / runs as f64).sqrt();

    let false_positive = h1_rate(&sprt, sprt.elo0, runs, 1);
    let false_negative = 1.0 - h1_rate(&sprt, sprt.elo1, runs, 2);
    // Wald's bounds are conservative (the LLR overshoots them), so the observed rates may be
    // a little below α and β, never above by more than the binomial error.
    for (name, rate, nominal) in [
        ("false positive", false_positive, sprt.alpha),
        ("false negative", false_negative, sprt.beta),
    ] {
        assert!(
            rate <= nominal + 3.0 * se,
            "{name} rate {rate} above {nominal}"
        );
        assert!(
            rate >= nominal / 4.0,
            "{name} rate {rate} implausibly low for {nominal}"
        );
    }
    // Halfway between the hypotheses, the test is a coin flip.
    let middle = h1_rate(&sprt, (sprt.elo0 + sprt.elo1) / 2.0, runs, 3);
    eprintln!(
        "false positive {false_positive}, false negative {false_negative}, midpoint H1 {middle}"
    );
    assert!(
        (0.35..=0.65).contains(&middle),
        "H1 rate at the midpoint {middle}"
    );
    // Beyond elo1 it almost always accepts H1; below elo0 almost never.
    assert!(h1_rate(&sprt, 60.0, 100, 4) > 0.97);
    assert!(h1_rate(&sprt, -30.0, 100, 5) < 0.03);
}
