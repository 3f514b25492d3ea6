//! Namespaces for an engine (or a build): a PID namespace whose init takes everything in
//! it down with the engine, a mount namespace with a private `/tmp` layer and its own
//! `/proc`, a user namespace where the worker is not root, and a network namespace when
//! asked. Everything here runs between `fork` and `exec`: no allocation, only
//! async-signal-safe calls.

use std::path::Path;

/// What [`Containment::contain`] needs, made before the fork (no allocation after it).
pub(super) struct Containment {
    /// The user and group engines run as (when the worker is root).
    run_as: Option<(u32, u32)>,
    /// The user namespace's maps (`0 <uid> 1`), when the worker is not root.
    uid_map: Option<std::ffi::CString>,
    gid_map: Option<std::ffi::CString>,
    /// tmpfs options of the private /tmp.
    tmp_options: std::ffi::CString,
    /// The program's pid: a contained process whose parent is another has lost it.
    worker: libc::pid_t,
    paths: [std::ffi::CString; 6],
    /// The engine's working directory on the host, which a private tmpfs covers: the
    /// writable layer of its /tmp (`upper`, `work`).
    layer: [std::ffi::CString; 3],
    /// The overlay's options: the real /tmp below, the private layer above.
    overlay: std::ffi::CString,
    /// A host directory kept as it is (a build's checkout, whose output must stay even
    /// under /tmp), bound over itself after the overlay; the process works there.
    keep: Option<std::ffi::CString>,
}

impl Containment {
    /// The plan for engines run as `run_as`, whose writes to /tmp go to a private layer
    /// of `tmp_mb` MiB over the host's working directory `dir`; with `keep`, a host
    /// directory that stays the host's (written through) and where the process works.
    pub(super) fn plan(
        run_as: Option<(u32, u32)>,
        tmp_mb: u64,
        dir: &Path,
        keep: Option<&Path>,
    ) -> Result<Containment, std::ffi::NulError> {
        use std::ffi::CString;
        // SAFETY: geteuid, getuid, getgid and getpid have no preconditions.
        let (root, uid, gid, worker) = unsafe {
            (
                libc::geteuid() == 0,
                libc::getuid(),
                libc::getgid(),
                libc::getpid(),
            )
        };
        Ok(Containment {
            run_as,
            uid_map: (!root)
                .then(|| CString::new(format!("0 {uid} 1\n")))
                .transpose()?,
            gid_map: (!root)
                .then(|| CString::new(format!("0 {gid} 1\n")))
                .transpose()?,
            tmp_options: CString::new(format!("size={}m,mode=1777", tmp_mb.max(1)))?,
            worker,
            paths: [
                CString::new("/")?,
                CString::new("/tmp")?,
                CString::new("tmpfs")?,
                CString::new("/proc")?,
                CString::new("proc")?,
                CString::new("overlay")?,
            ],
            layer: [
                CString::new(dir.as_os_str().as_encoded_bytes())?,
                CString::new(dir.join("upper").as_os_str().as_encoded_bytes())?,
                CString::new(dir.join("work").as_os_str().as_encoded_bytes())?,
            ],
            overlay: CString::new(format!(
                "lowerdir=/tmp,upperdir={},workdir={}",
                dir.join("upper").display(),
                dir.join("work").display()
            ))?,
            keep: keep
                .map(|k| CString::new(k.as_os_str().as_encoded_bytes()))
                .transpose()?,
        })
    }

