//! Serving the coordinator: the gRPC services with health checking and reflection,
//! `/metrics` for Prometheus and the live dashboard on the same port, the lease-expiry clock, token checks and
//! optional TLS.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::service::Routes;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Identity, Server, ServerTlsConfig};
use tourney_proto::v1 as pb;

use crate::api::auth::{Auth, Tokens};
use crate::api::service::{AdminService, WorkerService};
use crate::state::Coordinator;

/// How the server guards its services.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    /// Tokens workers must present, one each (`None`: none needed).
    pub worker_tokens: Option<Tokens>,
    /// Tokens admin clients must present.
    pub admin_tokens: Option<Tokens>,
    /// PEM certificate chain and key, for TLS.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// Served beyond loopback without both tokens, on the operator's word: shown in
    /// `/metrics` as `tourney_insecure 1`.
    pub insecure: bool,
}

/// Serves `coordinator` on `listener` until `shutdown` completes.
///
/// # Errors
/// The transport failed (e.g. a bad TLS identity).
pub async fn serve(
    coordinator: Arc<Coordinator>,
    listener: TcpListener,
    options: ServerOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), tonic::transport::Error> {
    let refused = &coordinator.metrics().auth_failures;
    let worker_auth = Auth::new(
        options.worker_tokens.clone(),
        refused.with_label_values(&["worker"]),
    );
    let accounts = Arc::clone(&coordinator);
    let admin_auth = Auth::new(
        options.admin_tokens.clone(),
        refused.with_label_values(&["admin"]),
    )
    .with_personal_tokens(Arc::new(move |token| accounts.principal_of_token(token)));
    coordinator
        .metrics()
        .insecure
        .set(i64::from(options.insecure));
    // Worker calls without their registration's secret, counted from 0.
    refused.with_label_values(&["session"]);
    let (health, health_service) = tonic_health::server::health_reporter();
    set_health(&health, true).await;
    // Reflection as `v1` and as `v1alpha`, which grpcurl and Python's reflection client
    // still ask for.
    let reflection = || {
        tonic_reflection::server::Builder::configure()
            .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
            .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
    };
    let reflection_v1 = reflection()
        .build_v1()
        .expect("the embedded descriptor sets are valid");
    let reflection_v1alpha = reflection()
        .build_v1alpha()
        .expect("the embedded descriptor sets are valid");
    let worker = InterceptedService::new(
        pb::worker_server::WorkerServer::new(WorkerService(Arc::clone(&coordinator)))
            .max_decoding_message_size(64 << 20),
        move |r| worker_auth.check(r),
    );
    let admin = InterceptedService::new(
        pb::admin_server::AdminServer::new(AdminService(Arc::clone(&coordinator)))
            .max_decoding_message_size(16 << 20),
        move |r| admin_auth.check(r),
    );
    let mut routes = Routes::builder();
    routes
        .add_service(worker)
        .add_service(admin)
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha);

    let ticker = Arc::clone(&coordinator);
    let clock = tokio::spawn(async move {
        let mut interval = tokio::time::interval(Duration::from_millis(250));
        let mut serving = true;
        let mut next_recovery = tokio::time::Instant::now();
        loop {
            interval.tick().await;
            ticker.tick();
            // A failed store: NOT_SERVING (so orchestrators and workers see it), and an
            // attempt to recover every two seconds.
            let healthy = ticker.store_fault().is_none()
                || (tokio::time::Instant::now() >= next_recovery && {
                    next_recovery = tokio::time::Instant::now() + Duration::from_secs(2);
                    ticker.recover().await
                });
            ticker.metrics().store_failing.set(i64::from(!healthy));
            if healthy != serving {
                serving = healthy;
                set_health(&health, healthy).await;
            }
        }
    });
    // Streams (the dashboard's events) end when the server stops, so that graceful
    // shutdown does not wait for open browser tabs.
    let (closing_tx, closing) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = closing_tx.send(true);
    };
    // One span a call: `grpc` (call = "Admin/Submit") or `http` (call = "GET /api/v1/…").
    let mut builder = Server::builder().accept_http1(true).trace_fn(|request| {
        let path = request.uri().path();
        let grpc = (request.headers().get("content-type"))
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/grpc"));
        match grpc {
            true => tracing::debug_span!(
                "grpc",
                call = path.strip_prefix("/tourney.v1.").unwrap_or(path)
            ),
            false => {
                tracing::debug_span!("http", call = %format_args!("{} {path}", request.method()))
            }
        }
    });
    let secure = options.tls.is_some();
    if let Some((cert, key)) = options.tls {
        builder =
            builder.tls_config(ServerTlsConfig::new().identity(Identity::from_pem(cert, key)))?;
    }
    let result = builder
        .add_routes(Routes::from(with_http(
            routes.routes(),
            coordinator,
            closing,
            secure,
        )))
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await;
    clock.abort();
    result
}

