//! The built-in players as a referee sees them: legal moves, reproducible choices under
//! node and depth limits, wins found, limits kept, specs checked.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tourney_ai::{Clock, Heuristics, Limits, Player, PlayerSpec, Score, budget};
use tourney_rules::loa::Move as LoaMove;
use tourney_rules::{Amazons, Game, Loa, Position};

fn choose<P: Heuristics>(
    spec: &str,
    game: &Game<P>,
    limits: Limits,
) -> tourney_ai::SearchResult<P::Move> {
    let mut player = spec.parse::<PlayerSpec>().unwrap().build::<P>().unwrap();
    player.choose(game, &limits, &AtomicBool::new(false), &mut |_| {})
}

/// A game after `plies` random moves.
fn random_game<P: Position>(seed: u64, plies: usize) -> Game<P> {
    let mut game = Game::new(P::start(), Default::default());
    let mut state = seed;
    for _ in 0..plies {
        if game.outcome().is_some() {
            break;
        }
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mv = game.position().random_move(state).unwrap();
        game.play(mv).unwrap();
    }
    game
}

const SPECS: [&str; 10] = [
    "random:seed=3",
    "ab:depth=2",
    "ab:depth=4,order=2,prune=6",
    "mcts:nodes=300",
    "mcts:nodes=200,playout=eval2,bias=1",
    "mcts:nodes=200,width=3,c=0.3",
    "mcts:nodes=200,width=0,minimax=0",
    "mcts:nodes=200,expand=1",
    "mcts:nodes=200,puct=0",
    "mcts:nodes=200,puct=1,temp=300",
];

#[test]
fn every_player_returns_legal_moves() {
    for seed in 0..6 {
        let loa: Game<Loa> = random_game(seed, 10 + seed as usize * 15);
        let amazons: Game<Amazons> = random_game(seed, 5 + seed as usize * 12);
        for spec in SPECS {
            if loa.outcome().is_none() {
                let r = choose(spec, &loa, Limits::default());
                assert!(
                    loa.position().is_legal(r.mv),
                    "{spec}: {} in {}",
                    r.mv,
                    loa.position()
                );
            }
            if amazons.outcome().is_none() {
                // Amazons has up to 2,176 moves a position: shallower.
                let spec = spec
                    .replace("ab:depth=2", "ab:depth=1")
                    .replace("ab:depth=4", "ab:depth=2");
                let r = choose(&spec, &amazons, Limits::default());
                assert!(
                    amazons.position().is_legal(r.mv),
                    "{spec}: {} in {}",
                    r.mv,
                    amazons.position()
                );
            }
        }
    }
}

#[test]
fn node_and_depth_limits_make_choices_reproducible() {
    let game: Game<Loa> = random_game(11, 20);
    for spec in [
        "ab:depth=4",
        "ab:nodes=5000",
        "mcts:nodes=800,seed=5",
        "random:seed=9",
    ] {
        let a = choose(spec, &game, Limits::default());
        let b = choose(spec, &game, Limits::default());
        assert_eq!(a.mv, b.mv, "{spec}");
        assert_eq!(a.info.nodes, b.info.nodes, "{spec}");
    }
    let amazons: Game<Amazons> = random_game(3, 10);
    let a = choose("ab:depth=1", &amazons, Limits::default());
    let b = choose("ab:depth=1", &amazons, Limits::default());
    assert_eq!(a.mv, b.mv);
}

#[test]
fn alpha_beta_and_mcts_find_an_immediate_connection() {
    // From the oracle's connection cases: Black f2-f4 joins its pieces and wins.
    let position: Loa = "w7/6bb/6bw/1w3b2/8/8/2w2b2/1w2w3 b".parse().unwrap();
    let game = Game::new(position, Default::default());
    let winning: Vec<_> = position
        .legal_moves()
        .into_iter()
        .filter(|&m| {
            position
                .play(m)
                .unwrap()
                .outcome(Default::default())
                .is_some_and(|o| o.winner == Some(position.turn()))
        })
        .collect();
    assert!(!winning.is_empty(), "test position needs a winning move");
    let ab = choose("ab:depth=3", &game, Limits::default());
    assert!(winning.contains(&ab.mv), "ab chose {}", ab.mv);
    assert_eq!(ab.info.score, Some(Score::Win(1)));
    let mcts = choose("mcts:nodes=2000", &game, Limits::default());
    assert!(winning.contains(&mcts.mv), "mcts chose {}", mcts.mv);
}

