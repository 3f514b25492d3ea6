//! A Swiss tournament (`format = "swiss"`), as pure state: each round's pairings made from
//! the standings when the round before is complete, and the final standings with their
//! tie-breaks.
//!
//! The rules are the Dutch system's core (FIDE Handbook C.04.3), simplified for engines:
//!
//! - Players are ranked by points, then by seed (file order). Each pairing is `pairs` game
//!   pairs; a game is worth 2 half-points, so a pairing is worth `4·pairs`.
//! - With an odd number of players, the lowest-ranked player who has not had a bye gets
//!   one, worth a win (`4·pairs` half-points); nobody gets two.
//! - The highest-ranked unpaired player meets the first player of the bottom half of its
//!   score group (top half against bottom half), then the nearest others in the group, then
//!   players of lower groups in rank order (a floater). Two players never meet twice: the
//!   pairing backtracks until every player is paired without a repeat.
//! - Colours need no rule: a game pair plays both colours, so every player has had White
//!   exactly as often as Black. Who moves first in a pair's first game is balanced: the
//!   player who has done so less often, or the higher-ranked; two players who have both
//!   done so twice more than the other way (or twice less) meet only when the round
//!   cannot be paired otherwise.
//! - Final standings: points, then Buchholz (the sum of the opponents' points; a bye adds
//!   none), then Sonneborn-Berger (each opponent's points weighted by the share scored
//!   against it), then seed (FIDE C.07's tie-breaks).
//!
//! A round that cannot be paired without a repeat (possible late in a long Swiss of few
//! players) ends the tournament after the rounds played.

use std::collections::HashSet;

use serde::Serialize;

use crate::Tally;

/// The pairing search's step budget a round: a round of 128 players pairs in far fewer.
const SEARCH_STEPS: u64 = 1_000_000;

/// One pairing of a round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pairing {
    /// The two engines; the first moves first in each pair's first game.
    pub players: [usize; 2],
    /// Its pairs and each player's half-points.
    pub tally: Tally,
}

/// One round: its pairings and its bye.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Round {
    /// The pairings, the top board first.
    pub pairings: Vec<Pairing>,
    /// The engine that sits out, with the points of a win.
    pub bye: Option<usize>,
}

/// A player's line of the standings.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standing {
    /// The engine (index).
    pub engine: usize,
    /// Half-points, byes included.
    pub points: u64,
    /// The sum of its opponents' points.
    pub buchholz: u64,
    /// Its opponents' points, each weighted by the share of that pairing it scored.
    pub sonneborn_berger: f64,
    /// Byes it had.
    pub byes: u32,
    /// Its opponents in round order.
    pub opponents: Vec<usize>,
}

/// A Swiss tournament under way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Swiss {
    /// Engines.
    pub engines: usize,
    /// Rounds it plays, at most.
    pub rounds: u32,
    /// Game pairs a pairing plays.
    pub pairs: u64,
    /// The rounds paired so far, the first first.
    pub played: Vec<Round>,
    /// The next round could not be paired without a repeat: the tournament ends.
    pub stuck: bool,
}

impl Swiss {
    /// A Swiss of `engines` engines (at least 2) over `rounds` rounds, its first round
    /// paired.
    pub fn new(engines: usize, rounds: u32, pairs: u64) -> Swiss {
        let mut swiss = Swiss {
            engines,
            rounds,
            pairs: pairs.max(1),
            played: Vec::new(),
            stuck: false,
        };
        swiss.pair_next_round();
        swiss
    }

    /// The next pairing to hand out from the current round, if it wants one; counted as
    /// handed out.
    pub fn hand_next(&mut self) -> Option<(usize, usize)> {
        let pairs = self.pairs;
        let round = self.played.last_mut()?;
        let p = round.pairings.iter_mut().find(|p| p.tally.handed < pairs)?;
        p.tally.handed += 1;
        Some((p.players[0], p.players[1]))
    }

    /// Pairs the current round wants handed out now.
    pub fn wanted(&self) -> u64 {
        (self.played.last()).map_or(0, |r| {
            (r.pairings.iter())
                .map(|p| self.pairs.saturating_sub(p.tally.handed))
                .sum()
        })
    }

