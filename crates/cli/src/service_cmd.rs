//! The tournament service on the command line: `run` (embedded), `coordinator`, `worker`,
//! `submit`, `status`, `report`, `export`, `cancel`.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tokio::net::TcpListener;
use tourney_coordinator::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_model::tournament::TournamentConfig;
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_worker::{TokenInterceptor, WorkerMetrics, WorkerOptions, connect};

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
>;

/// Where a client finds the coordinator.
#[derive(Args, Clone)]
pub(crate) struct ClientArgs {
    /// The coordinator's URL.
    #[arg(
        long,
        env = "TOURNEY_COORDINATOR",
        default_value = "http://127.0.0.1:7070"
    )]
    coordinator: String,
    /// The admin (or, for `worker`, the worker) token [default: TOURNEY_TOKEN, else the
    /// coordinator's own TOURNEY_ADMIN_TOKEN (for `worker`: TOURNEY_WORKER_TOKEN), so that
    /// commands run inside the coordinator's container or pod need no extra setting].
    #[arg(long, env = "TOURNEY_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// CA certificate (PEM) for a TLS coordinator (`https://` URLs).
    #[arg(long)]
    tls_ca: Option<PathBuf>,
}

impl ClientArgs {
    fn ca(&self) -> Result<Option<Vec<u8>>> {
        self.tls_ca
            .as_ref()
            .map(|p| std::fs::read(p).with_context(|| format!("reading {}", p.display())))
            .transpose()
    }

    /// The token given, else the one in `role_env` (`TOURNEY_ADMIN_TOKEN`,
    /// `TOURNEY_WORKER_TOKEN`).
    fn token_or(&self, role_env: &str) -> Option<String> {
        self.token
            .clone()
            .or_else(|| std::env::var(role_env).ok())
            .filter(|t| !t.is_empty())
    }

    async fn admin(&self) -> Result<Admin> {
        let channel = connect(&self.coordinator, self.ca()?.as_deref())
            .await
            .with_context(|| format!("connecting to {}", self.coordinator))?;
        Ok(AdminClient::with_interceptor(
            channel,
            TokenInterceptor::new(self.token_or("TOURNEY_ADMIN_TOKEN").as_deref()),
        )
        .max_decoding_message_size(256 << 20))
    }
}

fn status_error(e: tonic::Status) -> anyhow::Error {
    match e.code() {
        tonic::Code::Unauthenticated => {
            anyhow!("the coordinator refused the token (set --token or TOURNEY_TOKEN)")
        }
        _ => anyhow!("{}", e.message()),
    }
}

/// A tournament file and what it refers to.
struct TournamentFiles {
    /// The file's text.
    text: String,
    /// The openings file's text (empty for generated openings).
    openings: String,
    /// Outside engines' programs to upload, by engine name.
    uploads: Vec<(String, PathBuf)>,
}

/// Reads a tournament file and what it refers to, and checks them as the coordinator will
/// (player specs, the openings file), so that a mistake is reported with its line before
/// anything is started, printed or created.
fn read_tournament(path: &Path) -> Result<TournamentFiles> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file = path.display().to_string();
    let config = TournamentConfig::parse(&text, &file)?;
    tourney_plan::check::check_players(&config, &text, &file)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let openings = match &config.openings.file {
        Some(f) => {
            let p = base.join(f);
            let openings = std::fs::read_to_string(&p)
                .with_context(|| format!("{file}: openings.file: reading {}", p.display()))?;
            tourney_plan::check::openings_file(&config, &openings, &p.display().to_string())?;
            openings
        }
        None => String::new(),
    };
    let mut uploads = Vec::new();
    for engine in &config.engines {
        if let Some(command) = &engine.command {
            let program = tourney_runner::split_command(command)
                .into_iter()
                .next()
                .unwrap_or_default();
            // A program given as a path is uploaded; a bare name is looked up on each worker.
            if program.contains('/') {
                let p = base.join(&program);
                if !p.is_file() {
                    bail!(
                        "{file}: engine '{}': program {} not found",
                        engine.name,
                        p.display()
                    );
                }
                uploads.push((engine.name.clone(), p));
            }
        }
    }
    Ok(TournamentFiles {
        text,
        openings,
        uploads,
    })
}

