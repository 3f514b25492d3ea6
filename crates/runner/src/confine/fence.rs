//! Engines' files where no mount namespace can be had (a container runtime's default
//! seccomp profile refuses namespaces): a Landlock ruleset of their own, built before the
//! fork and enforced between fork and exec, inherited by all they start. An engine may
//! read and run the system's programs and libraries (`/usr`, `/lib*`, `/bin`, `/sbin`,
//! `/opt`, `/nix`, `/proc`, the CPUs in `/sys` and the few files of `/etc` that programs
//! read), its own program's directory and the data files it was given; it may write only
//! in its working directory (removed with it) and to `/dev/null` and the like. Nothing
//! else of the host is open to it: not the worker's cache or files, not `/tmp`, not its
//! opponent's working directory. Landlock needs no privilege once `no_new_privs` is set,
//! which the default profiles allow; a domain of its own also keeps it from tracing (or
//! reading the memory of) processes outside it, its opponent included, and from Linux
//! 6.12 (ABI 6) from signalling them (killing its worker) or reaching their abstract
//! Unix sockets.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::Unavailable;

/// `LANDLOCK_CREATE_RULESET_VERSION`: asks for the ABI version.
const CREATE_RULESET_VERSION: u32 = 1;
/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

/// `LANDLOCK_ACCESS_FS_*`.
const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
/// What ABI 1 handles: the rights above and removing and making files, directories,
/// devices, sockets, pipes and links (bits 0 to 12).
const ABI_1: u64 = (1 << 13) - 1;
/// ABI 2 adds `REFER` (linking or renaming across directories).
const REFER: u64 = 1 << 13;
/// ABI 3 adds `TRUNCATE`.
const TRUNCATE: u64 = 1 << 14;
/// ABI 5 adds `IOCTL_DEV`.
const IOCTL_DEV: u64 = 1 << 15;
/// ABI 6 scopes signals and abstract Unix sockets to the domain
/// (`LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL`).
const SCOPED: u64 = 0b11;
/// The rights a rule on a file (not a directory) may give.
const FILE_RIGHTS: u64 = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV;

/// Read and run.
const READ_RUN: u64 = READ_FILE | READ_DIR | EXECUTE;

/// What the system lends every engine to read and run, where it exists.
const SYSTEM: [&str; 12] = [
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/opt",
    "/nix",
    "/proc",
    "/sys/devices/system/cpu",
    "/etc/alternatives",
];

/// The files of `/etc` programs read (the loader's cache, time zone, names, TLS roots).
const ETC: [&str; 11] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/hosts",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/os-release",
];

/// The devices every engine may read and write.
const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The rights this kernel's Landlock knows, by its ABI version.
fn handled(abi: u32) -> u64 {
    let mut rights = ABI_1;
    if abi >= 2 {
        rights |= REFER;
    }
    if abi >= 3 {
        rights |= TRUNCATE;
    }
    if abi >= 5 {
        rights |= IOCTL_DEV;
    }
    rights
}

/// A Landlock ruleset for one engine, built before the fork.
#[derive(Debug)]
pub(super) struct FileFence {
    ruleset: OwnedFd,
}

impl FileFence {
    /// The fence of an engine working in `dir` that runs `program` with `args`: what
    /// [`the module`](self) lends, the directories of the program and of arguments that
    /// name files, and the targets of the links in `dir` (its data files). `None` where
    /// the kernel has no Landlock ([`file_fence`] says why).
    pub(super) fn new(dir: &Path, program: &OsStr, args: &[OsString]) -> Option<FileFence> {
        let abi = *file_fence().as_ref().ok()?;
        let fence = FileFence::empty(abi)?;
        let all = handled(abi);
        for path in SYSTEM.iter().chain(&ETC) {
            fence.allow(Path::new(path), READ_RUN, all);
        }
        for path in DEVICES {
            fence.allow(Path::new(path), READ_FILE | WRITE_FILE, all);
        }
        // Its own program's directory, and those of files its arguments name (a script).
        for word in std::iter::once(program).chain(args.iter().map(OsString::as_os_str)) {
            let path = Path::new(word);
            if path.is_absolute()
                && path.is_file()
                && !path.starts_with("/proc")
                && let Some(parent) = path.parent()
            {
                fence.allow(parent, READ_RUN, all);
            }
        }
        for target in link_targets(dir) {
            fence.allow(&target, READ_RUN, all);
        }
        fence.allow(dir, all, all);
        Some(fence)
    }