    /// Counts a pairing of the current round as handed out (a completed pair read back
    /// after a restart). Returns whether `a` and `b` are paired in it.
    pub fn hand(&mut self, a: usize, b: usize) -> bool {
        match self.current(a, b) {
            Some(p) => {
                p.tally.handed += 1;
                true
            }
            None => false,
        }
    }

    /// Counts a completed pair of `a` against `b` in the current round, `a_points` of its
    /// four half-points to `a`; pairs the next round once this one is complete. Returns
    /// whether `a` and `b` are paired in the current round.
    pub fn record(&mut self, a: usize, b: usize, a_points: u64) -> bool {
        let pairs = self.pairs;
        let Some(p) = self.current(a, b) else {
            return false;
        };
        let side = usize::from(p.players[0] != a);
        p.tally.add(side, a_points);
        let complete =
            (self.played.last()).is_some_and(|r| r.pairings.iter().all(|p| p.tally.done >= pairs));
        if complete && (self.played.len() as u32) < self.rounds {
            self.pair_next_round();
        }
        true
    }

    /// Whether every round is played (or the next could not be paired).
    pub fn is_finished(&self) -> bool {
        let complete = (self.played.last())
            .is_none_or(|r| r.pairings.iter().all(|p| p.tally.done >= self.pairs));
        complete && (self.stuck || self.played.len() as u32 >= self.rounds)
    }

    /// The pairing of `a` and `b` in the current round.
    fn current(&mut self, a: usize, b: usize) -> Option<&mut Pairing> {
        (self.played.last_mut()?.pairings.iter_mut())
            .find(|p| p.players == [a, b] || p.players == [b, a])
    }

    /// The standings, best first: points, Buchholz, Sonneborn-Berger, seed.
    pub fn standings(&self) -> Vec<Standing> {
        let win = 4 * self.pairs;
        let mut lines: Vec<Standing> = (0..self.engines)
            .map(|engine| Standing {
                engine,
                points: 0,
                buchholz: 0,
                sonneborn_berger: 0.0,
                byes: 0,
                opponents: Vec::new(),
            })
            .collect();
        for round in &self.played {
            if let Some(b) = round.bye {
                lines[b].points += win;
                lines[b].byes += 1;
            }
            for p in &round.pairings {
                for side in 0..2 {
                    lines[p.players[side]].points += p.tally.points[side];
                    lines[p.players[side]].opponents.push(p.players[1 - side]);
                }
            }
        }
        let points: Vec<u64> = lines.iter().map(|l| l.points).collect();
        for round in &self.played {
            for p in (round.pairings.iter()).filter(|p| p.tally.done > 0) {
                for side in 0..2 {
                    let (me, them) = (p.players[side], p.players[1 - side]);
                    let share = p.tally.points[side] as f64 / (4 * p.tally.done) as f64;
                    lines[me].buchholz += points[them];
                    lines[me].sonneborn_berger += share * points[them] as f64;
                }
            }
        }
        lines.sort_by(|a, b| {
            (b.points.cmp(&a.points))
                .then(b.buchholz.cmp(&a.buchholz))
                .then(b.sonneborn_berger.total_cmp(&a.sonneborn_berger))
                .then(a.engine.cmp(&b.engine))
        });
        lines
    }

