//! Webhook notifications: a JSON body posted to each webhook that wants the event, signed
//! with the webhook's secret (HMAC-SHA256 of the body, in `X-Tourney-Signature-256:
//! sha256=<hex>`, as GitHub signs its webhooks), retried with exponential backoff.
//!
//! Sending never blocks: deliveries wait in a bounded queue (past it they are dropped and
//! counted), at most [`IN_FLIGHT`] are under way at once, and each attempt has a time
//! limit. Every outcome is logged and counted in
//! `tourney_webhook_deliveries_total{result}`.
//!
//! The settings are a TOML file (`tourney coordinator --webhooks FILE`):
//!
//! ```toml
//! dashboard = "https://tourney.example.org"   # links in the messages
//!
//! [[webhook]]
//! url = "https://hooks.slack.com/services/T000/B000/XXXX"
//! secret_file = "/run/secrets/tourney-hook"   # or secret = "..."
//! events = ["finished", "sprt", "paused", "suspect", "build_failed", "gate"]
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use prometheus::{IntCounterVec, IntGauge, Opts, Registry};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use tokio::sync::{Semaphore, mpsc};

/// Deliveries under way at once.
pub const IN_FLIGHT: usize = 8;
/// The longest wait between two attempts.
pub const MOST_BACKOFF: Duration = Duration::from_secs(60);
/// The most webhooks a coordinator posts to.
pub const MAX_WEBHOOKS: usize = 32;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A tournament finished.
    Finished,
    /// An SPRT accepted H0 or H1.
    Sprt,
    /// A tournament paused, with the reason.
    Paused,
    /// A worker's results look suspect.
    Suspect,
    /// An engine's build from source failed.
    BuildFailed,
    /// A rating pool's gate decided: a version promoted to the pool's best, or refused.
    Gate,
}

impl EventKind {
    /// Every kind.
    pub const ALL: [EventKind; 6] = [
        EventKind::Finished,
        EventKind::Sprt,
        EventKind::Paused,
        EventKind::Suspect,
        EventKind::BuildFailed,
        EventKind::Gate,
    ];

    /// Its name, as the settings and the `X-Tourney-Event` header write it.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Finished => "finished",
            EventKind::Sprt => "sprt",
            EventKind::Paused => "paused",
            EventKind::Suspect => "suspect",
            EventKind::BuildFailed => "build_failed",
            EventKind::Gate => "gate",
        }
    }
}

/// The webhooks file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotifySettings {
    /// The dashboard's address, for the links in messages (none: no links).
    #[serde(default)]
    pub dashboard: String,
    /// The most deliveries waiting; more are dropped (and counted).
    #[serde(default = "default_queue")]
    pub queue: usize,
    /// The webhooks.
    #[serde(default, rename = "webhook")]
    pub webhooks: Vec<Webhook>,
}

fn default_queue() -> usize {
    1000
}

/// One webhook.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    /// Where to post: `http://` or `https://`.
    pub url: String,
    /// The signing secret.
    #[serde(default)]
    pub secret: Option<String>,
    /// A file holding the signing secret (its first line).
    #[serde(default)]
    pub secret_file: Option<PathBuf>,
    /// The events it wants (default: all).
    #[serde(default)]
    pub events: Option<Vec<EventKind>>,
    /// Attempts after the first failed one.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// The wait before the first retry, milliseconds; doubled each time, at most a minute.
    #[serde(default = "default_retry_ms")]
    pub retry_ms: u64,
    /// The most one attempt may take, milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_retries() -> u32 {
    5
}

fn default_retry_ms() -> u64 {
    1000
}

fn default_timeout_ms() -> u64 {
    10_000
}