/// Four plies from `position` back to it that begin with `first`: each side steps a piece
/// away and back.
fn away_and_back(position: Loa, first: LoaMove) -> Option<[LoaMove; 4]> {
    let back = |mv| match mv {
        LoaMove::Step {
            from,
            to,
            capture: false,
        } => Some(LoaMove::Step {
            from: to,
            to: from,
            capture: false,
        }),
        _ => None,
    };
    let after_first = position.play(first).ok()?;
    after_first.legal_moves().into_iter().find_map(|reply| {
        let plies = [first, reply, back(first)?, back(reply)?];
        let end = plies[1..]
            .iter()
            .try_fold(after_first, |p, &mv| p.play(mv).ok())?;
        (end == position).then_some(plies)
    })
}

/// The depth-1 choice of `ab` at `position` after `plies` from it, which return to it.
fn ab_after(position: Loa, plies: &[LoaMove]) -> tourney_ai::SearchResult<LoaMove> {
    let mut game = Game::new(position, Default::default());
    for &mv in plies {
        game.play(mv).unwrap();
    }
    assert!(
        *game.position() == position,
        "the plies return to the start"
    );
    choose("ab:depth=1", &game, Limits::default())
}

#[test]
fn alpha_beta_scores_a_return_to_an_earlier_position_as_a_draw() {
    // Black's pieces are all but joined; White's are scattered, so every White move scores
    // below zero. Once both sides have stepped away and back, White's step away would
    // repeat the position after it: a draw, which the losing side now prefers.
    let losing: Loa = "b7/8/8/3bbb2/3bbb2/3bbb2/8/w1w1w1ww w".parse().unwrap();
    let fresh = ab_after(losing, &[]);
    assert!(
        matches!(fresh.info.score, Some(Score::Cp(s)) if s < 0),
        "the test position must be losing for White: {:?}",
        fresh.info.score
    );
    let (away, plies) = losing
        .legal_moves()
        .into_iter()
        .filter(|&mv| mv != fresh.mv)
        .find_map(|mv| away_and_back(losing, mv).map(|plies| (mv, plies)))
        .expect("a White step that both sides can take back");
    let repeated = ab_after(losing, &plies);
    assert_eq!(repeated.mv, away);
    assert_eq!(repeated.info.score, Some(Score::Cp(0)));

    // The winning side, the colours swapped, avoids the step that would repeat.
    let winning: Loa = "w7/8/8/3www2/3www2/3www2/8/b1b1b1bb w".parse().unwrap();
    let fresh = ab_after(winning, &[]);
    assert!(
        matches!(fresh.info.score, Some(Score::Cp(s)) if s > 0),
        "the test position must be winning for White: {:?}",
        fresh.info.score
    );
    let plies = away_and_back(winning, fresh.mv).expect("the best step can be taken back");
    let repeated = ab_after(winning, &plies);
    assert_ne!(repeated.mv, fresh.mv);
    assert!(matches!(repeated.info.score, Some(Score::Cp(s)) if s > 0));
}

#[test]
fn a_search_stopped_inside_an_iteration_plays_that_iterations_better_move() {
    // Games where two plies choose another move than one.
    let games: Vec<Game<Loa>> = (0..40)
        .map(|seed| random_game(seed, 16))
        .filter(|g| {
            choose("ab:depth=1", g, Limits::default()).mv
                != choose("ab:depth=2", g, Limits::default()).mv
        })
        .take(3)
        .collect();
    assert!(!games.is_empty());
    for game in &games {
        let shallow = choose("ab:depth=1", game, Limits::default());
        let deep = choose("ab:depth=2", game, Limits::default());
        // Node limits that end the search inside its second iteration: once depth 2's
        // choice has been searched and beaten the first move, it is played.
        let mut played_deeper = false;
        for nodes in shallow.info.nodes + 1..deep.info.nodes {
            let r = choose(&format!("ab:nodes={nodes}"), game, Limits::default());
            assert_eq!(r.info.pv[0], r.mv);
            if r.mv == deep.mv {
                played_deeper = true;
                assert_eq!(r.info.depth, 2);
            } else if r.mv != shallow.mv {
                // Another move better than depth 1's, for now: searched to depth 2 too.
                assert_eq!(r.info.depth, 2, "nodes={nodes}");
            }
        }
        assert!(played_deeper, "{}", game.position());
    }
}

