//! Durable storage of tournaments on sled.
//!
//! One tree per kind of record, keys are big-endian numbers so that iteration follows
//! pair order:
//!
//! | tree | key | value |
//! |---|---|---|
//! | `meta` | name | schema version, id counter |
//! | `tournaments` | id (u64) | [`TournamentRecord`] as JSON |
//! | `pairs` | id (u64) ‖ pair (u64) | [`PairRecord`]: both games' full records, moves in columns, LZ4-compressed (see `codec`) |
//! | `digests` | id (u64) ‖ pair (u64) | [`PairDigest`]: outcome, worker, each game's termination and fingerprint |
//! | `counts` | id (u64) | the tournament's number of stored pairs (u64) |
//! | `summaries` | id (u64) | pairs covered (u64) ‖ a coordinator's summary of the tournament (opaque here) |
//! | `openings` | id (u64) | the tournament's opening suite, one a line, LZ4-compressed |
//! | `versions` | name | an [`EngineVersion`] as JSON |
//! | `artifact_links` | sha256 (hex) | the URL of an artifact kept elsewhere (an object store) |
//!
//! A batch of pair results is committed in one transaction with their digests, and
//! [`Store::flush`] makes it durable (against a process crash; sled's flush is not a
//! power-loss guarantee). Committing a pair that is already stored keeps the first and
//! reports it as a duplicate. Each tournament's count of stored pairs is kept in the same
//! transaction, so a summary is known to be current when it covers that many pairs.
//!
//! Schema 1 stores (plain JSON records) and schema 2 stores (LZ4-compressed JSON) are
//! migrated when opened: every record is written again in the compact encoding with its
//! digest, in batches, and the schema is marked 3 at the end (an interrupted migration
//! starts again where it stopped, as every record reads in any encoding).
//!
//! Engines' programs and data files are files beside the trees, in the store's
//! `artifacts/` directory, named by their sha256 (see `artifacts`).

#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use tourney_model::version::EngineVersion;

mod accounts;
mod artifacts;
mod codec;
mod migrate;
mod open;
mod records;
mod room;
#[cfg(test)]
mod tests;
mod verify;

pub use accounts::{AccountError, MAX_EVENTS, MAX_SESSIONS, MAX_TOKENS_PER_USER, MAX_USERS};
pub use artifacts::ArtifactUpload;
use codec::decode as decode_pair;
pub use codec::{GameJson, PairDigest, PairGames};
pub use records::{OpeningSuite, PairRecord, TournamentRecord, WorkerExclusion};
pub use room::recovery_reserve;
pub use verify::Verified;

use migrate::MIGRATION_BATCH;

/// The storage format version written by this build.
pub const SCHEMA_VERSION: u64 = 3;

