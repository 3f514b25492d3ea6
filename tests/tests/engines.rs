//! Outside engines that misbehave, driven through real processes: each failure class of the
//! engine protocol loses the game with its recorded reason (or makes the engine unfit),
//! never panics or hangs the referee.

use std::time::{Duration, Instant};

use tourney_ai::Limits;
use tourney_model::{GameRecord, Termination, TimeControl};
use tourney_rules::Loa;
use tourney_runner::{
    BuiltIn, EngineConfig, ExternalEngine, RefereeError, Seat, Setup, confine, play,
};

fn engine(mode: &str) -> ExternalEngine {
    ExternalEngine::new(config(mode))
}

fn config(mode: &str) -> EngineConfig {
    let mut config = EngineConfig::new(&format!("{} {mode}", env!("CARGO_BIN_EXE_misbehave")));
    // These tests may run as root (CI containers): the engines are our own.
    config.policy = confine::EnginePolicy {
        allow_root: true,
        ..Default::default()
    };
    config.handshake_timeout = Duration::from_millis(500);
    config.unresponsive_timeout = Duration::from_secs(1);
    config
}

/// Plays `outside` (White) against a random built-in (Black).
fn game_of<P: tourney_ai::Heuristics + tourney_runner::Adjudicate>(
    outside: &mut ExternalEngine,
    setup: &Setup<P>,
) -> GameRecord {
    let mut random = BuiltIn::<P>::new("random:seed=1").unwrap();
    play(
        setup,
        Seat {
            name: "outside".into(),
            player: outside,
        },
        Seat {
            name: "random".into(),
            player: &mut random,
        },
        &mut |_| {},
    )
    .unwrap()
}

/// Plays the misbehaving engine (White) against a random built-in (Black).
fn game(mode: &str, setup: &Setup<Loa>) -> Result<GameRecord, RefereeError> {
    let mut outside = engine(mode);
    let mut random = BuiltIn::<Loa>::new("random:seed=1").unwrap();
    play(
        setup,
        Seat {
            name: "outside".into(),
            player: &mut outside,
        },
        Seat {
            name: "random".into(),
            player: &mut random,
        },
        &mut |_| {},
    )
}

fn with_clock() -> Setup<Loa> {
    let mut setup = Setup::new(Default::default());
    setup.time_control = "2+0.1".parse::<TimeControl>().unwrap();
    setup.time_margin = Duration::from_millis(200);
    setup
}

fn assert_lost(record: &GameRecord, termination: Termination) {
    assert_eq!(record.termination, termination, "{record:?}");
    assert_eq!(
        record.result.as_str(),
        "0-1",
        "the outside engine (White) loses"
    );
    assert!(
        record.white.stderr.iter().any(|l| l.contains("misbehave")),
        "stderr tail kept: {:?}",
        record.white.stderr
    );
    assert!(record.detail.is_some());
}

#[test]
fn a_good_engine_plays_whole_games() {
    let mut setup = with_clock();
    setup.max_plies = Some(60);
    let record = game("good", &setup).unwrap();
    assert!(!record.termination.is_failure(), "{record:?}");
    assert!(record.moves.len() >= 2);
    // A game the engine did not lose by failing keeps no log, unless every game keeps
    // them (`engine_logs = "all"`): then its protocol and stderr are in the record, and
    // the built-in side has none to keep.
    assert!(record.white.transcript.is_empty() && record.white.stderr.is_empty());
    setup.keep_logs = true;
    let logged = game("good", &setup).unwrap();
    assert!(!logged.termination.is_failure(), "{logged:?}");
    let transcript = &logged.white.transcript;
    assert!(
        transcript.iter().any(|l| l.ends_with("> isready")),
        "{transcript:?}"
    );
    assert!(
        transcript.iter().any(|l| l.contains("< bestmove")),
        "{transcript:?}"
    );
    assert!(
        transcript
            .iter()
            .any(|l| l.contains("! misbehave: mode good")),
        "{transcript:?}"
    );
    assert!(logged.black.transcript.is_empty());
    assert!(logged.white.check_bounds().is_ok());
    assert_eq!(
        record.white.spec,
        format!("cmd:{} good", env!("CARGO_BIN_EXE_misbehave"))
    );
}

#[test]
fn crash_loses_with_the_exit_status() {
    let record = game("crash", &with_clock()).unwrap();
    assert_lost(&record, Termination::Crash);
    assert!(
        record.detail.as_deref().unwrap().contains("exited"),
        "{:?}",
        record.detail
    );
}

