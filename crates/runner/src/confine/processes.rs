//! The engines' processes: those running, recorded from their start so that they can be
//! ended together when the program quits; what they leave behind adopted and ended; their
//! process groups killed; and the CPU time they used, read from `/proc`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Mutex, OnceLock};

use super::SpawnError;

/// The engines running now: what [`end_engines`] ends.
static RUNNING: Mutex<Running> = Mutex::new(Running {
    quitting: false,
    engines: Vec::new(),
});

struct Running {
    /// Set by [`end_engines`]: no engine may start after it.
    quitting: bool,
    /// The process group each engine leads, and its working directory; at most one entry
    /// per live engine process.
    engines: Vec<(u32, PathBuf)>,
}

fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts an engine (`command`, working in `dir`) and records it until [`forget_engine`];
/// refused once the program is quitting. The record is held while the engine starts, so
/// [`end_engines`], called meanwhile by another thread, waits for it and ends it too: an
/// engine cannot start unrecorded while the program exits.
pub(crate) fn start_engine(command: Command, dir: &Path) -> Result<Child, SpawnError> {
    let mut running = running();
    if running.quitting {
        return Err(SpawnError::Quitting);
    }
    let child = spawn(command)?;
    running.engines.push((child.id(), dir.to_path_buf()));
    Ok(child)
}

/// Starts `command` from the spawning thread, which lives as long as the program: a
/// contained engine's chain dies with the thread that forked it, so that thread must not
/// be a game thread that ends when idle.
pub(super) fn spawn(command: Command) -> Result<Child, SpawnError> {
    type Job = (Command, std::sync::mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Mutex<std::sync::mpsc::Sender<Job>>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, waiting) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("engine-spawner".into())
            .spawn(move || {
                for (mut command, reply) in waiting {
                    let _ = reply.send(command.spawn());
                }
                // Every sender is gone only when the program ends: stay for its end.
                loop {
                    std::thread::park();
                }
            })
            .expect("a thread for spawning engines");
        Mutex::new(jobs)
    });
    let (reply, answer) = std::sync::mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((command, reply))
        .map_err(|_| SpawnError::SpawnerGone)?;
    answer
        .recv()
        .map_err(|_| SpawnError::SpawnerGone)?
        .map_err(SpawnError::Io)
}

/// An engine killed and about to be reaped (its pid soon free for another process):
/// [`end_engines`] leaves it alone.
pub(crate) fn forget_engine(pid: u32) {
    running().engines.retain(|(p, _)| *p != pid);
}

/// Kills every outside engine this program runs (each whole process group), removes their
/// working directories, and lets no other engine start: for a program about to exit with
/// games under way. Engines run in sessions of their own, so neither the signal that stops
/// the program nor its exit reaches them; without this they would search on, orphaned.
pub fn end_engines() {
    let mut running = running();
    running.quitting = true;
    for (pid, dir) in std::mem::take(&mut running.engines) {
        kill_group(pid);
        let _ = std::fs::remove_dir_all(dir);
    }
    drop(running);
    end_orphans();
}

/// Makes this program the reaper of what its engines leave behind where namespaces are not
/// available (a container's default seccomp profile refuses them): a `setsid` daemon an
/// engine starts, orphaned, becomes this program's child instead of init's, and a thread
/// kills such orphans and reaps them ([`end_orphans`]) every half second. Also makes the
/// program undumpable, so that processes of its user (engines run as it) cannot read its
/// memory or environment (`/proc/<pid>/environ`, where a token may be). Returns whether the
/// system let it become a reaper.
pub fn adopt_orphans() -> bool {
    // SAFETY: prctl with these options takes integers only.
    let reaper = unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) == 0
    };
    static REAPER: OnceLock<()> = OnceLock::new();
    if reaper {
        REAPER.get_or_init(|| {
            let _ = std::thread::Builder::new()
                .name("orphan-reaper".into())
                .spawn(|| {
                    loop {
                        end_orphans();
                        std::thread::sleep(std::time::Duration::from_millis(500));
                    }
                });
        });
    }
    reaper
}

/// Kills this program's adopted children (processes of another session than its own that
/// it did not start as engines: what an engine left behind, reparented here) and reaps
/// those that ended; returns how many it reaped. Its own helpers (a `git`, a compiler's
/// version) share its session and are left alone; engines are recorded while they start.
pub fn end_orphans() -> usize {
    let running = running();
    // SAFETY: getsid and getpid have no preconditions.
    let (own_session, own) = unsafe { (libc::getsid(0), libc::getpid()) };
    let mut reaped = 0;
    for pid in children_of(own) {
        if running
            .engines
            .iter()
            .any(|(p, _)| i32::try_from(*p) == Ok(pid))
        {
            continue;
        }
        let Some((state, group, session)) = process_stat(pid) else {
            continue;
        };
        if session == own_session {
            continue;
        }
        // SAFETY: kill and waitpid on a child of ours, named by its pid.
        unsafe {
            if state == 'Z' {
                let mut status = 0;
                if libc::waitpid(pid, &mut status, libc::WNOHANG) == pid {
                    reaped += 1;
                }
            } else {
                if group == pid {
                    libc::kill(-pid, libc::SIGKILL);
                }
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    reaped
}

/// The children of process `pid` (of every thread of it).
fn children_of(pid: libc::pid_t) -> Vec<libc::pid_t> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The state, process group and session of process `pid`, from `/proc/<pid>/stat`.
fn process_stat(pid: libc::pid_t) -> Option<(char, libc::pid_t, libc::pid_t)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name, which may hold spaces and parentheses.
    let mut fields = stat.get(stat.rfind(')')? + 1..)?.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some((state, group, session))
}

/// Kills the process group `pid` leads (the engine and everything it started that stayed
/// in its group).
pub(crate) fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill has no memory-safety preconditions; a negative pid names a group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// The CPU time process `pid` and everything it started and still runs have used so far,
/// in seconds (`None` where `/proc` does not tell): a contained engine runs below two
/// waiting processes of ours.
pub(crate) fn cpu_seconds_used(pid: u32) -> Option<f64> {
    let own = process_cpu_seconds(pid)?;
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    Some(
        own + children
            .split_whitespace()
            .filter_map(|c| c.parse().ok())
            .filter_map(cpu_seconds_used)
            .sum::<f64>(),
    )
}

/// The CPU time of process `pid` alone, in seconds.
fn process_cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command (which may hold spaces), from the third: utime and stime
    // are the 14th and 15th.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // SAFETY: sysconf has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (per_second > 0).then(|| ticks as f64 / per_second as f64)
}
