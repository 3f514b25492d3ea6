//! Engines without the network where no network namespace can be had (a container
//! runtime's default seccomp profile refuses namespaces): a seccomp filter of their own,
//! installed between fork and exec and inherited by all they start, refuses the sockets
//! that reach a network (IPv4, IPv6, raw packets) with `EACCES`, and `io_uring`, which
//! could make them too. Local sockets (`AF_UNIX`, netlink) stay. System calls of another
//! architecture's table (32-bit or x32 ones, which would go around the filter) kill the
//! engine. Installing a filter needs no privilege once `no_new_privs` is set, which the
//! default profiles allow.

use std::sync::OnceLock;

use super::Unavailable;

/// The architecture whose system calls the filter reads (`AUDIT_ARCH_*`).
#[cfg(target_arch = "x86_64")]
const ARCH: Option<u32> = Some(0xC000_003E);
#[cfg(target_arch = "aarch64")]
const ARCH: Option<u32> = Some(0xC000_00B7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ARCH: Option<u32> = None;

/// The first number of the x32 table on x86_64 (no native call is as high).
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A seccomp filter that refuses network sockets, built before the fork.
#[derive(Debug, Clone)]
pub(super) struct NetworkSeal {
    program: Vec<libc::sock_filter>,
}

impl NetworkSeal {
    /// The filter for this architecture; `None` where it is not known.
    pub(super) fn new() -> Option<Self> {
        let arch = ARCH?;
        let stmt = |code: u32, k: u32| libc::sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
            code: code as u16,
            jt,
            jf,
            k,
        };
        let (ld, jeq, jge, ret) = (
            libc::BPF_LD | libc::BPF_W | libc::BPF_ABS,
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K,
            libc::BPF_RET | libc::BPF_K,
        );
        let refuse = libc::SECCOMP_RET_ERRNO | (libc::EACCES as u32 & libc::SECCOMP_RET_DATA);
        // 0 arch; 1 ours? else kill; 2 number; 3 x32? kill; 4 socket? to 7; 5 io_uring? refuse;
        // 6 allow; 7 its domain; 8-10 inet, inet6, packet? refuse; 11 allow; 12 refuse;
        // 13 kill. Jumps count the instructions skipped.
        let program = vec![
            stmt(ld, 4),
            jump(jeq, arch, 0, 11),
            stmt(ld, 0),
            jump(jge, X32_SYSCALL_BIT, 9, 0),
            jump(jeq, libc::SYS_socket as u32, 2, 0),
            jump(jeq, libc::SYS_io_uring_setup as u32, 6, 0),
            stmt(ret, libc::SECCOMP_RET_ALLOW),
            stmt(ld, 16),
            jump(jeq, libc::AF_INET as u32, 3, 0),
            jump(jeq, libc::AF_INET6 as u32, 2, 0),
            jump(jeq, libc::AF_PACKET as u32, 1, 0),
            stmt(ret, libc::SECCOMP_RET_ALLOW),
            stmt(ret, refuse),
            stmt(ret, libc::SECCOMP_RET_KILL_PROCESS),
        ];
        Some(NetworkSeal { program })
    }

    /// Installs the filter on the calling process (and all it starts from now on).
    ///
    /// # Safety
    /// Async-signal-safe (two `prctl` calls on memory made before): for use between fork
    /// and exec.
    pub(super) unsafe fn install(&self) -> std::io::Result<()> {
        let program = libc::sock_fprog {
            len: self.program.len() as u16,
            filter: self.program.as_ptr().cast_mut(),
        };
        // SAFETY: prctl with a filter that lives through the call.
        let installed = unsafe {
            libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
                && libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &program) == 0
        };
        match installed {
            true => Ok(()),
            false => Err(std::io::Error::last_os_error()),
        }
    }
}

static NETWORK_SEAL: OnceLock<Result<(), Unavailable>> = OnceLock::new();

/// Whether engines without a network namespace can be kept off the network by the filter
/// here: `Err` says why not (then they share the worker's network, which the worker logs
/// at start).
pub fn network_seal() -> &'static Result<(), Unavailable> {
    NETWORK_SEAL.get_or_init(|| {
        let seal = NetworkSeal::new().ok_or_else(|| {
            Unavailable(format!("no network filter for {}", std::env::consts::ARCH))
        })?;
        let mut probe = std::process::Command::new("/bin/sh");
        probe.args(["-c", "exit 0"]);
        // SAFETY: only async-signal-safe calls (prctl) between fork and exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut probe, move || seal.install());
        }
        match probe.status() {
            Ok(status) if status.success() => Ok(()),
            Ok(status) => Err(Unavailable(format!("the probe exited with {status}"))),
            Err(e) => Err(Unavailable(format!("no seccomp filter: {e}"))),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `probe` in a child under the filter: its exit code.
    fn sealed(probe: fn() -> bool) -> i32 {
        let seal = NetworkSeal::new().expect("a known architecture");
        // SAFETY: fork in a test; the child makes only the calls below and exits.
        unsafe {
            let child = libc::fork();
            if child == 0 {
                if seal.install().is_err() {
                    libc::_exit(2);
                }
                libc::_exit(if probe() { 0 } else { 1 });
            }
            let mut status = 0;
            libc::waitpid(child, &mut status, 0);
            libc::WEXITSTATUS(status)
        }
    }

    #[test]
    fn a_sealed_process_opens_local_sockets_but_none_that_reach_a_network() {
        if network_seal().is_err() {
            eprintln!("skipped: {:?}", network_seal());
            return;
        }
        let socket = |domain: i32| {
            // SAFETY: socket and close have no memory preconditions.
            unsafe {
                let fd = libc::socket(domain, libc::SOCK_STREAM, 0);
                if fd >= 0 {
                    libc::close(fd);
                }
                fd >= 0
            }
        };
        assert!(socket(libc::AF_INET), "unsealed, the test can open one");
        assert_eq!(
            sealed(|| unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) } >= 0),
            0
        );
        assert_eq!(
            sealed(|| unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) } < 0),
            0
        );
        assert_eq!(
            sealed(|| unsafe { libc::socket(libc::AF_INET6, libc::SOCK_DGRAM, 0) } < 0),
            0
        );
        let refused = || {
            // SAFETY: as above.
            let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
            fd < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EACCES)
        };
        assert_eq!(sealed(refused), 0, "refused with EACCES");
    }
}
