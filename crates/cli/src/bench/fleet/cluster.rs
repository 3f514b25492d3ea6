//! `tourney bench cluster`: distribution overhead, the same pairs played by the referee
//! alone and by a 2-worker cluster over loopback.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use tokio::net::TcpListener;
use tourney_coordinator::api::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_worker::connect;

use crate::bench::harness::own_cpu;

/// A running local coordinator: its URL, the sender that stops it, its task, and itself
/// (for its metrics).
pub(super) type LocalCoordinator = (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    Arc<Coordinator>,
);

/// A coordinator with its store in `dir`, serving on a free loopback port without tokens.
pub(super) async fn local_coordinator(
    dir: &std::path::Path,
    settings: Settings,
) -> Result<LocalCoordinator> {
    let coordinator = Coordinator::open(Store::open(dir)?, settings, &prometheus::Registry::new())?;
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(
        Arc::clone(&coordinator),
        listener,
        ServerOptions::default(),
        async {
            let _ = stopped.await;
        },
    ));
    Ok((url, stop, server, coordinator))
}

/// The overhead benchmark's tournament: fast built-in players, deterministic limits.
fn cluster_tournament(pairs: usize, strong: &str, weak: &str, depth: u32) -> String {
    format!(
        "name = \"overhead\"\ngame = \"loa\"\nformat = \"match\"\npairs = {pairs}\n\
         openings = {{ plies = 4, seed = 1 }}\nlimits = {{ depth = {depth} }}\nadjudication = {{ max_plies = 300 }}\n\
         [[engine]]\nname = \"a\"\nplayer = \"{strong}\"\n[[engine]]\nname = \"b\"\nplayer = \"{weak}\"\n"
    )
}