#[test]
fn hanging_with_a_clock_is_a_time_forfeit() {
    let started = Instant::now();
    let record = game("hang", &with_clock()).unwrap();
    assert_lost(&record, Termination::TimeForfeit);
    assert!(started.elapsed() < Duration::from_secs(10));
    // The reason states the wait the record keeps (`forfeit_ms`), not the deadline
    // rounded: issue 60 read "waited 0.1 s" where 162 ms were recorded.
    let took = record.meta["forfeit_ms"].as_u64().unwrap();
    let detail = record.detail.as_deref().unwrap();
    let waited = format!("waited {:.3} s with ", took as f64 / 1000.0);
    assert!(detail.contains(&waited), "{detail}, {took} ms");
}

#[test]
fn hanging_without_a_clock_is_unresponsive() {
    let mut setup = Setup::new(Default::default());
    setup.limits = Limits {
        nodes: Some(100),
        ..Limits::default()
    };
    setup.unresponsive = Duration::from_millis(500);
    let started = Instant::now();
    let record = game("hang", &setup).unwrap();
    let took = started.elapsed().as_secs_f64();
    assert_lost(&record, Termination::Unresponsive);
    // Waited at least the limit, at most the whole game.
    let detail = record.detail.as_deref().unwrap();
    let waited: f64 = (detail.split("waited ").nth(1))
        .and_then(|w| w.split(' ').next())
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{detail}"));
    assert!((0.5..=took).contains(&waited), "{detail}");
}

#[test]
fn illegal_and_junk_moves_lose() {
    let record = game("illegal", &with_clock()).unwrap();
    assert_lost(&record, Termination::IllegalMove);
    assert!(
        record.detail.as_deref().unwrap().contains("'a1-a1'"),
        "{:?}",
        record.detail
    );
    let record = game("junk", &with_clock()).unwrap();
    assert_lost(&record, Termination::IllegalMove);
    assert!(
        record.detail.as_deref().unwrap().contains("'!!!'"),
        "{:?}",
        record.detail
    );
}

#[test]
fn closing_stdout_is_a_crash() {
    let record = game("close", &with_clock()).unwrap();
    assert_lost(&record, Termination::Crash);
    assert!(
        record
            .detail
            .as_deref()
            .unwrap()
            .contains("closed its output"),
        "{:?}",
        record.detail
    );
}

#[test]
fn thinking_past_the_movetime_is_a_time_forfeit() {
    let mut setup = Setup::new(Default::default());
    setup.limits = Limits {
        movetime: Some(Duration::from_millis(300)),
        ..Limits::default()
    };
    let record = game("slow", &setup).unwrap();
    assert_lost(&record, Termination::TimeForfeit);
}

#[test]
fn failed_handshakes_and_unsupported_games_make_the_engine_unfit() {
    let err = game("nohandshake", &with_clock()).unwrap_err();
    let RefereeError::Unfit { name, reason } = err else {
        panic!("{err}")
    };
    assert_eq!(name, "outside");
    assert!(reason.0.contains("no 'ugiok'"), "{reason}");
    let err = game("unsupported", &with_clock()).unwrap_err();
    assert!(err.to_string().contains("unsupported: game loa"), "{err}");
    let mut missing_config = config("good");
    missing_config.command = "/nonexistent/engine".into();
    let mut missing = ExternalEngine::new(missing_config);
    let mut random = BuiltIn::<Loa>::new("random").unwrap();
    let err = play(
        &with_clock(),
        Seat {
            name: "missing".into(),
            player: &mut missing,
        },
        Seat {
            name: "random".into(),
            player: &mut random,
        },
        &mut |_| {},
    )
    .unwrap_err();
    assert!(err.to_string().contains("cannot start"), "{err}");
    assert_eq!(missing.processes_started(), 0, "no process was started");
    assert_eq!(missing.take_starts(), (0, 0));
}

#[test]
fn an_engine_is_restarted_after_a_failure() {
    let mut outside = engine("crash");
    let mut random = BuiltIn::<Loa>::new("random").unwrap();
    for _ in 0..2 {
        let record = play(
            &with_clock(),
            Seat {
                name: "outside".into(),
                player: &mut outside,
            },
            Seat {
                name: "random".into(),
                player: &mut random,
            },
            &mut |_| {},
        )
        .unwrap();
        // Each game gets a fresh process that plays its two good moves again.
        assert_eq!(record.termination, Termination::Crash);
        assert!(record.moves.len() >= 3, "{}", record.moves.len());
    }
}

