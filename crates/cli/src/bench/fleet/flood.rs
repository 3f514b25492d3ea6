//! `tourney bench flood`: what a flood of big reports, of dashboard streams and of logins
//! costs a coordinator process: its peak resident memory, its threads, and how many
//! password guesses it checks.

use anyhow::{Context, Result};
use tourney_proto::v1 as pb;
use tourney_proto::v1::worker_client::WorkerClient;
use tourney_worker::{TokenInterceptor, connect};

use crate::bench::harness::coordinator_process;
use crate::bench::harness::status_value;

/// One registration of its own sends a report of `mb` MiB of records (pair results of
/// at most 8 MiB each, spaces compressed to a few KiB): its answer's status code.
async fn big_report(url: &str, name: usize, mb: usize) -> Result<tonic::Code> {
    let channel = connect(url, None).await?;
    let token = TokenInterceptor::new(None);
    let registered = WorkerClient::with_interceptor(channel.clone(), token.clone())
        .register(pb::RegisterRequest {
            name: format!("flood-{name}"),
            slots: 1,
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut client =
        WorkerClient::with_interceptor(channel, token.with_session(&registered.session)?);
    let mut left = mb << 20;
    let mut results = Vec::new();
    while left > 0 {
        let size = left.min(tourney_proto::MAX_GAMES_JSON);
        results.push(pb::PairResult {
            tournament: 1,
            pair: results.len() as u64,
            half_points: vec![1, 1],
            games_lz4: lz4_flex::compress_prepend_size(&vec![b' '; size]),
            ..Default::default()
        });
        left -= size;
    }
    let answer = client
        .report(pb::ReportRequest {
            worker_id: registered.worker_id,
            results,
            failures: Vec::new(),
            checks: Vec::new(),
        })
        .await;
    Ok(answer.map_or_else(|e| e.code(), |_| tonic::Code::Ok))
}

/// Opens `/api/v1/events` on `port`; the response's status code (0: no answer).
async fn open_stream(port: u16) -> (Option<tokio::net::TcpStream>, u16) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return (None, 0);
    };
    if stream
        .write_all(b"GET /api/v1/events HTTP/1.1\r\nHost: bench\r\n\r\n")
        .await
        .is_err()
    {
        return (None, 0);
    }
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(&mut stream);
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        reader.read_line(&mut line),
    )
    .await;
    let code = line.split_whitespace().nth(1).and_then(|c| c.parse().ok());
    (Some(stream), code.unwrap_or(0))
}

/// Logins at once from anonymous clients, each a name of its own (goal: under 300 MiB).
const LOGINS: usize = 400;
/// Wrong guesses at one user at once (goal: exactly the throttle's 5 checked).
const GUESSES: usize = 128;

/// One `POST /api/v1/login` to `port` as `name`: the answer's status code (0: none).
async fn login(port: u16, name: &str, password: &str) -> u16 {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else {
        return 0;
    };
    let body = serde_json::json!({ "name": name, "password": password }).to_string();
    let request = format!(
        "POST /api/v1/login HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(request.as_bytes()).await.is_err() {
        return 0;
    }
    let mut line = String::new();
    let mut reader = tokio::io::BufReader::new(&mut stream);
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        reader.read_line(&mut line),
    )
    .await;
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// `n` logins at once, the `i`th as `name(i)`: their status codes.
async fn logins_at_once(port: u16, n: usize, name: impl Fn(usize) -> String) -> Vec<u16> {
    let sent: Vec<_> = (0..n)
        .map(|i| {
            let name = name(i);
            tokio::spawn(async move { login(port, &name, "a wrong password").await })
        })
        .collect();
    let mut codes = Vec::with_capacity(n);
    for s in sent {
        codes.push(s.await.unwrap_or(0));
    }
    codes
}

