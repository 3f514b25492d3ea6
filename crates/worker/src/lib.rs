//! The worker: leases game pairs from a coordinator, plays them (built-in players
//! in-process, outside engines as processes), reports the results, and keeps its leases
//! alive with heartbeats.
//!
//! Games run on blocking threads, at most `concurrency` at a time and only while their
//! costliest sides' threads fit in the worker's `cores`. Finished results are kept until
//! the coordinator acknowledges them, across reconnections (with backoff). On shutdown the
//! worker takes no new work, finishes the games it is playing and reports them.

#![deny(missing_docs)]

pub mod affinity;
mod ahead;
mod builds;
mod desk;
mod download;
pub mod gpus;
mod lease_loop;
mod metrics;
mod play;
mod pool;
mod ready;
mod update;

use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tourney_runner::confine::EnginePolicy;

use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tourney_model::job::PairJob;
use tourney_proto::v1 as pb;
use tourney_proto::v1::worker_client::WorkerClient;

pub use builds::cached_build;
pub use metrics::WorkerMetrics;
pub use play::{Fetcher, PlayError, command_line};
pub use update::SelfUpdate;

/// Plays a pair on this thread exactly as a worker's game slot does (built-in players and
/// outside engine processes kept for the next pair included): its result, with the games'
/// records LZ4-compressed. For benchmarks of the worker's own cost.
///
/// # Errors
/// No game could be played (an engine unfit, a malformed job).
pub fn play_here(
    job: &PairJob,
    policy: &EnginePolicy,
    metrics: &WorkerMetrics,
) -> Result<pb::PairResult, PlayError> {
    let leased = [job.first.clone(), job.second.clone()];
    play::play_pair(job, &leased, &AtomicBool::new(false), policy, None, metrics)
        .map(|r| r.expect("never cancelled"))
}

/// Makes `job`'s outside engines ready as a fresh worker process's game slot does before
/// their first game: each built from source through the host cache at `cache_dir` (built
/// there once, then taken from it), then its bench signature measured and checked. For
/// benchmarks of a build against a cached start.
///
/// # Errors
/// An engine cannot play here: why.
pub fn ready_here(
    job: &mut PairJob,
    cache_dir: &std::path::Path,
    policy: &EnginePolicy,
) -> Result<(), String> {
    let builds = builds::BuildCache::new(
        cache_dir.to_path_buf(),
        1 << 30,
        Duration::from_secs(900),
        policy.clone(),
    );
    ready::Readiness::new(builds, policy.clone())
        .ready(job)
        .map(drop)
        .map_err(|e| format!("{}: {}", e.engine, e.reason))
}

/// Ends the outside engine processes kept for next pairs (`quit`, then at most a second
/// each), as a stopping worker does; `metrics`' idle gauges then count what is left.
pub fn retire_engines(metrics: &WorkerMetrics) {
    play::retire_engines(metrics);
}

/// How a worker runs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The coordinator's URL, e.g. `http://127.0.0.1:7070`.
    pub coordinator: String,
    /// The worker token, if the coordinator wants one.
    pub token: Option<String>,
    /// The worker's name.
    pub name: String,
    /// The most games played at once.
    pub concurrency: usize,
    /// The cores its games may keep at once: a game keeps its costliest side's threads
    /// ([`PairJob::cores`]), and starts only when they are free.
    pub cores: usize,
    /// CA certificate (PEM) for a TLS coordinator.
    pub tls_ca: Option<Vec<u8>>,
    /// The host's cache of outside engines' programs, data files and builds from source:
    /// every worker of a host that is given the same directory shares it.
    pub cache_dir: PathBuf,
    /// The most bytes the cache's builds and data files may take (least recently used
    /// go first).
    pub cache_bytes: u64,
    /// The most bytes one program or data file may have; it is streamed to the cache,
    /// never held in memory.
    pub artifact_bytes: u64,
    /// The most time one build from source may take.
    pub build_timeout: Duration,
    /// How outside engines are confined (the user they run as, the environment they get).
    pub engine_policy: EnginePolicy,
    /// Stop (as on a signal, and return `Ok`) once no work has come for this long, for
    /// batch schedulers; `None`: run until stopped.
    pub exit_when_idle: Option<Duration>,
    /// Its labels and opt-outs, sent as it registers.
    pub choices: Choices,
    /// The units games are pinned to (`--affinity`; see [`affinity::units`]): each game
    /// takes one a core it keeps, and the engines it starts run there. `None`: unpinned.
    pub pinned: Option<Vec<affinity::Unit>>,
    /// Replace this program with the release the coordinator offers (`--update`), between
    /// leases; `None`: never.
    pub update: Option<SelfUpdate>,
}