/// The nodes `spec` searches, summed over positions of random games of `P`.
fn nodes_over_games<P: Heuristics>(spec: &str, plies: usize) -> u64 {
    (1..=6)
        .map(|seed| {
            let game: Game<P> = random_game(seed, plies);
            choose(spec, &game, Limits::default()).info.nodes
        })
        .sum()
}

#[test]
fn pruning_searches_fewer_nodes_and_keeps_forced_wins() {
    // The same depth costs fewer nodes with null moves and with reverse futility pruning.
    for (pruned, full) in [
        ("ab:depth=5", "ab:depth=5,null=off"),
        ("ab:depth=5", "ab:depth=5,rfp=0"),
    ] {
        let (with, without) = (
            nodes_over_games::<Loa>(pruned, 12),
            nodes_over_games::<Loa>(full, 12),
        );
        assert!(with < without, "{pruned}: {with} nodes, {full}: {without}");
    }
    let (with, without) = (
        nodes_over_games::<Amazons>("ab:depth=3,rfp=400", 10),
        nodes_over_games::<Amazons>("ab:depth=3", 10),
    );
    assert!(with < without, "rfp=400: {with} nodes, without: {without}");
    // A win in one is still found (no pruning at the root, none against a mate score).
    let position: Loa = "w7/6bb/6bw/1w3b2/8/8/2w2b2/1w2w3 b".parse().unwrap();
    let game = Game::new(position, Default::default());
    for spec in ["ab:depth=5", "ab:depth=5,rfp=1", "ab:depth=5,asp=1"] {
        let found = choose(spec, &game, Limits::default());
        assert_eq!(found.info.score, Some(Score::Win(1)), "{spec}");
    }
}

#[test]
fn aspiration_windows_widen_until_the_score_is_inside() {
    // A window of 1 either side fails low or high at nearly every iteration; the searches
    // again with wider windows must end with the full window's move and score.
    let mut same = 0;
    for seed in 1..=8 {
        let game: Game<Loa> = random_game(seed, 12);
        let full = choose("ab:depth=4,asp=0", &game, Limits::default());
        let narrow = choose("ab:depth=4,asp=1", &game, Limits::default());
        same += usize::from(full.mv == narrow.mv && full.info.score == narrow.info.score);
    }
    assert!(same >= 6, "{same} of 8 alike");
}

#[test]
fn limits_are_kept() {
    let game: Game<Loa> = random_game(2, 30);
    let r = choose(
        "ab",
        &game,
        Limits {
            nodes: Some(3000),
            ..Limits::default()
        },
    );
    assert!(r.info.nodes <= 3000, "{}", r.info.nodes);
    let started = Instant::now();
    let r = choose(
        "ab",
        &game,
        Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        },
    );
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    assert!(r.info.depth >= 2);
    let started = Instant::now();
    let amazons: Game<Amazons> = random_game(2, 4);
    choose(
        "mcts",
        &amazons,
        Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        },
    );
    assert!(
        started.elapsed() < Duration::from_millis(400),
        "{:?}",
        started.elapsed()
    );
    // The spec's own limit combines with the given one: the tighter wins.
    let r = choose(
        "ab:depth=2",
        &game,
        Limits {
            depth: Some(5),
            ..Limits::default()
        },
    );
    assert_eq!(r.info.depth, 2);
}

#[test]
fn stop_flag_ends_a_search() {
    let game: Game<Loa> = random_game(4, 10);
    let mut player = "ab".parse::<PlayerSpec>().unwrap().build::<Loa>().unwrap();
    let stop = AtomicBool::new(true);
    let started = Instant::now();
    let r = player.choose(
        &game,
        &Limits {
            depth: Some(40),
            ..Limits::default()
        },
        &stop,
        &mut |_| {},
    );
    assert!(started.elapsed() < Duration::from_millis(500));
    assert!(game.position().is_legal(r.mv));
}

