//! `tourney bench pages`: the dashboard with many tests. Stores `--tournaments` ended
//! tests (names, authors and engines varied), starts a `tourney coordinator` process on
//! them, and times what a browser asks for: the page, the overview, searches (one that
//! finds a few, one that pages deep into all of them), one test's detail and the events
//! log, each `ROUNDS` times over loopback: the median and the slowest, in milliseconds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use tourney_store::{Store, TournamentRecord};

use crate::bench::harness::{coordinator_process, status_value};

/// How many times each request is timed.
const ROUNDS: usize = 20;

/// A stored, cancelled test: a two-engine match whose names, author and engines vary with
/// `id`.
fn record(id: u64) -> Result<TournamentRecord> {
    let config = format!(
        "name = \"patch-{id} {}\"\ngame = \"loa\"\nformat = \"match\"\npairs = 100\n\
         openings = {{ plies = 4, seed = 1 }}\nlimits = {{ nodes = 1 }}\n\
         [[engine]]\nname = \"base\"\nplayer = \"ab:depth=2\"\n\
         [[engine]]\nname = \"dev-{}\"\nplayer = \"ab:depth=3\"\n",
        ["lmr", "eval", "ordering", "time"][id as usize % 4],
        id % 50
    );
    let value = serde_json::json!({
        "id": id,
        "config_text": config,
        "file": format!("patch-{id}.toml"),
        "state": "cancelled",
        "created_ms": 1_700_000_000_000u64 + id * 60_000,
        "ended_ms": 1_700_000_000_000u64 + id * 60_000 + 30_000,
        "author": format!("user{}", id % 20),
    });
    serde_json::from_value(value).context("a bench record")
}

/// `GET path` over HTTP/1.0 from the coordinator on `port`: the status code and how long
/// the whole answer took.
fn timed_get(port: u16, path: &str) -> Result<(u16, Duration, usize)> {
    let started = Instant::now();
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer)?;
    let took = started.elapsed();
    let head = String::from_utf8_lossy(&answer[..answer.len().min(64)]).into_owned();
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("an HTTP answer")?;
    Ok((code, took, answer.len()))
}

/// The JSON body of `GET path`.
fn http_body(port: u16, path: &str) -> Result<serde_json::Value> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Ok(serde_json::from_str(body)?)
}

/// Runs the benchmark with `tournaments` stored tests.
pub(crate) fn pages(tournaments: u64) -> Result<()> {
    let dir = tempfile::tempdir()?;
    let started = Instant::now();
    {
        let store = Store::open_data_dir(dir.path(), 64)?;
        for id in 1..=tournaments {
            store.put_tournament(&record(id)?)?;
        }
        tokio::runtime::Runtime::new()?.block_on(store.flush())?;
    }
    let stored = started.elapsed();
    let started = Instant::now();
    let (child, port) = coordinator_process(dir.path(), &[])?;
    let serving = started.elapsed();
    let child = Guard(child);
    println!(
        "{tournaments} ended tests stored in {:.1} s; the coordinator serves them {:.2} s after it \
         starts, resident {:.0} MiB",
        stored.as_secs_f64(),
        serving.as_secs_f64(),
        status_value(child.0.id(), "VmRSS:")
    );
    // Every stored test is held, or the figures below would flatter.
    let overview = http_body(port, "/api/v1/overview")?;
    let held = overview["tournaments_total"].as_u64().unwrap_or(0);
    anyhow::ensure!(
        held == tournaments,
        "the coordinator holds {held} of {tournaments} tests"
    );
    println!(
        "{:<58} {:>9} {:>9} {:>9}",
        "request", "median ms", "max ms", "KiB"
    );
    let middle = tournaments / 2;
    let requests = [
        ("the page", "/".to_string()),
        (
            "the overview (newest 200 tests, fleet, workers)",
            "/api/v1/overview".to_string(),
        ),
        (
            "search by name (1 in 4 match), first 50",
            "/api/v1/search?q=lmr".to_string(),
        ),
        (
            "search by author and state, first 50",
            "/api/v1/search?author=user7&state=cancelled".to_string(),
        ),
        (
            "search, a page from the middle",
            format!("/api/v1/search?after={middle}"),
        ),
        (
            "search that matches nothing (scans all)",
            "/api/v1/search?q=no-such-test".to_string(),
        ),
        (
            "one test's detail (report, charts)",
            format!("/api/v1/tournaments/{middle}"),
        ),
        ("the machines", "/api/v1/machines".to_string()),
    ];
    for (label, path) in requests {
        let mut times = Vec::with_capacity(ROUNDS);
        let mut bytes = 0;
        for _ in 0..ROUNDS {
            let (code, took, size) = timed_get(port, &path)?;
            anyhow::ensure!(code == 200, "{path}: HTTP {code}");
            times.push(took);
            bytes = size;
        }
        times.sort();
        println!(
            "{label:<58} {:>9.2} {:>9.2} {:>9.1}",
            times[ROUNDS / 2].as_secs_f64() * 1e3,
            times[ROUNDS - 1].as_secs_f64() * 1e3,
            bytes as f64 / 1024.0
        );
    }
    Ok(())
}

/// A child process killed when the benchmark ends, however it ends.
struct Guard(std::process::Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
