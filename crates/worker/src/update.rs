//! Workers that update themselves (`tourney worker --update`). The coordinator offers its
//! release as the worker registers (or, when the worker is older than it accepts, as the
//! reason it refuses it). A worker takes a release that differs from its own program, is
//! not older and is built for its platform: it stops leasing, fetches the release beside
//! its program (checked against the sha256), runs it once (`--version` must name the
//! offered version), and once every pair in hand is played and reported, renames it over
//! its own program, which its caller then runs again with the same arguments.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tourney_model::release::{older, this_platform};
use tourney_proto::v1 as pb;

/// How long a staged release may take to say its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(20);

/// The program a worker replaces when it updates itself.
#[derive(Debug, Clone)]
pub struct SelfUpdate {
    /// The program's path (as it was when the worker started).
    exe: PathBuf,
    /// Its sha256 (hex).
    sha256: String,
}

impl SelfUpdate {
    /// This program, when it can replace itself: its directory takes a new file (which is
    /// removed again) and the program is a file of its own.
    ///
    /// # Errors
    /// Why it cannot (a read-only image, a program it may not replace).
    pub fn of_this_program() -> Result<Self, String> {
        let exe = std::env::current_exe().map_err(|e| format!("finding this program: {e}"))?;
        SelfUpdate::of(exe)
    }

    /// The program at `exe`, as [`SelfUpdate::of_this_program`].
    ///
    /// # Errors
    /// Why it cannot be replaced.
    pub fn of(exe: PathBuf) -> Result<Self, String> {
        let dir = exe.parent().unwrap_or(Path::new("."));
        let probe = staging_path(&exe, "probe");
        std::fs::write(&probe, b"")
            .map_err(|e| format!("{} cannot be replaced: {e}", exe.display()))?;
        let _ = std::fs::remove_file(&probe);
        let meta = std::fs::symlink_metadata(&exe).map_err(|e| e.to_string())?;
        if !meta.is_file() {
            return Err(format!("{} is not a plain file", exe.display()));
        }
        let sha256 = crate::download::sha256_of_file(&exe)
            .map_err(|e| format!("reading {}: {e}", exe.display()))?;
        tracing::debug!(dir = %dir.display(), %sha256, "this program may update itself");
        Ok(SelfUpdate { exe, sha256 })
    }

    /// The program's path.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// Whether to take `release`: `Err` says why not (it is this program, an older one,
    /// or for another platform).
    pub(crate) fn wants(&self, release: &pb::Release) -> Result<(), String> {
        let own = env!("CARGO_PKG_VERSION");
        if release.sha256 == self.sha256 {
            return Err("it is this program".into());
        }
        if older(&release.version, own) {
            return Err(format!(
                "tourney {} is older than this {own}",
                release.version
            ));
        }
        if release.platform != this_platform() {
            return Err(format!(
                "it is built for {}, this host is {}",
                release.platform,
                this_platform()
            ));
        }
        if !tourney_model::source::is_sha256(&release.sha256) {
            return Err(format!("{:?} is not a sha256", release.sha256));
        }
        Ok(())
    }