#[test]
fn spec_errors_list_the_accepted_keys() {
    let err = "ab:dept=3"
        .parse::<PlayerSpec>()
        .unwrap()
        .build::<Loa>()
        .err()
        .unwrap();
    assert!(
        err.0.contains("unknown key 'dept'")
            && err.0.contains("depth")
            && err.0.contains("concentration"),
        "{err}"
    );
    let err = "mcts:playout=fast"
        .parse::<PlayerSpec>()
        .unwrap()
        .build::<Amazons>()
        .err()
        .unwrap();
    assert!(err.0.contains("expected random or evalN"), "{err}");
    for (spec, expected) in [
        ("ab:prune=-3", "ab: prune=-3 is not a whole number"),
        ("mcts:solver=yes", "mcts: solver=yes: expected on or off"),
        (
            "ab:null=sometimes",
            "ab: null=sometimes: expected on or off",
        ),
        ("ab:rfp=-1", "ab: rfp=-1 is not a margin of 0 to 65535"),
        ("mcts:width=wide", "mcts: width=wide is not a whole number"),
        (
            "mcts:expand=0",
            "mcts: expand=0: expected a visit count from 1",
        ),
        (
            "mcts:expand=-1",
            "mcts: expand=-1 is not a visit count from 1",
        ),
        (
            "mcts:puct=-1",
            "mcts: puct=-1: expected 0 (UCT) or a positive weight",
        ),
        (
            "mcts:temp=0",
            "mcts: temp=0: expected a positive temperature",
        ),
        (
            "mcts:temp=NaN",
            "mcts: temp=NaN: expected a positive temperature",
        ),
        ("mcts:puct=high", "mcts: puct=high is not a number"),
    ] {
        let err = spec.parse::<PlayerSpec>().unwrap().build::<Loa>().err();
        assert_eq!(err.map(|e| e.0).as_deref(), Some(expected), "{spec}");
    }
    assert!("alpha:depth=3".parse::<PlayerSpec>().is_err());
    assert!("ab:depth".parse::<PlayerSpec>().is_err());
    let ok: PlayerSpec = "ab:depth=6,concentration=30,tt=8".parse().unwrap();
    assert!(ok.build::<Loa>().is_ok());
    assert_eq!(ok.to_string(), "ab:depth=6,concentration=30,tt=8");
    assert!(
        "ab:territory=120"
            .parse::<PlayerSpec>()
            .unwrap()
            .build::<Amazons>()
            .is_ok()
    );
    assert!(
        "ab:territory=120"
            .parse::<PlayerSpec>()
            .unwrap()
            .build::<Loa>()
            .is_err()
    );
}

#[test]
fn weights_change_the_player() {
    // With every weight at zero but tempo, the evaluation is flat: the choice differs from
    // the default player's in at least one of several positions.
    let flat =
        "ab:depth=2,concentration=0,centralisation=0,com=0,quads=0,connectedness=0,mobility=0";
    let differs = (0..8).any(|seed| {
        let game: Game<Loa> = random_game(seed, 12);
        game.outcome().is_none()
            && choose(flat, &game, Limits::default()).mv
                != choose("ab:depth=2", &game, Limits::default()).mv
    });
    assert!(differs);
}