/// Plays `pairs` pairs with the referee alone on two threads, then the same tournament on a
/// 2-worker cluster over loopback; prints games/s of both and the overhead.
pub(crate) fn cluster(pairs: usize, depth: u32) -> Result<()> {
    use tourney_model::job::GameSettings;
    use tourney_plan::openings::{OpeningSettings, generate_up_to};
    use tourney_rules::Loa;
    use tourney_runner::{BuiltIn, Seat, Setup, pair_seats, play};

    let (strong, weak) = (
        format!("ab:depth={depth}"),
        format!("ab:depth={}", depth - 1),
    );
    let text = cluster_tournament(pairs, &strong, &weak, depth);
    let config = tourney_model::tournament::TournamentConfig::parse(&text, "overhead.toml")?;
    let settings = OpeningSettings {
        plies: 4,
        count: pairs.clamp(1, 100_000),
        seed: 1,
        rules: String::new(),
        balanced: None,
        judge_budget: None,
    };
    let openings = generate_up_to::<Loa>(&settings).map_err(anyhow::Error::msg)?;

    // The referee alone: pairs split over two threads.
    let started = Instant::now();
    let cpu_started = own_cpu().as_secs_f64();
    let played: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..2)
            .map(|t| {
                let (config, openings, strong, weak) = (&config, &openings, &strong, &weak);
                scope.spawn(move || {
                    let mut a = BuiltIn::<Loa>::new(strong).expect("valid spec");
                    let mut b = BuiltIn::<Loa>::new(weak).expect("valid spec");
                    let mut games = 0;
                    for pair in (t..pairs).step_by(2) {
                        let [opening, _] = config.pair_openings(pair as u64);
                        // The settings the cluster's workers get for the same tournament.
                        let mut setup = Setup::<Loa>::from_settings(&GameSettings::of(config))
                            .expect("the tournament's rules parse");
                        setup
                            .set_opening(&openings[opening as usize % openings.len()])
                            .expect("generated openings parse");
                        for game in 0..2 {
                            let (white, black, _) = pair_seats::<Loa>(
                                game,
                                Seat {
                                    name: "a".into(),
                                    player: &mut a as &mut dyn tourney_runner::Contestant<Loa>,
                                },
                                Seat {
                                    name: "b".into(),
                                    player: &mut b as &mut dyn tourney_runner::Contestant<Loa>,
                                },
                            );
                            play(&setup, white, black, &mut |_| {})
                                .expect("built-in players are fit");
                            games += 1;
                        }
                    }
                    games
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("bench thread"))
            .sum()
    });
    let alone_wall = started.elapsed().as_secs_f64();
    let alone = played as f64 / alone_wall;
    let alone_cpu = (own_cpu().as_secs_f64() - cpu_started) / played as f64;

    // The same tournament on a cluster: coordinator and two workers over loopback.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let clustered = runtime.block_on(async move {
        let dir = std::env::temp_dir().join(format!("tourney-overhead-{}", std::process::id()));
        let (url, stop, server, coordinator) = local_coordinator(
            &dir,
            Settings {
                lease_ms: 30_000,
                heartbeat_ms: 5_000,
                ..Settings::default()
            },
        )
        .await?;
        let mut admin = AdminClient::new(connect(&url, None).await?);
        // Timed from after the submission, which generates the openings: the referee alone
        // had them before its clock started too.
        let id = admin
            .submit(pb::SubmitRequest {
                config: text,
                file: "overhead.toml".into(),
                ..Default::default()
            })
            .await?
            .into_inner()
            .id;
        let mut progress = admin.watch(pb::StatusRequest { id }).await?.into_inner();
        let started = Instant::now();
        let cpu_started = own_cpu().as_secs_f64();
        let (stop_workers, workers_stopped) = tokio::sync::watch::channel(false);
        let mut workers = Vec::new();
        let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
        for w in 0..2 {
            let options = tourney_worker::WorkerOptions {
                choices: Default::default(),
                pinned: None,
                update: None,
                coordinator: url.clone(),
                token: None,
                name: format!("bench{w}"),
                concurrency: 1,
                cores: 2,
                tls_ca: None,
                cache_dir: dir.join("cache"),
                cache_bytes: 1 << 30,
                artifact_bytes: 1 << 30,
                build_timeout: std::time::Duration::from_secs(900),
                engine_policy: Default::default(),
                exit_when_idle: None,
            };
            let mut stopped = workers_stopped.clone();
            let metrics = metrics.clone();
            // Each worker on its own one-thread runtime, as `tourney worker` runs.
            workers.push(std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime");
                runtime.block_on(tourney_worker::run(options, metrics, async move {
                    let _ = stopped.wait_for(|s| *s).await;
                }))
            }));
        }

        // The watch stream sends the status at every change: the end is seen when it happens.
        let mut games = 0;
        while let Some(s) = progress.message().await? {
            games = s.games;
            if s.state == "finished" {
                break;
            }
        }
        let rate = games as f64 / started.elapsed().as_secs_f64();
        let cpu = (own_cpu().as_secs_f64() - cpu_started) / games as f64;
        let metrics = coordinator.metrics();
        println!(
            "  coordinator: {} leases, {} group commits",
            metrics.leases_granted.get(),
            metrics.commit_latency.get_sample_count()
        );
        let _ = stop_workers.send(true);
        for w in workers {
            let _ = w.join();
        }
        let _ = stop.send(());
        let _ = server.await;
        let _ = std::fs::remove_dir_all(&dir);
        Ok::<_, anyhow::Error>((rate, cpu))
    })?;
    let (clustered, clustered_cpu) = clustered;
    println!("distribution overhead, {pairs} pairs of {strong} vs {weak} (LOA), 2 cores:");
    let busy = |rate: f64, cpu: f64| rate * cpu / 2.0 * 100.0;
    println!(
        "  referee alone, 2 threads:        {alone:.1} games/s, {:.0} us CPU per game, cores {:.0}% busy",
        alone_cpu * 1e6,
        busy(alone, alone_cpu)
    );
    println!(
        "  2-worker cluster over loopback:  {clustered:.1} games/s, {:.0} us CPU per game, cores {:.0}% busy",
        clustered_cpu * 1e6,
        busy(clustered, clustered_cpu)
    );
    println!("  overhead: {:.1}%", (1.0 - clustered / alone) * 100.0);
    Ok(())
}
