//! Alpha-beta: iterative deepening, principal-variation search with late move reductions
//! and null-move pruning, a transposition table keyed by the rules core's Zobrist hash,
//! and move ordering by TT move, captures, killers and history. The stop flag, the node
//! limit and the clock are polled during the search; a search stopped inside an iteration
//! plays the best root move that iteration has searched, the last one's best first.

mod picker;
mod tt;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tourney_rules::{Game, GameKind};

use crate::eval::Heuristics;
use crate::limits::{Limits, budget};
use crate::{Player, Score, SearchInfo, SearchResult, combine_limits};
use picker::Buffers;
use tt::{Bound, Entry, Table};

/// Scores at or beyond this are forced wins (`WIN - plies`).
const WIN: i32 = 1_000_000;
const MATE_BOUND: i32 = WIN - 10_000;
const INFINITY: i32 = WIN + 1;
const MAX_PLY: usize = 128;
/// How often (in nodes and evaluations) the clock and the stop flag are looked at: in
/// Amazons about a millisecond of work, against some 25 ns to read the clock.
const POLL_EVERY: u64 = 256;

/// The deepest remaining depth at which reverse futility pruning cuts a node.
const FUTILITY_DEPTH: u32 = 3;

/// The plies a null move's search is shallower by, beside the ply of the null move: 2,
/// and 3 from depth 7 up.
fn null_reduction(depth: u32) -> u32 {
    if depth >= 7 { 3 } else { 2 }
}

/// Settings of the alpha-beta player.
#[derive(Debug, Clone)]
pub(crate) struct AbConfig<W> {
    pub(crate) weights: W,
    pub(crate) limits: Limits,
    pub(crate) tt_megabytes: usize,
    /// From this remaining depth up, moves after the TT move are ordered by the static
    /// evaluation of the position they lead to (0: never).
    pub(crate) eval_order: u32,
    /// Below the root, where moves are ordered by evaluation, only this many are searched
    /// (0: all).
    pub(crate) prune: usize,
    /// Null-move pruning: at a null-window node whose evaluation is at least beta, the
    /// other side moving twice searched `NULL_REDUCTION` plies shallower still fails high.
    pub(crate) null_move: bool,
    /// Reverse futility pruning's margin a ply (0: off): a null-window node at most
    /// `FUTILITY_DEPTH` plies from the leaves whose evaluation is at least beta plus the
    /// margin times its depth fails high unsearched.
    pub(crate) futility: i32,
    /// The root's aspiration window either side of the last iteration's score (0: the
    /// full window).
    pub(crate) aspiration: i32,
}

impl<W: Default> AbConfig<W> {
    /// The defaults for `game`, with default weights, no limits and a 16 MiB table.
    /// Amazons: its hundreds of moves ordered by evaluation 3 plies or more from the
    /// leaves, and the best 10 searched below the root (183-0-117, +78 Elo at 50 ms a move
    /// against searching all; experiments/strength/README.md). LOA: neither.
    pub(crate) fn for_game(game: GameKind) -> Self {
        let (eval_order, prune) = match game {
            GameKind::Loa => (0, 0),
            GameKind::Amazons => (3, 10),
        };
        // Null moves: +16 ± 14 Elo in LOA at 20,000 nodes a move; in Amazons, whose pruned
        // search decides most pairs by their opening, 0 ± 22 (experiments/strength/raised/README.md).
        let null_move = game == GameKind::Loa;
        // Reverse futility pruning: +64 ± 27 Elo in LOA at 20,000 nodes a move
        // (experiments/strength/raised/README.md).
        let futility = if game == GameKind::Loa { 60 } else { 0 };
        // Aspiration windows: +37 ± 20 Elo in LOA at 20,000 nodes a move (the same file).
        let aspiration = if game == GameKind::Loa { 30 } else { 0 };
        AbConfig {
            weights: W::default(),
            limits: Limits::default(),
            tt_megabytes: 16,
            eval_order,
            prune,
            null_move,
            futility,
            aspiration,
        }
    }
}

/// The alpha-beta player.
pub(crate) struct AlphaBeta<P: Heuristics> {
    config: AbConfig<P::Weights>,
    table: Table<P::Move>,
    history: Vec<i32>,
    killers: Vec<[Option<P::Move>; 2]>,
    /// The move picker's buffers for each ply.
    move_lists: Vec<Buffers<P::Move>>,
    /// About the longest a ranking of moves by evaluation took lately (the clock is not read
    /// during one): a ranking is not begun with less time than this left.
    ranking: Duration,
}

