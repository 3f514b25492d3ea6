//! Real clusters on loopback: a coordinator process and worker processes.
//!
//! - One worker is killed with SIGKILL while it holds a lease, then the coordinator is
//!   killed (kill -9) and restarted on the same data. The tournament must still finish
//!   with exactly the planned games, no pair counted twice, and standings equal to the
//!   ratings of the exported games.
//! - The coordinator's live dashboard, loaded in a real headless Chromium (through
//!   chromedriver) while two tournaments run: standings and charts render and change, and
//!   the board viewer steps through an LOA and an Amazons game. Screenshots are saved in
//!   `target/test-artifacts/`.

mod common;

use std::process::{Child, Command, Stdio};

use common::*;

use tourney_tests::http::get;
use tourney_tests::process::Reaped;
use tourney_tests::process::{forking_engine, spawn_listening};
use tourney_tests::tournaments::MatchFile;
use tourney_tests::wait;
use tourney_tests::webdriver::Browser;

/// Sixteen pairs of a deep against a shallow alpha-beta at 15 ms a move.
fn tournament() -> String {
    MatchFile {
        name: "cluster-test",
        pairs: 16,
        openings: "{ plies = 4, seed = 9 }",
        limits: "{ movetime = 15 }",
        adjudication: Some("{ max_plies = 160 }"),
        engines: [("deep", "ab"), ("shallow", "ab:depth=1")],
        ..Default::default()
    }
    .toml()
}

/// The body of `GET /metrics` on a loopback port.
fn metrics_text(port: u16) -> String {
    let (status, body) = get(&format!("127.0.0.1:{port}"), "/metrics").unwrap();
    assert!(status.contains("200"), "{status}");
    body
}

/// The value of the series written exactly as `series` in a metrics text.
fn series_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in {text}"))
        .parse()
        .unwrap()
}

