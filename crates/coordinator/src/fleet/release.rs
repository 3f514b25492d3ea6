//! The release the coordinator offers workers that update themselves (`tourney worker
//! --update`): by default its own program, or the file the operator names
//! (`--worker-release`). It is described once, when the first updating worker registers
//! (its sha256 read from the file, its version from the program itself, its platform from
//! its ELF header), and served like any artifact at `/artifacts/<sha256>` straight from
//! its file, without a copy in the store. A worker checks what it gets against the
//! sha256, runs it once and only then replaces itself.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tourney_model::release::this_platform;

/// The most bytes a release may have.
pub const MAX_RELEASE_BYTES: u64 = 1 << 30;

/// How long `PROGRAM --version` may take when a named file's version is read.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// A release offered to workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    /// Its tourney version (`0.2.0`).
    pub version: String,
    /// Its sha256 (hex).
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
    /// Where it runs, as workers name their own (`x86_64-linux`).
    pub platform: String,
    /// Its file on the coordinator's host.
    pub path: PathBuf,
}

/// The release of a coordinator, described once on first use.
#[derive(Debug, Default)]
pub(crate) struct Releases {
    /// The file offered; `None`: no release is offered.
    path: Option<PathBuf>,
    found: OnceLock<Option<Release>>,
}

impl Releases {
    /// Offers the program at `path` (none: nothing is offered).
    pub(crate) fn new(path: Option<PathBuf>) -> Self {
        Releases {
            path,
            found: OnceLock::new(),
        }
    }

    /// The release, read from its file the first time (blocking: a sha256 of the whole
    /// file); `None` when none is offered or its file is not a release (said once in the
    /// log).
    pub(crate) fn get(&self) -> Option<&Release> {
        let path = self.path.as_ref()?;
        self.found
            .get_or_init(|| match describe(path) {
                Ok(release) => {
                    tracing::info!(
                        version = %release.version,
                        sha256 = %release.sha256,
                        platform = %release.platform,
                        "offering workers that update themselves {}",
                        path.display()
                    );
                    Some(release)
                }
                Err(e) => {
                    tracing::error!("the worker release {}: {e}", path.display());
                    None
                }
            })
            .as_ref()
    }

    /// The release's file, if `sha` is its sha256 and it has been described.
    pub(crate) fn file(&self, sha: &str) -> Option<(&Path, u64)> {
        let release = self.found.get()?.as_ref()?;
        (release.sha256 == sha).then_some((release.path.as_path(), release.size))
    }
}

/// Describes the program at `path`: its sha256, size, platform and version.
///
/// # Errors
/// It cannot be read, is too large, is not an ELF executable of a known machine, or does
/// not say its version.
pub fn describe(path: &Path) -> Result<Release, String> {
    let mut file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    if size > MAX_RELEASE_BYTES {
        return Err(format!(
            "{size} bytes: a release has at most {MAX_RELEASE_BYTES}"
        ));
    }
    let mut head = [0u8; 20];
    file.read_exact(&mut head)
        .map_err(|_| "too short for an executable".to_string())?;
    let platform = elf_platform(&head)?;
    let sha256 = tourney_model::sha256_of_reader(std::io::Cursor::new(head).chain(file))
        .map_err(|e| e.to_string())?;
    let version = match std::env::current_exe() {
        Ok(own) if same_file(&own, path) => env!("CARGO_PKG_VERSION").to_string(),
        _ if platform != this_platform() => {
            return Err(format!(
                "a {platform} program cannot say its version on this {} host",
                this_platform()
            ));
        }
        _ => tourney_model::release::version_of(path, VERSION_TIMEOUT)?,
    };
    Ok(Release {
        version,
        sha256,
        size,
        platform,
        path: path.to_path_buf(),
    })
}

/// Whether two paths name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// The platform an ELF header (its first 20 bytes) is built for.
fn elf_platform(head: &[u8; 20]) -> Result<String, String> {
    if &head[..4] != b"\x7fELF" {
        return Err("not an ELF executable".into());
    }
    let machine = match head[5] {
        1 => u16::from_le_bytes([head[18], head[19]]),
        _ => u16::from_be_bytes([head[18], head[19]]),
    };
    let arch = match (head[4], machine) {
        (2, 62) => "x86_64",
        (2, 183) => "aarch64",
        (2, 243) => "riscv64",
        (1, 3) => "x86",
        (1, 40) => "arm",
        _ => return Err(format!("an ELF program for machine {machine}, not known")),
    };
    Ok(format!("{arch}-linux"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coordinators_own_program_is_described_with_its_version_and_platform() {
        let own = std::env::current_exe().unwrap();
        let release = describe(&own).unwrap();
        assert_eq!(release.version, env!("CARGO_PKG_VERSION"));
        assert_eq!(release.platform, this_platform());
        assert_eq!(release.size, std::fs::metadata(&own).unwrap().len());
        assert_eq!(release.sha256.len(), 64);
    }

    #[test]
    fn files_that_are_not_programs_of_a_known_machine_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes");
        std::fs::write(&text, "#!/bin/sh\necho tourney 9.9.9\n").unwrap();
        assert_eq!(describe(&text).unwrap_err(), "not an ELF executable");
        let mut head = *b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x08\0";
        assert!(elf_platform(&head).unwrap_err().contains("machine 8"));
        head[18] = 183;
        assert_eq!(elf_platform(&head).unwrap(), "aarch64-linux");
        assert!(describe(&dir.path().join("missing")).is_err());
    }
}
