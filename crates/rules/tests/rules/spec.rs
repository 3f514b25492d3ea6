//! One test per rule of the specification (`docs/rules.md`), named after the rule.

use tourney_rules::amazons::{AmazonsRules, Piece};
use tourney_rules::loa::{DoubleConnection, LoaRules};
use tourney_rules::{
    Amazons, Color, EndReason, Game, Loa, MoveError, Outcome, Position, Square, perft,
};

/// Bitboard of the named squares of an `N`×`N` board.
fn squares<const N: usize>(names: &[&str]) -> u128 {
    names.iter().fold(0, |bb, name| {
        bb | 1 << name.parse::<Square<N>>().unwrap().index()
    })
}

/// An LOA position from the squares of each side.
fn loa(black: &[&str], white: &[&str], turn: Color) -> Loa {
    Loa::from_bitboards(squares::<8>(black) as u64, squares::<8>(white) as u64, turn).unwrap()
}

/// The legal moves starting on `from`, as sorted text.
fn moves_from<P: Position>(position: &P, from: &str) -> Vec<String> {
    let mut out: Vec<String> = position
        .legal_moves()
        .iter()
        .map(ToString::to_string)
        .filter(|m| m.starts_with(from))
        .collect();
    out.sort();
    out
}

fn win(winner: Color, reason: EndReason) -> Option<Outcome> {
    Some(Outcome {
        winner: Some(winner),
        reason,
    })
}

const DRAW_RULE: LoaRules = LoaRules {
    double_connection: DoubleConnection::Draw,
};

// ---------------------------------------------------------------- LOA: board and start

#[test]
fn loa_start_position_and_black_moves_first() {
    let start = Loa::start();
    assert_eq!(
        start.to_string(),
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b"
    );
    assert_eq!(start.turn(), Color::Black);
    assert_eq!(start.pieces(Color::Black).count_ones(), 12);
    assert_eq!(start.pieces(Color::White).count_ones(), 12);
    for corner in ["a1", "h1", "a8", "h8"] {
        assert_eq!(start.piece_at(corner.parse().unwrap()), None);
    }
    assert_eq!(start.legal_moves().len(), 36);
}

// ---------------------------------------------------------------- LOA: how far a piece moves

#[test]
fn loa_move_distance_is_the_number_of_pieces_on_the_line() {
    // The spec's example: b8 has only b8 and b1 on file b, so it moves exactly two squares
    // vertically; rank 8 holds six pieces, so along the rank it must move six (to h8); its
    // anti-diagonal holds b8 and h2, so diagonally it moves two (to d6).
    assert_eq!(moves_from(&Loa::start(), "b8"), ["b8-b6", "b8-d6", "b8-h8"]);
}

#[test]
fn loa_opposite_directions_share_one_count() {
    // File d holds d4, d2 and d7: three pieces, so d4 moves three squares north or south.
    let position = loa(&["d4", "d2", "a8"], &["d7", "h1", "h3"], Color::Black);
    let moves = moves_from(&position, "d4");
    assert!(!moves.iter().any(|m| m.ends_with("d6") || m.ends_with("d5")));
    // South: three squares from d4 is d1, jumping its own d2: legal.
    assert!(moves.contains(&"d4-d1".to_string()), "{moves:?}");
    // North: three squares is d7, an enemy, reached over empty d5 and d6: a capture.
    assert!(moves.contains(&"d4xd7".to_string()), "{moves:?}");
}

#[test]
fn loa_the_four_lines_are_counted_separately() {
    // d4 alone on its rank and anti-diagonal, with two more pieces on its file and one on
    // its diagonal: it moves 1 along the rank, 3 along the file, 2 along the diagonal.
    let position = loa(&["d4", "d1", "a8"], &["d8", "f6", "h3"], Color::Black);
    let moves = moves_from(&position, "d4");
    for expected in [
        "d4-c4", "d4-e4", "d4-d7", "d4-b2", "d4xf6", "d4-c5", "d4-e3",
    ] {
        assert!(
            moves.contains(&expected.to_string()),
            "missing {expected} in {moves:?}"
        );
    }
    assert_eq!(moves.len(), 7, "{moves:?}");
}