/// A tournament's games as `tourney export --format jsonl` gives them.
fn exported(port: u16, id: &str) -> Vec<serde_json::Value> {
    admin(port, &["export", id, "--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_cluster_survives_a_killed_worker_and_a_killed_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("cluster.toml");
    std::fs::write(&file, tournament()).unwrap();
    let (mut coordinator, port) = start_coordinator(0, &data);
    let id = submit(port, &file);
    let (w2, worker_metrics) = start_worker_with_metrics(port, "w2");
    let mut workers: Vec<Child> = vec![start_worker(port, "w1"), w2, start_worker(port, "w3")];

    // Kill a worker while it is playing (each worker holds one pair at a time).
    wait_for(port, &id, "the first pairs", |s| {
        s["pairs_done"].as_u64().unwrap() >= 2
    });
    workers[0].kill().unwrap();
    workers[0].wait().unwrap();

    // Kill the coordinator without warning and restart it on the same data.
    wait_for(port, &id, "more pairs", |s| {
        s["pairs_done"].as_u64().unwrap() >= 6
    });
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    // Restarted on the same port (the workers know no other), which it held until now.
    let (mut coordinator, _) = restart_coordinator(port, &data);

    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    assert_eq!(end["pairs_done"], 16);
    assert_eq!(end["pairs_planned"], 16);
    assert_eq!(end["games"], 32);

    // Exactly the planned games, every pair twice.
    let games = exported(port, &id);
    assert_eq!(games.len(), 32);
    let mut per_pair = std::collections::BTreeMap::new();
    let mut table = tourney_stats::GameTable::new();
    table.player("deep");
    table.player("shallow");
    for g in &games {
        *per_pair.entry(g["pair"].as_u64().unwrap()).or_insert(0) += 1;
        let result = tourney_stats::GameResult::parse(g["result"].as_str().unwrap()).unwrap();
        table.add(
            g["white"].as_str().unwrap(),
            g["black"].as_str().unwrap(),
            result,
        );
    }
    assert_eq!(per_pair.len(), 16);
    assert!(per_pair.values().all(|&n| n == 2), "{per_pair:?}");

    // The standings are the ratings recomputed from the exported games.
    let ratings = tourney_stats::BayesElo::default().rate(&table);
    let standings = end["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 2);
    for (s, r) in standings.iter().zip(&ratings.players) {
        assert_eq!(s["name"], r.name.as_str());
        assert!(
            (s["elo"].as_f64().unwrap() - r.elo).abs() < 1e-6,
            "{s} vs {r:?}"
        );
        assert_eq!(s["games"], r.games);
    }

    // The surviving worker with --metrics counted its games; the restarted coordinator
    // counted the pairs committed since its restart.
    let worker_text = metrics_text(worker_metrics);
    assert!(
        worker_text.contains("tourney_worker_slots 1"),
        "{worker_text}"
    );
    let games = series_value(&worker_text, "tourney_worker_games_total{game=\"loa\"}");
    assert!((2.0..=32.0).contains(&games), "{worker_text}");
    // Its two players wait for a next pair, each with its 16 MiB table.
    assert_eq!(
        series_value(&worker_text, "tourney_worker_idle_players"),
        2.0
    );
    let bytes = series_value(&worker_text, "tourney_worker_idle_player_bytes");
    assert!(
        bytes > f64::from(16 << 20) && bytes <= f64::from(32 << 20),
        "{worker_text}"
    );
    let coordinator_text = metrics_text(port);
    let committed = series_value(&coordinator_text, "tourney_pair_results_committed_total");
    assert!((1.0..=16.0).contains(&committed), "{coordinator_text}");

    for w in workers.iter_mut().skip(1) {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

const DASHBOARD_SPRT: &str = r#"
name = "dashboard-sprt"
game = "loa"
format = "sprt"
sprt = { elo0 = 0.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, model = "normalized", max_pairs = 5000 }
openings = { plies = 4, seed = 5 }
limits = { movetime = 10 }
adjudication = { max_plies = 160 }

[[engine]]
name = "new"
player = "ab"

[[engine]]
name = "old"
player = "ab:walls=0"
"#;

const DASHBOARD_AMAZONS: &str = r#"
name = "dashboard-amazons"
game = "amazons"
format = "round-robin"
rounds = 50
openings = { plies = 2, seed = 5 }
limits = { depth = 1 }
engine_logs = "all"

[rules]
size = "8"

[[engine]]
name = "one"
player = "ab:depth=1"

[[engine]]
name = "random"
command = "tourney engine random --protocol gtp --game amazons"
protocol = "gtp"
"#;

/// Waits up to `seconds` for `child` to exit; its exit status, or `None` if it still runs.
fn exits_within(child: &mut Child, seconds: u64) -> Option<std::process::ExitStatus> {
    wait::within(seconds, || {
        child.try_wait().unwrap().ok_or_else(String::new)
    })
    .ok()
}

/// Whether `tourney health <args>` exits 0.
fn healthy(args: &[&str]) -> bool {
    tourney()
        .arg("health")
        .args(args)
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn coordinator_and_worker_report_health_and_stop_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut coordinator, port) = start_coordinator(0, dir.path());
    let grpc = format!("http://127.0.0.1:{port}");
    admin(port, &["status"]);
    assert!(healthy(&["--grpc", &grpc]));
    // As the docs' `until tourney health` loop: the coordinator named by the environment,
    // as for every other command.
    let by_env = (tourney().arg("health"))
        .env("TOURNEY_COORDINATOR", &grpc)
        .output()
        .unwrap();
    assert!(
        by_env.status.success(),
        "{}",
        String::from_utf8_lossy(&by_env.stderr)
    );
    // As `kubectl exec tourney-coordinator-0 -- tourney status`: the coordinator's own
    // TOURNEY_ADMIN_TOKEN serves when TOURNEY_TOKEN is not set.
    let inside = tourney()
        .args(["status", "--coordinator", &grpc])
        .env_remove("TOURNEY_TOKEN")
        .output()
        .unwrap();
    assert!(
        inside.status.success(),
        "{}",
        String::from_utf8_lossy(&inside.stderr)
    );
    let (mut worker, metrics) = start_worker_with_metrics(port, "sigterm");
    let worker_metrics = format!("http://127.0.0.1:{metrics}/metrics");
    wait::until(10, "the worker's metrics to answer", || {
        wait::check(healthy(&["--http", &worker_metrics]), || "unhealthy".into())
    });
    assert!(!healthy(&[
        "--http",
        &format!("http://127.0.0.1:{metrics}/nothing")
    ]));
    for child in [&mut worker, &mut coordinator] {
        // SAFETY: sends a signal to a child process this test started and has not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
        let status = exits_within(child, 15);
        if status.is_none() {
            let _ = child.kill();
        }
        assert!(
            status.is_some_and(|s| s.success()),
            "exit on SIGTERM: {status:?}"
        );
    }
    assert!(!healthy(&["--grpc", &grpc, "--timeout", "2"]));
}

#[test]
fn a_worker_told_to_stop_as_it_starts_stops_cleanly() {
    // Nothing listens here: the worker is still trying to reach its coordinator.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // SIGTERM at once after its first words (a pod deleted as it starts): its handler is
    // already in place, so it stops as asked rather than being killed by the signal.
    let (mut worker, _) = start_worker_with_metrics(port, "early");
    // SAFETY: sends a signal to a child process this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(worker.id() as i32, libc::SIGTERM) }, 0);
    let status = exits_within(&mut worker, 15);
    if status.is_none() {
        let _ = worker.kill();
    }
    assert!(
        status.is_some_and(|s| s.success()),
        "exit on SIGTERM: {status:?}"
    );
}

#[test]
fn a_worker_stopped_twice_quits_at_once_and_ends_its_engines() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let (engine, engine_child) = forking_engine(dir.path(), env!("CARGO_BIN_EXE_tourney"));
    let outside = format!("cmd:{}", engine.display());
    // Games of a minute or more: the first signal leaves the worker finishing one.
    let text = MatchFile {
        name: "long-games",
        pairs: 10,
        limits: "{ movetime = 300 }",
        adjudication: Some("{ max_plies = 300 }"),
        engines: [("outside", &outside), ("builtin", "ab")],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("long.toml");
    std::fs::write(&file, text).unwrap();
    submit(port, &file);
    let mut command = worker_command(port, "twice");
    command.arg("--allow-root-engines");
    let mut worker = Reaped(
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    engine_child.wait_started();
    let pid = worker.0.id() as i32;
    // SAFETY: sends a signal to a child process this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    assert!(
        exits_within(&mut worker.0, 1).is_none(),
        "the first signal lets the game in progress finish"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = exits_within(&mut worker.0, 10);
    assert_eq!(status.and_then(|s| s.code()), Some(130), "{status:?}");
    engine_child.wait_gone("the worker");
}

fn save_screenshot(browser: &Browser, name: &str) {
    browser.save_screenshot(env!("CARGO_TARGET_TMPDIR"), name);
}

/// A JavaScript string literal of `value`.
fn js(value: &serde_json::Value) -> String {
    value.to_string()
}

#[test]
fn the_live_dashboard_updates_and_replays_games_in_chromium() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let mut ids = Vec::new();
    for (name, text) in [
        ("sprt.toml", DASHBOARD_SPRT),
        ("amazons.toml", DASHBOARD_AMAZONS),
    ] {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        ids.push(submit(port, &file));
    }
    // Outside engines (the Amazons round robin's GTP one) may run as root here: the test's own.
    let worker = worker_command(port, "browser-test")
        .arg("--allow-root-engines")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _worker = Reaped(worker);
    for id in &ids {
        wait_for(port, id, "a first pair", |s| {
            s["pairs_done"].as_u64().unwrap() >= 1
        });
    }

    let browser = Browser::start(1280, 2200);
    browser.goto(&format!("http://127.0.0.1:{port}/#t={}", ids[0]));
    // The SPRT's standings and charts render from the live stream.
    let first = browser.wait_for(
        30,
        "standings and the LLR chart",
        r#"const rows = document.querySelectorAll('#standings tbody tr');
           const chart = document.querySelector('#chart-llr img');
           if (rows.length !== 2 || !chart || !chart.complete || chart.naturalWidth === 0) return null;
           return { progress: document.querySelector('#detail-progress').textContent,
                    eligible: document.querySelector('#detail-eligible').textContent,
                    share: document.querySelector('#detail-share').textContent,
                    standings: document.querySelector('#standings tbody').textContent,
                    chart: chart.getAttribute('src'),
                    pentanomial: [...document.querySelectorAll('#pentanomial td')]
                        .map((td) => Number(td.textContent)),
                    terminations: document.querySelector('#terminations').textContent,
                    details: [...document.querySelectorAll('#details dt')].map((dt) => dt.textContent),
                    openings: document.querySelectorAll('#openings tbody tr').length,
                    estimate: document.querySelector('#sprt-estimate').textContent,
                    live: document.querySelector('#connection').className };"#,
    );
    // What a tester needs to trust the result: settings, engines, times, Elo/nElo/LOS.
    let details: Vec<String> = serde_json::from_value(first["details"].clone()).unwrap();
    for label in [
        "Limits",
        "Openings",
        "Engine new",
        "Engine old",
        "Started",
        "Elapsed",
        "ETA",
    ] {
        assert!(details.iter().any(|d| d == label), "{label} in {details:?}");
    }
    // Openings are listed from 10 games on: a count, zero this early.
    assert!(first["openings"].as_u64().is_some(), "{first}");
    let estimate = first["estimate"].as_str().unwrap();
    // nElo with its interval, or where every pair so far went one way, the bound.
    assert!(
        estimate.starts_with("Elo difference ")
            && (estimate.contains("nElo") || estimate.contains("(95%; every pair "))
            && estimate.contains("LOS")
            && estimate.contains("Ptnml(0-2) ["),
        "{estimate}"
    );
    assert_eq!(first["live"], "live");
    let progress = first["progress"].as_str().unwrap();
    assert!(
        progress.ends_with("pairs in play"),
        "nothing after the progress line: {progress}"
    );
    // The connected workers that can run it, apart (a running test has some).
    let eligible = first["eligible"].as_str().unwrap();
    assert!(
        eligible.ends_with("connected workers can run it."),
        "{eligible}"
    );
    // Its share of the fleet, apart too.
    let share = first["share"].as_str().unwrap();
    assert!(
        share.contains("of the fleet's core-time (target "),
        "{share}"
    );
    // Every game so far is counted by how it ended ("connection 6 · max-plies 2").
    let games: u64 = progress
        .split(", ")
        .find_map(|part| part.strip_suffix(" games"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("games in {progress}"));
    let terminations = first["terminations"].as_str().unwrap();
    let counted: u64 = terminations
        .split(" · ")
        .map(|t| t.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, games, "{terminations} / {progress}");
    assert!(terminations.contains("connection"), "{terminations}");
    let pentanomial: Vec<u64> = serde_json::from_value(first["pentanomial"].clone()).unwrap();
    assert_eq!(pentanomial.len(), 5, "{first}");
    assert!(pentanomial.iter().sum::<u64>() >= 1, "{first}");
    let names = first["standings"].as_str().unwrap();
    assert!(names.contains("new") && names.contains("old"), "{names}");
    let fleet = browser.eval(
        "return [document.querySelectorAll('#workers tbody tr').length,
                 document.querySelectorAll('#tournaments tbody tr').length,
                 document.querySelector('#sprt').hidden,
                 document.querySelector('#tournament-workers tbody td.name').textContent,
                 document.querySelector('#workers-test').textContent.includes('0 suspect')];",
    );
    assert_eq!(
        fleet,
        serde_json::json!([1, 2, false, "browser-test", true])
    );
    // ... and change as pairs are played, without reloading the page.
    browser.eval("window.notReloaded = true; return null;");
    browser.wait_for(
        90,
        "the standings and the chart to change",
        &format!(
            "const chart = document.querySelector('#chart-llr img').getAttribute('src');
             return document.querySelector('#detail-progress').textContent !== {} && chart !== {}
                 && window.notReloaded === true;",
            js(&first["progress"]),
            js(&first["chart"])
        ),
    );
    browser.wait_for(
        30,
        "games/s to show",
        "return parseFloat(document.querySelector('#games-per-s').textContent) > 0;",
    );
    save_screenshot(&browser, "dashboard.png");

    // The viewer replays an LOA game ply by ply.
    browser.wait_for(
        30,
        "an LOA game in the recent games",
        "return document.querySelector('#recent tr[data-game=loa] .view-game') !== null;",
    );
    browser.click("#recent tr[data-game=loa] .view-game");
    // What the viewer shows; `drawn` is true when the board has a piece or arrow on
    // exactly the squares the position string says.
    let board = "const v = document.querySelector('#viewer');
        const position = document.querySelector('#viewer-position').textContent;
        if (!v.open || !position) return null;
        const expected = [];
        position.split(' ')[0].split('/').forEach((rank, row, ranks) => {
            let file = 0;
            for (const t of rank.match(/\\d+|[a-z]/g)) {
                if (/\\d/.test(t)) { file += Number(t); continue; }
                expected.push(t + String.fromCharCode(97 + file) + (ranks.length - row));
                file += 1;
            }
        });
        const drawn = [...document.querySelectorAll('#board .piece, #board .arrow')].map((e) =>
            (e.classList.contains('arrow') ? 'x' : e.classList[1]) + e.dataset.square);
        return { ply: Number(document.querySelector('#viewer-ply').dataset.ply),
                 plies: document.querySelectorAll('#moves .ply').length,
                 numbered: document.querySelector('#moves li .number').textContent,
                 pieces: document.querySelectorAll('#board .piece').length,
                 arrows: document.querySelectorAll('#board .arrow').length,
                 drawn: expected.sort().join() === drawn.sort().join(),
                 position };";
    let start = browser.wait_for(10, "the viewer", board);
    assert_eq!(start["ply"], 0);
    assert_eq!(start["drawn"], true, "{start}");
    assert!(
        (2..=24).contains(&start["pieces"].as_u64().unwrap()),
        "{start}"
    );
    for _ in 0..3 {
        browser.click("#next");
    }
    let third = browser.eval(board);
    assert_eq!(
        (third["ply"].clone(), third["drawn"].clone()),
        (3.into(), true.into())
    );
    assert_ne!(third["position"], start["position"]);
    browser.click("#last");
    let end = browser.eval(board);
    assert_eq!(end["ply"], end["plies"]);
    assert_eq!(end["drawn"], true);
    browser.click("#prev");
    let back = browser.eval(board);
    assert_eq!(
        back["ply"].as_u64().unwrap() + 1,
        end["plies"].as_u64().unwrap()
    );
    browser.click("#viewer .close button");

    assert_eq!(start["numbered"], "1.", "{start}");
    // Recent games are the selected tournament's: the Amazons round robin's own.
    browser.goto(&format!("http://127.0.0.1:{port}/#t={}", ids[1]));
    // ... and an Amazons game: eight amazons, one more arrow each ply.
    browser.wait_for(
        60,
        "an Amazons game in the recent games",
        "return document.querySelector('#recent tr[data-game=amazons] .view-game') !== null;",
    );
    let tournaments = browser.eval(
        "return [...document.querySelectorAll('#recent tbody tr')].map((tr) => tr.dataset.tournament);",
    );
    let shown: Vec<String> = serde_json::from_value(tournaments).unwrap();
    assert!(
        !shown.is_empty() && shown.len() <= 12 && shown.iter().all(|t| *t == ids[1]),
        "{shown:?}"
    );
    browser.click("#recent tr[data-game=amazons] .view-game");
    let amazons = browser.wait_for(
        10,
        "the Amazons board",
        &format!("const b = (() => {{ {board} }})(); return b && b.pieces === 8 ? b : null;"),
    );
    assert_eq!(amazons["drawn"], true, "{amazons}");
    // An 8×8 board: 64 squares, ranks 1 to 8.
    let squares = browser
        .eval("return document.querySelectorAll('#board rect[data-square]:not(.arrow)').length;");
    assert_eq!(squares, 64, "{amazons}");
    // Every game kept its engine logs (`engine_logs = \"all\"`): the GTP engine's is linked
    // from the game, and shows its protocol.
    browser.click("#log-links a");
    let log = browser.wait_for(
        5,
        "the engine log",
        "const pre = document.querySelector('#engine-log'); return pre.hidden ? null : pre.textContent;",
    );
    assert!(log.as_str().unwrap().contains("genmove"), "{log}");
    browser.click("#next");
    browser.click("#next");
    let two = browser.eval(board);
    assert_eq!(two["ply"], 2);
    assert_eq!(two["drawn"], true);
    assert_eq!(
        two["arrows"].as_u64().unwrap(),
        amazons["arrows"].as_u64().unwrap() + 2,
        "{two}"
    );
    save_screenshot(&browser, "dashboard-viewer.png");
}

#[test]
fn without_tokens_the_coordinator_serves_loopback_only_unless_told_insecure() {
    let dir = tempfile::tempdir().unwrap();
    let bare = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tourney"));
        c.env_remove("TOURNEY_WORKER_TOKEN")
            .env_remove("TOURNEY_ADMIN_TOKEN")
            .args(["coordinator", "--data"])
            .arg(dir.path().join("data"));
        c
    };
    let out = bare().args(["--listen", "0.0.0.0:0"]).output().unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("without both a worker and an admin token"),
        "{said}"
    );
    // Only the admin token is not enough either; an empty token is refused outright.
    let out = bare()
        .args(["--listen", "0.0.0.0:0"])
        .env("TOURNEY_ADMIN_TOKEN", "admin-secret")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let out = bare().env("TOURNEY_WORKER_TOKEN", "").output().unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && said.contains("no token"), "{said}");
    // Told so, it serves, and says so in /metrics.
    let mut insecure = bare();
    insecure.args(["--listen", "0.0.0.0:0", "--insecure"]);
    let (child, port) = spawn_listening(insecure, "coordinator serving");
    let _child = Reaped(child);
    assert_eq!(series_value(&metrics_text(port), "tourney_insecure"), 1.0);
}

#[test]
fn a_worker_token_removed_and_reloaded_with_sighup_cuts_off_its_host_alone() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("worker-tokens");
    std::fs::write(&tokens, "box1 token-of-box1\nbox2 token-of-box2\n").unwrap();
    let mut command = tourney();
    command
        .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .arg("--worker-token-file")
        .arg(&tokens)
        .args(["--lease-seconds", "2"]);
    let (coordinator, port) = spawn_listening(command, "coordinator serving");
    let coordinator = Reaped(coordinator);
    let file = dir.path().join("t.toml");
    std::fs::write(&file, tournament()).unwrap();
    let id = submit(port, &file);
    let worker = |name: &str, token: &str| {
        let mut c = worker_command(port, name);
        c.env("TOURNEY_TOKEN", token)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        Reaped(c.spawn().unwrap())
    };
    let _one = worker("one", "token-of-box1");
    let _two = worker("two", "token-of-box2");
    wait_for(port, &id, "a pair of each worker", |_| {
        let export = admin(port, &["export", &id, "--format", "jsonl"]);
        export.contains(r#""token":"box1""#) && export.contains(r#""token":"box2""#)
    });
    let refused =
        |text: &str| series_value(text, r#"tourney_auth_failures_total{service="worker"}"#);
    let before = refused(&metrics_text(port));
    std::fs::write(&tokens, "box1 token-of-box1\n").unwrap();
    let pid = coordinator.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-HUP", &pid])
            .status()
            .unwrap()
            .success()
    );
    // The second host's calls are refused from now on; the first finishes the tournament.
    wait_for(port, &id, "the tournament to finish", |s| {
        s["state"] == "finished"
    });
    assert!(refused(&metrics_text(port)) > before);
    let games = exported(port, &id);
    assert_eq!(games.len(), 32);
    assert!(
        games
            .iter()
            .all(|g| g["token"] == "box1" || g["token"] == "box2")
    );
}

#[test]
fn a_worker_running_as_root_refuses_outside_engines_unless_given_a_user_for_them() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        wait::skip_unless_required(
            "TOURNEY_REQUIRE_ROOT",
            "the worker does not run as root here",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // A small program (uploaded like any engine's), which runs this binary's engine.
    let program = dir.path().join("engine.sh");
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\nexec {} engine ab:depth=1\n",
            env!("CARGO_BIN_EXE_tourney")
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let outside = program.display().to_string();
    let text = MatchFile {
        name: "root",
        pairs: 2,
        engines: [
            ("outside", &format!("cmd:{outside}")),
            ("builtin", "ab:depth=1"),
        ],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("root.toml");
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    let _worker = Reaped(start_worker(port, "rooted"));
    let status = wait_for(port, &id, "the tournament to pause", |s| {
        s["state"] == "paused"
    });
    let reason = status["paused_reason"].as_str().unwrap();
    assert!(reason.contains("--engine-user"), "{reason}");
}

/// Sets the soft file-size limit of process `pid` (raising it up to the hard limit needs no
/// privilege).
fn set_file_size_limit(pid: u32, bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: prlimit reads `limit` and writes nothing (old is null).
    let done = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            &limit,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(done, 0, "prlimit: {}", std::io::Error::last_os_error());
}

#[test]
fn a_full_disk_stops_leasing_says_not_serving_and_recovers_when_there_is_room() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = tourney();
    command
        .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .args(["--lease-seconds", "2"]);
    // The "disk" fills at 16 MB of any one store file: writes past it fail with EFBIG
    // (SIGXFSZ ignored, as a full disk fails writes without a signal).
    // SAFETY: signal and setrlimit are async-signal-safe.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 16 << 20,
                rlim_max: libc::RLIM_INFINITY,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        });
    }
    let (coordinator, port) = spawn_listening(command, "coordinator serving");
    let coordinator = Reaped(coordinator);
    let file = dir.path().join("fill.toml");
    let text = MatchFile {
        name: "fill",
        pairs: 1_000_000,
        engines: [("a", "ab:depth=1"), ("b", "random")],
        ..Default::default()
    }
    .toml();
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    let workers = [
        Reaped(start_worker(port, "one")),
        Reaped(start_worker(port, "two")),
    ];
    let health = || {
        tourney()
            .args(["health", "--grpc", &format!("http://127.0.0.1:{port}")])
            .output()
            .unwrap()
            .status
            .success()
    };
    wait::until(240, "the store to fill", || {
        wait::check(!health(), || "still serving".into())
    });
    // Failing: no leases, and nothing it may hold unacknowledged is shown.
    let text = metrics_text(port);
    assert_eq!(series_value(&text, "tourney_store_failing"), 1.0);
    let out = tourney()
        .args([
            "export",
            &id,
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
        ])
        .env("TOURNEY_TOKEN", "admin-secret")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("store is unavailable"));
    let stuck = status(port, &id)["pairs_done"].as_u64().unwrap();
    // Room again: it recovers by itself and goes on.
    set_file_size_limit(coordinator.0.id(), u64::MAX);
    wait::until(30, "the coordinator to recover", || {
        wait::check(health(), || "not serving".into())
    });
    wait_for(port, &id, "more pairs after the recovery", |s| {
        s["pairs_done"].as_u64().unwrap() > stuck + 20
    });
    assert_eq!(
        series_value(&metrics_text(port), "tourney_store_failing"),
        0.0
    );
    admin(port, &["cancel", &id]);
    drop(workers);
    // Reports of the killed workers may still be committing: compare once nothing moves.
    let (exported_pairs, acknowledged) = wait::until(30, "the tournament to settle", || {
        let before = status(port, &id)["pairs_done"].as_u64().unwrap();
        let mut pairs: Vec<u64> = exported(port, &id)
            .iter()
            .map(|g| g["pair"].as_u64().unwrap())
            .collect();
        pairs.dedup();
        let after = status(port, &id)["pairs_done"].as_u64().unwrap();
        match before == after {
            true => Ok((pairs.len() as u64, after)),
            false => Err(format!("{before} then {after} pairs done")),
        }
    });
    assert_eq!(
        exported_pairs, acknowledged,
        "the export holds exactly the acknowledged pairs"
    );
}

