//! What the coordinator keeps of a tournament's completed pairs, and how it gets it back
//! on a restart without reading a game: from the store's pair digests (outcome, worker,
//! terminations, fingerprints: about 60 bytes a pair), or, for a tournament that has ended,
//! from its [`Summary`] (a byte a pair and the workers' tallies), written as it ended.
//! A summary is only read while it covers every stored pair of its tournament.

use std::collections::{BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use tourney_model::tournament::TournamentConfig;
use tourney_rules::{Position, with_position};
use tourney_store::{PairDigest, Store, StoreError};

use crate::fleet::workers::WorkerBook;
use crate::scheduler::Outcomes;

/// The games of a tournament as fingerprints, and those that repeat a game of an earlier
/// pair (in pair order, whatever order the results came in).
#[derive(Debug, Default)]
pub(crate) struct Duplicates {
    /// Each distinct game's fingerprint, with the first pair (in pair order) that has it.
    first: HashMap<u128, u64>,
    /// The fingerprints are not held (an ended tournament read back from its summary):
    /// they are read from the store before more games are counted.
    folded: bool,
    /// Games identical to a game of an earlier pair (or an earlier game of their pair).
    pub(crate) repeats: u64,
    /// Pairs holding such a game.
    pub(crate) pairs: BTreeSet<u64>,
}

impl Duplicates {
    /// Counts the games of `pair` by their fingerprints; the number that repeat another
    /// game.
    pub(crate) fn count(&mut self, pair: u64, prints: &[u128]) -> u64 {
        let mut repeats = 0;
        for &print in prints {
            match self.first.entry(print) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(pair);
                }
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    repeats += 1;
                    // The later of the two pairs holds the repeat.
                    let earlier = *e.get();
                    if pair < earlier {
                        e.insert(pair);
                        self.pairs.insert(earlier);
                    } else {
                        self.pairs.insert(pair);
                    }
                }
            }
        }
        self.repeats += repeats;
        repeats
    }

    /// Whether the fingerprints must be read back before more games are counted.
    pub(crate) fn is_folded(&self) -> bool {
        self.folded
    }

    /// Lets go of the fingerprints (the tournament has ended): the counts stay.
    pub(crate) fn fold(&mut self) {
        self.first = HashMap::new();
        self.folded = true;
    }

    /// The fingerprints of an ended tournament read back from its pairs' digests, those
    /// for which `counted` holds (the pairs the coordinator had counted).
    pub(crate) fn unfold(&mut self, digests: &[PairDigest], counted: impl Fn(u64) -> bool) {
        let mut again = Duplicates::default();
        for d in digests.iter().filter(|d| counted(d.outcome.pair)) {
            again.count(d.outcome.pair, &prints(d));
        }
        *self = again;
    }
}

fn prints(d: &PairDigest) -> Vec<u128> {
    d.games.iter().map(|g| g.1).collect()
}

/// A tournament's completed pairs as a restart gets them back.
pub(crate) struct Restored {
    /// Their outcomes.
    pub(crate) done: Outcomes,
    /// Who played them.
    pub(crate) workers: WorkerBook,
    /// Their games' fingerprints (folded when read from a summary).
    pub(crate) games: Duplicates,
}

impl Restored {
    /// Tournament `id`'s completed pairs: from its summary if `summaries` are read and
    /// one covers every stored pair, else from the digests.
    ///
    /// # Errors
    /// The store failed.
    pub(crate) fn read(
        store: &Store,
        id: u64,
        config: &TournamentConfig,
        summaries: bool,
    ) -> Result<Restored, StoreError> {
        let summary = match summaries {
            true => store.summary(id)?,
            false => None,
        };
        if let Some(summary) = summary.and_then(|bytes| Summary::decode(&bytes)) {
            return Ok(Restored {
                done: summary.outcomes,
                workers: summary.workers.reindexed(),
                games: Duplicates {
                    first: HashMap::new(),
                    folded: true,
                    repeats: summary.repeats,
                    pairs: summary.repeat_pairs,
                },
            });
        }
        // Outcomes stored before colours were kept get them from the rule of the time.
        let first_moves = with_position!(config.game, P => P::start().turn());
        let mut restored = Restored {
            done: Outcomes::of(config),
            workers: WorkerBook::default(),
            games: Duplicates::default(),
        };
        store.each_digest(id, |d| {
            let outcome = d.outcome.with_legacy_colours(first_moves);
            let terminations: Vec<_> = d.games.iter().map(|g| (g.0, g.2)).collect();
            restored.workers.count(&d.worker, &outcome, &terminations);
            restored.games.count(outcome.pair, &prints(&d));
            restored.done.insert(&outcome);
        })?;
        Ok(restored)
    }
}

/// What is stored of an ended tournament: its outcome codes (see [`Outcomes`]), its
/// workers' tallies, and its repeated games.
#[derive(Deserialize)]
struct Summary {
    outcomes: Outcomes,
    workers: WorkerBook,
    repeats: u64,
    repeat_pairs: BTreeSet<u64>,
}

/// A [`Summary`] to be written.
#[derive(Serialize)]
struct SummaryRef<'a> {
    outcomes: &'a Outcomes,
    workers: &'a WorkerBook,
    repeats: u64,
    repeat_pairs: &'a BTreeSet<u64>,
}

impl Summary {
    fn decode(bytes: &[u8]) -> Option<Summary> {
        let json = lz4_flex::decompress_size_prepended(bytes).ok()?;
        serde_json::from_slice(&json).ok()
    }
}

/// The summary of a tournament, as [`Restored::read`] reads it: LZ4-compressed JSON.
pub(crate) fn summary(outcomes: &Outcomes, workers: &WorkerBook, games: &Duplicates) -> Vec<u8> {
    let json = serde_json::to_vec(&SummaryRef {
        outcomes,
        workers,
        repeats: games.repeats,
        repeat_pairs: &games.pairs,
    })
    .unwrap_or_default();
    lz4_flex::compress_prepend_size(&json)
}
