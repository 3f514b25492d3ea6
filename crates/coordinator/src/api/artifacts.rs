//! `GET /artifacts/{sha256}`: programs and data files by their sha256, for workers and for
//! any HTTP cache or CDN in front of the coordinator. Content named by its hash never
//! changes, so it is served `immutable` with the hash as its `ETag` (a conditional request
//! gets `304`); an artifact linked to an external URL (`LinkArtifact`) is a `308` redirect
//! there, cached as long. Whoever knows a hash may fetch it, as with a capability URL: the
//! hashes are given only in leases and to admin clients, and workers check what they get.
//! The release offered to workers that update themselves ([`crate::fleet::release`]) is served
//! the same way, from its own file.
//!
//! Content is streamed from its file a piece at a time (a few pieces ahead of the client),
//! and a `Range: bytes=N-` or `bytes=N-M` request gets that part (`206`), so a download
//! broken off resumes where it stopped.

use std::sync::Arc;

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::state::Coordinator;

/// The `Cache-Control` of content named by its hash.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Bytes read from an artifact's file at a time.
const PIECE: usize = 256 << 10;

/// Pieces read ahead of a slow client, per download.
const PIECES_AHEAD: usize = 4;

/// The route, to merge beside the gRPC services.
pub fn router(coordinator: Arc<Coordinator>) -> axum::Router {
    axum::Router::new().route(
        "/artifacts/{sha}",
        axum::routing::get(move |Path(sha): Path<String>, headers: HeaderMap| {
            let coordinator = Arc::clone(&coordinator);
            async move {
                let found = {
                    let coordinator = Arc::clone(&coordinator);
                    let sha = sha.clone();
                    tokio::task::spawn_blocking(move || find(&coordinator, &sha, &headers)).await
                };
                match found {
                    Ok(Found::Stored { start, end, size }) => {
                        stream(coordinator, sha, start, end, size)
                    }
                    Ok(Found::Answer(response)) => response,
                    Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
                }
            }
        }),
    )
}

/// What a request for an artifact finds.
enum Found {
    /// Bytes `start..end` of a stored artifact of `size` bytes are to be sent.
    Stored { start: u64, end: u64, size: u64 },
    /// The whole answer (a redirect, not modified, an error).
    Answer(Response),
}

/// The headers of content named by its hash `sha`.
fn cached(sha: &str) -> [(header::HeaderName, HeaderValue); 3] {
    [
        (
            header::ETAG,
            HeaderValue::from_str(&format!("\"{sha}\"")).expect("hex is a header value"),
        ),
        (header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE)),
        (header::ACCEPT_RANGES, HeaderValue::from_static("bytes")),
    ]
}

