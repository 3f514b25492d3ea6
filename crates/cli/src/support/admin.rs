//! The Admin service for commands that block: [`BlockingAdmin`] owns its tokio runtime and
//! the connected client, and each call returns its reply with a refusal already turned
//! into the error users see ([`status_error`]), here and nowhere else.

use std::path::Path;

use anyhow::Result;
use tourney_proto::v1 as pb;

use crate::support::client::Admin;
use crate::support::local::AdminTarget;
use crate::support::refusal::{reply, status_error};

/// A connected admin client with the runtime its calls (and, with `--data`, the
/// coordinator opened in this process) run on.
pub(crate) struct BlockingAdmin {
    // Dropped before the runtime it was connected on.
    admin: Admin,
    runtime: tokio::runtime::Runtime,
}

/// One blocking method per unary Admin call: the request in, the reply out.
macro_rules! unary {
    ($($name:ident($request:ident) -> $reply:ident;)*) => {
        $(
            #[doc = concat!("Admin `", stringify!($name), "`.")]
            pub(crate) fn $name(&mut self, request: pb::$request) -> Result<pb::$reply> {
                let Self { admin, runtime } = self;
                runtime.block_on(reply(admin.$name(request)))
            }
        )*
    };
}

impl BlockingAdmin {
    /// Connects to the coordinator `target` names (opening its `--data` directory in this
    /// process, if given).
    pub(crate) fn connect(target: &AdminTarget) -> Result<BlockingAdmin> {
        let runtime = tokio::runtime::Runtime::new()?;
        let admin = runtime.block_on(target.admin())?;
        Ok(BlockingAdmin { admin, runtime })
    }

    /// Runs `work` with the async client, for what streams or waits on other events.
    pub(crate) fn with<T>(&mut self, work: impl AsyncFnOnce(&mut Admin) -> Result<T>) -> Result<T> {
        let Self { admin, runtime } = self;
        runtime.block_on(work(admin))
    }

    unary! {
        submit(SubmitRequest) -> SubmitResponse;
        list(ListRequest) -> ListResponse;
        status(StatusRequest) -> TournamentStatus;
        cancel(CancelRequest) -> CancelResponse;
        resume(ResumeRequest) -> ResumeResponse;
        approve(ApproveRequest) -> ApproveResponse;
        modify(ModifyRequest) -> ModifyResponse;
        annotate(AnnotateRequest) -> AnnotateResponse;
        link_artifact(LinkArtifactRequest) -> LinkArtifactResponse;
        data_summary(DataSummaryRequest) -> DataSummaryResponse;
        exclude_worker(ExcludeWorkerRequest) -> ExcludeWorkerResponse;
        add_version(AddVersionRequest) -> AddVersionResponse;
        get_file(GetFileRequest) -> GetFileResponse;
        list_versions(ListVersionsRequest) -> ListVersionsResponse;
        timeline(TimelineRequest) -> TimelineResponse;
        add_to_pool(AddToPoolRequest) -> AddToPoolResponse;
        pool_best(PoolBestRequest) -> PoolBestResponse;
        who_am_i(WhoAmIRequest) -> WhoAmIResponse;
        add_user(AddUserRequest) -> AddUserResponse;
        list_users(ListUsersRequest) -> ListUsersResponse;
        set_user(SetUserRequest) -> SetUserResponse;
        remove_user(RemoveUserRequest) -> RemoveUserResponse;
        create_token(CreateTokenRequest) -> CreateTokenResponse;
        list_tokens(ListTokensRequest) -> ListTokensResponse;
        revoke_token(RevokeTokenRequest) -> RevokeTokenResponse;
        list_events(ListEventsRequest) -> ListEventsResponse;
        list_machines(ListMachinesRequest) -> ListMachinesResponse;
        block_host(BlockHostRequest) -> BlockHostResponse;
        set_min_worker_version(SetMinWorkerVersionRequest) -> SetMinWorkerVersionResponse;
    }

    /// A tournament's report, rendered by the coordinator in `format`.
    pub(crate) fn report(
        &mut self,
        id: u64,
        format: &str,
        tournament_link: &str,
    ) -> Result<String> {
        self.with(async |admin| {
            crate::support::client::fetch_report(admin, id, format, tournament_link).await
        })
    }

    /// A tournament's games as exported, chunk by chunk, to `each`.
    pub(crate) fn export(
        &mut self,
        request: pb::ExportRequest,
        each: impl FnMut(pb::ExportChunk) -> Result<()>,
    ) -> Result<()> {
        self.with(async |admin| export(admin, request, each).await)
    }

    /// A data-generation run's data file, chunk by chunk, to `each`.
    pub(crate) fn export_data(
        &mut self,
        id: u64,
        mut each: impl FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        self.with(async |admin| {
            use tokio_stream::StreamExt;
            let request = pb::ExportDataRequest { id };
            let mut stream = reply(admin.export_data(request)).await?;
            while let Some(chunk) = stream.next().await {
                each(chunk.map_err(status_error)?.data)?;
            }
            Ok(())
        })
    }

    /// Submits a tournament file ([`crate::support::client::submit_text`]), with `text` in
    /// place of the file's when given; its id.
    pub(crate) fn submit_file(&mut self, path: &Path, text: Option<String>) -> Result<u64> {
        self.with(async |admin| crate::support::client::submit_text(admin, path, text).await)
    }

    /// The status of tournament `id` once `done` says so, from the coordinator's stream of
    /// its changes (asked again if the stream ends first, as when the connection drops).
    pub(crate) fn watch_until(
        &mut self,
        id: u64,
        done: impl Fn(&pb::TournamentStatus) -> bool,
    ) -> Result<pb::TournamentStatus> {
        self.with(async |admin| {
            use tokio_stream::StreamExt;
            loop {
                let mut updates = reply(admin.watch(pb::StatusRequest { id })).await?;
                while let Some(status) = updates.next().await {
                    let status = status.map_err(status_error)?;
                    if done(&status) {
                        return Ok(status);
                    }
                }
                let status = reply(admin.status(pb::StatusRequest { id })).await?;
                if done(&status) {
                    return Ok(status);
                }
            }
        })
    }

    /// Uploads a program or data file ([`crate::support::client::upload`]); its sha256.
    pub(crate) fn upload(&mut self, path: &Path) -> Result<String> {
        self.with(async |admin| crate::support::client::upload(admin, path).await)
    }
}

/// Runs `future` on a runtime of its own, for a command whose work is more than admin
/// calls (a signal watched, a coordinator served beside them).
pub(crate) fn block_on<F: Future>(future: F) -> Result<F::Output> {
    Ok(tokio::runtime::Runtime::new()?.block_on(future))
}

/// A tournament's games as exported, chunk by chunk, to `each` (for work that must stop
/// on a signal halfway).
pub(crate) async fn export(
    admin: &mut Admin,
    request: pb::ExportRequest,
    mut each: impl FnMut(pb::ExportChunk) -> Result<()>,
) -> Result<()> {
    let mut stream = reply(admin.export(request)).await?;
    while let Some(chunk) = stream.message().await.map_err(status_error)? {
        each(chunk)?;
    }
    Ok(())
}
