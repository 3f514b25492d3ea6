//! `tourney run`: a tournament on this machine, coordinator, workers and store in one
//! process, talking over loopback exactly as a cluster does.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_store::Store;
use tourney_worker::{WorkerMetrics, WorkerOptions};

use crate::support::client::{Admin, ClientArgs, fetch_report, read_tournament, submit_text};
use crate::support::host::cores;
use crate::support::local::LocalCoordinator;
use crate::support::local::{REPORT_FILE, report_path};
use crate::support::refusal::reply;
use crate::support::signals::{Interrupted, stop_signal};

/// Run a tournament on this machine: coordinator, workers and store in one process.
///
/// The main job: the coordinator and local workers in one process, the same code as a
/// cluster talking over loopback. Shows a progress bar (pairs, games/s, the leader, the LLR
/// or a data generation run's positions; without a terminal, as under CI or nohup, a line every 10 s instead), serves the
/// live dashboard and `/metrics` on `--listen` (default: a free loopback port, printed
/// first as `Live dashboard: http://127.0.0.1:PORT/`), and at the end prints the rating
/// report (what was played, the rating table, the cross-table, how the games ended, a
/// closing line with the same counts) and writes it as HTML into the data directory.
///
/// The tournament file, its player specs and its openings file are checked first: a mistake
/// is reported with its file and line before anything starts or is created.
///
/// Ctrl-C (or SIGTERM) stops it at once: the games under way are dropped (never reported;
/// they are played when it resumes) and their outside engines killed with whatever they
/// started, the report of what is stored is printed, and it exits 130; a second Ctrl-C
/// quits without the report. The same command resumes; a finished tournament just prints
/// its report.
///
/// Example: `tourney run config/loa-quick.toml`.
#[derive(Args)]
pub(crate) struct RunArgs {
    /// The tournament file (see config/ for examples).
    file: PathBuf,
    /// sled's page cache for the store, MiB: the most memory it keeps of the results.
    #[arg(long, default_value_t = tourney_store::DEFAULT_CACHE_MB)]
    cache_mb: u64,
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
    /// Seconds between progress lines when stderr is not a terminal (hidden: for tests).
    #[arg(long, hide = true, default_value_t = 10)]
    progress_every: u64,
}

/// The progress line: pairs, games/s, and the positions kept, the LLR or the leader.
fn progress_message(s: &pb::TournamentStatus, started: Instant, games_at_start: u64) -> String {
    let rate = (s.games - games_at_start) as f64 / started.elapsed().as_secs_f64().max(1e-3);
    let tail = match (&s.data, &s.sprt, s.standings.first()) {
        (Some(d), _, _) => format!("{} of {} positions", d.positions, d.target),
        (None, Some(sprt), _) => format!(
            "LLR {:.2} [{:.2}, {:.2}]",
            sprt.llr, sprt.lower_bound, sprt.upper_bound
        ),
        (None, None, Some(leader)) if s.games > 0 => {
            format!("leader {} {:+.0}", leader.name, leader.elo)
        }
        _ => String::new(),
    };
    format!("{rate:.1} games/s  {tail}")
}

pub(crate) fn run(args: &RunArgs) -> Result<ExitCode> {
    crate::support::host::raise_open_files();
    let runtime = tokio::runtime::Runtime::new()?;
    let result = runtime.block_on(async {
        let (interrupted, quit) = interrupts();
        tokio::select! {
            result = run_embedded(args, interrupted) => result,
            _ = quit => Err(Interrupted.into()),
        }
    });
    if result.as_ref().is_err_and(|e| e.is::<Interrupted>()) {
        // The games under way are dropped, not waited for: they are played on resuming.
        runtime.shutdown_background();
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// The local workers of `run`, and how to stop them.
type Workers = tokio::task::JoinHandle<Result<tourney_worker::Ended, tourney_worker::WorkerError>>;

/// The coordinator and local workers in one process, talking over loopback exactly as a
/// cluster does.
async fn run_embedded(
    args: &RunArgs,
    mut interrupted: tokio::sync::watch::Receiver<bool>,
) -> Result<()> {
    let (local, existing, registry) = open_coordinator(args).await?;
    eprintln!("Live dashboard: http://{}/", local.addr);
    let mut admin = local.client.admin().await?;
    let id = submit_or_resume(&mut admin, existing, &args.file).await?;
    let (stop_workers, workers) = start_workers(args, &local.client, &registry);
    let id = play(args, &mut admin, id, &workers, &mut interrupted).await?;
    let _ = stop_workers.send(true);
    let worker_result = workers.await;
    // The workers have reported their last games: this status and the report below count
    // the same games.
    let status = reply(admin.status(pb::StatusRequest { id })).await?;
    if status.state == "paused" {
        local.stop().await;
        bail!(
            "tournament {id} paused after {} pairs: {}\nFix it and run the same command \
             again: the tournament resumes where it stopped.",
            status.pairs_done,
            status.paused_reason
        );
    }
    let printed = print_report(&mut admin, id, &status, &args.data).await;
    local.stop().await;
    if let Ok(Err(e)) = worker_result {
        bail!("worker: {e}");
    }
    printed
}

/// The tournament file checked, the store of `--data` opened and its coordinator served
/// on `--listen`; with the tournament the same file played there before (resumed), and
/// the metrics registry it shares with the local workers.
async fn open_coordinator(
    args: &RunArgs,
) -> Result<(LocalCoordinator, Option<u64>, prometheus::Registry)> {
    let text = read_tournament(&args.file)?.text;
    let store = Store::open_data_dir(&args.data, args.cache_mb)?;
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
            data_dir: Some(args.data.clone()),
            ..Settings::default()
        },
        &registry,
    )?;
    let local = LocalCoordinator::start(coordinator, args.listen).await?;
    Ok((local, existing, registry))
}

