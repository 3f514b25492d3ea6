//! The gRPC adapters: thin translations between `tourney.v1` messages and the
//! [`Coordinator`], with token checks. Errors become `Status` here and nowhere else.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use tokio_stream::Stream;
use tonic::{Request, Response, Status as GrpcStatus};
use tourney_model::tournament::{SprtModel, State};
use tourney_proto::v1 as pb;
use tourney_stats::Bound;

use crate::api::auth::token_name;
use crate::api::dashboard::{TOURNAMENT_PAGE, tournament_link};
use crate::state::Coordinator;
use crate::types::{CoordinatorError, Status};
use crate::types::{Refusal, Reported};

/// The worker service.
pub struct WorkerService(pub Arc<Coordinator>);

/// The admin service.
pub struct AdminService(pub Arc<Coordinator>);

/// `>` for a rating that is a lower bound, `<` for an upper bound, else empty.
pub fn bound_mark(bound: Option<Bound>) -> &'static str {
    match bound {
        Some(Bound::AtLeast) => ">",
        Some(Bound::AtMost) => "<",
        None => "",
    }
}

/// The one place where coordinator errors become gRPC statuses: a bad tournament file is
/// INVALID_ARGUMENT with its message; a failed store or commit is logged here and answered
/// INTERNAL (or UNAVAILABLE while stopping) without the details.
impl From<CoordinatorError> for GrpcStatus {
    fn from(e: CoordinatorError) -> Self {
        match e {
            CoordinatorError::Invalid(message) => GrpcStatus::invalid_argument(message),
            CoordinatorError::Exhausted(message) => GrpcStatus::resource_exhausted(message),
            CoordinatorError::Closed => GrpcStatus::unavailable("the coordinator is stopping"),
            CoordinatorError::Unavailable(why) => {
                GrpcStatus::unavailable(format!("the store is unavailable: {why}"))
            }
            other => {
                tracing::error!(error = %other, "request failed");
                GrpcStatus::internal("the store failed")
            }
        }
    }
}

/// A status as the API gives it.
impl From<&Status> for pb::TournamentStatus {
    fn from(s: &Status) -> Self {
        pb::TournamentStatus {
            id: s.id,
            name: s.config.name.clone(),
            game: s.config.game.to_string(),
            format: s.config.format.name().to_string(),
            state: s.state_name().to_string(),
            pairs_done: s.pairs_done,
            pairs_planned: s.pairs_planned(),
            games: 2 * s.pairs_done,
            standings: s
                .ratings
                .players
                .iter()
                .map(|p| pb::Standing {
                    name: p.name.clone(),
                    elo: p.elo,
                    plus: p.plus,
                    minus: p.minus,
                    games: p.games,
                    score: p.score,
                    draws: p.draws,
                    los_next: p.los_next,
                    bound: bound_mark(p.bound).into(),
                })
                .collect(),
            sprt: s.sprt.map(|sprt| pb::SprtState {
                llr: sprt.llr,
                lower_bound: sprt.lower_bound,
                upper_bound: sprt.upper_bound,
                decision: sprt.decision.to_string(),
                elo0: s.config.sprt.as_ref().map_or(0.0, |x| x.elo0),
                elo1: s.config.sprt.as_ref().map_or(0.0, |x| x.elo1),
                alpha: s.config.sprt.as_ref().map_or(0.05, |x| x.alpha),
                beta: s.config.sprt.as_ref().map_or(0.05, |x| x.beta),
                model: s
                    .config
                    .sprt
                    .as_ref()
                    .map_or(SprtModel::default(), |x| x.model)
                    .to_string(),
            }),
            pairs_leased: s.pairs_leased,
            paused_reason: s.paused_reason.clone().unwrap_or_default(),
            openings: s.openings,
            openings_note: s.openings_note().unwrap_or_default(),
            pairs_excluded: s.pairs_excluded,
            suspect_workers: s.suspect_workers,
        }
    }
}

pub use tourney_proto::{MAX_GAMES_JSON, MAX_REPORT_JSON, RETRY_PUSHBACK};
/// The longest address template a report request may give for its links.
pub const MAX_LINK_TEMPLATE: usize = 1024;
/// After a report that held this many decompressed bytes, the allocator is asked to give
/// its free memory back to the system at once.
const BIG_REPORT: usize = 8 << 20;