/// Submits a tournament file through the admin API; returns its id.
async fn submit_file(admin: &mut Admin, path: &Path) -> Result<u64> {
    let TournamentFiles {
        text: config,
        openings,
        uploads,
    } = read_tournament(path)?;
    let mut artifacts = BTreeMap::new();
    for (name, program) in uploads {
        let content =
            std::fs::read(&program).with_context(|| format!("reading {}", program.display()))?;
        let sha = admin
            .upload_artifact(pb::UploadArtifactRequest { content })
            .await
            .map_err(status_error)?
            .into_inner()
            .sha256;
        artifacts.insert(name, sha);
    }
    let request = pb::SubmitRequest {
        config,
        file: path.display().to_string(),
        openings,
        artifacts: artifacts.into_iter().collect(),
    };
    Ok(admin
        .submit(request)
        .await
        .map_err(status_error)?
        .into_inner()
        .id)
}

/// Arguments of `tourney run`.
#[derive(Args)]
pub(crate) struct RunArgs {
    /// The tournament file (see config/ for examples).
    file: PathBuf,
    /// Where the results are kept; running again on the same data resumes.
    #[arg(long, default_value = "tourney-data")]
    data: PathBuf,
    /// Games played at once (default: the machine's cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Where to serve the live dashboard and /metrics (and the embedded coordinator's
    /// gRPC API, guarded by a random token); port 0 picks a free one.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A random-enough token for the embedded run's loopback connections.
fn local_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut rng = tourney_ai::Rng::new(nanos as u64 ^ u64::from(std::process::id()));
    format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64())
}

/// The progress line: pairs, games/s, and the leader or the LLR.
fn progress_message(s: &pb::TournamentStatus, started: Instant, games_at_start: u64) -> String {
    let rate = (s.games - games_at_start) as f64 / started.elapsed().as_secs_f64().max(1e-3);
    let tail = match (&s.sprt, s.standings.first()) {
        (Some(sprt), _) => format!(
            "LLR {:.2} [{:.2}, {:.2}]",
            sprt.llr, sprt.lower_bound, sprt.upper_bound
        ),
        (None, Some(leader)) if s.games > 0 => format!("leader {} {:+.0}", leader.name, leader.elo),
        _ => String::new(),
    };
    format!("{rate:.1} games/s  {tail}")
}

/// How often `run` prints a progress line when stderr is not a terminal.
const PLAIN_PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// `h:mm:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

pub(crate) fn run(args: &RunArgs) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(run_embedded(args))
}

