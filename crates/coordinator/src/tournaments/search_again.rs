//! Data generation games of built-in players searched again. A built-in player under node
//! limits is deterministic: given its spec, its game's seed and its limits it makes the
//! same moves with the same scores on any machine running the same tourney. So for a sample
//! of pairs, chosen under a key the workers never see, the coordinator plays one game's
//! positions again with fresh players and compares every move and score with the record. A
//! worker that made up its scores (the training target) cannot know which of its pairs are
//! checked; one found out is refused like a forged report, and barred after a few.

use tourney_ai::{Heuristics, Limits, Player, PlayerSpec};
use tourney_model::GameRecord;
use tourney_model::TimeControl;
use tourney_model::job::MoveLimits;
use tourney_rules::{Game, with_position};

/// One pair in this many is searched again, on average, by default
/// ([`crate::Settings::search_again_every`]).
pub const SAMPLE_EVERY: u8 = 16;
/// The most nodes one check may search (a game's moves times its nodes per move): checks
/// cost the coordinator at most about a second of one core each.
pub(crate) const MOST_NODES: u64 = 8_000_000;

/// Which game of pair `pair` of tournament `tournament` is searched again, if any, one
/// pair in `every`: a keyed hash under `key` (the coordinator's lease key) the workers
/// cannot compute.
pub(crate) fn sampled(key: &[u8; 32], every: u8, tournament: u64, pair: u64) -> Option<usize> {
    if every == 0 {
        return None;
    }
    let mut message = b"search-again".to_vec();
    message.extend_from_slice(&tournament.to_le_bytes());
    message.extend_from_slice(&pair.to_le_bytes());
    let mac = crate::ticket::hmac_sha256(key, &message);
    mac[0]
        .is_multiple_of(every)
        .then_some(usize::from(mac[1] & 1))
}

/// The search limits of a side, where they make its built-in player reproducible and the
/// check affordable for a game of `moves` moves: nodes per move (depth too, if given), no
/// clock and no time per move.
pub(crate) fn reproducible(limits: &MoveLimits, moves: usize) -> Option<Limits> {
    let nodes = limits.nodes?;
    let timed = limits.time_control != TimeControl::Infinite || limits.movetime_ms.is_some();
    (!timed && nodes.saturating_mul(moves as u64) <= MOST_NODES).then_some(Limits {
        nodes: Some(nodes),
        depth: limits.depth,
        movetime: None,
        clock: None,
    })
}

/// Plays `game`'s positions again with fresh players of its two specs, seeded `seed`, under
/// `limits` (by colour index), and compares each move and score with the record.
///
/// # Errors
/// The first move or score that differs, or a spec or position that does not parse.
pub(crate) fn verify(
    game: &GameRecord,
    rules: &str,
    seed: u64,
    limits: [Limits; 2],
) -> Result<(), String> {
    with_position!(game.game, P => verify_typed::<P>(game, rules, seed, limits))
}