    /// Between fork and exec: puts the process in new namespaces and makes it a chain of
    /// three: this process (the worker's child, which waits and then ends as the engine
    /// ended), a small init (the namespace's first process: when it ends, the kernel kills
    /// everything in the namespace), and the engine, which returns from here to be
    /// exec'd. Each dies with its parent. With `network`, a network namespace too.
    ///
    /// # Safety
    /// Only in a `pre_exec` closure: every call is async-signal-safe and nothing allocates.
    pub(super) unsafe fn contain(&self, network: bool) -> std::io::Result<()> {
        let [root_dir, tmp, tmpfs, proc_dir, proc_fs, overlay] = &self.paths;
        let fail = || Err(std::io::Error::last_os_error());
        let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS;
        if network {
            flags |= libc::CLONE_NEWNET;
        }
        if self.uid_map.is_some() {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY (all calls below): async-signal-safe system calls on values made before
        // the fork.
        unsafe {
            if libc::unshare(flags) != 0 {
                return fail();
            }
            if let (Some(uid_map), Some(gid_map)) = (&self.uid_map, &self.gid_map) {
                let write = |path: &[u8], content: &std::ffi::CStr| {
                    let fd = libc::open(path.as_ptr().cast(), libc::O_WRONLY | libc::O_CLOEXEC);
                    let bytes = content.to_bytes();
                    let ok = fd >= 0
                        && libc::write(fd, bytes.as_ptr().cast(), bytes.len())
                            == bytes.len() as isize;
                    if fd >= 0 {
                        libc::close(fd);
                    }
                    ok
                };
                if !write(b"/proc/self/setgroups\0", c"deny")
                    || !write(b"/proc/self/uid_map\0", uid_map)
                    || !write(b"/proc/self/gid_map\0", gid_map)
                {
                    return fail();
                }
            }
            // This process dies with the program (it was forked by the spawning thread,
            // which lives as long as the program).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
                || libc::getppid() != self.worker
            {
                libc::_exit(1);
            }
            let init = libc::fork();
            if init < 0 {
                return fail();
            }
            if init > 0 {
                close_all();
                end_as(wait_for(init));
            }
            // The namespace's init.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // /tmp as the engine sees it: the real one below, read through; its writes
            // in a private tmpfs over its host working directory, gone with it.
            let [layer, upper, work] = &self.layer;
            // The kept directory, as the host has it, before /tmp is covered.
            let kept = match &self.keep {
                Some(keep) => {
                    let fd = libc::open(
                        keep.as_ptr(),
                        libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                    );
                    if fd < 0 {
                        libc::_exit(126);
                    }
                    Some((keep, fd))
                }
                None => None,
            };
            if libc::mount(
                std::ptr::null(),
                root_dir.as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
                || libc::mount(
                    tmpfs.as_ptr(),
                    layer.as_ptr(),
                    tmpfs.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    self.tmp_options.as_ptr().cast(),
                ) != 0
                || libc::mkdir(upper.as_ptr(), 0o755) != 0
                || libc::mkdir(work.as_ptr(), 0o755) != 0
                || libc::mount(
                    overlay.as_ptr(),
                    tmp.as_ptr(),
                    overlay.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    self.overlay.as_ptr().cast(),
                ) != 0
            {
                libc::_exit(126);
            }
            if let Some((keep, fd)) = kept {
                let source = fd_path(fd);
                if libc::mount(
                    source.as_ptr().cast(),
                    keep.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ) != 0
                {
                    libc::_exit(126);
                }
                libc::close(fd);
            }
            // The worker's processes out of sight (where the system lets a new /proc be
            // mounted; else the old one stays).
            libc::mount(
                proc_fs.as_ptr(),
                proc_dir.as_ptr(),
                proc_fs.as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                std::ptr::null(),
            );
            if let Some((uid, gid)) = self.run_as
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0)
            {
                libc::_exit(126);
            }
            // Set again: a change of user clears it.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let engine = libc::fork();
            if engine < 0 {
                libc::_exit(126);
            }
            if engine > 0 {
                close_all();
                // Reaps whatever ends in the namespace until the engine does; its end then
                // ends the namespace.
                let status = loop {
                    let mut status = 0;
                    let pid = libc::waitpid(-1, &mut status, 0);
                    if pid == engine {
                        break status;
                    }
                    if pid < 0 && *libc::__errno_location() != libc::EINTR {
                        break 0;
                    }
                };
                let code = if libc::WIFSIGNALED(status) {
                    128 + libc::WTERMSIG(status)
                } else {
                    libc::WEXITSTATUS(status)
                };
                libc::_exit(code);
            }
            // The engine, in its working directory as /tmp now shows it: its own (or the
            // kept directory).
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            let cwd = self.keep.as_ref().unwrap_or(&self.layer[0]);
            if libc::chdir(cwd.as_ptr()) != 0 {
                libc::_exit(126);
            }
        }
        Ok(())
    }
}

/// `/proc/self/fd/<fd>` as a NUL-terminated path, made without allocating.
fn fd_path(fd: libc::c_int) -> [u8; 32] {
    let mut path = [0u8; 32];
    let prefix = b"/proc/self/fd/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let (mut n, mut count) = (fd.unsigned_abs(), 0);
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..count {
        path[prefix.len() + i] = digits[count - 1 - i];
    }
    path
}

/// Closes every file descriptor (the chain's waiting processes hold none of the engine's
/// pipes, nor the pipe that tells the spawner the exec happened).
///
/// # Safety
/// Between fork and exec, in a process that will not exec.
unsafe fn close_all() {
    // SAFETY: close_range and close are async-signal-safe.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..65_536 {
                libc::close(fd);
            }
        }
    }
}

/// Waits for child `pid`; its wait status.
///
/// # Safety
/// Between fork and exec.
unsafe fn wait_for(pid: libc::pid_t) -> libc::c_int {
    // SAFETY: waitpid is async-signal-safe.
    unsafe {
        loop {
            let mut status = 0;
            let got = libc::waitpid(pid, &mut status, 0);
            if got == pid || (got < 0 && *libc::__errno_location() != libc::EINTR) {
                return status;
            }
        }
    }
}

/// Ends this process as the init said its engine ended: with its exit code, or by the
/// signal that ended it (`128 + signal`), so that the worker reads the engine's end.
///
/// # Safety
/// Between fork and exec, in a process that will not exec.
unsafe fn end_as(init_status: libc::c_int) -> ! {
    // SAFETY: signal, raise and _exit are async-signal-safe.
    unsafe {
        if libc::WIFEXITED(init_status) {
            let code = libc::WEXITSTATUS(init_status);
            if (129..=192).contains(&code) {
                let signal = code - 128;
                libc::signal(signal, libc::SIG_DFL);
                libc::raise(signal);
            }
            libc::_exit(code);
        }
        libc::_exit(128 + libc::WTERMSIG(init_status));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_descriptors_path_is_spelled_without_allocating() {
        for (fd, path) in [
            (0, "/proc/self/fd/0"),
            (7, "/proc/self/fd/7"),
            (1234, "/proc/self/fd/1234"),
        ] {
            let made = super::fd_path(fd);
            let end = made.iter().position(|&b| b == 0).unwrap();
            assert_eq!(&made[..end], path.as_bytes());
        }
    }
}