/// The coordinator and local workers in one process, talking over loopback exactly as a
/// cluster does.
async fn run_embedded(args: &RunArgs) -> Result<()> {
    let text = read_tournament(&args.file)?.text;
    let store = Store::open_data_dir(&args.data)?;
    // The same file on the same data resumes its tournament.
    let existing = store
        .tournaments()?
        .into_iter()
        .rev()
        .find(|t| t.config_text == text)
        .map(|t| t.id);
    // One registry for the coordinator and the local worker, served at /metrics.
    let registry = prometheus::Registry::new();
    let coordinator = Coordinator::open(
        store,
        Settings {
            lease_ms: 10_000,
            heartbeat_ms: 2_000,
            ..Settings::default()
        },
        &registry,
    )?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("--listen {}", args.listen))?;
    let addr = listener.local_addr()?;
    let dashboard = if addr.ip().is_unspecified() {
        SocketAddr::from(([127, 0, 0, 1], addr.port()))
    } else {
        addr
    };
    eprintln!("Live dashboard: http://{dashboard}/");
    let token = local_token();
    let options = ServerOptions {
        worker_token: Some(token.clone()),
        admin_token: Some(token.clone()),
        tls: None,
    };
    let (stop_server, server_stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(coordinator, listener, options, async {
        let _ = server_stopped.await;
    }));
    let client = ClientArgs {
        coordinator: format!("http://{dashboard}"),
        token: Some(token.clone()),
        tls_ca: None,
    };
    let mut admin = client.admin().await?;
    let id = match existing {
        Some(id) => {
            // Paused by a pair that could not be played: running again means it was fixed.
            let state = admin
                .status(pb::StatusRequest { id })
                .await
                .map_err(status_error)?
                .into_inner()
                .state;
            if state == "paused" {
                admin
                    .resume(pb::ResumeRequest { id })
                    .await
                    .map_err(status_error)?;
            }
            id
        }
        None => submit_file(&mut admin, &args.file).await?,
    };
    let (stop_workers, workers_stopped) = tokio::sync::watch::channel(false);
    let worker = WorkerOptions {
        coordinator: client.coordinator.clone(),
        token: Some(token),
        name: "local".into(),
        concurrency: args.concurrency.unwrap_or_else(cores).max(1),
        tls_ca: None,
        cache_dir: args.data.join("artifacts"),
    };
    let mut stopped = workers_stopped.clone();
    let worker_metrics = WorkerMetrics::new(&registry);
    let workers = tokio::spawn(tourney_worker::run(worker, worker_metrics, async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    let mut status = admin
        .status(pb::StatusRequest { id })
        .await
        .map_err(status_error)?
        .into_inner();
    let bar = match status.pairs_planned {
        Some(planned) => ProgressBar::new(planned),
        None => ProgressBar::new(status.sprt.as_ref().map_or(0, |_| 0)),
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} pairs  {msg}",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    if status.pairs_planned.is_none() {
        bar.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {pos} pairs  {msg}")
                .expect("the template is valid"),
        );
    }
    let started = Instant::now();
    let games_at_start = status.games;
    // Without a terminal (CI, nohup, a log file) the bar is hidden: a line every 10 s instead.
    let plain = !std::io::stderr().is_terminal();
    let mut last_line = Instant::now();
    while matches!(status.state.as_str(), "queued" | "running") {
        tokio::time::sleep(Duration::from_millis(250)).await;
        status = admin
            .status(pb::StatusRequest { id })
            .await
            .map_err(status_error)?
            .into_inner();
        let message = progress_message(&status, started, games_at_start);
        bar.set_position(status.pairs_done);
        bar.set_message(message.clone());
        if plain && last_line.elapsed() >= PLAIN_PROGRESS_EVERY {
            last_line = Instant::now();
            let planned = status
                .pairs_planned
                .map_or(String::new(), |p| format!("/{p}"));
            eprintln!(
                "[{}] {}{planned} pairs  {message}",
                clock(started.elapsed()),
                status.pairs_done
            );
        }
        if workers.is_finished() {
            break;
        }
    }
    bar.finish_and_clear();
    let _ = stop_workers.send(true);
    let worker_result = workers.await;
    // The workers have reported their last games: this status and the report below count
    // the same games.
    status = admin
        .status(pb::StatusRequest { id })
        .await
        .map_err(status_error)?
        .into_inner();
    if status.state == "paused" {
        let _ = stop_server.send(());
        let _ = server.await;
        bail!(
            "tournament {id} paused after {} pairs: {}\nFix it and run the same command \
             again: the tournament resumes where it stopped.",
            status.pairs_done,
            status.paused_reason
        );
    }
    let (text, html, json) = (
        fetch_report(&mut admin, id, "text").await?,
        fetch_report(&mut admin, id, "html").await?,
        fetch_report(&mut admin, id, "json").await?,
    );
    // An SPRT counts the pairs up to its decision; pairs finished after it count in the
    // standings only. The closing line says so when they differ.
    let sprt_pairs = serde_json::from_str::<serde_json::Value>(&json)
        .ok()
        .and_then(|report| report["sprt"]["estimate"]["pairs"].as_u64());
    let sprt_note = match sprt_pairs {
        Some(counted) if counted != status.pairs_done => {
            format!(" (the SPRT decided on the first {counted} pairs)")
        }
        _ => String::new(),
    };
    let _ = stop_server.send(());
    let _ = server.await;
    if let Ok(Err(e)) = worker_result {
        bail!("worker: {e}");
    }
    print!("{text}");
    let html_path = args.data.join(format!("report-{id}.html"));
    std::fs::write(&html_path, html).with_context(|| format!("writing {}", html_path.display()))?;
    println!(
        "\nTournament {id}: {} pairs, {} games{sprt_note}. HTML report: {}",
        status.pairs_done,
        status.games,
        html_path.display()
    );
    Ok(())
}

/// A tournament's report, rendered by the coordinator in `format`.
async fn fetch_report(admin: &mut Admin, id: u64, format: &str) -> Result<String> {
    Ok(admin
        .get_report(pb::GetReportRequest {
            id,
            format: format.into(),
        })
        .await
        .map_err(status_error)?
        .into_inner()
        .content)
}

