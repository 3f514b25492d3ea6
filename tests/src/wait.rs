//! Waiting for what a test expects instead of for a fixed time: the one helper the
//! end-to-end tests use to wait, on a thread or on a tokio runtime; and the switch that
//! makes a test which cannot run here fail instead of skipping.

use std::future::Future;
use std::time::{Duration, Instant};

/// How often a condition is checked.
const EVERY: Duration = Duration::from_millis(50);

/// Checks `probe` every 50 ms until it returns `Ok`, for up to `seconds`, and returns
/// what it gave.
///
/// # Panics
/// It never did: the message names `what` and what the probe saw last (its `Err`).
pub fn until<T>(seconds: u64, what: &str, probe: impl FnMut() -> Result<T, String>) -> T {
    within(seconds, probe)
        .unwrap_or_else(|seen| panic!("waited {seconds} s for {what}; last seen: {seen}"))
}

/// [`until`] that gives up without panicking: what the probe saw last when it never
/// returned `Ok` within `seconds`.
///
/// # Errors
/// The probe never held: its last `Err`.
pub fn within<T>(seconds: u64, mut probe: impl FnMut() -> Result<T, String>) -> Result<T, String> {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        match probe() {
            Ok(value) => return Ok(value),
            Err(seen) if Instant::now() >= deadline => return Err(seen),
            Err(_) => std::thread::sleep(EVERY),
        }
    }
}

/// [`until`] for tests on a tokio runtime: the probe is async and the wait yields.
///
/// # Panics
/// It never did: the message names `what` and what the probe saw last (its `Err`).
pub async fn until_async<T, F: Future<Output = Result<T, String>>>(
    seconds: u64,
    what: &str,
    mut probe: impl FnMut() -> F,
) -> T {
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "waited {seconds} s for {what}; last seen: {seen}"
            ),
        }
        tokio::time::sleep(EVERY).await;
    }
}

/// `Ok(())` when `holds`, else what was seen: a probe for [`until`] of a condition.
///
/// # Errors
/// The condition does not hold: `seen` says what there was instead.
pub fn check(holds: bool, seen: impl FnOnce() -> String) -> Result<(), String> {
    if holds { Ok(()) } else { Err(seen()) }
}

/// A test that cannot run here (no root, no namespaces, a missing program) says so with
/// `why` on stderr before it skips, unless the environment variable `switch` is set (as
/// `.ci/run` sets it where the machine allows), when it fails instead: CI cannot pass a
/// test that did not run.
///
/// # Panics
/// `switch` is set.
pub fn skip_unless_required(switch: &str, why: &str) {
    assert!(
        std::env::var_os(switch).is_none(),
        "{switch} is set, but this test cannot run here: {why}"
    );
    eprintln!("skipping ({why}); set {switch}=1 to require it");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_returns_what_the_probe_gave_once_it_holds() {
        let mut tries = 0;
        let value = until(5, "three tries", || {
            tries += 1;
            if tries < 3 {
                Err(format!("try {tries}"))
            } else {
                Ok(tries)
            }
        });
        assert_eq!(value, 3);
    }

    #[test]
    #[should_panic(expected = "waited 0 s for nothing; last seen: still nothing")]
    fn until_names_what_never_happened_and_what_was_seen() {
        until::<()>(0, "nothing", || Err("still nothing".into()));
    }

    #[test]
    fn check_says_what_was_seen_when_it_does_not_hold() {
        assert_eq!(check(true, || unreachable!()), Ok(()));
        assert_eq!(check(false, || "3 pairs".into()), Err("3 pairs".into()));
    }
}
