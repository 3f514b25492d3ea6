//! A tournament's games to download, from the dashboard's server, a page of the store at a
//! time:
//!
//! - `GET /api/v1/tournaments/{id}/games.pgn` and `.../games.jsonl`: PGN with cutechess's
//!   move comments, or the export's JSON Lines; gzip (`Content-Encoding: gzip`) when the
//!   client accepts it;
//! - `.../games.pgn.gz`, `.../games.jsonl.gz`: a gzip file, whatever the client accepts;
//! - `GET /api/run_pgns/{id}.pgn.gz` (and `.pgn`): fishtest's name for the first.
//!
//! Query: `engine=NAME` (its games, either colour), `from_pair=A`, `to_pair=B`,
//! `since_ms=T` (started then or later), as `tourney export` filters. Each page is read and
//! made on a blocking thread while the stream waits; the client takes it within
//! [`SEND_WITHIN`] or the download ends. At most [`DOWNLOADS`] run at once, [`PER_ADDRESS`]
//! from one address; past those, 503 with `Retry-After`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::Coordinator;
use crate::types::{CoordinatorError, ExportFilter};
use crate::{Download, GamesFormat};

/// The most downloads at once.
const DOWNLOADS: usize = 8;
/// The most downloads at once from one client address.
const PER_ADDRESS: usize = 2;
/// How long a piece waits for the client to take it before the download ends.
const SEND_WITHIN: Duration = Duration::from_secs(60);

/// The downloads running, in all and by client address.
#[derive(Default)]
struct Running {
    by_address: Mutex<HashMap<IpAddr, usize>>,
}

/// A running download's place among the bounded few; given back when dropped.
struct Place {
    running: Arc<Running>,
    address: IpAddr,
}

impl Running {
    fn admit(self: &Arc<Self>, address: IpAddr) -> Result<Place, String> {
        let mut by_address = self.by_address.lock().unwrap_or_else(|e| e.into_inner());
        let all: usize = by_address.values().sum();
        let mine = by_address.get(&address).copied().unwrap_or(0);
        if all >= DOWNLOADS {
            return Err(format!(
                "{all} downloads of games are running, the most at once: try again later"
            ));
        }
        if mine >= PER_ADDRESS {
            return Err(format!(
                "{mine} downloads of games are running from {address}, the most one address \
                 may have: try again when one ends"
            ));
        }
        *by_address.entry(address).or_default() += 1;
        Ok(Place {
            running: Arc::clone(self),
            address,
        })
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut by_address = (self.running.by_address.lock()).unwrap_or_else(|e| e.into_inner());
        if let Some(n) = by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                by_address.remove(&self.address);
            }
        }
    }
}

/// What a path asks for: the tournament, the format, and whether as a `.gz` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Asked {
    id: u64,
    format: GamesFormat,
    gz_file: bool,
}

/// `games.pgn`, `games.jsonl`, with `.gz` or not, after `/api/v1/tournaments/{id}/`.
fn file_asked(id: u64, file: &str) -> Option<Asked> {
    let (name, gz_file) = match file.strip_suffix(".gz") {
        Some(name) => (name, true),
        None => (file, false),
    };
    let format = match name {
        "games.pgn" => GamesFormat::Pgn,
        "games.jsonl" => GamesFormat::Jsonl,
        _ => return None,
    };
    Some(Asked {
        id,
        format,
        gz_file,
    })
}

/// fishtest's `{id}.pgn.gz` (or `{id}.pgn`) after `/api/run_pgns/`.
fn run_pgns_asked(file: &str) -> Option<Asked> {
    let (id, gz_file) = match file.strip_suffix(".pgn.gz") {
        Some(id) => (id, true),
        None => (file.strip_suffix(".pgn")?, false),
    };
    Some(Asked {
        id: id.parse().ok()?,
        format: GamesFormat::Pgn,
        gz_file,
    })
}

/// Whether `Accept-Encoding` accepts gzip (`gzip` or `*`, without `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    (headers.get_all(header::ACCEPT_ENCODING).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or_default().to_ascii_lowercase();
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f64>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            matches!(name.as_str(), "gzip" | "x-gzip" | "*") && !refused
        })
}

/// The export's filter from a query string (`engine`, `from_pair`, `to_pair`, `since_ms`).
fn filter_of(query: &str) -> ExportFilter {
    let mut filter = ExportFilter::default();
    let (mut from, mut to) = (None, None);
    for (key, value) in super::query_pairs(query) {
        let number = value.parse::<u64>().ok();
        match key.as_str() {
            "engine" if !value.is_empty() => filter.engine = Some(value),
            "from_pair" => from = number,
            "to_pair" => to = number,
            "since_ms" => filter.since_ms = number,
            _ => {}
        }
    }
    if from.is_some() || to.is_some() {
        filter.pairs = Some((from.unwrap_or(0), to.unwrap_or(u64::MAX)));
    }
    filter
}

/// The download routes, to merge into the dashboard's (whose rule on who may read applies
/// to them).
pub(super) fn router(coordinator: Arc<Coordinator>) -> axum::Router {
    let running = Arc::new(Running::default());
    let mut router = axum::Router::new();
    // Each name its own route: another action's path (`POST .../approve`) stays its own.
    for file in ["games.pgn", "games.pgn.gz", "games.jsonl", "games.jsonl.gz"] {
        let (c, r) = (Arc::clone(&coordinator), Arc::clone(&running));
        router = router.route(
            &format!("/api/v1/tournaments/{{id}}/{file}"),
            get(move |Path(id): Path<u64>, request: Request| {
                let (c, r) = (Arc::clone(&c), Arc::clone(&r));
                async move {
                    let asked = file_asked(id, file).expect("a file name routed");
                    download(c, r, asked, request).await
                }
            }),
        );
    }
    router.route(
        "/api/run_pgns/{file}",
        get(move |Path(file): Path<String>, request: Request| {
            let (c, r) = (Arc::clone(&coordinator), Arc::clone(&running));
            async move {
                match run_pgns_asked(&file) {
                    Some(asked) => download(c, r, asked, request).await,
                    None => (StatusCode::NOT_FOUND, "expected ID.pgn.gz or ID.pgn").into_response(),
                }
            }
        }),
    )
}

