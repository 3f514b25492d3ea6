//! The machines of the fleet: each worker host with what it said of itself and what it
//! did, hosts an admin blocked (with a message their workers are told), and the lowest
//! worker version the coordinator accepts. Blocks and the version are kept in the store.

use std::collections::BTreeMap;

use serde::Serialize;
use tourney_model::account::{MAX_EVENT_DETAIL, Role, cut};
use tourney_model::fleet::WorkerProfile;
use tourney_model::release::older;

use crate::accounts::Principal;
use crate::fleet::HostFacts;
use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// The store's setting of blocked hosts: host name to the message its workers are told.
const BLOCKED: &str = "blocked_hosts";
/// The store's setting of the lowest worker version accepted.
const MIN_VERSION: &str = "min_worker_version";
/// The most hosts blocked at once.
pub const MAX_BLOCKED: usize = 10_000;

/// One worker host as the machines page shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Machine {
    /// Its name (what its workers registered with).
    pub host: String,
    /// What it said of itself (its latest registration's).
    pub facts: HostFacts,
    /// Its tourney versions, of its registrations now.
    pub versions: Vec<String>,
    /// Its registrations now.
    pub registrations: usize,
    /// Their game slots.
    pub slots: u32,
    /// Games it reported that were stored, and their nodes.
    pub games: u64,
    /// Nodes of those games.
    pub nodes: u64,
    /// When it last called, Unix milliseconds (0: no registration now).
    pub last_seen_ms: u64,
    /// Why it is blocked, when it is.
    pub blocked: Option<String>,
    /// Its workers' last checks of registered versions (bench signature, speed, build
    /// time, a refusal), the newest first, at most [`BENCHES_SHOWN`].
    pub benches: Vec<HostBench>,
}

/// The most version checks shown per host.
pub const BENCHES_SHOWN: usize = 20;

/// A host's check of a version, as its machine's row shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HostBench {
    /// The version.
    pub version: String,
    /// The tournament it was checked for.
    pub tournament: u64,
    /// The bench signature found (`None`: none asked or answered).
    pub bench_nodes: Option<u64>,
    /// The engine's speed there, nodes per second.
    pub bench_nps: u64,
    /// The build's time there, milliseconds (0: the host's cache had it).
    pub build_ms: u64,
    /// Why the engine could not play there (empty when it could).
    pub problem: String,
    /// When it was checked, Unix milliseconds.
    pub at_ms: u64,
}

impl Coordinator {
    /// Whether a worker of host `name` at `version` may register: refused when the host is
    /// blocked (with the admin's message) or its version is below the lowest accepted.
    ///
    /// # Errors
    /// [`CoordinatorError::Forbidden`] saying which, or a store error.
    pub(crate) fn admits(&self, name: &str, version: &str) -> Result<(), CoordinatorError> {
        self.admits_host(name)?;
        if let Some(lowest) = self.too_old(version) {
            return Err(CoordinatorError::Forbidden(format!(
                "worker '{name}' runs tourney {version}; this coordinator accepts {lowest} or \
                 later: upgrade tourney on this host (or run it with --update)"
            )));
        }
        Ok(())
    }

    /// Whether host `name` may register: refused, with the admin's message, when blocked.
    ///
    /// # Errors
    /// [`CoordinatorError::Forbidden`] saying so, or a store error.
    pub(crate) fn admits_host(&self, name: &str) -> Result<(), CoordinatorError> {
        let blocked: BTreeMap<String, String> = self.store.setting(BLOCKED)?.unwrap_or_default();
        match blocked.get(name) {
            Some(message) => Err(CoordinatorError::Forbidden(format!(
                "host '{name}' is blocked from every tournament: {message}"
            ))),
            None => Ok(()),
        }
    }

    /// The lowest worker version accepted, when `version` is below it.
    pub(crate) fn too_old(&self, version: &str) -> Option<String> {
        self.min_worker_version()
            .filter(|lowest| older(version, lowest))
    }

    /// The release offered to workers of `platform` that update themselves (blocking: it
    /// is read from its file the first time), if there is one.
    pub fn worker_release(&self, platform: &str) -> Option<crate::fleet::release::Release> {
        (self.releases.get())
            .filter(|r| r.platform == platform)
            .cloned()
    }

    /// Links the artifact of sha256 `sha` to `url` (see the Admin call `LinkArtifact`).
    ///
    /// # Errors
    /// A role below user, a malformed hash or URL, or a store error.
    pub fn link_artifact(
        &self,
        by: &Principal,
        sha: &str,
        url: &str,
    ) -> Result<(), CoordinatorError> {
        by.require(tourney_model::account::Role::User)?;
        let sha = &sha.to_ascii_lowercase();
        if !tourney_model::source::is_sha256(sha) {
            return Err(CoordinatorError::Invalid(format!(
                "sha256 {sha:?}: expected 64 lowercase hex digits"
            )));
        }
        let printable = url.chars().all(|c| c.is_ascii_graphic());
        let http = url.starts_with("https://") || url.starts_with("http://");
        if !http || !printable || url.len() > MAX_LINK_CHARS {
            return Err(CoordinatorError::Invalid(format!(
                "url {url:?}: expected an http:// or https:// URL of at most {MAX_LINK_CHARS} \
                 characters, without spaces"
            )));
        }
        if let Some(why) = crate::links::refused(url, &self.settings.link_hosts) {
            return Err(CoordinatorError::Invalid(why));
        }
        self.store.link_artifact(sha, url)?;
        self.record_event(by, "artifact-linked", sha, url);
        Ok(())
    }

