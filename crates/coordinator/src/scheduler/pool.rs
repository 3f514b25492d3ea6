//! A rating pool's pairings (`format = "pool"`): each new pair goes to the two engines
//! whose game pair most reduces the uncertainty of the ratings, by
//! [`PoolRatings::next_pair`] (tourney-stats' pool: expected reduction of the posterior
//! variance of BayesElo's model, with a floor so every engine keeps being played).
//!
//! The ratings are fitted to the completed prefix's pairs only, read in pair order (as a
//! grouped test counts its SPRTs), and refitted, warm-started from the previous fit, each
//! time the counted pairs grow by [`Pool::step`]: `max(⌈n/2⌉, counted/32)` pairs for `n`
//! engines. One fit costs `O(n³)` a Newton step (a handful with the warm start), so the
//! fits cost `O(n²)` a pair amortized early and less as the pool grows (a 64-engine pool
//! refits every 32 pairs at first, every 320 after 10 000). Every pair handed out and not
//! in the fit yet (leased, or completed past the fit) counts as pending: its expected
//! information is in the covariance the next pair is chosen with. Choosing a pair costs
//! `O((pending + n) n²)` (a rank-one update of the covariance for each pending pair, then
//! the gain of every pairing): under 10⁶ operations for 100 pairs out among 64 engines.
//!
//! Restart-exact: the fit depends only on the pairs of the prefix in pair order (each fit
//! starts from the one before, at the same counts, so a restart repeats the same chain of
//! fits bit for bit, not just to the fit's tolerance), the pending pairs are taken in pair
//! order, and the floor's recent pairs are those handed out, in pair order; a restart reads
//! the completed pairs back in that order, so the same completed pairs give the same next
//! pairs.
//!
//! A version added while the pool runs ([`tourney_model::tournament::PoolMember`]) joins
//! at the pool's next pair `J` then: it becomes a member, rated and paired, once every
//! pair before `J` is counted, with a fit at that point. Where it joins in the chain of
//! fits depends only on `J`, which is stored, so a restart admits it at the same point.

use std::collections::BTreeMap;

use tourney_model::tournament::{MAX_ENGINES, PairOutcome, TournamentConfig};
use tourney_stats::{GameResult, GameTable, PoolRatings, PoolSettings};

use super::gate::Gate;

/// How `config`'s pool is rated and paired: the rule's defaults, with its anchor and
/// floor.
pub(crate) fn settings_of(config: &TournamentConfig) -> PoolSettings {
    let defaults = PoolSettings::default();
    let floor = config.pool.as_ref().and_then(|p| p.floor);
    PoolSettings {
        anchor: config.pool_anchor(),
        floor: floor.unwrap_or(defaults.floor),
        ..defaults
    }
}

/// A rating pool's state.
#[derive(Debug, Clone)]
pub struct Pool {
    /// How it rates and pairs.
    pub settings: PoolSettings,
    /// Every engine of the pool with the pair from which on it is a member (0 for the
    /// file's; a version added while it ran joins at the pool's next pair then).
    engines: Vec<(String, u64)>,
    /// The games of the pairs counted (the completed prefix's, excluded pairs left out),
    /// between the members so far: the engines joined by the pair counted next.
    table: GameTable,
    /// Pairs in `table`.
    counted: u64,
    /// The pair counted next: every pair before it is counted (void and excluded ones
    /// as nothing).
    through: u64,
    /// `counted` at the last fit.
    rated_at: u64,
    /// The last fit.
    pub ratings: PoolRatings,
    /// Pairs handed out and not in `table`, by pair number.
    pending: BTreeMap<u64, (usize, usize)>,
    /// The pairs handed out last, in pair order: at least the floor's window of a pool
    /// of [`MAX_ENGINES`] (the window grows as members join, and what is kept must not
    /// depend on when they joined).
    recent: Vec<(usize, usize)>,
    /// Its gate, with `[pool.gate]`.
    gate: Option<Gate>,
}

impl Pool {
    /// The pool of `config`, with no pairs.
    pub(crate) fn new(config: &TournamentConfig) -> Pool {
        let settings = settings_of(config);
        let empty = GameTable::new();
        let mut pool = Pool {
            ratings: settings.rate(&empty, None),
            settings,
            engines: (config.engines.iter())
                .map(|e| (e.name.clone(), e.joins_at_pair))
                .collect(),
            table: empty,
            counted: 0,
            through: 0,
            rated_at: 0,
            pending: BTreeMap::new(),
            recent: Vec::new(),
            gate: (config.pool.as_ref().and_then(|p| p.gate.as_ref()))
                .map(|g| Gate::new(&g.sprt, config.pool_anchor())),
        };
        pool.admit();
        pool
    }