/// Arguments of `tourney coordinator`; each can also be set in a `--config` file (flags win).
#[derive(Args)]
pub(crate) struct CoordinatorArgs {
    /// Settings file (TOML, keys as the flags with `_`: see config/coordinator.toml);
    /// relative paths in it are relative to the file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on (gRPC and /metrics) [default: 0.0.0.0:7070].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Data directory (the sled store) [default: tourney-data].
    #[arg(long)]
    data: Option<PathBuf>,
    /// File with the worker token (default: TOURNEY_WORKER_TOKEN; none: no check).
    #[arg(long)]
    worker_token_file: Option<PathBuf>,
    /// File with the admin token (default: TOURNEY_ADMIN_TOKEN; none: no check).
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
    /// TLS certificate chain (PEM).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Seconds a lease lasts without a heartbeat [default: 30].
    #[arg(long)]
    lease_seconds: Option<u64>,
}

/// A coordinator settings file: the flags of `tourney coordinator` as TOML keys.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CoordinatorFile {
    listen: Option<SocketAddr>,
    data: Option<PathBuf>,
    worker_token_file: Option<PathBuf>,
    admin_token_file: Option<PathBuf>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
    lease_seconds: Option<u64>,
}

/// The coordinator's settings: flags over the settings file over the defaults.
#[derive(Debug, PartialEq)]
struct CoordinatorSetup {
    listen: SocketAddr,
    data: PathBuf,
    worker_token_file: Option<PathBuf>,
    admin_token_file: Option<PathBuf>,
    tls: Option<(PathBuf, PathBuf)>,
    lease_seconds: u64,
}

impl CoordinatorArgs {
    fn setup(&self) -> Result<CoordinatorSetup> {
        let (file, base) = match &self.config {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                let file: CoordinatorFile =
                    tourney_model::tournament::parse_toml(&text, &path.display().to_string())?;
                (
                    file,
                    path.parent().map(Path::to_path_buf).unwrap_or_default(),
                )
            }
            None => (CoordinatorFile::default(), PathBuf::new()),
        };
        let in_file = |p: Option<PathBuf>| p.map(|p| base.join(p));
        let tls = match (
            self.tls_cert.clone().or(in_file(file.tls_cert)),
            self.tls_key.clone().or(in_file(file.tls_key)),
        ) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            (Some(_), None) => bail!("tls_cert is set but tls_key is not"),
            (None, Some(_)) => bail!("tls_key is set but tls_cert is not"),
        };
        Ok(CoordinatorSetup {
            listen: self
                .listen
                .or(file.listen)
                .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 7070))),
            data: self
                .data
                .clone()
                .or(in_file(file.data))
                .unwrap_or_else(|| "tourney-data".into()),
            worker_token_file: self
                .worker_token_file
                .clone()
                .or(in_file(file.worker_token_file)),
            admin_token_file: self
                .admin_token_file
                .clone()
                .or(in_file(file.admin_token_file)),
            tls,
            lease_seconds: self
                .lease_seconds
                .or(file.lease_seconds)
                .unwrap_or(30)
                .max(1),
        })
    }
}

fn token(file: &Option<PathBuf>, env: &str) -> Result<Option<String>> {
    match file {
        Some(p) => Ok(Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("reading {}", p.display()))?
                .trim()
                .to_string(),
        )),
        None => Ok(std::env::var(env).ok().filter(|t| !t.is_empty())),
    }
}

pub(crate) fn coordinator(args: &CoordinatorArgs) -> Result<()> {
    let setup = args.setup()?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let store = Store::open_data_dir(&setup.data)?;
        let lease_ms = setup.lease_seconds * 1000;
        let coordinator = Coordinator::open(
            store,
            Settings {
                lease_ms,
                heartbeat_ms: (lease_ms / 6).max(500),
                ..Settings::default()
            },
            &prometheus::Registry::new(),
        )?;
        let tls = match &setup.tls {
            Some((c, k)) => Some((
                std::fs::read(c).with_context(|| format!("reading {}", c.display()))?,
                std::fs::read(k).with_context(|| format!("reading {}", k.display()))?,
            )),
            None => None,
        };
        let options = ServerOptions {
            worker_token: token(&setup.worker_token_file, "TOURNEY_WORKER_TOKEN")?,
            admin_token: token(&setup.admin_token_file, "TOURNEY_ADMIN_TOKEN")?,
            tls,
        };
        let listener = TcpListener::bind(setup.listen)
            .await
            .with_context(|| format!("listening on {}", setup.listen))?;
        eprintln!(
            "tourney coordinator listening on {} (data in {})",
            listener.local_addr()?,
            setup.data.display()
        );
        serve(coordinator, listener, options, async {
            stop_signal().await;
            eprintln!("tourney coordinator: stopping");
        })
        .await?;
        Ok(())
    })
}

