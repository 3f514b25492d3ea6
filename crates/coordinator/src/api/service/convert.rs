//! The Worker service's Register and Report messages as the coordinator's domain types
//! ([`Registration`], [`Report`]) and its answers back, in one file.
//!
//! These live here, in the coordinator's adapter, rather than in `tourney_proto`'s
//! `convert`: the domain types name the coordinator's own ([`HostFacts`], [`Release`],
//! [`EngineCheck`], [`ReportAck`]), and `tourney-proto` must not depend on the coordinator
//! (the arrows stay acyclic: coordinator ──► proto ──► model). Reading a report's games off
//! the wire (plain or LZ4, bounded) is transport, and done here.

use tourney_proto::v1 as pb;

use super::games_json;
use crate::fleet::HostFacts;
use crate::fleet::registration::{Registration, Welcome};
use crate::fleet::release::Release;
use crate::scheduler::ReportAck;
use crate::tournaments::reporting::{Failure, Report, ReportedResult};
use crate::types::EngineCheck;

/// Registration request `r`, made with the token named `token` (its GPUs bounded to
/// [`tourney_model::gpu::MAX_GPUS`]).
pub(super) fn registration(r: pb::RegisterRequest, token: String) -> Registration {
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
    };
    Registration {
        name: r.name,
        version: r.version,
        slots: r.slots,
        token,
        updates: r.updates,
        platform: r.platform,
        host: HostFacts {
            cpu_model: host.cpu_model,
            cores: host.cores,
            memory_mb: host.memory_mb,
            os: host.os,
            speed_nps: host.speed_nps,
            gpus,
        },
        profile,
    }
}

/// A release as it is offered.
impl From<&Release> for pb::Release {
    fn from(release: &Release) -> Self {
        pb::Release {
            version: release.version.clone(),
            sha256: release.sha256.clone(),
            size: release.size,
            platform: release.platform.clone(),
        }
    }
}

/// What a registered worker is told.
impl From<Welcome> for pb::RegisterResponse {
    fn from(w: Welcome) -> Self {
        pb::RegisterResponse {
            worker_id: w.worker_id,
            session: w.session,
            heartbeat_ms: w.heartbeat_ms,
            report_ms: w.report_ms,
            lease_ms: w.lease_ms,
            artifacts_url: w.artifacts_url,
            release: w.release.as_ref().map(pb::Release::from),
        }
    }
}

/// A report with its games read: plain or decompressed, `None` where they are not
/// readable within [`tourney_proto::MAX_GAMES_JSON`] ([`games_json`]).
impl From<pb::ReportRequest> for Report {
    fn from(r: pb::ReportRequest) -> Self {
        let results = (r.results.into_iter())
            .map(|result| ReportedResult {
                tournament: result.tournament,
                pair: result.pair,
                lease: result.lease_id,
                games_json: games_json(result.games_json, &result.games_lz4),
                half_points: result.half_points,
                ticket: result.ticket,
            })
            .collect();
        let failures = (r.failures.into_iter())
            .map(|failure| Failure {
                tournament: failure.tournament,
                pair: failure.pair,
                lease: failure.lease_id,
                engine: failure.engine,
                engine_fault: failure.engine_fault,
                reason: failure.reason,
                log: failure.log,
            })
            .collect();
        let checks = (r.checks.into_iter())
            .map(|check| EngineCheck {
                tournament: check.tournament,
                engine: check.engine,
                bench_nodes: check.bench_nodes,
                bench_nps: check.bench_nps,
                build_ms: check.build_ms,
            })
            .collect();
        Report {
            results,
            failures,
            checks,
        }
    }
}

/// The answer to a report.
impl From<ReportAck> for pb::ReportResponse {
    fn from(ack: ReportAck) -> Self {
        pb::ReportResponse {
            accepted: ack.accepted,
            duplicates: ack.duplicates,
            rejected: ack.rejected,
        }
    }
}
