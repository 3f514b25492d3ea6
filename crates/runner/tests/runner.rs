//! The referee with built-in players, and the engine server driven through its protocol.

use std::io::{Cursor, Write};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tourney_ai::Limits;
use tourney_model::{Termination, TimeControl};
use tourney_rules::{Amazons, Game, Loa, Position};
use tourney_runner::{BuiltIn, Seat, Setup, pair_seats, play_until};

fn game<P: tourney_ai::Heuristics + tourney_runner::Adjudicate>(
    setup: &Setup<P>,
    white: &str,
    black: &str,
) -> tourney_model::GameRecord {
    let mut w = BuiltIn::<P>::new(white).unwrap();
    let mut b = BuiltIn::<P>::new(black).unwrap();
    seated(setup, &mut w, &mut b, &mut |_| ControlFlow::Continue(())).unwrap()
}

/// Plays `setup` between `white` and `black`, seated as "w" and "b".
fn seated<P: tourney_runner::Adjudicate>(
    setup: &Setup<P>,
    white: &mut dyn tourney_runner::Contestant<P>,
    black: &mut dyn tourney_runner::Contestant<P>,
    on_move: &mut dyn FnMut(&Game<P>) -> ControlFlow<()>,
) -> Result<tourney_model::GameRecord, tourney_runner::RefereeError> {
    let white = Seat {
        name: "w".into(),
        player: white,
    };
    let black = Seat {
        name: "b".into(),
        player: black,
    };
    play_until(setup, white, black, on_move)
}

/// Who sits where in each game of a pair, and the colour of the pairing's first engine.
fn seating<P: tourney_ai::Heuristics>() -> Vec<(String, String, tourney_rules::Color)> {
    let mut a = BuiltIn::<P>::new("random").unwrap();
    let mut b = BuiltIn::<P>::new("random").unwrap();
    (0..2)
        .map(|game| {
            let first = Seat {
                name: "first".into(),
                player: &mut a as &mut dyn tourney_runner::Contestant<P>,
            };
            let second = Seat {
                name: "second".into(),
                player: &mut b as &mut dyn tourney_runner::Contestant<P>,
            };
            let (white, black, first_has) = pair_seats(game, first, second);
            (white.name, black.name, first_has)
        })
        .collect()
}

#[test]
fn the_first_engine_of_a_pair_moves_first_in_game_0_and_colours_swap_in_game_1() {
    use tourney_rules::Color::{Black, White};
    let s = |w: &str, b: &str, c| (w.to_string(), b.to_string(), c);
    // LOA: Black moves first.
    assert_eq!(
        seating::<Loa>(),
        vec![s("second", "first", Black), s("first", "second", White)]
    );
    // Amazons: White moves first.
    assert_eq!(
        seating::<Amazons>(),
        vec![s("first", "second", White), s("second", "first", Black)]
    );
}

#[test]
fn a_finished_record_replays_to_its_result() {
    let setup = Setup::<Loa>::new(Default::default());
    let record = game(&setup, "ab:depth=2", "random:seed=4");
    assert_eq!(record.game, tourney_rules::GameKind::Loa);
    assert_eq!(record.start, Loa::start().to_string());
    let mut replay = Game::new(Loa::start(), Default::default());
    for m in &record.moves {
        replay.play_text(&m.mv).unwrap();
    }
    let outcome = replay.outcome().expect("the record ends the game");
    assert_eq!(outcome.result_str(), record.result.as_str());
    assert_eq!(record.termination.name(), outcome.reason.name());
    assert!(record.moves.iter().all(|m| m.nodes.is_some()));
}

#[test]
fn max_plies_draws_and_openings_are_played_first() {
    let mut setup = Setup::<Loa>::new(Default::default());
    setup.max_plies = Some(10);
    let start = Loa::start();
    let first = start.parse_move("b1-b3").unwrap();
    setup.opening = vec![first];
    let record = game(&setup, "random:seed=1", "random:seed=2");
    assert_eq!(record.termination, Termination::MaxPlies);
    assert_eq!(record.result.as_str(), "1/2-1/2");
    assert_eq!(record.moves.len(), 10);
    assert_eq!(record.moves[0].mv, "b1-b3");
    assert_eq!(record.opening_plies, 1);
}

