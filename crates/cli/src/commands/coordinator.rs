//! `tourney coordinator`: serves a cluster's coordinator (with its settings file); stops
//! cleanly on SIGTERM or Ctrl-C.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use tokio::net::TcpListener;
use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_store::Store;

use crate::support::host::raise_open_files;
use crate::support::signals::stop_signal;

/// Serve the coordinator of a cluster (gRPC, with health and reflection).
///
/// Serves gRPC `tourney.v1` (health, and reflection as `v1` and `v1alpha`) and, on the same
/// port, `/metrics` and the live dashboard at `/`. Every setting can also come from a
/// `--config` file (flags win).
///
/// Closed by default: without both tokens it serves loopback only (default
/// `127.0.0.1:7070`; with both, `0.0.0.0:7070`), and another address is refused unless
/// `--insecure`, which it warns about and shows as `tourney_insecure 1`. Tokens come from
/// `--worker-token-file`/`--admin-token-file` or
/// `TOURNEY_WORKER_TOKEN`/`TOURNEY_ADMIN_TOKEN`; the files are read again on SIGHUP.
///
/// It raises its soft limit of open files to the hard limit as it starts (systemd's soft
/// default is 1,024), and stops cleanly on SIGTERM or Ctrl-C.
///
/// Example: `tourney coordinator --listen 0.0.0.0:7070 --data /var/lib/tourney`.
#[derive(Args)]
pub(crate) struct CoordinatorArgs {
    /// Settings file (TOML, keys as the flags with `_`: see config/coordinator.toml);
    /// relative paths in it are relative to the file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Address to listen on (gRPC, /metrics and the dashboard) [default: 0.0.0.0:7070 with
    /// both tokens, else 127.0.0.1:7070]. An address beyond loopback needs both tokens, or
    /// --insecure.
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Data directory (the sled store) [default: tourney-data].
    #[arg(long)]
    data: Option<PathBuf>,
    /// File with the worker tokens: one token, or `name token` lines, one per worker host
    /// or group, so that one can be cut off alone (default: TOURNEY_WORKER_TOKEN). Re-read
    /// on SIGHUP.
    #[arg(long)]
    worker_token_file: Option<PathBuf>,
    /// File with the admin token(s), as the worker tokens (default: TOURNEY_ADMIN_TOKEN).
    /// Re-read on SIGHUP.
    #[arg(long)]
    admin_token_file: Option<PathBuf>,
    /// Serve beyond loopback without both tokens: anyone who reaches the port can submit
    /// tournaments (whose engines run on the workers) and report results. Warned about at
    /// start and shown in /metrics as `tourney_insecure 1`.
    #[arg(long)]
    insecure: bool,
    /// TLS certificate chain (PEM).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// TLS private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Seconds a lease lasts without a heartbeat [default: 30].
    #[arg(long)]
    lease_seconds: Option<u64>,
    /// sled's page cache for the store, MiB: the most memory it keeps of the results
    /// [default: 128].
    #[arg(long)]
    cache_mb: Option<u64>,
    /// Slots a worker may register; more are cut to this [default: 256].
    #[arg(long)]
    max_slots: Option<u32>,
    /// Pairs one lease may hold [default: 512].
    #[arg(long)]
    max_pairs_per_lease: Option<usize>,
    /// Live registrations per worker token [default: 1000].
    #[arg(long)]
    registrations_per_token: Option<usize>,
    /// Tournaments queued, running or paused at once; a submission past it is refused
    /// until one ends [default: 100].
    #[arg(long)]
    max_live_tournaments: Option<usize>,
    /// Let tests submitted by users (the `user` role) start without an approver's
    /// `tourney approve` (docs/accounts.md).
    #[arg(long)]
    no_approval: bool,
    /// Show the dashboard's data (tournaments, games, the timeline) only to logged-in
    /// users; the page and its login stay public (docs/accounts.md).
    #[arg(long)]
    dashboard_login: bool,
    /// Webhooks file (TOML): where to post when a tournament finishes, an SPRT decides, a
    /// tournament pauses, a worker looks suspect or a build fails (docs/operations.md).
    #[arg(long, value_name = "FILE")]
    webhooks: Option<PathBuf>,
    /// Where workers fetch programs and data files by sha256: an HTTP cache or CDN in
    /// front of this coordinator's `/artifacts/` (e.g. https://cdn.example/artifacts/)
    /// [default: the coordinator's own /artifacts/].
    #[arg(long, value_name = "URL")]
    artifacts_url: Option<String>,
    /// The most MiB an uploaded program or data file may have (they are kept as files in
    /// the data directory, streamed in and out, never whole in memory) [default: 4096].
    #[arg(long, value_name = "MIB")]
    max_artifact_mib: Option<u64>,
    /// A host programs and data files may be linked to though it is one of the fleet's own
    /// addresses (loopback, private, link-local) or a local name, e.g. an object store
    /// on the cluster's network; repeat it for several. Others are refused, as workers
    /// would issue GETs to them.
    #[arg(long = "allow-link-host", value_name = "HOST")]
    allow_link_hosts: Vec<String>,
    /// The most of the fleet one author's live tests take together, in tests of weight 1
    /// (the fleet is shared by core-time: docs/operations.md) [default: 2].
    #[arg(long, value_name = "SHARES")]
    author_shares: Option<f64>,
    /// Search again one data generation pair of built-in players in N, on average, to
    /// catch a worker that makes up its scores (docs/datagen.md); 0 for none [default: 16].
    #[arg(long, value_name = "N")]
    search_again_every: Option<u8>,
    /// The tourney program offered to workers run with `--update`, which replace
    /// themselves with it between leases when theirs differs and is not newer: `auto`
    /// (this coordinator's own program), `none`, or a file (docs/operations.md)
    /// [default: auto].
    #[arg(long, value_name = "auto|none|FILE")]
    worker_release: Option<String>,
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
    insecure: Option<bool>,
    cache_mb: Option<u64>,
    max_slots: Option<u32>,
    max_pairs_per_lease: Option<usize>,
    registrations_per_token: Option<usize>,
    max_live_tournaments: Option<usize>,
    approval: Option<bool>,
    dashboard_login: Option<bool>,
    webhooks: Option<PathBuf>,
    artifacts_url: Option<String>,
    max_artifact_mib: Option<u64>,
    allow_link_hosts: Option<Vec<String>>,
    author_shares: Option<f64>,
    search_again_every: Option<u8>,
    worker_release: Option<String>,
}

