//! The login throttle. Each attempt takes a reservation before its password is hashed,
//! counted at once as a failure of the name from that address, of the address, and of the
//! name from anywhere, all under one lock: however many attempts arrive together, no more
//! are checked than the bounds allow. A login that succeeds gives its reservation back.
//!
//! - A name from one address: [`FAILURES_PER_USER`] failures in a [`THROTTLE_WINDOW`], then
//!   refused from that address until the window ends. Nobody can lock a user out from
//!   elsewhere.
//! - One address: [`FAILURES_PER_ADDRESS`] failures a window, whatever the names.
//! - A name from anywhere: past [`SLOW_AFTER`] failures a window, one attempt every
//!   [`SLOW_INTERVAL`]: guessing from many addresses is slowed, and the user still gets in.
//! - Password hashes at once: at most [`HASHES_AT_ONCE`] (argon2id takes 19 MiB each); an
//!   attempt past them is refused at once, to try again in a second.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Failed logins a user name may have from one address in a [`THROTTLE_WINDOW`].
pub const FAILURES_PER_USER: u32 = 5;
/// Failed logins one address may have in a [`THROTTLE_WINDOW`].
pub const FAILURES_PER_ADDRESS: u32 = 20;
/// Failed logins of a name from all addresses in a window past which its attempts are
/// spaced by [`SLOW_INTERVAL`].
pub const SLOW_AFTER: u32 = 20;
/// The spacing of a much-guessed name's attempts.
pub const SLOW_INTERVAL: Duration = Duration::from_secs(2);
/// The window of the login throttle.
pub const THROTTLE_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Names and addresses the throttle remembers at most (the oldest windows go first).
pub const THROTTLE_KEYS: usize = 10_000;
/// Password hashes computed at once, at most.
pub const HASHES_AT_ONCE: usize = 8;

/// One key's failures in its window.
#[derive(Clone, Copy)]
struct Window {
    since: Instant,
    failures: u32,
    /// When its last attempt was let through.
    last: Instant,
}

/// Failed logins per (name, address), per address and per name, in windows.
pub(crate) struct Throttle {
    windows: Mutex<HashMap<String, Window>>,
    hashing: Arc<tokio::sync::Semaphore>,
}

/// An attempt let through: counted as a failure until [`Throttle::succeeded`].
pub(crate) struct Attempt {
    keys: [String; 3],
}

/// Leave to hash one password: held while it is hashed (moved with the work, so that a
/// client that goes away does not free it early).
pub(crate) type Hashing = tokio::sync::OwnedSemaphorePermit;

impl Throttle {
    /// A throttle with nothing counted.
    pub(crate) fn new() -> Throttle {
        Throttle {
            windows: Mutex::default(),
            hashing: Arc::new(tokio::sync::Semaphore::new(HASHES_AT_ONCE)),
        }
    }

    /// Lets an attempt at `name` from `address` through, counted as failed, with its leave
    /// to hash, or says how long to wait.
    pub(crate) fn reserve(
        &self,
        name: &str,
        address: &str,
    ) -> Result<(Attempt, Hashing), Duration> {
        let hashing = Arc::clone(&self.hashing)
            .try_acquire_owned()
            .map_err(|_| Duration::from_secs(1))?;
        let keys = [
            format!("user {name} from {address}"),
            format!("address {address}"),
            format!("user {name}"),
        ];
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        windows.retain(|_, w| now.duration_since(w.since) < THROTTLE_WINDOW);
        let window = |key: &str| windows.get(key).copied();
        let left = |w: Window| THROTTLE_WINDOW.saturating_sub(now.duration_since(w.since));
        let mut wait = Duration::ZERO;
        for (key, most) in [
            (&keys[0], FAILURES_PER_USER),
            (&keys[1], FAILURES_PER_ADDRESS),
        ] {
            if let Some(w) = window(key).filter(|w| w.failures >= most) {
                wait = wait.max(left(w));
            }
        }
        if let Some(w) = window(&keys[2]).filter(|w| w.failures >= SLOW_AFTER) {
            wait = wait.max(SLOW_INTERVAL.saturating_sub(now.duration_since(w.last)));
        }
        if !wait.is_zero() {
            return Err(wait);
        }
        for key in &keys {
            if windows.len() >= THROTTLE_KEYS && !windows.contains_key(key) {
                let oldest = windows.iter().min_by_key(|(_, w)| w.since);
                if let Some(oldest) = oldest.map(|(k, _)| k.clone()) {
                    windows.remove(&oldest);
                }
            }
            let w = windows.entry(key.clone()).or_insert(Window {
                since: now,
                failures: 0,
                last: now,
            });
            w.failures += 1;
            w.last = now;
        }
        drop(windows);
        Ok((Attempt { keys }, hashing))
    }

