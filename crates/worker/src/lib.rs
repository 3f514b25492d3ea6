//! The worker: leases game pairs from a coordinator, plays them (built-in players
//! in-process, outside engines as processes), reports the results, and keeps its leases
//! alive with heartbeats.
//!
//! Games run on blocking threads, `concurrency` at a time. Finished results are kept until
//! the coordinator acknowledges them, across reconnections (with backoff). On shutdown the
//! worker takes no new work, finishes the games it is playing and reports them.

#![deny(missing_docs)]

mod ahead;
mod desk;
mod metrics;
mod play;
mod pool;

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tourney_runner::confine::EnginePolicy;

use tonic::Request;
use tonic::metadata::MetadataValue;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tourney_model::job::PairJob;
use tourney_proto::v1 as pb;
use tourney_proto::v1::worker_client::WorkerClient;

use metrics::GaugeShare;
pub use metrics::WorkerMetrics;
pub use play::PlayError;

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
    play::play_pair(job, &leased, &AtomicBool::new(false), policy, metrics)
        .map(|r| r.expect("never cancelled"))
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
    /// Games played at once.
    pub concurrency: usize,
    /// CA certificate (PEM) for a TLS coordinator.
    pub tls_ca: Option<Vec<u8>>,
    /// Where outside engines' programs are cached.
    pub cache_dir: PathBuf,
    /// How outside engines are confined (the user they run as, the environment they get).
    pub engine_policy: EnginePolicy,
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
    let reply = client
        .register(pb::RegisterRequest {
            name: options.name.clone(),
            slots: options.concurrency as u32,
            version: env!("CARGO_PKG_VERSION").to_string(),
            games: vec!["loa".into(), "amazons".into()],
        })
        .await
        .map_err(|e| match e.code() {
            tonic::Code::Unauthenticated => WorkerError::Refused,
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
        client,
        worker_id: reply.worker_id,
        heartbeat: Duration::from_millis(reply.heartbeat_ms.max(100)),
    })
}

/// Shortest time between two reports.
const REPORT_EVERY: Duration = Duration::from_millis(200);

/// How long a report that failed waits before it is sent again.
const REPORT_RETRY: Duration = Duration::from_secs(1);

/// The smallest part a report is split into (a pair's games alone can take more: it goes
/// alone).
const MIN_PART_BYTES: usize = 256 << 10;

/// The most results one report carries, whatever their size.
const MAX_PART_RESULTS: usize = 4096;

/// Takes the first results of `unreported` that fit in `bytes` decompressed (at least
/// one), at most [`MAX_PART_RESULTS`]: one report's part.
fn take_part(unreported: &mut Vec<Outcome>, bytes: usize) -> Vec<Outcome> {
    let mut total = 0usize;
    let mut n = 0;
    for outcome in unreported.iter() {
        let size = match outcome {
            Outcome::Played(r) => r.games_size().unwrap_or(0),
            Outcome::Failed(f) => f.reason.len(),
        };
        if n > 0 && (total.saturating_add(size) > bytes || n == MAX_PART_RESULTS) {
            break;
        }
        total = total.saturating_add(size);
        n += 1;
    }
    unreported.drain(..n).collect()
}

/// What a worker tells the coordinator about a pair.
#[derive(Clone)]
enum Outcome {
    /// Both games played.
    Played(pb::PairResult),
    /// No game could be played.
    Failed(pb::PairFailure),
}