/// How a worker's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Ended {
    /// It was told to stop (or found no work for its `exit_when_idle`).
    Stopped,
    /// It replaced its program with the release of `version`: run it again.
    Updated {
        /// The release's version.
        version: String,
    },
}

/// What a worker says it is and takes, beyond its cores: the coordinator offers it only
/// pairs of tournaments whose `[requires]` it meets and that it does not opt out of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// Its labels (`--label big-cache`), for tournaments' `requires.labels`.
    pub labels: Vec<String>,
    /// Tournament labels it restricts itself to (`--only`; empty: any).
    pub only: Vec<String>,
    /// Whether it turns down tournaments marked `noisy` (`--avoid-noisy`).
    pub avoid_noisy: bool,
    /// Its GPUs ([`gpus::detect`], or `--gpus`): reported as it registers, and given to
    /// the games of tournaments that require them, each game devices of its own.
    pub gpus: Vec<gpus::Gpu>,
    /// The most games one GPU serves at once (`--games-per-gpu`; 0 is taken as 1).
    pub games_per_gpu: u32,
}

/// A connected client with the token attached to every call.
type Client =
    WorkerClient<tonic::service::interceptor::InterceptedService<Channel, TokenInterceptor>>;

/// Adds `authorization: Bearer <token>`, and after registration the registration's
/// secret as `tourney-session`.
#[derive(Clone)]
pub struct TokenInterceptor {
    token: Option<MetadataValue<tonic::metadata::Ascii>>,
    session: Option<MetadataValue<tonic::metadata::Ascii>>,
}

impl TokenInterceptor {
    /// An interceptor for `token` (none: adds nothing).
    ///
    /// # Panics
    /// If the token contains characters not allowed in a header.
    pub fn new(token: Option<&str>) -> Self {
        TokenInterceptor {
            token: token.map(|t| {
                format!("Bearer {t}")
                    .parse()
                    .expect("tokens are printable ASCII")
            }),
            session: None,
        }
    }

    /// The same, also sending a registration's `session` secret.
    ///
    /// # Errors
    /// The secret is not a valid header value.
    pub fn with_session(
        mut self,
        session: &str,
    ) -> Result<Self, tonic::metadata::errors::InvalidMetadataValue> {
        self.session = Some(session.parse()?);
        Ok(self)
    }
}

impl tonic::service::Interceptor for TokenInterceptor {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, tonic::Status> {
        if let Some(value) = &self.token {
            request
                .metadata_mut()
                .insert("authorization", value.clone());
        }
        if let Some(value) = &self.session {
            request
                .metadata_mut()
                .insert("tourney-session", value.clone());
        }
        Ok(request)
    }
}

/// A channel to `url`, with TLS when the URL is `https` (using `ca` if given).
///
/// # Errors
/// A bad URL or TLS setting, or no connection.
pub async fn connect(url: &str, ca: Option<&[u8]>) -> Result<Channel, tonic::transport::Error> {
    let mut endpoint =
        Endpoint::from_shared(url.to_string())?.connect_timeout(Duration::from_secs(5));
    if url.starts_with("https") {
        let mut tls = ClientTlsConfig::new().with_enabled_roots();
        if let Some(ca) = ca {
            tls = tls.ca_certificate(Certificate::from_pem(ca));
        }
        endpoint = endpoint.tls_config(tls)?;
    }
    endpoint.connect().await
}