    /// Notes what registered worker `id` said of its machine.
    pub fn set_host_facts(&self, id: &str, facts: HostFacts) {
        self.lock().fleet.set_host(id, facts);
    }

    /// Notes what worker `id` offers and takes ([`ProfileClaim::checked`]): it is offered
    /// only the pairs of tournaments whose requirements it meets.
    pub fn set_profile(&self, id: &str, profile: WorkerProfile) {
        self.lock().fleet.set_profile(id, profile);
        self.changed();
    }

    /// Blocks host `host` from every tournament (admin): its workers are dropped now and
    /// refused, with `message`, when they register again. An empty message unblocks it.
    ///
    /// # Errors
    /// Not an admin, too many blocked hosts, or a store error.
    pub fn block_host(
        &self,
        by: &Principal,
        host: &str,
        message: &str,
    ) -> Result<(), CoordinatorError> {
        by.require(Role::Admin)?;
        let mut blocked: BTreeMap<String, String> =
            self.store.setting(BLOCKED)?.unwrap_or_default();
        let subject = format!("host {host}");
        if message.is_empty() {
            blocked.remove(host);
            self.store.put_setting(BLOCKED, &blocked)?;
            self.record_event(by, "host-unblocked", &subject, "");
            return Ok(());
        }
        if blocked.len() >= MAX_BLOCKED && !blocked.contains_key(host) {
            return Err(CoordinatorError::Invalid(format!(
                "{MAX_BLOCKED} hosts are blocked, the most kept: unblock one"
            )));
        }
        let message = cut(message, MAX_EVENT_DETAIL);
        blocked.insert(host.to_string(), message.clone());
        self.store.put_setting(BLOCKED, &blocked)?;
        self.lock().fleet.drop_host(host);
        self.changed();
        self.record_event(by, "host-blocked", &subject, &message);
        Ok(())
    }

    /// Sets the lowest worker version accepted (admin; empty: any): older workers are
    /// refused at registration, told to upgrade.
    ///
    /// # Errors
    /// Not an admin, a version that is not dotted numbers, or a store error.
    pub fn set_min_worker_version(
        &self,
        by: &Principal,
        version: &str,
    ) -> Result<(), CoordinatorError> {
        by.require(Role::Admin)?;
        let numbers = version
            .split('.')
            .all(|p| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit()));
        if !version.is_empty() && !numbers {
            return Err(CoordinatorError::Invalid(format!(
                "'{version}' is not a version such as 0.2.0"
            )));
        }
        let value = (!version.is_empty()).then(|| version.to_string());
        self.store.put_setting(MIN_VERSION, &value)?;
        self.record_event(by, "min-worker-version", "workers", version);
        Ok(())
    }

    /// The lowest worker version accepted, if one is set.
    pub fn min_worker_version(&self) -> Option<String> {
        self.store.setting(MIN_VERSION).ok().flatten().flatten()
    }

    /// Every worker host: those with registrations now, and blocked ones; by name.
    pub fn machines(&self) -> Vec<Machine> {
        let blocked: BTreeMap<String, String> = self
            .store
            .setting(BLOCKED)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut machines: BTreeMap<String, Machine> = BTreeMap::new();
        // Workers are seen on the coordinator's clock (milliseconds since it started):
        // told as Unix time.
        let (clock, unix) = (self.now_ms(), tourney_model::unix_ms_now());
        let as_unix = |seen: u64| unix.saturating_sub(clock.saturating_sub(seen));
        for w in self.workers() {
            let m = machines.entry(w.name.clone()).or_default();
            m.host.clone_from(&w.name);
            let seen = as_unix(w.last_seen_ms);
            if seen >= m.last_seen_ms {
                m.facts = w.host.clone();
                m.last_seen_ms = seen;
            }
            if !m.versions.contains(&w.version) {
                m.versions.push(w.version.clone());
            }
            m.registrations += 1;
            m.slots += w.slots;
            m.games += w.games;
            m.nodes += w.nodes;
        }
        let inner = self.lock();
        for (version, checks) in &inner.version_checks {
            for check in checks {
                let host = crate::scheduler::host(&check.worker).to_string();
                let Some(m) = machines.get_mut(&host) else {
                    continue;
                };
                m.benches.push(HostBench {
                    version: version.clone(),
                    tournament: check.tournament,
                    bench_nodes: check.bench_nodes,
                    bench_nps: check.bench_nps,
                    build_ms: check.build_ms,
                    problem: check.problem.clone(),
                    at_ms: check.at_ms,
                });
            }
        }
        drop(inner);
        for m in machines.values_mut() {
            m.benches.sort_by_key(|b| std::cmp::Reverse(b.at_ms));
            m.benches.truncate(BENCHES_SHOWN);
        }
        for (host, message) in blocked {
            let m = machines.entry(host.clone()).or_default();
            m.host = host;
            m.blocked = Some(message);
        }
        machines.into_values().collect()
    }
}

/// The longest URL an artifact may be linked to.
pub(crate) const MAX_LINK_CHARS: usize = 2048;