/// The coordinator's settings: flags over the settings file over the defaults.
#[derive(Debug, PartialEq)]
struct CoordinatorSetup {
    listen: Option<SocketAddr>,
    insecure: bool,
    data: PathBuf,
    worker_token_file: Option<PathBuf>,
    admin_token_file: Option<PathBuf>,
    tls: Option<(PathBuf, PathBuf)>,
    lease_seconds: u64,
    /// sled's page cache, MiB.
    cache_mb: u64,
    /// The bounds on workers: slots, pairs a lease, registrations a token.
    bounds: (u32, usize, usize),
    /// Tournaments queued, running or paused at once.
    max_live_tournaments: usize,
    /// Users' tests wait for an approver.
    approval: bool,
    /// The dashboard's data for logged-in users only.
    dashboard_login: bool,
    /// The webhooks file.
    webhooks: Option<PathBuf>,
    /// Where workers fetch artifacts (empty: the coordinator's own `/artifacts/`).
    artifacts_url: String,
    /// The most bytes an uploaded artifact may have.
    max_artifact_bytes: u64,
    /// Internal hosts artifacts may be linked to.
    link_hosts: Vec<String>,
    /// The most of the fleet one author's tests take together.
    author_shares: f64,
    /// One data generation pair in this many searched again (0: none).
    search_again_every: u8,
    /// The program offered to workers that update themselves (none: nothing offered).
    worker_release: Option<PathBuf>,
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
            listen: self.listen.or(file.listen),
            insecure: self.insecure || file.insecure.unwrap_or(false),
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
            cache_mb: self
                .cache_mb
                .or(file.cache_mb)
                .unwrap_or(tourney_store::DEFAULT_CACHE_MB),
            bounds: {
                let d = Settings::default();
                (
                    self.max_slots
                        .or(file.max_slots)
                        .unwrap_or(d.max_slots)
                        .max(1),
                    self.max_pairs_per_lease
                        .or(file.max_pairs_per_lease)
                        .unwrap_or(d.max_pairs_per_lease)
                        .max(1),
                    self.registrations_per_token
                        .or(file.registrations_per_token)
                        .unwrap_or(d.registrations_per_token)
                        .max(1),
                )
            },
            max_live_tournaments: self
                .max_live_tournaments
                .or(file.max_live_tournaments)
                .unwrap_or(Settings::default().max_live_tournaments)
                .max(1),
            approval: !self.no_approval && file.approval.unwrap_or(true),
            dashboard_login: self.dashboard_login || file.dashboard_login.unwrap_or(false),
            webhooks: self.webhooks.clone().or(in_file(file.webhooks)),
            artifacts_url: match self.artifacts_url.clone().or(file.artifacts_url) {
                Some(url) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                    bail!("artifacts_url: '{url}' is not an http:// or https:// URL")
                }
                url => url.unwrap_or_default(),
            },
            max_artifact_bytes: match self.max_artifact_mib.or(file.max_artifact_mib) {
                Some(0) => bail!("max_artifact_mib: 0 would refuse every upload"),
                Some(mib) => mib.saturating_mul(1 << 20),
                None => tourney_proto::DEFAULT_MAX_ARTIFACT_BYTES,
            },
            link_hosts: match &self.allow_link_hosts[..] {
                [] => file.allow_link_hosts.unwrap_or_default(),
                hosts => hosts.to_vec(),
            },
            author_shares: match self.author_shares.or(file.author_shares) {
                Some(s) if !(s > 0.0 && s.is_finite()) => {
                    bail!("author_shares: {s} must be a number above 0")
                }
                Some(s) => s,
                None => tourney_coordinator::scheduler::AUTHOR_SHARES,
            },
            search_again_every: (self.search_again_every)
                .or(file.search_again_every)
                .unwrap_or(tourney_coordinator::tournaments::search_again::SAMPLE_EVERY),
            worker_release: match (&self.worker_release, &file.worker_release) {
                (Some(flag), _) => worker_release(flag, Path::new(""))?,
                (None, Some(key)) => worker_release(key, &base)?,
                (None, None) => worker_release("auto", &base)?,
            },
        })
    }
}