/// The tournament played: `existing` (resumed if paused), else `file` submitted.
async fn submit_or_resume(
    admin: &mut Admin,
    existing: Option<u64>,
    file: &std::path::Path,
) -> Result<u64> {
    let Some(id) = existing else {
        return submit_text(admin, file, None).await;
    };
    // Paused by a pair that could not be played: running again means it was fixed.
    let state = reply(admin.status(pb::StatusRequest { id })).await?.state;
    if state == "paused" {
        reply(admin.resume(pb::ResumeRequest { id })).await?;
    }
    Ok(id)
}

/// The local workers started on the coordinator at `client`, until the sender turns true.
fn start_workers(
    args: &RunArgs,
    client: &ClientArgs,
    registry: &prometheus::Registry,
) -> (tokio::sync::watch::Sender<bool>, Workers) {
    let (stop_workers, workers_stopped) = tokio::sync::watch::channel(false);
    let worker = WorkerOptions {
        // Its GPUs, found as `tourney worker` finds them, for tests that require some.
        choices: tourney_worker::Choices {
            gpus: tourney_worker::gpus::detect(),
            games_per_gpu: 1,
            ..Default::default()
        },
        pinned: None,
        update: None,
        coordinator: client.coordinator.clone(),
        token: client.token.clone(),
        name: "local".into(),
        concurrency: args.concurrency.unwrap_or_else(cores).max(1),
        cores: args.concurrency.unwrap_or(0).max(cores()),
        tls_ca: None,
        cache_dir: args.data.join("artifacts"),
        cache_bytes: 4 << 30,
        artifact_bytes: tourney_proto::DEFAULT_MAX_ARTIFACT_BYTES,
        build_timeout: std::time::Duration::from_secs(900),
        engine_policy: crate::support::engines::own_engines(),
        exit_when_idle: None,
    };
    // What outside engines leave behind is this process's to end.
    tourney_runner::confine::adopt_orphans();
    let mut stopped = workers_stopped.clone();
    let worker_metrics = WorkerMetrics::new(registry);
    let workers = tokio::spawn(tourney_worker::run(worker, worker_metrics, async move {
        let _ = stopped.wait_for(|s| *s).await;
    }));
    (stop_workers, workers)
}

/// Follows tournament `id`, and a tuning run's verification SPRT after it, until it has
/// ended, paused, or the workers stopped; the last one followed. Interrupted, prints the
/// report of what is stored and ends in [`Interrupted`].
async fn play(
    args: &RunArgs,
    admin: &mut Admin,
    mut id: u64,
    workers: &Workers,
    interrupted: &mut tokio::sync::watch::Receiver<bool>,
) -> Result<u64> {
    loop {
        let every = Duration::from_secs(args.progress_every.max(1));
        let status = follow(admin, id, workers, interrupted, every).await?;
        if *interrupted.borrow() {
            return Err(stop_interrupted(admin, id, workers, &args.data).await);
        }
        if status.state == "paused" || workers.is_finished() {
            return Ok(id);
        }
        // A tuning run that ended goes on with its verification SPRT, submitted by the
        // coordinator as the run ended.
        let Some(verification) = verification_of(admin, id).await? else {
            return Ok(id);
        };
        print_report(admin, id, &status, &args.data).await?;
        println!("\nVerification SPRT of tuning run {id}: tournament {verification}\n");
        id = verification;
    }
}

