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
//! | `artifacts` | sha256 (hex) | an outside engine's program |
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

#![deny(missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tourney_model::GameRecord;
use tourney_model::tournament::{PairOutcome, State};
use tourney_model::version::EngineVersion;

mod codec;

use codec::decode as decode_pair;
pub use codec::{GameJson, PairDigest, PairGames};

/// The storage format version written by this build.
pub const SCHEMA_VERSION: u64 = 3;

/// Versions this build opens: 1 (plain JSON records) and 2 (compressed JSON) are migrated
/// to [`SCHEMA_VERSION`] as they open.
const READABLE_VERSIONS: [u64; 3] = [1, 2, 3];

/// Pair records written again per batch while migrating.
const MIGRATION_BATCH: usize = 1000;

/// What can go wrong with the store.
#[derive(Debug, thiserror::Error)]
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
}

/// The room a failed store needs to spare before it is opened again, on a volume (or
/// under a file-size limit) of `space` bytes: a sixteenth of it, within 1 and 64 MiB. A
/// fixed 64 MiB could never be met on a small volume (40 MiB, say): it would stay failing
/// however much was freed.
pub fn recovery_reserve(space: u64) -> u64 {
    (space / 16).clamp(1 << 20, 64 << 20)
}

/// A tournament as stored: its file and where it is (its opening suite is stored apart,
/// see [`Store::openings`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TournamentRecord {
    /// Its number.
    pub id: u64,
    /// The tournament file's text, as submitted.
    pub config_text: String,
    /// The file name it was submitted from.
    pub file: String,
    /// The opening suite, in records written before suites were stored apart: moved to
    /// [`Store::openings`] as the store opens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openings: Vec<String>,
    /// Where it is.
    pub state: State,
    /// Submission time, Unix milliseconds.
    pub created_ms: u64,
    /// Artifact sha256 per outside engine name.
    #[serde(default)]
    pub artifacts: std::collections::BTreeMap<String, String>,
    /// Why it is paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// When it finished or was cancelled, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// Operators' exclusions of workers' results, and their reversals, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusions: Vec<WorkerExclusion>,
    /// When its games were archived (written to files and removed from the store; their
    /// digests and its summary stay), Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_ms: Option<u64>,
    /// A tuning run's verification SPRT, once submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<u64>,
    /// The tuning run a verification SPRT checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned_by: Option<u64>,
}

/// An operator's decision about one worker's results in a tournament: left out of every
/// figure, or counted again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerExclusion {
    /// The worker's host (its name, without the session number).
    pub worker: String,
    /// Left out (`true`) or counted again (`false`).
    pub excluded: bool,
    /// Why, in the operator's words.
    pub reason: String,
    /// When, Unix milliseconds.
    pub at_ms: u64,
}

impl TournamentRecord {
    /// The hosts whose results are excluded now (by their latest decision), with that
    /// decision.
    pub fn excluded_workers(&self) -> std::collections::BTreeMap<&str, &WorkerExclusion> {
        let mut latest = std::collections::BTreeMap::new();
        for e in &self.exclusions {
            latest.insert(e.worker.as_str(), e);
        }
        latest.retain(|_, e| e.excluded);
        latest
    }
}

/// A tournament's opening suite: position strings, kept in one text, one a line, with
/// where each starts (a million openings cost their text and four bytes an opening).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpeningSuite {
    /// The openings, each followed by a line break.
    text: String,
    /// Where each opening starts in `text`, and where the text ends.
    bounds: Vec<u32>,
}

impl OpeningSuite {
    /// A suite of `openings` (position strings: no line breaks).
    pub fn new<S: AsRef<str>>(openings: &[S]) -> OpeningSuite {
        let mut text = String::with_capacity(openings.iter().map(|o| o.as_ref().len() + 1).sum());
        for o in openings {
            text.push_str(o.as_ref());
            text.push('\n');
        }
        Self::of_lines(text)
    }

    /// The suite of a text of one opening a line, each line ended.
    fn of_lines(text: String) -> OpeningSuite {
        let mut bounds = Vec::with_capacity(text.len() / 40 + 1);
        bounds.push(0);
        bounds.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        OpeningSuite { text, bounds }
    }

