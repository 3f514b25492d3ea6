//! Differential tests against OpenSpiel (`tests/data/README.md`): replay the oracle's random
//! games and require the exact legal-move set at every position, and the oracle's verdict
//! on every game end and every connection edge case.

use crate::data::{digest, read};
use tourney_rules::loa::{DoubleConnection, LoaRules};
use tourney_rules::{Amazons, Color, EndReason, Game, Loa, Position};

fn winner_letter(winner: Option<Color>) -> &'static str {
    match winner {
        Some(Color::Black) => "b",
        Some(Color::White) => "w",
        None => "draw",
    }
}

fn sorted_moves<P: Position>(position: &P) -> Vec<String> {
    let mut moves: Vec<String> = position
        .legal_moves()
        .iter()
        .map(ToString::to_string)
        .collect();
    moves.sort();
    moves
}

#[test]
fn loa_random_games_have_the_oracle_move_sets_and_endings() {
    let text = read("loa_playouts.txt");
    let mut game: Option<Game<Loa>> = None;
    let (mut positions, mut endings) = (0, 0);
    for (n, line) in text.lines().enumerate() {
        let at = format!("loa_playouts.txt:{}", n + 1);
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with("game ") {
            game = Some(Game::new(Loa::start(), LoaRules::default()));
            continue;
        }
        let game = game.as_mut().expect("a game header comes first");
        if let Some(end) = line.strip_prefix("end ") {
            let words: Vec<&str> = end.split(' ').collect();
            match words[0] {
                "connection" => {
                    let outcome = game
                        .outcome()
                        .unwrap_or_else(|| panic!("{at}: game not over"));
                    assert_eq!(outcome.reason, EndReason::Connection, "{at}");
                    assert_eq!(
                        format!("mover-wins={}", winner_letter(outcome.winner)),
                        words[1],
                        "{at}"
                    );
                    let draw_rule = LoaRules {
                        double_connection: DoubleConnection::Draw,
                    };
                    let with_draw = game.position().outcome(draw_rule).unwrap();
                    assert_eq!(
                        format!("draw={}", winner_letter(with_draw.winner)),
                        words[2],
                        "{at}"
                    );
                }
                "repetition" => {
                    // OpenSpiel stops at the second occurrence; our rules play on.
                    assert_eq!(game.outcome(), None, "{at}");
                    assert_eq!(
                        format!("occurrence={}", game.occurrences()),
                        words[1],
                        "{at}"
                    );
                }
                "ply-cap" => assert_eq!(game.outcome(), None, "{at}"),
                other => panic!("{at}: unknown ending {other}"),
            }
            endings += 1;
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let position = *game.position();
        assert_eq!(
            position.to_string(),
            fields[0],
            "{at}: replayed board differs"
        );
        if fields[1] != "?" {
            let moves = sorted_moves(&position);
            assert_eq!(
                moves.len().to_string(),
                fields[1],
                "{at}: move count; ours: {moves:?}"
            );
            assert_eq!(
                digest(moves.clone()),
                fields[2],
                "{at}: move set differs; ours: {moves:?}"
            );
        }
        if fields[3] != "-" {
            let played = game
                .play_text(fields[3])
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            assert_eq!(
                played.to_string(),
                fields[3],
                "{at}: notation of the played move"
            );
        }
        positions += 1;
    }
    assert!(
        positions > 15_000 && endings == 100,
        "{positions} positions, {endings} endings"
    );
}

#[test]
fn amazons_random_games_have_the_oracle_turn_sets_and_endings() {
    let text = read("amazons_playouts.txt");
    let mut game: Option<Game<Amazons>> = None;
    let (mut positions, mut endings) = (0, 0);
    for (n, line) in text.lines().enumerate() {
        let at = format!("amazons_playouts.txt:{}", n + 1);
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with("game ") {
            game = Some(Game::new(Amazons::start(), Default::default()));
            continue;
        }
        let game = game.as_mut().expect("a game header comes first");
        if let Some(end) = line.strip_prefix("end no-moves winner=") {
            let outcome = game
                .outcome()
                .unwrap_or_else(|| panic!("{at}: game not over"));
            assert_eq!(outcome.reason, EndReason::NoMoves, "{at}");
            assert_eq!(winner_letter(outcome.winner), end, "{at}");
            endings += 1;
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let position = *game.position();
        assert_eq!(
            position.to_string(),
            fields[0],
            "{at}: replayed board differs"
        );
        let moves = sorted_moves(&position);
        assert_eq!(moves.len().to_string(), fields[1], "{at}: turn count");
        assert_eq!(
            position.count_moves().to_string(),
            fields[1],
            "{at}: count_moves"
        );
        assert_eq!(digest(moves.clone()), fields[2], "{at}: turn set differs");
        for entry in fields[3].split(',') {
            let (from, count) = entry.split_once(':').unwrap();
            let ours = moves
                .iter()
                .filter(|m| m.split('-').next() == Some(from))
                .count();
            assert_eq!(
                ours.to_string(),
                count,
                "{at}: turns of the amazon on {from}"
            );
        }
        if fields[4] != "-" {
            game.play_text(fields[4])
                .unwrap_or_else(|e| panic!("{at}: {e}"));
        }
        positions += 1;
    }
    assert!(
        positions > 14_000 && endings == 200,
        "{positions} positions, {endings} endings"
    );
}

#[test]
fn loa_connection_edge_cases_match_the_oracle() {
    let text = read("loa_edge_cases.txt");
    let mut categories = std::collections::BTreeMap::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#'))
    {
        let at = format!("loa_edge_cases.txt:{}", n + 1);
        let f: Vec<&str> = line.split('\t').collect();
        let (category, before, mv, after) = (f[0], f[1], f[2], f[3]);
        let position: Loa = before.parse().unwrap();
        assert_eq!(
            position.outcome(LoaRules::default()),
            None,
            "{at}: already over"
        );
        let played = position
            .parse_move(mv)
            .unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(played.to_string(), mv, "{at}");
        let next = position.play(played).unwrap();
        assert_eq!(next.to_string(), after, "{at}");
        let both = next.is_connected(Color::Black) && next.is_connected(Color::White);
        assert_eq!(both, category == "both", "{at}: category {category}");
        let mover_wins = next.outcome(LoaRules::default()).unwrap();
        let draw = next
            .outcome(LoaRules {
                double_connection: DoubleConnection::Draw,
            })
            .unwrap();
        assert_eq!(
            winner_letter(mover_wins.winner),
            f[4],
            "{at}: double-connection=mover-wins"
        );
        assert_eq!(
            winner_letter(draw.winner),
            f[5],
            "{at}: double-connection=draw"
        );
        *categories.entry(category.to_string()).or_insert(0) += 1;
    }
    assert_eq!(categories.get("both"), Some(&41));
    assert!(categories.get("opponent_only") > Some(&1000));
    assert!(categories.get("mover_only") > Some(&500));
}