#[test]
fn loa_enemy_behind_the_start_counts_but_does_not_block() {
    // File d: white d1 behind black d4. Two pieces: d4 moves two north to d6.
    let position = loa(&["d4", "a8"], &["d1", "h5", "h7"], Color::Black);
    assert!(moves_from(&position, "d4").contains(&"d4-d6".to_string()));
}

#[test]
fn loa_piece_beyond_the_landing_square_counts_but_does_not_block() {
    // File d: d4 and white d8 beyond the landing square d6.
    let position = loa(&["d4", "a8"], &["d8", "h5", "h2"], Color::Black);
    assert!(moves_from(&position, "d4").contains(&"d4-d6".to_string()));
}

#[test]
fn loa_move_that_leaves_the_board_does_not_exist() {
    // d7 with d1 on its file: two squares north would be d9.
    let position = loa(&["d7", "a1"], &["d1", "h5", "h2"], Color::Black);
    let moves = moves_from(&position, "d7");
    assert!(moves.iter().all(|m| !m.contains("d9")));
    assert!(moves.contains(&"d7-d5".to_string()));
}

#[test]
fn loa_may_jump_over_own_pieces() {
    let position = loa(&["d4", "d5", "a1"], &["h5", "h2"], Color::Black);
    // Two pieces on file d: d4 jumps its own d5 to d6.
    assert!(moves_from(&position, "d4").contains(&"d4-d6".to_string()));
}

#[test]
fn loa_may_not_jump_over_enemy_pieces() {
    let position = loa(&["d4", "a1"], &["d5", "h2"], Color::Black);
    assert!(
        !moves_from(&position, "d4")
            .iter()
            .any(|m| m.ends_with("d6"))
    );
}

#[test]
fn loa_landing_on_an_enemy_captures_it() {
    let position = loa(&["d4", "a1"], &["d6", "h2", "h4"], Color::Black);
    let mv = position.parse_move("d4xd6").unwrap();
    let after = position.play(mv).unwrap();
    assert_eq!(after.piece_at("d6".parse().unwrap()), Some(Color::Black));
    assert_eq!(after.pieces(Color::White).count_ones(), 2);
}

#[test]
fn loa_may_not_land_on_an_own_piece() {
    let position = loa(&["d4", "d6", "a1"], &["h2", "h4"], Color::Black);
    assert!(
        !moves_from(&position, "d4")
            .iter()
            .any(|m| m.ends_with("d6"))
    );
}

#[test]
fn loa_capturing_is_not_compulsory() {
    // d4 can capture on d6 (file) and also has quiet moves.
    let position = loa(&["d4", "a1"], &["d6", "h2", "h4"], Color::Black);
    let moves = moves_from(&position, "d4");
    assert!(moves.contains(&"d4xd6".to_string()));
    assert!(moves.iter().any(|m| m.contains('-')));
}

// ---------------------------------------------------------------- LOA: end of the game

#[test]
fn loa_connection_counts_diagonal_neighbours() {
    // Black a1-b2-c3 is one diagonal chain; White h8, h6 is not connected.
    let position = loa(&["a1", "b2", "c3"], &["h8", "h6"], Color::White);
    assert!(position.is_connected(Color::Black));
    assert!(!position.is_connected(Color::White));
    assert_eq!(
        position.outcome(LoaRules::default()),
        win(Color::Black, EndReason::Connection)
    );
    assert!(position.legal_moves().is_empty());
}

#[test]
fn loa_single_piece_is_connected() {
    let position = loa(&["d4"], &["h8", "h6"], Color::White);
    assert!(position.is_connected(Color::Black));
    assert_eq!(
        position.outcome(LoaRules::default()),
        win(Color::Black, EndReason::Connection)
    );
}

