//! `tourney worker`: plays leased pairs for a coordinator; finishes its games on SIGTERM
//! or Ctrl-C, and quits at once on a second one.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tokio::net::TcpListener;
use tourney_runner::confine::EnginePolicy;
use tourney_worker::{WorkerMetrics, WorkerOptions};

use crate::support::client::ClientArgs;
use crate::support::host::cores;
use crate::support::signals::{Interrupted, stop_signal};

/// Play games for a coordinator: `tourney worker --coordinator http://host:7070`.
///
/// Plays leased pairs, as many games at once as `--concurrency` (default: its cores), and
/// reconnects with backoff. On SIGTERM (or Ctrl-C) it finishes its games and reports them;
/// on a second one it quits at once (exit 130: its games are dropped, leased again when
/// their leases expire, and their outside engines killed with whatever they started).
///
/// Outside engines are confined (see SECURITY.md): run as root, the worker refuses them
/// unless given `--engine-user` (a user for them) or `--allow-root-engines`.
///
/// The token comes from `--token-file`, `TOURNEY_TOKEN` or `TOURNEY_WORKER_TOKEN`; a
/// `--token` given on the command line is blanked from it as the worker starts, so
/// `/proc/PID/cmdline` never shows it.
#[derive(Args)]
pub(crate) struct WorkerArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The most games played at once (default: the machine's cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// The cores its games may keep at once: a game keeps the threads of its costliest side,
    /// as the sides take turns (a game of two 4-thread engines 4 cores, of two 1-thread
    /// engines or built-in players 1), and waits until they are free (default: the cores
    /// this process may use, or --concurrency if more).
    #[arg(long, value_name = "N")]
    cores: Option<usize>,
    /// The worker's name (default: the host name).
    #[arg(long)]
    name: Option<String>,
    /// The host's cache of outside engines' programs, data files and builds from source.
    /// Give every worker on a host the same one: each commit is then built once per host
    /// (default: /var/cache/tourney as root, else $XDG_CACHE_HOME/tourney or
    /// ~/.cache/tourney).
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// The most the cache's builds and data files may take, MiB; the least recently used
    /// go first.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    cache_mib: u64,
    /// The most one program or data file (a network) may have, MiB: it is streamed to the
    /// cache and hashed on the way, never held in memory, and resumed after a broken
    /// download.
    #[arg(long, value_name = "MIB", default_value_t = tourney_proto::DEFAULT_MAX_ARTIFACT_BYTES >> 20)]
    max_artifact_mib: u64,
    /// The most time one build from source may take, seconds (then it is killed, and its
    /// tournament paused with the log).
    #[arg(long, value_name = "SECONDS", default_value_t = 900)]
    build_timeout: u64,
    /// Pin each game to cores of its own, its engines with it: `auto` (one physical core
    /// a game core, with its SMT siblings, so no two games share one; a pair's games on
    /// cores of one class, performance or efficiency) or a CPU list (`0-7`, `0,2,4-6`: one
    /// CPU a game core). Each core's speed is measured once as the worker starts, and one
    /// far slower than its class is reported. Linux only.
    #[arg(long, value_name = "auto|LIST")]
    affinity: Option<tourney_worker::affinity::Affinity>,
    /// A label of this worker, for tournaments that require it (`requires.labels`);
    /// repeatable: --label big-cache --label gpu.
    #[arg(long = "label", value_name = "LABEL", value_parser = label)]
    labels: Vec<String>,
    /// Take only tournaments that carry this label (their `labels`); repeatable. Without
    /// it, any tournament whose requirements the worker meets.
    #[arg(long = "only", value_name = "LABEL", value_parser = label)]
    only: Vec<String>,
    /// Turn down tournaments marked `noisy` (ones that load the whole machine), as on a
    /// desktop that is also used for other work.
    #[arg(long)]
    avoid_noisy: bool,
    /// The GPUs it gives the games of tournaments that require them (`requires.gpus`),
    /// each game devices of its own, shown to its engines in CUDA_VISIBLE_DEVICES,
    /// HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ZE_AFFINITY_MASK and
    /// TOURNEY_GPU_DEVICES: `auto` (nvidia-smi's, else the render nodes of /dev/dri),
    /// `none`, a count (`2`: devices 0 and 1), or INDEX[:MODEL[:MEMORY_MIB]] separated by
    /// commas (`0:RTX 4090:24576,1:RTX 4090:24576`).
    #[arg(
        long,
        value_name = "SPEC",
        env = "TOURNEY_GPUS",
        default_value = "auto"
    )]
    gpus: String,
    /// The most games one GPU serves at once.
    #[arg(long, value_name = "N", default_value_t = 1)]
    games_per_gpu: u32,
    /// Exit (status 0) once no work has come for this long, seconds: for batch schedulers
    /// and Kubernetes Jobs, whose workers should end when the queue is empty.
    #[arg(long, value_name = "SECONDS")]
    exit_when_idle: Option<u64>,
    /// Serve Prometheus metrics at http://ADDR/metrics (e.g. 0.0.0.0:9100).
    #[arg(long, value_name = "ADDR")]
    metrics: Option<SocketAddr>,
    /// Run outside engines as this user (a name, or uid[:gid]); needed when the worker
    /// runs as root.
    #[arg(long, value_name = "USER")]
    engine_user: Option<String>,
    /// Let outside engines run as root when the worker does (not recommended).
    #[arg(long)]
    allow_root_engines: bool,
    /// Pass this environment variable on to outside engines (repeatable); they get only
    /// PATH, LANG, TZ, HOME and TMPDIR otherwise, and never TOURNEY_*.
    #[arg(long, value_name = "NAME")]
    engine_env: Vec<String>,
    /// Update itself: when the coordinator offers a release (its own program, or its
    /// `--worker-release`) that differs from this one and is not older, the worker stops
    /// leasing, fetches it (checked against its sha256), runs it once, and when every pair
    /// in hand is played and reported replaces its program and starts again with the same
    /// arguments. Refused, with the reason in the log, where the program cannot be replaced
    /// (a read-only image): then a coordinator's --min-version refuses it as before.
    #[arg(long)]
    update: bool,
}