/// `tourney <args>` as the admin, expected to fail: its stderr.
fn admin_fails(port: u16, args: &[&str]) -> String {
    let out = as_admin(port, args);
    assert!(!out.status.success(), "tourney {args:?} succeeded");
    String::from_utf8(out.stderr).unwrap()
}

/// The text of a gzipped file.
fn gunzip(path: &std::path::Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

#[test]
fn an_archived_tournament_keeps_its_report_through_a_restart_and_its_games_in_files() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("quick.toml");
    std::fs::write(
        &file,
        MatchFile {
            name: "archive-test",
            pairs: 8,
            limits: "{ nodes = 1 }",
            engines: [("a", "random:seed=1"), ("b", "random:seed=2")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let (mut coordinator, port) = start_coordinator(0, &data);
    let id = submit(port, &file);
    let out = dir.path().join("archive");
    let refused = admin_fails(port, &["archive", &id, "--out", out.to_str().unwrap()]);
    assert!(
        refused.contains("only a finished or cancelled"),
        "{refused}"
    );
    let mut worker = start_worker(port, "w1");
    wait_for(port, &id, "the end", |s| s["state"] == "finished");
    worker.kill().unwrap();
    worker.wait().unwrap();
    let games = exported(port, &id);
    let report = admin(port, &["report", &id]);
    assert_eq!(games.len(), 16);

    let said = admin(port, &["archive", &id, "--out", out.to_str().unwrap()]);
    assert!(
        said.contains("16 games archived") && said.contains("8 pairs removed"),
        "{said}"
    );
    let jsonl = gunzip(&out.join(format!("tournament-{id}.jsonl.gz")));
    let archived: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(archived, games, "the archive holds the games as exported");
    let pgn = gunzip(&out.join(format!("tournament-{id}.pgn.gz")));
    assert_eq!(pgn.matches("[Result \"").count(), 16, "{pgn}");
    assert!(!out.join(format!("tournament-{id}.jsonl.gz.part")).exists());

    // The games are gone from the store, the report is not, restart or not.
    let gone = admin_fails(port, &["export", &id]);
    assert!(gone.contains("archived"), "{gone}");
    // The page's pair view says so too: not found, and why (not a failure of the store).
    let (status_line, body) = get(
        &format!("127.0.0.1:{port}"),
        &format!("/api/v1/tournaments/{id}/pairs/0"),
    )
    .unwrap();
    assert!(status_line.contains(" 404 "), "{status_line}");
    assert!(body.contains("archived"), "{body}");
    let again = admin_fails(
        port,
        &["archive", &id, "--out", dir.path().to_str().unwrap()],
    );
    assert!(again.contains("were archived at"), "{again}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("tournament-"))
        .collect();
    assert!(left.is_empty(), "a failed archive leaves no file: {left:?}");
    let again = admin_fails(port, &["archive", &id, "--out", out.to_str().unwrap()]);
    assert!(again.contains("exists already"), "{again}");
    assert_eq!(admin(port, &["report", &id]), report);
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let verified = tourney()
        .args(["store", "verify", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stdout)
    );
    let (mut coordinator, port) = start_coordinator(0, &data);
    assert_eq!(admin(port, &["report", &id]), report);
    assert_eq!(status(port, &id)["pairs_done"], 8);
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

#[test]
fn versions_registered_by_name_play_and_come_out_on_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let (mut coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    admin(port, &["version", "add", "r1", "--player", "random:seed=1"]);
    let said = admin(
        port,
        &[
            "version",
            "add",
            "r2",
            "--player",
            "ab:depth=1",
            "--parent",
            "r1",
            "--note",
            "searches",
        ],
    );
    assert!(said.contains("version r2 registered"), "{said}");
    let taken = admin_fails(port, &["version", "add", "r1", "--player", "random"]);
    assert!(taken.contains("exists already"), "{taken}");
    let missing = admin_fails(
        port,
        &["version", "add", "p", "--command", "./no/such/engine"],
    );
    assert!(missing.contains("not found"), "{missing}");
    let listed = admin(port, &["version", "list"]);
    assert!(
        listed.contains("r1") && listed.contains("ab:depth=1  (searches)"),
        "{listed}"
    );

    let file = dir.path().join("versions.toml");
    std::fs::write(
        &file,
        MatchFile {
            name: "versions",
            pairs: 4,
            limits: "{ nodes = 1 }",
            engines: [("r1", "version:r1"), ("r2", "version:r2")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let id = submit(port, &file);
    let mut worker = start_worker(port, "w1");
    wait_for(port, &id, "the end", |s| s["state"] == "finished");
    worker.kill().unwrap();
    worker.wait().unwrap();
    let timeline: serde_json::Value =
        serde_json::from_str(&admin(port, &["timeline", "--json"])).unwrap();
    assert_eq!(timeline["anchor"], "r1");
    assert_eq!(timeline["games"], 8);
    let versions = timeline["rows"].as_array().unwrap();
    assert_eq!(versions[0]["name"], "r1");
    assert_eq!(versions[0]["elo"], 0.0);
    assert_eq!(versions[1]["parent"], "r1");
    assert_eq!(versions[1]["tournaments"][0].as_u64(), id.parse().ok());
    let html = dir.path().join("timeline.html");
    let text = admin(
        port,
        &[
            "timeline",
            "--anchor",
            "r2",
            "--html",
            html.to_str().unwrap(),
        ],
    );
    assert!(text.contains("8 games between versions; r2 at 0"), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<svg") && page.contains(&format!("/#t={id}\">#{id}</a>")),
        "{page}"
    );
    // The dashboard's page and its JSON.
    let (status, page) = get(&format!("127.0.0.1:{port}"), "/timeline").unwrap();
    assert!(
        status.contains("200") && page.contains("<td class=\"name\">r2</td>"),
        "{page}"
    );
    assert!(page.contains(&format!("href=\"/#t={id}\"")), "{page}");
    // A report written from the admin command links the tournaments on its timeline to
    // their pages on that coordinator's dashboard, not to a path of the file's own.
    let report = dir.path().join("report.html");
    let args = [
        "report",
        &id,
        "--format",
        "html",
        "-o",
        report.to_str().unwrap(),
    ];
    admin(port, &args);
    let page = std::fs::read_to_string(&report).unwrap();
    assert!(
        page.contains(&format!(
            "href=\"http://127.0.0.1:{port}/#t={id}\">#{id}</a>"
        )),
        "{page}"
    );
    let (_, json) = get(&format!("127.0.0.1:{port}"), "/api/v1/timeline").unwrap();
    let api: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(api["rows"][1]["name"], "r2");
    let replaced = admin_fails(
        port,
        &["version", "add", "r2", "--player", "ab", "--replace"],
    );
    assert!(replaced.contains("has played"), "{replaced}");
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

#[test]
fn a_crashed_game_keeps_its_transcript_and_replays_against_a_local_engine() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // An engine that gets through the handshake and gives up at its first go.
    let program = dir.path().join("crashy.sh");
    std::fs::write(
        &program,
        "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    ugi) echo 'id name crashy'; echo ugiok;;\n    isready) echo readyok;;\n    go*) echo \"crashy: giving up on '$line'\" >&2; exit 3;;\n    quit) exit 0;;\n  esac\ndone\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let file = dir.path().join("crashy.toml");
    let text = MatchFile {
        name: "crashy",
        pairs: 1,
        limits: "{ movetime = 200 }",
        engines: [
            ("crashy", &format!("cmd:{}", program.display())),
            ("builtin", "random:seed=1"),
        ],
        ..Default::default()
    }
    .toml();
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    let cache = dir.path().join("cache");
    let mut worker = worker_with_cache(port, "w1", &cache);
    worker.arg("--allow-root-engines");
    let mut worker = Reaped(
        worker
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, &id, "the end", |s| s["state"] == "finished");
    let games = exported(port, &id);
    let game = games.iter().position(|g| g["black"] == "crashy").unwrap();
    let g = &games[game];
    assert_eq!(g["termination"], "crash", "{g}");
    let transcript: Vec<&str> = (g["black_transcript"].as_array().unwrap().iter())
        .map(|l| l.as_str().unwrap())
        .collect();
    for needle in [
        "> ugi",
        "< ugiok",
        "> go movetime 200",
        "! crashy: giving up on 'go movetime 200'",
    ] {
        assert!(
            transcript.iter().any(|l| l.contains(needle)),
            "{needle}: {transcript:#?}"
        );
    }
    assert!(g.get("white_transcript").is_none(), "the winner keeps none");

    // Replayed with its own command, it fails again (exit status 1)...
    let args = ["replay", &id, "0", &game.to_string()];
    let again = as_admin(port, &args);
    let (out, err) = (
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr),
    );
    assert!(!again.status.success(), "{out}");
    assert!(out.contains("Recorded protocol of crashy"), "{out}");
    assert!(out.contains("then: go movetime 200"), "{out}");
    assert!(out.contains("! crashy: giving up"), "{out}");
    assert!(err.contains("the engine failed again: crash"), "{err}");
    // ...and a fixed engine answers there with a legal move.
    let fixed = format!("{} engine random:seed=5", env!("CARGO_BIN_EXE_tourney"));
    let mut args = args.to_vec();
    args.extend(["--engine", &fixed]);
    let answered = as_admin(port, &args);
    let out = String::from_utf8_lossy(&answered.stdout);
    assert!(
        answered.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    assert!(
        out.contains("< bestmove") && out.contains("(legal)"),
        "{out}"
    );
    let bad = admin_fails(port, &["replay", &id, "7", "0"]);
    assert!(bad.contains("has no pair 7"), "{bad}");
    // The program changed since (a fix in progress) and no worker's cache here: the one
    // the record names is fetched from the coordinator (checked by its sha256), is told
    // the opening as it was (`startpos moves`), and fails the same way.
    let _ = worker.0.kill();
    let _ = worker.0.wait();
    std::fs::remove_dir_all(&cache).unwrap();
    let mut text = std::fs::read_to_string(&program).unwrap();
    text.push_str("# edited since\n");
    std::fs::write(&program, text).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    let mut args = args[..4].to_vec();
    args.extend(["--cache", elsewhere.to_str().unwrap()]);
    let again = as_admin(port, &args);
    let out = String::from_utf8_lossy(&again.stdout);
    assert!(!again.status.success(), "{out}");
    assert!(
        out.contains(&format!("with `{}/programs/", elsewhere.display())),
        "{out}"
    );
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("the engine failed again: crash"),
        "{out}"
    );
}

#[test]
fn a_game_played_out_replays_its_last_move_in_the_engine_s_own_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // A UGI engine (this binary's random player), which plays its games to their end.
    let program = dir.path().join("ugi.sh");
    let tourney = env!("CARGO_BIN_EXE_tourney");
    let script = format!("#!/bin/sh\nexec {tourney} engine random:seed=3 --protocol ugi\n");
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut text = MatchFile {
        name: "played-out",
        pairs: 1,
        engines: [
            ("builtin", "random:seed=1"),
            ("ugi", &format!("cmd:{}", program.display())),
        ],
        ..Default::default()
    }
    .toml();
    // The last engine table is the UGI engine's.
    text.push_str("protocol = \"ugi\"\n");
    let file = dir.path().join("played-out.toml");
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    let mut worker = worker_with_cache(port, "w1", &dir.path().join("cache"));
    worker.arg("--allow-root-engines");
    let _worker = Reaped(
        worker
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(port, &id, "the end", |s| s["state"] == "finished");
    let game = &exported(port, &id)[0];
    let termination = game["termination"].as_str().unwrap();
    assert!(
        !["illegal-move", "time-forfeit", "crash", "unresponsive"].contains(&termination),
        "{game}"
    );
    assert!(game.get("white_transcript").is_none() && game.get("black_transcript").is_none());
    let moves = game["moves"].as_array().unwrap();
    let plies = moves.len();
    let last = moves[plies - 1]["move"].as_str().unwrap();
    let replay = |id: &str, extra: &[&str]| {
        let mut args = vec!["replay", id, "0", "0"];
        args.extend(extra);
        let out = as_admin(port, &args);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), said, err)
    };
    // By default the engine is asked for the game's last move, and its answer compared.
    let (ok, out, err) = replay(&id, &[]);
    assert!(ok, "{out}{err}");
    let asked = format!(
        "replaying {} plies and asking for the move the game had next",
        plies - 1
    );
    assert!(
        out.contains(&asked) && out.contains(&format!("({last})")),
        "{out}"
    );
    assert!(
        out.contains(&format!("Replaying {} plies with", plies - 1)),
        "{out}"
    );
    assert!(
        out.contains("(legal)") && out.contains("The game had "),
        "{out}"
    );
    // Past its last move the game had ended: refused, naming the last ply.
    let (ok, out, err) = replay(&id, &["--ply", &plies.to_string()]);
    assert!(!ok, "{out}");
    assert!(
        err.contains(&format!("the last ply to replay is {}", plies - 1)),
        "{err}"
    );
    // The UGI engine is spoken to in UGI, as the tournament says (no transcript was kept
    // to show it), at whichever of the game's last two plies is its turn.
    let ugi_turn = |id: &str| {
        let plies = exported(port, id)[0]["moves"].as_array().unwrap().len();
        let turns: Vec<String> = [plies - 1, plies - 2]
            .iter()
            .map(|ply| replay(id, &["--ply", &ply.to_string()]))
            .filter(|(_, out, _)| out.contains("ugi.sh`"))
            .map(|(ok, out, err)| {
                assert!(ok, "{out}{err}");
                out
            })
            .collect();
        assert_eq!(turns.len(), 1, "{turns:?}");
        assert!(
            turns[0].contains("ugi.sh` (ugi)") && turns[0].contains("> uginewgame"),
            "{}",
            turns[0]
        );
    };
    ugi_turn(&id);
    // So is a registered version registered as speaking UGI, which the file names alone.
    let command = program.display().to_string();
    let args = ["--command", &command, "--protocol", "ugi"];
    admin(port, &[&["version", "add", "ugi-v"][..], &args].concat());
    let text = MatchFile {
        name: "by-version",
        pairs: 1,
        engines: [("builtin", "random:seed=1"), ("v", "version:ugi-v")],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("by-version.toml");
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    wait_for(port, &id, "the end", |s| s["state"] == "finished");
    ugi_turn(&id);
}

#[test]
fn a_coordinator_raises_its_open_files_limit_to_the_hard_one() {
    use std::os::unix::process::CommandExt;
    let data = tempfile::tempdir().unwrap();
    let mut command = tourney();
    command
        .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
        .arg(data.path());
    // Started with a soft limit of 200 open files, as a service manager may start it.
    // SAFETY: only setrlimit runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let mut limit: libc::rlimit = std::mem::zeroed();
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            limit.rlim_cur = 200.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let (mut child, _) = spawn_listening(command, "coordinator serving");
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id())).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let numbers: Vec<&str> = line.split_whitespace().skip(3).take(2).collect();
    assert_eq!(numbers[0], numbers[1], "{line}");
}

#[test]
fn a_worker_killed_with_sigkill_takes_its_engines_and_their_daemons_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // The engine leaves a `setsid` daemon: out of its process group.
    let (engine, engine_child) = forking_engine(dir.path(), env!("CARGO_BIN_EXE_tourney"));
    let outside = format!("cmd:{}", engine.display());
    let text = MatchFile {
        name: "killed",
        pairs: 10,
        limits: "{ movetime = 300 }",
        adjudication: Some("{ max_plies = 300 }"),
        engines: [("outside", &outside), ("builtin", "ab")],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("killed.toml");
    std::fs::write(&file, text).unwrap();
    submit(port, &file);
    let mut command = worker_command(port, "killed");
    command.arg("--allow-root-engines");
    let mut worker = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    engine_child.wait_started();
    // No signal the worker could act on: the kernel ends what it started.
    worker.kill().unwrap();
    worker.wait().unwrap();
    engine_child.wait_gone("the worker's SIGKILL");
}

/// A worker client of the coordinator on `port`, registered as `name` (one slot), and its
/// registration.
async fn registered_as(
    port: u16,
    name: &str,
) -> (
    tourney_proto::v1::worker_client::WorkerClient<
        tonic::service::interceptor::InterceptedService<
            tonic::transport::Channel,
            tourney_worker::TokenInterceptor,
        >,
    >,
    tourney_proto::v1::RegisterResponse,
) {
    use tourney_proto::v1 as pb;
    let url = format!("http://127.0.0.1:{port}");
    let channel = tourney_worker::connect(&url, None).await.unwrap();
    let token = tourney_worker::TokenInterceptor::new(Some("worker-secret"));
    let mut client =
        pb::worker_client::WorkerClient::with_interceptor(channel.clone(), token.clone());
    let registered = client
        .register(pb::RegisterRequest {
            name: name.into(),
            slots: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let client = pb::worker_client::WorkerClient::with_interceptor(
        channel,
        token.with_session(&registered.session).unwrap(),
    );
    (client, registered)
}

/// Sends the coordinator on `port`, as a worker of its own, one report over its budget
/// (nine pair results claiming 8 MiB of records each); the error it answers.
fn send_an_oversized_report(port: u16, tournament: u64) -> tonic::Status {
    use tourney_proto::v1 as pb;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (mut client, registered) = registered_as(port, "flooder").await;
        let block = lz4_flex::compress_prepend_size(&vec![b' '; tourney_proto::MAX_GAMES_JSON]);
        let results = (0..9)
            .map(|pair| pb::PairResult {
                tournament,
                pair,
                half_points: vec![1, 1],
                games_lz4: block.clone(),
                ..Default::default()
            })
            .collect();
        client
            .report(pb::ReportRequest {
                worker_id: registered.worker_id,
                results,
                failures: Vec::new(),
                checks: Vec::new(),
            })
            .await
            .unwrap_err()
    })
}

/// Leases pairs of `tournament` from the coordinator on `port` as a worker of its own
/// (`forger`) and reports each with forged records, until it is leased nothing more; the
/// refusals it got.
fn forge_until_barred(port: u16, tournament: u64) -> u64 {
    use tourney_proto::v1 as pb;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (mut client, registered) = registered_as(port, "forger").await;
        let mut refused = 0;
        for _ in 0..20 {
            let lease = pb::LeaseRequest {
                worker_id: registered.worker_id.clone(),
                max_pairs: 1,
            };
            let granted = client.lease(lease).await.unwrap().into_inner();
            let Some(job) = granted.jobs.first() else {
                return refused;
            };
            let forged = pb::PairResult {
                tournament,
                pair: job.pair,
                half_points: vec![2, 0],
                games_json: "[{\"result\": \"1-0\"}, {\"result\": \"1-0\"}]".into(),
                lease_id: granted.lease_id,
                games_lz4: Vec::new(),
                ticket: job.ticket.clone(),
            };
            let ack = client
                .report(pb::ReportRequest {
                    worker_id: registered.worker_id.clone(),
                    results: vec![forged],
                    failures: Vec::new(),
                    checks: Vec::new(),
                })
                .await
                .unwrap()
                .into_inner();
            refused += u64::from(ack.rejected);
        }
        panic!("the forger was never barred ({refused} refusals)");
    })
}

/// Soak: two workers and a forger, the coordinator killed with SIGKILL and restarted three
/// times, one worker stopped (SIGSTOP) past its lease and continued, a report over the
/// budget: every pair is played and stored exactly once (both its games), the forger is
/// barred, no honest worker is told a result of it was refused, nothing pauses.
#[test]
fn a_soak_of_restarts_stops_and_oversized_reports_loses_and_refuses_no_honest_work() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("soak.toml");
    let pairs = 40;
    let text = MatchFile {
        name: "soak",
        pairs,
        openings: "{ plies = 4, seed = 11 }",
        limits: "{ movetime = 5 }",
        adjudication: Some("{ max_plies = 120 }"),
        engines: [("deep", "ab"), ("shallow", "ab:depth=1")],
        ..Default::default()
    }
    .toml();
    std::fs::write(&file, text).unwrap();
    let (coordinator, port) = start_coordinator(0, &data);
    let mut coordinator = Reaped(coordinator);
    let id = submit(port, &file);
    let (one, one_metrics) = start_worker_with_metrics(port, "one");
    let (two, two_metrics) = start_worker_with_metrics(port, "two");
    let (_one, two) = (Reaped(one), Reaped(two));
    let done = |port| status(port, &id)["pairs_done"].as_u64().unwrap();
    // A worker token holder sends forged results: barred after three, nothing paused.
    let refused = forge_until_barred(port, id.parse().unwrap());
    assert_eq!(refused, tourney_coordinator::REFUSALS_TO_BAR);
    assert_ne!(status(port, &id)["state"], "paused");
    let mut reached = 0;
    for round in 0..3 {
        wait_for(port, &id, "more pairs before a restart", |s| {
            s["pairs_done"].as_u64().unwrap() >= reached + 3
        });
        coordinator.0.kill().unwrap();
        coordinator.0.wait().unwrap();
        coordinator = Reaped(restart_coordinator(port, &data).0);
        reached = done(port);
        if round == 1 {
            // A worker stopped past its lease (2 s), then continued: its pair is leased
            // again and its result, when it comes, is late or a repeat, never refused.
            let pid = two.0.id() as i32;
            // SAFETY: signals to a child this test started and has not reaped.
            assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
            // The stall itself is the scenario (not a wait for an event): 5 s, past the
            // 2 s lease of whatever pair it holds, from before or after the restart.
            std::thread::sleep(std::time::Duration::from_secs(5));
            assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
        }
    }
    let e = send_an_oversized_report(port, id.parse().unwrap());
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    assert_eq!(end["pairs_done"], pairs);
    assert_eq!(end["paused_reason"].as_str().unwrap_or_default(), "");
    let events = admin(port, &["events"]);
    assert!(
        events.contains("worker-barred") && events.contains("forger: 3 results refused"),
        "{events}"
    );
    let mut per_pair = std::collections::BTreeMap::new();
    for g in exported(port, &id) {
        *per_pair.entry(g["pair"].as_u64().unwrap()).or_insert(0) += 1;
    }
    assert_eq!(per_pair.len() as u64, pairs);
    assert!(per_pair.values().all(|&n| n == 2), "{per_pair:?}");
    // The oversized report was turned away as too large, not pair by pair.
    let text = metrics_text(port);
    assert_eq!(
        series_value(
            &text,
            "tourney_reports_deferred_total{reason=\"too-large\"}"
        ),
        1.0
    );
    for reason in ["not-held", "records", "ticket"] {
        let series = format!("tourney_results_rejected_total{{reason=\"{reason}\"}}");
        assert_eq!(series_value(&text, &series), 0.0, "{reason}");
    }
    // Across every restart, neither worker was told a result was refused.
    for metrics in [one_metrics, two_metrics] {
        let text = metrics_text(metrics);
        assert_eq!(
            series_value(&text, "tourney_worker_results_rejected_total"),
            0.0,
            "{text}"
        );
    }
}

/// An SPRT of `first` against `second` that decides within a few pairs.
fn quick_sprt(first: &str, second: &str) -> String {
    format!(
        "name = \"verdict\"\ngame = \"loa\"\nformat = \"sprt\"\n\
         sprt = {{ elo0 = 0, elo1 = 200 }}\nopenings = {{ plies = 2, seed = 1 }}\n\
         limits = {{ depth = 1 }}\nadjudication = {{ max_plies = 150 }}\n\n\
         [[engine]]\nname = \"first\"\n{first}\n\n[[engine]]\nname = \"second\"\n{second}\n"
    )
}

#[test]
fn submit_wait_exits_by_the_verdict_of_the_test() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let _worker = Reaped(start_worker(port, "verdicts"));
    let wait = |name: &str, text: String, json: bool| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let mut args = vec!["submit", file.to_str().unwrap(), "--wait"];
        if json {
            args.push("--json");
        }
        let out = as_admin(port, &args);
        let stdout = String::from_utf8(out.stdout).unwrap();
        (out.status.code(), stdout)
    };
    // The tested engine (the first) far stronger: H1, exit 0, and the summary says so.
    let (code, out) = wait(
        "h1.toml",
        quick_sprt("player = \"ab:depth=2\"", "player = \"random\""),
        false,
    );
    assert_eq!(code, Some(0), "{out}");
    let summary = out.lines().last().unwrap();
    assert!(
        summary.starts_with("Tournament ") && summary.contains("finished, H1 accepted"),
        "{out}"
    );
    assert!(
        out.lines().next().unwrap().parse::<u64>().is_ok(),
        "the id first: {out}"
    );
    // Far weaker: H0, exit 1; --json gives the status as `status --json` does.
    let (code, out) = wait(
        "h0.toml",
        quick_sprt("player = \"random\"", "player = \"ab:depth=2\""),
        true,
    );
    assert_eq!(code, Some(1), "{out}");
    let json: serde_json::Value = serde_json::from_str(out.split_once('\n').unwrap().1).unwrap();
    assert_eq!(json["decision"], "H0 accepted", "{json}");
    assert_eq!(json["state"], "finished");
    // An engine that cannot play pauses the test: exit 2, with the reason.
    let broken = dir.path().join("broken.sh");
    std::fs::write(&broken, "#!/bin/sh\nexit 3\n").unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (code, out) = wait(
        "paused.toml",
        quick_sprt("command = \"./broken.sh\"", "player = \"random\""),
        false,
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(": paused ("), "{out}");
    // An error on the way is "no verdict" too, never "H0 accepted".
    let (code, _) = wait("bad.toml", "name = \"\"".into(), false);
    assert_eq!(code, Some(2));
}
