//! The Worker service: registration, leases, reports (read once, checked, within the
//! shared budget), heartbeats and programs, each call after Register checked against its
//! registration's secret.

use std::sync::Arc;

use tonic::{Request, Response, Status as GrpcStatus};
use tourney_proto::v1 as pb;
use tourney_proto::{MAX_GAMES_JSON, MAX_REPORT_JSON, RETRY_PUSHBACK};

use super::games_json;
use crate::api::auth::token_name;
use crate::release::Release;
use crate::state::Coordinator;
use crate::types::{CoordinatorError, Refusal, Reported};

/// The worker service.
pub struct WorkerService(pub Arc<Coordinator>);

/// After a report that held this many decompressed bytes, the allocator is asked to give
/// its free memory back to the system at once.
const BIG_REPORT: usize = 8 << 20;

/// The most engine checks one report may carry (more are ignored).
const MAX_CHECKS: usize = 64;

/// A RESOURCE_EXHAUSTED refusal of a whole report, telling the worker to send it again
/// after `retry_ms`.
fn deferred(message: String, retry_ms: u64) -> GrpcStatus {
    let mut status = GrpcStatus::resource_exhausted(message);
    if let Ok(value) = retry_ms.to_string().parse() {
        status.metadata_mut().insert(RETRY_PUSHBACK, value);
    }
    status
}

/// A release as it is offered.
fn offered(release: &Release) -> pb::Release {
    pb::Release {
        version: release.version.clone(),
        sha256: release.sha256.clone(),
        size: release.size,
        platform: release.platform.clone(),
    }
}

/// The refusal of worker `name`, older than the `lowest` version accepted, that updates
/// itself: FAILED_PRECONDITION with the `release` to update to as its details.
fn must_update(name: &str, version: &str, lowest: &str, release: &Release) -> GrpcStatus {
    use prost::Message;
    GrpcStatus::with_details(
        tonic::Code::FailedPrecondition,
        format!(
            "worker '{name}' runs tourney {version}; this coordinator accepts {lowest} or \
             later: update to {}",
            release.version
        ),
        offered(release).encode_to_vec().into(),
    )
}

#[tonic::async_trait]
impl pb::worker_server::Worker for WorkerService {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, GrpcStatus> {
        if let Err(retry_ms) = self.0.admit("register") {
            return Err(deferred(
                "registrations are coming faster than the coordinator takes them: retry later"
                    .into(),
                retry_ms,
            ));
        }
        let token = token_name(&request);
        let r = request.into_inner();
        let host = r.host.unwrap_or_default();
        let gpus = (r.gpus.into_iter().take(tourney_model::gpu::MAX_GPUS))
            .map(|g| tourney_model::gpu::GpuFacts {
                vendor: g.vendor,
                model: g.model,
                memory_mb: g.memory_mb,
            })
            .collect::<Vec<_>>();
        let profile = tourney_model::fleet::ProfileClaim {
            cores: r.cores,
            memory_mb: host.memory_mb,
            cpu_features: host.cpu_features,
            os: host.os.clone(),
            labels: r.labels,
            only: r.only,
            avoid_noisy: r.avoid_noisy,
            gpus: gpus.clone(),
        }
        .checked(tourney_model::fleet::MAX_THREADS)
        .map_err(GrpcStatus::invalid_argument)?;
        let release = match r.updates {
            true => {
                let (coordinator, platform) = (Arc::clone(&self.0), r.platform.clone());
                let found =
                    tokio::task::spawn_blocking(move || coordinator.worker_release(&platform));
                found.await.ok().flatten()
            }
            false => None,
        };
        if let Some(release) = &release
            && let Some(lowest) = self.0.too_old(&r.version)
            && !tourney_model::release::older(&release.version, &lowest)
        {
            self.0.admits_host(&r.name)?;
            return Err(must_update(&r.name, &r.version, &lowest, release));
        }
        let (worker_id, session) = self.0.register(&r.name, &r.version, r.slots, &token)?;
        let facts = crate::fleet::HostFacts {
            cpu_model: host.cpu_model,
            cores: host.cores,
            memory_mb: host.memory_mb,
            os: host.os,
            speed_nps: host.speed_nps,
            gpus,
        };
        self.0.set_host_facts(&worker_id, facts);
        self.0.set_profile(&worker_id, profile);
        let cadence = self.0.cadence();
        Ok(Response::new(pb::RegisterResponse {
            worker_id,
            session,
            heartbeat_ms: cadence.heartbeat_ms,
            report_ms: cadence.report_ms,
            lease_ms: self.0.settings.lease_ms,
            artifacts_url: self.0.settings.artifacts_url.clone(),
            release: release.as_ref().map(offered),
        }))
    }