/// Resolves at SIGTERM (`docker stop`, a pod's deletion, systemd) or SIGINT (Ctrl-C).
/// As PID 1 in a container a process gets no default handling of SIGTERM: this is what
/// stops it there.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Arguments of `tourney worker`.
#[derive(Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// Games played at once (default: the machine's cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// The worker's name (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// Where outside engines' programs are cached.
    #[arg(long, default_value = "tourney-worker-cache")]
    cache: PathBuf,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 0.0.0.0:9100).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
}

pub(crate) fn worker(args: &WorkerArgs) -> Result<()> {
    // Games run on their own threads; the async side only talks to the coordinator, so
    // one thread is plenty and leaves every core to the games.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let name = args
        .name
        .clone()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".into());
    let options = WorkerOptions {
        coordinator: args.client.coordinator.clone(),
        token: args.client.token_or("TOURNEY_WORKER_TOKEN"),
        name,
        concurrency: args.concurrency.unwrap_or_else(cores).max(1),
        tls_ca: args.client.ca()?,
        cache_dir: args.cache.clone(),
    };
    runtime.block_on(async {
        let registry = prometheus::Registry::new();
        let metrics = WorkerMetrics::new(&registry);
        if let Some(addr) = args.metrics {
            let listener = TcpListener::bind(addr)
                .await
                .with_context(|| format!("--metrics: listening on {addr}"))?;
            tokio::spawn(serve_metrics(listener, registry));
        }
        let shutdown = async {
            stop_signal().await;
            eprintln!("worker: finishing the games in progress");
        };
        tourney_worker::run(options, metrics, shutdown)
            .await
            .map_err(anyhow::Error::msg)
    })
}

/// Arguments of `tourney submit`.
#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The tournament file.
    file: PathBuf,
}

pub(crate) fn submit(args: &SubmitArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let id = submit_file(&mut admin, &args.file).await?;
        println!("{id}");
        Ok(())
    })
}

/// Arguments of `tourney status`.
#[derive(Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// A tournament id (default: all).
    id: Option<u64>,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct StatusJson {
    id: u64,
    name: String,
    game: String,
    format: String,
    state: String,
    pairs_done: u64,
    pairs_planned: Option<u64>,
    games: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    paused_reason: Option<String>,
    standings: Vec<StandingJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llr: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lower_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    upper_bound: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    decision: Option<String>,
}

#[derive(Serialize)]
struct StandingJson {
    name: String,
    elo: f64,
    plus: f64,
    minus: f64,
    games: u64,
    score: f64,
    draws: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    los_next: Option<f64>,
    /// `>` or `<` when the rating is only a bound, else empty.
    bound: String,
}

fn status_json(s: &pb::TournamentStatus) -> StatusJson {
    StatusJson {
        id: s.id,
        name: s.name.clone(),
        game: s.game.clone(),
        format: s.format.clone(),
        state: s.state.clone(),
        pairs_done: s.pairs_done,
        pairs_planned: s.pairs_planned,
        games: s.games,
        paused_reason: (!s.paused_reason.is_empty()).then(|| s.paused_reason.clone()),
        standings: s
            .standings
            .iter()
            .map(|p| StandingJson {
                name: p.name.clone(),
                elo: p.elo,
                plus: p.plus,
                minus: p.minus,
                games: p.games,
                score: p.score,
                draws: p.draws,
                los_next: p.los_next,
                bound: p.bound.clone(),
            })
            .collect(),
        llr: s.sprt.as_ref().map(|x| x.llr),
        lower_bound: s.sprt.as_ref().map(|x| x.lower_bound),
        upper_bound: s.sprt.as_ref().map(|x| x.upper_bound),
        decision: s.sprt.as_ref().map(|x| x.decision.clone()),
    }
}