/// Runs a worker until `shutdown` completes, then finishes and reports its games,
/// recording what it does in `metrics`.
///
/// # Errors
/// Only [`WorkerError::Refused`] (there is no point retrying); connection problems are
/// retried.
pub async fn run(
    options: WorkerOptions,
    metrics: WorkerMetrics,
    shutdown: impl Future<Output = ()>,
) -> Result<(), WorkerError> {
    tokio::pin!(shutdown);
    let concurrency = options.concurrency.max(1);
    let mut slots_shown = GaugeShare::new(&metrics.slots);
    slots_shown.set(concurrency as i64);
    let mut queued_shown = GaugeShare::new(&metrics.pairs_queued);
    let desk = Arc::new(desk::Desk::new(concurrency, options.engine_policy.clone()));
    let mut unreported: Vec<Outcome> = Vec::new();
    // Pairs per lease not finished yet (queued or in play), for heartbeats.
    let mut leases: HashMap<u64, usize> = HashMap::new();
    // Cancellation flag of each lease, set when the coordinator says to drop it.
    let mut cancels: HashMap<u64, Arc<AtomicBool>> = HashMap::new();
    // The report under way, with the results it carries (returned if it fails, with how
    // long the coordinator asked to wait before sending them again).
    type Reporting =
        tokio::task::JoinHandle<Result<(), (tonic::Code, Option<Duration>, Vec<Outcome>)>>;
    // The most a report carries decompressed: well inside the coordinator's budget, halved
    // if it still says a report is too large.
    let mut part_bytes = tourney_proto::REPORT_PART_JSON;
    let mut report_task: Option<Reporting> = None;
    let mut stopping = false;
    let mut backoff = Duration::from_millis(100);
    let mut session: Option<Session> = None;
    let mut idle_until = tokio::time::Instant::now();
    let mut next_heartbeat = tokio::time::Instant::now();
    let mut next_report = tokio::time::Instant::now();
    let forget = |leases: &mut HashMap<u64, usize>,
                  cancels: &mut HashMap<u64, Arc<AtomicBool>>,
                  lease: u64,
                  n: usize| {
        if let Some(count) = leases.get_mut(&lease) {
            *count = count.saturating_sub(n);
            if *count == 0 {
                leases.remove(&lease);
                cancels.remove(&lease);
            }
        }
    };
    loop {
        if stopping {
            // Leased pairs not started are returned: their leases expire and they are
            // offered again.
            for lease in desk.unqueue(None) {
                forget(&mut leases, &mut cancels, lease, 1);
            }
        }
        // Results are taken when they are to be reported: a game thread wakes this side
        // for the first result on an empty desk, not for every pair.
        // A worker with nothing left to play reports at once: there is nothing to batch with.
        let report_due = stopping || desk.held() == 0 || tokio::time::Instant::now() >= next_report;
        if report_due && report_task.is_none() {
            for done in desk.take_finished() {
                forget(&mut leases, &mut cancels, done.lease, 1);
                // A result of a dropped lease is still sent: the coordinator keeps a
                // result for a pair nobody else completed and ignores repeats.
                unreported.extend(done.outcome);
            }
        }
        if stopping
            && desk.threads() == 0
            && !desk.has_finished()
            && unreported.is_empty()
            && report_task.is_none()
        {
            // The engine processes kept for next pairs get `quit` now.
            let metrics = metrics.clone();
            let _ = tokio::task::spawn_blocking(move || play::retire_engines(&metrics)).await;
            return Ok(());
        }
        queued_shown.set(desk.queued() as i64);
        desk.start_threads(&metrics);
        if session.is_none() {
            match open_session(&options).await {
                Ok(s) => {
                    session = Some(s);
                    backoff = Duration::from_millis(100);
                }
                Err(WorkerError::Refused) => return Err(WorkerError::Refused),
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_s = backoff.as_secs_f64(), "no session");
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = &mut shutdown, if !stopping => stopping = true,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(10));
                    continue;
                }
            }
        }
        let s = session.as_mut().expect("connected above");
        let mut failed = false;
        // Report what is finished, in the background: a report waits for the coordinator's
        // durable commit, and nothing else should wait with it. Reports go at most every
        // REPORT_EVERY, so fast games share RPCs and commits.
        if report_task.is_none() && !unreported.is_empty() && report_due {
            next_report = tokio::time::Instant::now() + REPORT_EVERY;
            let batch = take_part(&mut unreported, part_bytes);
            let mut client = s.client.clone();
            let worker_id = s.worker_id.clone();
            let rejected = metrics.results_rejected.clone();
            report_task = Some(tokio::spawn(async move {
                let mut request = pb::ReportRequest {
                    worker_id,
                    ..Default::default()
                };
                for outcome in &batch {
                    match outcome {
                        Outcome::Played(r) => request.results.push(r.clone()),
                        Outcome::Failed(f) => request.failures.push(f.clone()),
                    }
                }
                match client.report(request).await {
                    Ok(reply) => {
                        let reply = reply.into_inner();
                        if reply.rejected > 0 {
                            // Not sent again: the coordinator said why in its log, and
                            // offers the pairs to other workers.
                            rejected.inc_by(u64::from(reply.rejected));
                            tracing::warn!(
                                rejected = reply.rejected,
                                accepted = reply.accepted,
                                "the coordinator refused reported results (its log says why)"
                            );
                        }
                        Ok(())
                    }
                    Err(e) => {
                        let pushback = (e.metadata().get(tourney_proto::RETRY_PUSHBACK))
                            .and_then(|v| v.to_str().ok()?.parse().ok())
                            .map(Duration::from_millis);
                        Err((e.code(), pushback, batch))
                    }
                }
            }));
        }
        // Keep leases alive; drop those the coordinator ended.
        if tokio::time::Instant::now() >= next_heartbeat {
            let request = pb::HeartbeatRequest {
                worker_id: s.worker_id.clone(),
                lease_ids: leases.keys().copied().collect(),
                busy_slots: desk.threads() as u32,
            };
            match s.client.heartbeat(request).await {
                Ok(reply) => {
                    for lease in reply.into_inner().drop_leases {
                        if let Some(flag) = cancels.get(&lease) {
                            flag.store(true, Ordering::Relaxed);
                        }
                        let removed = desk.unqueue(Some(lease)).len();
                        forget(&mut leases, &mut cancels, lease, removed);
                    }
                }
                Err(_) => failed = true,
            }
            next_heartbeat = tokio::time::Instant::now() + s.heartbeat;
        }
        // Lease ahead, so a finished game finds the next pair waiting.
        let wanted = desk.wanted();
        if !failed && !stopping && wanted > 0 && tokio::time::Instant::now() >= idle_until {
            let request = pb::LeaseRequest {
                worker_id: s.worker_id.clone(),
                max_pairs: wanted as u32,
            };
            match s.client.lease(request).await {
                Ok(reply) => {
                    let lease = reply.into_inner();
                    if lease.jobs.is_empty() {
                        idle_until = tokio::time::Instant::now() + Duration::from_millis(100);
                    }
                    let cancel = Arc::clone(cancels.entry(lease.lease_id).or_default());
                    for job in lease.jobs {
                        let (job_tournament, job_pair) = (job.tournament, job.pair);
                        // A job that does not fit the model (an unknown game, say) cannot
                        // be played here: reported like an engine that cannot start.
                        let prepared = match PairJob::try_from(job) {
                            Ok(job) => {
                                let leased = [job.first.clone(), job.second.clone()];
                                play::prepare(&mut s.client, &s.worker_id, &options.cache_dir, job)
                                    .await
                                    .map(|job| (job, leased))
                            }
                            Err(e) => Err(e.into()),
                        };
                        match prepared {
                            Ok((job, leased)) => {
                                *leases.entry(lease.lease_id).or_default() += 1;
                                desk.push(desk::Queued {
                                    lease: lease.lease_id,
                                    job,
                                    leased,
                                    cancelled: Arc::clone(&cancel),
                                });
                            }
                            Err(reason) => {
                                tracing::warn!(
                                    lease = lease.lease_id,
                                    tournament = job_tournament,
                                    pair = job_pair,
                                    %reason,
                                    "pair cannot be played here"
                                );
                                unreported.push(Outcome::Failed(pb::PairFailure {
                                    tournament: job_tournament,
                                    pair: job_pair,
                                    reason: reason.to_string(),
                                    lease_id: lease.lease_id,
                                }));
                            }
                        }
                    }
                    continue;
                }
                Err(e) if e.code() == tonic::Code::Unauthenticated => {
                    return Err(WorkerError::Refused);
                }
                Err(_) => failed = true,
            }
        }
        if failed {
            metrics.reconnects.inc();
            session = None;
            continue;
        }
        let mut wake = if desk.wanted() > 0 && !stopping {
            idle_until
                .max(tokio::time::Instant::now())
                .min(next_heartbeat)
        } else {
            next_heartbeat
        };
        if report_task.is_none() && (!unreported.is_empty() || desk.has_finished()) {
            wake = wake.min(next_report);
        }
        tokio::select! {
            () = desk.woken() => {}
            outcome = async { report_task.as_mut().expect("guarded").await }, if report_task.is_some() => {
                report_task = None;
                if let Ok(Err((code, pushback, batch))) = outcome {
                    if code == tonic::Code::Unauthenticated {
                        return Err(WorkerError::Refused);
                    }
                    // A report turned away whole for its size goes again in smaller parts.
                    if code == tonic::Code::ResourceExhausted && pushback == Some(Duration::ZERO) {
                        part_bytes = (part_bytes / 2).max(MIN_PART_BYTES);
                    }
                    // Kept, and sent again a little later (first, in order). The session
                    // stays: a coordinator whose store fails answers, and takes the results
                    // once it recovers (a lost connection shows in the next heartbeat).
                    tracing::warn!(%code, pairs = batch.len(), "report failed: sent again later");
                    unreported.splice(0..0, batch);
                    next_report = tokio::time::Instant::now() + pushback.unwrap_or(REPORT_RETRY);
                }
            }
            _ = &mut shutdown, if !stopping => stopping = true,
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn played(bytes: usize) -> Outcome {
        Outcome::Played(pb::PairResult {
            games_lz4: lz4_flex::compress_prepend_size(&vec![b' '; bytes]),
            ..Default::default()
        })
    }

    fn sizes(part: &[Outcome]) -> Vec<usize> {
        part.iter()
            .map(|o| match o {
                Outcome::Played(r) => r.games_size().unwrap_or(0),
                Outcome::Failed(_) => 0,
            })
            .collect()
    }

    #[test]
    fn the_coordinator_checks_clocks_with_the_scale_a_worker_uses() {
        assert_eq!(
            tourney_ai::speed::MOST_SCALE,
            tourney_model::job::MOST_CLOCK_SCALE
        );
    }

    #[test]
    fn reports_go_in_parts_within_the_budget_in_order() {
        let mut unreported: Vec<Outcome> = [3, 4, 2, 9, 1].map(|k| played(k << 10)).into();
        let part = take_part(&mut unreported, 8 << 10);
        assert_eq!(sizes(&part), [3 << 10, 4 << 10]);
        // One result larger than a part still goes, alone.
        let part = take_part(&mut unreported, 2 << 10);
        assert_eq!(sizes(&part), [2 << 10]);
        let part = take_part(&mut unreported, 2 << 10);
        assert_eq!(sizes(&part), [9 << 10]);
        assert_eq!(sizes(&take_part(&mut unreported, 2 << 10)), [1 << 10]);
        assert!(take_part(&mut unreported, 2 << 10).is_empty());
        // Many small results: at most MAX_PART_RESULTS a report.
        let mut many: Vec<Outcome> = (0..MAX_PART_RESULTS + 5).map(|_| played(10)).collect();
        assert_eq!(take_part(&mut many, usize::MAX).len(), MAX_PART_RESULTS);
        assert_eq!(many.len(), 5);
    }
}