/// The program offered to workers that update themselves, as `value` names it (`auto`,
/// `none`, or a file, relative to `base`).
fn worker_release(value: &str, base: &Path) -> Result<Option<PathBuf>> {
    match value {
        "none" => Ok(None),
        "auto" => Ok(std::env::current_exe().ok()),
        file => {
            let path = base.join(file);
            if !path.is_file() {
                bail!("worker_release: '{}' is not a file", path.display());
            }
            Ok(Some(path))
        }
    }
}

/// Where a service's tokens come from.
#[derive(Debug, Clone, PartialEq)]
enum TokenSource {
    File(PathBuf),
    Env(&'static str),
}

impl TokenSource {
    /// A token file if one is set, else the environment variable if it is set.
    fn of(file: &Option<PathBuf>, env: &'static str) -> Option<TokenSource> {
        match file {
            Some(path) => Some(TokenSource::File(path.clone())),
            None => std::env::var_os(env).map(|_| TokenSource::Env(env)),
        }
    }

    /// The tokens (an empty file or variable is an error, never "no check").
    fn read(&self) -> Result<Vec<(String, String)>> {
        match self {
            TokenSource::File(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("reading {}", path.display()))?;
                Ok(Tokens::parse(&text, &path.display().to_string())?)
            }
            TokenSource::Env(name) => {
                let text = std::env::var(name).unwrap_or_default();
                Ok(Tokens::parse(&text, &format!("${name}"))?)
            }
        }
    }
}

/// What may listen where: beyond loopback only with both tokens, or `insecure`. The
/// default address follows: everywhere with both tokens, loopback without.
fn listen_address(
    listen: Option<SocketAddr>,
    both_tokens: bool,
    insecure: bool,
) -> Result<SocketAddr> {
    let port = 7070;
    let addr = listen.unwrap_or_else(|| {
        if both_tokens {
            SocketAddr::from(([0, 0, 0, 0], port))
        } else {
            SocketAddr::from(([127, 0, 0, 1], port))
        }
    });
    if !addr.ip().is_loopback() && !both_tokens && !insecure {
        bail!(
            "refusing to serve {addr} without both a worker and an admin token: anyone who \
             reaches it could run commands on the workers through a tournament's engines. Set \
             --worker-token-file and --admin-token-file (or TOURNEY_WORKER_TOKEN and \
             TOURNEY_ADMIN_TOKEN), listen on 127.0.0.1, or pass --insecure"
        );
    }
    Ok(addr)
}