    /// Fetches `release` beside the program, checks it and runs it once: the file to
    /// [`SelfUpdate::install`].
    ///
    /// # Errors
    /// It could not be fetched, is not the release named, or does not run here.
    pub(crate) async fn stage(
        &self,
        fetcher: &crate::play::Fetcher,
        release: &pb::Release,
    ) -> Result<PathBuf, String> {
        let staged = staging_path(&self.exe, &release.sha256[..12]);
        fetcher.download(&release.sha256, &staged).await?;
        let permissions = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&staged, permissions).map_err(|e| e.to_string())?;
        std::fs::File::open(&staged)
            .and_then(|f| f.sync_all())
            .map_err(|e| e.to_string())?;
        let path = staged.clone();
        let said = tokio::task::spawn_blocking(move || {
            tourney_model::release::version_of(&path, VERSION_TIMEOUT)
        })
        .await
        .map_err(|e| e.to_string())?;
        match said {
            Ok(version) if version == release.version => Ok(staged),
            Ok(version) => {
                let _ = std::fs::remove_file(&staged);
                Err(format!(
                    "it says it is tourney {version}, not {}",
                    release.version
                ))
            }
            Err(e) => {
                let _ = std::fs::remove_file(&staged);
                Err(format!("it does not run here: {e}"))
            }
        }
    }

    /// Puts the `staged` release in the program's place, atomically (a rename in one
    /// directory).
    ///
    /// # Errors
    /// The rename failed: the program is unchanged.
    pub(crate) fn install(&self, staged: &Path) -> Result<(), String> {
        std::fs::rename(staged, &self.exe)
            .map_err(|e| format!("replacing {}: {e}", self.exe.display()))?;
        if let Some(dir) = self.exe.parent()
            && let Ok(dir) = std::fs::File::open(dir)
        {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

/// A release being taken: fetched and checked in the background, installed once the
/// worker holds no work.
struct Pending {
    release: pb::Release,
    staging: tokio::task::JoinHandle<Result<PathBuf, String>>,
    /// The coordinator refuses this worker's version: what it holds cannot be reported.
    refused: bool,
}

/// A worker's updates: the release it is taking, and those it declined.
pub(crate) struct Updater {
    own: SelfUpdate,
    pending: Option<Pending>,
    /// Releases declined or failed here (sha256): not tried again.
    declined: std::collections::HashSet<String>,
}

impl Updater {
    /// Updates of the program `own`.
    pub(crate) fn new(own: SelfUpdate) -> Self {
        Updater {
            own,
            pending: None,
            declined: Default::default(),
        }
    }

    /// Takes `release` if it is wanted (fetched with `fetcher` in the background);
    /// `refused`: the coordinator refuses this worker until it updates.
    pub(crate) fn offer(
        &mut self,
        release: pb::Release,
        fetcher: crate::play::Fetcher,
        refused: bool,
    ) {
        if let Some(pending) = &mut self.pending
            && pending.release.sha256 == release.sha256
        {
            pending.refused |= refused;
            return;
        }
        if self.declined.contains(&release.sha256) || self.pending.is_some() {
            return;
        }
        if let Err(why) = self.own.wants(&release) {
            if why != "it is this program" {
                tracing::info!(version = %release.version, "the offered release is declined: {why}");
            }
            self.declined.insert(release.sha256);
            return;
        }
        tracing::info!(
            version = %release.version,
            sha256 = %release.sha256,
            "tourney {} offered: updating once the pairs in hand are played and reported",
            release.version
        );
        let own = self.own.clone();
        let offered = release.clone();
        let staging = tokio::spawn(async move { own.stage(&fetcher, &offered).await });
        self.pending = Some(Pending {
            release,
            staging,
            refused,
        });
    }

    /// A release is being taken: no new leases.
    pub(crate) fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The coordinator refuses this worker until it updates.
    pub(crate) fn is_refused(&self) -> bool {
        self.pending.as_ref().is_some_and(|p| p.refused)
    }

    /// Installs the release once it is staged: its version, or `None` while it is on its
    /// way. A release that could not be staged or installed is declined (said in the log)
    /// and the worker goes on as it is.
    pub(crate) async fn install_when_staged(&mut self) -> Option<String> {
        if !self.pending.as_ref()?.staging.is_finished() {
            return None;
        }
        let pending = self.pending.take()?;
        let installed = match pending.staging.await {
            Ok(Ok(staged)) => self.own.install(&staged).inspect_err(|_| {
                let _ = std::fs::remove_file(&staged);
            }),
            Ok(Err(why)) => Err(why),
            Err(e) => Err(e.to_string()),
        };
        match installed {
            Ok(()) => Some(pending.release.version),
            Err(why) => {
                tracing::warn!(
                    version = %pending.release.version,
                    "the offered release is not taken: {why}"
                );
                self.declined.insert(pending.release.sha256);
                None
            }
        }
    }

    /// Drops a release on its way (the worker stops): its staged file is removed.
    pub(crate) fn abandon(&mut self) {
        if let Some(pending) = self.pending.take() {
            pending.staging.abort();
            let tag = &pending.release.sha256[..12];
            let _ = std::fs::remove_file(staging_path(&self.own.exe, tag));
        }
    }
}

/// A file beside `exe` for a release on its way (`.tourney-update-<tag>`).
fn staging_path(exe: &Path, tag: &str) -> PathBuf {
    let dir = exe.parent().unwrap_or(Path::new("."));
    dir.join(format!(".tourney-update-{tag}-{}", std::process::id()))
}

/// The release a refusal carries: a FAILED_PRECONDITION registration whose details are
/// the release to update to.
pub(crate) fn release_of_refusal(status: &tonic::Status) -> Option<pb::Release> {
    use prost::Message;
    if status.code() != tonic::Code::FailedPrecondition || status.details().is_empty() {
        return None;
    }
    pb::Release::decode(status.details()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn release(sha: &str, version: &str) -> pb::Release {
        pb::Release {
            version: version.into(),
            sha256: sha.into(),
            size: 1,
            platform: this_platform(),
        }
    }

    #[test]
    fn only_a_different_release_not_older_and_for_this_platform_is_taken() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("tourney");
        std::fs::write(&exe, b"old program").unwrap();
        let own = SelfUpdate::of(exe).unwrap();
        let other = "a".repeat(64);
        let own_version = env!("CARGO_PKG_VERSION");
        assert_eq!(own.wants(&release(&other, own_version)), Ok(()));
        assert_eq!(own.wants(&release(&other, "999.0.0")), Ok(()));
        let same = release(&own.sha256, "999.0.0");
        assert_eq!(own.wants(&same).unwrap_err(), "it is this program");
        assert!(
            own.wants(&release(&other, "0.0.0"))
                .unwrap_err()
                .contains("older")
        );
        let mut foreign = release(&other, own_version);
        foreign.platform = "sparc-solaris".into();
        assert!(own.wants(&foreign).unwrap_err().contains("sparc-solaris"));
        assert!(own.wants(&release("x", own_version)).is_err());
    }

    #[test]
    fn a_program_in_a_read_only_place_cannot_update_itself() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("gone").join("tourney");
        assert!(
            SelfUpdate::of(missing)
                .unwrap_err()
                .contains("cannot be replaced")
        );
        let not_a_file = dir.path().join("sub");
        std::fs::create_dir(&not_a_file).unwrap();
        let error = SelfUpdate::of(not_a_file).unwrap_err();
        assert!(error.contains("not a plain file"), "{error}");
    }

    #[test]
    fn a_refusal_carries_its_release_only_as_failed_precondition_details() {
        use prost::Message;
        let offered = release(&"b".repeat(64), "1.2.3");
        let details = offered.encode_to_vec();
        let refusal = tonic::Status::with_details(
            tonic::Code::FailedPrecondition,
            "update",
            details.clone().into(),
        );
        assert_eq!(release_of_refusal(&refusal), Some(offered));
        let other =
            tonic::Status::with_details(tonic::Code::PermissionDenied, "no", details.into());
        assert_eq!(release_of_refusal(&other), None);
        assert_eq!(
            release_of_refusal(&tonic::Status::failed_precondition("x")),
            None
        );
    }
}
