//! A real cluster on loopback: a coordinator process and three worker processes. One worker
//! is killed with SIGKILL while it holds a lease, then the coordinator is killed (kill -9)
//! and restarted on the same data. The tournament must still finish with exactly the
//! planned games, no pair counted twice, and standings equal to the ratings of the
//! exported games.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TOURNAMENT: &str = r#"
name = "cluster-test"
game = "loa"
format = "match"
pairs = 16
openings = { plies = 4, seed = 9 }
limits = { movetime = 15 }
adjudication = { max_plies = 160 }

[[engine]]
name = "deep"
player = "ab"

[[engine]]
name = "shallow"
player = "ab:depth=1"
"#;

fn tourney() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tourney"));
    c.env("TOURNEY_WORKER_TOKEN", "worker-secret")
        .env("TOURNEY_ADMIN_TOKEN", "admin-secret");
    c
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn start_coordinator(port: u16, data: &std::path::Path) -> Child {
    tourney()
        .args([
            "coordinator",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--data",
        ])
        .arg(data)
        .args(["--lease-seconds", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn start_worker(port: u16, name: &str, metrics: Option<u16>) -> Child {
    let mut command = tourney();
    command.arg("worker");
    if let Some(metrics) = metrics {
        command.args(["--metrics", &format!("127.0.0.1:{metrics}")]);
    }
    command
        .args([
            "--coordinator",
            &format!("http://127.0.0.1:{port}"),
            "--concurrency",
            "1",
            "--name",
            name,
            "--cache",
        ])
        .arg(std::env::temp_dir().join("tourney-cluster-cache"))
        .env("TOURNEY_TOKEN", "worker-secret")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The body of `GET /metrics` on a loopback port.
fn metrics_text(port: u16) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response.split_once("\r\n\r\n").unwrap().1.to_string()
}

/// The value of the series written exactly as `series` in a metrics text.
fn series_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no series {series} in {text}"))
        .parse()
        .unwrap()
}

/// `tourney <args>` as the admin, retried while the coordinator is (re)starting.
fn admin(port: u16, args: &[&str]) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let out = tourney()
            .args(args)
            .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
            .env("TOURNEY_TOKEN", "admin-secret")
            .output()
            .unwrap();
        if out.status.success() {
            return String::from_utf8(out.stdout).unwrap();
        }
        assert!(
            Instant::now() < until,
            "tourney {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn status(port: u16, id: &str) -> serde_json::Value {
    serde_json::from_str(&admin(port, &["status", id, "--json"])).unwrap()
}

fn wait_for(
    port: u16,
    id: &str,
    what: &str,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let until = Instant::now() + Duration::from_secs(120);
    loop {
        let s = status(port, id);
        if done(&s) {
            return s;
        }
        assert!(Instant::now() < until, "timed out waiting for {what}: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_cluster_survives_a_killed_worker_and_a_killed_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("cluster.toml");
    std::fs::write(&file, TOURNAMENT).unwrap();
    let port = free_port();
    let mut coordinator = start_coordinator(port, &data);
    let id = admin(port, &["submit", file.to_str().unwrap()])
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string();
    let worker_metrics = free_port();
    let mut workers: Vec<Child> = ["w1", "w2", "w3"]
        .iter()
        .map(|n| start_worker(port, n, (*n == "w2").then_some(worker_metrics)))
        .collect();

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
    std::thread::sleep(Duration::from_millis(300));
    let mut coordinator = start_coordinator(port, &data);

    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    assert_eq!(end["pairs_done"], 16);
    assert_eq!(end["pairs_planned"], 16);
    assert_eq!(end["games"], 32);

    // Exactly the planned games, every pair twice.
    let export = admin(port, &["export", &id, "--format", "jsonl"]);
    let games: Vec<serde_json::Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
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