impl<P: Heuristics> AlphaBeta<P> {
    pub(crate) fn new(config: AbConfig<P::Weights>) -> Self {
        AlphaBeta {
            table: Table::new(config.tt_megabytes),
            config,
            history: vec![0; P::MOVE_INDICES],
            killers: vec![[None; 2]; MAX_PLY + 1],
            move_lists: vec![Buffers::default(); MAX_PLY + 1],
            ranking: Duration::ZERO,
        }
    }
}

/// The state of one search.
struct Search<'a, P: Heuristics> {
    player: &'a mut AlphaBeta<P>,
    rules: P::Rules,
    stop: &'a AtomicBool,
    node_limit: u64,
    deadline: Option<Instant>,
    started: Instant,
    nodes: u64,
    /// Nodes and positions evaluated to order moves since the clock was last read.
    work: u64,
    seldepth: u32,
    aborted: bool,
    /// Hashes of the positions before the current one: game history, then the search path.
    path: Vec<u64>,
    /// The best root move of the iteration in progress and its score, once one is searched.
    root_best: Option<(P::Move, i32)>,
    /// The last finished iteration's best move, searched first at the root.
    root_first: Option<P::Move>,
    /// The node being entered is the answer to a null move (no second in a row).
    after_null: bool,
}

impl<'a, P: Heuristics> Search<'a, P> {
    /// A search by `player` begun at `started`: bounded by `node_limit` nodes and the
    /// `deadline`, stopped by `stop`, with `path` the hashes of the game's earlier positions.
    fn new(
        player: &'a mut AlphaBeta<P>,
        rules: P::Rules,
        stop: &'a AtomicBool,
        node_limit: u64,
        started: Instant,
        deadline: Option<Instant>,
        path: Vec<u64>,
    ) -> Self {
        Search {
            player,
            rules,
            stop,
            node_limit,
            deadline,
            started,
            nodes: 0,
            work: 0,
            seldepth: 0,
            aborted: false,
            path,
            root_best: None,
            root_first: None,
            after_null: false,
        }
    }

    fn out_of_time(&mut self) -> bool {
        if self.aborted {
            return true;
        }
        if self.nodes >= self.node_limit {
            self.aborted = true;
        } else if self.work >= POLL_EVERY {
            self.work = 0;
            let late = self.deadline.is_some_and(|d| Instant::now() >= d);
            self.aborted = late || self.stop.load(Ordering::Relaxed);
        }
        self.aborted
    }

    /// The score of a decided position for its side to move, `ply` plies from the root.
    fn decided(&self, position: &P, ply: usize) -> Option<i32> {
        position.outcome(self.rules).map(|o| match o.winner {
            None => 0,
            Some(w) if w == position.turn() => WIN - ply as i32,
            Some(_) => -(WIN - ply as i32),
        })
    }

