//! `tourney health`: a container health check (Docker's HEALTHCHECK, compose) without curl
//! or grpc_health_probe in the image.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Args;

/// Check that a coordinator or a worker serves; exits 0 if so (container health checks).
///
/// Exits 0 when a coordinator's gRPC health says serving (`--grpc`, default
/// `http://127.0.0.1:7070`), or when an HTTP URL (`--http`, a worker's `--metrics`) answers
/// 200: the image's HEALTHCHECK.
#[derive(Args)]
pub(crate) struct HealthArgs {
    /// The coordinator whose gRPC health to check (the standard `grpc.health.v1` service).
    #[arg(
        long,
        env = "TOURNEY_COORDINATOR",
        default_value = "http://127.0.0.1:7070"
    )]
    grpc: String,
    /// Instead (it wins over `--grpc`), an HTTP URL that must answer 200 (a worker's `--metrics` endpoint, e.g.
    /// http://127.0.0.1:9100/metrics).
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// Seconds to wait for an answer.
    #[arg(long, default_value_t = 5)]
    timeout: u64,
}

/// Exits 0 when the service answers that it is serving, else 1 with the reason.
pub(crate) fn run(args: &HealthArgs) -> Result<ExitCode> {
    let timeout = Duration::from_secs(args.timeout.max(1));
    match &args.http {
        Some(url) => http_ok(url, timeout)?,
        None => grpc_serving(&args.grpc, timeout)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn grpc_serving(url: &str, timeout: Duration) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let check = async {
            let channel = tourney_worker::connect(url, None)
                .await
                .with_context(|| format!("connecting to {url}"))?;
            let mut client = tonic_health::pb::health_client::HealthClient::new(channel);
            let answer = client
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
                .map_err(|e| anyhow::anyhow!("{url}: health check failed: {}", e.message()))?
                .into_inner();
            let serving = tonic_health::pb::health_check_response::ServingStatus::Serving;
            if answer.status != serving as i32 {
                bail!("{url}: not serving (status {})", answer.status);
            }
            Ok(())
        };
        tokio::time::timeout(timeout, check)
            .await
            .with_context(|| format!("{url}: no answer within {timeout:?}"))?
    })
}

fn http_ok(url: &str, timeout: Duration) -> Result<()> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("{url}: only http:// URLs are checked"))?;
    let (host_port, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let address = host_port
        .to_socket_addrs()
        .with_context(|| format!("{url}: resolving {host_port}"))?
        .next()
        .with_context(|| format!("{url}: no address for {host_port}"))?;
    let mut stream = TcpStream::connect_timeout(&address, timeout)
        .with_context(|| format!("connecting to {host_port}"))?;
    stream.set_read_timeout(Some(timeout))?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host_port}\r\n\r\n")?;
    let mut head = [0u8; 64];
    let n = stream.read(&mut head)?;
    let status = String::from_utf8_lossy(&head[..n]);
    let status = status.lines().next().unwrap_or_default();
    if status.split(' ').nth(1) != Some("200") {
        bail!("{url}: answered '{status}'");
    }
    Ok(())
}