/// Setup without a clock: nodes per move, so only limits and silence end a game early.
fn by_nodes() -> Setup<Loa> {
    let mut setup = Setup::new(Default::default());
    setup.limits = Limits {
        nodes: Some(1000),
        ..Limits::default()
    };
    setup
}

#[test]
fn an_engine_gets_an_allow_listed_environment_and_a_private_directory_removed_after() {
    // SAFETY: std's environment functions share one lock with process spawning; nothing
    // outside std reads the environment in this test binary.
    unsafe { std::env::set_var("TOURNEY_TOKEN", "worker-secret") };
    let mut outside = engine("env");
    let record = game_of(&mut outside, &by_nodes());
    assert_lost(&record, Termination::Crash);
    let stderr = &record.white.stderr;
    let names = stderr
        .iter()
        .find_map(|l| l.strip_prefix("env: "))
        .unwrap_or_else(|| panic!("{stderr:?}"));
    let names: Vec<&str> = names.split(',').collect();
    assert!(
        names
            .iter()
            .all(|n| ["PATH", "LANG", "TZ", "HOME", "TMPDIR"].contains(n)),
        "{names:?}"
    );
    assert!(!names.contains(&"TOURNEY_TOKEN") && !names.iter().any(|n| n.starts_with("CARGO")));
    let cwd = stderr
        .iter()
        .find_map(|l| l.strip_prefix("cwd: "))
        .unwrap_or_else(|| panic!("{stderr:?}"))
        .to_string();
    assert!(cwd.contains("tourney-engine-"), "{cwd}");
    assert!(
        !std::path::Path::new(&cwd).exists(),
        "removed with the engine's process"
    );
    drop(outside);
}

#[test]
fn an_engine_given_cpus_runs_on_those_alone() {
    // The last CPU this process may use: on a machine of two or more, not all of them.
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let all = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let last = all.rsplit([',', '-']).next().unwrap().to_string();
    let mut pinned = config("env");
    pinned.policy.cpus = vec![last.parse().unwrap()];
    let cpus_of = |config: EngineConfig| {
        let mut outside = ExternalEngine::new(config);
        let record = game_of(&mut outside, &by_nodes());
        (record.white.stderr.iter())
            .find_map(|l| l.strip_prefix("cpus: "))
            .unwrap_or_else(|| panic!("{:?}", record.white.stderr))
            .to_string()
    };
    assert_eq!(cpus_of(pinned), last);
    assert_eq!(
        cpus_of(config("env")),
        all,
        "unpinned: where the worker may run"
    );
}

#[test]
fn what_an_engine_forks_does_not_outlive_it() {
    let mut outside = engine("fork");
    let record = game_of(&mut outside, &by_nodes());
    let child = record
        .white
        .stderr
        .iter()
        .find_map(|l| l.strip_prefix("child: "))
        .unwrap_or_else(|| panic!("{:?}", record.white.stderr))
        .to_string();
    drop(outside);
    // Gone, or a zombie waiting for init: not running.
    tourney_tests::wait::until(5, &format!("the engine's `{child}` to end"), || {
        let running = tourney_tests::process::running_with(&child);
        tourney_tests::wait::check(running.is_empty(), || format!("{running:?}"))
    });
}

/// The engine in `mode` under `limits` loses by a crash whose detail names the limit.
fn loses_to_its_limit(mode: &str, limits: impl FnOnce(&mut EngineConfig), says: &str) {
    let mut config = config(mode);
    config.unresponsive_timeout = Duration::from_secs(20);
    limits(&mut config);
    let mut outside = ExternalEngine::new(config);
    let started = Instant::now();
    let record = game_of(&mut outside, &by_nodes());
    assert_lost(&record, Termination::Crash);
    let detail = record.detail.clone().unwrap_or_default();
    assert!(detail.contains(says), "{mode}: {detail}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{mode}: ended by its limit"
    );
}

#[test]
fn memory_cpu_and_stderr_limits_end_the_game_with_the_reason() {
    loses_to_its_limit(
        "alloc",
        |c| c.limits.memory_mb = 256,
        "memory limit of 256 MiB",
    );
    loses_to_its_limit("spin", |c| c.limits.cpu_seconds = 1, "CPU time limit (1 s");
    loses_to_its_limit(
        "flood",
        |c| c.limits.stderr_kb = 64,
        "more than 64 KiB to stderr",
    );
}

