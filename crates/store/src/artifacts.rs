//! Artifacts (engines' programs and data files) kept as files named by their sha256 in the
//! store's `artifacts/` directory. They come in streamed and hashed on the way
//! ([`ArtifactUpload`]), go out in ranges ([`Store::read_artifact`]), and are never held
//! whole in memory, whatever their size. An artifact linked to a URL instead
//! ([`Store::link_artifact`]) is a row of the `artifact_links` tree.
//!
//! A file is named by its hash only once the bytes written to it hash to that name (and
//! are synced): an upload cut short leaves an `.incoming-*` file, removed when the store
//! is opened again, never a wrong artifact.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::Digest;

use crate::{Store, StoreError};

/// The directory of a store's artifact files.
#[derive(Clone)]
pub(crate) struct ArtifactDir {
    path: PathBuf,
    /// A temporary store's directory, removed with its last clone.
    _temporary: Option<Arc<tempfile::TempDir>>,
}

/// Prefix of the files of uploads in progress.
const INCOMING: &str = ".incoming-";

/// Uploads started by this process, to name their files apart.
static UPLOADS: AtomicU64 = AtomicU64::new(0);

impl ArtifactDir {
    /// The `artifacts/` directory inside the store at `store`, created if missing; files
    /// of uploads an earlier process left unfinished are removed (one process holds a
    /// store at a time: sled locks it).
    pub(crate) fn inside(store: &Path) -> Result<ArtifactDir, StoreError> {
        let path = store.join("artifacts");
        std::fs::create_dir_all(&path).map_err(|e| io_error(&path, e))?;
        for entry in std::fs::read_dir(&path).map_err(|e| io_error(&path, e))? {
            let entry = entry.map_err(|e| io_error(&path, e))?;
            if entry.file_name().to_string_lossy().starts_with(INCOMING) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(ArtifactDir {
            path,
            _temporary: None,
        })
    }

    /// A directory removed when the last clone goes (a temporary store's).
    pub(crate) fn temporary() -> Result<ArtifactDir, StoreError> {
        let dir = tempfile::Builder::new()
            .prefix("tourney-artifacts-")
            .tempdir()
            .map_err(|e| io_error(&std::env::temp_dir(), e))?;
        Ok(ArtifactDir {
            path: dir.path().to_path_buf(),
            _temporary: Some(Arc::new(dir)),
        })
    }

    /// The file of the artifact of sha256 `sha`, whether or not it exists; `None` for a
    /// name that is not a sha256 (it could name another file).
    fn file(&self, sha: &str) -> Option<PathBuf> {
        let lowercase = sha.bytes().all(|b| !b.is_ascii_uppercase());
        (tourney_model::source::is_sha256(sha) && lowercase).then(|| self.path.join(sha))
    }
}

fn io_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Artifact {
        path: path.display().to_string(),
        source,
    }
}

/// An artifact being uploaded: bytes are hashed and appended to a file of its own as they
/// come; [`ArtifactUpload::finish`] names it by its hash. Dropped unfinished, the file goes.
pub struct ArtifactUpload {
    file: std::fs::File,
    incoming: PathBuf,
    dir: PathBuf,
    hasher: sha2::Sha256,
    bytes: u64,
    most: u64,
    store: Store,
    finished: bool,
}

impl ArtifactUpload {
    /// Appends `chunk`.
    ///
    /// # Errors
    /// [`StoreError::Refused`] when the artifact would pass its bound or leave the
    /// store's disk without the room the store needs; the file could not be written.
    pub fn write(&mut self, chunk: &[u8]) -> Result<(), StoreError> {
        let bytes = self.bytes + chunk.len() as u64;
        if bytes > self.most {
            return Err(StoreError::Refused(format!(
                "an artifact may have at most {} MiB (the coordinator's --max-artifact-mib)",
                self.most >> 20
            )));
        }
        if !self.store.has_room_for(chunk.len() as u64) {
            return Err(StoreError::Refused(format!(
                "the coordinator's disk has no room for {} MiB more beside its store",
                bytes >> 20
            )));
        }
        self.file
            .write_all(chunk)
            .map_err(|e| io_error(&self.incoming, e))?;
        self.hasher.update(chunk);
        self.bytes = bytes;
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.bytes
    }

    /// Whether nothing was written yet.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Syncs the file and names it by its sha256, which it returns (an artifact already
    /// stored under it is kept, as it is the same content).
    ///
    /// # Errors
    /// The file could not be synced or renamed.
    pub fn finish(mut self) -> Result<String, StoreError> {
        let sha = tourney_model::hex(&self.hasher.clone().finalize());
        self.file
            .sync_all()
            .map_err(|e| io_error(&self.incoming, e))?;
        let path = self.dir.join(&sha);
        if !path.is_file() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&self.incoming, std::fs::Permissions::from_mode(0o444))
                .map_err(|e| io_error(&self.incoming, e))?;
            std::fs::rename(&self.incoming, &path).map_err(|e| io_error(&path, e))?;
            self.finished = true;
        }
        Ok(sha)
    }
}

impl Drop for ArtifactUpload {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::remove_file(&self.incoming);
        }
    }
}

