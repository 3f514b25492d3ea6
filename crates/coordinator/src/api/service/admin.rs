//! The Admin service: tournaments submitted, listed, followed, cancelled, resumed,
//! exported and archived; versions, the timeline, artifacts and reports.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use tokio_stream::Stream;
use tonic::{Request, Response, Status as GrpcStatus};
use tourney_model::tournament::State;
use tourney_proto::v1 as pb;

use tourney_model::account::Role;

use super::{accounts, reports, versions};
use crate::api::auth::principal;
use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// The admin service.
pub struct AdminService(pub Arc<Coordinator>);

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
    async fn submit(
        &self,
        request: Request<pb::SubmitRequest>,
    ) -> Result<Response<pb::SubmitResponse>, GrpcStatus> {
        let by = principal(&request);
        let r = request.into_inner();
        let artifacts: BTreeMap<String, String> = r.artifacts.into_iter().collect();
        let mut facts: BTreeMap<String, tourney_model::source::EngineFacts> = BTreeMap::new();
        for (engine, commit) in r.commits {
            facts.entry(engine).or_default().commit = Some(commit);
        }
        for f in r.files {
            facts
                .entry(f.engine)
                .or_default()
                .files
                .insert(f.name, f.sha256);
        }
        let id = self
            .0
            .submit_as(&by, &r.config, &r.file, &r.openings, artifacts, facts)
            .await?;
        let warnings = self
            .0
            .status(id)
            .and_then(|s| s.openings_note())
            .into_iter()
            .collect();
        Ok(Response::new(pb::SubmitResponse { id, warnings }))
    }

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

    async fn status(
        &self,
        request: Request<pb::StatusRequest>,
    ) -> Result<Response<pb::TournamentStatus>, GrpcStatus> {
        let by = principal(&request);
        let id = request.into_inner().id;
        let status = self
            .0
            .status(id)
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))?;
        let mut status = pb::TournamentStatus::from(&status);
        status.paused_log = self.0.paused_log(&by, id).unwrap_or_default();
        Ok(Response::new(status))
    }

    type WatchStream = Stream_<pb::TournamentStatus>;

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

    async fn cancel(
        &self,
        request: Request<pb::CancelRequest>,
    ) -> Result<Response<pb::CancelResponse>, GrpcStatus> {
        let by = principal(&request);
        let id = request.into_inner().id;
        let state = self.state_of(id)?;
        let cancelled = self.0.cancel_as(&by, id).await?;
        if !cancelled {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {id} is {}: only a queued, running, paused or pending tournament \
                 can be cancelled",
                state.name()
            )));
        }
        Ok(Response::new(pb::CancelResponse { cancelled }))
    }

    async fn resume(
        &self,
        request: Request<pb::ResumeRequest>,
    ) -> Result<Response<pb::ResumeResponse>, GrpcStatus> {
        let by = principal(&request);
        let id = request.into_inner().id;
        let state = self.state_of(id)?;
        let resumed = self.0.resume_as(&by, id).await?;
        if !resumed {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {id} is {}: only a paused or cancelled tournament can be resumed",
                state.name()
            )));
        }
        Ok(Response::new(pb::ResumeResponse { resumed }))
    }

    async fn exclude_worker(
        &self,
        request: Request<pb::ExcludeWorkerRequest>,
    ) -> Result<Response<pb::ExcludeWorkerResponse>, GrpcStatus> {
        let by = principal(&request);
        by.require(Role::Admin)?;
        let r = request.into_inner();
        let pairs = self
            .0
            .exclude_worker(r.id, &r.worker, !r.include, &r.reason)
            .await?
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {}", r.id)))?;
        let action = if r.include {
            "worker-included"
        } else {
            "worker-excluded"
        };
        let subject = format!("tournament {}", r.id);
        let detail = format!("{}: {}", r.worker, r.reason);
        self.0.record_event(&by, action, &subject, &detail);
        Ok(Response::new(pb::ExcludeWorkerResponse { pairs }))
    }

    async fn add_version(
        &self,
        request: Request<pb::AddVersionRequest>,
    ) -> Result<Response<pb::AddVersionResponse>, GrpcStatus> {
        versions::add_version(&self.0, request)
    }

    async fn get_file(
        &self,
        request: Request<pb::GetFileRequest>,
    ) -> Result<Response<pb::GetFileResponse>, GrpcStatus> {
        // The rights of the dashboard's `GET /api/v1/tournaments/{id}/file`: user and up.
        principal(&request).require(Role::User)?;
        let id = request.into_inner().id;
        let s = (self.0.submission_of(id))
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))?;
        let mut reply = pb::GetFileResponse {
            config: s.text,
            file: s.file,
            openings: s.openings,
            artifacts: s.artifacts.into_iter().collect(),
            ..Default::default()
        };
        for (engine, facts) in s.engines {
            if let Some(commit) = facts.commit {
                reply.commits.insert(engine.clone(), commit);
            }
            for (name, sha256) in facts.files {
                let engine = engine.clone();
                reply.files.push(pb::EngineFile {
                    engine,
                    name,
                    sha256,
                });
            }
        }
        Ok(Response::new(reply))
    }

    async fn list_versions(
        &self,
        request: Request<pb::ListVersionsRequest>,
    ) -> Result<Response<pb::ListVersionsResponse>, GrpcStatus> {
        versions::list_versions(&self.0, request)
    }

    async fn timeline(
        &self,
        request: Request<pb::TimelineRequest>,
    ) -> Result<Response<pb::TimelineResponse>, GrpcStatus> {
        versions::timeline(&self.0, request)
    }

    async fn add_to_pool(
        &self,
        request: Request<pb::AddToPoolRequest>,
    ) -> Result<Response<pb::AddToPoolResponse>, GrpcStatus> {
        versions::add_to_pool(&self.0, request).await
    }

    async fn pool_best(
        &self,
        request: Request<pb::PoolBestRequest>,
    ) -> Result<Response<pb::PoolBestResponse>, GrpcStatus> {
        versions::pool_best(&self.0, request)
    }

    async fn archive(
        &self,
        request: Request<pb::ArchiveRequest>,
    ) -> Result<Response<pb::ArchiveResponse>, GrpcStatus> {
        let by = principal(&request);
        by.require(Role::Admin)?;
        let r = request.into_inner();
        let pairs = self
            .0
            .archive(r.id, r.games)
            .await?
            .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {}", r.id)))?;
        self.0
            .record_event(&by, "archived", &format!("tournament {}", r.id), "");
        Ok(Response::new(pb::ArchiveResponse { pairs }))
    }

    async fn upload_artifact(
        &self,
        request: Request<tonic::Streaming<pb::UploadArtifactRequest>>,
    ) -> Result<Response<pb::UploadArtifactResponse>, GrpcStatus> {
        principal(&request).require(Role::User)?;
        let mut chunks = request.into_inner();
        let store = self.0.store().clone();
        let most = self.0.settings.max_artifact_bytes;
        // Each piece is hashed and appended to the artifact's file as it comes (on a
        // blocking thread): never more than one piece in memory.
        let mut upload = tokio::task::spawn_blocking(move || store.upload_artifact(most))
            .await
            .map_err(|_| GrpcStatus::internal("the upload failed"))?
            .map_err(upload_error)?;
        while let Some(chunk) = chunks.message().await? {
            upload =
                tokio::task::spawn_blocking(move || upload.write(&chunk.content).map(|()| upload))
                    .await
                    .map_err(|_| GrpcStatus::internal("the upload failed"))?
                    .map_err(upload_error)?;
        }
        let sha256 = tokio::task::spawn_blocking(move || upload.finish())
            .await
            .map_err(|_| GrpcStatus::internal("the upload failed"))?
            .map_err(upload_error)?;
        Ok(Response::new(pb::UploadArtifactResponse { sha256 }))
    }

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

    async fn link_artifact(
        &self,
        request: Request<pb::LinkArtifactRequest>,
    ) -> Result<Response<pb::LinkArtifactResponse>, GrpcStatus> {
        let by = principal(&request);
        let r = request.into_inner();
        // The URL's host may be looked up: off the async threads.
        let coordinator = Arc::clone(&self.0);
        tokio::task::spawn_blocking(move || coordinator.link_artifact(&by, &r.sha256, &r.url))
            .await
            .map_err(|_| GrpcStatus::internal("linking failed"))??;
        Ok(Response::new(pb::LinkArtifactResponse {}))
    }

    type ExportStream = Stream_<pb::ExportChunk>;

    type ExportDataStream = Stream_<pb::DataChunk>;

    async fn export_data(
        &self,
        request: Request<pb::ExportDataRequest>,
    ) -> Result<Response<Self::ExportDataStream>, GrpcStatus> {
        let id = request.into_inner().id;
        if self.0.status(id).is_none() {
            return Err(GrpcStatus::not_found(format!("no tournament {id}")));
        }
        let files = self.0.data_files(id)?;
        // Read on a blocking thread, at most a few chunks ahead of the client.
        let (chunks, stream) = tokio::sync::mpsc::channel(4);
        tokio::task::spawn_blocking(move || {
            crate::tournaments::datasets::read_chunks(&files, |chunk| {
                let chunk = chunk
                    .map(|data| pb::DataChunk { data })
                    .map_err(|e| GrpcStatus::internal(format!("reading the data files: {e}")));
                chunks.blocking_send(chunk).is_ok()
            });
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(stream),
        )))
    }

    async fn data_summary(
        &self,
        request: Request<pb::DataSummaryRequest>,
    ) -> Result<Response<pb::DataSummaryResponse>, GrpcStatus> {
        let id = request.into_inner().id;
        if self.0.status(id).is_none() {
            return Err(GrpcStatus::not_found(format!("no tournament {id}")));
        }
        Ok(Response::new(self.0.data_summary(id)?))
    }

    async fn export(
        &self,
        request: Request<pb::ExportRequest>,
    ) -> Result<Response<Self::ExportStream>, GrpcStatus> {
        let pages = reports::export(&self.0, request.into_inner())?;
        Ok(Response::new(Box::pin(pages)))
    }

    async fn get_report(
        &self,
        request: Request<pb::GetReportRequest>,
    ) -> Result<Response<pb::GetReportResponse>, GrpcStatus> {
        reports::get_report(&self.0, request.into_inner()).map(Response::new)
    }

    async fn approve(
        &self,
        request: Request<pb::ApproveRequest>,
    ) -> Result<Response<pb::ApproveResponse>, GrpcStatus> {
        let by = principal(&request);
        let id = request.into_inner().id;
        let state = self.state_of(id)?;
        if !self.0.approve(&by, id).await? {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {id} is {}, not waiting for approval",
                state.name()
            )));
        }
        Ok(Response::new(pb::ApproveResponse {}))
    }

    async fn modify(
        &self,
        request: Request<pb::ModifyRequest>,
    ) -> Result<Response<pb::ModifyResponse>, GrpcStatus> {
        let by = principal(&request);
        let r = request.into_inner();
        let state = self.state_of(r.id)?;
        if let Some(hidden) = r.hidden {
            self.0.hide_as(&by, r.id, hidden).await?;
        }
        let change = crate::tournaments::actions::Modification {
            priority: r.priority,
            weight: r.weight,
            pair_budget: r.pair_budget,
        };
        if change == Default::default() {
            return Ok(Response::new(pb::ModifyResponse {}));
        }
        if !self.0.modify_as(&by, r.id, change).await? {
            return Err(GrpcStatus::failed_precondition(format!(
                "tournament {} is {}: only a test that has not ended can be changed",
                r.id,
                state.name()
            )));
        }
        Ok(Response::new(pb::ModifyResponse {}))
    }

    async fn annotate(
        &self,
        request: Request<pb::AnnotateRequest>,
    ) -> Result<Response<pb::AnnotateResponse>, GrpcStatus> {
        let by = principal(&request);
        let r = request.into_inner();
        self.state_of(r.id)?;
        self.0.annotate_as(&by, r.id, &r.note, &r.links).await?;
        Ok(Response::new(pb::AnnotateResponse {}))
    }

    async fn list_machines(
        &self,
        _: Request<pb::ListMachinesRequest>,
    ) -> Result<Response<pb::ListMachinesResponse>, GrpcStatus> {
        let machines = (self.0.machines().into_iter())
            .map(|m| pb::Machine {
                host: m.host,
                facts: Some(pb::HostFacts {
                    cpu_model: m.facts.cpu_model,
                    cores: m.facts.cores,
                    memory_mb: m.facts.memory_mb,
                    os: m.facts.os,
                    speed_nps: m.facts.speed_nps,
                    // The machines list leaves out what leasing uses only.
                    cpu_features: Vec::new(),
                }),
                versions: m.versions,
                registrations: m.registrations as u32,
                slots: m.slots,
                games: m.games,
                nodes: m.nodes,
                last_seen_ms: m.last_seen_ms,
                blocked: m.blocked.unwrap_or_default(),
                gpus: (m.facts.gpus.into_iter())
                    .map(|g| pb::Gpu {
                        vendor: g.vendor,
                        model: g.model,
                        memory_mb: g.memory_mb,
                    })
                    .collect(),
            })
            .collect();
        Ok(Response::new(pb::ListMachinesResponse {
            machines,
            min_worker_version: self.0.min_worker_version().unwrap_or_default(),
        }))
    }

    async fn block_host(
        &self,
        request: Request<pb::BlockHostRequest>,
    ) -> Result<Response<pb::BlockHostResponse>, GrpcStatus> {
        let by = principal(&request);
        let r = request.into_inner();
        self.0.block_host(&by, &r.host, &r.message)?;
        Ok(Response::new(pb::BlockHostResponse {}))
    }

    async fn set_min_worker_version(
        &self,
        request: Request<pb::SetMinWorkerVersionRequest>,
    ) -> Result<Response<pb::SetMinWorkerVersionResponse>, GrpcStatus> {
        let by = principal(&request);
        self.0
            .set_min_worker_version(&by, &request.into_inner().version)?;
        Ok(Response::new(pb::SetMinWorkerVersionResponse {}))
    }

    async fn who_am_i(
        &self,
        request: Request<pb::WhoAmIRequest>,
    ) -> Result<Response<pb::WhoAmIResponse>, GrpcStatus> {
        let by = principal(&request);
        Ok(Response::new(pb::WhoAmIResponse {
            name: by.name,
            role: by.role.to_string(),
            operator: by.operator,
        }))
    }

    async fn add_user(
        &self,
        request: Request<pb::AddUserRequest>,
    ) -> Result<Response<pb::AddUserResponse>, GrpcStatus> {
        accounts::add_user(&self.0, request)
    }

    async fn list_users(
        &self,
        request: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::ListUsersResponse>, GrpcStatus> {
        accounts::list_users(&self.0, &request)
    }

    async fn set_user(
        &self,
        request: Request<pb::SetUserRequest>,
    ) -> Result<Response<pb::SetUserResponse>, GrpcStatus> {
        accounts::set_user(&self.0, request)
    }

    async fn remove_user(
        &self,
        request: Request<pb::RemoveUserRequest>,
    ) -> Result<Response<pb::RemoveUserResponse>, GrpcStatus> {
        let by = principal(&request);
        self.0.remove_user(&by, &request.into_inner().name)?;
        Ok(Response::new(pb::RemoveUserResponse {}))
    }

    async fn create_token(
        &self,
        request: Request<pb::CreateTokenRequest>,
    ) -> Result<Response<pb::CreateTokenResponse>, GrpcStatus> {
        accounts::create_token(&self.0, request)
    }

    async fn list_tokens(
        &self,
        request: Request<pb::ListTokensRequest>,
    ) -> Result<Response<pb::ListTokensResponse>, GrpcStatus> {
        accounts::list_tokens(&self.0, request)
    }

    async fn revoke_token(
        &self,
        request: Request<pb::RevokeTokenRequest>,
    ) -> Result<Response<pb::RevokeTokenResponse>, GrpcStatus> {
        accounts::revoke_token(&self.0, request)
    }

    async fn list_events(
        &self,
        request: Request<pb::ListEventsRequest>,
    ) -> Result<Response<pb::ListEventsResponse>, GrpcStatus> {
        accounts::list_events(&self.0, request)
    }
}

/// An upload's failure as the client sees it: a refusal says why (its bound, the disk),
/// anything else is the store's.
fn upload_error(e: tourney_store::StoreError) -> GrpcStatus {
    match e {
        tourney_store::StoreError::Refused(why) => GrpcStatus::resource_exhausted(why),
        other => CoordinatorError::from(other).into(),
    }
}