#[test]
fn a_flood_of_stderr_keeps_only_a_short_tail() {
    let mut config = config("flood");
    config.limits.stderr_kb = 8 << 10;
    let mut outside = ExternalEngine::new(config);
    let record = game_of(&mut outside, &with_clock());
    let kept: usize = record.white.stderr.iter().map(String::len).sum();
    assert!(kept <= 50 * 4096, "{kept} bytes of stderr kept");
    let transcript: usize = record.white.transcript.iter().map(String::len).sum();
    assert!(
        transcript <= 80 << 10,
        "{transcript} bytes of transcript kept"
    );
}

/// The times of a transcript's lines, which must not go back.
fn transcript_times(lines: &[String]) -> Vec<f64> {
    let times: Vec<f64> = (lines.iter())
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{lines:#?}");
    times
}

#[test]
fn a_failed_game_keeps_the_protocol_both_ways_with_times_and_stderr() {
    for (mode, termination) in [
        ("crash", Termination::Crash),
        ("illegal", Termination::IllegalMove),
        ("hang", Termination::TimeForfeit),
    ] {
        let record = game(mode, &with_clock()).unwrap();
        assert_lost(&record, termination);
        let t = &record.white.transcript;
        let has = |needle: &str| t.iter().any(|l| l.contains(needle));
        for needle in [
            "> ugi",
            "< ugiok",
            "> newgame loa",
            "> isready",
            "< readyok",
            "> position",
            "> go wtime",
            "< bestmove",
            "! misbehave: now doing",
        ] {
            assert!(has(needle), "{mode}: no '{needle}' in {t:#?}");
        }
        assert_eq!(
            transcript_times(t).len(),
            t.len(),
            "{mode}: every line is timed"
        );
        // The last line sent is the go the engine failed on.
        let last_go = t.iter().rposition(|l| l.contains("> go ")).unwrap();
        let failing = t[last_go..]
            .iter()
            .filter(|l| l.contains("< bestmove"))
            .count();
        assert_eq!(failing, usize::from(mode == "illegal"), "{mode}: {t:#?}");
        // The winner, which did not fail, keeps no transcript (and a built-in has none).
        assert!(record.black.transcript.is_empty());
    }
    // A game that ends by the rules keeps none.
    let mut setup = with_clock();
    setup.max_plies = Some(10);
    let record = game("good", &setup).unwrap();
    assert!(record.white.transcript.is_empty());
}

#[test]
fn without_network_engines_cannot_reach_the_host() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut outside = engine(&format!("net {port}"));
    let record = game_of(&mut outside, &by_nodes());
    let net = record
        .white
        .stderr
        .iter()
        .find_map(|l| l.strip_prefix("net: "))
        .unwrap_or_else(|| panic!("{:?}", record.white.stderr))
        .to_string();
    match (confine::network_isolation(), confine::network_seal()) {
        (Ok(()), _) | (_, Ok(())) => assert_ne!(
            net, "reached",
            "isolated or sealed: the engine must not reach the host"
        ),
        (Err(why), Err(_)) => {
            tourney_tests::wait::skip_unless_required(
                "TOURNEY_REQUIRE_NAMESPACES",
                &format!("no network isolation here ({why}); the engine said: {net}"),
            );
        }
    }
}

#[test]
fn a_kept_process_starts_each_game_with_its_own_stderr_and_limits_left() {
    let mut outside = engine("good 1000");
    let mut setup = with_clock();
    setup.max_plies = Some(6);
    game_of(&mut outside, &setup);
    // Its stderr is read on a thread of its own: what it wrote comes within a moment.
    let tail = || <ExternalEngine as tourney_runner::Contestant<Loa>>::stderr_tail(&outside);
    let said = |lines: &[String]| lines.iter().any(|l| l.contains("misbehave: mode good"));
    let started = Instant::now();
    while !said(&tail()) && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    let first = tail();
    assert!(said(&first), "{first:?}");
    game_of(&mut outside, &setup);
    assert_eq!(outside.processes_started(), 1, "kept for the second game");
    let second = <ExternalEngine as tourney_runner::Contestant<Loa>>::stderr_tail(&outside);
    assert!(
        second.is_empty(),
        "the first game's stderr is not the second's: {second:?}"
    );
    assert_eq!(outside.take_starts(), (1, 0));
    // Kept while it has used less than half its CPU time limit.
    let mut config = config("good 1000");
    config.limits.cpu_seconds = 1;
    let mut thrifty = ExternalEngine::new(config);
    game_of(&mut thrifty, &setup);
    game_of(&mut thrifty, &setup);
    assert_eq!(thrifty.processes_started(), 1, "well within its second");
}