    /// Pairs the next round from the standings, or notes that it cannot be paired.
    fn pair_next_round(&mut self) {
        let standings = self.standings();
        let mut points = vec![0; self.engines];
        let mut firsts = vec![0i64; self.engines];
        let mut byes = vec![false; self.engines];
        let mut met = HashSet::new();
        for s in &standings {
            points[s.engine] = s.points;
            byes[s.engine] = s.byes > 0;
        }
        for round in &self.played {
            for p in &round.pairings {
                met.insert((
                    p.players[0].min(p.players[1]),
                    p.players[0].max(p.players[1]),
                ));
                firsts[p.players[0]] += 1;
                firsts[p.players[1]] -= 1;
            }
        }
        // Pairing order: points, then seed.
        let mut order: Vec<usize> = (0..self.engines).collect();
        order.sort_by(|&a, &b| points[b].cmp(&points[a]).then(a.cmp(&b)));
        let bye_candidates: Vec<Option<usize>> = if self.engines.is_multiple_of(2) {
            vec![None]
        } else {
            order
                .iter()
                .rev()
                .filter(|&&e| !byes[e])
                .map(|&e| Some(e))
                .collect()
        };
        // Two players who have both moved first (or both second) twice more than the other
        // way meet only when the round cannot be paired otherwise.
        let clash = |a: usize, b: usize| {
            (firsts[a] >= 2 && firsts[b] >= 2) || (firsts[a] <= -2 && firsts[b] <= -2)
        };
        let tries = (bye_candidates.iter()).flat_map(|&bye| [(bye, true), (bye, false)]);
        for (bye, strict) in tries {
            let mut budget = SEARCH_STEPS;
            let rest: Vec<usize> = order.iter().copied().filter(|&e| Some(e) != bye).collect();
            let allowed = |a: usize, b: usize| {
                !(met.contains(&(a.min(b), a.max(b))) || strict && clash(a, b))
            };
            if let Some(matched) = match_up(&rest, &points, &allowed, &mut budget) {
                let pairings = matched
                    .into_iter()
                    .map(|(high, low)| {
                        // The higher-ranked moves first unless it has more often.
                        let players = if firsts[high] > firsts[low] {
                            [low, high]
                        } else {
                            [high, low]
                        };
                        Pairing {
                            players,
                            tally: Tally::default(),
                        }
                    })
                    .collect();
                self.played.push(Round { pairings, bye });
                return;
            }
        }
        self.stuck = true;
    }
}

