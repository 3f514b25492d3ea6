//! The MCTS player's tree: bounded and never moved, narrow and lazy expansion, PUCT, and
//! the subtree kept from one search to the next.

use tourney_rules::{Amazons, Loa, Position};

use super::*;

fn amazons_mcts(width: usize, max_nodes: usize) -> Mcts<Amazons> {
    mcts(width, max_nodes)
}

fn mcts<P: Heuristics>(width: usize, max_nodes: usize) -> Mcts<P> {
    Mcts::new(MctsConfig {
        weights: Default::default(),
        limits: Limits::default(),
        exploration: 0.7,
        playout: Playout::EvalAfter(4),
        bias: 0.0,
        minimax: 0.0,
        solver: true,
        width,
        expand_at: 1,
        puct: 0.0,
        temperature: 100.0,
        seed: 1,
        max_nodes,
    })
}

#[test]
fn the_tree_stays_within_its_memory_and_is_never_moved() {
    let max_nodes = 20_000;
    let mut mcts = amazons_mcts(0, max_nodes);
    // Each Amazons expansion adds up to ~2,000 nodes: the bound is hit at once.
    let limits = Limits {
        nodes: Some(200),
        ..Limits::default()
    };
    let mut game = Game::new(Amazons::start(), Default::default());
    let mut room = None;
    for _ in 0..4 {
        let chosen = mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        assert!(mcts.tree.len() <= max_nodes, "{} nodes", mcts.tree.len());
        assert!(mcts.tree.len() > max_nodes / 2, "the tree was used");
        // Its room is taken once: growing it would copy it (a long pause).
        let now = (mcts.tree.as_ptr(), mcts.tree.capacity());
        assert_eq!(*room.get_or_insert(now), now);
        game.play(chosen.mv).unwrap();
    }
}

#[test]
fn a_narrow_tree_holds_the_best_moves_below_the_root_and_widens_with_visits() {
    let width = 4;
    let mut mcts = amazons_mcts(width, 1 << 20);
    let start = Amazons::start();
    let limits = Limits {
        nodes: Some(400),
        ..Limits::default()
    };
    let game = Game::new(start, Default::default());
    mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
    let w = Default::default();
    let children = |n: &Node<_>| n.first_child as usize..(n.first_child + n.child_count) as usize;
    // The root holds every move, best first; only the first width + sqrt(visits) are tried.
    let root = &mcts.tree[0];
    assert_eq!(root.child_count as usize, start.legal_moves().len());
    let tried = children(root).filter(|&c| mcts.tree[c].visits > 0).count();
    let widest = width + (root.visits as f64).sqrt() as usize;
    assert!(
        tried > width && tried <= widest,
        "{tried} tried, at most {widest}"
    );
    let mut expanded = 0;
    for (i, node) in mcts.tree.iter().enumerate().skip(1) {
        if node.child_count == 0 {
            continue;
        }
        expanded += 1;
        // Below the root: the best `width` by evaluation, best first.
        let mut position = start;
        let mut path = vec![];
        let mut at = i;
        while at != 0 {
            path.push(mcts.tree[at].mv.unwrap());
            at = mcts.tree[at].parent as usize;
        }
        for &mv in path.iter().rev() {
            position.play_unchecked(mv);
        }
        let (best, _) = position.best_moves(&w, width);
        let kept: Vec<_> = children(node).map(|c| mcts.tree[c].mv.unwrap()).collect();
        let expected: Vec<_> = best.iter().map(|&(_, mv)| mv).collect();
        assert_eq!(kept, expected, "at {position}");
    }
    assert!(expanded > 20, "{expanded} nodes expanded below the root");
}