    async fn lease(
        &self,
        request: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        if let Err(retry_ms) = self.0.admit("lease") {
            return Err(deferred(
                "leases are coming faster than the coordinator grants them: retry later".into(),
                retry_ms,
            ));
        }
        let r = request.into_inner();
        let (lease_id, jobs) = self
            .0
            .lease(&r.worker_id, r.max_pairs.max(1) as usize)
            .unwrap_or((0, Vec::new()));
        Ok(Response::new(pb::LeaseResponse {
            lease_id,
            jobs: jobs.iter().map(pb::PairJob::from).collect(),
        }))
    }

    async fn report(
        &self,
        request: Request<pb::ReportRequest>,
    ) -> Result<Response<pb::ReportResponse>, GrpcStatus> {
        use tracing::Instrument;
        self.session(&request, &request.get_ref().worker_id)?;
        // Taken in a task of its own: a worker that goes away mid-report (killed, timed
        // out) cancels only its wait for the answer, never the report between its commit
        // and the scheduler's, data set's and metrics' record of it.
        let taking = take_report(Arc::clone(&self.0), request.into_inner());
        tokio::spawn(taking.in_current_span())
            .await
            .map_err(|e| GrpcStatus::internal(format!("report not taken: {e}")))?
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        let cadence = self.0.cadence();
        Ok(Response::new(pb::HeartbeatResponse {
            drop_leases: self.0.heartbeat(&r.worker_id, &r.lease_ids),
            heartbeat_ms: cadence.heartbeat_ms,
            report_ms: cadence.report_ms,
        }))
    }

    async fn fetch_artifact(
        &self,
        request: Request<pb::FetchArtifactRequest>,
    ) -> Result<Response<pb::FetchArtifactResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        let store = self.0.store().clone();
        let sha = r.sha256.clone();
        let read = tokio::task::spawn_blocking(move || {
            store.read_artifact(&sha, r.offset, tourney_proto::ARTIFACT_CHUNK)
        })
        .await
        .map_err(|_| GrpcStatus::internal("reading the artifact failed"))?
        .map_err(CoordinatorError::from)?;
        let Some((content, total_size)) = read else {
            return Err(GrpcStatus::not_found(format!("no artifact {}", r.sha256)));
        };
        (self.0.metrics().artifact_bytes_sent).inc_by(content.len() as u64);
        Ok(Response::new(pb::FetchArtifactResponse {
            content,
            total_size,
        }))
    }
}

/// The metadata header that carries a registration's secret on every Worker call after
/// Register.
pub const SESSION_HEADER: &str = "tourney-session";

impl WorkerService {
    /// Checks that `request` carries the secret of `worker`'s registration, and the token
    /// it registered with: UNAUTHENTICATED (counted with the token refusals) if not.
    fn session<T>(&self, request: &Request<T>, worker: &str) -> Result<(), GrpcStatus> {
        let session = request
            .metadata()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if self.0.session_is(worker, session, &token_name(request)) {
            return Ok(());
        }
        self.0
            .metrics()
            .auth_failures
            .with_label_values(&["session"])
            .inc();
        Err(GrpcStatus::unauthenticated(format!(
            "no session of worker '{worker}' (register, then send its secret in {SESSION_HEADER})"
        )))
    }
}