/// Both services SERVING, or NOT_SERVING (with the server as a whole).
async fn set_health(health: &tonic_health::server::HealthReporter, serving: bool) {
    use tonic_health::ServingStatus;
    let status = if serving {
        ServingStatus::Serving
    } else {
        ServingStatus::NotServing
    };
    health
        .set_service_status(
            <pb::worker_server::WorkerServer<WorkerService> as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
    health
        .set_service_status(
            <pb::admin_server::AdminServer<AdminService> as tonic::server::NamedService>::NAME,
            status,
        )
        .await;
    health.set_service_status("", status).await;
}

/// Accepted connections with Nagle's algorithm off: a response's frames go out at once
/// instead of waiting for the client's delayed ACK (40 ms on Linux), which would make every
/// lease call take that long.
fn incoming(
    listener: TcpListener,
) -> impl tokio_stream::Stream<Item = std::io::Result<tokio::net::TcpStream>> {
    use tokio_stream::StreamExt as _;
    TcpListenerStream::new(listener).map(|accepted| {
        let stream = accepted?;
        stream.set_nodelay(true)?;
        Ok(stream)
    })
}

/// Adds `GET /metrics` (Prometheus text format), the dashboard and its logins and actions
/// beside the gRPC services.
fn with_http(
    routes: Routes,
    coordinator: Arc<Coordinator>,
    closing: tokio::sync::watch::Receiver<bool>,
    secure: bool,
) -> axum::Router {
    let mut dashboard = crate::api::dashboard::router(Arc::clone(&coordinator), closing);
    if coordinator.settings.dashboard_login {
        let sessions = Arc::clone(&coordinator);
        dashboard = dashboard.route_layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let sessions = Arc::clone(&sessions);
                async move {
                    let public = matches!(
                        request.uri().path(),
                        "/" | "/dashboard/app.js" | "/dashboard/form.js" | "/dashboard/app.css"
                    );
                    if public || crate::api::web::signed_in_reader(&sessions, request.headers()) {
                        next.run(request).await
                    } else {
                        use axum::response::IntoResponse;
                        (axum::http::StatusCode::UNAUTHORIZED, "log in to see this").into_response()
                    }
                }
            },
        ));
    }
    let dashboard = dashboard
        .merge(crate::api::web::router(Arc::clone(&coordinator), secure))
        .merge(crate::api::artifacts::router(Arc::clone(&coordinator)))
        .layer(axum::middleware::map_response(
            |response: axum::response::Response| async move {
                crate::api::safety::with_safety_headers(response)
            },
        ));
    let metrics = axum::routing::get(move || {
        let coordinator = Arc::clone(&coordinator);
        async move {
            let text = tokio::task::spawn_blocking(move || coordinator.metrics_text())
                .await
                .unwrap_or_default();
            (
                [(axum::http::header::CONTENT_TYPE, prometheus::TEXT_FORMAT)],
                text,
            )
        }
    });
    routes
        .into_axum_router()
        .route("/metrics", metrics)
        .merge(dashboard)
}