#[test]
fn loa_connection_is_checked_after_the_capture_is_removed() {
    // White a1, a2 and a straggler e5; Black e3 captures e5 (file e: e3, e5 = 2).
    // The capture connects White: White wins although Black moved, under both options.
    let position = loa(&["e3", "h8"], &["a1", "a2", "e5"], Color::Black);
    let after = position
        .play(position.parse_move("e3xe5").unwrap())
        .unwrap();
    assert!(after.is_connected(Color::White) && !after.is_connected(Color::Black));
    for rules in [LoaRules::default(), DRAW_RULE] {
        assert_eq!(
            after.outcome(rules),
            win(Color::White, EndReason::Connection)
        );
    }
}

#[test]
fn loa_exactly_one_side_connected_wins_even_if_it_did_not_move() {
    let position = loa(&["a1", "b1"], &["h8", "h6"], Color::Black);
    // Black is to move (so White moved last), yet Black is the connected side and wins.
    assert_eq!(
        position.outcome(LoaRules::default()),
        win(Color::Black, EndReason::Connection)
    );
}

/// Black d3 captures the white straggler d5 and lands next to c5: both sides connect.
fn double_connection() -> (Loa, Loa) {
    let before = loa(&["c5", "d3"], &["a1", "a2", "d5"], Color::Black);
    let after = before.play(before.parse_move("d3xd5").unwrap()).unwrap();
    (before, after)
}

#[test]
fn loa_double_connection_mover_wins_by_default() {
    let (before, after) = double_connection();
    assert_eq!(before.outcome(LoaRules::default()), None);
    assert!(after.is_connected(Color::Black) && after.is_connected(Color::White));
    assert_eq!(
        LoaRules::default().double_connection,
        DoubleConnection::MoverWins
    );
    assert_eq!(
        after.outcome(LoaRules::default()),
        win(Color::Black, EndReason::Connection)
    );
}

#[test]
fn loa_double_connection_draw_option() {
    let (_, after) = double_connection();
    assert_eq!(
        after.outcome(DRAW_RULE),
        Some(Outcome {
            winner: None,
            reason: EndReason::Connection
        })
    );
}

/// White (to move) has no legal step: a4 and c2 are hemmed in by black pieces.
const WHITE_MUST_PASS: &str = "8/8/2b5/bb6/w1bb4/3b4/b1w1b3/1bb5 w";

#[test]
fn loa_side_without_a_move_must_pass() {
    let position: Loa = WHITE_MUST_PASS.parse().unwrap();
    assert_eq!(position.outcome(LoaRules::default()), None);
    assert_eq!(position.legal_moves(), vec![tourney_rules::loa::Move::Pass]);
    let after = position.play(tourney_rules::loa::Move::Pass).unwrap();
    assert_eq!(after.turn(), Color::Black);
    assert_eq!(after.to_string(), WHITE_MUST_PASS.replace(" w", " b"));
    // A pass counts as a move in perft.
    assert_eq!(perft(&position, 1), 1);
}

#[test]
fn loa_pass_is_not_allowed_while_a_move_exists() {
    let start = Loa::start();
    assert!(!start.is_legal(tourney_rules::loa::Move::Pass));
    assert!(matches!(
        start.parse_move("pass"),
        Err(MoveError::Illegal(_))
    ));
}

#[test]
fn loa_third_occurrence_of_a_position_is_a_draw() {
    let mut game = Game::new(Loa::start(), LoaRules::default());
    let cycle = ["b1-b3", "a2-c2", "b3-b1", "c2-a2"];
    for (i, mv) in cycle.iter().chain(&cycle).enumerate() {
        assert_eq!(game.outcome(), None, "over before ply {i}");
        game.play_text(mv).unwrap();
    }
    assert_eq!(game.occurrences(), 3);
    assert_eq!(
        game.outcome(),
        Some(Outcome {
            winner: None,
            reason: EndReason::Repetition
        })
    );
    assert!(game.legal_moves().is_empty());
    assert!(matches!(
        game.play_text("b1-b3"),
        Err(MoveError::GameOver { .. })
    ));
}