/// Re-reads the token files at every SIGHUP; a file that no longer reads keeps the tokens
/// in force, and says why in the log.
fn reload_on_sighup(services: Vec<(&'static str, TokenSource, Tokens)>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hangups) = signal(SignalKind::hangup()) else {
        tracing::warn!("no SIGHUP handling: tokens are read at start only");
        return;
    };
    tokio::spawn(async move {
        while hangups.recv().await.is_some() {
            for (service, source, tokens) in &services {
                match source.read() {
                    Ok(fresh) => {
                        tokens.replace(fresh);
                        tracing::info!(service, names = ?tokens.names(), "tokens reloaded");
                    }
                    Err(e) => tracing::error!(
                        service,
                        error = %format!("{e:#}"),
                        "tokens not reloaded: the ones in force stay"
                    ),
                }
            }
        }
    });
}

/// The coordinator's settings from its command line (and file), with its webhooks read.
fn settings(setup: &CoordinatorSetup, webhooks: tourney_notify::NotifySettings) -> Settings {
    let lease_ms = setup.lease_seconds * 1000;
    Settings {
        lease_ms,
        heartbeat_ms: (lease_ms / 6).max(500),
        max_slots: setup.bounds.0,
        max_pairs_per_lease: setup.bounds.1,
        registrations_per_token: setup.bounds.2,
        max_live_tournaments: setup.max_live_tournaments,
        approval: setup.approval,
        dashboard_login: setup.dashboard_login,
        webhooks,
        artifacts_url: setup.artifacts_url.clone(),
        max_artifact_bytes: setup.max_artifact_bytes,
        link_hosts: setup.link_hosts.clone(),
        author_shares: setup.author_shares,
        search_again_every: setup.search_again_every,
        data_dir: Some(setup.data.clone()),
        worker_release: setup.worker_release.clone(),
        ..Settings::default()
    }
}

/// The worker's and the admin's tokens read from files (not from the environment): the
/// ones SIGHUP reads again.
fn reloadable(
    [worker_source, admin_source]: [Option<TokenSource>; 2],
    [worker_tokens, admin_tokens]: [&Option<Tokens>; 2],
) -> Vec<(&'static str, TokenSource, Tokens)> {
    [
        ("worker", worker_source, worker_tokens),
        ("admin", admin_source, admin_tokens),
    ]
    .into_iter()
    .filter_map(|(service, source, tokens)| match (source, tokens) {
        (Some(source @ TokenSource::File(_)), Some(tokens)) => {
            Some((service, source, tokens.clone()))
        }
        _ => None,
    })
    .collect()
}

pub(crate) fn run(args: &CoordinatorArgs) -> Result<ExitCode> {
    raise_open_files();
    let setup = args.setup()?;
    let worker_source = TokenSource::of(&setup.worker_token_file, "TOURNEY_WORKER_TOKEN");
    let admin_source = TokenSource::of(&setup.admin_token_file, "TOURNEY_ADMIN_TOKEN");
    let worker_tokens = worker_source
        .as_ref()
        .map(|s| s.read().map(Tokens::new))
        .transpose()?;
    let admin_tokens = admin_source
        .as_ref()
        .map(|s| s.read().map(Tokens::new))
        .transpose()?;
    let both = worker_tokens.is_some() && admin_tokens.is_some();
    let listen = listen_address(setup.listen, both, setup.insecure)?;
    let insecure = !both && !listen.ip().is_loopback();
    let webhooks = match &setup.webhooks {
        Some(path) => tourney_notify::NotifySettings::read(path).map_err(anyhow::Error::msg)?,
        None => Default::default(),
    };
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let stop = stop_signal();
        let store = Store::open_data_dir(&setup.data, setup.cache_mb)?;
        let coordinator = Coordinator::open(
            store,
            settings(&setup, webhooks),
            &prometheus::Registry::new(),
        )?;
        let tls = match &setup.tls {
            Some((c, k)) => Some((
                std::fs::read(c).with_context(|| format!("reading {}", c.display()))?,
                std::fs::read(k).with_context(|| format!("reading {}", k.display()))?,
            )),
            None => None,
        };
        reload_on_sighup(reloadable(
            [worker_source, admin_source],
            [&worker_tokens, &admin_tokens],
        ));
        let options = ServerOptions {
            worker_tokens,
            admin_tokens,
            tls,
            insecure,
        };
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        if insecure {
            tracing::warn!(
                %listen,
                "INSECURE: serving beyond loopback without both tokens (--insecure): anyone who \
                 reaches this port can submit tournaments whose engines run on the workers, \
                 and report results"
            );
        }
        tracing::info!(
            listen = %listener.local_addr()?,
            data = %setup.data.display(),
            "coordinator serving"
        );
        serve(coordinator, listener, options, async {
            stop.await;
            tracing::info!("stopping");
        })
        .await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests;
