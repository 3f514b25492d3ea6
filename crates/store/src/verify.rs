//! Reading a store back, record by record: what is damaged, for `tourney store verify`.

use crate::codec::decode as decode_pair;
use crate::{OpeningSuite, PairDigest, Store, StoreError, TournamentRecord, codec, read_u64};

impl Store {
    /// Reads every record and checks it: each tournament decodes, each pair decodes,
    /// belongs to a stored tournament, carries its own key and two game records, and each
    /// artifact's content has the sha256 it is stored under. Changes nothing.
    ///
    /// # Errors
    /// sled could not read the store at all.
    pub fn verify(&self) -> Result<Verified, StoreError> {
        let trees = self.t();
        let mut out = Verified::default();
        let mut problem = |what: String| {
            if out.problems.len() < Verified::PROBLEMS_KEPT {
                out.problems.push(what);
            }
            out.damaged += 1;
        };
        let mut known = std::collections::BTreeSet::new();
        let mut counted = std::collections::BTreeMap::<u64, u64>::new();
        let mut archived = std::collections::BTreeSet::new();
        for entry in trees.tournaments.iter() {
            let (key, value) = entry?;
            let id = key
                .as_ref()
                .try_into()
                .map(u64::from_be_bytes)
                .unwrap_or_default();
            match serde_json::from_slice::<TournamentRecord>(&value) {
                Ok(record) if record.id == id => {
                    known.insert(id);
                    if record.archived_ms.is_some() {
                        archived.insert(id);
                    }
                    match trees.openings.get(key)?.map(|s| OpeningSuite::decode(&s)) {
                        Some(Ok(suite)) if !suite.is_empty() => out.tournaments += 1,
                        Some(Err(e)) => problem(format!("tournament {id}: its openings ({e})")),
                        _ => problem(format!("tournament {id}: no opening suite")),
                    }
                }
                Ok(record) => problem(format!(
                    "tournament {id}: the record says it is tournament {}",
                    record.id
                )),
                Err(e) => problem(format!("tournament {id}: does not decode ({e})")),
            }
        }
        for entry in trees.pairs.iter() {
            let (key, value) = entry?;
            let (tournament, pair) = match key.len() {
                16 => (
                    u64::from_be_bytes(key[..8].try_into().unwrap_or_default()),
                    u64::from_be_bytes(key[8..].try_into().unwrap_or_default()),
                ),
                n => {
                    problem(format!("a pair key of {n} bytes"));
                    continue;
                }
            };
            let at = format!("tournament {tournament} pair {pair}");
            *counted.entry(tournament).or_default() += 1;
            match decode_pair(&value) {
                Err(e) => problem(format!("{at}: does not decode ({e})")),
                Ok(r) if (r.tournament, r.outcome.pair) != (tournament, pair) => problem(format!(
                    "{at}: the record says tournament {} pair {}",
                    r.tournament, r.outcome.pair
                )),
                Ok(_) if !known.contains(&tournament) => {
                    problem(format!("{at}: no such tournament"))
                }
                Ok(r) => match r.games() {
                    Ok(games) if games.len() == 2 => {
                        let stored = trees.digests.get(&key)?.map(|d| PairDigest::decode(&d));
                        match (stored, codec::encode(&r)) {
                            (Some(Ok(stored)), Ok((_, digest))) if stored == digest => {
                                out.pairs += 1;
                            }
                            (None, _) => problem(format!("{at}: no digest")),
                            _ => problem(format!("{at}: its digest does not match its games")),
                        }
                    }
                    Ok(games) => problem(format!("{at}: {} games, not 2", games.len())),
                    Err(e) => problem(format!("{at}: its games do not decode ({e})")),
                },
            }
        }
        for id in &known {
            let stored = (trees.counts.get(id.to_be_bytes())?).map_or(0, |v| read_u64(&v));
            let digests = trees.digests.scan_prefix(id.to_be_bytes()).count() as u64;
            let games = counted.get(id).copied().unwrap_or_default();
            let archived = archived.contains(id);
            if stored != digests || (!archived && games != digests) {
                problem(format!(
                    "tournament {id}: {stored} pairs counted, {digests} digests, {games} pair \
                     records{}",
                    if archived { " (archived)" } else { "" }
                ));
            }
        }
        drop(trees);
        out.artifacts = self.verify_artifacts(&mut problem);
        Ok(out)
    }
}

/// What [`Store::verify`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verified {
    /// Tournaments that read back whole.
    pub tournaments: u64,
    /// Pairs that read back whole.
    pub pairs: u64,
    /// Artifacts whose content matches their sha256.
    pub artifacts: u64,
    /// Records that do not.
    pub damaged: u64,
    /// What is wrong with them (the first [`Verified::PROBLEMS_KEPT`]).
    pub problems: Vec<String>,
}

impl Verified {
    /// The most problems listed.
    pub const PROBLEMS_KEPT: usize = 50;
}