/// The host's cache when none is given: shared by the workers of one user on the host.
pub(crate) fn default_cache() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return PathBuf::from("/var/cache/tourney");
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("tourney")
}

/// A user by name or `uid[:gid]`: its uid and gid.
fn user_ids(user: &str) -> Result<(u32, u32)> {
    if let Some((uid, gid)) = user.split_once(':') {
        return Ok((
            uid.parse()
                .context("--engine-user: the uid is not a number")?,
            gid.parse()
                .context("--engine-user: the gid is not a number")?,
        ));
    }
    if let Ok(uid) = user.parse::<u32>() {
        return Ok((uid, uid));
    }
    let name = std::ffi::CString::new(user).context("--engine-user: a NUL in the name")?;
    // SAFETY: getpwnam reads the user database; the pointer it returns is used at once,
    // before any other call that could reuse its storage.
    let entry = unsafe { libc::getpwnam(name.as_ptr()) };
    if entry.is_null() {
        bail!("--engine-user: no user '{user}'");
    }
    // SAFETY: non-null, as checked.
    let entry = unsafe { &*entry };
    Ok((entry.pw_uid, entry.pw_gid))
}

/// How this worker confines outside engines; says in the log what it cannot do.
fn confine_engines(args: &WorkerArgs) -> Result<EnginePolicy> {
    use tourney_runner::confine::{
        adopt_orphans, clean_stale_work_dirs, containment, file_fence, network_isolation,
        network_seal,
    };
    let run_as = args.engine_user.as_deref().map(user_ids).transpose()?;
    if run_as.is_some_and(|(uid, _)| uid == 0) && !args.allow_root_engines {
        bail!("--engine-user is root: pass --allow-root-engines to mean it");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && run_as.is_none() && !args.allow_root_engines {
        tracing::warn!(
            "the worker runs as root without --engine-user: outside engines will be refused \
             (give --engine-user nobody, or --allow-root-engines)"
        );
    }
    let policy = EnginePolicy {
        run_as,
        allow_root: args.allow_root_engines,
        pass_env: args.engine_env.clone(),
        cpus: Vec::new(),
        env: Vec::new(),
    };
    let stale = clean_stale_work_dirs();
    if stale > 0 {
        tracing::info!(
            stale,
            "removed the working directories of engines of dead workers"
        );
    }
    let reaper = adopt_orphans();
    if let Err(why) = containment(run_as) {
        let files = match file_fence() {
            Ok(_) => {
                "a Landlock fence lets them write only their working directory and \
                      read only the system's files, their program's and their data files"
            }
            Err(_) => "they can read and write what the worker's user can (no Landlock here)",
        };
        if reaper {
            tracing::warn!(
                reason = %why,
                files,
                "outside engines cannot get PID and mount namespaces here: they run in \
                 process groups of their own; what they start with setsid is adopted by the \
                 worker and killed within half a second; they see the host's processes"
            );
        } else {
            tracing::warn!(
                reason = %why,
                files,
                "outside engines cannot get PID and mount namespaces here: they run in \
                 process groups of their own, and what they start with setsid may outlive them"
            );
        }
    }
    match (network_isolation(), network_seal()) {
        (Ok(()), _) => {}
        (Err(why), Ok(())) => tracing::info!(
            reason = %why,
            "outside engines cannot get a network namespace here: a seccomp filter refuses \
             their network sockets (IPv4, IPv6, raw) instead"
        ),
        (Err(why), Err(no_filter)) => tracing::warn!(
            reason = %why,
            filter = %no_filter,
            "outside engines cannot get a network namespace or a seccomp filter here: they \
             share the worker's network"
        ),
    }
    Ok(policy)
}

/// What the worker is, from its command line: its name, token (blanked from the command
/// line), CPUs, GPUs and caches.
fn worker_options(
    args: &WorkerArgs,
    engine_policy: EnginePolicy,
    update: Option<tourney_worker::SelfUpdate>,
) -> Result<WorkerOptions> {
    let name = args
        .name
        .clone()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "worker".into());
    let token = args.client.token_or("TOURNEY_WORKER_TOKEN")?;
    if let Some(given) = &args.client.token {
        crate::support::client::blank_from_command_line(given);
    }
    let pinned = args.affinity.as_ref().map(pinned_units).transpose()?;
    let gpus = match tourney_worker::gpus::parse(&args.gpus)
        .map_err(|e| anyhow::anyhow!("--gpus: {e}"))?
    {
        Some(given) => given,
        None => tourney_worker::gpus::detect(),
    };
    if !gpus.is_empty() {
        let shown: Vec<String> = (gpus.iter())
            .map(|g| format!("{} {} {} MiB", g.device, g.facts.model, g.facts.memory_mb))
            .collect();
        tracing::info!(gpus = %shown.join(", "), "GPUs");
    }
    let offered = (args.cores)
        .unwrap_or_else(|| args.concurrency.unwrap_or(0).max(cores()))
        .max(1);
    Ok(WorkerOptions {
        coordinator: args.client.coordinator.clone(),
        token,
        name,
        concurrency: args.concurrency.unwrap_or_else(cores).max(1),
        cores: pinned
            .as_ref()
            .map_or(offered, |units| offered.min(units.len())),
        tls_ca: args.client.ca()?,
        cache_dir: args.cache.clone().unwrap_or_else(default_cache),
        cache_bytes: args.cache_mib.saturating_mul(1 << 20),
        artifact_bytes: args.max_artifact_mib.saturating_mul(1 << 20),
        build_timeout: std::time::Duration::from_secs(args.build_timeout.max(1)),
        engine_policy,
        exit_when_idle: args.exit_when_idle.map(std::time::Duration::from_secs),
        pinned,
        choices: tourney_worker::Choices {
            labels: args.labels.clone(),
            only: args.only.clone(),
            avoid_noisy: args.avoid_noisy,
            gpus,
            games_per_gpu: args.games_per_gpu.max(1),
        },
        update,
    })
}

