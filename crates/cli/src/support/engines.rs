//! Outside engines started on the user's own command (`play`, `run`, `replay`, `bench
//! outside`): their policy, and their end when the command is stopped.

use anyhow::Result;
use tourney_runner::confine::EnginePolicy;
use tourney_runner::dialect::Dialect;
use tourney_runner::{EngineConfig, ExternalEngine};

use crate::support::signals::{Interrupted, stop_signal};

/// How engines started on the user's own command (`play`, `run`, `replay`, `bench
/// outside`) are confined: like a worker's, but allowed to run as the user, root included.
pub(crate) fn own_engines() -> EnginePolicy {
    EnginePolicy {
        allow_root: true,
        ..Default::default()
    }
}

/// An outside engine run by `command`, speaking `protocol`, with `options` set, on the
/// user's own command.
pub(crate) fn own_engine(
    command: &str,
    protocol: Dialect,
    options: Vec<(String, String)>,
) -> ExternalEngine {
    let mut config = EngineConfig::new(command);
    config.policy = own_engines();
    config.protocol = protocol;
    config.options = options;
    ExternalEngine::new(config)
}

/// Runs `work` (a command that plays outside engines on its own threads) until it ends or
/// the command is stopped (Ctrl-C, SIGTERM). Stopped, it ends the outside engines (they run
/// in sessions of their own, so the signal does not reach them, and they would outlive the
/// command) and returns [`Interrupted`] at once, the work's thread left to end with the
/// process. The signal handlers are in place before the work starts.
pub(crate) fn until_stopped<T: Send + 'static>(
    work: impl FnOnce() -> Result<T> + Send + 'static,
) -> Result<T> {
    let (done, outcome) = std::sync::mpsc::channel();
    let stopped = done.clone();
    let (ready, handlers_installed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        let Ok(runtime) = runtime else {
            let _ = ready.send(());
            return;
        };
        runtime.block_on(async {
            let stop = stop_signal();
            let _ = ready.send(());
            stop.await;
        });
        let _ = stopped.send(None);
    });
    let _ = handlers_installed.recv();
    std::thread::spawn(move || {
        let _ = done.send(Some(work()));
    });
    match outcome.recv() {
        Ok(Some(result)) => result,
        _ => {
            tourney_runner::confine::end_engines();
            eprintln!("Interrupted: the engines are stopped.");
            Err(Interrupted.into())
        }
    }
}
