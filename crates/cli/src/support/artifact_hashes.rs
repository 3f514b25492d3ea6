//! The sha256 of programs uploaded before, by (path, size, modification time): a submission
//! whose engine is a program the coordinator already has neither reads nor hashes nor
//! sends it again. Kept in `$XDG_CACHE_HOME/tourney/artifact-hashes` (or
//! `~/.cache/tourney/...`), one line a program, at most [`MAX_ENTRIES`].

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// The most programs remembered (the oldest are forgotten first).
pub(crate) const MAX_ENTRIES: usize = 1000;

/// What identifies a program's content without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileKey {
    path: String,
    size: u64,
    modified_ns: u128,
}

impl FileKey {
    /// The key of the file at `path` (`None` when it cannot be read).
    pub(crate) fn of(path: &Path) -> Option<FileKey> {
        let meta = std::fs::metadata(path).ok()?;
        let modified_ns = meta
            .modified()
            .ok()?
            .duration_since(UNIX_EPOCH)
            .ok()?
            .as_nanos();
        Some(FileKey {
            path: std::fs::canonicalize(path).ok()?.display().to_string(),
            size: meta.len(),
            modified_ns,
        })
    }

    fn line(&self, sha256: &str) -> String {
        format!(
            "{sha256}\t{}\t{}\t{}",
            self.size, self.modified_ns, self.path
        )
    }

    fn matches(&self, line: &str) -> Option<String> {
        let mut fields = line.splitn(4, '\t');
        let sha = fields.next()?;
        let same = fields.next()? == self.size.to_string()
            && fields.next()? == self.modified_ns.to_string()
            && fields.next()? == self.path;
        (same && sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| sha.to_string())
    }
}

/// The cache file of this user, if there is a home for it.
pub(crate) fn default_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("tourney").join("artifact-hashes"))
}

/// The sha256 remembered for `key` in `file`.
pub(crate) fn lookup(file: &Path, key: &FileKey) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().rev().find_map(|line| key.matches(line))
}

/// Remembers `sha256` for `key` in `file` (best effort: a cache that cannot be written is
/// only slower), forgetting the same path's older entries and the oldest past
/// [`MAX_ENTRIES`].
pub(crate) fn remember(file: &Path, key: &FileKey, sha256: &str) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let suffix = format!("\t{}", key.path);
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.ends_with(&suffix)).collect();
    let line = key.line(sha256);
    lines.push(&line);
    let keep = &lines[lines.len().saturating_sub(MAX_ENTRIES)..];
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let partial = file.with_extension("part");
    if std::fs::write(&partial, keep.join("\n") + "\n").is_ok() {
        let _ = std::fs::rename(&partial, file);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_is_known_until_it_changes_and_the_cache_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache/artifact-hashes");
        let program = dir.path().join("engine");
        std::fs::write(&program, b"one").unwrap();
        let key = FileKey::of(&program).unwrap();
        assert_eq!(lookup(&cache, &key), None);
        let sha = "a".repeat(64);
        remember(&cache, &key, &sha);
        assert_eq!(lookup(&cache, &key), Some(sha.clone()));
        // Rewritten (another size, a later time): not the same program.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(&program, b"two!").unwrap();
        let changed = FileKey::of(&program).unwrap();
        assert_ne!(changed, key);
        assert_eq!(lookup(&cache, &changed), None);
        remember(&cache, &changed, &"b".repeat(64));
        assert_eq!(lookup(&cache, &changed), Some("b".repeat(64)));
        let text = std::fs::read_to_string(&cache).unwrap();
        assert_eq!(text.lines().count(), 1, "one line a path: {text}");
        // Damaged lines are not believed.
        std::fs::write(&cache, format!("zz\t4\t1\t{}\n", changed.path)).unwrap();
        assert_eq!(lookup(&cache, &changed), None);
        // At most MAX_ENTRIES, the oldest forgotten.
        for i in 0..MAX_ENTRIES + 5 {
            let p = dir.path().join(format!("p{i}"));
            std::fs::write(&p, b"x").unwrap();
            remember(&cache, &FileKey::of(&p).unwrap(), &"c".repeat(64));
        }
        let text = std::fs::read_to_string(&cache).unwrap();
        assert_eq!(text.lines().count(), MAX_ENTRIES);
        assert!(!text.contains("/p0\n") && text.contains(&format!("/p{}\n", MAX_ENTRIES + 4)));
    }
}
