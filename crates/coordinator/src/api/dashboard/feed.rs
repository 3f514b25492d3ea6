//! The dashboard's live feed: the overview computed once for all open pages and sent to
//! each as server-sent events, on a change and every two seconds, to a bounded number of
//! pages in all and per client address.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use tokio::sync::watch;
use tokio::task::JoinError;
use tokio_stream::wrappers::ReceiverStream;

use super::{busy, overview_of};
use crate::state::Coordinator;

/// Longest time between two overview events.
const EVENT_EVERY: Duration = Duration::from_secs(2);
/// Shortest time between two overview events.
const EVENT_THROTTLE: Duration = Duration::from_millis(500);

/// The overview as JSON at a moment.
#[derive(Clone)]
struct SharedOverview {
    at: tokio::time::Instant,
    json: Arc<str>,
}

/// What the open event streams share: the overview, computed once for all of them, and
/// their count, within the coordinator's bounds (in all and per client address).
pub(super) struct Feed {
    coordinator: Arc<Coordinator>,
    overview: watch::Sender<SharedOverview>,
    /// One fresh overview is computed at a time, for every page that opens meanwhile.
    computing: tokio::sync::Mutex<()>,
    open: std::sync::Mutex<OpenStreams>,
}

/// Event streams open now, in all and by client address.
#[derive(Default)]
struct OpenStreams {
    all: usize,
    by_address: std::collections::HashMap<std::net::IpAddr, usize>,
}

/// An open event stream's place among the bounded few; given back when dropped.
struct Admitted {
    feed: Arc<Feed>,
    address: std::net::IpAddr,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.feed.open.lock().unwrap_or_else(|e| e.into_inner());
        open.all -= 1;
        if let Some(n) = open.by_address.get_mut(&self.address) {
            *n -= 1;
            if *n == 0 {
                open.by_address.remove(&self.address);
            }
        }
    }
}

impl Feed {
    /// The feed, and its task: on a change (at most one per [`EVENT_THROTTLE`]) and at
    /// least every [`EVENT_EVERY`], while any stream is open, until `closing` turns true.
    pub(super) fn start(
        coordinator: Arc<Coordinator>,
        mut closing: watch::Receiver<bool>,
    ) -> Arc<Feed> {
        let stale = SharedOverview {
            at: tokio::time::Instant::now() - EVENT_EVERY,
            json: Arc::from(""),
        };
        let feed = Arc::new(Feed {
            coordinator: Arc::clone(&coordinator),
            overview: watch::channel(stale).0,
            computing: tokio::sync::Mutex::new(()),
            open: Default::default(),
        });
        let task = Arc::clone(&feed);
        let mut changes = coordinator.subscribe();
        tokio::spawn(async move {
            while !*closing.borrow() {
                if task.overview.receiver_count() > 0 && task.refresh().await.is_err() {
                    break;
                }
                tokio::select! {
                    _ = closing.changed() => break,
                    () = async {
                        tokio::time::sleep(EVENT_THROTTLE).await;
                        let _ = tokio::time::timeout(EVENT_EVERY - EVENT_THROTTLE, changes.changed())
                            .await;
                    } => {}
                }
                changes.mark_unchanged();
            }
        });
        feed
    }

    /// Computes the overview now and sends it to every open stream.
    async fn refresh(&self) -> Result<SharedOverview, JoinError> {
        let _one = self.computing.lock().await;
        let overview = SharedOverview {
            at: tokio::time::Instant::now(),
            json: overview_json(&self.coordinator).await?,
        };
        self.overview.send_replace(overview.clone());
        Ok(overview)
    }

    /// The overview for a page that opens now: the shared one if it is recent, else one
    /// fresh one for every page opening meanwhile.
    async fn current(&self) -> Result<SharedOverview, JoinError> {
        let recent = || {
            let latest = self.overview.borrow();
            (latest.at.elapsed() < EVENT_EVERY).then(|| latest.clone())
        };
        if let Some(overview) = recent() {
            return Ok(overview);
        }
        let waited = self.computing.lock().await;
        if let Some(overview) = recent() {
            return Ok(overview);
        }
        drop(waited);
        self.refresh().await
    }

    /// A place for a stream from `address`, or why there is none.
    fn admit(self: &Arc<Self>, address: std::net::IpAddr) -> Result<Admitted, String> {
        let settings = &self.coordinator.settings;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let mine = open.by_address.get(&address).copied().unwrap_or(0);
        if open.all >= settings.dashboard_streams {
            return Err(format!(
                "the dashboard has {} live views open, its most: try again later \
                 (/api/v1/overview answers without one)",
                open.all
            ));
        }
        if mine >= settings.dashboard_streams_per_address {
            return Err(format!(
                "{mine} live views of the dashboard are open from {address}, the most one \
                 address may have: close one, or try again later"
            ));
        }
        open.all += 1;
        *open.by_address.entry(address).or_default() += 1;
        Ok(Admitted {
            feed: Arc::clone(self),
            address,
        })
    }
}

/// The overview as JSON, computed off the async threads.
async fn overview_json(coordinator: &Arc<Coordinator>) -> Result<Arc<str>, JoinError> {
    let c = Arc::clone(coordinator);
    tokio::task::spawn_blocking(move || {
        Arc::from(serde_json::to_string(&overview_of(&c)).unwrap_or_default())
    })
    .await
}

/// The client's address of a request served by the coordinator (plain or TLS); the
/// unspecified address when it is not known.
pub(crate) fn client_address(request: &axum::extract::Request) -> std::net::IpAddr {
    use tonic::transport::server::{TcpConnectInfo, TlsConnectInfo};
    let extensions = request.extensions();
    extensions
        .get::<TcpConnectInfo>()
        .and_then(TcpConnectInfo::remote_addr)
        .or_else(|| {
            extensions
                .get::<TlsConnectInfo<TcpConnectInfo>>()
                .and_then(|i| i.get_ref().remote_addr())
        })
        .map_or(std::net::Ipv4Addr::UNSPECIFIED.into(), |a| a.ip())
}

/// Overview events for one page: the current one now, then each of the shared feed's,
/// until the page goes away or `closing` turns true. Past the bounds on open streams,
/// 503 with the reason and a `Retry-After`.
pub(super) async fn event_stream(
    feed: Arc<Feed>,
    address: std::net::IpAddr,
    mut closing: watch::Receiver<bool>,
) -> Response {
    let admitted = match feed.admit(address) {
        Ok(admitted) => admitted,
        Err(why) => return busy(why),
    };
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    let mut overview = feed.overview.subscribe();
    overview.mark_unchanged();
    tokio::spawn(async move {
        let _admitted = admitted;
        let event = |data: &str| Ok::<_, Infallible>(Event::default().event("overview").data(data));
        let Ok(first) = feed.current().await else {
            return;
        };
        if tx.send(event(&first.json)).await.is_err() {
            return;
        }
        loop {
            tokio::select! {
                _ = closing.changed() => break,
                changed = overview.changed() => {
                    if changed.is_err() {
                        break; // The feed stopped with the server.
                    }
                    let data = Arc::clone(&overview.borrow_and_update().json);
                    if tx.send(event(&data)).await.is_err() {
                        break; // The page went away.
                    }
                }
            }
        }
    });
    Sse::new(ReceiverStream::new(rx)).into_response()
}
