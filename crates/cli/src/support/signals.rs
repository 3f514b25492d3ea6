//! Stop signals (SIGINT, SIGTERM) as futures, and the error a stopped command returns
//! (exit status 130).

/// The error of a command stopped by a signal: it has said what it had to, and `main` exits
/// with status 130 (128 + SIGINT, as shells expect) without another message. Commands
/// return it instead of exiting, so that what they hold is dropped in order on the way out.
#[derive(Debug)]
pub(crate) struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// Exit status of a command stopped by a signal.
pub(crate) const INTERRUPTED_STATUS: u8 = 130;

/// Resolves at SIGTERM (`docker stop`, a pod's deletion, systemd) or SIGINT (Ctrl-C).
/// As PID 1 in a container a process gets no default handling of SIGTERM: this is what
/// stops it there. The handlers are installed by this call, not when the future is first
/// polled, so a signal that comes while the process is still starting is not fatal; call
/// it (in the runtime) before serving anything.
pub(crate) fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).ok();
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    async move {
        tokio::select! {
            _ = received(term.as_mut()) => {}
            _ = received(interrupt.as_mut()) => {}
        }
    }
}

/// The next delivery of `signal`; never without one.
async fn received(signal: Option<&mut tokio::signal::unix::Signal>) {
    match signal {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}