    /// How many openings it has.
    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Opening `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        let (start, end) = (*self.bounds.get(i)?, *self.bounds.get(i + 1)?);
        self.text.get(start as usize..end as usize - 1)
    }

    /// The stored form: the text, compressed.
    fn encode(&self) -> Vec<u8> {
        lz4_flex::compress_prepend_size(self.text.as_bytes())
    }

    fn decode(bytes: &[u8]) -> Result<OpeningSuite, StoreError> {
        let mut text = lz4_flex::decompress_size_prepended(bytes)
            .map_err(|e| StoreError::Compression(e.to_string()))?;
        if text.last().is_some_and(|&b| b != b'\n') {
            text.push(b'\n');
        }
        let text = String::from_utf8(text)
            .map_err(|_| StoreError::Compression("an opening suite is not UTF-8".into()))?;
        Ok(Self::of_lines(text))
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

/// A completed pair: its outcome and both games.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairRecord {
    /// The tournament.
    pub tournament: u64,
    /// What it contributes to the standings.
    pub outcome: PairOutcome,
    /// The two games' records as a JSON array (game 0: the pairing's first engine moves
    /// first), kept as the worker sent them.
    pub games: Box<RawValue>,
    /// The worker that played it.
    pub worker: String,
    /// The name of the worker token that delivered it (`open` when none was needed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
}

impl PairRecord {
    /// The two games, decoded.
    ///
    /// # Errors
    /// The stored records do not decode.
    pub fn games(&self) -> Result<Vec<GameRecord>, serde_json::Error> {
        serde_json::from_str(self.games.get())
    }
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
}

/// The open database and its trees.
struct Trees {
    db: sled::Db,
    meta: sled::Tree,
    tournaments: sled::Tree,
    pairs: sled::Tree,
    digests: sled::Tree,
    counts: sled::Tree,
    summaries: sled::Tree,
    openings: sled::Tree,
    versions: sled::Tree,
    artifacts: sled::Tree,
}

/// Writes pair records and their digests in one transaction, adding `added` to the
/// tournaments' counts of stored pairs.
fn write_pairs(
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
fn read_u64(bytes: &[u8]) -> u64 {
    bytes.try_into().map_or(0, u64::from_be_bytes)
}

/// Writes every pair record not yet in the compact encoding, or without its digest, again
/// (schema 1 and 2 stores); returns how many. A record that does not decode is left as it
/// is, for `verify` to name.
fn migrate(trees: &Trees) -> Result<u64, StoreError> {
    use std::ops::Bound;
    let mut migrated = 0;
    let mut after: Option<sled::IVec> = None;
    loop {
        let range = match &after {
            Some(key) => trees
                .pairs
                .range::<sled::IVec, _>((Bound::Excluded(key.clone()), Bound::Unbounded)),
            None => trees.pairs.iter(),
        };
        let chunk: Vec<(sled::IVec, sled::IVec)> =
            range.take(MIGRATION_BATCH).collect::<Result<_, _>>()?;
        let Some((last, _)) = chunk.last() else {
            break;
        };
        after = Some(last.clone());
        let (mut pairs, mut digests) = (sled::Batch::default(), sled::Batch::default());
        let mut added = std::collections::BTreeMap::new();
        for (key, value) in &chunk {
            let compact = value.first() == Some(&codec::COLUMNAR_TAG);
            if compact && trees.digests.contains_key(key)? {
                continue;
            }
            let Ok((bytes, digest)) = decode_pair(value).and_then(|r| codec::encode(&r)) else {
                continue;
            };
            *added.entry(read_u64(&key[..8.min(key.len())])).or_default() += 1;
            pairs.insert(key, bytes);
            digests.insert(key, digest.encode());
            migrated += 1;
        }
        write_pairs(trees, pairs, digests, &added)?;
    }
    trees.db.flush()?;
    Ok(migrated)
}

fn pair_key(tournament: u64, pair: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&tournament.to_be_bytes());
    key[8..].copy_from_slice(&pair.to_be_bytes());
    key
}

impl Store {
    /// Opens (or creates) the store in `path`, with a cache of [`DEFAULT_CACHE_MB`].
    ///
    /// # Errors
    /// sled errors (e.g. another process has it open) or an incompatible schema version.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Self::open_with_cache(path, DEFAULT_CACHE_MB)
    }

    /// Opens (or creates) the store in `path` with a page cache of `cache_mb` MiB: the
    /// most memory sled keeps of the store, beside what the coordinator holds.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_with_cache(path: &Path, cache_mb: u64) -> Result<Store, StoreError> {
        let cache_bytes = cache_mb.max(1) << 20;
        Ok(Store {
            trees: Arc::new(RwLock::new(Self::open_trees(path, cache_bytes)?)),
            path: Some(path.to_path_buf()),
            cache_bytes,
            pair_writer: Default::default(),
        })
    }

    fn open_trees(path: &Path, cache_bytes: u64) -> Result<Trees, StoreError> {
        let db = sled::Config::new()
            .path(path)
            .cache_capacity(cache_bytes)
            .mode(sled::Mode::LowSpace)
            .open()?;
        Self::trees_of(db, &path.display().to_string())
    }

    /// Opens the store again in place (for every clone): what sled had not made durable is
    /// gone, and what is on disk is read back. Waits up to ten seconds for the old handles
    /// to let go of the files.
    ///
    /// # Errors
    /// A temporary store, or the store does not open.
    pub fn reopen(&self) -> Result<(), StoreError> {
        let Some(path) = &self.path else {
            return Err(StoreError::DataDir {
                path: "<temporary>".into(),
                reason: "a temporary store cannot be opened again".into(),
            });
        };
        let _writer = self.pair_writer.lock().unwrap_or_else(|e| e.into_inner());
        let mut trees = self.trees.write().unwrap_or_else(|e| e.into_inner());
        // Let go of the old database first: sled releases its files when the last handle
        // goes (its background flusher may hold one a moment longer).
        *trees = Self::trees_of(sled::Config::new().temporary(true).open()?, "<closed>")?;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match Self::open_trees(path, self.cache_bytes) {
                Ok(fresh) => {
                    *trees = fresh;
                    return Ok(());
                }
                Err(_) if std::time::Instant::now() < until => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn t(&self) -> std::sync::RwLockReadGuard<'_, Trees> {
        self.trees.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Opens (or creates) the store of a data directory, the `--data` of `tourney run` and
    /// `tourney coordinator`: the sled store lives in `DIR/db`, beside what `run` keeps
    /// there (`artifacts/`, `report-N.html`). A directory that is itself a sled store (as
    /// older coordinators wrote it) opens in place.
    ///
    /// # Errors
    /// [`StoreError::DataDir`] when `dir` is a file, or a directory with other contents
    /// and no store; else as [`Store::open`].
    pub fn open_data_dir(dir: &Path, cache_mb: u64) -> Result<Store, StoreError> {
        let wrong = |reason: String| StoreError::DataDir {
            path: dir.display().to_string(),
            reason,
        };
        if dir.exists() && !dir.is_dir() {
            return Err(wrong("it is a file, not a directory".into()));
        }
        std::fs::create_dir_all(dir).map_err(|e| wrong(format!("cannot create it: {e}")))?;
        let store = dir.join("db");
        if store.is_file() && dir.join("conf").is_file() {
            return Store::open_with_cache(dir, cache_mb);
        }
        if !store.exists() {
            let entries =
                std::fs::read_dir(dir).map_err(|e| wrong(format!("cannot list it: {e}")))?;
            let foreign: Vec<String> = entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|name| name != "artifacts" && !name.starts_with("report-"))
                .take(3)
                .collect();
            if !foreign.is_empty() {
                return Err(wrong(format!(
                    "it holds no tourney store (expected db/ in it, or an empty directory) but \
                     other files ({}); pick a new or empty directory",
                    foreign.join(", ")
                )));
            }
        } else if !store.is_dir() {
            return Err(wrong(format!("{} is not a sled store", store.display())));
        }
        Store::open_with_cache(&store, cache_mb)
    }

    /// A store that lives in memory only (tests).
    ///
    /// # Errors
    /// sled errors.
    pub fn temporary() -> Result<Store, StoreError> {
        Ok(Store {
            trees: Arc::new(RwLock::new(Self::trees_of(
                sled::Config::new().temporary(true).open()?,
                "<temporary>",
            )?)),
            path: None,
            cache_bytes: 0,
            pair_writer: Default::default(),
        })
    }

    fn trees_of(db: sled::Db, path: &str) -> Result<Trees, StoreError> {
        let meta = db.open_tree("meta")?;
        let found = meta
            .get("schema_version")?
            .map(|v| u64::from_be_bytes(v.as_ref().try_into().unwrap_or([0; 8])));
        if let Some(found) = found.filter(|v| !READABLE_VERSIONS.contains(v)) {
            return Err(StoreError::Schema {
                path: path.to_string(),
                found,
                expected: SCHEMA_VERSION,
            });
        }
        let trees = Trees {
            tournaments: db.open_tree("tournaments")?,
            pairs: db.open_tree("pairs")?,
            digests: db.open_tree("digests")?,
            counts: db.open_tree("counts")?,
            summaries: db.open_tree("summaries")?,
            openings: db.open_tree("openings")?,
            versions: db.open_tree("versions")?,
            artifacts: db.open_tree("artifacts")?,
            meta,
            db,
        };
        if found != Some(SCHEMA_VERSION) {
            migrate(&trees)?;
            trees
                .meta
                .insert("schema_version", &SCHEMA_VERSION.to_be_bytes())?;
        }
        // Suites of records written before they were stored apart are moved out.
        for value in trees.tournaments.iter().values() {
            let Ok(mut record) = serde_json::from_slice::<TournamentRecord>(&value?) else {
                continue;
            };
            if !record.openings.is_empty() {
                let suite = OpeningSuite::new(&std::mem::take(&mut record.openings));
                trees
                    .openings
                    .insert(record.id.to_be_bytes(), suite.encode())?;
                trees
                    .tournaments
                    .insert(record.id.to_be_bytes(), serde_json::to_vec(&record)?)?;
            }
        }
        Ok(trees)
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

    /// The completed pairs of a tournament, in pair order.
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn pairs(&self, tournament: u64) -> Result<Vec<PairRecord>, StoreError> {
        self.t()
            .pairs
            .scan_prefix(tournament.to_be_bytes())
            .values()
            .map(|v| decode_pair(&v?))
            .collect()
    }

    /// The completed pairs `from..=to` of a tournament, in pair order (read by range, not
    /// by scanning the others).
    ///
    /// # Errors
    /// sled or decoding errors.
    pub fn pairs_between(
        &self,
        tournament: u64,
        from: u64,
        to: u64,
    ) -> Result<Vec<PairRecord>, StoreError> {
        self.t()
            .pairs
            .range(pair_key(tournament, from)..=pair_key(tournament, to))
            .values()
            .map(|v| decode_pair(&v?))
            .collect()
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

    /// Stores an artifact; returns its sha256 (hex).
    ///
    /// # Errors
    /// sled errors.
    pub fn put_artifact(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let hash = tourney_model::sha256_hex(bytes);
        self.t().artifacts.insert(hash.as_bytes(), bytes)?;
        Ok(hash)
    }

    /// Whether an artifact with this sha256 is stored (without reading it).
    ///
    /// # Errors
    /// sled errors.
    pub fn has_artifact(&self, sha256: &str) -> Result<bool, StoreError> {
        Ok(self.t().artifacts.contains_key(sha256.as_bytes())?)
    }

    /// An artifact by sha256.
    ///
    /// # Errors
    /// sled errors.
    pub fn artifact(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .t()
            .artifacts
            .get(sha256.as_bytes())?
            .map(|v| v.to_vec()))
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
        for entry in trees.artifacts.iter() {
            let (key, value) = entry?;
            let name = String::from_utf8_lossy(&key).into_owned();
            if tourney_model::sha256_hex(&value) == name {
                out.artifacts += 1;
            } else {
                problem(format!("artifact {name}: its content has another sha256"));
            }
        }
        Ok(out)
    }

    /// Whether the store's disk has room to spare for it to be opened again after it
    /// failed for want of space (sled writes as it opens, and must not be made to fail
    /// again halfway): [`recovery_reserve`] of its space, on its file system and under
    /// the process's file-size limit for its largest file.
    pub fn has_room(&self) -> bool {
        let Some(path) = &self.path else {
            return true;
        };
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: statvfs writes into the zeroed struct it is given; getrlimit likewise.
        let (free, size, limit) = unsafe {
            let mut fs: libc::statvfs = std::mem::zeroed();
            let (free, size) = if libc::statvfs(c_path.as_ptr(), &mut fs) == 0 {
                (
                    fs.f_bavail.saturating_mul(fs.f_frsize),
                    fs.f_blocks.saturating_mul(fs.f_frsize),
                )
            } else {
                (0, 0)
            };
            let mut limit: libc::rlimit = std::mem::zeroed();
            let limit = if libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) == 0 {
                limit.rlim_cur
            } else {
                libc::RLIM_INFINITY
            };
            (free, size, limit)
        };
        let largest = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max()
            .unwrap_or(0);
        let space = if limit == libc::RLIM_INFINITY {
            size
        } else {
            size.min(limit)
        };
        let reserve = recovery_reserve(space);
        let under_limit = limit == libc::RLIM_INFINITY || limit.saturating_sub(largest) >= reserve;
        free >= reserve && under_limit
    }

    /// Whether the store takes writes again: writes, flushes and removes a probe.
    ///
    /// # Errors
    /// The write or the flush failed.
    pub async fn probe(&self) -> Result<(), StoreError> {
        self.t().meta.insert("probe", &[1u8][..])?;
        self.flush().await?;
        self.t().meta.remove("probe")?;
        self.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_room_to_recover_scales_with_the_volume() {
        // A 40 MiB volume with 32 MiB freed recovers; a large one keeps 64 MiB spare.
        assert_eq!(recovery_reserve(40 << 20), 5 << 19);
        assert!(recovery_reserve(40 << 20) <= 32 << 20);
        assert_eq!(recovery_reserve(1 << 40), 64 << 20);
        assert_eq!(recovery_reserve(4 << 20), 1 << 20);
        assert_eq!(recovery_reserve(0), 1 << 20);
    }

    /// Commits `records` durably, as the coordinator's group commit does.
    fn commit(store: &Store, records: &[PairRecord]) -> Result<Vec<bool>, StoreError> {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(store.commit_pairs(records))
    }
    use tourney_model::{PlayerRecord, Termination};

    fn record(id: u64) -> TournamentRecord {
        TournamentRecord {
            id,
            config_text: "name = \"t\"".into(),
            file: "t.toml".into(),
            openings: Vec::new(),
            state: State::Queued,
            created_ms: 1,
            artifacts: Default::default(),
            paused_reason: None,
            ended_ms: None,
            exclusions: Vec::new(),
            archived_ms: None,
            verification: None,
            tuned_by: None,
        }
    }

    #[test]
    fn the_latest_decision_about_a_worker_is_the_one_in_force() {
        let decision = |worker: &str, excluded, at_ms| WorkerExclusion {
            worker: worker.into(),
            excluded,
            reason: format!("at {at_ms}"),
            at_ms,
        };
        let mut r = record(1);
        r.exclusions = vec![
            decision("a", true, 1),
            decision("b", true, 2),
            decision("a", false, 3),
            decision("c", true, 4),
            decision("c", true, 5),
        ];
        let now: Vec<(&str, u64)> = r
            .excluded_workers()
            .into_iter()
            .map(|(w, e)| (w, e.at_ms))
            .collect();
        assert_eq!(now, [("b", 2), ("c", 5)]);
        // Stored and read back, the history is kept whole.
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.put_tournament(&r).unwrap();
        assert_eq!(store.tournaments().unwrap(), [r]);
    }

    fn pair(tournament: u64, pair: u64, half: u8) -> PairRecord {
        let game = GameRecord {
            game: tourney_model::GameKind::Loa,
            rules: String::new(),
            start: "s".into(),
            opening_plies: 0,
            time_control: "inf".into(),
            white: PlayerRecord::default(),
            black: PlayerRecord::default(),
            moves: vec![],
            result: tourney_model::GameResult::WhiteWins,
            termination: Termination::Connection,
            detail: None,
            started_ms: None,
            meta: Default::default(),
        };
        PairRecord {
            tournament,
            outcome: PairOutcome {
                pair,
                first: 0,
                second: 1,
                half_points: [half, half],
                white: [1, 0],
            },
            games: serde_json::value::to_raw_value(&[game.clone(), game]).unwrap(),
            worker: "w".into(),
            token: "box1".into(),
        }
    }

    /// Opens the store in `path` once the last process-local handle has let go of it
    /// (sled releases its lock file when its background flusher has stopped).
    fn reopen(path: &Path) -> Store {
        reopen_with(|| Store::open(path))
    }

    /// `open` retried until the last process-local handle of the store has let go of it.
    fn reopen_with(open: impl Fn() -> Result<Store, StoreError>) -> Store {
        (0..100)
            .find_map(|_| {
                open().ok().or_else(|| {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    None
                })
            })
            .expect("the store reopens")
    }

    #[test]
    fn a_data_directory_keeps_its_store_in_db_and_opens_the_same_way_twice() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("new/data");
        {
            let store = Store::open_data_dir(&data, DEFAULT_CACHE_MB).unwrap();
            store.put_tournament(&record(1)).unwrap();
            store.t().db.flush().unwrap();
        }
        assert!(data.join("db").is_dir(), "the store lives in DIR/db");
        std::fs::create_dir(data.join("artifacts")).unwrap();
        std::fs::write(data.join("report-1.html"), "<html>").unwrap();
        let store = reopen_with(|| Store::open_data_dir(&data, DEFAULT_CACHE_MB));
        assert_eq!(store.tournaments().unwrap(), vec![record(1)]);
    }

    #[test]
    fn a_store_written_in_place_by_an_older_coordinator_opens_in_place() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store.put_tournament(&record(3)).unwrap();
            store.t().db.flush().unwrap();
        }
        let store = reopen_with(|| Store::open_data_dir(dir.path(), DEFAULT_CACHE_MB));
        assert_eq!(store.tournaments().unwrap(), vec![record(3)]);
        assert!(!dir.path().join("db").is_dir());
    }

    #[test]
    fn a_directory_that_is_not_a_data_directory_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").unwrap();
        let e = Store::open_data_dir(dir.path(), DEFAULT_CACHE_MB)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains(&dir.path().display().to_string())
                && e.contains("expected db/")
                && e.contains("Cargo.toml"),
            "{e}"
        );
        assert!(!dir.path().join("db").exists(), "nothing created");
        let file = dir.path().join("Cargo.toml");
        let e = Store::open_data_dir(&file, DEFAULT_CACHE_MB)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is a file"), "{e}");
    }

    #[test]
    fn records_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            assert_eq!(store.next_tournament_id().unwrap(), 1);
            assert_eq!(store.next_tournament_id().unwrap(), 2);
            store.put_tournament(&record(2)).unwrap();
            commit(&store, &[pair(2, 1, 2), pair(2, 0, 1)]).unwrap();
            let sha = store.put_artifact(b"#!/bin/sh\n").unwrap();
            assert_eq!(sha.len(), 64);
            store.put_version(&version("v2", Some("v1"))).unwrap();
            store.put_version(&version("v1", None)).unwrap();
            store.t().db.flush().unwrap();
        }
        let store = reopen(dir.path());
        assert_eq!(
            store.versions().unwrap(),
            [version("v1", None), version("v2", Some("v1"))]
        );
        assert_eq!(store.tournaments().unwrap(), vec![record(2)]);
        let pairs = store.pairs(2).unwrap();
        assert_eq!(
            pairs.iter().map(|p| p.outcome.pair).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert!(store.pairs(3).unwrap().is_empty());
        assert_eq!(
            store.next_tournament_id().unwrap(),
            3,
            "ids are never reused"
        );
        let sha = tourney_model::sha256_hex(b"#!/bin/sh\n");
        assert_eq!(store.artifact(&sha).unwrap().unwrap(), b"#!/bin/sh\n");
    }

    #[test]
    fn a_repeated_pair_keeps_the_first_result() {
        let store = Store::temporary().unwrap();
        assert_eq!(
            commit(&store, &[pair(1, 0, 2), pair(1, 1, 0)]).unwrap(),
            vec![true, true]
        );
        assert_eq!(
            commit(&store, &[pair(1, 0, 0), pair(1, 2, 1)]).unwrap(),
            vec![false, true]
        );
        let pairs = store.pairs(1).unwrap();
        assert_eq!(pairs[0].outcome.half_points, [2, 2]);
        assert_eq!(pairs.len(), 3);
        let one = store.pair(1, 0).unwrap().expect("pair 0 is stored");
        assert_eq!(one.outcome.half_points, [2, 2]);
        assert!(store.pair(1, 3).unwrap().is_none());
        assert!(store.pair(2, 0).unwrap().is_none());
    }

    #[test]
    fn a_store_of_another_schema_version_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::open(dir.path()).unwrap();
            db.open_tree("meta")
                .unwrap()
                .insert("schema_version", &99u64.to_be_bytes())
                .unwrap();
            db.flush().unwrap();
        }
        let err = Store::open(dir.path()).err().unwrap();
        assert!(err.to_string().contains("schema version 99"), "{err}");
    }

    /// A store as an older version wrote it: schema `version`, the records encoded by
    /// `encode`.
    fn old_store(
        path: &Path,
        version: u64,
        records: &[PairRecord],
        encode: fn(&PairRecord) -> Vec<u8>,
    ) {
        let db = sled::open(path).unwrap();
        db.open_tree("meta")
            .unwrap()
            .insert("schema_version", &version.to_be_bytes())
            .unwrap();
        // Older versions kept the opening suite inside the record.
        let mut older = record(4);
        older.openings = vec![START.into()];
        db.open_tree("tournaments")
            .unwrap()
            .insert(4u64.to_be_bytes(), serde_json::to_vec(&older).unwrap())
            .unwrap();
        let pairs = db.open_tree("pairs").unwrap();
        for r in records {
            pairs
                .insert(pair_key(r.tournament, r.outcome.pair), encode(r))
                .unwrap();
        }
        db.flush().unwrap();
    }

    #[test]
    fn schema_1_and_2_stores_are_migrated_as_they_open_and_read_the_same() {
        let plain = |r: &PairRecord| serde_json::to_vec(r).unwrap();
        let lz4 = |r: &PairRecord| {
            let mut v = vec![codec::LZ4_TAG];
            v.extend_from_slice(&lz4_flex::compress_prepend_size(
                &serde_json::to_vec(r).unwrap(),
            ));
            v
        };
        for (version, encode) in [(1, plain as fn(&PairRecord) -> Vec<u8>), (2, lz4)] {
            let dir = tempfile::tempdir().unwrap();
            let old: Vec<PairRecord> = (0..2500).map(|p| pair(4, p, (p % 3) as u8)).collect();
            old_store(dir.path(), version, &old, encode);
            let before: u64 = size_of_tree(dir.path(), "pairs");
            let store = reopen(dir.path());
            let version_now = store.t().meta.get("schema_version").unwrap().unwrap();
            assert_eq!(version_now.as_ref(), SCHEMA_VERSION.to_be_bytes());
            let pairs = store.pairs(4).unwrap();
            assert_eq!(pairs.len(), old.len());
            for (new, old) in pairs.iter().zip(&old) {
                assert_eq!(new.outcome, old.outcome);
                assert_eq!(new.games().unwrap(), old.games().unwrap());
            }
            let stored = store.t().pairs.get(pair_key(4, 0)).unwrap().unwrap();
            assert_eq!(
                stored[0],
                codec::COLUMNAR_TAG,
                "schema {version}: re-encoded"
            );
            assert_eq!(store.digests(4).unwrap().len(), old.len());
            assert_eq!(store.pair_count(4).unwrap(), old.len() as u64);
            let verified = store.verify().unwrap();
            assert_eq!(
                (verified.pairs, verified.damaged),
                (2500, 0),
                "{verified:?}"
            );
            assert!(
                size_of_tree(dir.path(), "pairs") <= before.max(1) * 4,
                "sanity"
            );
            // New pairs land beside the migrated ones.
            commit(&store, &[pair(4, 2500, 0)]).unwrap();
            assert_eq!(store.pair_count(4).unwrap(), 2501);
        }
    }

    /// Stored bytes of a tree's values (what the encoding decides).
    fn size_of_tree(path: &Path, _tree: &str) -> u64 {
        std::fs::read_dir(path)
            .unwrap()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    }

    #[test]
    fn a_migration_leaves_a_damaged_record_for_verify_to_name() {
        let dir = tempfile::tempdir().unwrap();
        let good = pair(4, 0, 2);
        let mut damaged = pair(4, 1, 2);
        damaged.worker = "damaged".into();
        old_store(dir.path(), 2, &[good, damaged], |r| {
            if r.worker == "damaged" {
                return b"{\"damaged".to_vec();
            }
            let mut v = vec![codec::LZ4_TAG];
            v.extend_from_slice(&lz4_flex::compress_prepend_size(
                &serde_json::to_vec(r).unwrap(),
            ));
            v
        });
        let store = reopen(dir.path());
        assert_eq!(store.digests(4).unwrap().len(), 1);
        let verified = store.verify().unwrap();
        assert_eq!((verified.pairs, verified.damaged), (1, 2), "{verified:?}");
        assert!(verified.problems[0].contains("tournament 4 pair 1: does not decode"));
        assert!(
            verified.problems[1]
                .contains("tournament 4: 1 pairs counted, 1 digests, 2 pair records")
        );
    }

    #[test]
    fn a_summary_is_kept_only_while_it_covers_every_stored_pair() {
        let store = Store::temporary().unwrap();
        commit(&store, &[pair(1, 0, 2), pair(1, 1, 0)]).unwrap();
        assert!(
            !store.put_summary(1, 1, b"stale").unwrap(),
            "2 pairs are stored"
        );
        assert!(store.put_summary(1, 2, b"current").unwrap());
        assert_eq!(store.summary(1).unwrap().as_deref(), Some(&b"current"[..]));
        // A duplicate changes nothing; a new pair outdates the summary.
        commit(&store, &[pair(1, 1, 2)]).unwrap();
        assert_eq!(store.summary(1).unwrap().as_deref(), Some(&b"current"[..]));
        commit(&store, &[pair(1, 2, 2)]).unwrap();
        assert_eq!(store.summary(1).unwrap(), None);
        assert_eq!(store.pair_count(1).unwrap(), 3);
        assert_eq!(store.summary(2).unwrap(), None);
    }

    #[test]
    fn pair_records_are_stored_compressed_and_a_corrupt_one_is_an_error() {
        let store = Store::temporary().unwrap();
        let record = pair(1, 0, 1);
        commit(&store, std::slice::from_ref(&record)).unwrap();
        let stored = store.t().pairs.get(pair_key(1, 0)).unwrap().unwrap();
        let json = serde_json::to_vec(&record).unwrap();
        assert_eq!(stored[0], codec::COLUMNAR_TAG);
        assert!(
            stored.len() < json.len(),
            "{} vs {}",
            stored.len(),
            json.len()
        );
        let back = store.pair(1, 0).unwrap().unwrap();
        assert_eq!(back.games().unwrap(), record.games().unwrap());
        assert_eq!(back.worker, "w");
        let mut corrupt = stored.to_vec();
        corrupt.truncate(corrupt.len() / 2);
        store.t().pairs.insert(pair_key(1, 1), corrupt).unwrap();
        let err = store.pair(1, 1).unwrap_err();
        assert!(matches!(err, StoreError::Compression(_)), "{err}");
    }

    fn version(name: &str, parent: Option<&str>) -> EngineVersion {
        EngineVersion {
            name: name.into(),
            player: Some("ab".into()),
            command: None,
            artifact: None,
            options: Default::default(),
            parent: parent.map(str::to_string),
            note: "n".into(),
            created_ms: 7,
        }
    }

    const START: &str = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";

    #[test]
    fn a_suite_is_stored_apart_and_one_inside_an_older_record_is_moved_out() {
        let suite = OpeningSuite::new(&[START, "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w", ""]);
        assert_eq!(suite.len(), 3);
        assert_eq!(
            suite.get(1),
            Some("3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w")
        );
        assert_eq!((suite.get(2), suite.get(3)), (Some(""), None));
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            store
                .put_openings(5, &OpeningSuite::new(&[START, START]))
                .unwrap();
            let mut older = record(6);
            older.openings = vec![START.into(), "8/8/8/8/8/8/8/8 w".into()];
            store.put_tournament(&older).unwrap();
            store.t().db.flush().unwrap();
        }
        let store = reopen(dir.path());
        assert_eq!(store.openings(5).unwrap().len(), 2);
        let moved = store.openings(6).unwrap();
        assert_eq!(
            (moved.len(), moved.get(0), moved.get(1)),
            (2, Some(START), Some("8/8/8/8/8/8/8/8 w"))
        );
        assert_eq!(
            store.tournament(6).unwrap().unwrap(),
            record(6),
            "the record without them"
        );
        assert!(store.openings(7).unwrap().is_empty());
    }

    #[test]
    fn verify_reads_everything_back_and_names_what_is_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.put_tournament(&record(1)).unwrap();
        store.put_openings(1, &OpeningSuite::new(&[START])).unwrap();
        commit(&store, &[pair(1, 0, 2), pair(1, 1, 0)]).unwrap();
        let sha = store.put_artifact(b"#!/bin/sh\n").unwrap();
        let whole = store.verify().unwrap();
        assert_eq!(
            (
                whole.tournaments,
                whole.pairs,
                whole.artifacts,
                whole.damaged
            ),
            (1, 2, 1, 0),
            "{whole:?}"
        );
        // A truncated pair, a pair of no tournament, and an artifact changed on disk.
        let stored = store.t().pairs.get(pair_key(1, 1)).unwrap().unwrap();
        store
            .t()
            .pairs
            .insert(pair_key(1, 1), &stored[..stored.len() / 2])
            .unwrap();
        commit(&store, &[pair(9, 0, 1)]).unwrap();
        store
            .t()
            .artifacts
            .insert(sha.as_bytes(), &b"changed"[..])
            .unwrap();
        let found = store.verify().unwrap();
        assert_eq!((found.pairs, found.damaged), (1, 3), "{found:?}");
        let problems = found.problems.join("\n");
        assert!(
            problems.contains("tournament 1 pair 1: does not decode"),
            "{problems}"
        );
        assert!(
            problems.contains("tournament 9 pair 0: no such tournament"),
            "{problems}"
        );
        assert!(problems.contains(&format!("artifact {sha}: its content has another sha256")));
    }
}