fn verify_typed<P: Heuristics>(
    game: &GameRecord,
    rules: &str,
    seed: u64,
    limits: [Limits; 2],
) -> Result<(), String> {
    let start: P = game.start.parse().map_err(|e| format!("start: {e}"))?;
    let rules: P::Rules = rules.parse().map_err(|e| format!("rules: {e}"))?;
    let fresh = |side: &tourney_model::PlayerRecord| {
        let spec: PlayerSpec = (side.spec.parse()).map_err(|e| format!("{}: {e}", side.name))?;
        let mut player = (spec.build::<P>()).map_err(|e| format!("{}: {e}", side.name))?;
        player.new_game(seed);
        Ok::<Box<dyn Player<P>>, String>(player)
    };
    // By colour index, as the referee seats them.
    let mut players = [fresh(&game.black)?, fresh(&game.white)?];
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut board = Game::new(start, rules);
    for (i, recorded) in game.moves.iter().enumerate() {
        let mover = board.position().turn().index();
        let found = players[mover].choose(&board, &limits[mover], &stop, &mut |_| {});
        let score = found.info.score.map(|s| s.to_string());
        if found.mv.to_string() != recorded.mv || score != recorded.score {
            return Err(format!(
                "ply {}: searched again, {}'s player plays {} with score {}; the record says \
                 {} with score {}",
                i + 1,
                board.position().turn(),
                found.mv,
                score.as_deref().unwrap_or("none"),
                recorded.mv,
                recorded.score.as_deref().unwrap_or("none"),
            ));
        }
        board.play_text(&recorded.mv).map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::Loa;
    use tourney_rules::loa::LoaRules;
    use tourney_runner::{BuiltIn, Contestant, Seat, Setup, play_until};

    /// A LOA game between built-in players `white` and `black` as a worker's referee plays
    /// it: game seed `seed`, `nodes` a move.
    fn played(white: &str, black: &str, seed: u64, nodes: u64) -> GameRecord {
        let mut setup = Setup::<Loa>::new(LoaRules::default());
        setup.limits.nodes = Some(nodes);
        setup.max_plies = Some(40);
        setup.seed = seed;
        let (mut w, mut b) = (
            BuiltIn::<Loa>::new(white).unwrap(),
            BuiltIn::<Loa>::new(black).unwrap(),
        );
        let white = Seat {
            name: "w".into(),
            player: &mut w as &mut dyn Contestant<Loa>,
        };
        let black = Seat {
            name: "b".into(),
            player: &mut b as &mut dyn Contestant<Loa>,
        };
        play_until(&setup, white, black, &mut |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap()
    }

    fn at(nodes: u64) -> [Limits; 2] {
        [0; 2].map(|_| Limits {
            nodes: Some(nodes),
            ..Limits::default()
        })
    }

    #[test]
    fn an_honest_game_of_built_in_players_is_found_again_move_for_move() {
        for (white, black) in [("ab", "ab:depth=2"), ("mcts", "random"), ("ab", "mcts")] {
            let game = played(white, black, 77, 300);
            assert!(
                game.moves.len() > 10,
                "{white} {black}: {}",
                game.moves.len()
            );
            assert_eq!(
                verify(&game, "", 77, at(300)),
                Ok(()),
                "{white} against {black}"
            );
        }
    }

    #[test]
    fn a_made_up_score_another_seed_or_other_limits_are_found_out() {
        let game = played("ab", "random", 5, 300);
        let mut forged = game.clone();
        let ply = forged.moves.iter().position(|m| m.score.is_some()).unwrap();
        forged.moves[ply].score = Some("cp 900".into());
        let why = verify(&forged, "", 5, at(300)).unwrap_err();
        assert!(
            why.starts_with(&format!("ply {}: searched again", ply + 1)) && why.contains("cp 900"),
            "{why}"
        );
        // The seed the coordinator derives, not one the worker chose, and the leased nodes.
        assert!(
            verify(&game, "", 6, at(300)).is_err(),
            "random plays by its seed"
        );
        assert!(verify(&game, "", 5, at(5000)).is_err(), "searched deeper");
    }

    #[test]
    fn only_reproducible_and_affordable_limits_are_searched_again() {
        let limits = |tc: &str, nodes: Option<u64>, movetime_ms: Option<u64>| MoveLimits {
            time_control: tc.parse().unwrap(),
            nodes,
            depth: None,
            movetime_ms,
        };
        assert!(reproducible(&limits("inf", Some(2000), None), 100).is_some());
        assert!(reproducible(&limits("10+0.1", Some(2000), None), 100).is_none());
        assert!(reproducible(&limits("inf", Some(2000), Some(50)), 100).is_none());
        assert!(reproducible(&limits("inf", None, None), 100).is_none());
        let most = MOST_NODES / 100;
        assert!(reproducible(&limits("inf", Some(most), None), 100).is_some());
        assert!(reproducible(&limits("inf", Some(most + 1), None), 100).is_none());
    }

    #[test]
    fn one_pair_in_sixteen_is_sampled_under_a_key_the_workers_do_not_have() {
        let key = [7u8; 32];
        let picked: Vec<u64> = (0..16_000)
            .filter(|&p| sampled(&key, SAMPLE_EVERY, 1, p).is_some())
            .collect();
        assert!((800..1200).contains(&picked.len()), "{}", picked.len());
        let games = picked
            .iter()
            .filter(|&&p| sampled(&key, 16, 1, p) == Some(1))
            .count();
        assert!((350..650).contains(&games), "either game: {games}");
        let other: Vec<u64> = (0..16_000)
            .filter(|&p| sampled(&[8u8; 32], SAMPLE_EVERY, 1, p).is_some())
            .collect();
        assert_ne!(picked, other, "another key, other pairs");
        assert!(
            (0..1000).all(|p| sampled(&key, 0, 1, p).is_none()),
            "0: none"
        );
        assert!(
            (0..100).all(|p| sampled(&key, 1, 1, p).is_some()),
            "1: every pair"
        );
    }
}
