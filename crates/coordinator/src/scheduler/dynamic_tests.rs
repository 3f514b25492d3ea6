//! The formats whose pairings are made as results come in, through the scheduler: a Swiss
//! round waits for the one before, a bracket's match for its players, a grouped test sends
//! its pairs to the leading take, and a restart in the middle resumes each exactly.

use tourney_model::tournament::TournamentConfig;
use tourney_stats::takes::{Dropped, TakeState, Verdict};

use super::*;

/// A tournament of `engines` built-in engines `e0`, `e1`, ...
fn config(format: &str, engines: usize, extra: &str) -> TournamentConfig {
    let mut text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"{format}\"\n{extra}\nlimits = {{ nodes = 100 }}\n"
    );
    for i in 0..engines {
        text += &format!("[[engine]]\nname = \"e{i}\"\nplayer = \"random\"\n");
    }
    TournamentConfig::parse(&text, "t.toml").unwrap()
}

/// Leases all that is on offer to one worker now.
fn lease_all(s: &mut Scheduler) -> Vec<Assignment> {
    s.lease("w#1", 1000, 0, &|_| true)
        .map_or_else(Vec::new, |(_, a)| a)
}

/// The engines of each assignment.
fn boards(assignments: &[Assignment]) -> Vec<(usize, usize)> {
    assignments.iter().map(|a| (a.first, a.second)).collect()
}

/// The outcome of an assignment with `half_points` to its first engine.
fn scored(a: &Assignment, half_points: [u8; 2]) -> (TournamentId, PairOutcome) {
    let outcome = PairOutcome {
        pair: a.pair,
        first: a.first,
        second: a.second,
        half_points,
        white: [a.first, a.second],
    };
    (a.tournament, outcome)
}

/// The outcome of an assignment when the lower engine index wins both games.
fn lower_wins(a: &Assignment) -> (TournamentId, PairOutcome) {
    scored(a, if a.first < a.second { [2, 2] } else { [0, 0] })
}

/// Reports `out` with the lower index winning, then what is handed out next, until
/// nothing is: the tournament played to its end.
fn play_out(s: &mut Scheduler, mut out: Vec<Assignment>) {
    while !out.is_empty() {
        let results: Vec<_> = out.iter().map(lower_wins).collect();
        s.report("w#1", &results, 0);
        out = lease_all(s);
    }
}

/// The scheduler after a restart: the same tournament with its completed pairs read back.
fn restarted(s: &Scheduler, id: TournamentId) -> Scheduler {
    let t = s.tournament(id).unwrap();
    let mut again = Scheduler::new(1000);
    again.add(
        id,
        t.config.clone(),
        t.state,
        t.counted().collect::<Vec<_>>(),
    );
    again
}

fn swiss(s: &Scheduler) -> &tourney_plan::swiss::Swiss {
    match s.tournament(1).unwrap().planner() {
        Some(Planner::Swiss(swiss)) => swiss,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_swiss_round_is_paired_when_the_last_one_is_complete_and_a_restart_resumes_it() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("swiss", 8, "rounds = 3"), State::Queued, vec![]);
    let round = lease_all(&mut s);
    assert_eq!(boards(&round), [(0, 4), (1, 5), (2, 6), (3, 7)]);
    assert!(
        round.iter().all(|a| a.opening == a.pair),
        "each pair its own opening"
    );
    assert!(lease_all(&mut s).is_empty(), "round 2 waits for round 1");
    let results: Vec<_> = round.iter().map(lower_wins).collect();
    s.report("w#1", &results[..3], 0);
    assert!(lease_all(&mut s).is_empty());
    s.report("w#1", &results[3..], 0);
    // Round 2 pairs the winners {0, 1, 2, 3} and the losers.
    let round = lease_all(&mut s);
    assert_eq!(boards(&round), [(0, 2), (1, 3), (4, 6), (5, 7)]);
    // The first and third boards of round 2 are in; the coordinator restarts.
    let results: Vec<_> = round.iter().map(lower_wins).collect();
    s.report("w#1", &[results[0], results[2]], 0);
    let mut again = restarted(&s, 1);
    assert_eq!(swiss(&again).played.len(), 2);
    assert_eq!(swiss(&again).standings(), swiss(&s).standings());
    // The rest of round 2 is handed out again with the same engines, under new numbers
    // past the highest completed pair; the second board's number, below it, is void.
    let rest = lease_all(&mut again);
    assert_eq!(boards(&rest), [(1, 3), (5, 7)]);
    assert!(rest.iter().all(|a| a.pair > round[2].pair));
    let (ack, _) = again.report("w#1", &[lower_wins(&round[1])], 0);
    assert_eq!(ack.accepted, 0, "a void pair's result is refused");
    // Played to the end: three rounds, engine 0 first with every game won.
    play_out(&mut again, rest);
    let t = again.tournament(1).unwrap();
    assert_eq!(t.state, State::Finished);
    let standings = swiss(&again).standings();
    assert_eq!((standings[0].engine, standings[0].points), (0, 12));
    assert_eq!(swiss(&again).played.len(), 3);
    assert_eq!(
        t.pairs_done(),
        12,
        "every pairing once, the void number beside them"
    );
}

