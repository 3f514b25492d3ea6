//! What a tournament needs of a worker and what a worker offers: the cores a game takes
//! (its engines' `threads`), a tournament's `[requires]` table, its labels and noisiness,
//! and a worker's [`WorkerProfile`] (its cores, memory, CPU features, operating system,
//! labels and opt-outs). `TournamentConfig::unmet_by` says why a worker cannot take a
//! tournament's pairs, in words the dashboard and `status` show.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The most threads one engine may be given.
pub const MAX_THREADS: u32 = 1024;

/// The most labels (or CPU features) a tournament or a worker may name.
pub const MAX_LABELS: usize = 32;

/// The most CPU features a worker reports (a modern x86 CPU lists about 150 flags).
pub const MAX_CPU_FEATURES: usize = 512;

/// The longest label or CPU feature name.
pub const MAX_LABEL_CHARS: usize = 64;

/// The cores a game takes while it runs: each outside engine its `threads`, and the game
/// thread (where built-in players think, one side at a time) one if any side is built in.
/// `threads[i]` is `None` for a built-in player.
pub fn cores_of_game(threads: [Option<u32>; 2]) -> u32 {
    let outside: u32 = threads.iter().flatten().map(|t| (*t).max(1)).sum();
    outside + u32::from(threads.iter().any(Option::is_none))
}

/// Whether `label` is a well-formed label or CPU feature: 1 to [`MAX_LABEL_CHARS`] of
/// lowercase letters, digits, `.`, `_` and `-`.
pub fn is_label(label: &str) -> bool {
    (1..=MAX_LABEL_CHARS).contains(&label.len())
        && label.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// Checks a list of labels: at most `most`, each well formed ([`is_label`]).
///
/// # Errors
/// What is wrong, naming the label.
pub fn check_labels(labels: &[String], most: usize) -> Result<(), String> {
    if labels.len() > most {
        return Err(format!("at most {most}, found {}", labels.len()));
    }
    match labels.iter().find(|l| !is_label(l)) {
        Some(bad) => Err(format!(
            "'{bad}' is not a label (1 to {MAX_LABEL_CHARS} of a-z, 0-9, '.', '_', '-')"
        )),
        None => Ok(()),
    }
}

/// A tournament's `[requires]` table: what a worker must have to take its pairs.
///
/// ```toml
/// [requires]
/// cores = 16                 # at least this many cores offered by the worker
/// memory_mb = 32768          # at least this much memory on its host
/// cpu_features = ["avx2"]    # /proc/cpuinfo flags it must have
/// os = "linux"
/// labels = ["big-cache"]     # given to the worker with --label
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Requirements {
    /// The fewest cores the worker offers (`tourney worker --cores`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
    /// The least memory of its host, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// CPU features it must have (as `/proc/cpuinfo` names them: `avx2`, `bmi2`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_features: Vec<String>,
    /// Its operating system (`linux`, `macos`, `windows`, as Rust names them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// Labels the worker must have been given (`tourney worker --label NAME`), all of
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
}

impl Requirements {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == Requirements::default()
    }

    /// What is wrong with it, as (key, message).
    pub(crate) fn problem(&self) -> Option<(&'static str, String)> {
        if self.cores == Some(0) {
            return Some(("cores", "must be 1 or more".into()));
        }
        if self.memory_mb == Some(0) {
            return Some(("memory_mb", "must be 1 or more".into()));
        }
        if let Err(e) = check_labels(&self.cpu_features, MAX_LABELS) {
            return Some(("cpu_features", e));
        }
        if let Err(e) = check_labels(&self.labels, MAX_LABELS) {
            return Some(("labels", e));
        }
        match &self.os {
            Some(os) if !is_label(os) => Some((
                "os",
                format!("'{os}' is not an operating system name (linux, macos, ...)"),
            )),
            _ => None,
        }
    }
}

/// What a worker offers and what it takes: sent as it registers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerProfile {
    /// The cores it offers its games (`--cores`; the cores it may use by default).
    pub cores: u32,
    /// Its host's memory, MiB (0: unknown).
    pub memory_mb: u64,
    /// Its CPU's features.
    pub cpu_features: BTreeSet<String>,
    /// Its operating system (the first word of what it reports: `linux`).
    pub os: String,
    /// The labels it was given (`--label`).
    pub labels: BTreeSet<String>,
    /// Tournament labels it restricts itself to (`--only`; empty: any tournament).
    pub only: BTreeSet<String>,
    /// Whether it turns down noisy tournaments (`--avoid-noisy`).
    pub avoid_noisy: bool,
}
