use super::*;

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