#[test]
fn amazons_adjudication_decides_split_boards() {
    let mut setup = Setup::<Amazons>::new(Default::default());
    setup.adjudicate = true;
    let record = game(&setup, "ab:depth=1", "random:seed=3");
    assert!(
        matches!(
            record.termination,
            Termination::Adjudication | Termination::NoMoves
        ),
        "{:?}",
        record.termination
    );
    // Without adjudication the same kind of game is played out to the end.
    setup.adjudicate = false;
    let full = game(&setup, "random:seed=5", "random:seed=6");
    assert_eq!(full.termination, Termination::NoMoves);
    // A split position is adjudicated at once, for the side with more room.
    let mut split = Setup::<Amazons>::new(Default::default());
    split.adjudicate = true;
    split.start = "3b2b3/10/10/b8b/xxxxxxxxxx/10/w8w/10/10/3w2w3 w"
        .parse()
        .unwrap();
    let record = game(&split, "random", "random");
    assert_eq!(
        (record.termination, record.result.as_str()),
        (Termination::Adjudication, "1-0")
    );
    assert!(record.moves.is_empty());
}

#[test]
fn clocks_and_limits_are_recorded() {
    let mut setup = Setup::<Loa>::new(Default::default());
    setup.time_control = "3+0.05".parse::<TimeControl>().unwrap();
    setup.max_plies = Some(20);
    let record = game(&setup, "ab", "mcts");
    assert_eq!(record.time_control, "3+0.05");
    assert!(
        !record.termination.is_failure(),
        "{:?} {:?}",
        record.termination,
        record.detail
    );
    setup.time_control = TimeControl::Infinite;
    setup.limits = Limits {
        nodes: Some(500),
        ..Limits::default()
    };
    let record = game(&setup, "ab", "mcts");
    assert_eq!(record.time_control, "nodes=500");
    setup.limits = Limits {
        movetime: Some(Duration::from_millis(20)),
        ..Limits::default()
    };
    let record = game(&setup, "ab", "ab");
    assert!(
        record.moves.iter().all(|m| m.time_ms < 200),
        "{:?}",
        record.moves.iter().map(|m| m.time_ms).max()
    );
}

/// Output shared with the server thread.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The lines `tourney engine SPEC` answers `input` with, in tourney's own protocol.
fn serve(spec: &str, input: &str) -> Vec<String> {
    serve_in("tourney", spec, tourney_rules::GameKind::Loa, input)
}

#[test]
fn the_engine_server_speaks_the_protocol() {
    // At the end of the input the running search finishes and answers.
    let lines = serve(
        "ab",
        "ugi\nnewgame loa\nisready\nposition startpos moves b1-b3\ngo depth 3\n",
    );
    assert_eq!(lines[0], "id name tourney ab");
    assert!(lines.contains(&"ugiok".to_string()) && lines.contains(&"readyok".to_string()));
    assert!(
        lines.iter().any(|l| l.starts_with("info depth 3")),
        "{lines:?}"
    );
    let best = lines
        .iter()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap();
    let after = Loa::start()
        .play(Loa::start().parse_move("b1-b3").unwrap())
        .unwrap();
    assert!(after.parse_move(best).is_ok(), "{best}");

    let lines = serve(
        "mcts",
        "ugi\nnewgame amazons\nisready\nposition 3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w moves d1-d7/g7\ngo nodes 200\n",
    );
    let best = lines
        .iter()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap();
    let mut game = Game::new(Amazons::start(), Default::default());
    game.play_text("d1-d7/g7").unwrap();
    assert!(game.position().parse_move(best).is_ok(), "{best}");

    let lines = serve(
        "ab",
        "ugi\nnewgame chess\nisready\nnewgame loa double-connection=sometimes\nisready\n",
    );
    assert!(
        lines.contains(&"error unsupported game chess".to_string()),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("error unsupported") && l.contains("sometimes")),
        "{lines:?}"
    );
    // `stop` answers at once, with the best move found so far.
    let lines = serve(
        "ab",
        "newgame loa\nposition startpos\ngo depth 30\nstop\nquit\n",
    );
    let best = lines
        .iter()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap();
    assert!(Loa::start().parse_move(best).is_ok(), "{best}");
    let lines = serve("ab", "newgame loa\nposition startpos moves z9-z9\n");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("info string error: move 'z9-z9'")),
        "{lines:?}"
    );
}

