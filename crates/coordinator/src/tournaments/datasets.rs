//! Data generation runs (`format = "datagen"`): the positions of their checked games,
//! written to data files of fixed-size records (docs/datagen.md) under the coordinator's
//! data directory, `positions/<id>/`, beside the store and not in it.
//!
//! A batch of reports is appended after its pairs are committed, then the run's
//! `summary.json` (its files and their record counts, the pairs in, what was skipped) is
//! replaced atomically. On opening, each file is cut to the records its summary counts
//! (a tail written after the last summary goes), and a summary that counts other pairs
//! than the store holds (a stop between the commit and the summary) has the data set
//! rebuilt from the stored games: the store is the truth, the files follow it.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use tourney_dataset::extract::Seen;
use tourney_dataset::{Extracted, HEADER_BYTES, RECORD_BYTES, Skipped};
use tourney_model::tournament::DatagenSettings;

use crate::scheduler::TournamentId;

/// One data file of a run and the records it holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct DataFile {
    /// Its name in the run's directory (`positions-000001.bin`).
    pub(crate) name: String,
    /// Records in it.
    pub(crate) records: u64,
}

/// What a run's data set holds: `summary.json` in its directory.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Pairs whose positions are in (or were all skipped).
    pub(crate) pairs: u64,
    /// Records in all files.
    pub(crate) positions: u64,
    /// Positions skipped, by reason.
    pub(crate) skipped: Skipped,
    /// The files, in order.
    pub(crate) files: Vec<DataFile>,
}

/// One run's data set as it is written.
struct DataSet {
    dir: PathBuf,
    file_records: u64,
    seen: Option<Seen>,
    summary: Summary,
    /// The last file, open for appending.
    current: Option<File>,
}

impl DataSet {
    /// An empty data set in `dir` (which must hold none).
    fn new(dir: PathBuf, d: &DatagenSettings) -> DataSet {
        DataSet {
            dir,
            file_records: ((d.file_mb << 20) / RECORD_BYTES as u64).max(1),
            seen: d.dedup.then(Seen::default),
            summary: Summary::default(),
            current: None,
        }
    }

    /// Appends `batch` (skipping positions seen before), then makes the files and the
    /// summary durable.
    fn append(&mut self, batch: Vec<Extracted>) -> io::Result<()> {
        for mut extracted in batch {
            if let Some(seen) = &mut self.seen {
                seen.keep_new(&mut extracted);
            }
            self.summary.skipped.add(&extracted.skipped);
            self.summary.pairs += 1;
            let mut records = extracted.records.as_slice();
            while !records.is_empty() {
                let room = self.room()?;
                let (now, later) = records.split_at(records.len().min(room as usize));
                let mut bytes = Vec::with_capacity(now.len() * RECORD_BYTES);
                for r in now {
                    bytes.extend_from_slice(&r.encode());
                }
                self.current
                    .as_mut()
                    .expect("a file with room")
                    .write_all(&bytes)?;
                let last = self.summary.files.last_mut().expect("a file");
                last.records += now.len() as u64;
                self.summary.positions += now.len() as u64;
                records = later;
            }
        }
        if let Some(file) = &mut self.current {
            file.sync_data()?;
        }
        self.write_summary()
    }

    /// Room in the current file, starting a new one when it is full (or there is none).
    fn room(&mut self) -> io::Result<u64> {
        let used = self.summary.files.last().map(|f| f.records);
        if let (Some(used), Some(_)) = (used, &self.current)
            && used < self.file_records
        {
            return Ok(self.file_records - used);
        }
        if let Some(file) = self.current.take() {
            file.sync_data()?;
        }
        fs::create_dir_all(&self.dir)?;
        let name = format!("positions-{:06}.bin", self.summary.files.len() + 1);
        let mut file = File::create(self.dir.join(&name))?;
        tourney_dataset::write_header(&mut file)?;
        self.current = Some(file);
        self.summary.files.push(DataFile { name, records: 0 });
        Ok(self.file_records)
    }

    fn write_summary(&self) -> io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let temporary = self.dir.join("summary.json.part");
        let mut file = File::create(&temporary)?;
        file.write_all(&serde_json::to_vec_pretty(&self.summary).map_err(io::Error::other)?)?;
        file.sync_all()?;
        fs::rename(&temporary, self.dir.join("summary.json"))?;
        if let Ok(dir) = File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The data set of `dir` as its summary says, its files cut to the records counted;
    /// `None` when there is no summary.
    fn open(dir: PathBuf, d: &DatagenSettings) -> io::Result<Option<DataSet>> {
        let text = match fs::read(dir.join("summary.json")) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let summary: Summary = serde_json::from_slice(&text).map_err(io::Error::other)?;
        let mut set = DataSet::new(dir, d);
        for file in &summary.files {
            let path = set.dir.join(&file.name);
            let handle = OpenOptions::new().write(true).open(&path)?;
            handle.set_len(HEADER_BYTES as u64 + file.records * RECORD_BYTES as u64)?;
        }
        if let Some(seen) = &mut set.seen {
            for file in &summary.files {
                let input = io::BufReader::new(File::open(set.dir.join(&file.name))?);
                tourney_dataset::read_records(input, |r| {
                    seen.insert(&r);
                    Ok(())
                })
                .map_err(|e| io::Error::other(format!("{}: {e}", file.name)))?;
            }
        }
        if let Some(last) = summary.files.last() {
            set.current = Some(
                OpenOptions::new()
                    .append(true)
                    .open(set.dir.join(&last.name))?,
            );
        }
        set.summary = summary;
        Ok(Some(set))
    }
}

