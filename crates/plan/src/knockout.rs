//! A seeded single-elimination bracket (`format = "knockout"`), as pure state: which
//! pairings may be played now, and who goes through.
//!
//! - Engines are seeded in file order (the first is seed 1). The bracket has the next
//!   power of two of slots, placed by the standard seeding (1 against the last, 2 against
//!   the second last, seeds 1 and 2 only meeting in the final); a slot past the last engine
//!   is a bye, and its opponent goes through unplayed.
//! - A match plays `pairs` game pairs. Tied after them, it plays one more pair at a time,
//!   at most `tiebreak_pairs` more; still tied, the higher seed goes through.
//! - With an SPRT (`sprt = { elo0 = -10, elo1 = 10 }`, say), `pairs` is the most a match
//!   plays: the SPRT of the higher seed against the lower one runs over the match's pairs
//!   in the order they were handed out (the longest prefix of completed ones, as an SPRT
//!   does), and ends the match at its decision: H1 puts the higher seed through, H0 the
//!   lower one. Undecided after `pairs`, the match goes by points as above.
//! - A match may start as soon as both its players are known: a round's matches do not
//!   wait for the round's other matches.

use std::collections::BTreeMap;

use serde::Serialize;
use tourney_stats::{Decision, Sprt, SprtCounts};

use crate::Tally;

/// One match of the bracket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match {
    /// Its two engines (indices, the higher seed first), once known; `None` on a side
    /// stands for a bye in the first round and for a match not yet decided later.
    pub players: [Option<usize>; 2],
    /// Its pairs and each side's half-points.
    pub tally: Tally,
    /// The engine that went through, once decided.
    pub winner: Option<usize>,
    /// Decided by the seeds after the tie-breaks ran out.
    pub by_seed: bool,
    /// With an SPRT: its LLR so far, and whether it decided the match.
    pub llr: Option<f64>,
    /// The SPRT decided the match.
    pub by_sprt: bool,
    /// Its pair numbers in the order they were handed out.
    #[serde(skip)]
    out: Vec<u64>,
    /// Completed pairs not yet counted by the SPRT, by their place in `out`: the higher
    /// seed's half-points in each game.
    #[serde(skip)]
    waiting: BTreeMap<usize, [u8; 2]>,
    /// What the SPRT counted: the pairs of `out` before `waiting`'s first gap.
    #[serde(skip)]
    counts: SprtCounts,
}

/// A knockout bracket under way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bracket {
    /// Pairs a match plays before any tie-break (with an SPRT: at most).
    pub pairs: u64,
    /// Pairs a tied match plays one at a time before the seeds decide.
    pub tiebreak_pairs: u64,
    /// The SPRT each match runs, of the higher seed against the lower.
    pub sprt: Option<Sprt>,
    /// Rounds, the first first; round `r` has `slots / 2^(r+1)` matches.
    pub rounds: Vec<Vec<Match>>,
    /// Engines, seeded by index.
    engines: usize,
}

/// The standard seeding order of `slots` (a power of two) slots, 0-based: seeds `s` and
/// `slots − 1 − s` meet first, and the top seeds as late as they can.
pub fn seeding(slots: usize) -> Vec<usize> {
    let mut order = vec![0];
    while order.len() < slots {
        let size = order.len() * 2;
        order = order.iter().flat_map(|&s| [s, size - 1 - s]).collect();
    }
    order
}

impl Bracket {
    /// The bracket of `engines` engines (at least 2), each match ended by `sprt` if given.
    pub fn new(engines: usize, pairs: u64, tiebreak_pairs: u64, sprt: Option<Sprt>) -> Bracket {
        let slots = engines.max(2).next_power_of_two();
        let order = seeding(slots);
        let mut first: Vec<Match> = order
            .chunks(2)
            .map(|slot| Match::new([slot[0], slot[1]].map(|s| (s < engines).then_some(s))))
            .collect();
        for m in &mut first {
            // A bye: the other side goes through unplayed.
            if let [Some(a), None] | [None, Some(a)] = m.players {
                m.winner = Some(a);
            }
        }
        let mut rounds = vec![first];
        while rounds.last().is_some_and(|r| r.len() > 1) {
            let size = rounds.last().map_or(0, Vec::len) / 2;
            rounds.push(vec![Match::new([None, None]); size]);
        }
        let mut bracket = Bracket {
            pairs: pairs.max(1),
            tiebreak_pairs,
            sprt,
            rounds,
            engines,
        };
        bracket.advance();
        bracket
    }

