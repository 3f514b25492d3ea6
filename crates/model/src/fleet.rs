//! What a tournament needs of a worker and what a worker offers: the cores a game takes
//! (its engines' `threads`), a tournament's `[requires]` table, its labels and noisiness,
//! and a worker's [`WorkerProfile`] (its cores, memory, CPU features, operating system,
//! labels and opt-outs). `TournamentConfig::unmet_by` says why a worker cannot take a
//! tournament's pairs, in words the dashboard and `status` show.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::gpu::{GpuFacts, GpuNeed, MAX_GPU_TEXT, MAX_GPUS};

/// The most threads one engine may be given.
pub const MAX_THREADS: u32 = 1024;

/// The most labels (or CPU features) a tournament or a worker may name.
pub const MAX_LABELS: usize = 32;

/// The most CPU features a worker reports (a modern x86 CPU lists about 150 flags).
pub const MAX_CPU_FEATURES: usize = 512;

/// The longest label or CPU feature name.
pub const MAX_LABEL_CHARS: usize = 64;

/// The cores a game takes while it runs: its costliest side's. The sides take turns (no
/// engine ponders on the other's time), so an outside engine needs its `threads` while it
/// thinks and none while it waits, as cutechess, fastchess and fishtest count it; a
/// built-in player (`None`) thinks on the game thread, one core.
pub fn cores_of_game(threads: [Option<u32>; 2]) -> u32 {
    threads
        .iter()
        .map(|t| t.unwrap_or(1).max(1))
        .max()
        .unwrap_or(1)
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
/// gpus = 1                   # GPUs each game takes, one game a GPU
/// gpu_model = "4090"         # part of their model's name (any case)
/// gpu_memory_mb = 16384      # their least memory
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
    /// The GPUs each game takes (given to its outside engines as their own devices);
    /// 1 when only `gpu_model` or `gpu_memory_mb` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// Part of the name of the GPUs' model (`4090`, `A100`), any case.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// The least memory of each GPU, MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_memory_mb: Option<u64>,
}

impl Requirements {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        *self == Requirements::default()
    }

    /// What each game needs of the worker's GPUs (a count of 0: none).
    pub fn gpu_need(&self) -> GpuNeed {
        let any = self.gpu_model.is_some() || self.gpu_memory_mb.is_some();
        GpuNeed {
            count: self.gpus.unwrap_or(u32::from(any)),
            model: self.gpu_model.clone(),
            memory_mb: self.gpu_memory_mb,
        }
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
        if let Some(n) = self.gpus
            && !(1..=MAX_GPUS as u32).contains(&n)
        {
            return Some(("gpus", format!("must be 1 to {MAX_GPUS}")));
        }
        if self.gpu_memory_mb == Some(0) {
            return Some(("gpu_memory_mb", "must be 1 or more".into()));
        }
        if let Some(model) = &self.gpu_model
            && (model.trim().is_empty()
                || model.chars().count() > MAX_GPU_TEXT
                || model.chars().any(char::is_control))
        {
            return Some((
                "gpu_model",
                format!("1 to {MAX_GPU_TEXT} printable characters"),
            ));
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
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
    /// Its GPUs (at most [`MAX_GPUS`]).
    pub gpus: Vec<GpuFacts>,
}

/// What a worker says of itself as it registers, before it is checked.
#[derive(Debug, Clone, Default)]
pub struct ProfileClaim {
    /// The cores it offers (0: an older worker that does not say, and is not held to
    /// core requirements, as before they were checked).
    pub cores: u32,
    /// Its host's memory, MiB.
    pub memory_mb: u64,
    /// Its CPU's features as it reports them.
    pub cpu_features: Vec<String>,
    /// Its operating system as it reports it (`linux 6.1`).
    pub os: String,
    /// Its `--label`s.
    pub labels: Vec<String>,
    /// Its `--only` labels.
    pub only: Vec<String>,
    /// `--avoid-noisy`.
    pub avoid_noisy: bool,
    /// Its GPUs as it reports them.
    pub gpus: Vec<GpuFacts>,
}

impl ProfileClaim {
    /// The profile it claims, bounded: at most [`MAX_CPU_FEATURES`] well-formed features
    /// (others are dropped: a CPU's flags are not the worker's to choose) and cores capped
    /// at `max_cores` (a worker that does not say is given `max_cores`).
    ///
    /// # Errors
    /// A malformed label or `--only` label, or too many, named: the operator typed them.
    pub fn checked(self, max_cores: u32) -> Result<WorkerProfile, String> {
        check_labels(&self.labels, MAX_LABELS).map_err(|e| format!("labels: {e}"))?;
        check_labels(&self.only, MAX_LABELS).map_err(|e| format!("only: {e}"))?;
        let cores = match self.cores {
            0 => max_cores,
            n => n,
        };
        let os = (self.os.split_whitespace().next().unwrap_or_default())
            .to_ascii_lowercase()
            .chars()
            .take(MAX_LABEL_CHARS)
            .collect();
        Ok(WorkerProfile {
            cores: cores.min(max_cores.max(1)),
            memory_mb: self.memory_mb,
            cpu_features: (self.cpu_features.into_iter())
                .filter(|f| is_label(f))
                .take(MAX_CPU_FEATURES)
                .collect(),
            os,
            labels: self.labels.into_iter().collect(),
            only: self.only.into_iter().collect(),
            avoid_noisy: self.avoid_noisy,
            gpus: crate::gpu::bounded(self.gpus),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claimed_profile_is_bounded_and_its_bad_labels_named() {
        let claim = ProfileClaim {
            cores: 0,
            cpu_features: (0..2000)
                .map(|i| format!("f{i}"))
                .chain(["AVX2".into(), "x".repeat(65)])
                .collect(),
            os: "Linux 6.1.0".into(),
            labels: vec!["big-cache".into()],
            ..ProfileClaim::default()
        };
        let profile = claim.clone().checked(64).unwrap();
        assert_eq!(
            profile.cores, 64,
            "an older worker is not held to core requirements"
        );
        assert_eq!(profile.os, "linux");
        assert_eq!(profile.cpu_features.len(), MAX_CPU_FEATURES);
        assert!(profile.cpu_features.iter().all(|f| is_label(f)));
        let big = ProfileClaim {
            cores: 1 << 20,
            ..claim.clone()
        };
        assert_eq!(big.checked(64).unwrap().cores, 64);
        let bad = ProfileClaim {
            labels: vec!["Big Cache".into()],
            ..claim.clone()
        };
        let e = bad.checked(64).unwrap_err();
        assert!(e.starts_with("labels: 'Big Cache' is not a label"), "{e}");
        let many = ProfileClaim {
            only: (0..40).map(|i| format!("l{i}")).collect(),
            ..claim
        };
        assert_eq!(many.checked(64).unwrap_err(), "only: at most 32, found 40");
    }
}