#[test]
fn loa_repetition_occurrences_need_not_be_consecutive() {
    let mut game = Game::new(Loa::start(), LoaRules::default());
    // Start again after 4 plies, wander elsewhere, come back twice more.
    for mv in ["b1-b3", "a2-c2", "b3-b1", "c2-a2"] {
        game.play_text(mv).unwrap();
    }
    assert_eq!(game.occurrences(), 2);
    for mv in ["g1-g3", "h2-f2", "g3-g1", "f2-h2"] {
        game.play_text(mv).unwrap();
    }
    assert_eq!(
        game.outcome().map(|o| o.reason),
        Some(EndReason::Repetition)
    );
}

/// From the pass position with Black to move, a quiet black move after which White must
/// still pass and which Black can undo: Black shuffles while White passes.
fn shuffle(board: &Loa) -> (String, String) {
    for mv in board.legal_moves() {
        let after = board.play(mv).unwrap();
        if after.legal_moves() != [tourney_rules::loa::Move::Pass] || mv.to_string().contains('x') {
            continue;
        }
        let back_pos = after.play(tourney_rules::loa::Move::Pass).unwrap();
        let text = mv.to_string();
        let back = format!("{}-{}", &text[3..], &text[..2]);
        if back_pos.parse_move(&back).is_ok() {
            return (text, back);
        }
    }
    panic!("no shuffle found");
}

#[test]
fn loa_repetition_needs_the_same_side_to_move_and_counts_positions_after_a_pass() {
    let start: Loa = WHITE_MUST_PASS.replace(" w", " b").parse().unwrap();
    let (there, back) = shuffle(&start);
    let mut game = Game::new(start, LoaRules::default());
    // ply:       1      2       3      4      5      6       7      8
    let plies = [&there, "pass", &back, "pass", &there, "pass", &back, "pass"];
    for (i, mv) in plies.iter().enumerate() {
        assert_eq!(game.outcome(), None, "over before ply {}", i + 1);
        game.play_text(mv).unwrap();
        if i == 2 {
            // The start board is back, but with White to move: a different position.
            assert_eq!(game.occurrences(), 1);
        }
    }
    // Ply 8, a pass, brings the start position (Black to move) for the third time.
    assert_eq!(game.occurrences(), 3);
    assert_eq!(
        game.outcome().map(|o| o.reason),
        Some(EndReason::Repetition)
    );
}

// ---------------------------------------------------------------- LOA: notation

#[test]
fn loa_notation_marks_captures_with_x_and_accepts_either_sign() {
    let position = loa(&["d4", "a1"], &["d6", "h2", "h4"], Color::Black);
    let capture = position.parse_move("d4-d6").unwrap();
    assert_eq!(capture.to_string(), "d4xd6");
    assert_eq!(position.parse_move("d4xd6").unwrap(), capture);
    let quiet = position.parse_move("d4xf4").unwrap();
    assert_eq!(quiet.to_string(), "d4-f4");
    assert!(matches!(
        position.parse_move("d4-d5"),
        Err(MoveError::Illegal(_))
    ));
    let err = position.parse_move("d4-k3").unwrap_err();
    assert_eq!(
        err.to_string(),
        "malformed move: unknown square 'k3' at column 4"
    );
}

// ---------------------------------------------------------------- Amazons

/// An Amazons position from the squares of each side's amazons and the arrows.
fn amazons(black: &[&str], white: &[&str], arrows: &[&str], turn: Color) -> Amazons {
    Amazons::from_bitboards(
        squares::<10>(black),
        squares::<10>(white),
        squares::<10>(arrows),
        turn,
    )
    .unwrap()
}

const BLACK_CORNER: [&str; 4] = ["j10", "h10", "j8", "f10"];

#[test]
fn amazons_start_position_and_white_moves_first() {
    let start = Amazons::start();
    assert_eq!(start.to_string(), "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w");
    assert_eq!(start.turn(), Color::White);
    assert_eq!(start.amazons(Color::White).count_ones(), 4);
    assert_eq!(start.arrows(), 0);
    assert_eq!(start.legal_moves().len(), 2_176);
}

