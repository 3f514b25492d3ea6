//! Pinned cores (`tourney worker --affinity auto|LIST`): the units a worker gives its
//! games (a physical core with its SMT siblings for `auto`, one CPU of a list), their
//! class (performance or efficiency, from the kernel's CPU capacity or maximum
//! frequency), and pinning a game thread to its units so that the engines it starts run
//! there too. Linux only: elsewhere `--affinity` is refused.

use std::collections::BTreeMap;
use std::path::Path;

/// The most CPUs a mask holds (the kernel's `CPU_SETSIZE`).
pub const MAX_CPUS: usize = 1024;

/// What `--affinity` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Affinity {
    /// Each physical core a unit (with its SMT siblings), classes from the kernel.
    Auto,
    /// Each listed CPU a unit (`0-3,8`).
    List(Vec<usize>),
}

impl std::str::FromStr for Affinity {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "auto" => Ok(Affinity::Auto),
            list => parse_list(list).map(Affinity::List),
        }
    }
}

/// A CPU list as the kernel writes one (`0-3,8,10-11`), sorted and without repeats.
///
/// # Errors
/// A malformed item, a range backwards, or a CPU at or past [`MAX_CPUS`], named.
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for item in text.trim().split(',') {
        let number = |n: &str| {
            (n.trim().parse::<usize>().ok())
                .filter(|n| *n < MAX_CPUS)
                .ok_or_else(|| format!("'{item}': not a CPU number below {MAX_CPUS} (as in 0-3,8)"))
        };
        match item.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                if a > b {
                    return Err(format!("'{item}': the range goes backwards"));
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(number(item)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Where a game may run: CPUs it is pinned to, together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Its CPUs (a physical core's SMT siblings, or one listed CPU).
    pub cpus: Vec<usize>,
    /// Its class: the kernel's capacity (or maximum frequency) of its CPUs; higher is
    /// faster. Units of one class are alike.
    pub class: u64,
}

/// The units of `affinity` among the CPUs this process may use, read from `sys` (the
/// kernel's `/sys/devices/system/cpu`): `auto` gives one unit per physical core (its
/// allowed SMT siblings together), a list one unit per listed CPU.
///
/// # Errors
/// A listed CPU this process may not use, or none left.
pub fn units(affinity: &Affinity, allowed: &[usize], sys: &Path) -> Result<Vec<Unit>, String> {
    let read =
        |cpu: usize, file: &str| std::fs::read_to_string(sys.join(format!("cpu{cpu}/{file}")));
    let class = |cpu: usize| {
        ["cpu_capacity", "cpufreq/cpuinfo_max_freq"]
            .iter()
            .find_map(|f| read(cpu, f).ok()?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let units: Vec<Unit> = match affinity {
        Affinity::List(cpus) => {
            if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(format!(
                    "--affinity: CPU {bad} is not one this process may use ({})",
                    list_text(allowed)
                ));
            }
            (cpus.iter())
                .map(|&cpu| Unit {
                    cpus: vec![cpu],
                    class: class(cpu),
                })
                .collect()
        }
        Affinity::Auto => {
            let mut cores: BTreeMap<Vec<usize>, u64> = BTreeMap::new();
            for &cpu in allowed {
                let siblings = (read(cpu, "topology/thread_siblings_list").ok())
                    .and_then(|s| parse_list(&s).ok())
                    .unwrap_or_else(|| vec![cpu]);
                let mine: Vec<usize> = siblings
                    .into_iter()
                    .filter(|c| allowed.contains(c))
                    .collect();
                cores.entry(mine).or_insert_with(|| class(cpu));
            }
            (cores.into_iter())
                .map(|(cpus, class)| Unit { cpus, class })
                .collect()
        }
    };
    if units.is_empty() {
        return Err("--affinity: no CPU left to pin games to".into());
    }
    Ok(units)
}

/// Which units are free, and the choice of units for a game: `n` free units of one
/// class (the fastest class with room, lowest units first, so that a pool of kept engines
/// finds the same CPUs again), or of several classes when no class has room.
#[derive(Debug, Clone)]
pub struct Placement {
    units: Vec<Unit>,
    free: Vec<bool>,
}

impl Placement {
    /// All of `units` free.
    pub fn new(units: Vec<Unit>) -> Self {
        let free = vec![true; units.len()];
        Placement { units, free }
    }

    /// How many units there are.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Takes `n` free units (fewer if fewer are free); their indices.
    pub fn take(&mut self, n: usize) -> Vec<usize> {
        let free: Vec<usize> = (0..self.units.len()).filter(|&u| self.free[u]).collect();
        let mut classes: BTreeMap<std::cmp::Reverse<u64>, Vec<usize>> = BTreeMap::new();
        for &u in &free {
            classes
                .entry(std::cmp::Reverse(self.units[u].class))
                .or_default()
                .push(u);
        }
        let chosen: Vec<usize> = match classes.values().find(|units| units.len() >= n) {
            Some(units) => units[..n].to_vec(),
            None => classes.into_values().flatten().take(n).collect(),
        };
        for &u in &chosen {
            self.free[u] = false;
        }
        chosen
    }

    /// Gives units back.
    pub fn give(&mut self, taken: &[usize]) {
        for &u in taken {
            if let Some(f) = self.free.get_mut(u) {
                *f = true;
            }
        }
    }

    /// The CPUs of `taken` units, sorted.
    pub fn cpus(&self, taken: &[usize]) -> Vec<usize> {
        let mut cpus: Vec<usize> = (taken.iter())
            .filter_map(|&u| self.units.get(u))
            .flat_map(|u| u.cpus.iter().copied())
            .collect();
        cpus.sort_unstable();
        cpus
    }

    /// The units.
    pub fn units(&self) -> &[Unit] {
        &self.units
    }
}

/// Each unit's nodes per second on the built-in benchmark, measured at once, each on its
/// own unit; and the units far slower (under 80 %) than the median of their class.
pub fn measure(units: &[Unit]) -> (Vec<f64>, Vec<usize>) {
    let speeds: Vec<f64> = std::thread::scope(|scope| {
        let running: Vec<_> = (units.iter())
            .map(|unit| {
                scope.spawn(move || {
                    let _pinned = Pinned::new(&unit.cpus);
                    tourney_ai::speed::nodes_per_second()
                })
            })
            .collect();
        running
            .into_iter()
            .map(|r| r.join().unwrap_or(0.0))
            .collect()
    });
    let slow = slow(units, &speeds);
    (speeds, slow)
}

/// The units whose speed is under 80 % of the median of their class.
fn slow(units: &[Unit], speeds: &[f64]) -> Vec<usize> {
    let mut by_class: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for (unit, &speed) in units.iter().zip(speeds) {
        by_class.entry(unit.class).or_default().push(speed);
    }
    let median = |class: u64| {
        let mut s = by_class[&class].clone();
        s.sort_by(f64::total_cmp);
        s[s.len() / 2]
    };
    (0..units.len().min(speeds.len()))
        .filter(|&u| speeds[u] < 0.8 * median(units[u].class))
        .collect()
}

/// A CPU list as the kernel writes one: `0-3,8`.
pub fn list_text(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(match j > i {
            true => format!("{}-{}", cpus[i], cpus[j]),
            false => cpus[i].to_string(),
        });
        i = j + 1;
    }
    parts.join(",")
}

/// The CPUs the calling thread may run on (empty where the system does not tell).
pub fn allowed() -> Vec<usize> {
    imp::get()
}

/// Pins the calling thread (and so the processes and threads it starts from now on) to
/// `cpus`.
///
/// # Errors
/// The kernel refused (a CPU not allowed), or not Linux.
pub fn pin(cpus: &[usize]) -> std::io::Result<()> {
    imp::set(cpus)
}

/// Pins the calling thread to `cpus` until dropped, then gives it back the CPUs it had
/// (game threads are the runtime's blocking threads, used for other work after).
pub struct Pinned(Option<Vec<usize>>);

impl Pinned {
    /// Pins the calling thread to `cpus` (nothing when `cpus` is empty).
    pub fn new(cpus: &[usize]) -> Self {
        if cpus.is_empty() {
            return Pinned(None);
        }
        let before = allowed();
        match pin(cpus) {
            Ok(()) => Pinned(Some(before)),
            Err(e) => {
                tracing::warn!(cpus = %list_text(cpus), error = %e, "could not pin the game");
                Pinned(None)
            }
        }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some(before) = self.0.take().filter(|b| !b.is_empty()) {
            let _ = pin(&before);
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::MAX_CPUS;

    pub(super) fn get() -> Vec<usize> {
        // SAFETY: a zeroed cpu_set_t is a valid empty set; the kernel writes at most its
        // size into it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is a live cpu_set_t of `size` bytes; 0 is the calling thread.
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return Vec::new();
        }
        // SAFETY: CPU_ISSET reads the set within its bounds (cpu < CPU_SETSIZE).
        (0..MAX_CPUS)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect()
    }

    pub(super) fn set(cpus: &[usize]) -> std::io::Result<()> {
        // SAFETY: as in `get`.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &cpu in cpus.iter().filter(|&&c| c < MAX_CPUS) {
            // SAFETY: cpu < CPU_SETSIZE.
            unsafe { libc::CPU_SET(cpu, &mut set) };
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is a live cpu_set_t of `size` bytes; 0 is the calling thread.
        match unsafe { libc::sched_setaffinity(0, size, &set) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn get() -> Vec<usize> {
        Vec::new()
    }

    pub(super) fn set(_: &[usize]) -> std::io::Result<()> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "pinning needs Linux",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_as_the_kernel_writes_them_and_bad_ones_are_named() {
        assert_eq!(parse_list("0-3,8,10-11").unwrap(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_list("3,1,1").unwrap(), [1, 3]);
        assert_eq!(list_text(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        assert!(parse_list("3-1").unwrap_err().contains("backwards"));
        assert!(parse_list("a").unwrap_err().contains("'a'"));
        assert!(parse_list("0-5000").is_err(), "past CPU_SETSIZE");
        assert_eq!("auto".parse::<Affinity>().unwrap(), Affinity::Auto);
    }

    /// A /sys/devices/system/cpu of `cpus` CPUs, SMT pairs (n, n + cpus/2), the first
    /// `fast` physical cores of capacity 1024 and the others 512.
    fn sys(cpus: usize, fast: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let half = cpus / 2;
        for cpu in 0..cpus {
            let core = cpu % half;
            let topology = dir.path().join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&topology).unwrap();
            let siblings = format!("{core},{}\n", core + half);
            std::fs::write(topology.join("thread_siblings_list"), siblings).unwrap();
            let capacity = if core < fast { "1024\n" } else { "512\n" };
            std::fs::write(dir.path().join(format!("cpu{cpu}/cpu_capacity")), capacity).unwrap();
        }
        dir
    }

    #[test]
    fn auto_gives_each_physical_core_with_its_siblings_and_its_class() {
        let dir = sys(8, 2);
        let all: Vec<usize> = (0..8).collect();
        let units = units(&Affinity::Auto, &all, dir.path()).unwrap();
        let cpus: Vec<&[usize]> = units.iter().map(|u| u.cpus.as_slice()).collect();
        assert_eq!(cpus, [&[0, 4][..], &[1, 5], &[2, 6], &[3, 7]]);
        let classes: Vec<u64> = units.iter().map(|u| u.class).collect();
        assert_eq!(classes, [1024, 1024, 512, 512]);
        // Only the CPUs this process may use: a sibling outside the mask is left out.
        let some = super::units(&Affinity::Auto, &[0, 1, 5], dir.path()).unwrap();
        let cpus: Vec<&[usize]> = some.iter().map(|u| u.cpus.as_slice()).collect();
        assert_eq!(cpus, [&[0][..], &[1, 5]]);
    }

    #[test]
    fn a_list_gives_one_unit_a_cpu_and_refuses_cpus_not_allowed() {
        let dir = sys(4, 1);
        let units = units(&Affinity::List(vec![1, 3]), &[0, 1, 2, 3], dir.path()).unwrap();
        assert_eq!(
            units[0],
            Unit {
                cpus: vec![1],
                class: 512
            }
        );
        let e = super::units(&Affinity::List(vec![9]), &[0, 1], dir.path()).unwrap_err();
        assert_eq!(e, "--affinity: CPU 9 is not one this process may use (0-1)");
    }

    #[test]
    fn a_game_takes_units_of_one_class_while_one_has_room() {
        let unit = |cpu, class| Unit {
            cpus: vec![cpu],
            class,
        };
        let mut placement = Placement::new(vec![
            unit(0, 1024),
            unit(1, 1024),
            unit(2, 512),
            unit(3, 512),
            unit(4, 512),
        ]);
        assert_eq!(placement.take(2), [0, 1], "the fast class first");
        assert_eq!(placement.take(2), [2, 3]);
        // One unit left in the slow class, none in the fast one: a game of two spreads.
        placement.give(&[0]);
        assert_eq!(placement.take(2), [0, 4]);
        placement.give(&[2, 3]);
        assert_eq!(
            placement.take(1),
            [2],
            "the lowest free unit, to find kept engines again"
        );
        assert_eq!(placement.cpus(&[4, 0]), [0, 4]);
    }

    #[test]
    fn a_unit_far_slower_than_its_class_is_picked_out() {
        let unit = |cpu, class| Unit {
            cpus: vec![cpu],
            class,
        };
        let units = [
            unit(0, 1024),
            unit(1, 1024),
            unit(2, 1024),
            unit(3, 512),
            unit(4, 512),
        ];
        // The efficiency cores are slower but alike; unit 1 is slow for its class.
        let speeds = [1000.0, 700.0, 1010.0, 500.0, 490.0];
        assert_eq!(slow(&units, &speeds), [1]);
    }

    #[test]
    fn a_pinned_thread_runs_where_it_was_pinned_and_gets_its_cpus_back() {
        let before = allowed();
        assert!(!before.is_empty());
        let first = before[0];
        std::thread::spawn(move || {
            let all = allowed();
            {
                let _pinned = Pinned::new(&[first]);
                assert_eq!(allowed(), [first]);
                // A process it starts inherits the mask.
                let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
                let line = status
                    .lines()
                    .find(|l| l.starts_with("Cpus_allowed_list"))
                    .unwrap();
                assert_eq!(
                    line.split_whitespace().last(),
                    Some(first.to_string().as_str())
                );
                let out = std::process::Command::new("sh")
                    .args(["-c", "grep Cpus_allowed_list /proc/self/status"])
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                assert!(text.trim().ends_with(&format!("\t{first}")), "{text}");
            }
            assert_eq!(allowed(), all);
        })
        .join()
        .unwrap();
    }
}