    fn negamax(&mut self, position: &P, depth: u32, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        if self.out_of_time() {
            return 0;
        }
        self.nodes += 1;
        self.work += 1;
        self.seldepth = self.seldepth.max(ply as u32);
        if let Some(score) = self.decided(position, ply) {
            return score;
        }
        let hash = position.zobrist_hash();
        if P::REPEATS && ply > 0 && self.path.contains(&hash) {
            return 0;
        }
        if depth == 0 || ply >= MAX_PLY {
            return position.evaluate(&self.player.config.weights);
        }
        let entry = self.player.table.probe(hash);
        if let Some(e) = entry
            && ply > 0
            && e.depth as u32 >= depth
            && beta - alpha == 1
        {
            let score = from_tt(e.score, ply);
            match e.bound {
                Bound::Exact => return score,
                Bound::Lower if score >= beta => return score,
                Bound::Upper if score <= alpha => return score,
                _ => {}
            }
        }
        let after_null = std::mem::take(&mut self.after_null);
        let config = &self.player.config;
        let pruning = ply > 0 && beta - alpha == 1 && beta.abs() < MATE_BOUND;
        let futile = pruning && config.futility > 0 && depth <= FUTILITY_DEPTH;
        let null = pruning && config.null_move && !after_null && depth >= 3;
        let eval = if futile || null {
            position.evaluate(&config.weights)
        } else {
            0
        };
        // Reverse futility: a node this far above beta, this near the leaves, fails high.
        if futile && eval - config.futility * depth as i32 >= beta {
            return beta;
        }
        if null && eval >= beta {
            // The other side to move again: if that is still at least beta, so is a move.
            let passed = position.pass_turn();
            self.path.push(hash);
            self.after_null = true;
            let reduced = depth - 1 - null_reduction(depth).min(depth - 1);
            let score = -self.negamax(&passed, reduced, -beta, -beta + 1, ply + 1);
            self.after_null = false;
            self.path.pop();
            if self.aborted {
                return 0;
            }
            if score >= beta {
                return beta;
            }
        }
        // At the root the last iteration's best move goes first even if the table lost it,
        // so that a move chosen from an unfinished iteration has been compared with it.
        let first = match self.root_first {
            Some(mv) if ply == 0 => Some(mv),
            _ => entry.and_then(|e| e.mv),
        };
        let mut moves = self.ordered_moves(position, first, ply, depth);
        if self.aborted {
            self.give_back(moves, ply);
            return 0;
        }
        let original_alpha = alpha;
        let mut best = -INFINITY;
        let mut best_move = None;
        self.path.push(hash);
        let mut i = 0;
        while let Some(mv) = self.next_move(&mut moves, position, ply) {
            let mut child = *position;
            child.play_unchecked(mv);
            let score = if i == 0 {
                -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1)
            } else {
                // Late moves (after the TT move, captures and killers, by history) are
                // searched shallower first, and again at full depth if they beat alpha.
                let reduction = late_move_reduction(depth, i, position.is_capture(mv));
                let mut probe =
                    -self.negamax(&child, depth - 1 - reduction, -alpha - 1, -alpha, ply + 1);
                if reduction > 0 && probe > alpha && !self.aborted {
                    probe = -self.negamax(&child, depth - 1, -alpha - 1, -alpha, ply + 1);
                }
                if probe > alpha && probe < beta {
                    -self.negamax(&child, depth - 1, -beta, -alpha, ply + 1)
                } else {
                    probe
                }
            };
            if self.aborted {
                self.path.pop();
                self.give_back(moves, ply);
                return 0;
            }
            i += 1;
            if score > best {
                best = score;
                best_move = Some(mv);
                // Inside the root's window: an exact score, better than the moves before.
                if ply == 0 && score > alpha {
                    self.root_best = Some((mv, score));
                }
            }
            if score > alpha {
                alpha = score;
            }
            if alpha >= beta {
                if !position.is_capture(mv) {
                    let killers = &mut self.player.killers[ply];
                    if killers[0] != Some(mv) {
                        killers[1] = killers[0];
                        killers[0] = Some(mv);
                    }
                    let h = &mut self.player.history[P::move_index(mv)];
                    *h = (*h + (depth * depth) as i32).min(1 << 30);
                }
                break;
            }
        }
        self.give_back(moves, ply);
        self.path.pop();
        let bound = if best >= beta {
            Bound::Lower
        } else if best > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.player.table.store(Entry {
            key: hash,
            score: to_tt(best, ply),
            mv: best_move,
            depth: depth.min(255) as u8,
            bound,
            generation: 0,
        });
        best
    }

    /// The root searched to `depth`: in a window of the `aspiration` margin either side of
    /// the `last` iteration's score, widened (the margin doubled) on the side a search
    /// falls outside of until the score is inside; the full window without a last score or
    /// margin, or near a win.
    fn aspiration(&mut self, root: &P, depth: u32, last: Option<i32>) -> i32 {
        let mut margin = self.player.config.aspiration;
        let (mut alpha, mut beta) = match last {
            Some(last) if margin > 0 && last.abs() < MATE_BOUND => (last - margin, last + margin),
            _ => (-INFINITY, INFINITY),
        };
        loop {
            self.root_best = None;
            let score = self.negamax(root, depth, alpha, beta, 0);
            if self.aborted || (alpha < score && score < beta) {
                return score;
            }
            margin = margin.saturating_mul(2);
            if score <= alpha {
                alpha = score.saturating_sub(margin);
                if alpha <= -MATE_BOUND {
                    alpha = -INFINITY;
                }
            } else {
                beta = score.saturating_add(margin);
                if beta >= MATE_BOUND {
                    beta = INFINITY;
                }
            }
        }
    }

    /// The principal variation from the transposition table.
    fn pv(&self, root: &P, first: P::Move, depth: u32) -> Vec<P::Move> {
        let mut pv = vec![first];
        let mut position = *root;
        position.play_unchecked(first);
        let mut seen = vec![root.zobrist_hash()];
        while pv.len() < depth as usize && !position.is_game_over() {
            let hash = position.zobrist_hash();
            let Some(mv) = self.player.table.probe(hash).and_then(|e| e.mv) else {
                break;
            };
            if seen.contains(&hash) || !position.is_legal(mv) {
                break;
            }
            seen.push(hash);
            pv.push(mv);
            position.play_unchecked(mv);
        }
        pv
    }
}