#[test]
fn amazons_amazon_moves_like_a_queen_over_empty_squares_only() {
    // White d1 with an arrow on d4 and a black amazon on f3.
    let position = amazons(
        &["f3", "j10", "h10", "j8"],
        &["d1", "a9", "a7", "b10"],
        &["d4"],
        Color::White,
    );
    let targets: std::collections::BTreeSet<String> = position
        .legal_moves()
        .iter()
        .filter(|m| m.from.to_string() == "d1")
        .map(|m| m.to.to_string())
        .collect();
    let expected: std::collections::BTreeSet<String> = [
        "d2", "d3", // north, stopped by the arrow on d4
        "a1", "b1", "c1", "e1", "f1", "g1", "h1", "i1", "j1", // along rank 1
        "c2", "b3", "a4", // north-west
        "e2", // north-east, stopped by the amazon on f3
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(targets, expected);
    assert!(
        position.parse_move("d1-d1/d2").is_err(),
        "an amazon must move at least one square"
    );
    assert!(
        position.parse_move("d1-d5/d6").is_err(),
        "no passing through an arrow"
    );
    assert!(
        position.parse_move("d1-f3/f4").is_err(),
        "no landing on an amazon"
    );
}

#[test]
fn amazons_arrow_may_land_on_or_pass_the_vacated_square() {
    let start = Amazons::start();
    // Onto the square just left.
    let back = start.parse_move("g1-g2/g1").unwrap();
    let after = start.play(back).unwrap();
    assert_eq!(after.piece_at("g1".parse().unwrap()), Some(Piece::Arrow));
    assert_eq!(
        after.piece_at("g2".parse().unwrap()),
        Some(Piece::Amazon(Color::White))
    );
    // Through it: from e1 west over the vacated d1 to c1.
    assert!(start.parse_move("d1-e1/c1").is_ok());
    // The arrow is blocked like the amazon: not through g1's own amazon.
    assert!(start.parse_move("d1-e1/h1").is_err());
}

#[test]
fn amazons_turn_is_not_complete_without_its_arrow() {
    assert!(matches!(
        Amazons::start().parse_move("d1-d7"),
        Err(MoveError::Parse(_))
    ));
    assert!("d1-d7".parse::<tourney_rules::amazons::Move>().is_err());
}

#[test]
fn amazons_arrows_block_for_the_rest_of_the_game_and_nothing_is_captured() {
    let mut game = Game::new(Amazons::start(), AmazonsRules::default());
    game.play_text("d1-d7/g7").unwrap();
    // The arrow on g7 stays; the black amazon on g10 cannot cross it.
    assert!(game.position().parse_move("g10-g6/g8").is_err());
    game.play_text("g10-g8/h8").unwrap();
    let position = *game.position();
    assert_eq!(position.arrows().count_ones(), 2);
    assert_eq!(
        position.amazons(Color::White).count_ones() + position.amazons(Color::Black).count_ones(),
        8
    );
    // An arrow cannot be a target of an amazon nor of another arrow.
    assert!(position.parse_move("d7-g7/g6").is_err());
    assert!(position.parse_move("d7-e7/g7").is_err());
}

#[test]
fn amazons_side_without_a_complete_turn_loses() {
    // White amazons boxed in by arrows in the bottom-left corner; White to move.
    let position = amazons(
        &BLACK_CORNER,
        &["a1", "b1", "a2", "b2"],
        &["c1", "c2", "c3", "b3", "a3"],
        Color::White,
    );
    assert!(position.legal_moves().is_empty());
    assert_eq!(
        position.outcome(AmazonsRules::default()),
        win(Color::Black, EndReason::NoMoves)
    );
    assert_eq!(perft(&position, 0), 1);
    assert_eq!(perft(&position, 1), 0);
    // The same board with Black to move is not over.
    let black_to_move = amazons(
        &BLACK_CORNER,
        &["a1", "b1", "a2", "b2"],
        &["c1", "c2", "c3", "b3", "a3"],
        Color::Black,
    );
    assert_eq!(black_to_move.outcome(AmazonsRules::default()), None);
}

#[test]
fn amazons_amazon_that_can_step_always_has_a_turn() {
    // One free neighbour (a1's b1 freed): moving there and shooting back is a turn.
    let position = amazons(
        &BLACK_CORNER,
        &["a1", "j1", "a10", "e5"],
        &["a2", "b2"],
        Color::White,
    );
    assert!(position.parse_move("a1-b1/a1").is_ok());
}

#[test]
fn amazons_games_have_no_draws_and_last_at_most_92_turns() {
    let mut state = 0x1234_5678_9abc_def0u64;
    for _ in 0..200 {
        let game = tourney_rules::random_playout(Amazons::start(), AmazonsRules::default(), || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z ^ (z >> 27)
        });
        let outcome = game.outcome().unwrap();
        assert!(outcome.winner.is_some());
        assert_eq!(outcome.reason, EndReason::NoMoves);
        assert!(game.ply() <= 92);
        // The loser is the side to move, which has no turn.
        assert_eq!(outcome.winner, Some(game.position().turn().opponent()));
    }
}

