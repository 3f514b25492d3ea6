//! What this machine offers a command: its cores, and its limit of open files.

/// Raises this process's soft limit of open files to its hard limit: a coordinator holds a
/// descriptor per connection (workers, admin calls, dashboard pages), and systemd's soft
/// default of 1,024 is reached long before the hard one (said in the log when it fails).
pub(crate) fn raise_open_files() {
    // SAFETY: getrlimit and setrlimit read and write the struct they are given.
    let raised = unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return;
        }
        if limit.rlim_cur >= limit.rlim_max {
            return;
        }
        let from = limit.rlim_cur;
        limit.rlim_cur = limit.rlim_max;
        (
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0,
            from,
            limit.rlim_max,
        )
    };
    match raised {
        (true, from, to) => tracing::info!(from, to, "open files limit raised"),
        (false, from, to) => tracing::warn!(
            from,
            to,
            error = %std::io::Error::last_os_error(),
            "open files limit not raised"
        ),
    }
}

/// The machine's cores: games played at once by default.
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