    /// Adds engine `name` (the config's next), a member from pair `from` on: at once when
    /// every pair before `from` is counted, else when they are.
    pub(super) fn join(&mut self, name: &str, from: u64) {
        self.engines.push((name.to_string(), from));
        self.admit();
    }

    /// Makes members of the engines whose pair has come (in their order), and rates the
    /// pool again with them: a new member is paired from the next pair handed out.
    fn admit(&mut self) {
        let before = self.table.len();
        while let Some((name, _)) =
            (self.engines.get(self.table.len())).filter(|(_, from)| *from <= self.through)
        {
            self.table.player(name);
        }
        if self.table.len() > before {
            self.ratings = self.settings.rate(&self.table, Some(&self.ratings));
            self.rated_at = self.counted;
        }
        if let Some(gate) = &mut self.gate {
            gate.open_next(self.table.len());
        }
    }

    /// Its gate, with `[pool.gate]`.
    pub fn gate(&self) -> Option<&Gate> {
        self.gate.as_ref()
    }

    /// Pairs the fit counts.
    pub fn counted(&self) -> u64 {
        self.counted
    }

    /// Pairs handed out and not in the fit yet.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Counted pairs between refits: `max(⌈n/2⌉, counted/32)`, at least 1.
    pub fn step(&self) -> u64 {
        let n = self.table.len() as u64;
        n.div_ceil(2).max(self.rated_at / 32).max(1)
    }

    /// Gives pair `pair` the next pairing by the rule (`None` with fewer than 2 engines).
    pub(super) fn assign(&mut self, pair: u64) -> Option<(usize, usize)> {
        // While a gate is open, its two engines play.
        if let Some((candidate, best)) = self.gate.as_ref().and_then(Gate::wants) {
            self.handed(pair, candidate, best);
            return Some((candidate, best));
        }
        let members = self.table.len();
        let pending: Vec<(usize, usize)> = (self.pending.values())
            .filter(|&&(a, b)| a.max(b) < members)
            .copied()
            .collect();
        let (first, second) = self
            .ratings
            .next_pair(&self.settings, &self.recent, &pending)?;
        self.handed(pair, first, second);
        Some((first, second))
    }

    /// Pair `pair` between `first` and `second` was handed out (now, or in an earlier run
    /// when read back); returns whether they are engines of the pool.
    pub(super) fn handed(&mut self, pair: u64, first: usize, second: usize) -> bool {
        let n = self.engines.len();
        if first >= n || second >= n || first == second {
            return false;
        }
        self.pending.insert(pair, (first, second));
        self.recent.push((first, second));
        let keep = self.settings.floor_window(MAX_ENGINES).max(1);
        if self.recent.len() > 2 * keep {
            self.recent.drain(..self.recent.len() - keep);
        }
        true
    }

    /// Counts pair `pair` of the completed prefix (the next one): its games (`None`: void
    /// or excluded, only no longer pending); then admits the engines whose pair has come.
    pub(super) fn count(&mut self, pair: u64, outcome: Option<&PairOutcome>) {
        self.pending.remove(&pair);
        self.through = pair + 1;
        if let Some(o) = outcome {
            self.add_games(o);
            if let Some(gate) = &mut self.gate {
                gate.count(pair, o, self.table.len());
            }
        }
        self.admit();
    }

    /// Adds a counted pair's two games to the table (none when an engine is not a member
    /// yet); refits when [`Pool::step`] more pairs are counted.
    fn add_games(&mut self, o: &PairOutcome) {
        let n = self.table.len();
        if o.first >= n || o.second >= n {
            return;
        }
        for g in 0..2 {
            // Colours as played (the first White in game 0 when they were not kept).
            let white = match o.white[g] {
                w if w == o.first || w == o.second => w,
                _ if g == 0 => o.first,
                _ => o.second,
            };
            let black = if white == o.first { o.second } else { o.first };
            let half = if white == o.first {
                o.half_points[g]
            } else {
                2 - o.half_points[g].min(2)
            };
            let result = match half {
                2 => GameResult::WhiteWins,
                1 => GameResult::Draw,
                _ => GameResult::BlackWins,
            };
            self.table.add_numbered(white, black, result, 1);
        }
        self.counted += 1;
        if self.counted >= self.rated_at + self.step() {
            self.ratings = self.settings.rate(&self.table, Some(&self.ratings));
            self.rated_at = self.counted;
        }
    }

    /// Forgets the counted pairs (an exclusion changed what counts): the prefix is counted
    /// again from its start.
    pub(super) fn reset(&mut self) {
        self.table = GameTable::new();
        self.counted = 0;
        self.through = 0;
        self.rated_at = 0;
        self.ratings = self.settings.rate(&self.table, None);
        if let Some(gate) = &mut self.gate {
            gate.reset();
        }
        self.admit();
    }
}
