//! `tourney bench coordinator`: a load test of the coordinator over loopback.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;
use tourney_model::{GameRecord, PlayerRecord, Termination};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_proto::v1::worker_client::WorkerClient;
use tourney_worker::{TokenInterceptor, connect};

use crate::bench::harness::{coordinator_process, status_value};

/// The load tournament's one opening: every simulated pair reports the same two games,
/// made once, so that the simulated workers cost the machine little beside the
/// coordinator they load. (Every pair after the first repeats it: the coordinator counts
/// the repeats, which costs it as much as distinct games.)
const OPENING: &str = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";

const TOURNAMENT: &str = r#"
name = "load"
game = "loa"
format = "match"
pairs = 100000000
openings = { file = "one.txt" }
limits = { nodes = 1 }

[[engine]]
name = "a"
player = "random"

[[engine]]
name = "b"
player = "random:seed=2"
"#;

/// The games of a pair of the load tournament from `opening` as a worker would report
/// them (compressed), with `a`'s half-points: in each, the side to move crashes at once
/// (a legal game the coordinator's checks replay in no time). LOA: `a` (the first engine)
/// has Black in game 0 and White in game 1.
fn simulated_pair(opening: &str) -> (Vec<u8>, [u32; 2]) {
    use tourney_model::GameResult;
    let player = |name: &str, spec: &str| PlayerRecord {
        name: name.into(),
        spec: spec.into(),
        ..Default::default()
    };
    let black_to_move = opening.trim_end().ends_with(" b");
    // The side to move loses.
    let result = if black_to_move {
        GameResult::WhiteWins
    } else {
        GameResult::BlackWins
    };
    let game0 = GameRecord {
        game: tourney_rules::GameKind::Loa,
        rules: String::new(),
        start: opening.into(),
        opening_plies: 0,
        time_control: "nodes=1".into(),
        white: player("b", "random:seed=2"),
        black: player("a", "random"),
        moves: Vec::new(),
        result,
        termination: Termination::Crash,
        detail: None,
        started_ms: None,
        meta: Default::default(),
    };
    let game1 = GameRecord {
        white: game0.black.clone(),
        black: game0.white.clone(),
        ..game0.clone()
    };
    // `a` is Black in game 0, White in game 1.
    let half = [
        u32::from(result.half_points(tourney_rules::Color::Black)),
        u32::from(result.half_points(tourney_rules::Color::White)),
    ];
    let json = serde_json::to_vec(&[game0, game1]).expect("records encode");
    (lz4_flex::compress_prepend_size(&json), half)
}