/// Takes worker report `r`: read within the shared budget, each pair checked, failures
/// and engine checks noted, the fresh pairs committed and recorded.
async fn take_report(
    c: Arc<Coordinator>,
    mut r: pb::ReportRequest,
) -> Result<Response<pb::ReportResponse>, GrpcStatus> {
    // The whole report's decompressed size, from what its blocks claim: over the
    // budget it is turned away whole (the worker sends it again in parts), never pair
    // by pair.
    let claimed = (r.results.iter())
        .map(|result| result.games_size().unwrap_or(0))
        .fold(0usize, usize::saturating_add);
    let metrics = c.metrics();
    if claimed > MAX_REPORT_JSON {
        metrics
            .reports_deferred
            .with_label_values(&["too-large"])
            .inc();
        return Err(deferred(
            format!(
                "report too large: {} MiB of records in {} pair results, at most {} MiB a \
                 report: send it in parts",
                claimed.div_ceil(1 << 20),
                r.results.len(),
                MAX_REPORT_JSON >> 20
            ),
            0,
        ));
    }
    // Room among all reports in flight: concurrent reports share one budget.
    let kib = u32::try_from(claimed.div_ceil(1 << 10)).unwrap_or(u32::MAX);
    let room = tokio::time::timeout(
        std::time::Duration::from_millis(c.settings.report_room_wait_ms),
        c.report_room.acquire_many(kib),
    )
    .await;
    let Ok(Ok(_room)) = room else {
        metrics.reports_deferred.with_label_values(&["busy"]).inc();
        return Err(deferred(
            format!(
                "busy: {} MiB of reports are being read; send this one again later",
                crate::state::REPORTS_IN_FLIGHT >> 20
            ),
            1_000,
        ));
    };
    // Reading and replaying the games (and searching a datagen sample again) is work
    // for a blocking thread, not for the runtime's.
    let (finished, malformed, repeated) = {
        let (c, worker, results) = (
            Arc::clone(&c),
            r.worker_id.clone(),
            std::mem::take(&mut r.results),
        );
        tokio::task::spawn_blocking(move || check_results(&c, &worker, results))
            .await
            .map_err(|_| GrpcStatus::internal("checking the report failed"))?
    };
    for failure in &r.failures {
        // A failure pauses only what the reporting registration holds: one of a lease
        // it no longer holds (lost in a restart, expired) is past, and ignored.
        if !c.holds(
            &r.worker_id,
            failure.lease_id,
            failure.tournament,
            failure.pair,
        ) {
            tracing::info!(
                worker = %r.worker_id,
                tournament = failure.tournament,
                pair = failure.pair,
                reason = %failure.reason,
                "failure of a pair no longer held: ignored"
            );
            continue;
        }
        let unplayable = crate::types::Unplayable {
            engine: &failure.engine,
            engine_fault: failure.engine_fault,
            reason: &failure.reason,
            log: &failure.log,
        };
        c.engine_failed(&r.worker_id, failure.tournament, failure.pair, unplayable)
            .await?;
    }
    // Checks of engines the worker plays in a tournament it holds pairs of (at most
    // MAX_CHECKS a report; more are ignored).
    for check in r.checks.into_iter().take(MAX_CHECKS) {
        if !c.plays_in(&r.worker_id, check.tournament) {
            continue;
        }
        let check = crate::EngineCheck {
            tournament: check.tournament,
            engine: check.engine,
            bench_nodes: check.bench_nodes,
            bench_nps: check.bench_nps,
            build_ms: check.build_ms,
        };
        c.engine_checked(&r.worker_id, check).await?;
    }
    let ack = c.report(&r.worker_id, finished).await?;
    if claimed >= BIG_REPORT {
        crate::state::return_free_memory();
    }
    Ok(Response::new(pb::ReportResponse {
        accepted: ack.accepted,
        duplicates: ack.duplicates + repeated,
        rejected: ack.rejected + malformed,
    }))
}

/// Checks a report's pair results ([`Coordinator::check_reported`]), noting each refused
/// one: the pairs to commit, how many were refused and how many were repeats.
fn check_results(
    c: &Coordinator,
    worker: &str,
    results: Vec<pb::PairResult>,
) -> (Vec<crate::types::Finished>, u32, u32) {
    let mut finished = Vec::with_capacity(results.len());
    let (mut malformed, mut repeated) = (0, 0);
    for result in results {
        // A repeat (its acknowledgement was lost, say) is acknowledged as one, unread.
        if c.is_done(result.tournament, result.pair) {
            repeated += 1;
            continue;
        }
        let checked = match (
            games_json(result.games_json, &result.games_lz4),
            result.half_points.as_slice(),
        ) {
            (Some(games_json), &[h0, h1]) => c.check_reported(
                worker,
                Reported {
                    tournament: result.tournament,
                    pair: result.pair,
                    lease: result.lease_id,
                    half_points: [h0, h1],
                    games_json,
                    ticket: result.ticket,
                },
            ),
            _ => Err(Refusal::Records(format!(
                "not decodable within {} MiB a pair, or not two half-points",
                MAX_GAMES_JSON >> 20,
            ))),
        };
        match checked {
            Ok(pair) => finished.push(pair),
            Err(refusal) => {
                malformed += 1;
                c.refused(
                    worker,
                    result.tournament,
                    result.pair,
                    result.lease_id,
                    &refusal,
                );
            }
        }
    }
    (finished, malformed, repeated)
}