/// How many plies less the `i`-th move (0-based, in search order) of a node searched to
/// `depth` is first searched: none for the first three, for captures and near the leaves;
/// growing with the logarithms of depth and move number.
fn late_move_reduction(depth: u32, i: usize, capture: bool) -> u32 {
    if depth < 3 || i < 3 || capture {
        return 0;
    }
    let r = (f64::from(depth).ln() * (i as f64).ln() / 2.0) as u32;
    r.clamp(1, depth - 2)
}

/// Mate scores are stored relative to the node, not the root.
fn to_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score + ply as i32
    } else if score <= -MATE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn from_tt(score: i32, ply: usize) -> i32 {
    if score >= MATE_BOUND {
        score - ply as i32
    } else if score <= -MATE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

/// A search score as reported.
fn report(score: i32) -> Score {
    if score >= MATE_BOUND {
        Score::Win((WIN - score) as u32)
    } else if score <= -MATE_BOUND {
        Score::Loss((WIN + score) as u32)
    } else {
        Score::Cp(score)
    }
}

impl<P: Heuristics> Player<P> for AlphaBeta<P> {
    fn new_game(&mut self, _game_seed: u64) {
        self.table.clear();
        self.history.iter_mut().for_each(|h| *h = 0);
        self.killers.iter_mut().for_each(|k| *k = [None; 2]);
    }

    fn memory(&self) -> usize {
        self.table.bytes()
    }

    fn choose(
        &mut self,
        game: &Game<P>,
        limits: &Limits,
        stop: &AtomicBool,
        on_info: &mut dyn FnMut(&SearchInfo<P::Move>),
    ) -> SearchResult<P::Move> {
        let limits = combine_limits(limits, &self.config.limits);
        let started = Instant::now();
        let time = budget(&limits);
        let root = *game.position();
        let positions = game.positions();
        let history = positions[..positions.len() - 1]
            .iter()
            .rev()
            .take(100)
            .map(|p| p.zobrist_hash())
            .collect();
        // Old history scores fade between moves.
        self.history.iter_mut().for_each(|h| *h /= 8);
        let max_depth = limits.depth.unwrap_or(if limits.is_infinite() {
            6
        } else {
            MAX_PLY as u32 - 1
        });
        let mut search = Search::new(
            self,
            game.rules(),
            stop,
            limits.nodes.unwrap_or(u64::MAX),
            started,
            time.map(|b| started + b.hard),
            history,
        );
        let root_moves = root.legal_moves();
        let mut best: Option<SearchResult<P::Move>> = None;
        // The last finished iteration's score, which the next one's window is set around.
        let mut last = None;
        for depth in 1..=max_depth.max(1) {
            search.root_first = best.as_ref().map(|b| b.mv);
            let score = search.aspiration(&root, depth, last);
            last = (!search.aborted).then_some(score);
            let mv = if search.aborted {
                // Unfinished: its best move so far, which has been searched to this depth
                // and compared with the last iteration's best (searched first), if any.
                search.root_best.map(|(mv, _)| mv)
            } else {
                search
                    .player
                    .table
                    .probe(root.zobrist_hash())
                    .and_then(|e| e.mv)
            }
            .filter(|m| root_moves.contains(m));
            let score = match search.root_best {
                Some((_, partial)) if search.aborted => partial,
                _ => score,
            };
            if let Some(mv) = mv
                && !(search.aborted && best.as_ref().is_some_and(|b| b.mv == mv))
            {
                let result = SearchResult {
                    mv,
                    info: SearchInfo {
                        depth,
                        seldepth: search.seldepth,
                        score: Some(report(score)),
                        nodes: search.nodes,
                        time: search.started.elapsed(),
                        pv: search.pv(&root, mv, depth),
                    },
                };
                on_info(&result.info);
                best = Some(result);
            }
            let decided = score.abs() >= MATE_BOUND;
            let past_soft = time.is_some_and(|b| search.started.elapsed() >= b.soft);
            if search.aborted || decided || past_soft || root_moves.len() == 1 {
                break;
            }
        }
        // Stopped before the first root move was searched to depth 1.
        let mut best = best.unwrap_or_else(|| {
            let mv = root_moves[0];
            SearchResult {
                mv,
                info: SearchInfo {
                    depth: 0,
                    seldepth: search.seldepth,
                    score: None,
                    nodes: 0,
                    time: Duration::ZERO,
                    pv: vec![mv],
                },
            }
        });
        best.info.nodes = search.nodes;
        best.info.time = search.started.elapsed();
        best
    }
}

#[cfg(test)]
mod tests;