/// Plays `games` games between two specs, alternating colours; returns the first's points.
fn match_points<P: Heuristics>(a: &str, b: &str, games: usize) -> f64 {
    let mut points = 0.0;
    for g in 0..games {
        let mut game: Game<P> = random_game(100 + g as u64 / 2, 2);
        let mut players = [a, b].map(|s| s.parse::<PlayerSpec>().unwrap().build::<P>().unwrap());
        let a_is_first = g % 2 == 0;
        let first_mover = game.position().turn();
        while game.outcome().is_none() && game.ply() < 400 {
            let to_move = game.position().turn();
            let idx = usize::from((to_move == first_mover) != a_is_first);
            let r = players[idx].choose(
                &game,
                &Limits::default(),
                &AtomicBool::new(false),
                &mut |_| {},
            );
            game.play(r.mv).unwrap();
        }
        let a_color = if a_is_first {
            first_mover
        } else {
            first_mover.opponent()
        };
        points += match game.outcome().and_then(|o| o.winner) {
            Some(w) if w == a_color => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
    }
    points
}

#[test]
fn searching_players_beat_random_play() {
    assert!(match_points::<Loa>("ab:depth=2", "random", 6) >= 5.5);
    assert!(match_points::<Amazons>("ab:depth=1", "random", 4) >= 3.5);
    assert!(match_points::<Loa>("mcts:nodes=300", "random", 4) >= 3.5);
}

/// The processor time this thread has used. Players search on the caller's thread, so
/// this is what a move cost, less the time a loaded machine gave to other processes.
fn thread_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(read, 0, "the thread's clock");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// The longest one move of `spec` took under `limits`, in processor time: over a few
/// positions along random games, one player asked at each in turn (its tree or table
/// reused), then over the first plies of a game it plays against itself (what it keeps
/// from one move to the next, an MCTS tree, carried along as in a tournament).
fn slowest<P: Heuristics>(spec: &str, limits: &Limits) -> Duration {
    let build = || spec.parse::<PlayerSpec>().unwrap().build::<P>().unwrap();
    let timed = |player: &mut Box<dyn Player<P>>, game: &Game<P>| {
        let started = thread_time();
        let chosen = player.choose(game, limits, &AtomicBool::new(false), &mut |_| {});
        (thread_time() - started, chosen.mv)
    };
    let mut player = build();
    let mut slowest = (1..=4)
        .map(|seed| timed(&mut player, &random_game::<P>(seed, 6 * seed as usize)).0)
        .max()
        .unwrap();
    let mut players = [build(), build()];
    let mut game = Game::<P>::new(P::start(), Default::default());
    for ply in 0..4 {
        let (took, mv) = timed(&mut players[ply % 2], &game);
        slowest = slowest.max(took);
        game.play(mv).unwrap();
    }
    slowest
}

#[test]
fn every_player_answers_within_its_movetime_and_its_clock_budget_in_both_games() {
    // The goal is 10 ms past the budget on an idle core. Timed in processor time, a move
    // is not stretched by a loaded machine (where the player stops early by the wall
    // clock); the bound is still generous, but a search that checks its clock too rarely
    // (an Amazons MCTS that overran by 250 ms) fails it.
    let slack = Duration::from_millis(90);
    let movetime = Limits {
        movetime: Some(Duration::from_millis(100)),
        ..Limits::default()
    };
    // A clock of 3 s for the rest of the game: the player's own hard limit of it (300 ms)
    // bounds every move.
    let clock = Limits {
        clock: Some(Clock {
            time: Duration::from_secs(3),
            increment: Duration::ZERO,
            moves_to_go: None,
        }),
        ..Limits::default()
    };
    let hard = budget(&clock).unwrap().hard;
    for spec in ["ab", "mcts", "random"] {
        for (limits, bound) in [(&movetime, Duration::from_millis(100)), (&clock, hard)] {
            for (game, took) in [
                ("loa", slowest::<Loa>(spec, limits)),
                ("amazons", slowest::<Amazons>(spec, limits)),
            ] {
                assert!(
                    took < bound + slack,
                    "{spec} in {game} took {took:?} under {limits:?}"
                );
            }
        }
    }
}

#[test]
fn players_tell_the_memory_they_hold() {
    let build = |spec: &str| spec.parse::<PlayerSpec>().unwrap().build::<Loa>().unwrap();
    // Alpha-beta holds its transposition table: at most the MiB asked for, at least half.
    for mib in [1usize, 16] {
        let bytes = build(&format!("ab:tt={mib}")).memory();
        assert!(bytes <= mib << 20 && bytes > mib << 19, "tt={mib}: {bytes}");
    }
    assert_eq!(build("random").memory(), 0);
    // MCTS holds its tree, which grows with the search and stays for the next move.
    let mut mcts = build("mcts:nodes=2000");
    let before = mcts.memory();
    let game = random_game::<Loa>(5, 6);
    mcts.choose(
        &game,
        &Limits::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    );
    assert!(
        mcts.memory() > before + 2000 * 16,
        "{before} {}",
        mcts.memory()
    );
}