    /// A ruleset that handles every right `abi` knows and allows none.
    fn empty(abi: u32) -> Option<FileFence> {
        // `struct landlock_ruleset_attr`: the file rights, the network ones (none
        // handled), and from ABI 6 the scopes: no signal to, and no abstract socket of, a
        // process outside (its worker, its opponent).
        let attr: [u64; 3] = [handled(abi), 0, SCOPED];
        let size = if abi >= 6 { 24 } else { 8 };
        // SAFETY: the attribute is `size` readable bytes.
        let fd =
            unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, attr.as_ptr(), size, 0u32) };
        // SAFETY: a descriptor the call just made, ours alone.
        (fd >= 0).then(|| FileFence {
            ruleset: unsafe { OwnedFd::from_raw_fd(fd as i32) },
        })
    }

    /// Allows `rights` (of `all`, those handled) beneath `path`, if it exists: on a file
    /// only the rights a file takes.
    fn allow(&self, path: &Path, rights: u64, all: u64) {
        let Ok(name) = CString::new(path.as_os_str().as_encoded_bytes()) else {
            return;
        };
        // SAFETY: a NUL-terminated path; the descriptor is closed below.
        let fd = unsafe { libc::open(name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if fd < 0 {
            return;
        }
        // SAFETY: just opened, ours alone.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut rights = rights & all;
        if !path.is_dir() {
            rights &= FILE_RIGHTS;
        }
        // `struct landlock_path_beneath_attr` is packed: 8 bytes of rights, 4 of the fd.
        let mut attr = [0u8; 12];
        attr[..8].copy_from_slice(&rights.to_ne_bytes());
        attr[8..].copy_from_slice(&fd.as_raw_fd().to_ne_bytes());
        // SAFETY: the attribute lives through the call; a rule that does not take is
        // left out (the fence then allows less, never more).
        unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                self.ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                attr.as_ptr(),
                0u32,
            );
        }
    }

    /// Puts the calling process (and all it starts) behind the fence.
    ///
    /// # Safety
    /// Async-signal-safe (`prctl` and one system call on a descriptor made before): for
    /// use between fork and exec.
    pub(super) unsafe fn install(&self) -> std::io::Result<()> {
        // SAFETY: plain system calls on a valid descriptor.
        let done = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::syscall(
                    libc::SYS_landlock_restrict_self,
                    self.ruleset.as_raw_fd(),
                    0u32,
                ) == 0
        };
        match done {
            true => Ok(()),
            false => Err(std::io::Error::last_os_error()),
        }
    }
}

/// What the symbolic links in `dir` (and its folders, a few levels down) point at.
fn link_targets(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![(dir.to_path_buf(), 0)];
    while let Some((folder, depth)) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                found.extend(std::fs::canonicalize(entry.path()));
            } else if kind.is_dir() && depth < 8 {
                folders.push((entry.path(), depth + 1));
            }
        }
    }
    found
}

static FILE_FENCE: OnceLock<Result<u32, Unavailable>> = OnceLock::new();

/// Whether engines without a mount namespace can be fenced off the host's files here, and
/// the kernel's Landlock ABI: `Err` says why not (then they see what the worker's user
/// sees, which the worker logs at start).
pub fn file_fence() -> &'static Result<u32, Unavailable> {
    FILE_FENCE.get_or_init(|| {
        // SAFETY: asks for the ABI version; no memory is read.
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                CREATE_RULESET_VERSION,
            )
        };
        if abi < 1 {
            let e = std::io::Error::last_os_error();
            return Err(Unavailable(format!("no Landlock: {e}")));
        }
        let abi = abi as u32;
        let fence =
            FileFence::empty(abi).ok_or_else(|| Unavailable("no Landlock ruleset".into()))?;
        for path in SYSTEM {
            fence.allow(Path::new(path), READ_RUN, handled(abi));
        }
        let mut probe = std::process::Command::new("/bin/sh");
        probe.args(["-c", "exit 0"]);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut probe, move || fence.install());
        }
        match probe.status() {
            Ok(status) if status.success() => Ok(abi),
            Ok(status) => Err(Unavailable(format!("the probe exited with {status}"))),
            Err(e) => Err(Unavailable(format!("no Landlock domain: {e}"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fenced_engine_writes_only_its_directory_and_reads_only_what_it_is_lent() {
        if file_fence().is_err() {
            eprintln!("skipped: {:?}", file_fence());
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let (dir, other) = (root.path().join("engine"), root.path().join("other"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&other).unwrap();
        let (data, secret) = (other.join("net.bin"), other.join("token"));
        std::fs::write(&data, "weights").unwrap();
        std::fs::write(&secret, "hunter2").unwrap();
        std::os::unix::fs::symlink(&data, dir.join("net.bin")).unwrap();
        let fence = FileFence::new(&dir, OsStr::new("/bin/sh"), &[]).unwrap();
        let script = format!(
            "echo mine > {dir}/out && cat {dir}/net.bin && ! cat {secret} && \
             ! touch {other}/left && ! touch /tmp/tourney-fence-$$ && echo ok > /dev/null",
            dir = dir.display(),
            secret = secret.display(),
            other = other.display()
        );
        let mut child = std::process::Command::new("/bin/sh");
        child.args(["-c", &script]);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut child, move || fence.install());
        }
        let out = child.output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{said} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(said, "weights");
        assert_eq!(std::fs::read_to_string(dir.join("out")).unwrap(), "mine\n");
        assert!(!other.join("left").exists());
    }
}