// ---------------------------------------------------------------- position strings

#[test]
fn position_strings_round_trip_with_two_digit_runs() {
    let start = "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w";
    assert_eq!(start.parse::<Amazons>().unwrap(), Amazons::start());
    assert_eq!(Amazons::start().to_string(), start);
    let busy = "1x1wx1x3/x1xxxbx1x1/2x1xxxx1x/x1x1bxx1x1/x1xxx1x1x1/3xxxx2x/2x3xxbx/1w2xbx1xw/1x1x2xxxx/xx1x1xxxw1 w";
    assert_eq!(busy.parse::<Amazons>().unwrap().to_string(), busy);
    let loa = "bw4bb/2b5/w2bb3/2w2w2/3w1w2/1ww2bwb/w6w/b7 b";
    assert_eq!(loa.parse::<Loa>().unwrap().to_string(), loa);
}

#[test]
fn position_string_errors_say_what_and_where() {
    let cases: [(&str, &str); 7] = [
        (
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1",
            "missing side to move",
        ),
        (
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbq1 b",
            "unexpected 'q': expected a piece ('b', 'w'), a digit or '/' at column 40",
        ),
        (
            "1bbbbbb1/w7w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
            "rank 7 has more than 8 squares at column 12",
        ),
        (
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w b",
            "board ends early: 7 of 8 ranks, the last with 8 of 8 squares at column 33",
        ),
        (
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 x",
            "side to move must be 'b' or 'w', found 'x' at column 43",
        ),
        (
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1/8 b",
            "more than 8 ranks at column 42",
        ),
        ("8/8/8/8/8/8/8/8 b", "black has no pieces"),
    ];
    for (text, message) in cases {
        let err = text.parse::<Loa>().unwrap_err();
        assert!(
            err.to_string().starts_with(message),
            "'{text}': got '{err}', want '{message}'"
        );
    }
    let err = "3b2b3/10/10/b8b/10/10/w8w/10/10/3w6 w"
        .parse::<Amazons>()
        .unwrap_err();
    assert_eq!(err.to_string(), "white has 3 amazons, expected 4");
    let err = "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w4 w"
        .parse::<Amazons>()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("empty run '4' does not fit rank 1"),
        "{err}"
    );
}

// ---------------------------------------------------------------- accessors used by players

#[test]
fn loa_mobility_counts_steps_for_either_side() {
    let start = Loa::start();
    assert_eq!(start.mobility(Color::Black), 36);
    assert_eq!(start.mobility(Color::White), 36);
    let position: Loa = WHITE_MUST_PASS.parse().unwrap();
    assert_eq!(position.mobility(Color::White), 0);
    assert!(position.mobility(Color::Black) > 0);
}

#[test]
fn amazons_queen_mobility_counts_free_squares_in_reach() {
    let start = Amazons::start();
    let mut squares = start.amazon_squares(Color::White).map(|s| s.to_string());
    squares.sort();
    assert_eq!(squares, ["a4", "d1", "g1", "j4"]);
    // d1: 3 along rank 1 to the left, 2 to the right (g1 blocks), 9 up, 3 + 3 diagonally.
    assert_eq!(start.queen_mobility("d1".parse().unwrap()), 20);
}

