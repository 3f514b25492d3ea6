use super::*;

#[tokio::test]
async fn workers_sharing_a_host_cache_fetch_an_artifact_once() {
    let program: &'static [u8] = b"#!/bin/sh\necho shared\n";
    let sha = tourney_model::sha256_hex(program);
    let (addr, served) = crate::download::tests::server(program);
    let cache = tempfile::tempdir().unwrap();
    let path = cache.path().join(&sha);
    let fetches: Vec<_> = (0..8)
        .map(|_| {
            let fetcher = Fetcher::new(&format!("http://{addr}/artifacts"), None);
            let (sha, path) = (sha.clone(), path.clone());
            tokio::spawn(async move { fetcher.fetch_into(&sha, &path, "e").await })
        })
        .collect();
    for f in fetches {
        f.await.unwrap().unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), program);
    assert_eq!(
        served.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one fetch a host"
    );
}

/// An outside engine of the script `answer` gives `genfens` (after `ugiok` and
/// `readyok` as they are asked).
fn genfens_engine(dir: &std::path::Path, answer: &str) -> Side<tourney_rules::Loa> {
    use std::os::unix::fs::PermissionsExt;
    let script = format!(
        "#!/bin/sh\nwhile read -r cmd rest; do\n case \"$cmd\" in\n \
         ugi) echo ugiok ;;\n genfens) {answer} ;;\n isready) echo readyok ;;\n \
         quit) exit 0 ;;\n esac\ndone\n"
    );
    let path = dir.join("engine");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let policy = EnginePolicy {
        allow_root: true,
        ..EnginePolicy::default()
    };
    let config = outside_config(
        &path.display().to_string(),
        &[],
        &[],
        "",
        None,
        &EngineLimits::default(),
        &policy,
    );
    Side::Outside("k".into(), Box::new(ExternalEngine::new(config)))
}

#[test]
fn openings_an_engine_makes_are_taken_only_when_they_are_positions_in_play() {
    let dir = tempfile::tempdir().unwrap();
    let rules = Default::default();
    let good = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 w";
    let mut side = genfens_engine(
        dir.path(),
        &format!("echo 'info string genfens {good}'; echo 'info string genfens {good}'"),
    );
    let [a, b] = made_openings(&mut side, 7, rules).unwrap();
    assert_eq!((a.to_string(), b.to_string()), (good.into(), good.into()));
    for (answer, says) in [
        ("true", "gave 0 of the 2"),
        (
            "echo 'info string genfens nonsense'; echo 'info string genfens x'",
            "'nonsense'",
        ),
        // Black is connected: the game is over.
        (
            "echo 'info string genfens 8/8/8/8/8/8/w6w/bb6 w'; echo 'info string genfens 8/8/8/8/8/8/w6w/bb6 w'",
            "is over",
        ),
    ] {
        let mut side = genfens_engine(dir.path(), answer);
        let err = made_openings(&mut side, 7, rules).unwrap_err().to_string();
        assert!(
            err.starts_with("genfens: ") && err.contains(says),
            "{answer}: {err}"
        );
    }
    // A built-in player makes them as `tourney engine` does.
    let spec = BuiltIn::<tourney_rules::Loa>::new("ab").unwrap();
    let made = made_openings(&mut Side::BuiltIn("b".into(), spec), 7, rules).unwrap();
    assert_eq!(
        made.to_vec(),
        tourney_ai::genfens::genfens(
            <tourney_rules::Loa as tourney_rules::Position>::start(),
            2,
            7
        )
    );
}

#[test]
fn a_pair_whose_lease_is_dropped_stops_after_the_move_in_play() {
    use tourney_rules::{Amazons, Position};
    let ab = Engine {
        name: "ab".into(),
        kind: EngineKind::BuiltIn("ab".into()),
        limits: None,
    };
    let mut job = crate::desk::tests::queued(1, 0).job;
    job.settings.game = tourney_model::GameKind::Amazons;
    (job.settings.nodes, job.settings.movetime_ms) = (None, Some(100));
    // No time forfeit on a loaded machine: the game lasts its 60 or more moves.
    job.settings.margin_ms = 60_000;
    (job.first, job.second) = (ab.clone(), ab.clone());
    job.opening = Amazons::start().to_string();
    let cancelled = AtomicBool::new(false);
    let metrics = WorkerMetrics::new(&prometheus::Registry::new());
    let started = std::time::Instant::now();
    let played = std::thread::scope(|scope| {
        let game = scope.spawn(|| {
            let leased = [ab.clone(), ab.clone()];
            play_pair(
                &job,
                &leased,
                &cancelled,
                &EnginePolicy::default(),
                None,
                &metrics,
            )
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        cancelled.store(true, Ordering::Relaxed);
        game.join().unwrap()
    });
    // Abandoned in the first game, some 3 plies in, where the game at 100 ms a move
    // lasts over 60 plies (6 s): the board fills one square a ply.
    assert!(played.unwrap().is_none(), "abandoned, not reported");
    let took = started.elapsed();
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_cached_program_is_used_only_while_it_is_the_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let program = b"#!/bin/sh\necho engine\n";
    let sha = tourney_model::sha256_hex(program);
    let path = dir.path().join(&sha);
    std::fs::write(&path, program).unwrap();
    assert!(is_program(&path, &sha), "read and hashed");
    assert!(is_program(&path, &sha), "known by its stamp");
    // Rewritten in place (as an engine of the worker's user could): not used.
    std::fs::write(&path, b"#!/bin/sh\necho poisoned\n").unwrap();
    assert!(!is_program(&path, &sha));
    assert!(!is_program(&dir.path().join("missing"), &sha));
}