/// A shell engine that answers the handshake, `isready`, and `bench` with `answer` (run
/// by the shell in its working directory).
fn shell_engine(dir: &std::path::Path, answer: &str) -> EngineConfig {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("engine.sh");
    let script = format!(
        "#!/bin/sh\nwhile read -r cmd rest; do\n  case \"$cmd\" in\n    ugi) echo ugiok ;;\n    \
         bench) {answer} ;;\n    isready) echo readyok ;;\n    quit) exit 0 ;;\n  esac\ndone\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = EngineConfig::new(&path.display().to_string());
    config.policy = confine::EnginePolicy {
        allow_root: true,
        ..Default::default()
    };
    config
}

#[test]
fn data_files_are_in_the_engine_s_directory_and_its_bench_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("cached-sha256");
    std::fs::write(&net, "4242\n").unwrap();
    let mut config = shell_engine(dir.path(), "echo \"bench nodes $(cat nn.bin) nps 900\"");
    config.files = vec![("nn.bin".into(), net)];
    let mut outside = ExternalEngine::new(config);
    let bench = outside.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    assert_eq!(
        bench.unwrap(),
        Some((4242, 900)),
        "the file under its name, read by the engine"
    );
    // An engine without a bench answers `readyok` alone: no signature, no error.
    let mut silent = ExternalEngine::new(shell_engine(dir.path(), ":"));
    assert_eq!(
        silent
            .bench(tourney_rules::GameKind::Loa, Duration::from_secs(10))
            .unwrap(),
        None
    );
    // One that hangs in its bench is given up on at the time limit.
    let mut hung = ExternalEngine::new(shell_engine(dir.path(), "sleep 30"));
    let started = Instant::now();
    let error = hung
        .bench(tourney_rules::GameKind::Loa, Duration::from_millis(300))
        .unwrap_err();
    assert!(error.0.contains("no answer to bench"), "{}", error.0);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn an_opening_reached_by_moves_is_sent_as_startpos_moves_and_refusals_say_why() {
    use tourney_runner::dialect::Dialect;
    // A move book's opening: the position, and the moves from the start that reach it.
    let mut setup = with_clock();
    setup.max_plies = Some(12);
    let opening = "1bbbbbb1/w6w/w6w/w6w/w6w/wb5w/2w4w/2bbbbb1 b\tb1-b3 a2-c2";
    setup.set_opening(opening).unwrap();
    assert_eq!(setup.start_path.len(), 2);
    let uci = |mode: &str| {
        let mut config = config(&format!("{mode} --protocol uci"));
        config.protocol = "uci".parse::<Dialect>().unwrap();
        ExternalEngine::new(config)
    };
    let record = game_of(&mut uci("good"), &setup);
    assert!(!record.termination.is_failure(), "{record:?}");
    assert_eq!(record.start, tourney_model::opening::position(opening));
    // Asked as White after Black's first move: the book's moves, then the game's.
    let mut asked = setup.clone();
    asked.keep_logs = true;
    let record = game_of(&mut uci("good"), &asked);
    let first = record.moves[0].mv.replace(['-', 'x'], "");
    assert!(
        record
            .white
            .transcript
            .iter()
            .any(|l| l.ends_with(&format!("> position startpos moves b1b3 a2c2 {first}"))),
        "{:?}",
        record.white.transcript
    );
    // Moves that do not reach the position are not sent: the position string is.
    let mut stray = with_clock();
    stray
        .set_opening(&opening.replace("a2-c2", "a3-c3"))
        .unwrap();
    assert!(stray.start_path.is_empty());
    // An engine that says the game is over when it is not, and one that moves illegally,
    // lose saying so.
    let record = game_of(&mut uci("none"), &with_clock());
    assert_lost(&record, Termination::IllegalMove);
    let detail = record.detail.as_deref().unwrap();
    assert!(
        detail.contains("says the game is over (bestmove '(none)'); it is not"),
        "{detail}"
    );
    let record = game_of(&mut uci("illegal"), &with_clock());
    let detail = record.detail.as_deref().unwrap();
    assert!(
        detail.contains("played 'a1-a1', which is not legal here"),
        "{detail}"
    );
}

#[test]
fn in_every_dialect_a_failing_engine_loses_with_its_reason() {
    use tourney_runner::dialect::Dialect;
    // LOA in the dialects that play it, with the first line each is sent.
    for (dialect, first_line) in [
        ("ugi".parse::<Dialect>().unwrap(), "ugi"),
        ("uci".parse::<Dialect>().unwrap(), "uci"),
        (Dialect::CodinGame, "8"),
    ] {
        let speaking = |mode: &str| {
            let mut config = config(&format!("{mode} --protocol {dialect}"));
            config.protocol = dialect;
            ExternalEngine::new(config)
        };
        // A good engine of the dialect plays whole games.
        let mut setup = with_clock();
        setup.max_plies = Some(40);
        let record = game_of(&mut speaking("good"), &setup);
        assert!(!record.termination.is_failure(), "{dialect}: {record:?}");
        assert!(record.moves.len() >= 2, "{dialect}");
        for (mode, termination) in [
            ("crash", Termination::Crash),
            ("illegal", Termination::IllegalMove),
            ("hang", Termination::TimeForfeit),
        ] {
            let record = game_of(&mut speaking(mode), &with_clock());
            assert_lost(&record, termination);
            // The transcript is the dialect's own.
            assert!(
                record
                    .white
                    .transcript
                    .iter()
                    .any(|l| l.ends_with(&format!("> {first_line}"))),
                "{dialect} {mode}: {:?}",
                record.white.transcript
            );
        }
    }
}

#[test]
fn gtp_and_codingame_engines_play_amazons_and_lose_by_their_failures() {
    use tourney_rules::{Amazons, Position};
    use tourney_runner::dialect::Dialect;
    let gtp = Dialect::Gtp {
        first: tourney_rules::Color::Black,
    };
    for (dialect, flags) in [(gtp, ""), (Dialect::CodinGame, " --game amazons")] {
        let speaking = |mode: &str| {
            let mut config = config(&format!("{mode} --protocol {dialect}{flags}"));
            config.protocol = dialect;
            ExternalEngine::new(config)
        };
        let mut setup = Setup::<Amazons>::new(Default::default());
        setup.time_control = "2+0.1".parse::<TimeControl>().unwrap();
        setup.time_margin = Duration::from_millis(200);
        // From an opening position: GTP has no set-up, so it is told turns that reach it.
        let mut opening = tourney_rules::Game::new(Amazons::start(), Default::default());
        for seed in [3u64, 5] {
            let mv = opening.position().random_move(seed << 40).unwrap();
            opening.play(mv).unwrap();
        }
        setup.start = *opening.position();
        setup.max_plies = Some(12);
        let record = game_of(&mut speaking("good"), &setup);
        assert!(!record.termination.is_failure(), "{dialect}: {record:?}");
        assert_eq!(record.moves.len(), 12, "{dialect}: {record:?}");
        for (mode, termination, says) in [
            ("crash", Termination::Crash, "exit"),
            ("illegal", Termination::IllegalMove, ""),
            ("hang", Termination::TimeForfeit, "time ran out"),
        ] {
            setup.max_plies = None;
            let record = game_of(&mut speaking(mode), &setup);
            assert_lost(&record, termination);
            let detail = record.detail.clone().unwrap_or_default();
            assert!(detail.contains(says), "{dialect} {mode}: {detail}");
        }
        if dialect == gtp {
            // A program that never answers the handshake is unfit, with the command named.
            let mut silent = speaking("nohandshake");
            let unfit = tourney_runner::Contestant::<Amazons>::new_game(
                &mut silent,
                Default::default(),
                0,
                &[],
            )
            .unwrap_err();
            assert!(unfit.0.contains("'protocol_version'"), "{}", unfit.0);
        }
    }
}

#[test]
fn check_engine_ends_an_endless_answer_in_every_dialect_within_its_timeout() {
    use tourney_runner::check::{Verdict, check_engine};
    let dir = tempfile::tempdir().unwrap();
    // Answers the first line it reads, then never stops writing.
    let path = dir.path().join("endless.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nread -r line\necho '= 2'\nexec yes 'info x'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    for (protocol, game) in [("gtp", "amazons"), ("tourney", "loa"), ("uci", "loa")] {
        let mut config = EngineConfig::new(&path.display().to_string());
        config.policy = confine::EnginePolicy {
            allow_root: true,
            ..Default::default()
        };
        config.protocol = protocol.parse().unwrap();
        config.unresponsive_timeout = Duration::from_secs(3);
        let started = Instant::now();
        let results = check_engine(&config, game.parse().unwrap(), |_| {}).unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{protocol}: {:?}",
            started.elapsed()
        );
        let failed = results.iter().find(|r| r.verdict == Verdict::Fail).unwrap();
        assert!(
            failed.detail.contains("more than 10000 lines") || failed.detail.contains("within"),
            "{protocol}: {failed:?}"
        );
        // What a failure shows of the exchange is bounded.
        assert!(failed.exchange.len() <= 24, "{protocol}");
    }
}