/// Plays for the coordinator until stopped: serves `--metrics`; the first stop signal
/// finishes the games in progress, a second one ends in [`Interrupted`] at once.
async fn play(args: &WorkerArgs, options: WorkerOptions) -> Result<tourney_worker::Ended> {
    let stop = stop_signal();
    let registry = prometheus::Registry::new();
    let metrics = WorkerMetrics::new(&registry);
    if let Some(addr) = args.metrics {
        let listener = TcpListener::bind(addr)
            .await
            .with_context(|| format!("--metrics: listening on {addr}"))?;
        tracing::info!(listen = %listener.local_addr()?, "metrics serving");
        tokio::spawn(serve_metrics(listener, registry));
    }
    let (stopping, stopped) = tokio::sync::oneshot::channel();
    let shutdown = async {
        stop.await;
        tracing::info!("stopping: finishing the games in progress (a second signal quits at once)");
        let _ = stopping.send(stop_signal());
    };
    let quit = async {
        match stopped.await {
            Ok(again) => again.await,
            Err(_) => std::future::pending().await,
        }
        tracing::warn!(
            "quitting at once: the games in progress are dropped (the coordinator \
             leases them again when their leases expire) and their engines killed"
        );
        tourney_runner::confine::end_engines();
    };
    tokio::select! {
        result = tourney_worker::run(options, metrics, shutdown) => Ok(result?),
        () = quit => Err(Interrupted.into()),
    }
}

