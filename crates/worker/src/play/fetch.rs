//! Making a job ready to play: the programs and data files of its outside engines fetched
//! from the coordinator (or the cache it names) once per host, checked by sha256, and kept
//! in the host cache while they are still the ones named.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Mutex;

use tourney_model::job::{EngineKind, PairJob};

use super::PlayError;

/// Makes a job ready to play: outside engines' programs and data files are fetched (once
/// per host, checked by sha256); a program's command then points at the cached program,
/// and each data file names its cached copy's path in place of its sha256.
pub(crate) async fn prepare(
    fetcher: &Fetcher,
    cache: &Path,
    mut job: PairJob,
) -> Result<PairJob, PlayError> {
    for engine in [&mut job.first, &mut job.second] {
        let EngineKind::Outside {
            command,
            artifact_sha256,
            files,
            ..
        } = &mut engine.kind
        else {
            continue;
        };
        for (_, content) in files.iter_mut() {
            let path = cache.join("files").join(&*content);
            if !path.exists() || !is_program(&path, content) {
                fetch_artifact(fetcher, content, &path, &engine.name).await?;
            }
            crate::builds::touch(&path);
            *content = path.display().to_string();
        }
        let Some(sha) = artifact_sha256 else {
            continue;
        };
        let path = cache.join("programs").join(&*sha);
        // A cached program is used only while it is still the one named: an engine run as
        // the worker's user could have rewritten it. One that is not is fetched again.
        if path.exists() && !is_program(&path, sha) {
            tracing::warn!(path = %path.display(), "a cached program changed: fetched again");
        }
        if !path.exists() || !is_program(&path, sha) {
            fetch_artifact(fetcher, sha, &path, &engine.name).await?;
        }
        // The program (first word) becomes the cached artifact; the arguments stay.
        let args: Vec<String> = tourney_runner::split_command(command)
            .into_iter()
            .skip(1)
            .collect();
        *command = command_line(&path, &args);
    }
    Ok(job)
}

