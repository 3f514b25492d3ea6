//! The tournament service in one process over loopback: a real coordinator server, a real
//! worker and the admin API, as `tourney run` uses them.

use std::time::Duration;

use tokio::net::TcpListener;
use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_tests::http::{free_port, get as http_get};
use tourney_tests::process::Reaped;
use tourney_tests::tournaments::MatchFile;
use tourney_tests::wait::{check, skip_unless_required, until_async};
use tourney_worker::{TokenInterceptor, WorkerOptions, connect};

/// The match most tests play: alpha-beta against random moves, six pairs.
fn match_file() -> String {
    MatchFile {
        name: "service-test",
        pairs: 6,
        openings: "{ plies = 4, seed = 3 }",
        limits: "{ nodes = 300 }",
        adjudication: Some("{ max_plies = 200 }"),
        engines: [("ab", "ab"), ("random", "random")],
        ..Default::default()
    }
    .toml()
}

struct Running {
    addr: String,
    stop: tokio::sync::oneshot::Sender<()>,
    served: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
    _dir: tempfile::TempDir,
}

async fn start(store_dir: Option<tempfile::TempDir>) -> Running {
    start_with(store_dir, |s| s).await
}

/// [`start`] with its settings changed by `change`.
async fn start_with(
    store_dir: Option<tempfile::TempDir>,
    change: impl FnOnce(Settings) -> Settings,
) -> Running {
    let dir = store_dir.unwrap_or_else(|| tempfile::tempdir().unwrap());
    // A stopped coordinator's tasks let go of the store a moment after it stops serving.
    let store = until_async(5, "the store to be let go of", || async {
        Store::open(dir.path()).map_err(|e| e.to_string())
    })
    .await;
    let coordinator = Coordinator::open(
        store,
        change(Settings {
            lease_ms: 5_000,
            heartbeat_ms: 500,
            ..Settings::default()
        }),
        &prometheus::Registry::new(),
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let options = ServerOptions {
        worker_tokens: Some(Tokens::new(vec![("box1".into(), "w-secret".into())])),
        admin_tokens: Some(Tokens::new(vec![("default".into(), "a-secret".into())])),
        tls: None,
        insecure: false,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(serve(coordinator, listener, options, async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        stop,
        served,
        _dir: dir,
    }
}

async fn admin(
    addr: &str,
    token: &str,
) -> AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
> {
    AdminClient::with_interceptor(
        connect(addr, None).await.unwrap(),
        TokenInterceptor::new(Some(token)),
    )
}

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
>;

/// Submits the [`match_file`] tournament; its id.
async fn submit_match(admin: &mut Admin) -> u64 {
    submit(admin, match_file(), "match.toml").await
}

/// Submits a tournament file with no artifacts; its id.
async fn submit(admin: &mut Admin, config: String, file: &str) -> u64 {
    admin
        .submit(pb::SubmitRequest {
            config,
            file: file.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .id
}

/// A worker with two slots, stopped through the returned sender.
fn spawn_worker(
    addr: &str,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<tourney_worker::Ended, tourney_worker::WorkerError>>,
) {
    spawn_worker_with(
        addr,
        tourney_worker::WorkerMetrics::new(&prometheus::Registry::new()),
    )
}

/// A worker with two slots recording into `metrics`.
/// Our own test engines may run as root too (CI containers).
fn own_engines() -> tourney_runner::confine::EnginePolicy {
    tourney_runner::confine::EnginePolicy {
        allow_root: true,
        ..Default::default()
    }
}

fn spawn_worker_with(
    addr: &str,
    metrics: tourney_worker::WorkerMetrics,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<tourney_worker::Ended, tourney_worker::WorkerError>>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = WorkerOptions {
        choices: Default::default(),
        pinned: None,
        update: None,
        coordinator: addr.to_string(),
        token: Some("w-secret".into()),
        name: "test".into(),
        concurrency: 2,
        cores: 4,
        tls_ca: None,
        cache_dir: std::env::temp_dir().join("tourney-test-cache"),
        cache_bytes: 1 << 30,
        artifact_bytes: 1 << 30,
        build_timeout: std::time::Duration::from_secs(600),
        engine_policy: own_engines(),
        exit_when_idle: None,
    };
    let handle = tokio::spawn(tourney_worker::run(options, metrics, async {
        let _ = stopped.await;
    }));
    (stop, handle)
}

/// The status once the tournament has finished (or after a minute).
async fn wait_until_finished(admin: &mut Admin, id: u64) -> pb::TournamentStatus {
    wait_for_state(admin, id, "finished").await
}

/// The status once the tournament is in `state` (waited for up to a minute).
async fn wait_for_state(admin: &mut Admin, id: u64, state: &str) -> pb::TournamentStatus {
    until_async(60, &format!("tournament {id} to be {state}"), || {
        let mut admin = admin.clone();
        async move {
            let status = admin
                .status(pb::StatusRequest { id })
                .await
                .unwrap()
                .into_inner();
            match status.state == state {
                true => Ok(status),
                false => Err(format!(
                    "{} after {} pairs",
                    status.state, status.pairs_done
                )),
            }
        }
    })
    .await
}

/// The value of the series `series` in a Prometheus text page (0 when absent).
fn series(page: &str, series: &str) -> f64 {
    (page.lines())
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_coordinator_defers_leases_and_workers_back_off_keeping_their_session() {
    // Two leases a second: a worker that leases ahead is soon told to come back later.
    let server = start_with(None, |s| Settings {
        leases_per_second: 2,
        ..s
    })
    .await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin).await;
    let registry = prometheus::Registry::new();
    let (stop_worker, worker) =
        spawn_worker_with(&server.addr, tourney_worker::WorkerMetrics::new(&registry));
    let status = wait_until_finished(&mut admin, id).await;
    assert_eq!((status.pairs_done, status.games), (6, 12));
    let host = server.addr.trim_start_matches("http://").to_string();
    until_async(10, "a lease to be deferred", || {
        let host = host.clone();
        async move {
            let (_, page) = tokio::task::spawn_blocking(move || http_get(&host, "/metrics"))
                .await
                .unwrap()
                .map_err(|e| e.to_string())?;
            let deferred = series(&page, "tourney_calls_deferred_total{call=\"lease\"}");
            check(deferred > 0.0, || format!("{deferred} deferred"))
        }
    })
    .await;
    let text = prometheus::TextEncoder::new()
        .encode_to_string(&registry.gather())
        .unwrap();
    assert_eq!(
        series(&text, "tourney_worker_reconnects_total"),
        0.0,
        "a deferred lease keeps the session: {text}"
    );
    stop_worker.send(()).unwrap();
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
}

#[tokio::test]
async fn registrations_past_the_budget_are_told_when_to_come_back() {
    let server = start_with(None, |s| Settings {
        registrations_per_second: 1,
        ..s
    })
    .await;
    let channel = connect(&server.addr, None).await.unwrap();
    let mut client = tourney_proto::v1::worker_client::WorkerClient::with_interceptor(
        channel,
        TokenInterceptor::new(Some("w-secret")),
    );
    let request = || pb::RegisterRequest {
        name: "herd".into(),
        slots: 1,
        ..Default::default()
    };
    let first = client.register(request()).await.unwrap().into_inner();
    assert!(
        first.heartbeat_ms >= 500 && first.report_ms >= 200,
        "{first:?}"
    );
    let refused = client.register(request()).await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
    let retry: u64 = (refused.metadata().get("grpc-retry-pushback-ms"))
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .expect("a retry delay");
    assert!((1..=1000).contains(&retry), "{retry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tournament_is_played_by_a_worker_and_reported() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin).await;
    let (stop_worker, worker) = spawn_worker(&server.addr);
    let status = wait_until_finished(&mut admin, id).await;
    assert_eq!(status.state, "finished");
    assert_eq!(
        (status.pairs_done, status.pairs_planned, status.games),
        (6, Some(6), 12)
    );
    // Every pair exactly twice (both colours), records with pair index and engine names.
    let mut table = tourney_stats::GameTable::new();
    // Players numbered as in the tournament file, as the coordinator numbers them.
    table.player("ab");
    table.player("random");
    let mut per_pair = std::collections::BTreeMap::new();
    for v in exported(&mut admin, id).await {
        *per_pair.entry(v["pair"].as_u64().unwrap()).or_insert(0) += 1;
        let (w, b) = (v["white"].as_str().unwrap(), v["black"].as_str().unwrap());
        assert!((w, b) == ("ab", "random") || (w, b) == ("random", "ab"));
        // Which worker played it (the registered name and its session number).
        assert!(v["worker"].as_str().unwrap().starts_with("test#"), "{v}");
        // The reproducibility bundle: opening index, pair, game, tourney version.
        let meta = &v["meta"];
        let opening: u64 = meta["opening"].as_u64().unwrap();
        assert!(opening < 6, "{v}");
        assert_eq!(meta["pair"], v["pair"], "{v}");
        assert!(matches!(meta["game"].as_u64(), Some(0 | 1)), "{v}");
        assert_eq!(meta["tourney_version"], env!("CARGO_PKG_VERSION"));
        table.add(
            w,
            b,
            tourney_stats::GameResult::parse(v["result"].as_str().unwrap()).unwrap(),
        );
    }
    assert_eq!(
        per_pair.keys().copied().collect::<Vec<_>>(),
        (0..6).collect::<Vec<_>>()
    );
    assert!(per_pair.values().all(|&n| n == 2));
    // The standings are the ratings of the exported games.
    let ratings = tourney_stats::BayesElo::default().rate(&table);
    for (standing, rating) in status.standings.iter().zip(&ratings.players) {
        assert_eq!(standing.name, rating.name);
        assert!((standing.elo - rating.elo).abs() < 1e-6);
        assert_eq!(standing.games, rating.games);
    }
    // The report the coordinator renders agrees: standings, cross-table, terminations.
    let report = |format: &str| pb::GetReportRequest {
        id,
        format: format.into(),
        tournament_link: String::new(),
    };
    let json = admin.get_report(report("json")).await.unwrap().into_inner();
    let json: serde_json::Value = serde_json::from_str(&json.content).unwrap();
    assert_eq!(
        json["title"],
        format!("service-test (#{id}, loa, match, finished)")
    );
    let players = json["ratings"]["players"].as_array().unwrap();
    for (player, rating) in players.iter().zip(&ratings.players) {
        assert_eq!(player["name"], rating.name.as_str());
        assert!((player["elo"].as_f64().unwrap() - rating.elo).abs() < 1e-6);
    }
    let cells = json["crosstable"]["cells"].as_array().unwrap();
    let games_in_cells: u64 = cells
        .iter()
        .flat_map(|row| row.as_array().unwrap())
        .flat_map(|cell| cell.as_array().unwrap())
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(
        games_in_cells,
        2 * 12,
        "each game counted once from each side"
    );
    let terminations: u64 = json["terminations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[1].as_u64().unwrap())
        .sum();
    assert_eq!(terminations, 12);
    let text = admin.get_report(report("text")).await.unwrap().into_inner();
    assert!(text.content.contains("ab") && text.content.contains("Terminations"));
    let html = admin.get_report(report("html")).await.unwrap().into_inner();
    assert!(html.content.starts_with("<!DOCTYPE html>"));
    let wrong = admin.get_report(report("pdf")).await.unwrap_err();
    assert_eq!(wrong.code(), tonic::Code::InvalidArgument);
    assert!(wrong.message().contains("'pdf'"), "{}", wrong.message());
    // Links to other tournaments: an address with `{id}` in it, of bounded length.
    for template in [
        "report.html".to_string(),
        format!("{}{{id}}", "x".repeat(2000)),
    ] {
        let refused = admin
            .get_report(pb::GetReportRequest {
                tournament_link: template,
                ..report("html")
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        assert!(refused.message().contains("tournament_link"), "{refused:?}");
    }
    let missing = admin
        .get_report(pb::GetReportRequest {
            id: id + 100,
            format: "text".into(),
            tournament_link: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

/// Every game a tournament's export gives, parsed.
async fn exported(admin: &mut Admin, id: u64) -> Vec<serde_json::Value> {
    let mut stream = admin
        .export(pb::ExportRequest {
            id,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut games = Vec::new();
    while let Some(chunk) = stream.message().await.unwrap() {
        for line in chunk.lines {
            games.push(serde_json::from_str(&line).unwrap());
        }
    }
    games
}

#[tokio::test]
async fn wrong_or_missing_tokens_are_refused() {
    let server = start(None).await;
    let mut wrong = admin(&server.addr, "nope").await;
    let err = wrong.list(pb::ListRequest::default()).await.unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    // The worker token is not an admin token.
    let mut worker_token = admin(&server.addr, "w-secret").await;
    assert_eq!(
        worker_token
            .list(pb::ListRequest::default())
            .await
            .unwrap_err()
            .code(),
        tonic::Code::Unauthenticated
    );
    let channel = connect(&server.addr, None).await.unwrap();
    let mut worker = tourney_proto::v1::worker_client::WorkerClient::new(channel);
    let err = worker
        .register(pb::RegisterRequest::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    let _ = server.stop.send(());
}

#[tokio::test]
async fn malformed_tournament_files_are_rejected_with_the_key_named() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let bad = match_file().replace("player = \"random\"", "player = \"random\"\nspeed = 3");
    let err = admin
        .submit(pb::SubmitRequest {
            config: bad,
            file: "bad.toml".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message().starts_with("bad.toml:14:") && err.message().contains("speed"),
        "{}",
        err.message()
    );
    let bad = match_file().replace("player = \"ab\"", "player = \"ab:dept=2\"");
    let err = admin
        .submit(pb::SubmitRequest {
            config: bad,
            file: "bad.toml".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert!(
        err.message().contains("engine[0].player") && err.message().contains("unknown key 'dept'"),
        "{}",
        err.message()
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outside_engine_process_is_kept_across_pairs() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let good = format!("{} good 1000", env!("CARGO_BIN_EXE_misbehave"));
    let config = match_file().replace(
        "name = \"ab\"\nplayer = \"ab\"",
        &format!("name = \"good\"\ncommand = \"{good}\""),
    );
    let id = submit(&mut admin, config, "kept.toml").await;
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let (stop_worker, worker) = spawn_worker_with(&server.addr, metrics.clone());
    let status = wait_until_finished(&mut admin, id).await;
    assert_eq!((status.state.as_str(), status.games), ("finished", 12));
    // Six pairs on two slots: one process a slot at most, told `newgame` between games,
    // where a process a pair took six.
    let starts = metrics.engine_starts.get();
    assert!(
        (1..=2).contains(&starts),
        "{starts} engine processes for 12 games"
    );
    assert_eq!(metrics.engine_restarts.get(), 0);
    for v in exported(&mut admin, id).await {
        assert!(!v["termination"].as_str().unwrap().contains("crash"), "{v}");
    }
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    // A worker stops once every result is acknowledged, and the gauge says so.
    assert_eq!(metrics.results_unreported.get(), 0);
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outside_engine_that_crashes_loses_its_games_and_the_tournament_goes_on() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let crasher = format!("{} crash 3", env!("CARGO_BIN_EXE_misbehave"));
    let config = match_file().replace("pairs = 6", "pairs = 3").replace(
        "name = \"ab\"\nplayer = \"ab\"",
        &format!("name = \"crasher\"\ncommand = \"{crasher}\""),
    );
    // The engine's program is uploaded as an artifact: the worker fetches and caches it.
    // It is bigger than a chunk, so both ways it goes in several: a release build of it
    // is smaller, so it is padded with zeros after its end (which the loader ignores).
    let mut content = std::fs::read(env!("CARGO_BIN_EXE_misbehave")).unwrap();
    content.resize(content.len().max(tourney_proto::ARTIFACT_CHUNK + 4096), 0);
    let chunks: Vec<pb::UploadArtifactRequest> = content
        .chunks(tourney_proto::ARTIFACT_CHUNK)
        .map(|c| pb::UploadArtifactRequest {
            content: c.to_vec(),
        })
        .collect();
    let sha = admin
        .upload_artifact(tokio_stream::iter(chunks))
        .await
        .unwrap()
        .into_inner()
        .sha256;
    let id = admin
        .submit(pb::SubmitRequest {
            config,
            file: "crash.toml".into(),
            artifacts: [("crasher".to_string(), sha.clone())].into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .id;
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let (stop_worker, worker) = spawn_worker_with(&server.addr, metrics.clone());
    let status = wait_until_finished(&mut admin, id).await;
    assert_eq!((status.state.as_str(), status.games), ("finished", 6));
    let (mut crashes, mut first_game_crashes) = (0, 0);
    for v in exported(&mut admin, id).await {
        // Every record names the artifact the crasher ran (first or second of its pair).
        let artifacts = [&v["meta"]["artifact_first"], &v["meta"]["artifact_second"]];
        assert!(
            artifacts.contains(&&serde_json::Value::from(sha.clone())),
            "{v}"
        );
        if v["termination"] == "crash" {
            crashes += 1;
            // A crash in a pair's first game makes the worker start the engine again.
            if v["meta"]["game"] == 0 {
                first_game_crashes += 1;
            }
            // The crasher lost; its stderr tail is in the record.
            let loser = if v["result"] == "1-0" {
                "black"
            } else {
                "white"
            };
            assert_eq!(v[loser], "crasher", "{v}");
            assert!(v["meta"].is_object());
        }
    }
    assert!(
        crashes >= 1,
        "the crasher crashed at its fourth move in some game"
    );
    let crasher_row = status
        .standings
        .iter()
        .find(|s| s.name == "crasher")
        .unwrap();
    assert!(crasher_row.score < 0.5);
    assert!(first_game_crashes >= 1);
    // Every game after a crash starts the engine afresh; a process is kept otherwise (two
    // slots: at most two engines of the kind were first started).
    let (starts, restarts) = (metrics.engine_starts.get(), metrics.engine_restarts.get());
    assert!(
        restarts >= first_game_crashes && restarts <= crashes,
        "{restarts} of {crashes}"
    );
    assert!(
        (1..=2).contains(&(starts - restarts)),
        "{starts} starts, {restarts} restarts"
    );
    assert_eq!(metrics.games.with_label_values(&["loa"]).get(), 6);
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_that_cannot_play_pauses_the_tournament_until_resumed() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let refuser = format!("{} unsupported", env!("CARGO_BIN_EXE_misbehave"));
    let config = match_file().replace(
        "name = \"ab\"\nplayer = \"ab\"",
        &format!("name = \"refuser\"\ncommand = \"{refuser}\""),
    );
    let id = submit(&mut admin, config, "refuser.toml").await;
    let (stop_worker, worker) = spawn_worker(&server.addr);
    // No game is scored: the tournament pauses and says why.
    let paused = wait_for_state(&mut admin, id, "paused").await;
    assert_eq!(paused.state, "paused");
    assert_eq!((paused.games, paused.pairs_done), (0, 0));
    assert!(
        paused.paused_reason.contains("refuser") && paused.paused_reason.contains("unsupported"),
        "{}",
        paused.paused_reason
    );
    let (_, metrics) = http_get(server.addr.trim_start_matches("http://"), "/metrics").unwrap();
    assert!(
        metrics.contains("tourney_engine_failures_total{reason=\"unfit\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!(
            "tourney_tournament_state{{state=\"paused\",tournament=\"{id}\"}} 1"
        )),
        "{metrics}"
    );
    // Resumed, the engine still cannot play: it pauses again.
    let resumed = admin.resume(pb::ResumeRequest { id }).await.unwrap();
    assert!(resumed.into_inner().resumed);
    let again = wait_for_state(&mut admin, id, "paused").await;
    assert_eq!((again.state.as_str(), again.games), ("paused", 0));
    let missing = admin
        .resume(pb::ResumeRequest { id: id + 1 })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound, "{missing:?}");
    // A paused tournament can be cancelled.
    assert!(
        admin
            .cancel(pb::CancelRequest { id })
            .await
            .unwrap()
            .into_inner()
            .cancelled
    );
    let cancelled = wait_for_state(&mut admin, id, "cancelled").await;
    assert!(cancelled.paused_reason.is_empty());
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_is_served_and_its_event_stream_ends_when_the_server_stops() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = start(None).await;
    let host = server.addr.trim_start_matches("http://").to_string();
    let (status, page) = http_get(&host, "/").unwrap();
    assert!(
        status.contains("200") && page.contains("/dashboard/app.js"),
        "{status}"
    );
    let (status, overview) = http_get(&host, "/api/v1/overview").unwrap();
    assert!(status.contains("200"), "{status}");
    let overview: serde_json::Value = serde_json::from_str(&overview).unwrap();
    assert_eq!(overview["tournaments"], serde_json::json!([]));
    let (status, _) = http_get(&host, "/api/v1/tournaments/9").unwrap();
    assert!(status.contains("404"), "{status}");

    // Two open event streams, as two browser tabs hold them: each gets the overview now,
    // and both get the shared update when a tournament is submitted.
    async fn open_stream(host: &str) -> tokio::net::TcpStream {
        let mut events = tokio::net::TcpStream::connect(host).await.unwrap();
        events
            .write_all(
                b"GET /api/v1/events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
            )
            .await
            .unwrap();
        events
    }
    async fn read_until(events: &mut tokio::net::TcpStream, seen: &mut Vec<u8>, what: &str) {
        let mut buf = [0u8; 4096];
        let until = tokio::time::Instant::now() + Duration::from_secs(20);
        while !String::from_utf8_lossy(seen).contains(what) {
            let n = tokio::time::timeout_at(until, events.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no {what} on the stream"))
                .unwrap();
            assert!(n > 0, "the stream ended early");
            seen.extend_from_slice(&buf[..n]);
        }
    }
    let mut tabs = [open_stream(&host).await, open_stream(&host).await];
    let mut seen = [Vec::new(), Vec::new()];
    for (tab, seen) in tabs.iter_mut().zip(&mut seen) {
        read_until(tab, seen, "event: overview").await;
    }
    let mut admin = admin(&server.addr, "a-secret").await;
    submit_match(&mut admin).await;
    for (tab, seen) in tabs.iter_mut().zip(&mut seen) {
        read_until(tab, seen, "\"name\":\"service-test\"").await;
    }
    // Stopping the server ends the stream instead of waiting for the tab to close.
    let _ = server.stop.send(());
    let stopped = tokio::time::timeout(Duration::from_secs(10), server.served).await;
    assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
}

#[tokio::test]
async fn tls_connections_work_with_the_coordinators_certificate() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert_pem, key_pem) = (cert.cert.pem(), cert.signing_key.serialize_pem());
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::open(
        Store::open(dir.path()).unwrap(),
        Settings::default(),
        &prometheus::Registry::new(),
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let options = ServerOptions {
        worker_tokens: None,
        admin_tokens: Some(Tokens::new(vec![("default".into(), "a-secret".into())])),
        tls: Some((cert_pem.clone().into_bytes(), key_pem.into_bytes())),
        insecure: false,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(coordinator, listener, options, async {
        let _ = stopped.await;
    }));
    let url = format!("https://localhost:{port}");
    let channel = connect(&url, Some(cert_pem.as_bytes())).await.unwrap();
    let mut admin = AdminClient::with_interceptor(channel, TokenInterceptor::new(Some("a-secret")));
    assert!(
        admin
            .list(pb::ListRequest::default())
            .await
            .unwrap()
            .into_inner()
            .tournaments
            .is_empty()
    );
    // Without the certificate the connection is refused.
    let refused = match connect(&url, None).await {
        Err(_) => true,
        Ok(channel) => AdminClient::new(channel)
            .list(pb::ListRequest::default())
            .await
            .is_err(),
    };
    assert!(refused, "an untrusted certificate must not be accepted");
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_tournament_stops_its_workers() {
    let server = start(None).await;
    let mut control = admin(&server.addr, "a-secret").await;
    let config = match_file()
        .replace("pairs = 6", "pairs = 100000")
        .replace("limits = { nodes = 300 }", "limits = { movetime = 5 }");
    let id = submit(&mut control, config, "long.toml").await;
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let (stop_worker, worker) = spawn_worker_with(&server.addr, metrics.clone());
    let status = |control: &Admin| {
        let mut control = control.clone();
        async move {
            control
                .status(pb::StatusRequest { id })
                .await
                .unwrap()
                .into_inner()
        }
    };
    until_async(60, "two pairs played", || async {
        let s = status(&control).await;
        check(s.pairs_done >= 2, || format!("{} pairs", s.pairs_done))
    })
    .await;
    assert!(
        control
            .cancel(pb::CancelRequest { id })
            .await
            .unwrap()
            .into_inner()
            .cancelled
    );
    // Within a heartbeat the worker drops the cancelled work: nothing in play or queued
    // on it, nothing leased out by the coordinator, and the pairs finished before the
    // cancellation reported; then no pair can be done any more.
    let settled = until_async(30, "the cancelled work to be dropped", || async {
        // The worker's gauges first, in play before unreported, then the coordinator: a
        // report still in flight when the gauges are read keeps `unreported` above 0.
        let (playing, queued) = (metrics.pairs_in_play.get(), metrics.pairs_queued.get());
        let unreported = metrics.results_unreported.get();
        let s = status(&control).await;
        match s.pairs_leased == 0 && playing == 0 && queued == 0 && unreported == 0 {
            true => Ok(s),
            false => Err(format!(
                "{} leased, {playing} in play, {queued} queued, {unreported} unreported",
                s.pairs_leased
            )),
        }
    })
    .await;
    assert_eq!(settled.state, "cancelled");
    let after = status(&control).await;
    assert_eq!(
        (after.pairs_done, after.pairs_leased),
        (settled.pairs_done, 0),
        "no more pairs after the cancellation"
    );
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

/// The value of the one series an instant PromQL query returns, if it returns one.
fn prometheus_value(prometheus: &str, query: &str) -> Option<f64> {
    let encoded: String = query
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let (_, body) = http_get(prometheus, &format!("/api/v1/query?query={encoded}")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&body).ok()?;
    json["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_on_the_grpc_port_and_scraped_by_prometheus() {
    let server = start(None).await;
    let target = server.addr.trim_start_matches("http://").to_string();
    let (status, text) = http_get(&target, "/metrics").unwrap();
    assert!(status.contains("200"), "{status}");
    assert!(text.contains("tourney_workers_connected 0"), "{text}");
    assert!(text.contains("tourney_pair_results_committed_total 0"));

    // A refused call is counted.
    let mut wrong = admin(&server.addr, "nope").await;
    assert!(wrong.list(pb::ListRequest::default()).await.is_err());
    let (_, text) = http_get(&target, "/metrics").unwrap();
    assert!(
        text.contains("tourney_auth_failures_total{service=\"admin\"} 1"),
        "{text}"
    );

    let Some(prometheus_bin) = ["/usr/bin/prometheus", "/usr/local/bin/prometheus"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        skip_unless_required(
            "TOURNEY_REQUIRE_PROMETHEUS",
            "the Prometheus part: no prometheus binary (apt install prometheus)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: tourney\n    \
             static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let web = format!("127.0.0.1:{}", free_port());
    let prometheus = Reaped(
        std::process::Command::new(prometheus_bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address={web}"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );

    // The series exist before any game.
    until_async(60, "Prometheus to scrape the coordinator", || async {
        let value = prometheus_value(&web, "tourney_pair_results_committed_total");
        check(value == Some(0.0), || format!("{value:?}"))
    })
    .await;

    let mut admin = admin(&server.addr, "a-secret").await;
    let (stop_worker, worker) = spawn_worker(&server.addr);
    let id = submit_match(&mut admin).await;
    assert_eq!(wait_until_finished(&mut admin, id).await.state, "finished");

    // They move as games are played: 6 pairs, 12 games, one worker with 2 slots.
    until_async(30, "the series to reach the played games", || async {
        let values = [
            prometheus_value(&web, "tourney_pair_results_committed_total"),
            prometheus_value(&web, "sum(tourney_games_total)"),
            prometheus_value(&web, "tourney_slots_registered"),
            prometheus_value(&web, &format!("tourney_pairs_done{{tournament=\"{id}\"}}")),
            prometheus_value(&web, "sum(tourney_game_plies_count)"),
        ];
        let want = [6.0, 12.0, 2.0, 6.0, 12.0].map(Some);
        check(values == want, || format!("{values:?}, want {want:?}"))
    })
    .await;
    drop(prometheus);

    // The exposition passes promtool's lint.
    let (_, text) = http_get(&target, "/metrics").unwrap();
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut promtool.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let output = promtool.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_resume_say_not_found_and_failed_precondition() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin).await;
    let e = admin
        .cancel(pb::CancelRequest { id: 999 })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");
    assert!(e.message().contains("999"), "{e:?}");
    let e = admin.resume(pb::ResumeRequest { id }).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    assert!(
        e.message()
            .contains("queued: only a paused or cancelled tournament can be resumed"),
        "{e:?}"
    );
    assert!(
        admin
            .cancel(pb::CancelRequest { id })
            .await
            .unwrap()
            .into_inner()
            .cancelled
    );
    let e = admin.cancel(pb::CancelRequest { id }).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains("is cancelled"), "{e:?}");
    // A cancelled one is resumed, with the games it has.
    let resumed = admin.resume(pb::ResumeRequest { id }).await.unwrap();
    assert!(resumed.into_inner().resumed);
    // List: pages, newest first; a token it did not give is INVALID_ARGUMENT.
    let newer = submit_match(&mut admin).await;
    let page = |token: &str| pb::ListRequest {
        page_size: 1,
        page_token: token.into(),
    };
    let first = admin.list(page("")).await.unwrap().into_inner();
    assert_eq!(first.tournaments[0].id, newer);
    let second = admin
        .list(page(&first.next_page_token))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (second.tournaments[0].id, second.next_page_token.as_str()),
        (id, "")
    );
    let e = admin.list(page("x")).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_is_served_as_v1_and_v1alpha() {
    use tokio_stream::StreamExt;
    use tonic_reflection::pb::{v1, v1alpha};
    let server = start(None).await;
    let channel = connect(&server.addr, None).await.unwrap();
    let request = v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(v1::server_reflection_request::MessageRequest::ListServices(
            String::new(),
        )),
    };
    let mut client = v1::server_reflection_client::ServerReflectionClient::new(channel.clone());
    let mut answers = client
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.next().await.unwrap().unwrap();
    assert!(
        format!("{answer:?}").contains("tourney.v1.Admin"),
        "{answer:?}"
    );
    let request = v1alpha::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(
            v1alpha::server_reflection_request::MessageRequest::ListServices(String::new()),
        ),
    };
    let mut client = v1alpha::server_reflection_client::ServerReflectionClient::new(channel);
    let mut answers = client
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let answer = answers.next().await.unwrap().unwrap();
    assert!(
        format!("{answer:?}").contains("tourney.v1.Worker"),
        "{answer:?}"
    );
    let _ = server.stop.send(());
}

/// Submits `config` with an openings file holding only the start position, and plays it
/// to the end with a worker (still running, stopped through the sender).
async fn play_from_the_start_position(
    server: &Running,
    admin: &mut Admin,
    config: String,
) -> (
    u64,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<tourney_worker::Ended, tourney_worker::WorkerError>>,
) {
    let id = admin
        .submit(pb::SubmitRequest {
            config,
            file: "one-opening.toml".into(),
            openings: "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .id;
    let (stop_worker, worker) = spawn_worker(&server.addr);
    wait_until_finished(admin, id).await;
    (id, stop_worker, worker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_players_play_different_games_from_the_same_opening() {
    // One opening for every pair: before per-game seeds, every pair of two random players
    // replayed the first move for move.
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let config = MatchFile {
        name: "seeds",
        pairs: 4,
        openings: "{ file = \"one.txt\" }",
        limits: "{ nodes = 1 }",
        adjudication: Some("{ max_plies = 120 }"),
        engines: [("a", "random:seed=1"), ("b", "random:seed=2")],
        ..Default::default()
    }
    .toml();
    let (id, stop_worker, worker) = play_from_the_start_position(&server, &mut admin, config).await;
    let (mut games, mut seeds) = (
        std::collections::HashSet::new(),
        std::collections::HashSet::new(),
    );
    for v in exported(&mut admin, id).await {
        assert_eq!(v["meta"]["opening"], 0);
        games.insert(v["moves"].to_string());
        seeds.insert(v["meta"]["seed"].as_u64().expect("a game seed"));
    }
    assert_eq!((games.len(), seeds.len()), (8, 8), "every game its own");
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_with_its_own_limits_keeps_them_in_both_colours_and_clocks_scale() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let config = MatchFile {
        name: "odds",
        pairs: 2,
        openings: "{ file = \"one.txt\" }",
        limits: "{ depth = 2, movetime = 2000, scale = \"nps\" }",
        adjudication: Some("{ max_plies = 12 }"),
        engines: [("deep", "ab"), ("shallow", "ab")],
        ..Default::default()
    }
    .toml()
    .replacen(
        "player = \"ab\"",
        "player = \"ab\"\nlimits = { depth = 3 }",
        1,
    );
    let (id, stop_worker, worker) = play_from_the_start_position(&server, &mut admin, config).await;
    let games = exported(&mut admin, id).await;
    assert_eq!(games.len(), 4);
    for g in &games {
        let deep_plays = if g["white"] == "deep" {
            "white"
        } else {
            "black"
        };
        let expected = if deep_plays == "white" {
            "white depth=3; black depth=2,movetime=2000"
        } else {
            "white depth=2,movetime=2000; black depth=3"
        };
        assert_eq!(g["time_control"], expected, "{g}");
        // Scaled by the worker's measured speed, within 4x either way.
        let scale: f64 = g["meta"]["clock_scale"].as_str().unwrap().parse().unwrap();
        assert!((0.25..=4.0).contains(&scale), "{g}");
        // LOA: Black moves first; each side searched to its own depth.
        let deep_moves_first = deep_plays == "black";
        for (i, m) in g["moves"].as_array().unwrap().iter().enumerate() {
            let deep = (i % 2 == 0) == deep_moves_first;
            assert_eq!(m["depth"], if deep { 3 } else { 2 }, "ply {i} of {g}");
        }
    }
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

/// A Worker client sending the worker token and, if given, a session secret.
async fn worker_client(
    addr: &str,
    session: Option<&str>,
) -> tourney_proto::v1::worker_client::WorkerClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
> {
    let mut interceptor = TokenInterceptor::new(Some("w-secret"));
    if let Some(session) = session {
        interceptor = interceptor.with_session(session).unwrap();
    }
    tourney_proto::v1::worker_client::WorkerClient::with_interceptor(
        connect(addr, None).await.unwrap(),
        interceptor,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_registration_that_holds_a_pair_may_report_it() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin).await;
    let register = |name: &str| pb::RegisterRequest {
        name: name.into(),
        slots: 1,
        ..Default::default()
    };
    let mut anonymous = worker_client(&server.addr, None).await;
    let honest = anonymous
        .register(register("honest"))
        .await
        .unwrap()
        .into_inner();
    let forger = anonymous
        .register(register("forger"))
        .await
        .unwrap()
        .into_inner();
    assert_ne!(honest.session, forger.session);
    assert_eq!(honest.session.len(), 32);
    let lease = pb::LeaseRequest {
        worker_id: honest.worker_id.clone(),
        max_pairs: 1,
    };
    // Without the session, or with another registration's, calls are refused.
    let e = anonymous.lease(lease.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e:?}");
    let mut forging = worker_client(&server.addr, Some(&forger.session)).await;
    let e = forging.lease(lease.clone()).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unauthenticated, "{e:?}");
    // With its own, the honest worker gets a pair...
    let mut honest_client = worker_client(&server.addr, Some(&honest.session)).await;
    let granted = honest_client.lease(lease).await.unwrap().into_inner();
    let job = &granted.jobs[0];
    // ... that the forger, under its own identity, can neither report nor pause.
    let report = pb::ReportRequest {
        worker_id: forger.worker_id.clone(),
        results: vec![pb::PairResult {
            tournament: id,
            pair: job.pair,
            half_points: vec![2, 2],
            games_json: "[]".into(),
            lease_id: granted.lease_id,
            games_lz4: Vec::new(),
            ticket: job.ticket.clone(),
        }],
        failures: vec![pb::PairFailure {
            tournament: id,
            pair: job.pair,
            reason: "forged".into(),
            lease_id: granted.lease_id,
            ..Default::default()
        }],
        checks: Vec::new(),
    };
    // The result is rejected; the failure of a pair it does not hold is ignored (as a
    // failure of a lease lost in a restart is), pausing nothing.
    let ack = forging.report(report).await.unwrap().into_inner();
    assert_eq!((ack.accepted, ack.rejected), (0, 1));
    let status = admin
        .status(pb::StatusRequest { id })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((status.state.as_str(), status.pairs_done), ("running", 0));
    assert!(status.paused_reason.is_empty());
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_results_are_refused_is_barred_and_the_test_plays_on() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin).await;
    let mut anonymous = worker_client(&server.addr, None).await;
    let broken = anonymous
        .register(pb::RegisterRequest {
            name: "broken".into(),
            slots: u32::MAX,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut client = worker_client(&server.addr, Some(&broken.session)).await;
    let lease = pb::LeaseRequest {
        worker_id: broken.worker_id.clone(),
        max_pairs: 1,
    };
    // Results of pairs it does not hold (a lease it never had, or one from before a
    // restart) are refused without blame, however many.
    let stale = |pair| pb::ReportRequest {
        worker_id: broken.worker_id.clone(),
        results: vec![pb::PairResult {
            tournament: id,
            pair,
            half_points: vec![2, 2],
            games_json: "not records".into(),
            lease_id: 7,
            games_lz4: Vec::new(),
            ticket: "00".repeat(32),
        }],
        failures: Vec::new(),
        checks: Vec::new(),
    };
    for pair in 0..2 * tourney_coordinator::REFUSALS_TO_BAR {
        let ack = client.report(stale(pair)).await.unwrap().into_inner();
        assert_eq!((ack.accepted, ack.rejected), (0, 1));
    }
    // Records that do not fit, for the pair it holds, again and again.
    for refused in 1..=tourney_coordinator::REFUSALS_TO_BAR {
        let granted = client.lease(lease.clone()).await.unwrap().into_inner();
        let job = &granted.jobs[0];
        let ack = client
            .report(pb::ReportRequest {
                worker_id: broken.worker_id.clone(),
                results: vec![pb::PairResult {
                    tournament: id,
                    pair: job.pair,
                    half_points: vec![2, 2],
                    games_json: "not records".into(),
                    lease_id: granted.lease_id,
                    games_lz4: Vec::new(),
                    ticket: job.ticket.clone(),
                }],
                failures: Vec::new(),
                checks: Vec::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!((ack.accepted, ack.rejected), (0, 1));
        // The test never pauses for it: its pairs go back to be played by anyone.
        let status = admin
            .status(pb::StatusRequest { id })
            .await
            .unwrap()
            .into_inner();
        assert_ne!(status.state, "paused", "refusal {refused}: {status:?}");
    }
    // Barred now: nothing more for it, said in the events log.
    let again = client.lease(lease).await.unwrap().into_inner();
    assert!(again.jobs.is_empty(), "{again:?}");
    let events = admin
        .list_events(pb::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events;
    let barred = events.iter().find(|e| e.action == "worker-barred").unwrap();
    assert_eq!(barred.subject, format!("tournament {id}"));
    assert!(
        barred.detail.starts_with("broken: 3 results refused"),
        "{barred:?}"
    );
    // An honest worker plays every pair, the refused ones included.
    let (stop, worker) = spawn_worker(&server.addr);
    let status = wait_until_finished(&mut admin, id).await;
    assert_eq!(status.pairs_done, 6, "{status:?}");
    let _ = stop.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_that_repeat_an_earlier_game_are_counted_and_said() {
    // The old setup in small: deterministic players (alpha-beta at a node limit) and one
    // opening for every pair, so pairs 1 and 2 replay pair 0 move for move.
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let config = MatchFile {
        name: "repeats",
        pairs: 3,
        openings: "{ file = \"one.txt\" }",
        limits: "{ nodes = 50 }",
        adjudication: Some("{ max_plies = 60 }"),
        engines: [("a", "ab"), ("b", "ab:walls=0")],
        ..Default::default()
    }
    .toml();
    let (id, stop_worker, worker) = play_from_the_start_position(&server, &mut admin, config).await;
    let text = admin
        .get_report(pb::GetReportRequest {
            id,
            format: "text".into(),
            tournament_link: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .content;
    assert!(
        text.contains("Note: 4 of the 6 games repeat an earlier game move for move")
            && text.contains("2 distinct), in 2 pairs (1, 2)"),
        "{text}"
    );
    let (_, metrics) = http_get(server.addr.trim_start_matches("http://"), "/metrics").unwrap();
    assert!(
        metrics.contains(&format!(
            "tourney_games_duplicate_total{{tournament=\"{id}\"}} 4"
        )),
        "{metrics}"
    );
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}

/// A registration of `name` and its client.
async fn registered(
    addr: &str,
    name: &str,
) -> (
    pb::RegisterResponse,
    tourney_proto::v1::worker_client::WorkerClient<
        tonic::service::interceptor::InterceptedService<
            tonic::transport::Channel,
            TokenInterceptor,
        >,
    >,
) {
    let registration = worker_client(addr, None)
        .await
        .register(pb::RegisterRequest {
            name: name.into(),
            slots: 2,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let client = worker_client(addr, Some(&registration.session)).await;
    (registration, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn honest_reports_are_taken_across_restarts_and_never_refused_pair_by_pair() {
    let server = start(None).await;
    let mut admin_client = admin(&server.addr, "a-secret").await;
    let id = submit_match(&mut admin_client).await;
    let (first, mut client) = registered(&server.addr, "honest").await;
    let granted = client
        .lease(pb::LeaseRequest {
            worker_id: first.worker_id.clone(),
            max_pairs: 2,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(granted.jobs.len(), 2);
    // Both pairs played as a worker plays them.
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let results: Vec<pb::PairResult> = granted
        .jobs
        .iter()
        .map(|job| {
            let job = tourney_model::job::PairJob::try_from(job.clone()).unwrap();
            let mut result = tourney_worker::play_here(&job, &own_engines(), &metrics).unwrap();
            result.lease_id = granted.lease_id;
            result
        })
        .collect();
    // A report over the coordinator's budget (nine pairs claiming 8 MiB each, with the
    // honest ones) is turned away whole, to be sent in parts: nothing refused, nobody
    // barred, nothing paused.
    let padding = lz4_flex::compress_prepend_size(&vec![b' '; tourney_proto::MAX_GAMES_JSON]);
    let mut oversized: Vec<pb::PairResult> = (0..9)
        .map(|_| pb::PairResult {
            games_lz4: padding.clone(),
            ..results[0].clone()
        })
        .collect();
    oversized.extend(results.iter().cloned());
    let e = client
        .report(pb::ReportRequest {
            worker_id: first.worker_id.clone(),
            results: oversized,
            failures: Vec::new(),
            checks: Vec::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("send it in parts"), "{}", e.message());
    assert_eq!(
        e.metadata().get(tourney_proto::RETRY_PUSHBACK).unwrap(),
        "0"
    );
    let report = |worker: &str, results: Vec<pb::PairResult>| pb::ReportRequest {
        worker_id: worker.to_string(),
        results,
        failures: Vec::new(),
        checks: Vec::new(),
    };
    let ack = client
        .report(report(&first.worker_id, vec![results[0].clone()]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((ack.accepted, ack.duplicates, ack.rejected), (1, 0, 0));
    // The coordinator restarts: its leases are gone, the worker registers again and
    // reports the other pair of its old lease, and the first again (its acknowledgement
    // lost): taken, and a duplicate, neither rejected.
    drop(client);
    let _ = server.stop.send(());
    server.served.await.unwrap().unwrap();
    let server = start(Some(server._dir)).await;
    let (second, mut client) = registered(&server.addr, "honest").await;
    let ack = client
        .report(report(&second.worker_id, results.clone()))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((ack.accepted, ack.duplicates, ack.rejected), (1, 1, 0));
    // Another host cannot use the ticket: it was sealed for this one.
    let (other, mut other_client) = registered(&server.addr, "other").await;
    let mut admin_client = admin(&server.addr, "a-secret").await;
    let granted = client
        .lease(pb::LeaseRequest {
            worker_id: second.worker_id.clone(),
            max_pairs: 1,
        })
        .await
        .unwrap()
        .into_inner();
    let job = tourney_model::job::PairJob::try_from(granted.jobs[0].clone()).unwrap();
    let mut stolen = tourney_worker::play_here(&job, &own_engines(), &metrics).unwrap();
    stolen.lease_id = granted.lease_id;
    let ack = other_client
        .report(report(&other.worker_id, vec![stolen]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!((ack.accepted, ack.rejected), (0, 1));
    let status = admin_client
        .status(pb::StatusRequest { id })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((status.state.as_str(), status.pairs_done), ("running", 2));
    let _ = server.stop.send(());
}

/// Opens `/api/v1/events` from `from` (a loopback address); the connection and the
/// response's status line.
async fn open_events(addr: &str, from: &str) -> (tokio::net::TcpStream, String) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let server: std::net::SocketAddr = addr.trim_start_matches("http://").parse().unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut stream = socket.connect(server).await.unwrap();
    stream
        .write_all(b"GET /api/v1/events HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut reader = tokio::io::BufReader::new(&mut stream);
    let mut status = String::new();
    reader.read_line(&mut status).await.unwrap();
    (stream, status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dashboard_event_streams_are_bounded_in_all_and_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::open(
        Store::open(dir.path()).unwrap(),
        Settings {
            dashboard_streams: 3,
            dashboard_streams_per_address: 2,
            ..Settings::default()
        },
        &prometheus::Registry::new(),
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let options = ServerOptions {
        worker_tokens: None,
        admin_tokens: None,
        tls: None,
        insecure: false,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(serve(coordinator, listener, options, async {
        let _ = stopped.await;
    }));
    let (first, status) = open_events(&addr, "127.0.0.1").await;
    assert!(status.contains(" 200 "), "{status}");
    let (_second, status) = open_events(&addr, "127.0.0.1").await;
    assert!(status.contains(" 200 "), "{status}");
    // A third from the same address: refused, saying why and when to come back.
    let (_, status) = open_events(&addr, "127.0.0.1").await;
    assert!(status.contains(" 503 "), "{status}");
    let (_other, status) = open_events(&addr, "127.0.0.2").await;
    assert!(status.contains(" 200 "), "{status}");
    // Three open: the dashboard is full for everyone.
    let (_, status) = open_events(&addr, "127.0.0.3").await;
    assert!(status.contains(" 503 "), "{status}");
    // One page goes away: its place is given back.
    drop(first);
    until_async(5, "a closed page's place to be given back", || async {
        let (_stream, status) = open_events(&addr, "127.0.0.3").await;
        check(status.contains(" 200 "), || status.clone())
    })
    .await;
    let _ = stop.send(());
    let _ = served.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_every_dialect_an_engine_that_fails_loses_its_games_through_a_worker() {
    let server = start(None).await;
    let mut admin = admin(&server.addr, "a-secret").await;
    let misbehave = env!("CARGO_BIN_EXE_misbehave");
    // (protocol, game, misbehaviour, the termination it loses by, what the reason says)
    let cases = [
        ("ugi", "loa", "crash", "crash", "exit status: 3"),
        (
            "uci",
            "loa",
            "illegal",
            "illegal-move",
            "played 'a1-a1', which is not legal here",
        ),
        ("codingame", "loa", "hang", "time-forfeit", "time"),
        ("codingame", "amazons", "illegal", "illegal-move", "a1-a1"),
        ("gtp", "amazons", "crash", "crash", "exit status: 3"),
    ];
    let metrics = tourney_worker::WorkerMetrics::new(&prometheus::Registry::new());
    let (stop_worker, worker) = spawn_worker_with(&server.addr, metrics);
    for (protocol, game, mode, termination, says) in cases {
        let config = format!(
            "name = \"{protocol}-{mode}\"\ngame = \"{game}\"\nformat = \"match\"\npairs = 1\n\
             openings = {{ plies = 2, seed = 3 }}\nlimits = {{ tc = \"2+0.05\" }}\n\n\
             [[engine]]\nname = \"bad\"\ncommand = \"{misbehave} {mode} 1 --protocol {protocol} --game {game}\"\n\
             protocol = \"{protocol}\"\n\n[[engine]]\nname = \"random\"\nplayer = \"random\"\n"
        );
        let id = submit(&mut admin, config, "bad.toml").await;
        let status = wait_until_finished(&mut admin, id).await;
        assert_eq!(status.games, 2, "{protocol} {mode}");
        for v in exported(&mut admin, id).await {
            assert_eq!(v["termination"], termination, "{protocol} {mode}: {v}");
            let loser = if v["result"] == "1-0" {
                "black"
            } else {
                "white"
            };
            assert_eq!(v[loser], "bad", "{protocol} {mode}: {v}");
            let detail = v["detail"].as_str().unwrap_or_default();
            assert!(detail.contains(says), "{protocol} {mode}: {detail}");
            // The protocol of the failure, in the dialect's words, is kept for its loser.
            let transcript = v[format!("{loser}_transcript")]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert!(!transcript.is_empty(), "{protocol} {mode}: {v}");
        }
    }
    let _ = stop_worker.send(());
    assert_eq!(
        worker.await.unwrap().unwrap(),
        tourney_worker::Ended::Stopped
    );
    let _ = server.stop.send(());
}