/// Versions this build opens: 1 (plain JSON records) and 2 (compressed JSON) are migrated
/// to [`SCHEMA_VERSION`] as they open.
const READABLE_VERSIONS: [u64; 3] = [1, 2, 3];

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// sled failed (I/O, corruption, lock held by another process).
    #[error("store: {0}")]
    Sled(#[from] sled::Error),
    /// A record could not be encoded or decoded.
    #[error("store record: {0}")]
    Codec(#[from] serde_json::Error),
    /// A compressed record is corrupt.
    #[error("store record: {0}")]
    Compression(String),
    /// The data directory is not one (a file, or a directory holding something else).
    #[error("data directory {path}: {reason}")]
    DataDir {
        /// The directory given.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The lease key could not be made or read.
    #[error("store lease key: {0}")]
    LeaseKey(String),
    /// The data was written by an incompatible version.
    #[error("store at {path} has schema version {found}, this build reads version {expected}")]
    Schema {
        /// The data directory.
        path: String,
        /// Version found.
        found: u64,
        /// Version expected.
        expected: u64,
    },
    /// An artifact's file could not be written or read.
    #[error("artifact file {path}: {source}")]
    Artifact {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
    /// An artifact is refused (too big, or no room for it on the disk).
    #[error("{0}")]
    Refused(String),
}

/// sled's page cache by default, MiB.
pub const DEFAULT_CACHE_MB: u64 = 128;

/// The tournament store. After an I/O failure (a full disk, say) sled refuses every later
/// write until it is opened again: [`Store::reopen`] does that in place, for every clone.
#[derive(Clone)]
pub struct Store {
    trees: Arc<RwLock<Trees>>,
    /// Where it lives (`None` for a temporary store).
    path: Option<PathBuf>,
    /// sled's page cache, bytes.
    cache_bytes: u64,
    /// Serialises pair commits: check-then-insert is atomic per batch.
    pair_writer: Arc<Mutex<()>>,
    /// Where artifacts' files are kept.
    artifacts: artifacts::ArtifactDir,
}

/// The open database and its trees.
pub(crate) struct Trees {
    db: sled::Db,
    meta: sled::Tree,
    tournaments: sled::Tree,
    pairs: sled::Tree,
    digests: sled::Tree,
    counts: sled::Tree,
    summaries: sled::Tree,
    openings: sled::Tree,
    versions: sled::Tree,
    artifact_links: sled::Tree,
    users: sled::Tree,
    user_tokens: sled::Tree,
    events: sled::Tree,
    sessions: sled::Tree,
}

/// Writes pair records and their digests in one transaction, adding `added` to the
/// tournaments' counts of stored pairs.
pub(crate) fn write_pairs(
    trees: &Trees,
    pairs: sled::Batch,
    digests: sled::Batch,
    added: &std::collections::BTreeMap<u64, u64>,
) -> Result<(), StoreError> {
    use sled::Transactional;
    (&trees.pairs, &trees.digests, &trees.counts)
        .transaction(|(p, d, c)| {
            p.apply_batch(&pairs)?;
            d.apply_batch(&digests)?;
            for (id, n) in added {
                let old = c.get(id.to_be_bytes())?.map_or(0, |v| read_u64(&v));
                c.insert(&id.to_be_bytes(), &(old + n).to_be_bytes())?;
            }
            Ok(())
        })
        .map_err(|e: sled::transaction::TransactionError<()>| match e {
            sled::transaction::TransactionError::Storage(e) => StoreError::Sled(e),
            sled::transaction::TransactionError::Abort(()) => {
                StoreError::Compression("a pair batch was aborted".into())
            }
        })
}

/// A big-endian u64 value (0 if it is not 8 bytes).
pub(crate) fn read_u64(bytes: &[u8]) -> u64 {
    bytes.try_into().map_or(0, u64::from_be_bytes)
}

fn pair_key(tournament: u64, pair: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&tournament.to_be_bytes());
    key[8..].copy_from_slice(&pair.to_be_bytes());
    key
}

impl Store {
    fn t(&self) -> std::sync::RwLockReadGuard<'_, Trees> {
        self.trees.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores tournament `id`'s opening suite (once, as it is submitted).
    ///
    /// # Errors
    /// sled errors.
    pub fn put_openings(&self, id: u64, suite: &OpeningSuite) -> Result<(), StoreError> {
        self.t().openings.insert(id.to_be_bytes(), suite.encode())?;
        Ok(())
    }

    /// Tournament `id`'s opening suite (empty if none is stored).
    ///
    /// # Errors
    /// sled errors, or a suite that does not decode.
    pub fn openings(&self, id: u64) -> Result<OpeningSuite, StoreError> {
        match self.t().openings.get(id.to_be_bytes())? {
            Some(bytes) => OpeningSuite::decode(&bytes),
            None => Ok(OpeningSuite::default()),
        }
    }

    /// Stores an engine version (new, or replacing one of its name).
    ///
    /// # Errors
    /// sled or encoding errors.
    pub fn put_version(&self, version: &EngineVersion) -> Result<(), StoreError> {
        self.t()
            .versions
            .insert(version.name.as_bytes(), serde_json::to_vec(version)?)?;
        Ok(())
    }

    /// Every engine version, by name.
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn versions(&self) -> Result<Vec<EngineVersion>, StoreError> {
        self.t()
            .versions
            .iter()
            .values()
            .map(|v| Ok(serde_json::from_slice(&v?)?))
            .collect()
    }

    /// The coordinator's key for sealing leases: 32 random bytes made when the store is
    /// first opened and kept in it, so that a seal outlives a restart.
    ///
    /// # Errors
    /// sled errors, or no randomness to make the key from.
    pub fn lease_key(&self) -> Result<[u8; 32], StoreError> {
        let meta = &self.t().meta;
        if let Some(key) = meta.get("lease_key")?
            && let Ok(key) = <[u8; 32]>::try_from(key.as_ref())
        {
            return Ok(key);
        }
        let mut key = [0u8; 32];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut key))
            .map_err(|e| StoreError::LeaseKey(format!("no randomness: {e}")))?;
        // Another opener's key wins the race: every seal is made with one key.
        let _ = meta.compare_and_swap("lease_key", None as Option<&[u8]>, Some(&key[..]))?;
        let stored = meta.get("lease_key")?.unwrap_or_default();
        <[u8; 32]>::try_from(stored.as_ref())
            .map_err(|_| StoreError::LeaseKey("not 32 bytes".into()))
    }

    /// A new tournament number (never reused).
    ///
    /// # Errors
    /// sled errors.
    pub fn next_tournament_id(&self) -> Result<u64, StoreError> {
        let next = self.t().meta.update_and_fetch("next_tournament", |old| {
            let n = old.map_or(0, |v| u64::from_be_bytes(v.try_into().unwrap_or([0; 8])));
            Some((n + 1).to_be_bytes().to_vec())
        })?;
        Ok(next.map_or(1, |v| {
            u64::from_be_bytes(v.as_ref().try_into().unwrap_or([0; 8]))
        }))
    }

    /// Writes a tournament record (new, or with a new state).
    ///
    /// # Errors
    /// sled or encoding errors.
    pub fn put_tournament(&self, record: &TournamentRecord) -> Result<(), StoreError> {
        self.t()
            .tournaments
            .insert(record.id.to_be_bytes(), serde_json::to_vec(record)?)?;
        Ok(())
    }

    /// One tournament.
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn tournament(&self, id: u64) -> Result<Option<TournamentRecord>, StoreError> {
        Ok(match self.t().tournaments.get(id.to_be_bytes())? {
            Some(v) => Some(serde_json::from_slice(&v)?),
            None => None,
        })
    }

    /// All tournaments, by id.
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn tournaments(&self) -> Result<Vec<TournamentRecord>, StoreError> {
        self.t()
            .tournaments
            .iter()
            .values()
            .map(|v| Ok(serde_json::from_slice(&v?)?))
            .collect()
    }

    /// Stores completed pairs in one atomic batch and makes them durable; `true` for each
    /// pair stored now, `false` for a pair that was already there or earlier in the batch
    /// (the first is kept). The batch is flushed by the database it was written to, so a
    /// [`Store::reopen`] meanwhile cannot acknowledge it without its being on disk.
    ///
    /// # Errors
    /// sled or encoding errors; nothing is acknowledged then.
    pub async fn commit_pairs(&self, records: &[PairRecord]) -> Result<Vec<bool>, StoreError> {
        let (fresh, db) = {
            let _writer = self.pair_writer.lock().unwrap_or_else(|e| e.into_inner());
            let trees = self.t();
            let (mut pairs, mut digests) = (sled::Batch::default(), sled::Batch::default());
            let mut fresh = Vec::with_capacity(records.len());
            let mut in_batch = std::collections::HashSet::new();
            let mut added = std::collections::BTreeMap::new();
            for r in records {
                let key = pair_key(r.tournament, r.outcome.pair);
                let new = in_batch.insert(key) && !trees.pairs.contains_key(key)?;
                if new {
                    let (bytes, digest) = codec::encode(r)?;
                    pairs.insert(&key[..], bytes);
                    digests.insert(&key[..], digest.encode());
                    *added.entry(r.tournament).or_default() += 1;
                }
                fresh.push(new);
            }
            // One transaction: all of it is written, or nothing.
            write_pairs(&trees, pairs, digests, &added)?;
            (fresh, trees.db.clone())
        };
        db.flush_async().await?;
        Ok(fresh)
    }

    /// The digests of a tournament's completed pairs, in pair order.
    ///
    /// # Errors
    /// sled errors, or a digest that does not decode.
    pub fn digests(&self, tournament: u64) -> Result<Vec<PairDigest>, StoreError> {
        let mut all = Vec::new();
        self.each_digest(tournament, |d| all.push(d))?;
        Ok(all)
    }

    /// Calls `f` with each digest of a tournament's completed pairs, in pair order, one at
    /// a time (a restart's way: none is kept unless `f` keeps it).
    ///
    /// # Errors
    /// sled errors, or a digest that does not decode.
    pub fn each_digest(
        &self,
        tournament: u64,
        mut f: impl FnMut(PairDigest),
    ) -> Result<(), StoreError> {
        for value in self
            .t()
            .digests
            .scan_prefix(tournament.to_be_bytes())
            .values()
        {
            f(PairDigest::decode(&value?)?);
        }
        Ok(())
    }

    /// How many pairs of tournament `id` are stored.
    ///
    /// # Errors
    /// sled errors.
    pub fn pair_count(&self, id: u64) -> Result<u64, StoreError> {
        Ok(self
            .t()
            .counts
            .get(id.to_be_bytes())?
            .map_or(0, |v| read_u64(&v)))
    }

    /// Stores a summary of tournament `id` (the coordinator's, in its own encoding) that
    /// covers its first `covers` stored pairs, durably; returns whether it was stored: not
    /// when more pairs are stored by now.
    ///
    /// # Errors
    /// sled errors.
    pub fn put_summary(&self, id: u64, covers: u64, summary: &[u8]) -> Result<bool, StoreError> {
        let _writer = self.pair_writer.lock().unwrap_or_else(|e| e.into_inner());
        if self.pair_count(id)? != covers {
            return Ok(false);
        }
        let mut value = Vec::with_capacity(8 + summary.len());
        value.extend_from_slice(&covers.to_be_bytes());
        value.extend_from_slice(summary);
        let trees = self.t();
        trees.summaries.insert(id.to_be_bytes(), value)?;
        // Written once per tournament: made durable at once, not at sled's next flush.
        trees.db.flush()?;
        Ok(true)
    }

    /// The summary of tournament `id`, if one is stored that covers every pair stored.
    ///
    /// # Errors
    /// sled errors.
    pub fn summary(&self, id: u64) -> Result<Option<Vec<u8>>, StoreError> {
        let Some(value) = self.t().summaries.get(id.to_be_bytes())? else {
            return Ok(None);
        };
        let covers = read_u64(&value[..8.min(value.len())]);
        Ok((value.len() >= 8 && covers == self.pair_count(id)?).then(|| value[8..].to_vec()))
    }

    /// Removes the games of tournament `id` (its pair records) and makes that durable;
    /// its digests, count and summary stay. Returns how many pair records were removed.
    ///
    /// # Errors
    /// sled errors.
    pub async fn remove_games(&self, id: u64) -> Result<u64, StoreError> {
        let mut removed = 0;
        loop {
            let db = {
                let _writer = self.pair_writer.lock().unwrap_or_else(|e| e.into_inner());
                let trees = self.t();
                let keys: Vec<sled::IVec> = trees
                    .pairs
                    .scan_prefix(id.to_be_bytes())
                    .keys()
                    .take(MIGRATION_BATCH)
                    .collect::<Result<_, _>>()?;
                if keys.is_empty() {
                    break;
                }
                let mut batch = sled::Batch::default();
                for key in &keys {
                    batch.remove(key);
                }
                trees.pairs.apply_batch(batch)?;
                removed += keys.len() as u64;
                trees.db.clone()
            };
            db.flush_async().await?;
        }
        Ok(removed)
    }

    /// Up to `most` completed pairs of a tournament from pair `from` on, in pair order,
    /// their games as [`GameJson`] (what an export writes, without parsing the moves).
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn pair_games_from(
        &self,
        tournament: u64,
        from: u64,
        most: usize,
    ) -> Result<Vec<PairGames>, StoreError> {
        self.t()
            .pairs
            .range(pair_key(tournament, from)..=pair_key(tournament, u64::MAX))
            .values()
            .take(most)
            .map(|v| codec::decode_games(&v?))
            .collect()
    }

    /// One completed pair, if it is stored.
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn pair(&self, tournament: u64, pair: u64) -> Result<Option<PairRecord>, StoreError> {
        self.t()
            .pairs
            .get(pair_key(tournament, pair))?
            .map(|v| decode_pair(&v))
            .transpose()
    }

    /// Makes everything written so far durable.
    ///
    /// # Errors
    /// sled errors.
    pub async fn flush(&self) -> Result<(), StoreError> {
        let db = self.t().db.clone();
        db.flush_async().await?;
        Ok(())
    }
}
