//! The live dashboard: a web page served by the coordinator itself (assets embedded in the
//! binary, no network needed) and the read-only JSON API behind it.
//!
//! - `GET /`: the page; `GET /dashboard/app.js`, `/dashboard/form.js` (the New test
//!   dialog), `/dashboard/app.css`: its assets.
//! - `GET /api/v1/versions`: the registered engine versions (name, parent, note, kind, and
//!   their presets, each as registered and as what it sets), for the New test form.
//! - `GET /api/v1/verdicts`: the accepted SPRTs, grouped tests' accepted takes and pools'
//!   promotions, by engine line (the patch's oldest ancestor version), newest first.
//! - `GET /api/v1/overview`: tournaments with progress, fleet throughput and its history,
//!   the workers table and the most recent games.
//! - `GET /api/v1/events`: the overview again as server-sent events (`event: overview`),
//!   sent when something changes and every two seconds; computed once for all open pages,
//!   which are bounded in all and per client address (past that: 503 and `Retry-After`;
//!   `feed.rs`).
//! - `GET /api/v1/tournaments/{id}`: one tournament's standings, cross-table, SPRT state
//!   with its trajectory and pentanomial counts, and its charts as inline SVG (a rating
//!   pool's ratings by version: `pool.rs`).
//! - `GET /api/v1/search?q=&author=&engine=&state=&verdict=&since_ms=&until_ms=&after=&size=`:
//!   the tournaments that match, newest first, a page at a time (`next`: the `after` of the
//!   next page).
//! - `GET /api/v1/machines`: every worker host (its machine, versions, registrations,
//!   games, last call, whether it is blocked) and the lowest worker version accepted.
//! - `GET /api/v1/tournaments/{id}/pairs/{pair}`: both games of a pair, with the position
//!   after every ply replayed by the rules core, for the board viewer.
//! - `GET /api/v1/tournaments/{id}/games.pgn`, `.../games.jsonl` (and `.gz`), fishtest's
//!   `/api/run_pgns/{id}.pgn.gz`: its games to download (`games.rs`).

use std::sync::Arc;

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use tokio::sync::watch;
use tourney_report::{Report, elo_chart, llr_chart, pentanomial_chart};

mod feed;
mod games;
mod lists;
mod pair;
mod pool;

pub(crate) use feed::client_address;
pub use pair::{PairView, pair_of};

use crate::api::view::StatusView;
use crate::fleet::{RecentGame, Throughput};
use crate::state::Coordinator;
use crate::types::CoordinatorError;

const INDEX_HTML: &str = include_str!("../../../assets/index.html");
const APP_JS: &str = include_str!("../../../assets/app.js");
const FORM_JS: &str = include_str!("../../../assets/form.js");
const APP_CSS: &str = include_str!("../../../assets/app.css");

/// Seconds per point of the throughput chart.
const HISTORY_BUCKET_S: u64 = 5;

/// A tournament's page on the dashboard, relative to the dashboard's address, `{id}`
/// standing for its number.
pub const TOURNAMENT_PAGE: &str = "/#t={id}";

/// Tournament `id`'s address by `template`, in which `{id}` stands for its number.
pub fn tournament_link(template: &str, id: u64) -> String {
    template.replace("{id}", &id.to_string())
}

