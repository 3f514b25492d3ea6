//! A coordinator in this process, served on loopback and guarded by a random token: the
//! one `tourney run` plays its tournament on, and the one an admin command opens over a
//! stopped coordinator's data directory (`--data`). Clients talk to it over gRPC exactly
//! as to a cluster's. Also where `run` writes its reports in a data directory.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::Args;
use tokio::net::TcpListener;
use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::dashboard::{TOURNAMENT_PAGE, tournament_link};
use tourney_coordinator::api::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_store::{DEFAULT_CACHE_MB, Store};

use crate::support::client::{Admin, ClientArgs};

/// A random-enough token for the loopback connections.
fn local_token() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut rng = tourney_ai::Rng::new(nanos as u64 ^ u64::from(std::process::id()));
    format!("{:016x}{:016x}", rng.next_u64(), rng.next_u64())
}

/// A coordinator served in this process until [`LocalCoordinator::stop`] (or the end of
/// the runtime).
pub(crate) struct LocalCoordinator {
    /// How to reach it: its loopback URL and its token (for workers and admin alike).
    pub(crate) client: ClientArgs,
    /// Where it listens (a wildcard address given as loopback).
    pub(crate) addr: SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    server: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl LocalCoordinator {
    /// Serves `coordinator` (gRPC, dashboard and /metrics) on `listen`.
    pub(crate) async fn start(
        coordinator: Arc<Coordinator>,
        listen: SocketAddr,
    ) -> Result<LocalCoordinator> {
        // A process that serves a coordinator must not die when a client's connection goes
        // while a reply is being written (an admin command stopped halfway through an
        // export): the write fails with EPIPE instead of raising SIGPIPE. A reader of our
        // own output that goes away then ends the command quietly (see `main`).
        #[cfg(unix)]
        // SAFETY: setting a signal's disposition; no handler is installed.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let listener = TcpListener::bind(listen)
            .await
            .with_context(|| format!("--listen {listen}"))?;
        let bound = listener.local_addr()?;
        let addr = if bound.ip().is_unspecified() {
            SocketAddr::from(([127, 0, 0, 1], bound.port()))
        } else {
            bound
        };
        let token = local_token();
        let options = ServerOptions {
            worker_tokens: Some(Tokens::new(vec![("local".into(), token.clone())])),
            admin_tokens: Some(Tokens::new(vec![("local".into(), token.clone())])),
            tls: None,
            insecure: false,
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(serve(coordinator, listener, options, async {
            let _ = stopped.await;
        }));
        Ok(LocalCoordinator {
            client: ClientArgs {
                coordinator: format!("http://{addr}"),
                token: Some(token),
                token_file: None,
                tls_ca: None,
            },
            addr,
            stop,
            server,
        })
    }

    /// Stops serving, once the calls under way are answered.
    pub(crate) async fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.server.await;
    }
}

/// Which coordinator an admin command talks to: one reached over the network, or a
/// stopped one's data directory opened in this process.
#[derive(Args, Clone)]
pub(crate) struct AdminTarget {
    #[command(flatten)]
    pub(crate) client: ClientArgs,
    /// Instead of connecting to --coordinator: open this data directory of a stopped
    /// coordinator (or `tourney run`) and run its coordinator in this process for the
    /// command, e.g. the report or the games of a run stopped with Ctrl-C. Nothing is
    /// played; opening it does what a coordinator's restart does, and what the command
    /// changes (a cancel, say) is stored as a coordinator stores it.
    #[arg(long, value_name = "DIR")]
    pub(crate) data: Option<PathBuf>,
    /// The coordinator opened for `data`, kept for the command's later calls.
    #[arg(skip)]
    opened: Arc<tokio::sync::OnceCell<LocalCoordinator>>,
}

impl AdminTarget {
    /// An admin client of the coordinator (the one opened over `data`, if given).
    pub(crate) async fn admin(&self) -> Result<Admin> {
        match &self.data {
            None => self.client.admin().await,
            Some(data) => {
                let local = self.opened.get_or_try_init(|| open_stopped(data)).await?;
                local.client.admin().await
            }
        }
    }

    /// The coordinator's URL (the one opened over `data`, if given): where its
    /// `/artifacts/` are.
    pub(crate) async fn coordinator_url(&self) -> Result<String> {
        match &self.data {
            None => Ok(self.client.coordinator.clone()),
            Some(data) => {
                let local = self.opened.get_or_try_init(|| open_stopped(data)).await?;
                Ok(local.client.coordinator.clone())
            }
        }
    }

    /// The host cache of outside engines' programs and builds the workers that played
    /// this coordinator's games would use here: `--data`'s own for `tourney run` (its
    /// `artifacts/`), else a worker's default.
    pub(crate) fn host_cache(&self) -> PathBuf {
        match &self.data {
            Some(data) => data.join("artifacts"),
            None => crate::commands::worker::default_cache(),
        }
    }

    /// Where tournaments are shown, `{id}` standing for one's number: their pages on the
    /// coordinator's dashboard or, with `data` (no dashboard serves it), the HTML reports
    /// `tourney run` writes into the data directory.
    pub(crate) fn tournament_links(&self) -> String {
        match &self.data {
            None => format!(
                "{}{TOURNAMENT_PAGE}",
                self.client.coordinator.trim_end_matches('/')
            ),
            Some(data) => {
                let data = std::fs::canonicalize(data).unwrap_or_else(|_| data.clone());
                format!("file://{}/{REPORT_FILE}", data.display())
            }
        }
    }

    /// Where tournament `id` is shown (see [`AdminTarget::tournament_links`]); `None` with
    /// `data` when `tourney run` wrote no report for it.
    pub(crate) fn tournament_link(&self, id: u64) -> Option<String> {
        let shown = self
            .data
            .as_ref()
            .is_none_or(|data| report_path(data, id).exists());
        shown.then(|| tournament_link(&self.tournament_links(), id))
    }
}

/// A coordinator over the store in `data`, served on loopback.
async fn open_stopped(data: &Path) -> Result<LocalCoordinator> {
    let store = Store::open_data_dir(data, DEFAULT_CACHE_MB).with_context(|| {
        format!(
            "opening the store in {} (a running coordinator holds it: ask that one with \
             --coordinator, or stop it first)",
            data.display()
        )
    })?;
    let settings = Settings {
        data_dir: Some(data.to_path_buf()),
        ..Settings::default()
    };
    let coordinator = Coordinator::open(store, settings, &prometheus::Registry::new())
        .with_context(|| format!("reading the store in {}", data.display()))?;
    // What a restart submits (a tuning run's verification) is stored before the command
    // reads anything.
    coordinator.restarted().await;
    LocalCoordinator::start(coordinator, SocketAddr::from(([127, 0, 0, 1], 0))).await
}

/// The name of the HTML report `run` writes for a tournament into its data directory,
/// `{id}` standing for the tournament's number.
pub(crate) const REPORT_FILE: &str = "report-{id}.html";

/// The HTML report `run` writes for tournament `id` into its data directory.
pub(crate) fn report_path(data: &Path, id: u64) -> PathBuf {
    data.join(tournament_link(REPORT_FILE, id))
}

/// Arguments of `tourney cancel` and `tourney resume`.
#[derive(Args)]
pub(crate) struct TournamentArgs {
    #[command(flatten)]
    pub(crate) client: AdminTarget,
    /// The tournament id.
    pub(crate) id: u64,
}