fn status_line(s: &pb::TournamentStatus) -> String {
    let planned = s
        .pairs_planned
        .map_or("open".to_string(), |p| p.to_string());
    let mut out = format!(
        "#{} {} ({}, {}): {}, {}/{planned} pairs, {} games",
        s.id, s.name, s.game, s.format, s.state, s.pairs_done, s.games
    );
    if !s.paused_reason.is_empty() {
        out += &format!(
            " ({}; fix it, then `tourney resume {}`)",
            s.paused_reason, s.id
        );
    }
    if let Some(sprt) = &s.sprt {
        out += &format!(
            ", LLR {:.2} [{:.2}, {:.2}] {}",
            sprt.llr, sprt.lower_bound, sprt.upper_bound, sprt.decision
        );
    }
    for (rank, p) in s.standings.iter().enumerate() {
        if p.games == 0 {
            out += &format!("\n  {:>2}. {:<20} no games yet", rank + 1, p.name);
            continue;
        }
        out += &format!(
            "\n  {:>2}. {:<20} {:>6} +{:.0}/-{:.0}  {} games  {:.1}%  draws {:.1}%",
            rank + 1,
            p.name,
            format!("{}{:.0}", p.bound, p.elo),
            p.plus,
            p.minus,
            p.games,
            p.score * 100.0,
            p.draws * 100.0
        );
        if let Some(los) = p.los_next {
            out += &format!("  LOS {:.1}%", los * 100.0);
        }
    }
    out
}

pub(crate) fn status(args: &StatusArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let list = match args.id {
            Some(id) => vec![
                admin
                    .status(pb::StatusRequest { id })
                    .await
                    .map_err(status_error)?
                    .into_inner(),
            ],
            None => {
                admin
                    .list(pb::ListRequest {})
                    .await
                    .map_err(status_error)?
                    .into_inner()
                    .tournaments
            }
        };
        if args.json {
            let json: Vec<StatusJson> = list.iter().map(status_json).collect();
            let out = if args.id.is_some() {
                serde_json::to_string_pretty(&json[0])?
            } else {
                serde_json::to_string_pretty(&json)?
            };
            println!("{out}");
        } else {
            for s in &list {
                println!("{}", status_line(s));
            }
        }
        Ok(())
    })
}

/// Report formats.
#[derive(Clone, Copy, ValueEnum)]
enum ReportFormat {
    Text,
    Json,
    Csv,
    Html,
}

/// Arguments of `tourney report`.
#[derive(Args)]
pub(crate) struct ReportArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The tournament id.
    id: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ReportFormat,
    /// Write to this file instead of stdout.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub(crate) fn report(args: &ReportArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let format = match args.format {
            ReportFormat::Text => "text",
            ReportFormat::Json => "json",
            ReportFormat::Csv => "csv",
            ReportFormat::Html => "html",
        };
        let out = fetch_report(&mut admin, args.id, format).await?;
        match &args.output {
            Some(p) => {
                std::fs::write(p, out).with_context(|| format!("writing {}", p.display()))?
            }
            None => print!("{out}"),
        }
        Ok(())
    })
}

/// Export formats.
#[derive(Clone, Copy, ValueEnum)]
enum ExportFormat {
    /// PGN-style text.
    Pgn,
    /// One JSON record per line.
    Jsonl,
}

/// Arguments of `tourney export`.
#[derive(Args)]
pub(crate) struct ExportArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The tournament id.
    id: u64,
    /// Output format.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: ExportFormat,
}

pub(crate) fn export(args: &ExportArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let mut stream = admin.export(pb::ExportRequest { id: args.id }).await.map_err(status_error)?.into_inner();
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        use std::io::Write;
        while let Some(chunk) = stream.message().await.map_err(status_error)? {
            match args.format {
                ExportFormat::Jsonl => writeln!(out, "{}", chunk.line)?,
                ExportFormat::Pgn => {
                    let mut value: serde_json::Value = serde_json::from_str(&chunk.line)?;
                    // The worker that played it is PGN's Site.
                    let worker = value["worker"].clone();
                    if let Some(meta) = value["meta"].as_object_mut() {
                        meta.insert("worker".into(), worker);
                    }
                    // Restore the record's own shape (players as objects) for the PGN writer.
                    for side in ["white", "black"] {
                        let name = value[side].clone();
                        value[side] = serde_json::json!({ "name": name, "spec": value[format!("{side}_spec")].clone() });
                    }
                    let record: tourney_model::GameRecord = serde_json::from_value(value)?;
                    write!(out, "{}", record.to_pgn())?;
                }
            }
        }
        Ok(())
    })
}