/// The dashboard's routes, to merge into the coordinator's HTTP router. Event streams end
/// when `closing` turns true.
pub fn router(coordinator: Arc<Coordinator>, closing: watch::Receiver<bool>) -> axum::Router {
    let overview = Arc::clone(&coordinator);
    let machines = Arc::clone(&coordinator);
    let versions = Arc::clone(&coordinator);
    let verdicts = Arc::clone(&coordinator);
    let search = Arc::clone(&coordinator);
    let tournament = Arc::clone(&coordinator);
    let pairs = Arc::clone(&coordinator);
    let (timeline, timeline_json) = (Arc::clone(&coordinator), Arc::clone(&coordinator));
    let feed = feed::Feed::start(Arc::clone(&coordinator), closing.clone());
    axum::Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", INDEX_HTML) }),
        )
        .route(
            "/dashboard/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", APP_JS) }),
        )
        .route(
            "/dashboard/form.js",
            get(|| async { asset("text/javascript; charset=utf-8", FORM_JS) }),
        )
        .route(
            "/dashboard/app.css",
            get(|| async { asset("text/css; charset=utf-8", APP_CSS) }),
        )
        .route(
            "/timeline",
            get(move || {
                let c = Arc::clone(&timeline);
                async move {
                    let page = tokio::task::spawn_blocking(move || {
                        c.timeline(None).map(|t| {
                            t.report()
                                .html(|id| Some(tournament_link(TOURNAMENT_PAGE, id)))
                        })
                    })
                    .await;
                    match page {
                        Ok(Ok(html)) => {
                            let headers = [
                                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                                // The report's own style sheet is inline.
                                (
                                    header::CONTENT_SECURITY_POLICY,
                                    crate::api::safety::REPORT_POLICY,
                                ),
                            ];
                            (headers, html).into_response()
                        }
                        Ok(Err(e)) => {
                            (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
                        }
                        Err(e) => {
                            (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response()
                        }
                    }
                }
            }),
        )
        .route(
            "/api/v1/timeline",
            get(move || {
                let c = Arc::clone(&timeline_json);
                blocking_json(move || c.timeline(None).map(|t| Some(t.report())))
            }),
        )
        .route(
            "/api/v1/search",
            get(move |request: axum::extract::Request| {
                let c = Arc::clone(&search);
                let query = request.uri().query().unwrap_or_default().to_string();
                blocking_json(move || Ok(Some(search_page(&c, &query))))
            }),
        )
        .route(
            "/api/v1/versions",
            get(move || {
                let c = Arc::clone(&versions);
                blocking_json(move || Ok(Some(lists::version_list(&c))))
            }),
        )
        .route(
            "/api/v1/verdicts",
            get(move || {
                let c = Arc::clone(&verdicts);
                blocking_json(move || Ok(Some(lists::verdicts(&c))))
            }),
        )
        .route(
            "/api/v1/machines",
            get(move || {
                let c = Arc::clone(&machines);
                blocking_json(move || {
                    Ok(Some(serde_json::json!({
                        "machines": c.machines(),
                        "min_worker_version": c.min_worker_version(),
                    })))
                })
            }),
        )
        .route(
            "/api/v1/overview",
            get(move || {
                let c = Arc::clone(&overview);
                blocking_json(move || Ok(Some(overview_of(&c))))
            }),
        )
        .route(
            "/api/v1/events",
            get(move |request: axum::extract::Request| {
                feed::event_stream(Arc::clone(&feed), client_address(&request), closing.clone())
            }),
        )
        .route(
            "/api/v1/tournaments/{id}",
            get(move |Path(id): Path<u64>| {
                let c = Arc::clone(&tournament);
                blocking_json(move || Ok(tournament_of(&c, id)))
            }),
        )
        .route(
            "/api/v1/tournaments/{id}/pairs/{pair}",
            get(move |Path((id, pair)): Path<(u64, u64)>| {
                let c = Arc::clone(&pairs);
                blocking_json(move || pair_of(&c, id, pair))
            }),
        )
        .merge(games::router(coordinator))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// Runs `make` off the async threads; answers its value as JSON, 404 for `None` or with
/// the reason of [`CoordinatorError::Invalid`], 500 for another error.
async fn blocking_json<T: Serialize + Send + 'static>(
    make: impl FnOnce() -> Result<Option<T>, CoordinatorError> + Send + 'static,
) -> Response {
    let made = tokio::task::spawn_blocking(make).await;
    match made {
        Ok(Ok(Some(value))) => match serde_json::to_string(&value) {
            Ok(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
        },
        Ok(Ok(None)) => (StatusCode::NOT_FOUND, "no such tournament or pair").into_response(),
        // What it names cannot be shown here (archived games, say): why.
        Ok(Err(CoordinatorError::Invalid(why))) => (StatusCode::NOT_FOUND, why).into_response(),
        Ok(Err(e)) => {
            tracing::error!(error = %e, "dashboard request failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "the store failed").into_response()
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// 503 with a retry in 10 s: `why` the server cannot take one more now.
fn busy(why: String) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "10")],
        why,
    )
        .into_response()
}

/// A worker as the table shows it.
#[derive(Debug, Serialize)]
struct WorkerRow {
    id: String,
    name: String,
    version: String,
    slots: u32,
    games: u64,
    nodes: u64,
    /// Its reported pairs refused.
    rejected: u64,
    /// Seconds since it last called.
    last_seen_s: f64,
    /// Seconds since it registered.
    connected_s: f64,
    /// The name of the token it registered with.
    token: String,
}

/// The most tournaments the overview lists (the most recent).
pub const TOURNAMENTS_LISTED: usize = 200;

/// The most workers the overview lists (the fleet's counts cover them all).
pub const WORKERS_LISTED: usize = 500;

/// The fleet: throughput now and the capacity it has.
#[derive(Debug, Serialize)]
struct FleetView {
    #[serde(flatten)]
    throughput: Throughput,
    workers: usize,
    slots: u64,
    pairs_leased: u64,
}

/// What the overview shows.
#[derive(Debug, Serialize)]
pub struct Overview {
    version: &'static str,
    fleet: FleetView,
    /// Games/s in consecutive buckets over the last minutes, oldest first.
    history: Vec<f64>,
    history_bucket_s: u64,
    /// The most recent tournaments (at most [`TOURNAMENTS_LISTED`]), newest first.
    tournaments: Vec<StatusView>,
    /// All tournaments in the store (older ones through the API's pages).
    tournaments_total: usize,
    workers: Vec<WorkerRow>,
    recent: Vec<RecentGame>,
}

/// The overview of everything the coordinator runs.
pub fn overview_of(c: &Coordinator) -> Overview {
    let tournaments: Vec<StatusView> = c
        .page(None, TOURNAMENTS_LISTED)
        .0
        .iter()
        .map(StatusView::listed)
        .collect();
    let now = c.now_ms();
    let workers = c.workers();
    let seconds = |ms: u64| now.saturating_sub(ms) as f64 / 1000.0;
    Overview {
        version: env!("CARGO_PKG_VERSION"),
        fleet: FleetView {
            throughput: c.throughput(),
            workers: workers.len(),
            slots: workers.iter().map(|w| u64::from(w.slots)).sum(),
            pairs_leased: tournaments.iter().map(|t| t.pairs_leased).sum(),
        },
        history: c.throughput_history(HISTORY_BUCKET_S * 1000),
        history_bucket_s: HISTORY_BUCKET_S,
        tournaments,
        tournaments_total: c.tournament_count(),
        workers: workers
            .into_iter()
            .take(WORKERS_LISTED)
            .map(|w| WorkerRow {
                last_seen_s: seconds(w.last_seen_ms),
                connected_s: seconds(w.registered_ms),
                id: w.id,
                name: w.name,
                version: w.version,
                slots: w.slots,
                games: w.games,
                nodes: w.nodes,
                rejected: w.rejected,
                token: w.token,
            })
            .collect(),
        recent: c.recent_games(),
    }
}

/// Charts of a tournament, each an HTML figure with an inline SVG.
#[derive(Debug, Serialize, Default)]
struct Charts {
    standings: String,
    llr: Option<String>,
    elo: Option<String>,
    pentanomial: Option<String>,
    /// A tuning run's parameters over the pairs, one chart each.
    spsa: Vec<String>,
    /// A rating pool's ratings by version.
    pool: Option<String>,
}

/// One tournament in detail.
#[derive(Debug, Serialize)]
pub struct TournamentView {
    /// Its status, but for its progress, which is the report's and the table below.
    #[serde(flatten)]
    status: StatusView,
    /// A grouped test's takes, a knockout's bracket or a Swiss's standings, as a table.
    progress: Option<tourney_report::ProgressTable>,
    report: Report,
    charts: Charts,
}

/// A page of [`Coordinator::search`] for the query string `query`.
fn search_page(c: &Coordinator, query: &str) -> serde_json::Value {
    let mut search = crate::Search::default();
    let (mut after, mut size) = (None, 50);
    for (key, value) in query_pairs(query) {
        let number = value.parse::<u64>().unwrap_or(0);
        match key.as_str() {
            "q" => search.q = value,
            "author" => search.author = value,
            "engine" => search.engine = value,
            "state" => search.state = value,
            "verdict" => search.verdict = value,
            "since_ms" => search.since_ms = number,
            "until_ms" => search.until_ms = number,
            "after" => after = (number > 0).then_some(number),
            "size" => size = number as usize,
            _ => {}
        }
    }
    let (page, next) = c.search(&search, after, size);
    serde_json::json!({
        "tournaments": page.iter().map(StatusView::listed).collect::<Vec<_>>(),
        "next": next,
    })
}

/// The `key=value` pairs of a query string, percent-decoded (`+` is a space); at most 32
/// pairs of at most 200 bytes each are read.
pub(crate) fn query_pairs(query: &str) -> Vec<(String, String)> {
    let decode = |text: &str| {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                    match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        Some(b) => {
                            out.push(b);
                            i += 2;
                        }
                        None => out.push(b'%'),
                    }
                }
                b => out.push(b),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    (query.split('&'))
        .filter(|pair| !pair.is_empty() && pair.len() <= 200)
        .take(32)
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// A tournament's standings, cross-table, SPRT and charts (`None`: no such tournament).
pub fn tournament_of(c: &Coordinator, id: u64) -> Option<TournamentView> {
    let (status, report) = c.report_of(id)?;
    let charts = Charts {
        standings: report.standings_chart(),
        llr: report.sprt.as_ref().map(llr_chart),
        elo: report.sprt.as_ref().map(elo_chart),
        pentanomial: report
            .sprt
            .as_ref()
            .map(|s| pentanomial_chart(&s.pentanomial)),
        spsa: report.spsa.as_ref().map_or_else(Vec::new, |s| s.charts()),
        pool: pool::pool_chart(c, &status),
    };
    let mut view = StatusView::of(&status);
    let progress = view.progress.take().map(|p| p.table());
    Some(TournamentView {
        status: view,
        progress,
        report,
        charts,
    })
}

#[cfg(test)]
mod tests;