#[test]
fn check_engine_shows_the_end_of_the_stderr_of_an_engine_that_exits_in_every_dialect() {
    use tourney_runner::check::{Verdict, check_engine};
    use tourney_runner::dialect::Dialect;
    let dir = tempfile::tempdir().unwrap();
    // What `python3 engine.py` says when the script is missing, after earlier lines.
    let path = dir.path().join("gone.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\nfor i in 1 2 3; do echo \"early $i\" >&2; done\n\
         echo \"python3: can't open file '/nowhere/engine.py': [Errno 2] No such file\" >&2\n\
         exit 2\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config_of = |dialect: Dialect| {
        let mut config = EngineConfig::new(&path.display().to_string());
        config.policy = confine::EnginePolicy {
            allow_root: true,
            ..Default::default()
        };
        config.protocol = dialect;
        config.unresponsive_timeout = Duration::from_secs(5);
        config
    };
    // The tail a tournament's pause reason gives (the engine unfit at its start).
    let mut engine = ExternalEngine::new(config_of(Dialect::Tourney));
    let unfit =
        tourney_runner::Contestant::<Loa>::new_game(&mut engine, Default::default(), 0, &[])
            .unwrap_err();
    let tail = |text: &str| {
        text.split_once("; its stderr ends: ")
            .map(|(_, t)| t.to_string())
    };
    let paused = tail(&unfit.0).unwrap_or_else(|| panic!("{}", unfit.0));
    assert_eq!(
        paused,
        "early 2 | early 3 | python3: can't open file '/nowhere/engine.py': [Errno 2] No such file"
    );
    let gtp = Dialect::Gtp {
        first: tourney_rules::Color::Black,
    };
    for (dialect, game) in [
        (Dialect::Tourney, "loa"),
        ("ugi".parse().unwrap(), "loa"),
        ("uci".parse().unwrap(), "amazons"),
        (Dialect::CodinGame, "loa"),
        (gtp, "amazons"),
    ] {
        let results = check_engine(&config_of(dialect), game.parse().unwrap(), |_| {}).unwrap();
        let failed = (results.iter().find(|r| r.verdict == Verdict::Fail))
            .unwrap_or_else(|| panic!("{dialect}: no check failed: {results:?}"));
        assert!(
            failed.detail.contains("exit status: 2"),
            "{dialect}: {failed:?}"
        );
        // Found at the first check: the engine cannot be started.
        assert!(results[0].ended, "{dialect}: {results:?}");
        assert_eq!(
            tail(&failed.detail).as_deref(),
            Some(paused.as_str()),
            "{dialect}: {failed:?}"
        );
        // The checks skipped after it say why once more, not the stderr again.
        let skipped: Vec<_> = (results.iter())
            .filter(|r| r.verdict == Verdict::Skip)
            .collect();
        assert!(!skipped.is_empty(), "{dialect}: {results:?}");
        assert!(
            skipped.iter().all(|r| !r.detail.contains("stderr")),
            "{dialect}: {skipped:?}"
        );
    }
}

