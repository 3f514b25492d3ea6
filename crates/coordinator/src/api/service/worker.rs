//! The Worker service: registration, leases, reports (read once within the shared budget,
//! then taken by the coordinator), heartbeats and programs, each call after Register
//! checked against its registration's secret.

use std::sync::Arc;

use tonic::{Request, Response, Status as GrpcStatus};
use tourney_proto::v1 as pb;
use tourney_proto::{MAX_REPORT_JSON, RETRY_PUSHBACK};

use super::convert;
use crate::api::auth::token_name;
use crate::fleet::registration::Registered;
use crate::fleet::release::Release;
use crate::state::Coordinator;
use crate::tournaments::reporting::Report;
use crate::types::CoordinatorError;

/// The worker service.
pub struct WorkerService(pub Arc<Coordinator>);

/// After a report that held this many decompressed bytes, the allocator is asked to give
/// its free memory back to the system at once.
const BIG_REPORT: usize = 8 << 20;

/// A RESOURCE_EXHAUSTED refusal of a whole report, telling the worker to send it again
/// after `retry_ms`.
fn deferred(message: String, retry_ms: u64) -> GrpcStatus {
    let mut status = GrpcStatus::resource_exhausted(message);
    if let Ok(value) = retry_ms.to_string().parse() {
        status.metadata_mut().insert(RETRY_PUSHBACK, value);
    }
    status
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
        pb::Release::from(release).encode_to_vec().into(),
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
        let (name, version) = (r.name.clone(), r.version.clone());
        match self.0.enroll(convert::registration(r, token)).await? {
            Registered::Worker(welcome) => Ok(Response::new(welcome.into())),
            Registered::MustUpdate { lowest, release } => {
                Err(must_update(&name, &version, &lowest, &release))
            }
        }
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

/// Takes worker report `r`: turned away whole when its games claim more than a report may
/// hold or the shared budget has no room for them now, else read and taken
/// ([`Coordinator::take_report`]).
async fn take_report(
    c: Arc<Coordinator>,
    r: pb::ReportRequest,
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
    let worker = r.worker_id.clone();
    // Decompressing the games is work for a blocking thread, not for the runtime's.
    let report = tokio::task::spawn_blocking(move || Report::from(r))
        .await
        .map_err(|_| GrpcStatus::internal("reading the report failed"))?;
    let ack = c.take_report(&worker, report).await?;
    if claimed >= BIG_REPORT {
        crate::state::return_free_memory();
    }
    Ok(Response::new(ack.into()))
}