/// Logins: [`GUESSES`] wrong passwords for one user at once (how many the coordinator
/// checks), then [`LOGINS`] logins of unknown names at once (its memory).
fn logins(runtime: &tokio::runtime::Runtime, dir: &std::path::Path) -> Result<()> {
    let (mut child, port) = coordinator_process(&dir.join("logins"), &[])?;
    let pid = child.id();
    let url = format!("http://127.0.0.1:{port}");
    let guessed = runtime.block_on(async {
        let mut admin = pb::admin_client::AdminClient::new(connect(&url, None).await?);
        admin
            .add_user(pb::AddUserRequest {
                name: "ann".into(),
                role: "user".into(),
                password: "ann-long-password".into(),
            })
            .await?;
        anyhow::Ok(logins_at_once(port, GUESSES, |_| "ann".to_string()).await)
    })?;
    let count = |codes: &[u16], code: u16| codes.iter().filter(|&&c| c == code).count();
    println!(
        "{GUESSES} wrong passwords for one user at once: {} checked (401), {} held back \
         (429), {} other",
        count(&guessed, 401),
        count(&guessed, 429),
        GUESSES - count(&guessed, 401) - count(&guessed, 429)
    );
    let before = status_value(pid, "VmRSS:");
    let codes = runtime.block_on(logins_at_once(port, LOGINS, |i| format!("guest-{i}")));
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (peak, after) = (status_value(pid, "VmHWM:"), status_value(pid, "VmRSS:"));
    println!(
        "{LOGINS} logins of unknown names at once: resident {before:.0} MiB before, peak \
         {peak:.0} MiB, {after:.0} MiB a second after; {} refused as wrong (401), {} told \
         to wait (429/503)",
        count(&codes, 401),
        count(&codes, 429) + count(&codes, 503)
    );
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

/// `tourney bench flood`: `reports` reports of `report_mb` MiB at once, then `streams`
/// dashboard event streams, each against a fresh coordinator process; its resident memory
/// before, at its peak and after, and its threads.
pub(crate) fn flood(reports: usize, report_mb: usize, streams: usize) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let dir = std::env::temp_dir().join(format!("tourney-bench-flood-{}", std::process::id()));
    let measured =
        measure(&runtime, &dir, reports, report_mb, streams).and_then(|()| logins(&runtime, &dir));
    let _ = std::fs::remove_dir_all(&dir);
    measured
}

fn measure(
    runtime: &tokio::runtime::Runtime,
    dir: &std::path::Path,
    reports: usize,
    report_mb: usize,
    streams: usize,
) -> Result<()> {
    // Reports.
    let (mut child, port) = coordinator_process(&dir.join("reports"), &[])?;
    let pid = child.id();
    let before = status_value(pid, "VmRSS:");
    let url = format!("http://127.0.0.1:{port}");
    let codes = runtime.block_on(async {
        let sent: Vec<_> = (0..reports)
            .map(|i| {
                let url = url.clone();
                tokio::spawn(async move { big_report(&url, i, report_mb).await })
            })
            .collect();
        let mut codes = Vec::new();
        for s in sent {
            codes.push(s.await.context("a report task")??);
        }
        anyhow::Ok(codes)
    })?;
    std::thread::sleep(std::time::Duration::from_secs(1));
    let (peak, after) = (status_value(pid, "VmHWM:"), status_value(pid, "VmRSS:"));
    let deferred = codes
        .iter()
        .filter(|c| **c == tonic::Code::ResourceExhausted)
        .count();
    println!(
        "{reports} concurrent reports of {report_mb} MiB of records: resident {before:.0} MiB \
         before, peak {peak:.0} MiB, {after:.0} MiB a second after; {} read, {deferred} \
         deferred (busy)",
        reports - deferred
    );
    let _ = child.kill();
    let _ = child.wait();
    // Dashboard streams.
    let (mut child, port) = coordinator_process(&dir.join("streams"), &[])?;
    let pid = child.id();
    let before = status_value(pid, "VmRSS:");
    let (open, refused, threads, peak) = runtime.block_on(async {
        let mut held = Vec::new();
        let (mut open, mut refused) = (0, 0);
        for _ in 0..streams {
            let (stream, code) = open_stream(port).await;
            match code {
                200 => open += 1,
                503 => refused += 1,
                _ => {}
            }
            held.extend(stream);
        }
        tokio::time::sleep(std::time::Duration::from_secs(3)).await;
        let (threads, peak) = (status_value(pid, "Threads:"), status_value(pid, "VmHWM:"));
        drop(held);
        (open, refused, threads, peak)
    });
    println!(
        "{streams} dashboard event streams asked for: {open} served, {refused} refused (503); \
         resident {before:.0} MiB before, peak {peak:.0} MiB; {threads:.0} threads with them \
         open"
    );
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}