struct Session {
    client: Client,
    worker_id: String,
    heartbeat: Duration,
    /// The least time between reports (the coordinator's cadence).
    report_every: Duration,
    /// How it fetches artifacts.
    fetcher: play::Fetcher,
    /// The release offered as it registered (to a worker that updates itself).
    release: Option<pb::Release>,
}

/// The time between reports the coordinator asks for (`0`, from an older one: a fifth of
/// a second), within a fifth of a second and two minutes.
fn report_every(report_ms: u64) -> Duration {
    match report_ms {
        0 => Duration::from_millis(200),
        ms => Duration::from_millis(ms.clamp(200, 120_000)),
    }
}

impl Session {
    /// Takes the cadence a heartbeat answered (0: unchanged).
    fn set_cadence(&mut self, heartbeat_ms: u64, report_ms: u64) {
        if heartbeat_ms > 0 {
            self.heartbeat = Duration::from_millis(heartbeat_ms.max(100));
        }
        if report_ms > 0 {
            self.report_every = report_every(report_ms);
        }
    }
}

/// Why a worker stops, or cannot reach its coordinator.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkerError {
    /// The coordinator refused the worker token: retrying cannot help.
    #[error("the coordinator refused the worker token")]
    Refused,
    /// The coordinator could not be reached (retried with backoff).
    #[error("connecting to {url}: {source}")]
    Connect {
        /// The coordinator's URL.
        url: String,
        /// What failed.
        source: tonic::transport::Error,
    },
    /// The coordinator answered the registration with an error (retried with backoff).
    #[error("registering: {0}")]
    Register(String),
    /// The coordinator is too busy to register it now: come back after this long.
    #[error("the coordinator is busy: registering again in a while")]
    Busy(Duration),
    /// The coordinator refused what the worker said of itself (a malformed `--label`):
    /// retrying cannot help.
    #[error("the coordinator refused the registration: {0}")]
    Rejected(String),
    /// The coordinator refuses this version, and offers the release to update to.
    #[error("the coordinator wants tourney {} or later: updating", .0.version)]
    MustUpdate(Box<pb::Release>),
}

async fn open_session(options: &WorkerOptions) -> Result<Session, WorkerError> {
    let channel = connect(&options.coordinator, options.tls_ca.as_deref())
        .await
        .map_err(|source| WorkerError::Connect {
            url: options.coordinator.clone(),
            source,
        })?;
    let token = TokenInterceptor::new(options.token.as_deref());
    let mut client = WorkerClient::with_interceptor(channel.clone(), token.clone())
        .max_decoding_message_size(64 << 20);
    // Its first call measures the machine's speed (a fifth of a second): off the runtime.
    let host = tokio::task::spawn_blocking(host_facts).await.ok();
    let reply = client
        .register(pb::RegisterRequest {
            name: options.name.clone(),
            slots: options.concurrency as u32,
            version: env!("CARGO_PKG_VERSION").to_string(),
            games: vec!["loa".into(), "amazons".into()],
            host,
            cores: options.cores as u32,
            labels: options.choices.labels.clone(),
            only: options.choices.only.clone(),
            avoid_noisy: options.choices.avoid_noisy,
            gpus: (options.choices.gpus.iter())
                .map(|g| pb::Gpu {
                    vendor: g.facts.vendor.clone(),
                    model: g.facts.model.clone(),
                    memory_mb: g.facts.memory_mb,
                })
                .collect(),
            updates: options.update.is_some(),
            platform: tourney_model::release::this_platform(),
        })
        .await
        .map_err(|e| match (update::release_of_refusal(&e), e.code()) {
            (Some(release), _) => WorkerError::MustUpdate(Box::new(release)),
            (_, tonic::Code::Unauthenticated) => WorkerError::Refused,
            (_, tonic::Code::InvalidArgument) => WorkerError::Rejected(e.message().to_string()),
            (_, tonic::Code::ResourceExhausted) => WorkerError::Busy(
                tourney_proto::retry_pushback(&e).unwrap_or(Duration::from_secs(1)),
            ),
            _ => WorkerError::Register(e.message().to_string()),
        })?
        .into_inner();
    tracing::info!(worker = %reply.worker_id, slots = options.concurrency, "registered");
    // Every later call carries the registration's secret.
    let session = token
        .with_session(&reply.session)
        .map_err(|e| WorkerError::Register(format!("the session secret: {e}")))?;
    let client =
        WorkerClient::with_interceptor(channel, session).max_decoding_message_size(64 << 20);
    Ok(Session {
        release: reply.release,
        client,
        worker_id: reply.worker_id,
        heartbeat: Duration::from_millis(reply.heartbeat_ms.max(100)),
        report_every: report_every(reply.report_ms),
        fetcher: fetcher(options, &reply.artifacts_url),
    })
}