    /// The next pairing to hand out as pair number `pair` (its match's players, the
    /// higher seed first), if a match wants one now; counted as handed out.
    pub fn hand_next(&mut self, pair: u64) -> Option<(usize, usize)> {
        let pairs = self.pairs;
        let limit = pairs + self.tiebreak_pairs;
        let m = (self.rounds.iter_mut().flatten()).find(|m| m.wants(pairs, limit))?;
        m.tally.handed += 1;
        m.out.push(pair);
        Some((m.players[0]?, m.players[1]?))
    }

    /// Pairs its matches want handed out now.
    pub fn wanted(&self) -> u64 {
        let (pairs, limit) = (self.pairs, self.pairs + self.tiebreak_pairs);
        (self.rounds.iter().flatten())
            .filter(|m| m.wants(pairs, limit))
            .map(|m| pairs.saturating_sub(m.tally.handed).max(1))
            .sum()
    }

    /// Counts pair number `pair` of `a` against `b` as handed out (a completed pair read
    /// back after a restart, in pair order). Returns whether a match of those two engines
    /// is open.
    pub fn hand(&mut self, a: usize, b: usize, pair: u64) -> bool {
        match self.match_of(a, b) {
            Some(m) => {
                m.tally.handed += 1;
                m.out.push(pair);
                true
            }
            None => false,
        }
    }

    /// Counts completed pair number `pair` of `a` against `b`: `a_half_points`, `a`'s in
    /// each game. Returns whether a match of those two engines was open for it.
    pub fn record(&mut self, a: usize, b: usize, pair: u64, a_half_points: [u8; 2]) -> bool {
        let sprt = self.sprt;
        let Some(m) = self.match_of(a, b) else {
            return false;
        };
        let side = usize::from(m.players[0] != Some(a));
        let [g0, g1] = a_half_points.map(|h| h.min(2));
        m.tally.add(side, u64::from(g0 + g1));
        if let Some(sprt) = sprt {
            let high = if side == 0 {
                [g0, g1]
            } else {
                [2 - g0, 2 - g1]
            };
            let place = (m.out.iter())
                .position(|&p| p == pair)
                .unwrap_or(m.out.len());
            m.waiting.insert(place, high);
            m.run_sprt(&sprt);
        }
        self.advance();
        true
    }

    /// The open match of engines `a` and `b` (either order): players known, not decided.
    fn match_of(&mut self, a: usize, b: usize) -> Option<&mut Match> {
        (self.rounds.iter_mut().flatten()).find(|m| {
            m.winner.is_none()
                && (m.players == [Some(a), Some(b)] || m.players == [Some(b), Some(a)])
        })
    }

    /// Decides the matches whose pairs are all in and moves their winners on.
    fn advance(&mut self) {
        let (pairs, limit) = (self.pairs, self.pairs + self.tiebreak_pairs);
        for r in 0..self.rounds.len() {
            for i in 0..self.rounds[r].len() {
                let m = &mut self.rounds[r][i];
                if m.winner.is_none()
                    && m.by_sprt
                    && let [Some(a), Some(b)] = m.players
                {
                    m.winner = Some(if m.llr.unwrap_or(0.0) > 0.0 { a } else { b });
                }
                if m.winner.is_none()
                    && let [Some(a), Some(b)] = m.players
                    && m.tally.done >= pairs
                    && m.tally.done == m.tally.handed
                    && (m.tally.points[0] != m.tally.points[1] || m.tally.done >= limit)
                {
                    m.by_seed = m.tally.points[0] == m.tally.points[1];
                    // The higher seed (the lower index) wins a tie.
                    m.winner = Some(if m.tally.points[1] > m.tally.points[0] {
                        b
                    } else {
                        a
                    });
                }
                let Some(winner) = self.rounds[r][i].winner else {
                    continue;
                };
                if let Some(next) = self.rounds.get_mut(r + 1).and_then(|n| n.get_mut(i / 2))
                    && next.players[i % 2].is_none()
                {
                    next.players[i % 2] = Some(winner);
                    // The higher seed first.
                    if let [Some(x), Some(y)] = next.players
                        && y < x
                    {
                        next.players = [Some(y), Some(x)];
                    }
                }
            }
        }
    }