impl Store {
    /// Starts an upload of an artifact of at most `most` bytes.
    ///
    /// # Errors
    /// Its file could not be created.
    pub fn upload_artifact(&self, most: u64) -> Result<ArtifactUpload, StoreError> {
        let dir = self.artifacts.path.clone();
        let n = UPLOADS.fetch_add(1, Ordering::Relaxed);
        let incoming = dir.join(format!("{INCOMING}{}-{n}", std::process::id()));
        let file = std::fs::File::create(&incoming).map_err(|e| io_error(&incoming, e))?;
        Ok(ArtifactUpload {
            file,
            incoming,
            dir,
            hasher: sha2::Sha256::new(),
            bytes: 0,
            most,
            store: self.clone(),
            finished: false,
        })
    }

    /// Stores an artifact held in memory; returns its sha256 (hex).
    ///
    /// # Errors
    /// As [`Store::upload_artifact`] and [`ArtifactUpload`]'s methods.
    pub fn put_artifact(&self, bytes: &[u8]) -> Result<String, StoreError> {
        let mut upload = self.upload_artifact(u64::MAX)?;
        upload.write(bytes)?;
        upload.finish()
    }

    /// The size of the stored artifact of sha256 `sha`, `None` if none is stored (a
    /// linked one included).
    ///
    /// # Errors
    /// Its file could not be read.
    pub fn artifact_size(&self, sha: &str) -> Result<Option<u64>, StoreError> {
        let Some(path) = self.artifacts.file(sha) else {
            return Ok(None);
        };
        match std::fs::metadata(&path) {
            Ok(meta) => Ok(Some(meta.len())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_error(&path, e)),
        }
    }

    /// The stored artifact of sha256 `sha`, opened to be read, with its size; `None` if
    /// none is stored.
    ///
    /// # Errors
    /// Its file could not be opened.
    pub fn open_artifact(&self, sha: &str) -> Result<Option<(std::fs::File, u64)>, StoreError> {
        let Some(path) = self.artifacts.file(sha) else {
            return Ok(None);
        };
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(&path, e)),
        };
        let size = file.metadata().map_err(|e| io_error(&path, e))?.len();
        Ok(Some((file, size)))
    }

    /// At most `most` bytes of the stored artifact of sha256 `sha` from `offset` on (none
    /// past its end), with its whole size; `None` if none is stored.
    ///
    /// # Errors
    /// Its file could not be read.
    pub fn read_artifact(
        &self,
        sha: &str,
        offset: u64,
        most: usize,
    ) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        let Some((mut file, size)) = self.open_artifact(sha)? else {
            return Ok(None);
        };
        let path = self.artifacts.path.join(sha);
        let start = offset.min(size);
        let len = usize::try_from(size - start)
            .unwrap_or(usize::MAX)
            .min(most);
        file.seek(std::io::SeekFrom::Start(start))
            .map_err(|e| io_error(&path, e))?;
        let mut content = vec![0; len];
        file.read_exact(&mut content)
            .map_err(|e| io_error(&path, e))?;
        Ok(Some((content, size)))
    }

    /// Whether an artifact with this sha256 is stored, or linked (without reading it).
    ///
    /// # Errors
    /// sled errors, or the file could not be read.
    pub fn has_artifact(&self, sha: &str) -> Result<bool, StoreError> {
        Ok(self.artifact_size(sha)?.is_some()
            || self.t().artifact_links.contains_key(sha.as_bytes())?)
    }

    /// Links the artifact of sha256 `sha256` to `url`, where workers fetch it (and check
    /// its hash); the caller checks both.
    ///
    /// # Errors
    /// sled errors.
    pub fn link_artifact(&self, sha256: &str, url: &str) -> Result<(), StoreError> {
        self.t()
            .artifact_links
            .insert(sha256.as_bytes(), url.as_bytes())?;
        Ok(())
    }

    /// The URL an artifact is linked to, if it is.
    ///
    /// # Errors
    /// sled errors.
    pub fn artifact_link(&self, sha256: &str) -> Result<Option<String>, StoreError> {
        Ok((self.t().artifact_links.get(sha256.as_bytes())?)
            .map(|v| String::from_utf8_lossy(&v).into_owned()))
    }

    /// Checks every stored artifact's content against its name: the number that match,
    /// and a line for each that does not (or is not an artifact's name).
    pub(crate) fn verify_artifacts(&self, problem: &mut dyn FnMut(String)) -> u64 {
        let dir = &self.artifacts.path;
        let mut matching = 0;
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(INCOMING) {
                continue;
            }
            match std::fs::File::open(entry.path()).and_then(tourney_model::sha256_of_reader) {
                Ok(sha) if sha == name => matching += 1,
                Ok(_) => problem(format!("artifact {name}: its content has another sha256")),
                Err(e) => problem(format!("artifact {name}: {e}")),
            }
        }
        matching
    }

    /// Moves artifacts that older stores kept in the `artifacts` tree out to their files.
    pub(crate) fn move_artifacts_out(&self) -> Result<(), StoreError> {
        let tree = self.t().db.open_tree("artifacts")?;
        for entry in tree.iter() {
            let (key, value) = entry?;
            self.put_artifact(&value)?;
            tree.remove(key)?;
        }
        Ok(())
    }
}