#[test]
fn a_knockout_starts_each_match_when_its_players_are_known_and_resumes_after_a_restart() {
    let mut s = Scheduler::new(1000);
    s.add(1, config("knockout", 5, "pairs = 2"), State::Queued, vec![]);
    // Seeds 1, 2 and 3 have byes; 4 against 5 plays, and so does 2 against 3 at once.
    let first = lease_all(&mut s);
    assert_eq!(boards(&first), [(3, 4), (3, 4), (1, 2), (1, 2)]);
    // 4-5 is in: seed 1 meets its winner before 2-3 is decided.
    s.report("w#1", &[lower_wins(&first[0]), lower_wins(&first[1])], 0);
    let next = lease_all(&mut s);
    assert_eq!(boards(&next), [(0, 3), (0, 3)]);
    s.report("w#1", &[lower_wins(&first[2])], 0);
    let mut again = restarted(&s, 1);
    // The pair of 2-3 that was out is handed out again; 1-4 stays out for its worker.
    let redo = lease_all(&mut again);
    assert_eq!(boards(&redo), [(0, 3), (0, 3), (1, 2)]);
    play_out(&mut again, redo);
    let t = again.tournament(1).unwrap();
    assert_eq!(t.state, State::Finished);
    let Some(Planner::Knockout(bracket)) = t.planner() else {
        panic!()
    };
    assert_eq!(bracket.champion(), Some(0));
    assert_eq!(t.pairs_done(), 8, "four matches of two pairs");
}

#[test]
fn a_grouped_test_sends_pairs_to_its_leader_accepts_one_take_and_resumes_exactly() {
    let mut s = Scheduler::new(1000);
    let sprt = "sprt = { elo0 = 0.0, elo1 = 20.0, alpha = 0.05, beta = 0.05, max_pairs = 100000 }";
    s.add(1, config("takes", 4, sprt), State::Queued, vec![]);
    // Take 2 (engine 3) wins a pair in three; the others split every game.
    let result = |a: &Assignment| match (a.first, a.pair % 3) {
        (3, 0) => scored(a, [2, 2]),
        _ => scored(a, [1, 1]),
    };
    let mut per_take = [0u64; 4];
    let mut snapshot = None;
    for round in 0.. {
        // Eight pairs at a time, as a worker leases them.
        let Some((_, batch)) = s.lease("w#1", 8, 0, &|_| true) else {
            break;
        };
        for a in &batch {
            assert_eq!(a.second, 0, "every pair against the base");
            per_take[a.first] += 1;
        }
        let results: Vec<_> = batch.iter().map(result).collect();
        s.report("w#1", &results, 0);
        if round == 5 {
            snapshot = Some(restarted(&s, 1));
        }
    }
    let t = s.tournament(1).unwrap();
    assert_eq!(t.state, State::Finished);
    let Some(Planner::Takes { group, .. }) = t.planner() else {
        panic!()
    };
    assert_eq!(group.verdict(), Verdict::Accepted(2));
    assert_eq!(group.takes[0].state, TakeState::Dropped);
    assert!(
        matches!(
            group.takes[0].dropped,
            Some(Dropped::H0 | Dropped::Beaten(2))
        ),
        "{:?}",
        group.takes[0].dropped
    );
    assert!(
        per_take[3] > per_take[1] + per_take[2],
        "the leader gets most pairs: {per_take:?}"
    );
    // A restart reads the completed pairs back into the same group.
    let again = restarted(&s, 1);
    let Some(Planner::Takes {
        group: read_back, ..
    }) = again.tournament(1).unwrap().planner()
    else {
        panic!()
    };
    assert_eq!(read_back, group);
    // And one from the middle went on as if nothing happened.
    let mut middle = snapshot.unwrap();
    let Some(Planner::Takes { group: g, .. }) = middle.tournament(1).unwrap().planner() else {
        panic!()
    };
    assert_eq!(g.verdict(), Verdict::Continue);
    assert!(!lease_all(&mut middle).is_empty());
}