    /// The engine that won the final, once it is decided.
    pub fn champion(&self) -> Option<usize> {
        self.rounds.last()?.first()?.winner
    }

    /// Engines in the bracket.
    pub fn engines(&self) -> usize {
        self.engines
    }
}

impl Match {
    fn new(players: [Option<usize>; 2]) -> Match {
        Match {
            players,
            tally: Tally::default(),
            winner: None,
            by_seed: false,
            llr: None,
            by_sprt: false,
            out: Vec::new(),
            waiting: BTreeMap::new(),
            counts: SprtCounts::default(),
        }
    }

    /// Counts the completed pairs that follow the counted ones in hand-out order, up to
    /// the SPRT's decision.
    fn run_sprt(&mut self, sprt: &Sprt) {
        while !self.by_sprt
            && let Some(half_points) = self.waiting.remove(&(self.counts.pairs as usize))
        {
            self.counts.add(half_points);
            // Pair counts always carry what the test needs.
            if let Ok(status) = sprt.status(&self.counts.input()) {
                self.llr = Some(status.llr);
                self.by_sprt = status.decision != Decision::Continue;
            }
        }
    }

    /// Whether it wants another pair handed out now: both players known and undecided,
    /// and fewer than its pairs handed out, or all in, tied, and tie-breaks left.
    fn wants(&self, pairs: u64, limit: u64) -> bool {
        let ready = self.winner.is_none() && self.players.iter().all(Option::is_some);
        ready
            && (self.tally.handed < pairs
                || (self.tally.done == self.tally.handed
                    && self.tally.points[0] == self.tally.points[1]
                    && self.tally.handed < limit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pair's four half-points `points` as two games.
    fn hp(points: u64) -> [u8; 2] {
        let p = points.min(4) as u8;
        [p.min(2), p - p.min(2)]
    }

    #[test]
    fn the_standard_seeding_meets_the_top_seeds_last() {
        assert_eq!(seeding(2), [0, 1]);
        assert_eq!(seeding(4), [0, 3, 1, 2]);
        assert_eq!(seeding(8), [0, 7, 3, 4, 1, 6, 2, 5]);
    }

    /// Plays every handed pair at once with `a_points(a, b)` to the first engine.
    fn play(bracket: &mut Bracket, a_points: impl Fn(usize, usize) -> u64) -> Vec<(usize, usize)> {
        let mut played = Vec::new();
        loop {
            let mut handed = Vec::new();
            while let Some(p) = bracket.hand_next(0) {
                handed.push(p);
            }
            if handed.is_empty() {
                return played;
            }
            for (a, b) in handed {
                assert!(bracket.record(a, b, 0, hp(a_points(a, b))));
                played.push((a, b));
            }
        }
    }

    #[test]
    fn five_engines_give_three_byes_and_the_stronger_engine_always_wins() {
        let mut bracket = Bracket::new(5, 2, 1, None);
        // Slots 0..8: seeds 1, 2, 3 have byes; 4 meets 5 first.
        assert_eq!(bracket.rounds.len(), 3);
        assert_eq!(bracket.rounds[0][1].players, [Some(3), Some(4)]);
        assert_eq!(bracket.rounds[0][0].winner, Some(0));
        // The higher index always wins every game: the lowest seed goes all the way.
        let played = play(&mut bracket, |a, b| if a > b { 4 } else { 0 });
        assert_eq!(bracket.champion(), Some(4));
        // Seeds 4-5 and 2-3, then 1 against 5, then the final 3-5: 4 matches of 2 pairs.
        assert_eq!(played.len(), 8);
        assert_eq!(played[..2], [(3, 4), (3, 4)]);
    }

    #[test]
    fn a_tied_match_plays_its_tiebreaks_one_at_a_time_then_the_higher_seed_goes_through() {
        let mut bracket = Bracket::new(2, 2, 2, None);
        assert_eq!(bracket.hand_next(0), Some((0, 1)));
        assert_eq!(bracket.hand_next(0), Some((0, 1)));
        assert_eq!(bracket.hand_next(0), None, "two pairs, then wait");
        bracket.record(0, 1, 0, hp(2));
        assert_eq!(bracket.hand_next(0), None, "a pair still out");
        bracket.record(1, 0, 0, hp(2));
        // Tied 4-4: one tie-break pair at a time.
        assert_eq!(bracket.hand_next(0), Some((0, 1)));
        assert_eq!(bracket.hand_next(0), None);
        bracket.record(0, 1, 0, hp(2));
        assert_eq!(bracket.hand_next(0), Some((0, 1)));
        bracket.record(0, 1, 0, hp(2));
        // Still tied after both tie-breaks: seed 1 goes through.
        assert_eq!(bracket.hand_next(0), None);
        assert_eq!(bracket.champion(), Some(0));
        assert!(bracket.rounds[0][0].by_seed);
        // A tie-break won ends the match.
        let mut bracket = Bracket::new(2, 1, 3, None);
        bracket.hand_next(0);
        bracket.record(0, 1, 0, hp(2));
        bracket.hand_next(0);
        bracket.record(0, 1, 0, hp(1));
        assert_eq!(bracket.champion(), Some(1));
        assert!(!bracket.rounds[0][0].by_seed);
    }

    #[test]
    fn a_match_starts_when_its_players_are_known_not_when_its_round_ends() {
        let mut bracket = Bracket::new(4, 1, 0, None);
        assert_eq!(bracket.hand_next(0), Some((0, 3)));
        assert_eq!(bracket.hand_next(0), Some((1, 2)));
        bracket.record(0, 3, 0, hp(3));
        assert_eq!(
            bracket.hand_next(0),
            None,
            "the final waits for its other side"
        );
        bracket.record(2, 1, 0, hp(4));
        assert_eq!(bracket.hand_next(0), Some((0, 2)));
        // Read back after a restart: hand and record in pair order.
        let mut again = Bracket::new(4, 1, 0, None);
        for (a, b, p) in [(0, 3, 3), (1, 2, 0)] {
            assert!(again.hand(a, b, 0));
            assert!(again.record(a, b, 0, hp(p)));
        }
        assert!(!again.hand(0, 1, 0), "0 and 1 never meet");
        assert_eq!(again.hand_next(0), Some((0, 2)));
    }

    #[test]
    fn an_sprt_ends_a_match_at_its_decision_in_the_order_pairs_were_handed_out() {
        let sprt = Sprt {
            elo0: -20.0,
            elo1: 20.0,
            alpha: 0.05,
            beta: 0.05,
            model: tourney_stats::EloModel::Logistic,
        };
        // The higher seed wins every pair: H1 long before the 100 pairs.
        let mut bracket = Bracket::new(2, 100, 1, Some(sprt));
        let mut pair = 0;
        while let Some((a, b)) = bracket.hand_next(pair) {
            assert!(bracket.record(a, b, pair, [2, 1]));
            pair += 1;
        }
        let m = &bracket.rounds[0][0];
        assert!(m.by_sprt && m.tally.done < 100, "{m:?}");
        assert_eq!(bracket.champion(), Some(0));
        // The lower seed wins: H0 puts it through.
        let mut bracket = Bracket::new(2, 100, 1, Some(sprt));
        let mut pair = 0;
        while let Some((a, b)) = bracket.hand_next(pair) {
            bracket.record(a, b, pair, [0, 1]);
            pair += 1;
        }
        assert_eq!(bracket.champion(), Some(1));
        assert!(bracket.rounds[0][0].llr.unwrap() < 0.0);
        // Results counted in hand-out order: a late first pair holds the decision back.
        let mut bracket = Bracket::new(2, 100, 1, Some(sprt));
        for pair in 0..40 {
            bracket.hand_next(pair);
        }
        for pair in 1..40 {
            bracket.record(0, 1, pair, [2, 2]);
        }
        assert_eq!(bracket.champion(), None, "pair 0 is not in");
        assert_eq!(bracket.rounds[0][0].llr, None);
        bracket.record(1, 0, 0, [0, 0]);
        assert_eq!(bracket.champion(), Some(0));
        // Read back in pair order after a restart: the same verdict at the same pair.
        let decided_at = bracket.rounds[0][0].counts.pairs;
        let mut again = Bracket::new(2, 100, 1, Some(sprt));
        for pair in 0..40 {
            let (a, b, hp) = if pair == 0 {
                (1, 0, [0, 0])
            } else {
                (0, 1, [2, 2])
            };
            if again.hand(a, b, pair) {
                again.record(a, b, pair, hp);
            }
        }
        assert_eq!(again.rounds[0][0].counts.pairs, decided_at);
        assert_eq!(again.champion(), Some(0));
    }
}