fn find(coordinator: &Coordinator, sha: &str, headers: &HeaderMap) -> Found {
    let answer = |response: Response| Found::Answer(response);
    let lowercase = sha.bytes().all(|b| !b.is_ascii_uppercase());
    if !(tourney_model::source::is_sha256(sha) && lowercase) {
        return answer(
            (
                StatusCode::BAD_REQUEST,
                "expected /artifacts/<sha256, 64 lowercase hex digits>",
            )
                .into_response(),
        );
    }
    let etag = format!("\"{sha}\"");
    let matches = (headers.get(header::IF_NONE_MATCH))
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let store = coordinator.store();
    let known = |result: Result<bool, _>| result.unwrap_or(false);
    let released = coordinator.releases.file(sha).is_some();
    if matches && (released || known(store.has_artifact(sha))) {
        return answer((StatusCode::NOT_MODIFIED, cached(sha)).into_response());
    }
    let size = match coordinator.releases.file(sha) {
        Some((_, size)) => Ok(Some(size)),
        None => store.artifact_size(sha),
    };
    match size {
        Ok(Some(size)) => match range(headers, size) {
            Some(Ok((start, end))) => Found::Stored { start, end, size },
            None => Found::Stored {
                start: 0,
                end: size,
                size,
            },
            Some(Err(())) => answer(
                (
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    [(
                        header::CONTENT_RANGE,
                        HeaderValue::from_str(&format!("bytes */{size}"))
                            .expect("a number is a header value"),
                    )],
                )
                    .into_response(),
            ),
        },
        Ok(None) => answer(match store.artifact_link(sha) {
            Ok(Some(url)) => match HeaderValue::from_str(&url) {
                Ok(location) => (
                    StatusCode::PERMANENT_REDIRECT,
                    cached(sha),
                    [(header::LOCATION, location)],
                )
                    .into_response(),
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            },
            Ok(None) => (StatusCode::NOT_FOUND, format!("no artifact {sha}")).into_response(),
            Err(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response(),
        }),
        Err(e) => answer((StatusCode::SERVICE_UNAVAILABLE, e.to_string()).into_response()),
    }
}

/// The byte range `start..end` a request's `Range` asks of `size` bytes: `None` without
/// one (or with one this server does not take, such as several ranges: all is sent),
/// `Err` for a range that starts past the end.
fn range(headers: &HeaderMap, size: u64) -> Option<Result<(u64, u64), ()>> {
    let spec = headers.get(header::RANGE)?.to_str().ok()?;
    let (first, last) = spec.trim().strip_prefix("bytes=")?.split_once('-')?;
    let first: u64 = first.trim().parse().ok()?;
    let end = match last.trim() {
        "" => size,
        last => last.parse::<u64>().ok()?.saturating_add(1).min(size),
    };
    if first >= size || first >= end {
        return Some(Err(()));
    }
    Some(Ok((first, end)))
}

/// Sends bytes `start..end` of the artifact `sha` of `size` bytes, read a piece at a time
/// on a blocking thread, a few pieces ahead of the client.
fn stream(coordinator: Arc<Coordinator>, sha: String, start: u64, end: u64, size: u64) -> Response {
    let (pieces, body) = tokio::sync::mpsc::channel(PIECES_AHEAD);
    let head = cached(&sha);
    tokio::task::spawn_blocking(move || {
        use std::io::{Read, Seek};
        let fail = |why: String| {
            let _ = pieces.blocking_send(Err(std::io::Error::other(why)));
        };
        // Opened once, read in order from `start`.
        let opened = match coordinator.releases.file(&sha) {
            Some((path, _)) => std::fs::File::open(path)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => (coordinator.store().open_artifact(&sha))
                .map(|found| found.map(|(file, _)| file))
                .map_err(|e| e.to_string()),
        };
        let mut file = match opened {
            Ok(Some(file)) => file,
            Ok(None) => return fail("the artifact is gone".into()),
            Err(e) => return fail(e),
        };
        if let Err(e) = file.seek(std::io::SeekFrom::Start(start)) {
            return fail(e.to_string());
        }
        let mut at = start;
        while at < end {
            let most = usize::try_from(end - at).unwrap_or(usize::MAX).min(PIECE);
            let mut piece = vec![0; most];
            match file.read(&mut piece) {
                Ok(0) => return fail("the artifact ended early".into()),
                Ok(n) => piece.truncate(n),
                Err(e) => return fail(e.to_string()),
            }
            at += piece.len() as u64;
            (coordinator.metrics().artifact_bytes_sent).inc_by(piece.len() as u64);
            if pieces
                .blocking_send(Ok(axum::body::Bytes::from(piece)))
                .is_err()
            {
                break;
            }
        }
    });
    let body = axum::body::Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(body));
    let kind = (
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    let length = (header::CONTENT_LENGTH, HeaderValue::from(end - start));
    if (start, end) == (0, size) {
        return (StatusCode::OK, head, [kind, length], body).into_response();
    }
    let part = format!("bytes {start}-{}/{size}", end - 1);
    let part = (
        header::CONTENT_RANGE,
        HeaderValue::from_str(&part).expect("numbers are a header value"),
    );
    (
        StatusCode::PARTIAL_CONTENT,
        head,
        [kind, length, part],
        body,
    )
        .into_response()
}
