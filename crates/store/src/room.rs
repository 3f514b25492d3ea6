//! The disk room a store needs: checked before it is opened again after a failed write.

use crate::{Store, StoreError};

impl Store {
    /// Whether the store's disk has room to spare for it to be opened again after it
    /// failed for want of space (sled writes as it opens, and must not be made to fail
    /// again halfway): [`recovery_reserve`] of its space, on its file system and under
    /// the process's file-size limit for its largest file.
    pub fn has_room(&self) -> bool {
        let Some(path) = &self.path else {
            return true;
        };
        let Some(Disk { free, size, limit }) = disk_of(path) else {
            return false;
        };
        let largest = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max()
            .unwrap_or(0);
        let reserve = recovery_reserve(limit.map_or(size, |limit| size.min(limit)));
        let under_limit = limit.is_none_or(|limit| limit.saturating_sub(largest) >= reserve);
        free >= reserve && under_limit
    }

    /// Whether `bytes` more can be written beside the store (an artifact's next piece)
    /// and still leave it twice the room it needs to be opened again after a failed
    /// write ([`recovery_reserve`]).
    pub(crate) fn has_room_for(&self, bytes: u64) -> bool {
        let Some(path) = &self.path else {
            return true;
        };
        disk_of(path).is_some_and(|Disk { free, size, .. }| {
            free.saturating_sub(bytes) >= 2 * recovery_reserve(size)
        })
    }

    /// Whether the store takes writes again: writes, flushes and removes a probe.
    ///
    /// # Errors
    /// The write or the flush failed.
    pub async fn probe(&self) -> Result<(), StoreError> {
        self.t().meta.insert("probe", &[1u8][..])?;
        self.flush().await?;
        self.t().meta.remove("probe")?;
        self.flush().await
    }
}

/// A file system's room, as `statvfs` and `getrlimit` tell it.
struct Disk {
    /// Bytes free to this process.
    free: u64,
    /// Bytes in all.
    size: u64,
    /// The process's file-size limit, if it has one.
    limit: Option<u64>,
}

/// The room of the file system `path` is on; `None` if it cannot be known.
fn disk_of(path: &std::path::Path) -> Option<Disk> {
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct it is given; getrlimit likewise.
    unsafe {
        let mut fs: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c_path.as_ptr(), &mut fs) != 0 {
            return None;
        }
        let mut limit: libc::rlimit = std::mem::zeroed();
        let limit = (libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) == 0
            && limit.rlim_cur != libc::RLIM_INFINITY)
            .then_some(limit.rlim_cur);
        Some(Disk {
            free: fs.f_bavail.saturating_mul(fs.f_frsize),
            size: fs.f_blocks.saturating_mul(fs.f_frsize),
            limit,
        })
    }
}

/// The room a failed store needs to spare before it is opened again, on a volume (or
/// under a file-size limit) of `space` bytes: a sixteenth of it, within 1 and 64 MiB. A
/// fixed 64 MiB could never be met on a small volume (40 MiB, say): it would stay failing
/// however much was freed.
pub fn recovery_reserve(space: u64) -> u64 {
    (space / 16).clamp(1 << 20, 64 << 20)
}
