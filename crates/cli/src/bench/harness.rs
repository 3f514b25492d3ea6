//! What several benchmarks share: a coordinator process to measure, its memory and
//! threads, this process's CPU time, and a game played through the referee.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tourney_ai::Heuristics;
use tourney_runner::{Adjudicate, BuiltIn, Seat, Setup, play as referee_play};

/// A coordinator process on `dir` (this binary, without tokens, serving on a free
/// loopback port, with `args` besides), and the port, once it serves.
pub(crate) fn coordinator_process(dir: &std::path::Path, args: &[&str]) -> Result<(Child, u16)> {
    let mut child = Command::new(std::env::current_exe()?)
        .args([
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "json",
            "--data",
        ])
        .arg(dir)
        .args(args)
        .env_remove("TOURNEY_WORKER_TOKEN")
        .env_remove("TOURNEY_ADMIN_TOKEN")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut lines = BufReader::new(child.stderr.take().context("piped")?).lines();
    let port = loop {
        let Some(line) = lines.next() else {
            bail!("the coordinator ended before it served");
        };
        let log: serde_json::Value = serde_json::from_str(&line?).unwrap_or_default();
        if log["fields"]["message"] == "coordinator serving" {
            break log["fields"]["listen"]
                .as_str()
                .and_then(|l| l.rsplit(':').next()?.parse::<u16>().ok())
                .context("a listen address")?;
        }
    };
    // Its log is read to the end, so that it never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Ok((child, port))
}

/// The value of the Prometheus series `series` (name and labels, as exposed) that the
/// coordinator on loopback `port` serves at `/metrics`; 0 if it is not there.
pub(crate) fn metric(port: u16, series: &str) -> f64 {
    use std::io::{Read, Write};
    let read = || -> std::io::Result<String> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
        write!(stream, "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut answer = String::new();
        stream.read_to_string(&mut answer)?;
        Ok(answer)
    };
    let answer = read().unwrap_or_default();
    let value = answer.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    });
    value.unwrap_or(0.0)
}

/// A value of `/proc/<pid>/status` in MiB (`VmRSS`, `VmHWM`) or as it is (`Threads`).
pub(crate) fn status_value(pid: u32, key: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            let value = s.lines().find_map(|l| l.strip_prefix(key))?.trim();
            let number = value.trim_end_matches(" kB").trim().parse::<f64>().ok()?;
            Some(if value.ends_with("kB") {
                number / 1024.0
            } else {
                number
            })
        })
        .unwrap_or(0.0)
}

/// CPU time used so far by this process.
pub(crate) fn own_cpu() -> Duration {
    // SAFETY: getrusage fills the struct it is given; all-zero is a valid value of it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid `who` and a pointer to a live rusage.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// CPU time the whole machine has been busy so far, over all its cores (user, system and
/// interrupt time of every process and of the kernel's own threads, from `/proc/stat`):
/// what a benchmark costs when it has the machine to itself, including work the kernel
/// does for it later (such as tearing down an exited engine's namespaces).
pub(crate) fn machine_busy() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let fields: Vec<u64> = (stat.lines().next()?.split_whitespace().skip(1))
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    // user nice system idle iowait irq softirq: all but idle and iowait.
    let busy: u64 = [0, 1, 2, 5, 6].iter().filter_map(|&i| fields.get(i)).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    Some(Duration::from_micros(busy * 1_000_000 / hz.max(1)))
}

/// Waits (at most `most`) until the machine is idle: less than a tenth of a core busy over
/// 200 ms, so that work a benchmark left to the kernel is counted in it.
pub(crate) fn wait_for_idle(most: Duration) {
    let until = std::time::Instant::now() + most;
    let window = Duration::from_millis(200);
    while std::time::Instant::now() < until {
        let Some(before) = machine_busy() else { return };
        std::thread::sleep(window);
        let Some(after) = machine_busy() else { return };
        if (after - before) * 10 < window {
            return;
        }
    }
}

/// One game of `white` ("a") against `black` ("b") under `setup`.
pub(crate) fn play_a_b<P: Adjudicate + Heuristics>(
    setup: &Setup<P>,
    white: &mut BuiltIn<P>,
    black: &mut BuiltIn<P>,
) -> Result<tourney_model::GameRecord> {
    let white = Seat {
        name: "a".into(),
        player: white,
    };
    let black = Seat {
        name: "b".into(),
        player: black,
    };
    Ok(referee_play(setup, white, black, &mut |_| {})?)
}