/// The pool's planner of tournament 1.
fn pool(s: &Scheduler) -> &super::Pool {
    match s.tournament(1).unwrap().planner() {
        Some(Planner::Pool(pool)) => pool,
        other => panic!("{other:?}"),
    }
}

/// Plays `a` in `world` (the first engine White in game 0): its outcome.
fn simulated(
    world: &mut tourney_stats::pool::simulate::World,
    a: &Assignment,
) -> (TournamentId, PairOutcome) {
    use tourney_stats::GameResult::{BlackWins, Draw, WhiteWins};
    let half = |r, white| match (r, white) {
        (Draw, _) => 1,
        (WhiteWins, true) | (BlackWins, false) => 2,
        _ => 0,
    };
    let first = half(world.game(a.first, a.second), true);
    let second = half(world.game(a.second, a.first), false);
    scored(a, [first, second])
}

/// Leases `batch` pairs at a time and reports them played in `world`, `rounds` times;
/// returns the pairings in pair order.
fn play_pool(
    s: &mut Scheduler,
    world: &mut tourney_stats::pool::simulate::World,
    batch: usize,
    rounds: usize,
) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for _ in 0..rounds {
        let (_, out) = s.lease("w#1", batch, 0, &|_| true).unwrap();
        let results: Vec<_> = out.iter().map(|a| simulated(world, a)).collect();
        s.report("w#1", &results, 0);
        pairs.extend(boards(&out));
    }
    pairs
}

#[test]
fn a_pool_pairs_close_members_most_keeps_every_member_played_and_never_ends() {
    use tourney_stats::pool::simulate::World;
    let mut s = Scheduler::new(1000);
    s.add(1, config("pool", 6, ""), State::Queued, vec![]);
    // Six versions 120 Elo apart: a pair of neighbours tells more than one of a mismatch.
    let mut world = World::new(vec![0.0, 120.0, 240.0, 360.0, 480.0, 600.0], 7);
    let pairs = play_pool(&mut s, &mut world, 4, 100);
    let t = s.tournament(1).unwrap();
    assert_eq!((t.state, t.pairs_done()), (State::Running, 400));
    assert!(t.has_work(), "a pool never ends by itself");
    let between = |a: usize, b: usize| {
        (pairs.iter())
            .filter(|&&p| p == (a.min(b), a.max(b)))
            .count()
    };
    // The top version is rated against its neighbours, not the versions far below it.
    let (near, far) = (between(5, 4) + between(5, 3), between(5, 0) + between(5, 1));
    assert!(near > 3 * far, "near {near}, far {far}");
    // The floor: in every window of 48 pairs (8 a member) each member plays at least about
    // a quarter of its even share (48 · 2 / 6 · 0.25 = 4).
    for window in pairs.windows(48).skip(48) {
        for k in 0..6 {
            let played = window.iter().filter(|&&(i, j)| i == k || j == k).count();
            assert!(played >= 3, "member {k} starved: {played} of 48");
        }
    }
    // The ratings, relative to the first engine, in the true order.
    let ratings = &pool(&s).ratings;
    assert_eq!(ratings.elo[0], 0.0);
    assert!(
        ratings.elo.windows(2).all(|w| w[0] < w[1]),
        "{:?}",
        ratings.elo
    );
    assert!(ratings.worst_interval() < 80.0, "{:?}", ratings.interval);
    // A budget ends it.
    let mut capped = Scheduler::new(1000);
    let budget = config("pool", 3, "pool = { max_pairs = 6 }");
    capped.add(1, budget, State::Queued, vec![]);
    play_pool(&mut capped, &mut world, 3, 2);
    assert_eq!(capped.tournament(1).unwrap().state, State::Finished);
}