/// After the first stop signal: the games under way dropped, the report of what is stored
/// printed with how to go on; [`Interrupted`], or the error on the way.
async fn stop_interrupted(
    admin: &mut Admin,
    id: u64,
    workers: &Workers,
    data: &std::path::Path,
) -> anyhow::Error {
    // The games under way are dropped with the process: never reported, they are
    // leased again when the run resumes. Their outside engines go with them.
    workers.abort();
    tourney_runner::confine::end_engines();
    let reported = async {
        let status = reply(admin.status(pb::StatusRequest { id })).await?;
        eprintln!(
            "Interrupted: the games under way are dropped and will be played when the \
             run resumes. What is stored so far:"
        );
        print_report(admin, id, &status, data).await?;
        eprintln!(
            "Run the same command again to go on from here; meanwhile `tourney report \
             {id} --data {}` shows this report and `tourney export {id} --data {}` the \
             games.",
            data.display(),
            data.display()
        );
        anyhow::Ok(())
    };
    match reported.await {
        Ok(()) => Interrupted.into(),
        Err(e) => e,
    }
}

/// Shows tournament `id`'s progress until it is no longer queued or running (or the
/// workers stopped, or the run is interrupted): a progress bar, or without a terminal a
/// line every `plain_every`. Returns its last status.
async fn follow(
    admin: &mut Admin,
    id: u64,
    workers: &Workers,
    interrupted: &mut tokio::sync::watch::Receiver<bool>,
    plain_every: Duration,
) -> Result<pb::TournamentStatus> {
    let mut status = reply(admin.status(pb::StatusRequest { id })).await?;
    let bar = ProgressBar::new(status.pairs_planned.unwrap_or(0));
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
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            _ = interrupted.wait_for(|i| *i) => break,
        }
        status = reply(admin.status(pb::StatusRequest { id })).await?;
        let message = progress_message(&status, started, games_at_start);
        bar.set_position(status.pairs_done);
        bar.set_message(message.clone());
        if plain && last_line.elapsed() >= plain_every {
            last_line = Instant::now();
            let planned = status
                .pairs_planned
                .map_or(String::new(), |p| format!("/{p}"));
            eprintln!(
                "[{}] {}{planned} pairs  {message}",
                tourney_model::hms(started.elapsed().as_millis() as u64),
                status.pairs_done
            );
        }
        if workers.is_finished() {
            break;
        }
    }
    bar.finish_and_clear();
    Ok(status)
}

/// The stop signals (SIGINT, SIGTERM) of `run`: the first turns the watch true (`run` then
/// stops and reports what is stored); the second ends the outside engines and resolves the
/// other receiver (`run` then quits at once).
fn interrupts() -> (
    tokio::sync::watch::Receiver<bool>,
    tokio::sync::oneshot::Receiver<()>,
) {
    let (interrupt, interrupted) = tokio::sync::watch::channel(false);
    let (quit, quitting) = tokio::sync::oneshot::channel();
    let first = stop_signal();
    tokio::spawn(async move {
        first.await;
        let second = stop_signal();
        let _ = interrupt.send(true);
        second.await;
        eprintln!("Interrupted again: quitting at once.");
        tourney_runner::confine::end_engines();
        let _ = quit.send(());
    });
    (interrupted, quitting)
}

/// The verification SPRT of tuning run `id`, if it has one: waits (up to 30 s) for the
/// coordinator to submit it after the run finished.
async fn verification_of(admin: &mut Admin, id: u64) -> Result<Option<u64>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let json = fetch_report(admin, id, "json", "").await?;
        let report: serde_json::Value = serde_json::from_str(&json)?;
        let spsa = &report["spsa"];
        if let Some(vid) = spsa["verification"].as_u64() {
            return Ok(Some(vid));
        }
        if spsa["verify"].is_null() || Instant::now() > deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Prints tournament `id`'s report and a closing line, and writes its HTML report into
/// the data directory.
async fn print_report(
    admin: &mut Admin,
    id: u64,
    status: &pb::TournamentStatus,
    data: &std::path::Path,
) -> Result<()> {
    let (text, html, json) = (
        fetch_report(admin, id, "text", "").await?,
        // Other tournaments (an SPSA run's verification, versions) by their reports beside it.
        fetch_report(admin, id, "html", REPORT_FILE).await?,
        fetch_report(admin, id, "json", "").await?,
    );
    // An SPRT's LLR counts the pairs up to its decision; pairs finished after it count in
    // the standings and the estimate. The closing line says so when they differ.
    let report = serde_json::from_str::<serde_json::Value>(&json).unwrap_or_default();
    let sprt = &report["sprt"];
    let sprt_note = match sprt["sequential_pairs"].as_u64() {
        Some(counted) if counted != status.pairs_done => {
            if sprt["status"]["decision"].as_str() == Some("continue") {
                format!(" (the SPRT's LLR counts the first {counted} pairs)")
            } else {
                format!(" (the SPRT decided at pair {counted})")
            }
        }
        _ => String::new(),
    };
    print!("{text}");
    let html_path = report_path(data, id);
    std::fs::write(&html_path, html).with_context(|| format!("writing {}", html_path.display()))?;
    println!(
        "\nTournament {id}: {} pairs, {} games{sprt_note}. HTML report: {}",
        status.pairs_done,
        status.games,
        html_path.display()
    );
    Ok(())
}