impl NotifySettings {
    /// Reads the webhooks file at `path`, with its secret files (relative to it).
    ///
    /// # Errors
    /// What is wrong, naming the file and the key.
    pub fn read(path: &std::path::Path) -> Result<NotifySettings, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading {}: {e}", path.display()))?;
        let base = path.parent().unwrap_or(std::path::Path::new("."));
        NotifySettings::parse(&text, &path.display().to_string(), base)
    }

    /// Reads a webhooks file's text (`file` names it in errors), with its secret files
    /// (relative to `base`).
    ///
    /// # Errors
    /// What is wrong, naming the file and the key.
    pub fn parse(text: &str, file: &str, base: &std::path::Path) -> Result<NotifySettings, String> {
        let mut settings: NotifySettings =
            toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        if settings.webhooks.len() > MAX_WEBHOOKS {
            return Err(format!("{file}: webhook: at most {MAX_WEBHOOKS}"));
        }
        if settings.queue == 0 || settings.queue > 100_000 {
            return Err(format!("{file}: queue: 1 to 100000"));
        }
        for (i, hook) in settings.webhooks.iter_mut().enumerate() {
            Target::parse(&hook.url).map_err(|e| format!("{file}: webhook[{i}].url: {e}"))?;
            if hook.retries > 20 {
                return Err(format!("{file}: webhook[{i}].retries: at most 20"));
            }
            if hook.timeout_ms == 0 {
                return Err(format!("{file}: webhook[{i}].timeout_ms: must be positive"));
            }
            if let Some(path) = &hook.secret_file {
                if hook.secret.is_some() {
                    return Err(format!(
                        "{file}: webhook[{i}]: give secret or secret_file, not both"
                    ));
                }
                let text = std::fs::read_to_string(base.join(path)).map_err(|e| {
                    format!("{file}: webhook[{i}].secret_file: {}: {e}", path.display())
                })?;
                hook.secret = Some(text.lines().next().unwrap_or_default().to_string());
            }
        }
        Ok(settings)
    }
}

/// Where a webhook posts: parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Target {
    tls: bool,
    host: String,
    port: u16,
    /// `host[:port]` as the `Host` header says it.
    authority: String,
    path: String,
}