    /// `attempt`'s password was right: it is not a failure.
    pub(crate) fn succeeded(&self, attempt: Attempt) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        for key in &attempt.keys {
            if let Some(w) = windows.get_mut(key) {
                w.failures = w.failures.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_refused_from_the_address_that_failed_and_not_from_another() {
        let throttle = Throttle::new();
        for _ in 0..FAILURES_PER_USER {
            drop(throttle.reserve("ann", "10.0.0.9").unwrap());
        }
        let wait = throttle.reserve("ann", "10.0.0.9").err().unwrap();
        assert!(wait > THROTTLE_WINDOW - Duration::from_secs(5), "{wait:?}");
        // Ann, elsewhere, gets in, and a success costs nothing.
        for _ in 0..FAILURES_PER_USER {
            let (attempt, _hashing) = throttle.reserve("ann", "10.0.0.1").unwrap();
            throttle.succeeded(attempt);
        }
        assert!(throttle.reserve("ann", "10.0.0.1").is_ok());
    }

    #[test]
    fn one_address_has_a_bound_over_all_names() {
        let throttle = Throttle::new();
        for i in 0..FAILURES_PER_ADDRESS {
            drop(throttle.reserve(&format!("user{i}"), "10.0.0.9").unwrap());
        }
        assert!(throttle.reserve("someone-else", "10.0.0.9").is_err());
        assert!(throttle.reserve("someone-else", "10.0.0.8").is_ok());
    }

    #[test]
    fn a_name_guessed_from_many_addresses_is_slowed_not_locked() {
        let throttle = Throttle::new();
        for i in 0..SLOW_AFTER {
            drop(throttle.reserve("admin", &format!("10.0.{i}.1")).unwrap());
        }
        // The next attempt, from anywhere, waits for the spacing; not for the window.
        let wait = throttle.reserve("admin", "192.168.1.1").err().unwrap();
        assert!(wait <= SLOW_INTERVAL && !wait.is_zero(), "{wait:?}");
        // Once the spacing has passed, one attempt goes through.
        let mut windows = throttle.windows.lock().unwrap();
        let w = windows.get_mut("user admin").unwrap();
        w.last -= SLOW_INTERVAL;
        drop(windows);
        drop(throttle.reserve("admin", "192.168.1.1").unwrap());
        assert!(throttle.reserve("admin", "192.168.1.2").is_err());
    }

    #[test]
    fn attempts_at_once_get_no_more_checks_than_the_bound() {
        let throttle = Throttle::new();
        let through = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|scope| {
            for _ in 0..64 {
                scope.spawn(|| {
                    // Each holds its reservation as a hash would, then fails.
                    loop {
                        match throttle.reserve("ann", "10.0.0.9") {
                            Ok(held) => {
                                through.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                std::thread::sleep(Duration::from_millis(5));
                                drop(held);
                            }
                            Err(wait) if wait <= Duration::from_secs(1) => {
                                std::thread::sleep(Duration::from_millis(1));
                            }
                            Err(_) => return,
                        }
                    }
                });
            }
        });
        assert_eq!(through.into_inner(), FAILURES_PER_USER);
    }

    #[test]
    fn no_more_hashes_run_at_once_than_the_bound() {
        let throttle = Throttle::new();
        let held: Vec<_> = (0..HASHES_AT_ONCE)
            .map(|i| {
                throttle
                    .reserve(&format!("u{i}"), &format!("10.0.0.{i}"))
                    .unwrap()
            })
            .collect();
        let wait = throttle.reserve("other", "10.1.1.1").err().unwrap();
        assert_eq!(wait, Duration::from_secs(1));
        drop(held);
        assert!(throttle.reserve("other", "10.1.1.1").is_ok());
    }
}
