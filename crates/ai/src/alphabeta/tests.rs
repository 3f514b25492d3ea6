//! Tests of the alpha-beta player's search internals.

use super::*;
use tourney_rules::amazons::Move;
use tourney_rules::{Amazons, Position};

#[test]
fn moves_below_the_root_are_ordered_by_evaluation_and_pruned() {
    let mut player = amazons_player();
    let stop = AtomicBool::new(false);
    let mut search = Search::new(
        &mut player,
        Default::default(),
        &stop,
        u64::MAX,
        Instant::now(),
        None,
        Vec::new(),
    );
    let position = Amazons::start();
    let all = position.legal_moves().len();
    let value = |mv| {
        let mut child = position;
        child.play_unchecked(mv);
        -child.evaluate(&Default::default())
    };
    // Below the root, from the ordering depth: the best seven by evaluation, best first.
    let pruned: Vec<_> = search.ordered_moves(&position, None, 1, 2).collect();
    assert_eq!(pruned.len(), 7);
    // Every evaluation counts towards the next reading of the clock.
    assert_eq!(search.work, all as u64);
    let values: Vec<i32> = pruned.iter().map(|&mv| value(mv)).collect();
    assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    let best = position.legal_moves().into_iter().map(value).max().unwrap();
    assert_eq!(values[0], best);
    // The root keeps every move; so does a node nearer the leaves than the ordering depth.
    assert_eq!(search.ordered_moves(&position, None, 0, 2).count(), all);
    let mut nearer = search.ordered_moves(&position, None, 1, 1);
    let mut count = 0;
    while search.next_move(&mut nearer, &position, 1).is_some() {
        count += 1;
    }
    assert_eq!(count, all);
}

#[test]
fn tt_move_and_killers_come_first_and_are_generated_only_if_needed() {
    let mut player = amazons_player();
    let position = Amazons::start();
    let legal = position.legal_moves();
    let (tt, killer, other) = (legal[500], legal[7], legal[1000]);
    let mut moved = position;
    moved.play_unchecked(legal[0]);
    // A killer from a sibling that is not legal here (the other side's move).
    let illegal = moved.legal_moves()[0];
    assert!(!position.is_legal(illegal));
    player.killers[1] = [Some(illegal), Some(killer)];
    player.history[<Amazons as Heuristics>::move_index(other)] = 5;
    let stop = AtomicBool::new(false);
    let mut search = search_with(&mut player, &stop, Duration::from_secs(10));
    let mut moves = search.ordered_moves(&position, Some(tt), 1, 1);
    let mut order = Vec::new();
    while let Some(mv) = search.next_move(&mut moves, &position, 1) {
        // The first two need no generation.
        assert_eq!(moves.generated, order.len() >= 2, "{order:?}");
        order.push(mv);
    }
    // TT move, the legal killer, then by history (of the amazon's step: `other` and its
    // other arrows), ties in generation order.
    let step = |mv: &Move| (mv.from, mv.to);
    let mut rest: Vec<_> = legal
        .iter()
        .filter(|&&mv| mv != tt && mv != killer)
        .collect();
    rest.sort_by_key(|&mv| step(mv) != step(&other));
    let expected: Vec<_> = [tt, killer]
        .into_iter()
        .chain(rest.into_iter().copied())
        .collect();
    assert_eq!(order, expected);
}

/// Amazons' `ab` ordering by evaluation from 2 plies from the leaves, the best 7 kept.
fn amazons_player() -> AlphaBeta<Amazons> {
    AlphaBeta::<Amazons>::new(AbConfig {
        weights: Default::default(),
        limits: Limits::default(),
        tt_megabytes: 1,
        eval_order: 2,
        prune: 7,
        null_move: true,
        futility: 0,
        aspiration: 0,
    })
}

/// A search from now with `left` until its deadline.
fn search_with<'a>(
    player: &'a mut AlphaBeta<Amazons>,
    stop: &'a AtomicBool,
    left: Duration,
) -> Search<'a, Amazons> {
    let now = Instant::now();
    let rules = Default::default();
    Search::new(
        player,
        rules,
        stop,
        u64::MAX,
        now,
        Some(now + left),
        Vec::new(),
    )
}

#[test]
fn a_ranking_that_would_end_past_the_deadline_is_not_begun() {
    let position = Amazons::start();
    let stop = AtomicBool::new(false);
    let mut player = amazons_player();
    // Rankings took 50 ms lately, and 20 ms are left: the search ends at once.
    player.ranking = Duration::from_millis(50);
    let mut search = search_with(&mut player, &stop, Duration::from_millis(20));
    assert!(search.ordered_moves(&position, None, 1, 2).next().is_none());
    assert!(search.aborted);
    // The node whose ranking was not begun is discarded, not stored as a bound.
    let mut search = search_with(&mut player, &stop, Duration::from_millis(20));
    assert_eq!(search.negamax(&position, 3, -INFINITY, INFINITY, 0), 0);
    assert!(search.aborted);
    assert!(player.table.probe(position.zobrist_hash()).is_none());
}

#[test]
fn the_cost_of_a_ranking_is_learned_and_fades() {
    let position = Amazons::start();
    let all = position.legal_moves().len();
    let stop = AtomicBool::new(false);
    let mut player = amazons_player();
    // Unknown at first: the ranking runs, and its time is remembered.
    let mut search = search_with(&mut player, &stop, Duration::from_secs(10));
    assert_eq!(search.ordered_moves(&position, None, 0, 2).count(), all);
    assert!(!search.aborted);
    assert!(player.ranking > Duration::ZERO);
    // A slow ranking long ago fades by a sixteenth with each faster one.
    player.ranking = Duration::from_secs(1);
    let mut search = search_with(&mut player, &stop, Duration::from_secs(10));
    assert_eq!(search.ordered_moves(&position, None, 0, 2).count(), all);
    let faded = Duration::from_secs(1) * 15 / 16;
    assert!(player.ranking >= faded && player.ranking < Duration::from_secs(1));
}
