//! Elo scales and their conversions.

/// Normalized Elo per unit of t-value: `800 / ln 10` (fishtest `nelo_divided_by_nt`).
pub const NELO_PER_T: f64 = 800.0 / std::f64::consts::LN_10;

/// Expected score of a player `elo` logistic Elo stronger: `1 / (1 + 10^(-elo/400))`.
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// Logistic Elo of an expected score, with IEEE results at and beyond the edges
/// (+∞ at 1, NaN outside [0, 1]).
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// fishtest's `stat_util.elo`: the score is first clamped to [0.001, 0.999], so the result
/// stays within ±1199.83.
pub fn fishtest_elo(score: f64) -> f64 {
    elo_from_score(score.clamp(1e-3, 1.0 - 1e-3))
}

/// BayesElo's draw parameter from win and loss probabilities:
/// `200 log10((1-pL)/pL · (1-pW)/pW)`.
pub fn draw_elo(p_win: f64, p_loss: f64) -> f64 {
    200.0 * ((1.0 - p_loss) / p_loss * (1.0 - p_win) / p_win).log10()
}

/// Win, draw and loss probabilities of the BayesElo model for a rating difference `belo`.
pub fn bayeselo_probabilities(belo: f64, drawelo: f64) -> [f64; 3] {
    let win = 1.0 / (1.0 + 10f64.powf((-belo + drawelo) / 400.0));
    let loss = 1.0 / (1.0 + 10f64.powf((belo + drawelo) / 400.0));
    [win, 1.0 - win - loss, loss]
}

/// The logistic Elo equivalent to a BayesElo difference (fishtest `bayeselo_to_elo`):
/// the Elo of the model's expected score.
pub fn bayeselo_to_elo(belo: f64, drawelo: f64) -> f64 {
    let [win, draw, _] = bayeselo_probabilities(belo, drawelo);
    fishtest_elo(win + draw / 2.0)
}

/// The slope of BayesElo's display scale at draw parameter `drawelo`:
/// `4x / (1+x)²` with `x = 10^(-drawelo/400)`.
pub fn bayeselo_scale(drawelo: f64) -> f64 {
    let x = 10f64.powf(-drawelo / 400.0);
    4.0 * x / ((1.0 + x) * (1.0 + x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_invert_each_other() {
        for elo in [-500.0, -10.0, 0.0, 3.5, 400.0] {
            assert!((elo_from_score(logistic_score(elo)) - elo).abs() < 1e-9);
        }
        assert_eq!(elo_from_score(1.0), f64::INFINITY);
        assert!(elo_from_score(1.5).is_nan());
        assert!((fishtest_elo(1.0) - 1_199.826_195_290_385_4).abs() < 1e-9);
        assert!((bayeselo_scale(97.3) - 0.925_5).abs() < 1e-4);
        assert!((bayeselo_to_elo(0.0, 200.0)).abs() < 1e-12);
    }
}