/// How a worker fetches artifacts: from `artifacts_url` (empty: the coordinator's own
/// `/artifacts/`), within its host cache's bounds.
pub(crate) fn fetcher(options: &WorkerOptions, artifacts_url: &str) -> play::Fetcher {
    let base = match artifacts_url {
        "" => format!("{}/artifacts/", options.coordinator.trim_end_matches('/')),
        url => url.to_string(),
    };
    (play::Fetcher::new(&base, options.tls_ca.as_deref()))
        .at_most(options.artifact_bytes)
        .bounded_by(builds::BuildCache::new(
            options.cache_dir.clone(),
            options.cache_bytes,
            options.build_timeout,
            options.engine_policy.clone(),
        ))
}

/// Runs a worker until `shutdown` completes, then finishes and reports its games,
/// recording what it does in `metrics`; or until it has updated itself
/// ([`WorkerOptions::update`]), when every pair it held is played and reported.
///
/// # Errors
/// Only [`WorkerError::Refused`] (there is no point retrying); connection problems are
/// retried.
pub async fn run(
    options: WorkerOptions,
    metrics: WorkerMetrics,
    shutdown: impl Future<Output = ()>,
) -> Result<Ended, WorkerError> {
    lease_loop::Worker::new(options, metrics)
        .run(shutdown)
        .await
}

/// What this machine is, for the coordinator's machines page and for tournaments'
/// `[requires]`: the CPU model and features, the cores this process may use, the memory
/// and the operating system (from `/proc`; empty where it does not tell), and one core's
/// speed on the built-in benchmark (measured once).
fn host_facts() -> pb::HostFacts {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    let field = |text: &str, key: &str| {
        (text.lines())
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
            .unwrap_or_default()
    };
    let memory_kb: u64 = field(&read("/proc/meminfo"), "MemTotal")
        .trim_end_matches(" kB")
        .parse()
        .unwrap_or(0);
    let release = read("/proc/sys/kernel/osrelease");
    let cpuinfo = read("/proc/cpuinfo");
    let flags = field(&cpuinfo, "flags");
    pb::HostFacts {
        cpu_model: field(&cpuinfo, "model name"),
        cpu_features: flags.split_whitespace().map(str::to_string).collect(),
        cores: std::thread::available_parallelism().map_or(0, |n| n.get() as u32),
        memory_mb: memory_kb / 1024,
        os: format!("{} {}", std::env::consts::OS, release.trim()),
        speed_nps: play::speed_nps() as u64,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_coordinator_checks_clocks_with_the_scale_a_worker_uses() {
        assert_eq!(
            tourney_ai::speed::MOST_SCALE,
            tourney_model::job::MOST_CLOCK_SCALE
        );
    }
}