/// Tournament `asked.id`'s games as a file: 404 for an unknown tournament or archived
/// games, 503 past the bounds on downloads, else 200 and the file, streamed.
async fn download(
    c: Arc<Coordinator>,
    running: Arc<Running>,
    asked: Asked,
    request: Request,
) -> Response {
    let Asked {
        id,
        format,
        gz_file,
    } = asked;
    if !c.lock().tournaments.contains_key(&id) {
        return (StatusCode::NOT_FOUND, format!("no tournament {id}")).into_response();
    }
    let place = match running.admit(super::client_address(&request)) {
        Ok(place) => place,
        Err(why) => return super::busy(why),
    };
    let encoded = !gz_file && accepts_gzip(request.headers());
    let filter = filter_of(request.uri().query().unwrap_or_default());
    let mut making = Download::new(id, filter, format, gz_file || encoded);
    // The first piece before the answer: an archived test's games are a 404 that says why.
    let first = match next_piece(&c, making).await {
        Ok((piece, rest)) => {
            making = rest;
            piece
        }
        Err(e) => return failed(e),
    };
    let (pieces, body) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    tokio::spawn(async move {
        let _place = place;
        let mut piece = first;
        loop {
            let Some(bytes) = piece else {
                tracing::debug!(tournament = id, games = making.games, "games downloaded");
                return;
            };
            let sent = tokio::time::timeout(SEND_WITHIN, pieces.send(Ok(Bytes::from(bytes))));
            if !matches!(sent.await, Ok(Ok(()))) {
                return; // The client went away or stopped reading.
            }
            piece = match next_piece(&c, making).await {
                Ok((next, rest)) => {
                    making = rest;
                    next
                }
                Err(e) => {
                    // Ends the body early: the client sees an incomplete file.
                    tracing::warn!(tournament = id, error = %e, "a download of games failed");
                    let _ = pieces.send(Err(std::io::Error::other(e.to_string()))).await;
                    return;
                }
            };
        }
    });
    let extension = format.extension();
    let (kind, name) = match (gz_file, format) {
        (true, _) => (
            "application/gzip",
            format!("tournament-{id}.{extension}.gz"),
        ),
        (false, GamesFormat::Pgn) => (
            "application/x-chess-pgn; charset=utf-8",
            format!("tournament-{id}.pgn"),
        ),
        (false, GamesFormat::Jsonl) => ("application/x-ndjson", format!("tournament-{id}.jsonl")),
    };
    let mut response =
        Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(body)).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if !gz_file {
        headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    }
    if encoded {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    response
}

/// The download's next piece, made on a blocking thread, and the download back.
async fn next_piece(
    c: &Arc<Coordinator>,
    mut making: Download,
) -> Result<(Option<Vec<u8>>, Download), CoordinatorError> {
    let c = Arc::clone(c);
    tokio::task::spawn_blocking(move || making.next_piece(&c).map(|piece| (piece, making)))
        .await
        .unwrap_or_else(|e| Err(CoordinatorError::Exhausted(format!("a page failed: {e}"))))
}

/// The answer to a download that failed before it began.
fn failed(e: CoordinatorError) -> Response {
    match e {
        // What it names cannot be given here (archived games): why.
        CoordinatorError::Invalid(why) => (StatusCode::NOT_FOUND, why).into_response(),
        CoordinatorError::Unavailable(why) => {
            (StatusCode::SERVICE_UNAVAILABLE, why).into_response()
        }
        e => {
            tracing::error!(error = %e, "a download of games failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "the store failed").into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_a_format_and_whether_gzip() {
        let asked = |format, gz_file| {
            Some(Asked {
                id: 7,
                format,
                gz_file,
            })
        };
        assert_eq!(file_asked(7, "games.pgn"), asked(GamesFormat::Pgn, false));
        assert_eq!(
            file_asked(7, "games.jsonl.gz"),
            asked(GamesFormat::Jsonl, true)
        );
        assert_eq!(file_asked(7, "games.txt"), None);
        assert_eq!(file_asked(7, "pairs"), None);
        assert_eq!(run_pgns_asked("7.pgn.gz"), asked(GamesFormat::Pgn, true));
        assert_eq!(run_pgns_asked("7.pgn"), asked(GamesFormat::Pgn, false));
        assert_eq!(run_pgns_asked("x.pgn.gz"), None);
        assert_eq!(run_pgns_asked("7"), None);
    }

    #[test]
    fn gzip_is_accepted_unless_refused_with_q_0() {
        let accepts = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_str(value).unwrap(),
            );
            accepts_gzip(&headers)
        };
        assert!(accepts("gzip"));
        assert!(accepts("br, GZIP;q=0.5"));
        assert!(accepts("*"));
        assert!(!accepts("gzip;q=0"));
        assert!(!accepts("br, deflate"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn a_query_filters_as_the_export_does() {
        let f = filter_of("engine=new%20one&from_pair=3&since_ms=5&other=1");
        assert_eq!(f.engine.as_deref(), Some("new one"));
        assert_eq!(f.pairs, Some((3, u64::MAX)));
        assert_eq!(f.since_ms, Some(5));
        assert_eq!(filter_of("").pairs, None);
    }
}