impl Target {
    fn parse(url: &str) -> Result<Target, String> {
        let (tls, rest) = if let Some(rest) = url.strip_prefix("https://") {
            (true, rest)
        } else if let Some(rest) = url.strip_prefix("http://") {
            (false, rest)
        } else {
            return Err(format!("'{url}': expected http:// or https://"));
        };
        let (authority, path) = match rest.find(['/', '?']) {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let path = if path.starts_with('?') {
            format!("/{path}")
        } else {
            path.to_string()
        };
        if authority.is_empty() || authority.contains('@') || url.chars().any(char::is_whitespace) {
            return Err(format!("'{url}': expected a host (without user or spaces)"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => (
                host,
                port.parse::<u16>()
                    .map_err(|_| format!("'{url}': the port is not a number"))?,
            ),
            _ => (authority, if tls { 443 } else { 80 }),
        };
        Ok(Target {
            tls,
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            authority: authority.to_string(),
            path,
        })
    }
}

/// HMAC-SHA256 of `message` with `key` (RFC 2104).
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    use hmac::Mac;
    let mut mac = hmac::Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// The `X-Tourney-Signature-256` value of `body` under `secret`: `sha256=<hex>`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    format!(
        "sha256={}",
        hex::encode(hmac_sha256(secret.as_bytes(), body))
    )
}

/// The notifier's metrics.
#[derive(Clone)]
struct Metrics {
    deliveries: IntCounterVec,
    queued: IntGauge,
}

struct Hook {
    target: Target,
    settings: Webhook,
}

struct Delivery {
    hook: usize,
    kind: EventKind,
    id: String,
    body: Bytes,
}

/// Posts events to the configured webhooks, in the background.
pub struct Notifier {
    hooks: Arc<Vec<Hook>>,
    queue: Option<mpsc::Sender<Delivery>>,
    metrics: Metrics,
    dashboard: String,
    sent: std::sync::atomic::AtomicU64,
    /// Deliveries that failed since [`Notifier::take_failures`] was last called.
    failures: Failures,
}

/// Failed deliveries not yet taken: (the webhook's URL, the event's name), at most
/// [`FAILURES_KEPT`] (later ones are only counted).
type Failures = Arc<std::sync::Mutex<Vec<(String, &'static str)>>>;

/// The most failed deliveries kept until they are taken.
pub const FAILURES_KEPT: usize = 100;

impl Notifier {
    /// A notifier for `settings` (read by [`NotifySettings::parse`]; a webhook whose URL
    /// does not parse is left out, said in the log), its metrics in `registry`; its
    /// deliveries run on the current Tokio runtime.
    ///
    /// # Panics
    /// Its metrics are registered in `registry` already.
    pub fn start(settings: &NotifySettings, registry: &Registry) -> Notifier {
        let deliveries = IntCounterVec::new(
            Opts::new(
                "tourney_webhook_deliveries_total",
                "Webhook deliveries by result: delivered, failed (after its retries) or dropped (the queue was full)",
            ),
            &["result"],
        )
        .expect("a valid metric");
        let queued = IntGauge::new(
            "tourney_webhook_queue_depth",
            "Webhook deliveries waiting or under way",
        )
        .expect("a valid metric");
        registry
            .register(Box::new(deliveries.clone()))
            .and_then(|()| registry.register(Box::new(queued.clone())))
            .expect("the webhook metrics registered once");
        let metrics = Metrics { deliveries, queued };
        let hooks: Vec<Hook> = (settings.webhooks.iter())
            .filter_map(|w| match Target::parse(&w.url) {
                Ok(target) => Some(Hook {
                    target,
                    settings: w.clone(),
                }),
                Err(e) => {
                    tracing::error!(error = %e, "webhook left out");
                    None
                }
            })
            .collect();
        let hooks = Arc::new(hooks);
        let failures = Failures::default();
        let queue = (!hooks.is_empty()).then(|| {
            let (sender, receiver) = mpsc::channel(settings.queue.max(1));
            tokio::spawn(dispatch(
                receiver,
                http_client(),
                Arc::clone(&hooks),
                metrics.clone(),
                Arc::clone(&failures),
            ));
            sender
        });
        Notifier {
            hooks,
            queue,
            metrics,
            dashboard: settings.dashboard.trim_end_matches('/').to_string(),
            sent: std::sync::atomic::AtomicU64::new(0),
            failures,
        }
    }

    /// The deliveries that failed (out of retries, or refused) since the last call: each
    /// webhook's URL and the event's name.
    pub fn take_failures(&self) -> Vec<(String, &'static str)> {
        std::mem::take(&mut *self.failures.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The dashboard's address (for links), empty when not given.
    pub fn dashboard(&self) -> &str {
        &self.dashboard
    }

    /// Whether any webhook wants `kind`.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.hooks.iter().any(|h| wants(&h.settings, kind))
    }

    /// Deliveries queued since it started (dropped ones included): what the caller decided
    /// to send, whether or not it has gone yet.
    pub fn sent(&self) -> u64 {
        self.sent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Queues `body` for every webhook that wants `kind`; returns at once. A delivery that
    /// finds the queue full is dropped, logged and counted.
    pub fn send(&self, kind: EventKind, body: &serde_json::Value) {
        let Some(queue) = &self.queue else {
            return;
        };
        let body = Bytes::from(body.to_string());
        for (i, hook) in self.hooks.iter().enumerate() {
            if !wants(&hook.settings, kind) {
                continue;
            }
            let n = self.sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let delivery = Delivery {
                hook: i,
                kind,
                id: format!("{}-{n}", std::process::id()),
                body: body.clone(),
            };
            match queue.try_send(delivery) {
                Ok(()) => self.metrics.queued.inc(),
                Err(_) => {
                    self.metrics
                        .deliveries
                        .with_label_values(&["dropped"])
                        .inc();
                    tracing::warn!(url = %hook.settings.url, event = kind.name(), "webhook queue full: notification dropped");
                }
            }
        }
    }
}

fn wants(hook: &Webhook, kind: EventKind) -> bool {
    hook.events.as_ref().is_none_or(|e| e.contains(&kind))
}

/// Takes deliveries off the queue, at most [`IN_FLIGHT`] under way.
async fn dispatch(
    mut receiver: mpsc::Receiver<Delivery>,
    client: reqwest::Client,
    hooks: Arc<Vec<Hook>>,
    metrics: Metrics,
    failures: Failures,
) {
    let room = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(delivery) = receiver.recv().await {
        let Ok(permit) = Arc::clone(&room).acquire_owned().await else {
            break;
        };
        let (hooks, metrics, client) = (Arc::clone(&hooks), metrics.clone(), client.clone());
        let failures = Arc::clone(&failures);
        tokio::spawn(async move {
            let hook = &hooks[delivery.hook];
            let result = deliver(&client, hook, &delivery).await;
            metrics.queued.dec();
            metrics.deliveries.with_label_values(&[result]).inc();
            if result == "failed" {
                let mut kept = failures.lock().unwrap_or_else(|e| e.into_inner());
                if kept.len() < FAILURES_KEPT {
                    kept.push((hook.settings.url.clone(), delivery.kind.name()));
                }
            }
            drop(permit);
        });
    }
}

/// Posts one delivery with its retries: `delivered` or `failed`.
async fn deliver(client: &reqwest::Client, hook: &Hook, delivery: &Delivery) -> &'static str {
    let url = &hook.settings.url;
    let mut wait = Duration::from_millis(hook.settings.retry_ms);
    for attempt in 0..=hook.settings.retries {
        if attempt > 0 {
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(MOST_BACKOFF);
        }
        let timeout = Duration::from_millis(hook.settings.timeout_ms);
        let answer = tokio::time::timeout(timeout, post(client, hook, delivery))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {} ms", timeout.as_millis())));
        match answer {
            Ok(status) if (200..300).contains(&status) => {
                tracing::info!(%url, event = delivery.kind.name(), attempt, "webhook delivered");
                return "delivered";
            }
            // The receiver refuses this request: sending it again cannot help.
            Ok(status) if (400..500).contains(&status) && status != 408 && status != 429 => {
                tracing::warn!(%url, event = delivery.kind.name(), status, "webhook refused");
                return "failed";
            }
            Ok(status) => {
                tracing::warn!(%url, event = delivery.kind.name(), attempt, status, "webhook attempt failed");
            }
            Err(e) => {
                tracing::warn!(%url, event = delivery.kind.name(), attempt, error = %e, "webhook attempt failed");
            }
        }
    }
    tracing::warn!(%url, event = delivery.kind.name(), "webhook not delivered: out of retries");
    "failed"
}

/// The webhooks' HTTP client (reqwest): HTTP/1.1, TLS by rustls with the web's roots,
/// redirects not followed (a receiver that moved says so with its status), a connection
/// within 10 s.
fn http_client() -> reqwest::Client {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .use_preconfigured_tls(tls)
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .user_agent(concat!("tourney/", env!("CARGO_PKG_VERSION")))
        .build()
        .expect("a client of these settings builds")
}

/// One attempt: the HTTP status of the answer.
async fn post(client: &reqwest::Client, hook: &Hook, delivery: &Delivery) -> Result<u16, String> {
    let mut request = client
        .post(&hook.settings.url)
        .header("content-type", "application/json")
        .header("x-tourney-event", delivery.kind.name())
        .header("x-tourney-delivery", delivery.id.as_str())
        .body(delivery.body.clone());
    if let Some(secret) = &hook.settings.secret {
        request = request.header("x-tourney-signature-256", signature(secret, &delivery.body));
    }
    let mut response = request.send().await.map_err(|e| {
        let authority = &hook.target.authority;
        format!("{authority}: {}", tourney_model::error_chain(&e))
    })?;
    let status = response.status().as_u16();
    // Read (and drop) the answer, at most 64 KiB of it, so the connection ends cleanly.
    let mut read = 0usize;
    while read < 64 << 10
        && let Ok(Some(chunk)) = response.chunk().await
    {
        read += chunk.len();
    }
    Ok(status)
}

#[cfg(test)]
mod tests;