#[test]
fn check_engine_names_the_first_broken_exchange_of_each_misbehaviour() {
    use tourney_runner::check::{Verdict, check_engine};
    use tourney_runner::dialect::Dialect;
    let gtp = Dialect::Gtp {
        first: tourney_rules::Color::Black,
    };
    // (protocol, game, mode, the first check that fails, what its detail says)
    let cases = [
        (
            Dialect::Tourney,
            "loa",
            "crash",
            "position with moves, go depth",
            "exit status: 3",
        ),
        (
            Dialect::Tourney,
            "loa",
            "hang",
            "position with moves, go depth",
            "no bestmove within",
        ),
        (
            Dialect::Tourney,
            "loa",
            "illegal",
            "position with moves, go depth",
            "'a1-a1' is not legal",
        ),
        (
            Dialect::Tourney,
            "loa",
            "junk",
            "position with moves, go depth",
            "'!!!' is not legal",
        ),
        (
            Dialect::Tourney,
            "loa",
            "close",
            "position with moves, go depth",
            "closed its output",
        ),
        (
            Dialect::Tourney,
            "loa",
            "nohandshake",
            "handshake",
            "no ugiok",
        ),
        (
            Dialect::Tourney,
            "loa",
            "unsupported",
            "newgame",
            "error unsupported game loa",
        ),
        (
            "uci".parse::<Dialect>().unwrap(),
            "loa",
            "illegal",
            "position with moves, go depth",
            "not legal",
        ),
        (
            "ugi".parse::<Dialect>().unwrap(),
            "amazons",
            "crash",
            "position with moves, go depth",
            "exit status: 3",
        ),
        (
            Dialect::CodinGame,
            "loa",
            "illegal",
            "later turns within 150 ms",
            "'a1a1' is not legal",
        ),
        (
            Dialect::CodinGame,
            "loa",
            "crash",
            "later turns within 150 ms",
            "exit status: 3",
        ),
        (
            Dialect::CodinGame,
            "amazons",
            "hang",
            "later turns within 150 ms",
            "no move within 150 ms",
        ),
        (
            gtp,
            "amazons",
            "nohandshake",
            "protocol_version",
            "no answer to 'protocol_version'",
        ),
        (
            gtp,
            "amazons",
            "crash",
            "play: the opponent's turn",
            "exit status: 3",
        ),
    ];
    for (dialect, game, mode, check, says) in cases {
        let flags = if game == "amazons" {
            " --game amazons"
        } else {
            ""
        };
        let mut config = config(&format!("{mode} 1 --protocol {dialect}{flags}"));
        config.protocol = dialect;
        config.unresponsive_timeout = Duration::from_secs(2);
        let results = check_engine(&config, game.parse().unwrap(), |_| {}).unwrap();
        let failed = results
            .iter()
            .find(|r| r.verdict == Verdict::Fail)
            .unwrap_or_else(|| panic!("{dialect} {mode}: no check failed: {results:?}"));
        assert_eq!(failed.name, check, "{dialect} {mode}: {results:?}");
        assert!(
            failed.detail.contains(says),
            "{dialect} {mode}: {}",
            failed.detail
        );
        // The exchange that broke is kept, with what was sent.
        assert!(
            failed.exchange.iter().any(|l| l.starts_with("> ")),
            "{dialect} {mode}: {:?}",
            failed.exchange
        );
        // Every check before the first failure passed.
        let at = results.iter().position(|r| r.name == check).unwrap();
        assert!(results[..at].iter().all(|r| r.verdict == Verdict::Pass));
    }
}

#[test]
fn a_program_named_by_its_hash_runs_from_a_sealed_copy_checked_as_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = shell_engine(dir.path(), "echo \"bench nodes 77 nps 9\"");
    let program = dir.path().join("engine.sh");
    let sha = tourney_model::sha256_of_reader(std::fs::File::open(&program).unwrap()).unwrap();
    config.program_sha256 = Some(sha.clone());
    // The script runs from its sealed copy (its interpreter reads it from the descriptor).
    let mut sealed = ExternalEngine::new(config.clone());
    let bench = sealed.bench(tourney_rules::GameKind::Loa, Duration::from_secs(10));
    assert_eq!(bench.unwrap(), Some((77, 9)));
    // Changed after it was checked (by an opponent that can reach the cache, say): it
    // does not start, and says why.
    let mut text = std::fs::read_to_string(&program).unwrap();
    text.push_str("# rewritten\n");
    std::fs::write(&program, text).unwrap();
    let mut changed = ExternalEngine::new(config);
    let error = changed
        .bench(tourney_rules::GameKind::Loa, Duration::from_secs(10))
        .unwrap_err();
    assert!(
        error.0.contains("the program changed since it was checked") && error.0.contains(&sha),
        "{}",
        error.0
    );
}