/// A pair result's games JSON, plain or decompressed (`None`: the compressed form is
/// corrupt, more than [`MAX_GAMES_JSON`], or not UTF-8). The size a compressed block claims
/// is checked before anything is allocated.
pub fn games_json(plain: String, lz4: &[u8]) -> Option<String> {
    if lz4.is_empty() {
        return (plain.len() <= MAX_GAMES_JSON).then_some(plain);
    }
    let (size, block) = lz4_flex::block::uncompressed_size(lz4).ok()?;
    if size > MAX_GAMES_JSON {
        return None;
    }
    String::from_utf8(lz4_flex::block::decompress(block, size).ok()?).ok()
}

/// A RESOURCE_EXHAUSTED refusal of a whole report, telling the worker to send it again
/// after `retry_ms`.
fn deferred(message: String, retry_ms: u64) -> GrpcStatus {
    let mut status = GrpcStatus::resource_exhausted(message);
    if let Ok(value) = retry_ms.to_string().parse() {
        status.metadata_mut().insert(RETRY_PUSHBACK, value);
    }
    status
}

#[tonic::async_trait]
impl pb::worker_server::Worker for WorkerService {
    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Worker/register")
    )]
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, GrpcStatus> {
        let token = token_name(&request);
        let r = request.into_inner();
        let (worker_id, session) = self.0.register(&r.name, &r.version, r.slots, &token)?;
        Ok(Response::new(pb::RegisterResponse {
            worker_id,
            session,
            heartbeat_ms: self.0.settings.heartbeat_ms,
            lease_ms: self.0.settings.lease_ms,
        }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Worker/lease")
    )]
    async fn lease(
        &self,
        request: Request<pb::LeaseRequest>,
    ) -> Result<Response<pb::LeaseResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
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

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Worker/report")
    )]
    async fn report(
        &self,
        request: Request<pb::ReportRequest>,
    ) -> Result<Response<pb::ReportResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        // The whole report's decompressed size, from what its blocks claim: over the
        // budget it is turned away whole (the worker sends it again in parts), never pair
        // by pair.
        let claimed = (r.results.iter())
            .map(|result| result.games_size().unwrap_or(0))
            .fold(0usize, usize::saturating_add);
        let metrics = self.0.metrics();
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
            std::time::Duration::from_millis(self.0.settings.report_room_wait_ms),
            self.0.report_room.acquire_many(kib),
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
        let mut finished = Vec::with_capacity(r.results.len());
        let (mut malformed, mut repeated) = (0, 0);
        for result in r.results {
            // A repeat (its acknowledgement was lost, say) is acknowledged as one, unread.
            if self.0.is_done(result.tournament, result.pair) {
                repeated += 1;
                continue;
            }
            let checked = match (
                games_json(result.games_json, &result.games_lz4),
                result.half_points.as_slice(),
            ) {
                (Some(games_json), &[h0, h1]) => self.0.check_reported(
                    &r.worker_id,
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
                    self.0
                        .refused(&r.worker_id, result.tournament, result.pair, &refusal);
                    // A pair this worker holds but cannot report acceptably goes to the
                    // others rather than back to it forever.
                    let held = self.0.holds(
                        &r.worker_id,
                        result.lease_id,
                        result.tournament,
                        result.pair,
                    );
                    if held {
                        self.0
                            .pair_failed(
                                &r.worker_id,
                                result.tournament,
                                result.pair,
                                &format!("its result was refused: {refusal}"),
                            )
                            .await?;
                    }
                }
            }
        }
        for failure in &r.failures {
            // A failure pauses only what the reporting registration holds: one of a lease
            // it no longer holds (lost in a restart, expired) is past, and ignored.
            if !self.0.holds(
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
            self.0
                .pair_failed(
                    &r.worker_id,
                    failure.tournament,
                    failure.pair,
                    &failure.reason,
                )
                .await?;
        }
        let ack = self.0.report(&r.worker_id, finished).await?;
        if claimed >= BIG_REPORT {
            crate::state::return_free_memory();
        }
        Ok(Response::new(pb::ReportResponse {
            accepted: ack.accepted,
            duplicates: ack.duplicates + repeated,
            rejected: ack.rejected + malformed,
        }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Worker/heartbeat")
    )]
    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        Ok(Response::new(pb::HeartbeatResponse {
            drop_leases: self.0.heartbeat(&r.worker_id, &r.lease_ids),
        }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Worker/fetch_artifact")
    )]
    async fn fetch_artifact(
        &self,
        request: Request<pb::FetchArtifactRequest>,
    ) -> Result<Response<pb::FetchArtifactResponse>, GrpcStatus> {
        self.session(&request, &request.get_ref().worker_id)?;
        let r = request.into_inner();
        let Some(content) = self.0.artifact(&r.sha256)? else {
            return Err(GrpcStatus::not_found(format!("no artifact {}", r.sha256)));
        };
        let start = usize::try_from(r.offset)
            .unwrap_or(usize::MAX)
            .min(content.len());
        let end = (start + tourney_proto::ARTIFACT_CHUNK).min(content.len());
        Ok(Response::new(pb::FetchArtifactResponse {
            content: content[start..end].to_vec(),
            total_size: content.len() as u64,
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

type Stream_<T> = Pin<Box<dyn Stream<Item = Result<T, GrpcStatus>> + Send>>;

impl AdminService {
    /// Where tournament `id` is; NOT_FOUND for an unknown id.
    fn state_of(&self, id: u64) -> Result<State, GrpcStatus> {
        self.0
            .state(id)
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))
    }
}

#[tonic::async_trait]
impl pb::admin_server::Admin for AdminService {
    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/submit")
    )]
    async fn submit(
        &self,
        request: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitResponse>, GrpcStatus> {
        let r = request.into_inner();
        let artifacts: BTreeMap<String, String> = r.artifacts.into_iter().collect();
        let id = self
            .0
            .submit(&r.config, &r.file, &r.openings, artifacts)
            .await?;
        let warnings = self
            .0
            .status(id)
            .and_then(|s| s.openings_note())
            .into_iter()
            .collect();
        Ok(Response::new(pb::SubmitResponse { id, warnings }))
    }

    #[tracing::instrument(level = "debug", name = "grpc", skip_all, fields(call = "Admin/list"))]
    async fn list(
        &self,
        request: Request<pb::ListRequest>,
    ) -> Result<Response<pb::ListResponse>, GrpcStatus> {
        let r = request.into_inner();
        let size = match r.page_size {
            0 => 100,
            n => (n as usize).min(1000),
        };
        let after = match r.page_token.as_str() {
            "" => None,
            token => Some(token.parse::<u64>().map_err(|_| {
                GrpcStatus::invalid_argument(format!("page_token '{token}' is not one we gave"))
            })?),
        };
        let (page, next) = self.0.page(after, size);
        Ok(Response::new(pb::ListResponse {
            tournaments: page.iter().map(pb::TournamentStatus::from).collect(),
            next_page_token: next.map(|id| id.to_string()).unwrap_or_default(),
        }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/status")
    )]
    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::TournamentStatus>, GrpcStatus> {
        let id = request.into_inner().id;
        let status = self
            .0
            .status(id)
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))?;
        Ok(Response::new(pb::TournamentStatus::from(&status)))
    }

    type WatchStream = Stream_<pb::TournamentStatus>;

    #[tracing::instrument(level = "debug", name = "grpc", skip_all, fields(call = "Admin/watch"))]
    async fn watch(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<Self::WatchStream>, GrpcStatus> {
        let id = request.into_inner().id;
        if self.0.status(id).is_none() {
            return Err(GrpcStatus::not_found(format!("no tournament {id}")));
        }
        let coordinator = Arc::clone(&self.0);
        let mut changes = coordinator.subscribe();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        tokio::spawn(async move {
            while let Some(status) = coordinator.status(id) {
                let active = status.state.is_active();
                if tx
                    .send(Ok(pb::TournamentStatus::from(&status)))
                    .await
                    .is_err()
                    || !active
                {
                    break;
                }
                if changes.changed().await.is_err() {
                    break;
                }
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/cancel")
    )]
    async fn cancel(
        &self,
        request: Request<pb::CancelRequest>,
    ) -> Result<Response<pb::CancelResponse>, GrpcStatus> {
        let id = request.into_inner().id;
        let state = self.state_of(id)?;
        let cancelled = self.0.cancel(id).await?;
        if !cancelled {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {id} is {}: only a queued, running or paused tournament can be \
                 cancelled",
                state.name()
            )));
        }
        Ok(Response::new(pb::CancelResponse { cancelled }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/resume")
    )]
    async fn resume(
        &self,
        request: Request<pb::ResumeRequest>,
    ) -> Result<Response<pb::ResumeResponse>, GrpcStatus> {
        let id = request.into_inner().id;
        let state = self.state_of(id)?;
        let resumed = self.0.resume(id).await?;
        if !resumed {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {id} is {}, not paused",
                state.name()
            )));
        }
        Ok(Response::new(pb::ResumeResponse { resumed }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/exclude_worker")
    )]
    async fn exclude_worker(
        &self,
        request: Request<pb::ExcludeWorkerRequest>,
    ) -> Result<Response<pb::ExcludeWorkerResponse>, GrpcStatus> {
        let r = request.into_inner();
        let pairs = self
            .0
            .exclude_worker(r.id, &r.worker, !r.include, &r.reason)
            .await?
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {}", r.id)))?;
        Ok(Response::new(pb::ExcludeWorkerResponse { pairs }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/add_version")
    )]
    async fn add_version(
        &self,
        request: Request<pb::AddVersionRequest>,
    ) -> Result<Response<pb::AddVersionResponse>, GrpcStatus> {
        let r = request.into_inner();
        let version = r
            .version
            .ok_or_else(|| GrpcStatus::invalid_argument("version is missing"))?;
        self.0.add_version(version.into(), r.replace)?;
        Ok(Response::new(pb::AddVersionResponse {}))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/list_versions")
    )]
    async fn list_versions(
        &self,
        _: Request<pb::ListVersionsRequest>,
    ) -> Result<Response<pb::ListVersionsResponse>, GrpcStatus> {
        let versions = self.0.versions().iter().map(Into::into).collect();
        Ok(Response::new(pb::ListVersionsResponse { versions }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/timeline")
    )]
    async fn timeline(
        &self,
        request: Request<pb::TimelineRequest>,
    ) -> Result<Response<pb::TimelineResponse>, GrpcStatus> {
        let anchor = request.into_inner().anchor;
        let timeline = self
            .0
            .timeline((!anchor.is_empty()).then_some(anchor.as_str()))?;
        let report = timeline.report();
        let entries = (timeline.entries.iter().zip(report.rows))
            .map(|(e, row)| pb::TimelineEntry {
                version: Some((&e.version).into()),
                elo: row.elo,
                plus: row.plus,
                minus: row.minus,
                games: row.games,
                score: row.score,
                tournaments: row.tournaments,
            })
            .collect();
        Ok(Response::new(pb::TimelineResponse {
            anchor: timeline.anchor.unwrap_or_default(),
            entries,
            games: timeline.games,
        }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/archive")
    )]
    async fn archive(
        &self,
        request: Request<pb::ArchiveRequest>,
    ) -> Result<Response<pb::ArchiveResponse>, GrpcStatus> {
        let r = request.into_inner();
        let pairs = self
            .0
            .archive(r.id, r.games)
            .await?
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {}", r.id)))?;
        Ok(Response::new(pb::ArchiveResponse { pairs }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/upload_artifact")
    )]
    async fn upload_artifact(
        &self,
        request: Request<tonic::Streaming<pb::UploadArtifactRequest>>,
    ) -> Result<Response<pb::UploadArtifactResponse>, GrpcStatus> {
        let mut chunks = request.into_inner();
        let mut content = Vec::new();
        while let Some(chunk) = chunks.message().await? {
            if content.len() + chunk.content.len() > tourney_proto::MAX_ARTIFACT_BYTES {
                return Err(GrpcStatus::invalid_argument(format!(
                    "artifact larger than {} MiB",
                    tourney_proto::MAX_ARTIFACT_BYTES >> 20
                )));
            }
            content.extend_from_slice(&chunk.content);
        }
        let sha256 = self
            .0
            .store()
            .put_artifact(&content)
            .map_err(CoordinatorError::from)?;
        Ok(Response::new(pb::UploadArtifactResponse { sha256 }))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/has_artifact")
    )]
    async fn has_artifact(
        &self,
        request: Request<pb::HasArtifactRequest>,
    ) -> Result<Response<pb::HasArtifactResponse>, GrpcStatus> {
        let sha256 = request.into_inner().sha256;
        let present = self
            .0
            .store()
            .has_artifact(&sha256)
            .map_err(CoordinatorError::from)?;
        Ok(Response::new(pb::HasArtifactResponse { present }))
    }

    type ExportStream = Stream_<pb::ExportChunk>;

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/export")
    )]
    async fn export(
        &self,
        request: Request<pb::ExportRequest>,
    ) -> Result<Response<Self::ExportStream>, GrpcStatus> {
        let r = request.into_inner();
        let id = r.id;
        if self.0.status(id).is_none() {
            return Err(GrpcStatus::not_found(format!("no tournament {id}")));
        }
        let filter = crate::ExportFilter {
            pairs: (r.from_pair.is_some() || r.to_pair.is_some())
                .then(|| (r.from_pair.unwrap_or(0), r.to_pair.unwrap_or(u64::MAX))),
            engine: (!r.engine.is_empty()).then_some(r.engine),
            since_ms: r.since_ms,
        };
        // Read page by page on a blocking thread, at most a few pages ahead of the client.
        let (pages, stream) = tokio::sync::mpsc::channel(4);
        let c = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || {
            let mut from = 0;
            loop {
                let (chunk, next) = match c.export_page(id, &filter, from) {
                    Ok((lines, next)) => (Ok(pb::ExportChunk { lines }), next),
                    Err(e) => (Err(GrpcStatus::from(e)), None),
                };
                let more = next.is_some() && chunk.is_ok();
                // A page the filters emptied is not sent, unless it is the last.
                let skip = more && chunk.as_ref().is_ok_and(|c| c.lines.is_empty());
                if !skip && pages.blocking_send(chunk).is_err() {
                    return;
                }
                if !more {
                    return;
                }
                from = next.unwrap_or_default();
            }
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(stream),
        )))
    }

    #[tracing::instrument(
        level = "debug",
        name = "grpc",
        skip_all,
        fields(call = "Admin/get_report")
    )]
    async fn get_report(
        &self,
        request: Request<pb::GetReportRequest>,
    ) -> Result<Response<pb::GetReportResponse>, GrpcStatus> {
        let pb::GetReportRequest {
            id,
            format,
            tournament_link: link_template,
        } = request.into_inner();
        if !matches!(format.as_str(), "text" | "json" | "csv" | "html") {
            return Err(GrpcStatus::invalid_argument(format!(
                "format '{format}': expected text, json, csv or html"
            )));
        }
        if link_template.len() > MAX_LINK_TEMPLATE
            || !(link_template.is_empty() || link_template.contains("{id}"))
        {
            return Err(GrpcStatus::invalid_argument(format!(
                "tournament_link: expected an address with {{id}} in it, of at most \
                 {MAX_LINK_TEMPLATE} bytes (got {} bytes)",
                link_template.len()
            )));
        }
        let (_, report) = self
            .0
            .report_with_timeline(id)
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))?;
        let content = match format.as_str() {
            "text" => report.text(),
            "csv" => report.csv(),
            "html" => {
                let template = match link_template.as_str() {
                    "" => TOURNAMENT_PAGE,
                    given => given,
                };
                report.html(|t| Some(tournament_link(template, t)))
            }
            _ => {
                serde_json::to_string_pretty(&report)
                    .map_err(|e| GrpcStatus::internal(e.to_string()))?
                    + "\n"
            }
        };
        Ok(Response::new(pb::GetReportResponse { content }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_arrive_plain_or_compressed_and_corrupt_or_oversized_ones_are_refused() {
        let json = r#"[{"game":"loa"},{"game":"loa"}]"#;
        let read = |plain: &str, lz4: &[u8]| games_json(plain.into(), lz4);
        assert_eq!(read(json, &[]).as_deref(), Some(json));
        let lz4 = lz4_flex::compress_prepend_size(json.as_bytes());
        assert_eq!(read("", &lz4).as_deref(), Some(json));
        // A truncated block, and a block that claims 4 GiB uncompressed.
        assert_eq!(read("", &lz4[..lz4.len() - 3]), None);
        let mut bomb = lz4.clone();
        bomb[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read("", &bomb), None);
        assert_eq!(read("", &[1, 0]), None, "no size");
        let not_utf8 = lz4_flex::compress_prepend_size(&[0xff, 0xfe]);
        assert_eq!(read("", &not_utf8), None);
    }

    #[test]
    fn a_reports_size_is_known_before_anything_is_inflated() {
        // 7 MiB of spaces: about 30 KiB on the wire.
        let block = lz4_flex::compress_prepend_size(&vec![b' '; 7 << 20]);
        assert!(block.len() < 64 << 10);
        let result = |lz4: Vec<u8>, plain: &str| pb::PairResult {
            games_lz4: lz4,
            games_json: plain.into(),
            ..Default::default()
        };
        assert_eq!(result(block.clone(), "").games_size(), Some(7 << 20));
        assert_eq!(result(Vec::new(), "[1,2]").games_size(), Some(5));
        assert_eq!(result(vec![1, 0], "").games_size(), None, "no size");
        // A pair's games over the per-pair bound are refused.
        let big = lz4_flex::compress_prepend_size(&vec![b' '; MAX_GAMES_JSON + 1]);
        assert_eq!(games_json(String::new(), &big), None);
        assert_eq!(games_json(" ".repeat(MAX_GAMES_JSON + 1), &[]), None);
    }
}