#[test]
fn amazons_neighbours_are_the_king_steps_on_the_board() {
    let names = |square: &str| {
        let bits = Amazons::neighbours(square.parse().unwrap());
        let mut out: Vec<String> = (0..100)
            .filter(|i| bits >> i & 1 == 1)
            .map(|i| format!("{}{}", (b'a' + i % 10) as char, i / 10 + 1))
            .collect();
        out.sort();
        out
    };
    assert_eq!(names("a1"), ["a2", "b1", "b2"]);
    assert_eq!(names("j10"), ["i10", "i9", "j9"]);
    assert_eq!(
        names("e5"),
        ["d4", "d5", "d6", "e4", "e6", "f4", "f5", "f6"]
    );
    assert_eq!(names("a6"), ["a5", "a7", "b5", "b6", "b7"]);
}

#[test]
fn amazons_separated_territory_counts_each_sides_regions() {
    assert_eq!(Amazons::start().separated_territory(), None);
    // A wall of arrows across rank 5 splits White (below) from Black (above).
    let split: Amazons = "3b2b3/10/10/b8b/10/xxxxxxxxxx/w8w/10/10/3w2w3 w"
        .parse()
        .unwrap();
    assert_eq!(
        split.separated_territory(),
        Some([46, 36]),
        "black has ranks 6-10, white 1-4"
    );
    // A diagonal gap lets a king step through: not separated.
    let leaky: Amazons = "3b2b3/10/10/b8b/10/xxxx1xxxxx/w8w/10/10/3w2w3 w"
        .parse()
        .unwrap();
    assert_eq!(leaky.separated_territory(), None);
}

#[test]
fn amazons_on_8x8_the_board_ends_at_h8() {
    let rules: AmazonsRules = "size=8".parse().unwrap();
    assert_eq!(rules.to_string(), "size=8");
    assert_eq!(AmazonsRules::default().to_string(), "");
    assert!(
        "size=9"
            .parse::<AmazonsRules>()
            .unwrap_err()
            .to_string()
            .contains("8 or 10")
    );
    assert!("board=8".parse::<AmazonsRules>().is_err());
    let start = Amazons::start_for(rules);
    assert_eq!(start.size(), 8);
    assert_eq!(start.to_string(), "2b2b2/8/b6b/8/8/w6w/8/2w2w2 w");
    assert_eq!(start.turn(), Color::White, "White moves first on 8×8 too");
    // No amazon or arrow goes past h8: the rook slide from a3 stops at a5.
    let moves = start.legal_moves();
    assert!(moves.iter().all(|m| {
        [m.from, m.to, m.arrow]
            .iter()
            .all(|s| s.file() < 8 && s.rank() < 8)
    }));
    assert!(start.parse_move("a3-a5/a4").is_ok());
    let off = start.parse_move("a3-a9/a4").unwrap_err().to_string();
    assert!(off.contains("a9 is off the 8×8 board"), "{off}");
    // A position string of 9 ranks is neither size.
    assert!("8/8/8/8/8/8/8/8/8 w".parse::<Amazons>().is_err());
    // Nothing may stand off the board.
    let beyond = Amazons::sized(8, 1 << 8, 0, 0, Color::White).unwrap_err();
    assert!(beyond.to_string().contains("off the 8×8 board"), "{beyond}");
}

#[test]
fn amazons_on_8x8_the_edge_boxes_in_like_arrows() {
    // White in the top-right corner of 8×8 (h8, g8, h7, g7) behind arrows: no turn, even
    // though on 10×10 the same squares would have room beyond them.
    let text = "5xww/5xww/5xxx/8/8/8/8/b1b1b1b1 w";
    let boxed: Amazons = text.parse().unwrap();
    assert_eq!(boxed.to_string(), text);
    assert!(boxed.legal_moves().is_empty());
    assert_eq!(
        boxed.outcome(AmazonsRules { size: 8 }),
        win(Color::Black, EndReason::NoMoves)
    );
    // The regions are apart: White's none, Black's every other free square.
    assert_eq!(boxed.separated_territory(), Some([64 - 8 - 5, 0]));
}