#[test]
fn the_engine_server_follows_positions_that_extend_branch_and_restart() {
    // Each `position` extends the last, starts another line, or comes from a new start;
    // every answer must be legal where it was asked, for a searching and an inline player.
    let lines_of = |moves: &[&str]| {
        let mut game = Game::new(Loa::start(), Default::default());
        for m in moves {
            game.play_text(m).unwrap();
        }
        game
    };
    let asked: [&[&str]; 5] = [
        &[],
        &["b1-b3"],
        &["b1-b3", "a2-c2"],
        &["c1-c3"],
        &["c1-c3", "a2-c2", "d1-d3"],
    ];
    for spec in ["ab:depth=2", "random"] {
        let mut input = String::from("ugi\nnewgame loa\nisready\n");
        for moves in asked {
            let tail = if moves.is_empty() {
                String::new()
            } else {
                format!(" moves {}", moves.join(" "))
            };
            input += &format!("position startpos{tail}\ngo depth 2\n");
        }
        // A new game of the same kind keeps the player; a position string starts afresh.
        input +=
            "newgame loa\nposition 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w\ngo depth 2\nquit\n";
        let lines = serve(spec, &input);
        let answers: Vec<&str> = lines
            .iter()
            .filter_map(|l| l.strip_prefix("bestmove "))
            .collect();
        assert_eq!(answers.len(), 6, "{spec}: {lines:?}");
        for (moves, best) in asked.iter().zip(&answers) {
            let game = lines_of(moves);
            assert!(
                game.position().parse_move(best).is_ok(),
                "{spec} after {moves:?}: {best}"
            );
        }
        let white: Loa = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w"
            .parse()
            .unwrap();
        assert!(
            white.parse_move(answers[5]).is_ok(),
            "{spec}: {}",
            answers[5]
        );
    }
}

#[test]
fn a_game_seed_varies_seeded_players_and_replays_exactly() {
    let moves = |seed: u64| {
        let mut setup = Setup::<Loa>::new(Default::default());
        setup.seed = seed;
        setup.limits.nodes = Some(64);
        setup.max_plies = Some(80);
        let record = game(&setup, "random:seed=1", "mcts:playout=random,seed=2");
        let moves: Vec<String> = record.moves.iter().map(|m| m.mv.clone()).collect();
        (moves, record.meta.get("seed").and_then(|v| v.as_u64()))
    };
    let (a, seed_a) = moves(11);
    let (again, _) = moves(11);
    let (b, _) = moves(12);
    assert_eq!(a, again, "the same seeds replay the game");
    assert_ne!(a, b, "another game seed, another game");
    assert_eq!(seed_a, Some(11), "the record says its seed");
    let (own, seed_own) = moves(0);
    assert_eq!(
        seed_own, None,
        "seed 0: the players' own seeds, not recorded"
    );
    assert_eq!(own, moves(0).0);
}

#[test]
fn each_side_may_have_its_own_clock_and_limits() {
    let mut setup = Setup::<Loa>::new(Default::default());
    setup.max_plies = Some(16);
    let depth = |d| {
        Some(tourney_runner::SideLimits {
            time_control: TimeControl::Infinite,
            limits: Limits {
                depth: Some(d),
                ..Limits::default()
            },
        })
    };
    setup.sides[tourney_rules::Color::White.index()] = depth(1);
    setup.sides[tourney_rules::Color::Black.index()] = depth(3);
    let record = game(&setup, "ab", "ab");
    assert_eq!(record.time_control, "white depth=1; black depth=3");
    // LOA: Black moves first, so Black has the even plies.
    let depths: Vec<(usize, Option<u32>)> = record
        .moves
        .iter()
        .enumerate()
        .map(|(i, m)| (i % 2, m.depth))
        .collect();
    assert!(
        depths
            .iter()
            .all(|&(side, d)| d == Some(if side == 0 { 3 } else { 1 })),
        "{depths:?}"
    );
    // The same limits for both read as one.
    setup.sides = [depth(2), depth(2)];
    assert_eq!(game(&setup, "ab", "ab").time_control, "depth=2");
    // A clock for one side only: the other is told nothing of it.
    setup.sides = [
        None,
        Some(tourney_runner::SideLimits {
            time_control: "2+0.1".parse().unwrap(),
            limits: Limits::default(),
        }),
    ];
    setup.limits = Limits {
        nodes: Some(200),
        ..Limits::default()
    };
    let record = game(&setup, "ab", "ab");
    assert_eq!(record.time_control, "white 2+0.1; black nodes=200");
    assert!(!record.termination.is_failure(), "{:?}", record.detail);
}