/// Arguments of `tourney cancel` and `tourney resume`.
#[derive(Args)]
pub(crate) struct TournamentArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The tournament id.
    id: u64,
}

pub(crate) fn cancel(args: &TournamentArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        admin
            .cancel(pb::CancelRequest { id: args.id })
            .await
            .map_err(status_error)?;
        println!("cancelled");
        Ok(())
    })
}

pub(crate) fn resume(args: &TournamentArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        admin
            .resume(pb::ResumeRequest { id: args.id })
            .await
            .map_err(status_error)?;
        println!("resumed");
        Ok(())
    })
}

/// Serves `registry` at `/metrics` (Prometheus text format) on `listener`.
async fn serve_metrics(listener: TcpListener, registry: prometheus::Registry) {
    let page = axum::routing::get(move || {
        let registry = registry.clone();
        async move {
            (
                [(axum::http::header::CONTENT_TYPE, prometheus::TEXT_FORMAT)],
                tourney_coordinator::metrics::encode(&registry),
            )
        }
    });
    let app = axum::Router::new().route("/metrics", page);
    if let Err(e) = axum::serve(listener, app).await {
        eprintln!("worker: the metrics server stopped: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        coordinator: CoordinatorArgs,
    }

    fn setup(args: &[&str]) -> Result<CoordinatorSetup> {
        let cli = Cli::try_parse_from(std::iter::once("coordinator").chain(args.iter().copied()))?;
        cli.coordinator.setup()
    }

    #[test]
    fn status_lines_show_bounds_and_players_without_games() {
        let standing = |name: &str, elo: f64, games: u64, bound: &str| pb::Standing {
            name: name.into(),
            elo,
            plus: 50.0,
            minus: 60.0,
            games,
            score: 1.0,
            draws: 0.0,
            los_next: (games > 0).then_some(0.99),
            bound: bound.into(),
        };
        let status = pb::TournamentStatus {
            id: 3,
            name: "t".into(),
            state: "running".into(),
            standings: vec![
                standing("perfect", 400.0, 6, ">"),
                standing("later", 64.0, 0, ""),
            ],
            ..Default::default()
        };
        let text = status_line(&status);
        assert!(
            text.contains("perfect") && text.contains(">400") && text.contains("LOS 99.0%"),
            "{text}"
        );
        assert!(
            text.contains("2. later                no games yet"),
            "{text}"
        );
        assert!(!text.contains("+50/-60  0 games"), "{text}");
    }

    #[test]
    fn defaults_without_a_file() {
        let s = setup(&[]).unwrap();
        assert_eq!(s.listen, "0.0.0.0:7070".parse().unwrap());
        assert_eq!(s.data, PathBuf::from("tourney-data"));
        assert_eq!((s.lease_seconds, s.tls), (30, None));
    }

    #[test]
    fn the_example_file_is_read_with_paths_relative_to_it_and_flags_win() {
        let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/coordinator.toml");
        let s = setup(&["--config", file]).unwrap();
        let dir = Path::new(file).parent().unwrap();
        assert_eq!(s.data, dir.join("../tourney-coordinator-data"));
        assert_eq!(s.lease_seconds, 30);
        let s = setup(&["--config", file, "--lease-seconds", "5", "--data", "d"]).unwrap();
        assert_eq!((s.lease_seconds, s.data), (5, PathBuf::from("d")));
    }

    #[test]
    fn bad_files_name_the_file_line_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "listen = \"0.0.0.0:1\"\nlease_secs = 3\n").unwrap();
        let e = setup(&["--config", path.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.toml:2") && e.contains("lease_secs"), "{e}");
        std::fs::write(&path, "tls_cert = \"c.pem\"\n").unwrap();
        let e = setup(&["--config", path.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("tls_key is not"), "{e}");
        std::fs::write(&path, "listen = \"nowhere\"\n").unwrap();
        let e = setup(&["--config", path.to_str().unwrap()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("c.toml:1"), "{e}");
    }
}