#[test]
fn a_leaf_is_expanded_on_its_expand_at_visit_and_valued_by_its_evaluation_before() {
    for (width, minimax) in [(4, 0.8), (0, 0.8)] {
        let mut mcts = mcts::<Loa>(width, 1 << 20);
        mcts.config.minimax = minimax;
        mcts.config.expand_at = 3;
        let limits = Limits {
            nodes: Some(600),
            ..Limits::default()
        };
        let game = Game::new(Loa::start(), Default::default());
        mcts.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        // Each child's first visit, its evaluation, took no iteration.
        let root = &mcts.tree[0];
        let children = root.first_child as usize..(root.first_child + root.child_count) as usize;
        let visits: u32 = children.map(|c| mcts.tree[c].visits).sum();
        assert_eq!((root.visits, visits), (600, 600 + root.child_count));
        let (mut expanded, mut lazy) = (0, 0);
        for node in mcts.tree.iter().skip(1) {
            if node.child_count > 0 {
                expanded += 1;
                assert!(node.visits >= 3, "expanded after {} visits", node.visits);
            } else if node.visits > 0 && node.proven == UNKNOWN {
                lazy += 1;
                assert!(node.visits < 3, "a leaf visited {} times", node.visits);
                // Its only value is its evaluation, as often as it was visited.
                let mean = node.value / node.visits as f64;
                assert!(
                    (mean - node.prior as f64).abs() < 1e-6,
                    "{mean} {}",
                    node.prior
                );
            }
        }
        assert!(
            expanded > 10 && lazy > 10,
            "{expanded} expanded, {lazy} lazy"
        );
    }
}

/// The most plies from the root to a node of the tree.
fn tree_depth<P: Heuristics>(mcts: &Mcts<P>) -> usize {
    let mut depth = vec![0usize; mcts.tree.len()];
    for i in 1..mcts.tree.len() {
        // Parents come before their children.
        depth[i] = depth[mcts.tree[i].parent as usize] + 1;
    }
    depth.into_iter().max().unwrap_or(0)
}

#[test]
fn puct_gives_children_a_policy_by_their_evaluations_and_searches_deeper_along_it() {
    let game = Game::new(Loa::start(), Default::default());
    let mut depths = vec![];
    for puct in [0.0, 1.0] {
        let mut mcts = mcts::<Loa>(0, 1 << 20);
        mcts.config.minimax = 0.8;
        mcts.config.expand_at = 3;
        mcts.config.puct = puct;
        search(&mut mcts, &game, 10_000);
        depths.push(tree_depth(&mcts));
        if puct == 0.0 {
            continue;
        }
        let mut expanded = 0;
        for node in mcts.tree.iter().filter(|n| n.child_count > 0) {
            expanded += 1;
            let children = &mcts.tree
                [node.first_child as usize..(node.first_child + node.child_count) as usize];
            let sum: f32 = children.iter().map(|c| c.policy).sum();
            assert!((sum - 1.0).abs() < 1e-4, "policies sum to {sum}");
            // Children come best first, so their policies do not grow; a better
            // evaluation has the larger share.
            for pair in children.windows(2) {
                assert!(pair[0].policy >= pair[1].policy, "{pair:?}");
                if pair[0].prior > pair[1].prior + 1e-3 {
                    assert!(pair[0].policy > pair[1].policy, "{pair:?}");
                }
            }
        }
        assert!(expanded > 50, "{expanded} nodes expanded");
    }
    assert!(depths[1] > depths[0], "tree depths UCT, PUCT: {depths:?}");
}

impl<P: Heuristics> Mcts<P> {
    fn child(&self, node: usize, mv: P::Move) -> Option<&Node<P::Move>> {
        Some(&self.tree[self.child_index(node, mv)?])
    }
}

/// Searches `game` for `iterations` iterations.
fn search<P: Heuristics>(
    mcts: &mut Mcts<P>,
    game: &Game<P>,
    iterations: u64,
) -> SearchResult<P::Move> {
    let limits = Limits {
        nodes: Some(iterations),
        ..Limits::default()
    };
    mcts.choose(game, &limits, &AtomicBool::new(false), &mut |_| {})
}

