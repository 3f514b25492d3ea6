//! A coordinator served on a loopback port of its own, for tests that talk to it over the
//! network as workers, admins and browsers do.

use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tourney_coordinator::Coordinator;
use tourney_coordinator::api::server::{ServerOptions, serve};

/// Serves `coordinator` with `options` on `127.0.0.1` until the test's runtime ends; its
/// address.
pub async fn on_loopback(coordinator: Arc<Coordinator>, options: ServerOptions) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("a bound address");
    tokio::spawn(serve(
        coordinator,
        listener,
        options,
        std::future::pending(),
    ));
    addr
}