/// A player that plays the first random move at once, giving `score` if any, and keeps
/// what each `go` said.
struct Recorder(Vec<tourney_runner::protocol::Go>, Option<&'static str>);

impl tourney_runner::Contestant<Loa> for Recorder {
    fn spec(&self) -> String {
        "recorder".into()
    }
    fn new_game(
        &mut self,
        _: <Loa as Position>::Rules,
        _: u64,
        _: &[<Loa as Position>::Move],
    ) -> Result<(), tourney_runner::Unfit> {
        Ok(())
    }
    fn go(
        &mut self,
        game: &Game<Loa>,
        go: &tourney_runner::protocol::Go,
        _: Duration,
    ) -> Result<tourney_runner::Reply, tourney_runner::Failure> {
        self.0.push(go.clone());
        Ok(tourney_runner::Reply {
            mv: game.position().random_move(1).unwrap().to_string(),
            nodes: None,
            depth: None,
            score: self.1.map(str::to_string),
            ..Default::default()
        })
    }
}

#[test]
fn a_scaled_clock_gives_each_side_its_time_times_the_factor() {
    let mut setup = Setup::<Loa>::new(Default::default());
    setup.max_plies = Some(4);
    setup.time_control = "10+0.5".parse().unwrap();
    setup.limits.movetime = Some(Duration::from_millis(400));
    setup.clock_scale = 1.5;
    let (mut white, mut black) = (Recorder(Vec::new(), None), Recorder(Vec::new(), None));
    let record = seated(&setup, &mut white, &mut black, &mut |_| {
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(record.termination, Termination::MaxPlies);
    // Black moves first in LOA: its first `go` sees both clocks untouched, scaled.
    let first = &black.0[0];
    assert_eq!(
        (
            first.wtime,
            first.btime,
            first.winc,
            first.binc,
            first.movetime
        ),
        (Some(15_000), Some(15_000), Some(750), Some(750), Some(600))
    );
    assert!(
        white.0[0].btime.unwrap() >= 15_000,
        "black's increment, scaled, came back"
    );
}

#[test]
fn a_game_broken_off_by_its_caller_stops_after_that_move_unrecorded() {
    let setup = Setup::<Loa>::new(Default::default());
    let (mut white, mut black) = (Recorder(Vec::new(), None), Recorder(Vec::new(), None));
    let mut seen = Vec::new();
    let stopped = seated(&setup, &mut white, &mut black, &mut |game| {
        seen.push(game.ply());
        match game.ply() {
            3 => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    });
    assert_eq!(stopped.unwrap_err(), tourney_runner::RefereeError::Stopped);
    // Seen after each of the three moves; no player asked for a fourth.
    assert_eq!(seen, [1, 2, 3]);
    assert_eq!((black.0.len(), white.0.len()), (2, 1));
}

#[test]
fn engines_agreeing_on_the_outcome_end_the_game_and_the_record_proves_it() {
    use tourney_model::adjudication::{DrawRule, PlayedOn, ResignRule, ScoreRules};
    let mut settings = tourney_model::job::GameSettings {
        tournament_name: "t".into(),
        game: tourney_rules::GameKind::Loa,
        rules: String::new(),
        time_control: TimeControl::Infinite,
        nodes: Some(1),
        depth: None,
        movetime_ms: None,
        max_plies: Some(40),
        adjudicate: false,
        margin_ms: 100,
        engine_limits: Default::default(),
        engine_logs: Default::default(),
        engine_openings: false,
        scale_by_speed: false,
        score_rules: ScoreRules {
            resign: Some(ResignRule {
                score: 600,
                moves: 2,
            }),
            draw: Some(DrawRule {
                score: 10,
                moves: 3,
                after: 20,
            }),
            play_on: 0,
        },
    };
    let play_with =
        |settings: &tourney_model::job::GameSettings, white: &'static str, black: &'static str| {
            let setup = Setup::<Loa>::from_settings(settings).unwrap();
            let (mut w, mut b) = (
                Recorder(Vec::new(), Some(white)),
                Recorder(Vec::new(), Some(black)),
            );
            seated(&setup, &mut w, &mut b, &mut |_| ControlFlow::Continue(())).unwrap()
        };
    // White sees itself 7 up, Black sees itself 7 down: two moves each, then White wins.
    let record = play_with(&settings, "cp 700", "cp -700");
    assert_eq!(
        (
            record.termination,
            record.result.as_str(),
            record.moves.len()
        ),
        (Termination::Adjudication, "1-0", 4)
    );
    assert!(
        record.detail.as_deref().unwrap().starts_with("resign: "),
        "{:?}",
        record.detail
    );
    let summary = |r: &tourney_model::GameRecord| -> tourney_model::GameSummary {
        serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap()
    };
    let start = record.start.clone();
    let scored = [tourney_model::check::Side {
        limits: None,
        reports_scores: true,
    }; 2];
    assert_eq!(
        tourney_model::check::check(&record, &start, &settings, scored),
        Ok(())
    );
    // Scores from a player that reports none (`random`) are not believed.
    let mut unscored = scored;
    unscored[1].reports_scores = false;
    assert!(matches!(
        tourney_model::check::check(&record, &start, &settings, unscored),
        Err(tourney_model::check::Rejection::Scores(_))
    ));
    // A record whose scores do not call it, or call it otherwise, is refused.
    let mut doctored = record.clone();
    doctored.moves[1].score = Some("cp 100".into());
    assert!(tourney_model::check::check(&doctored, &start, &settings, scored).is_err());
    let mut reversed = record.clone();
    reversed.result = tourney_model::GameResult::BlackWins;
    assert!(tourney_model::check::check(&reversed, &start, &settings, scored).is_err());
    // Even scores draw, but not before ply 20.
    let record = play_with(&settings, "cp 3", "cp -2");
    assert_eq!(
        (
            record.termination,
            record.result.as_str(),
            record.moves.len()
        ),
        (Termination::Adjudication, "1/2-1/2", 20)
    );
    assert_eq!(
        tourney_model::check::check(&record, &start, &settings, scored),
        Ok(())
    );
    // Played on (every game: the share is 10,000 in 10,000), the record is the same
    // adjudicated game, and its meta says how it really ended.
    let mut sampled = settings.clone();
    sampled.score_rules.play_on = 10_000;
    let played_on = play_with(&sampled, "cp 700", "cp -700");
    assert_eq!(
        (
            played_on.termination,
            played_on.result.as_str(),
            played_on.moves.len()
        ),
        (Termination::Adjudication, "1-0", 4)
    );
    let meta = |key: &str| played_on.meta.get(key).cloned();
    let total = match meta("played_on_plies") {
        Some(tourney_model::MetaValue::Number(n)) => n,
        other => panic!("{other:?}"),
    };
    assert!(total > 4, "played on past ply 4: {total}");
    assert!(meta("played_on").is_some() && meta("played_on_end").is_some());
    let summary_of = summary(&played_on);
    let expected = match meta("played_on") {
        Some(tourney_model::MetaValue::Text(t)) if t == "1-0" => PlayedOn::Agreed,
        Some(_) => PlayedOn::Overturned,
        None => unreachable!(),
    };
    assert_eq!(summary_of.played_on(), expected);
    assert_eq!(
        tourney_model::check::check(&played_on, &start, &sampled, scored),
        Ok(())
    );
    // With none sampled, nothing is played on.
    sampled.score_rules.play_on = 0;
    let not = play_with(&sampled, "cp 700", "cp -700");
    assert!(!not.meta.contains_key("played_on"));
    assert_eq!(summary(&not).played_on(), PlayedOn::No);
    // A share picks games by their seeds: about that share of them.
    sampled.score_rules.play_on = 2_500;
    let picked = (1..=4000u64)
        .filter(|&s| sampled.score_rules.plays_on(s))
        .count();
    assert!((850..1150).contains(&picked), "{picked} of 4000 at 25 %");

    // Without the rules the same record is refused, and the game plays on.
    settings.score_rules = ScoreRules::default();
    assert!(tourney_model::check::check(&record, &start, &settings, scored).is_err());
    assert_ne!(
        play_with(&settings, "cp 3", "cp -2").termination,
        Termination::Adjudication
    );
}

#[test]
fn the_engine_server_answers_bench_with_the_player_s_signature() {
    let signature = |spec: &str, game: &str| -> (u64, u64) {
        let lines = serve(spec, &format!("ugi\nbench {game}\nisready\n"));
        let at = lines
            .iter()
            .position(|l| l.starts_with("bench "))
            .expect("a bench line");
        assert_eq!(lines[at + 1], "readyok", "bench answers before isready");
        let words: Vec<&str> = lines[at].split_whitespace().collect();
        assert_eq!((words[1], words[3]), ("nodes", "nps"), "{}", lines[at]);
        (words[2].parse().unwrap(), words[4].parse().unwrap())
    };
    let (nodes, nps) = signature("ab", "loa");
    let spec = "ab".parse().unwrap();
    let own = tourney_ai::bench::bench::<tourney_rules::Loa>(&spec).unwrap();
    assert_eq!(nodes, own.nodes, "the built-in player's bench");
    assert!(nps > 0);
    assert_eq!(signature("ab", "loa").0, nodes, "the same every time");
    assert_ne!(signature("ab:connectedness=80", "loa").0, nodes);
    let amazons = tourney_ai::bench::bench::<tourney_rules::Amazons>(&spec).unwrap();
    assert_eq!(signature("ab", "amazons").0, amazons.nodes);
    // Without a game: the last newgame's, else LOA.
    let lines = serve("ab", "newgame amazons\nbench\n");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("bench nodes {} ", amazons.nodes))),
        "{lines:?}"
    );
    let lines = serve("ab", "bench chess\nisready\n");
    assert!(lines[0].contains("unknown game"), "{lines:?}");
}

fn serve_in(dialect: &str, spec: &str, game: tourney_rules::GameKind, input: &str) -> Vec<String> {
    let out = Shared::default();
    tourney_runner::engine_server::serve_dialect(
        &spec.parse().unwrap(),
        dialect.parse().unwrap(),
        game,
        Cursor::new(input.to_string()),
        Box::new(out.clone()),
    )
    .unwrap();
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    text.lines().map(String::from).collect()
}

#[test]
fn the_engine_server_speaks_uci_with_compact_moves() {
    let lines = serve_in(
        "uci",
        "ab",
        tourney_rules::GameKind::Loa,
        "uci\nisready\nucinewgame\nposition startpos moves b1b3 a2c2\ngo depth 2\n",
    );
    assert!(lines.contains(&"uciok".to_string()), "{lines:?}");
    let best = lines
        .iter()
        .find_map(|l| l.strip_prefix("bestmove "))
        .unwrap();
    assert!(
        !best.contains('-') && !best.contains('x') && best.len() == 4,
        "{best}"
    );
    // Over (Black's one piece is connected): `bestmove (none)`.
    let lines = serve_in(
        "uci",
        "random",
        tourney_rules::GameKind::Loa,
        "uci\nucinewgame\nposition fen 8/8/8/3b4/8/8/8/w7 w\ngo depth 1\n",
    );
    assert!(lines.contains(&"bestmove (none)".to_string()), "{lines:?}");
}

#[test]
fn the_engine_server_speaks_ugi_and_answers_queries() {
    let lines = serve_in(
        "ugi",
        "ab:depth=1",
        tourney_rules::GameKind::Loa,
        "ugi\nuginewgame\nposition startpos\nquery p1turn\nquery gameover\nquery result\n\
         go p1time 5000 p2time 5000 p1inc 0 p2inc 0\n",
    );
    assert!(lines.contains(&"ugiok".to_string()));
    // LOA: Black moves first, and is p1.
    let responses: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("response "))
        .collect();
    assert_eq!(responses, ["true", "false", "none"]);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("bestmove ") && l.contains('-')),
        "{lines:?}"
    );
    let amazons = serve_in(
        "ugi",
        "random",
        tourney_rules::GameKind::Amazons,
        "ugi\nuginewgame\nposition startpos\nquery p1turn\n",
    );
    assert!(
        amazons.contains(&"response true".to_string()),
        "White moves first: {amazons:?}"
    );
}
