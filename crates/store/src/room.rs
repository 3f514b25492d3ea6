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
        let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
            return false;
        };
        // SAFETY: statvfs writes into the zeroed struct it is given; getrlimit likewise.
        let (free, size, limit) = unsafe {
            let mut fs: libc::statvfs = std::mem::zeroed();
            let (free, size) = if libc::statvfs(c_path.as_ptr(), &mut fs) == 0 {
                (
                    fs.f_bavail.saturating_mul(fs.f_frsize),
                    fs.f_blocks.saturating_mul(fs.f_frsize),
                )
            } else {
                (0, 0)
            };
            let mut limit: libc::rlimit = std::mem::zeroed();
            let limit = if libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) == 0 {
                limit.rlim_cur
            } else {
                libc::RLIM_INFINITY
            };
            (free, size, limit)
        };
        let largest = std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .max()
            .unwrap_or(0);
        let space = if limit == libc::RLIM_INFINITY {
            size
        } else {
            size.min(limit)
        };
        let reserve = recovery_reserve(space);
        let under_limit = limit == libc::RLIM_INFINITY || limit.saturating_sub(largest) >= reserve;
        free >= reserve && under_limit
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

/// The room a failed store needs to spare before it is opened again, on a volume (or
/// under a file-size limit) of `space` bytes: a sixteenth of it, within 1 and 64 MiB. A
/// fixed 64 MiB could never be met on a small volume (40 MiB, say): it would stay failing
/// however much was freed.
pub fn recovery_reserve(space: u64) -> u64 {
    (space / 16).clamp(1 << 20, 64 << 20)
}