/// Pairs `rest` (in rank order) with only `allowed` pairings: the first against the top
/// of its score group's bottom half, then the nearest others, then lower groups in order;
/// backtracking. `None` when there is no such pairing (or the budget ran out).
fn match_up(
    rest: &[usize],
    points: &[u64],
    allowed: &dyn Fn(usize, usize) -> bool,
    budget: &mut u64,
) -> Option<Vec<(usize, usize)>> {
    let Some((&p, others)) = rest.split_first() else {
        return Some(Vec::new());
    };
    *budget = budget.checked_sub(1)?;
    let group = others
        .iter()
        .take_while(|&&q| points[q] == points[p])
        .count();
    // In the group with `p` at 0, the bottom half starts at (group + 1) / 2.
    let ideal = group.div_ceil(2);
    let mut candidates: Vec<usize> = (1..=group).collect();
    candidates.sort_by_key(|&pos| (pos.abs_diff(ideal), pos < ideal));
    candidates.extend(group + 1..rest.len());
    for pos in candidates {
        let q = rest[pos];
        if !allowed(p, q) {
            continue;
        }
        let remaining: Vec<usize> = (rest.iter().enumerate())
            .filter(|&(i, _)| i != 0 && i != pos)
            .map(|(_, &e)| e)
            .collect();
        if let Some(mut matched) = match_up(&remaining, points, allowed, budget) {
            matched.insert(0, (p, q));
            return Some(matched);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_round_pairs_the_top_half_against_the_bottom_half() {
        let swiss = Swiss::new(8, 3, 1);
        let boards: Vec<[usize; 2]> = swiss.played[0].pairings.iter().map(|p| p.players).collect();
        assert_eq!(boards, [[0, 4], [1, 5], [2, 6], [3, 7]]);
        assert_eq!(swiss.played[0].bye, None);
        // Odd: the last seed sits out.
        let swiss = Swiss::new(5, 3, 1);
        assert_eq!(swiss.played[0].bye, Some(4));
        let boards: Vec<[usize; 2]> = swiss.played[0].pairings.iter().map(|p| p.players).collect();
        assert_eq!(boards, [[0, 2], [1, 3]]);
    }

    #[test]
    fn the_second_round_pairs_by_score_and_gives_the_bye_to_someone_new() {
        let mut swiss = Swiss::new(5, 3, 1);
        assert_eq!(swiss.hand_next(), Some((0, 2)));
        assert_eq!(swiss.hand_next(), Some((1, 3)));
        assert_eq!(swiss.hand_next(), None, "round 2 waits for round 1");
        swiss.record(0, 2, 4);
        assert_eq!(swiss.played.len(), 1);
        swiss.record(1, 3, 1);
        // Points: 0 and 4 (bye) have 4, 3 has 3, 1 has 1, 2 has 0. The bye goes to 2.
        let round = &swiss.played[1];
        assert_eq!(round.bye, Some(2));
        let boards: Vec<[usize; 2]> = round.pairings.iter().map(|p| p.players).collect();
        // 0 against 4 (score group {0, 4}) would leave 3 against 1, who met: the search
        // backtracks to 0 against 3, and 4 meets 1.
        assert_eq!(
            boards,
            [[3, 0], [4, 1]],
            "0 moved first in round 1, 3 did not"
        );
    }

    #[test]
    fn standings_rank_by_points_then_buchholz() {
        let mut swiss = Swiss::new(4, 2, 1);
        // Round 1: 0-2 and 1-3; 0 and 1 win.
        swiss.record(0, 2, 4);
        swiss.record(1, 3, 3);
        // Round 2: 0-1 and 2-3 (score groups {0, 1} and {2, 3}... 3 has 1).
        let boards: Vec<[usize; 2]> = swiss.played[1].pairings.iter().map(|p| p.players).collect();
        assert_eq!(boards, [[0, 1], [3, 2]]);
        swiss.record(0, 1, 2);
        swiss.record(3, 2, 2);
        assert!(swiss.is_finished());
        let s = swiss.standings();
        let order: Vec<usize> = s.iter().map(|l| l.engine).collect();
        // 0: 6, 1: 5, 3: 3, 2: 2.
        assert_eq!(order, [0, 1, 3, 2]);
        assert_eq!((s[0].points, s[0].buchholz), (6, 5 + 2));
    }

    /// SplitMix64.
    fn rand(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn random_swisses_never_repeat_a_pairing_give_at_most_one_bye_and_balance_colours() {
        let mut seed = 7;
        for case in 0..300 {
            let engines = 2 + (rand(&mut seed) % 40) as usize;
            let rounds = 1 + (rand(&mut seed) % (engines as u64 - 1).min(9)) as u32;
            let pairs = 1 + rand(&mut seed) % 2;
            let mut swiss = Swiss::new(engines, rounds, pairs);
            while let Some((a, b)) = swiss.hand_next() {
                let a_points = rand(&mut seed) % 5;
                assert!(swiss.record(a, b, a_points));
            }
            assert!(
                swiss.is_finished(),
                "case {case}: nothing handed out, not finished"
            );
            let mut met = HashSet::new();
            let mut byes = vec![0; engines];
            // Games with White and with Black (each pair plays both colours), and pairs
            // moved first in less pairs moved second.
            let mut colours = vec![[0u64; 2]; engines];
            let mut firsts = vec![0i64; engines];
            for round in &swiss.played {
                let mut seen = HashSet::new();
                for p in &round.pairings {
                    for (side, &e) in p.players.iter().enumerate() {
                        colours[e][0] += p.tally.done;
                        colours[e][1] += p.tally.done;
                        firsts[e] += if side == 0 { 1 } else { -1 };
                    }
                    let key = (
                        p.players[0].min(p.players[1]),
                        p.players[0].max(p.players[1]),
                    );
                    assert!(met.insert(key), "case {case}: {key:?} met twice");
                    assert!(seen.insert(p.players[0]) && seen.insert(p.players[1]));
                }
                if let Some(b) = round.bye {
                    byes[b] += 1;
                    assert!(seen.insert(b));
                }
                assert_eq!(
                    seen.len(),
                    engines,
                    "case {case}: everyone plays or sits out"
                );
            }
            assert!(byes.iter().all(|&b| b <= 1), "case {case}: {byes:?}");
            for (e, [w, b]) in colours.iter().enumerate() {
                assert_eq!(w, b, "case {case}: engine {e}'s colours");
                assert!(
                    firsts[e].abs() <= 2,
                    "case {case}: engine {e} first {}",
                    firsts[e]
                );
            }
            // Rounds stop early only when the next cannot be paired.
            assert!(
                swiss.stuck || swiss.played.len() as u32 == rounds,
                "case {case}"
            );
        }
    }
}
