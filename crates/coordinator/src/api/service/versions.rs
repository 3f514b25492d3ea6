//! The Admin service's version calls: versions registered and listed, the timeline, and
//! rating pools' members.

use tonic::{Request, Response, Status as GrpcStatus};
use tourney_model::account::Role;
use tourney_proto::v1 as pb;

use crate::api::auth::principal;
use crate::state::Coordinator;

/// Registers a version (a user and up).
pub(super) fn add_version(
    coordinator: &Coordinator,
    request: Request<pb::AddVersionRequest>,
) -> Result<Response<pb::AddVersionResponse>, GrpcStatus> {
    let by = principal(&request);
    by.require(Role::User)?;
    let r = request.into_inner();
    let version = r
        .version
        .ok_or_else(|| GrpcStatus::invalid_argument("version is missing"))?;
    let name = version.name.clone();
    coordinator.add_version(version.into(), r.replace)?;
    coordinator.record_event(&by, "version-added", &format!("version {name}"), "");
    Ok(Response::new(pb::AddVersionResponse {}))
}

/// Every registered version with what workers found of it.
pub(super) fn list_versions(
    coordinator: &Coordinator,
    _: Request<pb::ListVersionsRequest>,
) -> Result<Response<pb::ListVersionsResponse>, GrpcStatus> {
    let versions = (coordinator.versions().iter())
        .map(|v| {
            let mut version = pb::EngineVersion::from(v);
            version.checks = (coordinator.version_checks(&v.name).into_iter())
                .map(|c| pb::VersionCheck {
                    worker: c.worker,
                    at_ms: c.at_ms,
                    bench_nodes: c.bench_nodes,
                    bench_nps: c.bench_nps,
                    build_ms: c.build_ms,
                    problem: c.problem,
                    tournament: c.tournament,
                })
                .collect();
            version
        })
        .collect();
    Ok(Response::new(pb::ListVersionsResponse { versions }))
}

/// Every version rated jointly.
pub(super) fn timeline(
    coordinator: &Coordinator,
    request: Request<pb::TimelineRequest>,
) -> Result<Response<pb::TimelineResponse>, GrpcStatus> {
    let anchor = request.into_inner().anchor;
    let timeline = coordinator.timeline((!anchor.is_empty()).then_some(anchor.as_str()))?;
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

/// Adds versions to a pool, in order; the first refused stops the rest.
pub(super) async fn add_to_pool(
    coordinator: &Coordinator,
    request: Request<pb::AddToPoolRequest>,
) -> Result<Response<pb::AddToPoolResponse>, GrpcStatus> {
    let by = principal(&request);
    let r = request.into_inner();
    let id = coordinator.find_pool(&r.pool)?;
    let mut from_pairs = Vec::with_capacity(r.versions.len());
    for version in &r.versions {
        from_pairs.push(coordinator.add_to_pool(&by, id, version).await?);
    }
    Ok(Response::new(pb::AddToPoolResponse { id, from_pairs }))
}

/// A pool's best member now.
pub(super) fn pool_best(
    coordinator: &Coordinator,
    request: Request<pb::PoolBestRequest>,
) -> Result<Response<pb::PoolBestResponse>, GrpcStatus> {
    let id = coordinator.find_pool(&request.into_inner().pool)?;
    let best = coordinator.pool_best(id)?.ok_or_else(|| {
        GrpcStatus::failed_precondition(format!("pool {id}: no member has played yet"))
    })?;
    Ok(Response::new(pb::PoolBestResponse {
        id,
        best: best.name,
        elo: best.elo,
        plus: best.plus,
        minus: best.minus,
        games: best.games,
    }))
}