#[test]
fn a_pool_stops_pairing_a_member_that_loses_every_game_once_its_score_is_decisive() {
    use tourney_stats::pool::simulate::World;
    let mut s = Scheduler::new(1000);
    s.add(1, config("pool", 4, ""), State::Queued, vec![]);
    // Three close versions and a random player that loses every game: its rating is only
    // a bound, whose interval stays about as wide however many games it loses.
    let mut world = World::new(vec![0.0, 15.0, 30.0, -3000.0], 5);
    let pairs = play_pool(&mut s, &mut world, 4, 100);
    let ratings = &pool(&s).ratings;
    let with_loser = pairs.iter().filter(|&&(i, j)| i == 3 || j == 3).count();
    // Once it is out of the others' reach, what it plays is the floor's (a quarter of an
    // even share of pairs, 2 / 4 · 0.25 = 1 in 8), not the pool's choice: the close
    // versions' pairings get the rest (without that rule it was in 383 of the 400).
    assert!(
        with_loser * 4 <= pairs.len(),
        "the loser in {with_loser} of {} pairs",
        pairs.len()
    );
    let last = &pairs[pairs.len() - 200..];
    let late = last.iter().filter(|&&(i, j)| i == 3 || j == 3).count();
    assert!(
        (20..=last.len() / 6).contains(&late),
        "in {late} of the last 200 pairs"
    );
    // Their ratings got the pairs.
    assert!(
        ratings.interval[1..3].iter().all(|&w| w < 60.0),
        "{:?}",
        ratings.interval
    );
}

#[test]
fn a_pool_restarted_from_its_completed_pairs_pairs_exactly_as_before() {
    use tourney_stats::pool::simulate::World;
    let mut s = Scheduler::new(1000);
    s.add(1, config("pool", 4, ""), State::Queued, vec![]);
    let mut world = World::new(vec![0.0, 30.0, 60.0, 250.0], 11);
    // Reported out of order within each lease, as workers do.
    for _ in 0..25 {
        let (_, out) = s.lease("w#1", 5, 0, &|_| true).unwrap();
        let mut results: Vec<_> = out.iter().map(|a| simulated(&mut world, a)).collect();
        results.reverse();
        s.report("w#1", &results, 0);
    }
    let mut again = restarted(&s, 1);
    assert_eq!(
        pool(&again).ratings,
        pool(&s).ratings,
        "the same fit, bit for bit"
    );
    assert_eq!(pool(&again).counted(), 125);
    // The next assignments are the same, lease after lease.
    for _ in 0..4 {
        let (_, before) = s.lease("w#1", 7, 0, &|_| true).unwrap();
        let (_, after) = again.lease("w#1", 7, 0, &|_| true).unwrap();
        assert_eq!(boards(&before), boards(&after));
        assert_eq!(
            before.iter().map(|a| a.pair).collect::<Vec<_>>(),
            after.iter().map(|a| a.pair).collect::<Vec<_>>()
        );
        let results: Vec<_> = before.iter().map(|a| simulated(&mut world, a)).collect();
        s.report("w#1", &results, 0);
        again.report("w#1", &results, 0);
        assert_eq!(pool(&again).ratings, pool(&s).ratings);
    }
    // Pairs out at a restart, past the last completed one, are handed out again under
    // the same numbers, with the same engines.
    let (_, out) = s.lease("w#1", 3, 0, &|_| true).unwrap();
    let mut later = restarted(&s, 1);
    let (_, next) = later.lease("w#1", 3, 0, &|_| true).unwrap();
    assert_eq!(boards(&next), boards(&out));
    assert_eq!(next[0].pair, out[0].pair);
    assert_eq!(pool(&later).pending(), 3);
    // Excluding a host's pairs refits without them; counting them again gives the fit back.
    let (fit, counted) = (pool(&later).ratings.clone(), pool(&later).counted());
    let played: Vec<u64> = (0..10).collect();
    later.set_excluded(1, "w", true, &played);
    assert_eq!(pool(&later).counted(), counted - 10);
    assert_ne!(pool(&later).ratings, fit);
    later.set_excluded(1, "w", false, &played);
    assert_eq!(pool(&later).counted(), counted);
    assert_eq!(pool(&later).ratings, fit);
}

