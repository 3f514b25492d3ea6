//! A tournament's standings as its status shows them: BayesElo's ratings of all its
//! counted games, or for a rating pool the pool's joint fit (tourney-stats'
//! [`PoolSettings::rate`]) with each engine's 95 % interval relative to the anchor, in the
//! same [`RatingTable`] (one serialization, one printout).

use tourney_model::tournament::{Format, TournamentConfig};
use tourney_stats::normal::phi;
use tourney_stats::{BayesElo, Bound, GameTable, PlayerRating, PoolRatings, RatingTable};

use crate::scheduler::pool_settings;

/// The standings of `config`'s tournament from the games of its counted pairs, `table`
/// (its engines numbered as in the file).
pub(crate) fn standings(config: &TournamentConfig, table: &GameTable) -> RatingTable {
    if config.format != Format::Pool {
        return BayesElo::default().rate(table);
    }
    let ratings = pool_settings(config).rate(table, None);
    pool_table(table, &ratings)
}

/// A pool's ratings as a rating table, best first (engines without games last): each
/// engine's rating and symmetric 95 % interval relative to the anchor, and the likelihood
/// of superiority from the fit's covariance.
pub(crate) fn pool_table(table: &GameTable, ratings: &PoolRatings) -> RatingTable {
    let n = ratings.len();
    let c = &ratings.covariance;
    let los = |i: usize, j: usize| {
        let spread = (c[i][i] + c[j][j] - 2.0 * c[i][j]).max(f64::MIN_POSITIVE);
        phi((ratings.internal[i] - ratings.internal[j]) / spread.sqrt())
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        (ratings.games[b] > 0)
            .cmp(&(ratings.games[a] > 0))
            .then(ratings.elo[b].total_cmp(&ratings.elo[a]))
            .then(a.cmp(&b))
    });
    let players = (order.iter().enumerate())
        .map(|(rank, &i)| {
            let [w, d, l] = table.totals(i);
            let games = w + d + l;
            let per_game = |x: f64| if games > 0 { x / games as f64 } else { 0.0 };
            let opponents: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| table.games_between(i, j) as f64 * ratings.elo[j])
                .sum();
            PlayerRating {
                name: table.names()[i].clone(),
                elo: ratings.elo[i],
                plus: ratings.interval[i],
                minus: ratings.interval[i],
                games,
                score: per_game(w as f64 + d as f64 / 2.0),
                draws: per_game(d as f64),
                oppo: per_game(opponents),
                los_next: (order.get(rank + 1))
                    .filter(|&&j| games > 0 && ratings.games[j] > 0)
                    .map(|&j| los(i, j)),
                bound: match (w, d, l) {
                    (w, 0, 0) if w > 0 => Some(Bound::AtLeast),
                    (0, 0, l) if l > 0 => Some(Bound::AtMost),
                    _ => None,
                },
            }
        })
        .collect();
    let matrix = (order.iter())
        .map(|&i| {
            (order.iter())
                .map(|&j| if i == j { f64::NAN } else { los(i, j) })
                .collect()
        })
        .collect();
    let anchor = table.names().get(ratings.anchor).map_or("", String::as_str);
    RatingTable {
        method: format!("pool (bayeselo, relative to {anchor})"),
        players,
        los: matrix,
        advantage: Some(ratings.advantage),
        drawelo: Some(ratings.drawelo),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::tournament::PairOutcome;

    #[test]
    fn a_pools_standings_are_its_ratings_relative_to_its_anchor() {
        let mut text = "name = \"p\"\ngame = \"loa\"\nformat = \"pool\"\n\
                        openings = { plies = 2 }\nlimits = { nodes = 10 }\n[pool]\nanchor = \"b\"\n"
            .to_string();
        for name in ["a", "b", "c", "idle"] {
            text += &format!("[[engine]]\nname = \"{name}\"\nplayer = \"random\"\n");
        }
        let config = TournamentConfig::parse(&text, "p.toml").unwrap();
        // a beats b three pairs in four, b and c split; idle never plays.
        let outcomes: Vec<PairOutcome> = (0..40u64)
            .map(|pair| {
                let (first, second, half_points) = match pair % 8 {
                    0..=2 => (0, 1, [2, 2]),
                    3 => (0, 1, [0, 1]),
                    _ => (1, 2, [2, 0]),
                };
                PairOutcome {
                    pair,
                    first,
                    second,
                    half_points,
                    white: [first, second],
                }
            })
            .collect();
        let games = crate::views::game_table(&config, &outcomes);
        let table = standings(&config, &games);
        assert_eq!(table.method, "pool (bayeselo, relative to b)");
        let row = |name: &str| table.players.iter().find(|p| p.name == name).unwrap();
        let names: Vec<&str> = table.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            (names[0], names[3]),
            ("a", "idle"),
            "best first, no games last"
        );
        let b = row("b");
        assert_eq!((b.elo, b.plus, b.minus), (0.0, 0.0, 0.0), "the anchor");
        let (a, c) = (row("a"), row("c"));
        assert!(a.elo > 50.0 && a.plus > 10.0 && a.plus < a.elo, "{a:?}");
        assert!(c.elo.abs() < c.plus, "{c:?}");
        assert_eq!((a.games, c.games, table.players[3].games), (40, 40, 0));
        assert!(a.los_next.unwrap() > 0.95);
        assert!(table.players[3].plus > 1000.0, "the prior's width");
        // Other formats keep BayesElo's table.
        let mut robin = config.clone();
        robin.format = Format::RoundRobin;
        assert!(standings(&robin, &games).method.starts_with("bayeselo"));
    }
}