/// A command line of `program` and `args`, each word quoted where it holds a space.
pub fn command_line(program: &Path, args: &[String]) -> String {
    let quoted = |w: &str| {
        if w.contains(' ') {
            format!("\"{w}\"")
        } else {
            w.to_string()
        }
    };
    std::iter::once(quoted(&program.display().to_string()))
        .chain(args.iter().map(|a| quoted(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where and how a worker fetches artifacts: over HTTP from a base URL (the coordinator's
/// `/artifacts/`, or the cache or CDN it names), by sha256.
#[derive(Clone)]
pub struct Fetcher {
    downloader: crate::download::Downloader,
    /// Ends with `/`; the sha256 is appended.
    base: String,
    /// The host cache whose bound is kept after each fetch (least recently used first).
    bounded: Option<crate::builds::BuildCache>,
    /// The most bytes one artifact may have.
    most: u64,
}

impl Fetcher {
    /// Fetches from `base` (`<base><sha256>`; a `/` is added if missing), trusting the
    /// web's roots and the CA certificate `ca` (PEM) when given.
    pub fn new(base: &str, ca: Option<&[u8]>) -> Self {
        let base = match base.ends_with('/') {
            true => base.to_string(),
            false => format!("{base}/"),
        };
        Fetcher {
            downloader: crate::download::Downloader::new(ca),
            base,
            bounded: None,
            most: tourney_proto::DEFAULT_MAX_ARTIFACT_BYTES,
        }
    }

    /// Fetches artifacts of at most `bytes`.
    pub fn at_most(self, bytes: u64) -> Self {
        Fetcher {
            most: bytes,
            ..self
        }
    }

    /// Keeps `cache` within its bound after each fetch.
    pub(crate) fn bounded_by(self, cache: crate::builds::BuildCache) -> Self {
        Fetcher {
            bounded: Some(cache),
            ..self
        }
    }

    /// Fetches the artifact of sha256 `sha` into `path` unless it is there already (see
    /// [`fetch_artifact`]); `engine` names it in errors.
    ///
    /// # Errors
    /// It could not be fetched or written, or is not the artifact named.
    pub async fn fetch_into(&self, sha: &str, path: &Path, engine: &str) -> Result<(), PlayError> {
        fetch_artifact(self, sha, path, engine).await
    }

    /// Downloads the artifact of sha256 `sha` to `path` (resuming what an earlier attempt
    /// left there), checked against the hash: outside the host cache.
    ///
    /// # Errors
    /// What failed, with the URL.
    pub(crate) async fn download(&self, sha: &str, path: &Path) -> Result<(), String> {
        let url = format!("{}{sha}", self.base);
        (self.downloader.fetch(&url, sha, self.most, path).await).map_err(|e| e.to_string())
    }
}

/// Fetches the artifact of sha256 `sha` into `path` (read-only, atomically), checking its
/// size bound and its hash. Workers of a host sharing the cache fetch it once: the first
/// holds `path.lock` while it fetches, the others wait and find it there.
async fn fetch_artifact(
    fetcher: &Fetcher,
    sha: &str,
    path: &Path,
    engine: &str,
) -> Result<(), PlayError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|source| cache_error(parent, source))?;
    let lock_path = path.with_extension("lock");
    let lock = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|source| cache_error(&lock_path, source))?;
    while lock.try_lock().is_err() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    if path.exists() && is_program(path, sha) {
        return Ok(());
    }
    // The worker's own: engines (as another user) may run its programs and read its files,
    // not write them or list the directories.
    let within = parent.ends_with("files") || parent.ends_with("programs");
    let root = parent.parent().filter(|_| within);
    for dir in std::iter::once(parent).chain(root) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711))
            .map_err(|source| cache_error(dir, source))?;
    }
    // Streamed into its partial file (resumed from what an earlier attempt left there).
    let url = format!("{}{sha}", fetcher.base);
    let partial = path.with_extension("part");
    fetcher
        .downloader
        .fetch(&url, sha, fetcher.most, &partial)
        .await
        .map_err(|e| match e {
            crate::download::DownloadError::Mismatch { .. } => {
                tracing::warn!(%engine, error = %e, "a tampered artifact was refused");
                PlayError::Mismatch(engine.to_string())
            }
            crate::download::DownloadError::Fetch(message) => PlayError::Fetch {
                engine: engine.to_string(),
                message,
            },
        })?;
    std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o555))
        .map_err(|source| cache_error(&partial, source))?;
    let _ = std::fs::remove_file(path);
    std::fs::rename(&partial, path).map_err(|source| cache_error(path, source))?;
    remember_program(path, sha);
    drop(lock);
    if let Some(cache) = &fetcher.bounded {
        cache.evict(path);
    }
    Ok(())
}

/// What identifies a file's content without reading it: its inode and size, and when its
/// content and its inode last changed (a change time no user can set back).
type FileStamp = (u64, u64, u64, i64, i64, i64, i64);

fn stamp(path: &Path) -> Option<FileStamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(path).ok()?;
    m.file_type().is_file().then(|| {
        (
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        )
    })
}

/// Cached programs whose content was checked, by path: their stamp then and their sha256.
static CHECKED: Mutex<Vec<(std::path::PathBuf, FileStamp, String)>> = Mutex::new(Vec::new());

/// Notes that the cached program at `path` is `sha` now (it was just written).
fn remember_program(path: &Path, sha: &str) {
    let Some(now) = stamp(path) else {
        return;
    };
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    checked.retain(|(p, _, _)| p != path);
    checked.push((path.to_path_buf(), now, sha.to_string()));
}

/// Whether the cached program at `path` is still the program of sha256 `sha`: read and
/// hashed again unless its stamp is the one it had when last checked.
fn is_program(path: &Path, sha: &str) -> bool {
    let Some(now) = stamp(path) else {
        return false;
    };
    let known = (CHECKED.lock().unwrap_or_else(|e| e.into_inner()).iter())
        .any(|(p, s, h)| p == path && *s == now && h == sha);
    if known {
        return true;
    }
    let same = crate::download::sha256_of_file(path).is_ok_and(|hash| hash == sha);
    if same {
        remember_program(path, sha);
    }
    same
}

fn cache_error(path: &Path, source: std::io::Error) -> PlayError {
    PlayError::Cache {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests;