/// The tree reachable from the root is well linked: each child names its parent, its
/// move is legal where it is and held once, a node's visits cover its children's, and
/// the root holds every move. Returns how many nodes it reaches.
fn assert_linked<P: Heuristics>(mcts: &Mcts<P>, root: P) -> usize {
    let mut stack = vec![(0usize, root)];
    let mut reached = 0;
    while let Some((node, position)) = stack.pop() {
        reached += 1;
        let n = &mcts.tree[node];
        let children = n.first_child as usize..(n.first_child + n.child_count) as usize;
        let mut held = std::collections::HashSet::new();
        let mut visits = 0;
        for c in children {
            let child = &mcts.tree[c];
            assert_eq!(child.parent as usize, node);
            let mv = child.mv.unwrap();
            assert!(position.is_legal(mv), "{mv} at {position}");
            assert!(held.insert(mv), "{mv} twice at {position}");
            visits += child.visits;
            let mut next = position;
            next.play_unchecked(mv);
            stack.push((c, next));
        }
        assert!(n.visits >= visits, "{} visits, children {visits}", n.visits);
        if node == 0 {
            assert_eq!(held.len(), position.legal_moves().len(), "at the root");
        }
    }
    reached
}

/// Searches, plays the move chosen and the reply searched most, and searches once more:
/// the new tree is the reply's subtree, with every move at the root.
fn keeps_the_subtree_of_the_reply<P: Heuristics>(width: usize, searched: u64) {
    let mut mcts = mcts::<P>(width, 1 << 20);
    let mut game = Game::new(P::start(), Default::default());
    let chosen = search(&mut mcts, &game, searched);
    let ours = mcts.child(0, chosen.mv).unwrap();
    let reply = (ours.first_child..ours.first_child + ours.child_count)
        .map(|c| &mcts.tree[c as usize])
        .max_by_key(|c| c.visits)
        .unwrap();
    let (reply_move, reply_visits) = (reply.mv.unwrap(), reply.visits);
    assert!(reply_visits > 1, "{reply_visits} visits");
    game.play(chosen.mv).unwrap();
    game.play(reply_move).unwrap();
    search(&mut mcts, &game, 1);
    assert_eq!(mcts.tree[0].visits, reply_visits + 1);
    let legal = game.position().legal_moves().len();
    assert_eq!(mcts.tree[0].child_count as usize, legal);
    assert_linked(&mcts, *game.position());
    // A new game starts a new tree, even from the same position.
    mcts.new_game(2);
    search(&mut mcts, &game, 1);
    assert_eq!(mcts.tree[0].visits, 1);
    assert_eq!(mcts.tree[0].first_child, 1);
}

#[test]
fn the_next_search_starts_from_the_subtree_of_the_position_reached() {
    keeps_the_subtree_of_the_reply::<Loa>(0, 5_000);
    keeps_the_subtree_of_the_reply::<Amazons>(4, 600);
}

#[test]
fn a_tree_kept_move_after_move_stays_linked_and_unrelated_positions_start_afresh() {
    // One player for both sides keeps its tree each ply; a widened root puts children
    // after their own children, which the next compaction must follow.
    let mut mcts = amazons_mcts(4, 1 << 20);
    let mut game = Game::new(Amazons::start(), Default::default());
    let mut kept = 0;
    let mut visits_before = 0;
    for _ in 0..8 {
        let chosen = search(&mut mcts, &game, 150);
        assert_linked(&mcts, *game.position());
        assert_eq!(mcts.tree[0].visits, visits_before + 150);
        kept += usize::from(visits_before > 0);
        // The subtree of the move played is kept when it was expanded.
        let played = mcts.child(0, chosen.mv).unwrap();
        visits_before = if played.child_count > 0 {
            played.visits
        } else {
            0
        };
        game.play(chosen.mv).unwrap();
    }
    assert!(kept >= 6, "the tree was kept in {kept} of 8 searches");
    // The same position again keeps the whole tree, and drops the nodes left behind
    // when the root was widened.
    search(&mut mcts, &game, 50);
    let visits = mcts.tree[0].visits;
    search(&mut mcts, &game, 50);
    assert_eq!(mcts.tree[0].visits, visits + 50);
    assert_eq!(assert_linked(&mcts, *game.position()), mcts.tree.len());
    // A game that did not pass through the last root: a new tree.
    let mut other = Game::new(Amazons::start(), Default::default());
    let first = other.legal_moves()[7];
    other.play(first).unwrap();
    search(&mut mcts, &other, 10);
    assert_eq!(mcts.tree[0].visits, 10);
    assert_linked(&mcts, *other.position());
}