/// Runs `workers` simulated workers for `seconds`: each leases up to 4 pairs and reports
/// them at once (paced to about `rate` results/s in total, or as fast as possible for 0).
/// Prints durable pair results per second, lease latency percentiles, and the memory the
/// coordinator process holds per registered worker.
pub(crate) fn coordinator(workers: usize, seconds: f64, rate: u64, cache_mb: u64) -> Result<()> {
    // Each worker's cycle (one lease of 4 pairs) when paced.
    let cycle = (rate > 0).then(|| Duration::from_secs_f64(workers as f64 * 4.0 / rate as f64));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let dir = std::env::temp_dir().join(format!("tourney-bench-{}", std::process::id()));
        let (registrations, cache) = (workers.max(1).to_string(), cache_mb.to_string());
        let (mut process, port) = coordinator_process(
            &dir,
            &[
                "--lease-seconds",
                "60",
                "--registrations-per-token",
                &registrations,
                "--cache-mb",
                &cache,
            ],
        )?;
        let url = format!("http://127.0.0.1:{port}");
        let mut admin = AdminClient::new(connect(&url, None).await?);
        let id = admin
            .submit(pb::SubmitRequest {
                config: TOURNAMENT.into(),
                file: "load.toml".into(),
                openings: OPENING.into(),
                ..Default::default()
            })
            .await?
            .into_inner()
            .id;
        // Workers share HTTP/2 connections, as many processes behind one host would: one
        // for every 500 workers (at least 8), so that no connection's stream limit is what
        // a large simulated fleet measures.
        let mut channels = Vec::new();
        for _ in 0..(workers / 500).max(8) {
            channels.push(connect(&url, None).await?);
        }
        let (games, half_points) = simulated_pair(OPENING);
        let games = Arc::new(games);
        let running = Arc::new(AtomicBool::new(true));
        let accepted = Arc::new(AtomicU64::new(0));
        let deferred = Arc::new(AtomicU64::new(0));
        let latencies = Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
        // Every worker registers first; the memory is read; then they all go.
        let rss_before = status_value(process.id(), "VmRSS:");
        let registered_all = Arc::new(tokio::sync::Barrier::new(workers + 1));
        let (go, gone) = tokio::sync::watch::channel(false);
        let mut tasks = Vec::new();
        for w in 0..workers {
            let channel = channels[w % channels.len()].clone();
            let (games, running, accepted, latencies, deferred) = (
                Arc::clone(&games),
                Arc::clone(&running),
                Arc::clone(&accepted),
                Arc::clone(&latencies),
                Arc::clone(&deferred),
            );
            let (registered_all, mut gone) = (Arc::clone(&registered_all), gone.clone());
            tasks.push(tokio::spawn(async move {
                // Registrations past the coordinator's budget a second come back when it
                // says, as workers do.
                let mut registrar = WorkerClient::new(channel.clone());
                let registered = loop {
                    let request = pb::RegisterRequest {
                        name: format!("sim{w}"),
                        slots: 4,
                        cores: 4,
                        ..Default::default()
                    };
                    match registrar.register(request).await {
                        Ok(reply) => break reply.into_inner(),
                        Err(e) if e.code() == tonic::Code::ResourceExhausted => {
                            let wait = tourney_proto::retry_pushback(&e)
                                .unwrap_or(Duration::from_millis(100));
                            tokio::time::sleep(wait * (1 + w as u32 % 4)).await;
                        }
                        Err(_) => break pb::RegisterResponse::default(),
                    }
                };
                registered_all.wait().await;
                let _ = gone.wait_for(|go| *go).await;
                let worker_id = registered.worker_id;
                // Every later call carries the registration's secret, as real workers do.
                let Ok(session) = TokenInterceptor::new(None).with_session(&registered.session)
                else {
                    return;
                };
                let mut client = WorkerClient::with_interceptor(channel, session);
                let mut mine = Vec::new();
                // Spread the paced workers over one cycle.
                if let Some(cycle) = cycle {
                    tokio::time::sleep(cycle.mul_f64(w as f64 / workers as f64)).await;
                }
                while running.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    let lease = match client
                        .lease(pb::LeaseRequest {
                            worker_id: worker_id.clone(),
                            max_pairs: 4,
                        })
                        .await
                    {
                        Ok(lease) => lease,
                        // Past the coordinator's budget: back as it says, as workers do.
                        Err(e) if e.code() == tonic::Code::ResourceExhausted => {
                            deferred.fetch_add(1, Ordering::Relaxed);
                            let wait = tourney_proto::retry_pushback(&e)
                                .unwrap_or(Duration::from_millis(100));
                            tokio::time::sleep(wait).await;
                            continue;
                        }
                        Err(_) => break,
                    };
                    mine.push(t.elapsed().as_micros() as u32);
                    let lease = lease.into_inner();
                    let results = lease
                        .jobs
                        .iter()
                        .map(|j| pb::PairResult {
                            tournament: j.tournament,
                            pair: j.pair,
                            half_points: half_points.to_vec(),
                            games_json: String::new(),
                            lease_id: lease.lease_id,
                            games_lz4: games.to_vec(),
                            ticket: j.ticket.clone(),
                        })
                        .collect();
                    let request = pb::ReportRequest {
                        worker_id: worker_id.clone(),
                        results,
                        failures: Vec::new(),
                        checks: Vec::new(),
                    };
                    if let Ok(reply) = client.report(request).await {
                        accepted
                            .fetch_add(u64::from(reply.into_inner().accepted), Ordering::Relaxed);
                    }
                    if let Some(cycle) = cycle {
                        tokio::time::sleep(cycle.saturating_sub(t.elapsed())).await;
                    }
                }
                latencies
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(mine);
            }));
        }
        registered_all.wait().await;
        // Allocations the registrations made settle before the memory is read.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let rss_registered = status_value(process.id(), "VmRSS:");
        let started = Instant::now();
        let _ = go.send(true);
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        running.store(false, Ordering::Relaxed);
        let elapsed = started.elapsed().as_secs_f64();
        let done = accepted.load(Ordering::Relaxed);
        for t in tasks {
            let _ = t.await;
        }
        let stored = admin
            .status(pb::StatusRequest { id })
            .await?
            .into_inner()
            .pairs_done;
        let mut lat = latencies.lock().unwrap_or_else(|e| e.into_inner()).clone();
        lat.sort_unstable();
        let pct = |p: f64| {
            lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
                .copied()
                .unwrap_or(0) as f64
                / 1000.0
        };
        let pace = if rate > 0 { format!("paced to {rate} results/s") } else { "unpaced".to_string() };
        println!("coordinator load test: {workers} simulated workers on loopback ({pace}), {elapsed:.1} s, store cache {cache_mb} MiB");
        println!(
            "  pair results committed durably: {done} = {:.0} results/s ({stored} stored)",
            done as f64 / elapsed
        );
        println!(
            "  lease latency: p50 {:.2} ms, p99 {:.2} ms over {} leases ({} deferred: over the budget of leases a second)",
            pct(0.5),
            pct(0.99),
            lat.len(),
            deferred.load(Ordering::Relaxed)
        );
        let rss_end = status_value(process.id(), "VmRSS:");
        println!(
            "  coordinator process: {rss_before:.0} MiB before the workers, {rss_registered:.0} MiB \
             with {workers} registered ({:.1} KiB a worker), {rss_end:.0} MiB at the end",
            (rss_registered - rss_before).max(0.0) * 1024.0 / workers.max(1) as f64
        );
        let _ = process.kill();
        let _ = process.wait();
        let _ = std::fs::remove_dir_all(&dir);
        if done == 0 {
            anyhow::bail!("no result was accepted: the simulated records do not pass the coordinator's checks");
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_coordinator::{Coordinator, Settings};

    #[tokio::test]
    async fn the_simulated_records_pass_the_coordinators_checks() {
        let coordinator = Coordinator::open(
            tourney_store::Store::temporary().unwrap(),
            Settings::default(),
            &prometheus::Registry::new(),
        )
        .unwrap();
        let id = coordinator
            .submit(TOURNAMENT, "load.toml", OPENING, Default::default())
            .await
            .unwrap();
        let (worker, _) = coordinator.register("sim", "test", 1, "sim").unwrap();
        let (lease, jobs) = coordinator.lease(&worker, 1).unwrap();
        let (lz4, half_points) = simulated_pair(tourney_model::opening::position(&jobs[0].opening));
        let json = lz4_flex::decompress_size_prepended(&lz4).unwrap();
        let reported = tourney_coordinator::Reported {
            tournament: id,
            pair: jobs[0].pair,
            lease,
            half_points,
            games_json: String::from_utf8(json).unwrap(),
            ticket: jobs[0].ticket.clone(),
        };
        if let Err(refusal) = coordinator.check_reported(&worker, reported) {
            panic!("{refusal}");
        }
    }
}