pub(crate) fn run(args: &WorkerArgs) -> Result<ExitCode> {
    // Its arguments as given, before a --token is blanked from them: the worker starts
    // again with them after it updates itself.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let engine_policy = confine_engines(args)?;
    let update = match args.update {
        true => tourney_worker::SelfUpdate::of_this_program()
            .inspect_err(|why| {
                tracing::warn!("--update: this worker cannot update itself: {why}");
            })
            .ok(),
        false => None,
    };
    // Games run on their own threads; the async side only talks to the coordinator, so
    // one thread is plenty and leaves every core to the games.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let options = worker_options(args, engine_policy, update.clone())?;
    let result = runtime.block_on(play(args, options));
    if result
        .as_ref()
        .is_err_and(|e: &anyhow::Error| e.is::<Interrupted>())
    {
        // The games under way are dropped, not waited for.
        runtime.shutdown_background();
        return result.map(|_| ExitCode::SUCCESS);
    }
    match (result?, update) {
        (tourney_worker::Ended::Updated { .. }, Some(update)) => {
            drop(runtime);
            start_again(update.exe(), &argv, args.client.token.as_deref())?;
            Ok(ExitCode::SUCCESS)
        }
        _ => Ok(ExitCode::SUCCESS),
    }
}

/// Runs the updated program at `exe` in this process's place with the arguments it was
/// given (`argv`), a `--token` moved to the environment (`TOURNEY_TOKEN`), where the
/// process list does not show it.
fn start_again(
    exe: &std::path::Path,
    argv: &[std::ffi::OsString],
    token: Option<&str>,
) -> Result<()> {
    use std::os::unix::process::CommandExt;
    let mut again = std::process::Command::new(exe);
    let mut args = argv.iter().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--token") => {
                args.next();
            }
            Some(a) if a.starts_with("--token=") => {}
            _ => {
                again.arg(arg);
            }
        }
    }
    if let Some(token) = token {
        again.env("TOURNEY_TOKEN", token);
    }
    let error = again.exec();
    Err(anyhow::anyhow!(
        "starting the updated {}: {error}",
        exe.display()
    ))
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
        tracing::error!(error = %e, "the metrics server stopped");
    }
}

/// A `--label` or `--only` value: 1 to 64 of a-z, 0-9, '.', '_', '-'.
fn label(text: &str) -> Result<String, String> {
    tourney_model::fleet::check_labels(&[text.to_string()], 1)?;
    Ok(text.to_string())
}

/// The units of `--affinity`, each one's speed measured once; units far slower than their
/// class are reported (a throttled or shared core makes unequal games).
fn pinned_units(
    affinity: &tourney_worker::affinity::Affinity,
) -> anyhow::Result<Vec<tourney_worker::affinity::Unit>> {
    use tourney_worker::affinity;
    let allowed = affinity::allowed();
    if allowed.is_empty() {
        anyhow::bail!("--affinity: this system does not say which CPUs a process may use");
    }
    let units = affinity::units(
        affinity,
        &allowed,
        std::path::Path::new("/sys/devices/system/cpu"),
    )
    .map_err(anyhow::Error::msg)?;
    let (speeds, slow) = affinity::measure(&units);
    for u in slow {
        tracing::warn!(
            cpus = %affinity::list_text(&units[u].cpus),
            nodes_per_second = speeds[u] as u64,
            class = units[u].class,
            "a core far slower than the others of its class: its games are slower"
        );
    }
    let cpus: Vec<String> = units.iter().map(|u| affinity::list_text(&u.cpus)).collect();
    tracing::info!(cores = units.len(), units = %cpus.join(" "), "games pinned");
    Ok(units)
}
