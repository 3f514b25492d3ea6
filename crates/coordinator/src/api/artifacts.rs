//! `GET /artifacts/{sha256}`: programs and data files by their sha256, for workers and for
//! any HTTP cache or CDN in front of the coordinator. Content named by its hash never
//! changes, so it is served `immutable` with the hash as its `ETag` (a conditional request
//! gets `304`); an artifact linked to an external URL (`LinkArtifact`) is a `308` redirect
//! there, cached as long. Whoever knows a hash may fetch it, as with a capability URL: the
//! hashes are given only in leases and to admin clients, and workers check what they get.

use std::sync::Arc;

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::state::Coordinator;

/// The `Cache-Control` of content named by its hash.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// The route, to merge beside the gRPC services.
pub fn router(coordinator: Arc<Coordinator>) -> axum::Router {
    axum::Router::new().route(
        "/artifacts/{sha}",
        axum::routing::get(move |Path(sha): Path<String>, headers: HeaderMap| {
            let coordinator = Arc::clone(&coordinator);
            async move {
                tokio::task::spawn_blocking(move || serve(&coordinator, &sha, &headers))
                    .await
                    .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
            }
        }),
    )
}

fn serve(coordinator: &Coordinator, sha: &str, headers: &HeaderMap) -> Response {
    let lowercase = sha.bytes().all(|b| !b.is_ascii_uppercase());
    if !(tourney_model::source::is_sha256(sha) && lowercase) {
        return (
            StatusCode::BAD_REQUEST,
            "expected /artifacts/<sha256, 64 lowercase hex digits>",
        )
            .into_response();
    }
    let etag = format!("\"{sha}\"");
    let cached = [
        (
            header::ETAG,
            HeaderValue::from_str(&etag).expect("hex is a header value"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE)),
    ];
    let matches = (headers.get(header::IF_NONE_MATCH))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let known = |result: Result<bool, _>| result.unwrap_or(false);
    if matches && known(coordinator.store().has_artifact(sha)) {
        return (StatusCode::NOT_MODIFIED, cached).into_response();
    }
    match coordinator.artifact(sha) {
        Ok(Some(content)) => {
            coordinator
                .metrics()
                .artifact_bytes_sent
                .inc_by(content.len() as u64);
            let kind = (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            );
            (StatusCode::OK, cached, [kind], content).into_response()
        }
        Ok(None) => match coordinator.artifact_link(sha) {
            Ok(Some(url)) => match HeaderValue::from_str(&url) {
                Ok(location) => (
                    StatusCode::PERMANENT_REDIRECT,
                    cached,
                    [(header::LOCATION, location)],
                )
                    .into_response(),
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            },
            Ok(None) => (StatusCode::NOT_FOUND, format!("no artifact {sha}")).into_response(),
            Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
        },
        Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
    }
}