/// The data sets of the coordinator's data generation runs.
pub(crate) struct DataSets {
    root: PathBuf,
    /// A directory of its own when the coordinator has no data directory (a temporary
    /// store), removed with it.
    _temporary: Option<tempfile::TempDir>,
    sets: Mutex<HashMap<TournamentId, DataSet>>,
}

impl DataSets {
    /// Data sets under `dir/positions`, or under a temporary directory.
    pub(crate) fn new(dir: Option<&Path>) -> io::Result<DataSets> {
        let (root, temporary) = match dir {
            Some(dir) => (dir.join("positions"), None),
            None => {
                let t = tempfile::tempdir()?;
                (t.path().to_path_buf(), Some(t))
            }
        };
        Ok(DataSets {
            root,
            _temporary: temporary,
            sets: Mutex::new(HashMap::new()),
        })
    }

    /// Where run `id`'s files are.
    pub(crate) fn dir_of(&self, id: TournamentId) -> PathBuf {
        self.root.join(id.to_string())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<TournamentId, DataSet>> {
        self.sets.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens run `id`'s data set after a restart: as its files are when their summary
    /// counts the `done` pairs the store holds, else rebuilt from the pairs `stored`
    /// gives to the sink it is handed (all of them, in pair order, a batch at a time, so
    /// that a rebuild holds one batch in memory).
    pub(crate) fn open(
        &self,
        id: TournamentId,
        d: &DatagenSettings,
        done: u64,
        stored: impl FnOnce(&mut dyn FnMut(Vec<Extracted>) -> Result<(), String>) -> Result<(), String>,
    ) -> Result<(), String> {
        let dir = self.dir_of(id);
        let opened =
            DataSet::open(dir.clone(), d).map_err(|e| format!("{}: {e}", dir.display()))?;
        let set = match opened {
            Some(set) if set.summary.pairs == done => set,
            found => {
                if found.is_some() || dir.exists() {
                    tracing::warn!(
                        tournament = id,
                        "data set out of step with the store: rebuilt from the stored games"
                    );
                }
                let _ = fs::remove_dir_all(&dir);
                let mut set = DataSet::new(dir.clone(), d);
                if done > 0 {
                    stored(&mut |batch| {
                        set.append(batch)
                            .map_err(|e| format!("{}: {e}", dir.display()))
                    })?;
                }
                set
            }
        };
        self.lock().insert(id, set);
        Ok(())
    }

    /// Appends committed pairs' positions to run `id`'s data set; the positions it holds.
    pub(crate) fn append(
        &self,
        id: TournamentId,
        d: &DatagenSettings,
        batch: Vec<Extracted>,
    ) -> io::Result<u64> {
        let mut sets = self.lock();
        let set = sets
            .entry(id)
            .or_insert_with(|| DataSet::new(self.root.join(id.to_string()), d));
        set.append(batch)?;
        Ok(set.summary.positions)
    }

    /// Run `id`'s summary, if it has a data set.
    pub(crate) fn summary(&self, id: TournamentId) -> Option<Summary> {
        self.lock().get(&id).map(|s| s.summary.clone())
    }
}

/// The bytes a chunk of an exported data set holds at most.
const CHUNK_BYTES: usize = 1 << 20;

/// Reads `files` (each with the records to read of it) as one data file: its header, then
/// the records of each in order, in chunks of at most [`CHUNK_BYTES`], each given to
/// `send` until it returns `false`.
pub(crate) fn read_chunks(
    files: &[(PathBuf, u64)],
    mut send: impl FnMut(io::Result<Vec<u8>>) -> bool,
) {
    use std::io::{Read, Seek, SeekFrom};
    if !send(Ok(tourney_dataset::file::header().to_vec())) {
        return;
    }
    let per_chunk = (CHUNK_BYTES / RECORD_BYTES) as u64;
    for (path, records) in files {
        let opened = File::open(path).and_then(|mut f| {
            f.seek(SeekFrom::Start(HEADER_BYTES as u64))?;
            Ok(f)
        });
        let mut file = match opened {
            Ok(file) => file,
            Err(e) => {
                send(Err(e));
                return;
            }
        };
        let mut left = *records;
        while left > 0 {
            let n = left.min(per_chunk);
            let mut buf = vec![0; n as usize * RECORD_BYTES];
            if let Err(e) = file.read_exact(&mut buf) {
                send(Err(e));
                return;
            }
            if !send(Ok(buf)) {
                return;
            }
            left -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_dataset::{MoverResult, Record};
    use tourney_rules::{Loa, Position};

    fn settings() -> DatagenSettings {
        tourney_model::tournament::TournamentConfig::parse(
            "name = \"d\"\ngame = \"loa\"\nformat = \"datagen\"\nlimits = { nodes = 1 }\n[datagen]\npositions = 100\n\
             [[engine]]\nname = \"ab\"\nplayer = \"ab\"\n",
            "d.toml",
        )
        .unwrap()
        .datagen
        .unwrap()
    }

    /// A pair's positions: the start and `n - 1` positions along a walk, game id `pair`.
    fn pair(pair: u64, n: usize) -> Extracted {
        let mut position = Loa::start();
        let mut records = Vec::new();
        for i in 0..n {
            records.push(Record::of(&position, MoverResult::Draw, 0, i as u16, pair));
            let moves = position.legal_moves();
            position.play_unchecked(moves[(pair as usize + i) % moves.len()]);
        }
        Extracted {
            records,
            ..Extracted::default()
        }
    }

    fn read_all(set: &DataSet) -> Vec<Record> {
        let mut out = Vec::new();
        for f in &set.summary.files {
            let bytes = fs::read(set.dir.join(&f.name)).unwrap();
            let n = tourney_dataset::read_records(&bytes[..], |r| {
                out.push(r);
                Ok(())
            })
            .unwrap();
            assert_eq!(n, f.records, "{}", f.name);
        }
        out
    }

    #[test]
    fn files_rotate_at_their_size_and_reopen_as_their_summary_counts() {
        let dir = tempfile::tempdir().unwrap();
        let d = settings();
        let mut set = DataSet::new(dir.path().join("1"), &d);
        set.file_records = 7;
        set.append(vec![pair(0, 5), pair(1, 12)]).unwrap();
        set.append(vec![pair(2, 4)]).unwrap();
        // The start repeats in every pair: kept once.
        assert_eq!(set.summary.skipped.duplicates, 2);
        assert_eq!((set.summary.pairs, set.summary.positions), (3, 19));
        let counts: Vec<u64> = set.summary.files.iter().map(|f| f.records).collect();
        assert_eq!(counts, [7, 7, 5], "no file past its size");
        let written = read_all(&set);
        assert_eq!(written.len(), 19);

        // A torn tail after the last summary goes; duplicates stay known across the restart.
        let last = set.dir.join(&set.summary.files[2].name);
        drop(set);
        let mut f = OpenOptions::new().append(true).open(&last).unwrap();
        f.write_all(&[1; 45]).unwrap();
        drop(f);
        let mut set = DataSet::open(dir.path().join("1"), &d).unwrap().unwrap();
        set.file_records = 7;
        assert_eq!(read_all(&set), written);
        set.append(vec![pair(0, 5), pair(3, 3)]).unwrap();
        assert_eq!(
            set.summary.positions,
            19 + 2,
            "pair 0 again, and the start, are seen"
        );
        let counts: Vec<u64> = set.summary.files.iter().map(|f| f.records).collect();
        assert_eq!(
            counts,
            [7, 7, 7],
            "appended to the last file, as far as its size"
        );
        assert_eq!(read_all(&set).len(), 21);
    }

    #[test]
    fn a_data_set_out_of_step_with_the_store_is_rebuilt_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = settings();
        let sets = DataSets::new(Some(dir.path())).unwrap();
        sets.append(1, &d, vec![pair(0, 5)]).unwrap();
        // The store holds two pairs: the data set counts one, and is rebuilt.
        let sets = DataSets::new(Some(dir.path())).unwrap();
        sets.open(1, &d, 2, |sink| {
            sink(vec![pair(0, 5)])?;
            sink(vec![pair(1, 6)])
        })
        .unwrap();
        let s = sets.summary(1).unwrap();
        assert_eq!((s.pairs, s.positions), (2, 10));
        // In step: the files are taken as they are, the store not read.
        let sets = DataSets::new(Some(dir.path())).unwrap();
        sets.open(1, &d, 2, |_| panic!("not read")).unwrap();
        assert_eq!(sets.summary(1).unwrap(), s);
        // A run that never wrote anything, with nothing stored, opens empty.
        sets.open(2, &d, 0, |_| panic!("not read")).unwrap();
        assert_eq!(sets.summary(2).unwrap(), Summary::default());
    }
}
