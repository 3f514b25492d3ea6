//! Opening a store: its sled trees and their schema (older schemas migrated, opening
//! suites moved out of their records), a data directory's store, a temporary one, and a
//! store opened again in place after a failure.

use std::path::Path;
use std::sync::{Arc, RwLock};

use crate::migrate::migrate;
use crate::{
    DEFAULT_CACHE_MB, OpeningSuite, READABLE_VERSIONS, SCHEMA_VERSION, Store, StoreError,
    TournamentRecord, Trees, artifacts,
};

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
        let store = Store {
            trees: Arc::new(RwLock::new(Self::open_trees(path, cache_bytes)?)),
            path: Some(path.to_path_buf()),
            cache_bytes,
            pair_writer: Default::default(),
            artifacts: artifacts::ArtifactDir::inside(path)?,
        };
        store.move_artifacts_out()?;
        Ok(store)
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
                .filter(|name| {
                    !matches!(name.as_str(), "artifacts" | "positions")
                        && !name.starts_with("report-")
                })
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
            artifacts: artifacts::ArtifactDir::temporary()?,
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
            artifact_links: db.open_tree("artifact_links")?,
            users: db.open_tree("users")?,
            user_tokens: db.open_tree("user_tokens")?,
            events: db.open_tree("events")?,
            sessions: db.open_tree("sessions")?,
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
}