#[test]
fn a_version_joins_a_running_pool_when_the_pairs_before_it_are_counted_and_again_after_a_restart() {
    use tourney_model::tournament::EngineEntry;
    use tourney_stats::pool::simulate::World;
    let member = |name: &str| EngineEntry {
        name: name.into(),
        player: Some("random".into()),
        ..EngineEntry::default()
    };
    let mut s = Scheduler::new(1000);
    s.add(1, config("pool", 3, ""), State::Queued, vec![]);
    let mut world = World::new(vec![0.0, 40.0, 80.0, 300.0, 20.0], 5);
    play_pool(&mut s, &mut world, 4, 10);
    // Three pairs out when e3 joins: it is a member from pair 43, once 40..43 are counted.
    let (_, out) = s.lease("w#1", 3, 0, &|_| true).unwrap();
    assert_eq!(s.join_pool(1, member("e3")), Some(43));
    assert_eq!(pool(&s).ratings.len(), 3);
    let (_, meanwhile) = s.lease("w#1", 6, 0, &|_| true).unwrap();
    assert!(boards(&meanwhile).iter().all(|&(a, b)| a.max(b) < 3));
    let results: Vec<_> = (out.iter().chain(&meanwhile))
        .map(|a| simulated(&mut world, a))
        .collect();
    s.report("w#1", &results, 0);
    assert_eq!(pool(&s).ratings.len(), 4);
    // The newcomer is paired (the floor and its wide interval see to it) and rated.
    let pairs = play_pool(&mut s, &mut world, 4, 15);
    assert!(pairs.iter().filter(|&&(a, b)| a == 3 || b == 3).count() >= 10);
    assert!(pool(&s).ratings.elo[3] > pool(&s).ratings.elo[2]);
    // A second joins with nothing out: a member at once.
    assert_eq!(s.join_pool(1, member("e4")), Some(109));
    assert_eq!(pool(&s).ratings.len(), 5);
    play_pool(&mut s, &mut world, 4, 5);
    // A restart admits each at the same point of the chain of fits: the same ratings, bit
    // for bit, and the same next pairs.
    let mut again = restarted(&s, 1);
    assert_eq!(pool(&again).ratings, pool(&s).ratings);
    for _ in 0..3 {
        let (_, before) = s.lease("w#1", 5, 0, &|_| true).unwrap();
        let (_, after) = again.lease("w#1", 5, 0, &|_| true).unwrap();
        assert_eq!(boards(&before), boards(&after));
        let results: Vec<_> = before.iter().map(|a| simulated(&mut world, a)).collect();
        s.report("w#1", &results, 0);
        again.report("w#1", &results, 0);
        assert_eq!(pool(&again).ratings, pool(&s).ratings);
    }
    // Only a pool takes engines while it runs; an ended one takes none.
    let mut other = Scheduler::new(1000);
    other.add(
        1,
        config("round-robin", 3, "rounds = 1"),
        State::Queued,
        vec![],
    );
    other.add(2, config("swiss", 4, "rounds = 2"), State::Queued, vec![]);
    assert_eq!(other.join_pool(2, member("e4")), None);
    assert_eq!(other.join_pool(1, member("e3")), None);
    assert!(s.cancel(1));
    assert_eq!(s.join_pool(1, member("e5")), None);
}

#[test]
fn a_gated_pool_promotes_a_stronger_version_refuses_a_weaker_one_and_restarts_the_same() {
    use tourney_model::tournament::EngineEntry;
    use tourney_stats::pool::simulate::World;
    let member = |name: &str| EngineEntry {
        name: name.into(),
        player: Some("random".into()),
        ..EngineEntry::default()
    };
    let gate = "pool = { gate = { sprt = { elo0 = 0, elo1 = 60, model = \"logistic\" } } }";
    let mut s = Scheduler::new(1000);
    s.add(1, config("pool", 2, gate), State::Queued, vec![]);
    let mut world = World::new(vec![0.0, 250.0, -200.0, 500.0], 3);
    let gate_of = |s: &Scheduler| pool(s).gate().unwrap().clone();
    // e1 plays its gate against the anchor, pair after pair, and passes.
    assert_eq!(gate_of(&s).wants(), Some((1, 0)));
    let pairs = play_pool(&mut s, &mut world, 2, 40);
    let g = gate_of(&s);
    assert_eq!((g.best, g.decisions.len()), (1, 1), "{g:?}");
    let decided = g.decisions[0].pairs as usize;
    assert!(pairs[..decided].iter().all(|&p| p == (1, 0)));
    // A weaker version is refused, a stronger one promoted, each against the best then.
    s.join_pool(1, member("e2"));
    play_pool(&mut s, &mut world, 2, 60);
    s.join_pool(1, member("e3"));
    play_pool(&mut s, &mut world, 2, 60);
    let g = gate_of(&s);
    let verdicts: Vec<_> = (g.decisions.iter())
        .map(|d| (d.candidate, d.against, d.promoted))
        .collect();
    assert_eq!(verdicts, [(1, 0, true), (2, 1, false), (3, 1, true)]);
    assert_eq!((g.best, g.open.clone()), (3, None));
    // After the gates, every member is paired in the pool again.
    let after = play_pool(&mut s, &mut world, 4, 30);
    assert!((0..4).all(|k| after.iter().any(|&(a, b)| a == k || b == k)));
    // A restart decides the same gates at the same pairs.
    let again = restarted(&s, 1);
    assert_eq!(gate_of(&again).decisions, gate_of(&s).decisions);
    assert_eq!(gate_of(&again).best, 3);
}
