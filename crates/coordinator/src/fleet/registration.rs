//! A worker's registration in one call ([`Coordinator::enroll`]): its profile checked,
//! the release offered to a worker that updates itself, a too old one told to update,
//! then registered ([`Coordinator::register`]) with its host facts and profile noted.
//! The Worker service reads the registration off the wire and hands it here as a
//! [`Registration`].

use std::sync::Arc;

use tourney_model::fleet::ProfileClaim;

use crate::fleet::HostFacts;
use crate::fleet::release::Release;
use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// A worker's registration, read off the wire.
#[derive(Debug, Clone, Default)]
pub struct Registration {
    /// Its host's name.
    pub name: String,
    /// Its tourney version.
    pub version: String,
    /// The pairs it plays at once.
    pub slots: u32,
    /// The name of the token it called with.
    pub token: String,
    /// It replaces its own program with a release the coordinator offers.
    pub updates: bool,
    /// Where it runs (`x86_64-linux`): the release offered is for it.
    pub platform: String,
    /// What its machine is.
    pub host: HostFacts,
    /// What it offers and takes, as it claims it (checked here).
    pub profile: ProfileClaim,
}

/// What a registration comes to.
#[derive(Debug, Clone)]
pub enum Registered {
    /// Registered.
    Worker(Welcome),
    /// Not registered: it runs a version below `lowest`, the lowest accepted, and updates
    /// itself to `release`.
    MustUpdate {
        /// The lowest version accepted.
        lowest: String,
        /// The release to update to.
        release: Release,
    },
}

/// What a registered worker is told.
#[derive(Debug, Clone)]
pub struct Welcome {
    /// Its id.
    pub worker_id: String,
    /// The registration's secret, which its later calls carry.
    pub session: String,
    /// How often it beats.
    pub heartbeat_ms: u64,
    /// How often it reports.
    pub report_ms: u64,
    /// How long a lease lasts.
    pub lease_ms: u64,
    /// Where artifacts are fetched.
    pub artifacts_url: String,
    /// The release offered to it, when it updates itself and there is one.
    pub release: Option<Release>,
}

impl Coordinator {
    /// Registers a worker as [`Coordinator::register`] does, with what it said of its
    /// machine and of what it offers; a worker that updates itself and runs a version
    /// below the lowest accepted is not registered but told to update to the release
    /// offered, when that release is recent enough.
    ///
    /// # Errors
    /// [`CoordinatorError::Invalid`] for a bad profile, name or version;
    /// [`CoordinatorError::Forbidden`] for a blocked host or a too old worker;
    /// [`CoordinatorError::Exhausted`] when its token holds too many registrations.
    pub async fn enroll(
        self: &Arc<Self>,
        registration: Registration,
    ) -> Result<Registered, CoordinatorError> {
        let Registration {
            name,
            version,
            slots,
            token,
            updates,
            platform,
            host,
            profile,
        } = registration;
        let profile = (profile.checked(tourney_model::fleet::MAX_THREADS))
            .map_err(CoordinatorError::Invalid)?;
        let release = match updates {
            true => {
                let coordinator = Arc::clone(self);
                let found =
                    tokio::task::spawn_blocking(move || coordinator.worker_release(&platform));
                found.await.ok().flatten()
            }
            false => None,
        };
        if let Some(release) = &release
            && let Some(lowest) = self.too_old(&version)
            && !tourney_model::release::older(&release.version, &lowest)
        {
            self.admits_host(&name)?;
            return Ok(Registered::MustUpdate {
                lowest,
                release: release.clone(),
            });
        }
        let (worker_id, session) = self.register(&name, &version, slots, &token)?;
        self.set_host_facts(&worker_id, host);
        self.set_profile(&worker_id, profile);
        let cadence = self.cadence();
        Ok(Registered::Worker(Welcome {
            worker_id,
            session,
            heartbeat_ms: cadence.heartbeat_ms,
            report_ms: cadence.report_ms,
            lease_ms: self.settings.lease_ms,
            artifacts_url: self.settings.artifacts_url.clone(),
            release,
        }))
    }
}
