//! The store: reopening, atomic batches, schema versions and migration, the compact
//! encoding read back, summaries kept only while current, verify, disk room.

use tourney_model::GameRecord;
use tourney_model::tournament::{PairOutcome, State};

use super::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

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
        engines: Default::default(),
        paused_reason: None,
        paused_log: None,
        ended_ms: None,
        exclusions: Vec::new(),
        archived_ms: None,
        verification: None,
        tuned_by: None,
        author: None,
        approved_by: None,
        priority: None,
        weight: None,
        note: String::new(),
        links: Vec::new(),
        pair_budget: None,
        hidden: false,
        pool_members: Vec::new(),
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
    open_once_free(open).expect("the store reopens")
}

/// `open` retried for up to two seconds while sled's lock file is still held by a handle
/// of this process (its flusher thread outlives the handle briefly); any other outcome
/// is returned as it is.
fn open_once_free(open: impl Fn() -> Result<Store, StoreError>) -> Result<Store, StoreError> {
    let mut tries = 0;
    loop {
        match open() {
            Err(e) if tries < 100 && e.to_string().contains("could not acquire lock") => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            outcome => return outcome,
        }
    }
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
    let pairs = pairs_of(&store, 2).unwrap();
    assert_eq!(
        pairs.iter().map(|p| p.outcome.pair).collect::<Vec<_>>(),
        vec![0, 1]
    );
    assert!(pairs_of(&store, 3).unwrap().is_empty());
    assert_eq!(
        store.next_tournament_id().unwrap(),
        3,
        "ids are never reused"
    );
    let sha = tourney_model::sha256_hex(b"#!/bin/sh\n");
    assert_eq!(
        store.read_artifact(&sha, 0, 1 << 20).unwrap().unwrap(),
        (b"#!/bin/sh\n".to_vec(), 10)
    );
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
    let pairs = pairs_of(&store, 1).unwrap();
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
    let err = open_once_free(|| Store::open(dir.path())).err().unwrap();
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
        let pairs = pairs_of(&store, 4).unwrap();
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
        verified.problems[1].contains("tournament 4: 1 pairs counted, 1 digests, 2 pair records")
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
        parent: parent.map(str::to_string),
        note: "n".into(),
        created_ms: 7,
        ..Default::default()
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
    // An opening reached by moves keeps them; `get` gives its position alone.
    let by_moves = format!("{START}\tb1-b3");
    let suite = OpeningSuite::new(&[by_moves.as_str()]);
    assert_eq!(suite.get(0), Some(START));
    assert_eq!(suite.line(0), Some(by_moves.as_str()));
    let suite = OpeningSuite::decode(&suite.encode()).unwrap();
    assert_eq!(suite.line(0), Some(by_moves.as_str()));
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
    let file = dir.path().join("artifacts").join(&sha);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&file, b"changed").unwrap();
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

/// The completed pairs of a tournament, in pair order, read straight from the tree.
fn pairs_of(store: &Store, tournament: u64) -> Result<Vec<PairRecord>, StoreError> {
    store
        .t()
        .pairs
        .scan_prefix(tournament.to_be_bytes())
        .values()
        .map(|v| decode_pair(&v?))
        .collect()
}

#[test]
fn an_artifact_is_streamed_in_hashed_and_read_in_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let content: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let mut upload = store.upload_artifact(u64::MAX).unwrap();
    for chunk in content.chunks(1 << 20) {
        upload.write(chunk).unwrap();
    }
    assert_eq!(upload.len(), 3_000_000);
    let sha = upload.finish().unwrap();
    assert_eq!(sha, tourney_model::sha256_hex(&content));
    assert!(store.has_artifact(&sha).unwrap());
    assert_eq!(store.artifact_size(&sha).unwrap(), Some(3_000_000));
    let (middle, size) = store.read_artifact(&sha, 1_000_000, 10).unwrap().unwrap();
    assert_eq!(
        (&middle[..], size),
        (&content[1_000_000..1_000_010], 3_000_000)
    );
    let (tail, _) = store
        .read_artifact(&sha, 2_999_998, 1 << 20)
        .unwrap()
        .unwrap();
    assert_eq!(tail, &content[2_999_998..]);
    let (past, _) = store.read_artifact(&sha, 5_000_000, 10).unwrap().unwrap();
    assert!(past.is_empty());
    // The same content again is the same artifact; only named files are in the directory.
    assert_eq!(store.put_artifact(&content).unwrap(), sha);
    let names: Vec<String> = std::fs::read_dir(dir.path().join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [sha]);
}

#[test]
fn an_artifact_past_its_bound_is_refused_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let mut upload = store.upload_artifact(2 << 20).unwrap();
    upload.write(&[7; 1 << 20]).unwrap();
    upload.write(&[7; 1 << 20]).unwrap();
    let e = upload.write(&[7]).unwrap_err().to_string();
    assert!(e.contains("at most 2 MiB"), "{e}");
    drop(upload);
    assert_eq!(
        std::fs::read_dir(dir.path().join("artifacts"))
            .unwrap()
            .count(),
        0,
        "the refused upload's file is gone"
    );
}

#[test]
fn only_sha256_names_reach_the_artifact_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    std::fs::write(dir.path().join("secret"), b"x").unwrap();
    for name in ["../secret", "secret", "conf", &"A".repeat(64)] {
        assert_eq!(store.read_artifact(name, 0, 10).unwrap(), None, "{name}");
        assert!(!store.has_artifact(name).unwrap(), "{name}");
    }
}

#[test]
fn older_stores_artifacts_move_to_files_and_unfinished_uploads_go() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let sha = tourney_model::sha256_hex(b"old program");
        let tree = store.t().db.open_tree("artifacts").unwrap();
        tree.insert(sha.as_bytes(), &b"old program"[..]).unwrap();
        // An upload a killed coordinator left halfway.
        std::fs::write(dir.path().join("artifacts/.incoming-1-0"), b"half").unwrap();
        store.t().db.flush().unwrap();
    }
    let store = reopen(dir.path());
    let sha = tourney_model::sha256_hex(b"old program");
    assert_eq!(
        store.read_artifact(&sha, 0, 100).unwrap(),
        Some((b"old program".to_vec(), 11))
    );
    assert!(store.t().db.open_tree("artifacts").unwrap().is_empty());
    let names: Vec<String> = std::fs::read_dir(dir.path().join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [sha], "the unfinished upload's file is removed");
    assert_eq!(store.verify().unwrap().artifacts, 1);
}

#[test]
fn a_pair_stored_without_its_games_has_none() {
    let mut record = pair(1, 0, 2);
    assert_eq!(record.games().unwrap().len(), 2);
    record.games = serde_json::value::RawValue::from_string("null".into()).unwrap();
    assert!(record.games().unwrap().is_empty());
    record.games = serde_json::value::RawValue::from_string("{\"x\": 1}".into()).unwrap();
    assert!(record.games().is_err(), "anything else is damage");
}
