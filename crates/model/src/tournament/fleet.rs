//! What a tournament asks of the fleet: the threads of its engines, the cores of its
//! games, and why a worker cannot take its pairs.

use std::collections::BTreeSet;

use super::TournamentConfig;
use crate::fleet::{WorkerProfile, cores_of_game};

impl TournamentConfig {
    /// The threads engine `index` is given (`None`: a built-in player, which plays on
    /// the game thread).
    pub fn threads_of(&self, index: usize) -> Option<u32> {
        let engine = &self.engines[index];
        (engine.player.is_none()).then(|| engine.threads.or(self.threads).unwrap_or(1))
    }

    /// The most cores one of its games takes ([`cores_of_game`]: its costliest engine's).
    /// Called on every lease: it allocates nothing.
    pub fn cores_per_game(&self) -> u32 {
        (0..self.engines.len())
            .map(|i| cores_of_game([self.threads_of(i), None]))
            .max()
            .unwrap_or(1)
    }

    /// Why `worker` cannot take this tournament's pairs (`None`: it can). Called on every
    /// lease: it allocates nothing; its [`Unmet`] says it in a few words when shown.
    pub fn unmet_by<'a>(&'a self, worker: &'a WorkerProfile) -> Option<Unmet<'a>> {
        let r = &self.requires;
        let cores = self.cores_per_game().max(r.cores.unwrap_or(1));
        if worker.cores < cores {
            return Some(Unmet::Cores(cores, worker.cores));
        }
        if let Some(mb) = r.memory_mb
            && worker.memory_mb < mb
        {
            return Some(Unmet::Memory(mb, worker.memory_mb));
        }
        let missing =
            |want: &'a [String], have: &BTreeSet<String>| want.iter().find(|w| !have.contains(*w));
        if let Some(feature) = missing(&r.cpu_features, &worker.cpu_features) {
            return Some(Unmet::CpuFeature(feature));
        }
        if let Some(os) = &r.os
            && *os != worker.os
        {
            return Some(Unmet::Os(os, &worker.os));
        }
        if let Some(label) = missing(&r.labels, &worker.labels) {
            return Some(Unmet::Label(label));
        }
        if r.gpus.is_some() || r.gpu_model.is_some() || r.gpu_memory_mb.is_some() {
            let count = r.gpus.unwrap_or(1);
            let model = r.gpu_model.as_deref();
            let has = (worker.gpus.iter())
                .filter(|g| crate::gpu::fits(g, model, r.gpu_memory_mb))
                .count() as u32;
            if has < count {
                return Some(Unmet::Gpus {
                    count,
                    model,
                    memory_mb: r.gpu_memory_mb,
                    has,
                });
            }
        }
        if !worker.only.is_empty() && !self.labels.iter().any(|l| worker.only.contains(l)) {
            return Some(Unmet::OnlyOthers);
        }
        if worker.avoid_noisy && self.noisy {
            return Some(Unmet::Noisy);
        }
        None
    }
}

/// Why a worker cannot take a tournament's pairs ([`TournamentConfig::unmet_by`]); shown
/// in a few words ("needs 16 cores (has 8)").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unmet<'a> {
    /// Fewer cores than a game (or `[requires] cores`) takes: needed, had.
    Cores(u32, u32),
    /// Less memory than `[requires] memory_mb`: needed, had (MiB).
    Memory(u64, u64),
    /// A CPU feature `[requires]` names that the worker lacks.
    CpuFeature(&'a str),
    /// Another operating system than `[requires] os`: needed, run.
    Os(&'a str, &'a str),
    /// A label `[requires]` names that the worker lacks.
    Label(&'a str),
    /// Fewer GPUs (of the model and memory asked for) than a game takes.
    Gpus {
        /// GPUs a game takes.
        count: u32,
        /// Part of their model's name.
        model: Option<&'a str>,
        /// Their least memory, MiB.
        memory_mb: Option<u64>,
        /// Such GPUs the worker has.
        has: u32,
    },
    /// The worker takes only tests with other labels (`--only`).
    OnlyOthers,
    /// A noisy test, and the worker avoids them (`--avoid-noisy`).
    Noisy,
}

impl std::fmt::Display for Unmet<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmet::Cores(needs, has) => write!(f, "needs {needs} cores (has {has})"),
            Unmet::Memory(needs, has) => write!(f, "needs {needs} MiB (has {has})"),
            Unmet::CpuFeature(feature) => write!(f, "needs the CPU feature {feature}"),
            Unmet::Os(needs, runs) => write!(f, "needs {needs} (runs {runs})"),
            Unmet::Label(label) => write!(f, "needs a worker labelled {label}"),
            Unmet::Gpus {
                count,
                model,
                memory_mb,
                has,
            } => {
                let s = if *count == 1 { "" } else { "s" };
                write!(f, "needs {count} GPU{s}")?;
                if let Some(model) = model {
                    write!(f, " {model}")?;
                }
                if let Some(mb) = memory_mb {
                    write!(f, " of {mb} MiB")?;
                }
                write!(f, " (has {has})")
            }
            Unmet::OnlyOthers => f.write_str("the worker takes only other labels (--only)"),
            Unmet::Noisy => f.write_str("noisy, and the worker avoids noisy tests"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::WorkerProfile;

    fn config(extra: &str, engines: &str) -> TournamentConfig {
        let text = format!(
            "name = \"t\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 1\n\
             openings = {{ plies = 2 }}\nlimits = {{ nodes = 10 }}\n{extra}\n{engines}"
        );
        TournamentConfig::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    const THREE: &str = "[[engine]]\nname = \"a\"\ncommand = \"./a\"\nthreads = 4\n\
        [[engine]]\nname = \"b\"\ncommand = \"./b\"\n\
        [[engine]]\nname = \"c\"\nplayer = \"ab\"\n";

    fn worker(cores: u32) -> WorkerProfile {
        WorkerProfile {
            cores,
            memory_mb: 8192,
            cpu_features: ["sse2".to_string(), "avx2".to_string()].into(),
            os: "linux".into(),
            ..WorkerProfile::default()
        }
    }

    #[test]
    fn a_game_takes_the_cores_of_its_costliest_side_as_the_sides_take_turns() {
        assert_eq!(cores_of_game([Some(4), Some(4)]), 4);
        assert_eq!(
            cores_of_game([Some(1), Some(1)]),
            1,
            "two one-thread engines take turns on one core"
        );
        assert_eq!(
            cores_of_game([None, None]),
            1,
            "one game thread, one side at a time"
        );
        assert_eq!(cores_of_game([Some(8), None]), 8);
        assert_eq!(cores_of_game([Some(2), Some(6)]), 6);
        assert_eq!(cores_of_game([Some(0), None]), 1, "never no core");
        let c = config("threads = 2", THREE);
        assert_eq!(
            (c.threads_of(0), c.threads_of(1), c.threads_of(2)),
            (Some(4), Some(2), None),
            "an engine's own threads, else the tournament's; none for a built-in player"
        );
        assert_eq!(c.cores_per_game(), 4, "a (4) is the costliest");
        assert_eq!(config("", THREE).cores_per_game(), 4);
    }

    #[test]
    fn a_worker_meets_a_tournament_only_with_everything_it_requires() {
        let c = config(
            "labels = [\"smp\"]\nnoisy = true\n[requires]\ncores = 8\nmemory_mb = 4096\n\
             cpu_features = [\"avx2\"]\nos = \"linux\"\nlabels = [\"big-cache\"]",
            THREE,
        );
        let mut w = worker(8);
        assert_eq!(
            c.unmet_by(&w).unwrap().to_string(),
            "needs a worker labelled big-cache"
        );
        w.labels.insert("big-cache".into());
        assert_eq!(c.unmet_by(&w), None);
        assert_eq!(
            c.unmet_by(&worker(4)).unwrap().to_string(),
            "needs 8 cores (has 4)"
        );
        let mut small = w.clone();
        small.memory_mb = 2048;
        assert_eq!(
            c.unmet_by(&small).unwrap().to_string(),
            "needs 4096 MiB (has 2048)"
        );
        let mut old = w.clone();
        old.cpu_features.remove("avx2");
        assert_eq!(
            c.unmet_by(&old).unwrap().to_string(),
            "needs the CPU feature avx2"
        );
        let mut mac = w.clone();
        mac.os = "macos".into();
        assert_eq!(
            c.unmet_by(&mac).unwrap().to_string(),
            "needs linux (runs macos)"
        );
        let mut picky = w.clone();
        picky.only.insert("nightly".into());
        assert!(c.unmet_by(&picky).unwrap().to_string().contains("--only"));
        picky.only.insert("smp".into());
        assert_eq!(c.unmet_by(&picky), None, "one of its labels is enough");
        let mut quiet = w.clone();
        quiet.avoid_noisy = true;
        assert!(c.unmet_by(&quiet).unwrap().to_string().contains("noisy"));
        // The cores a game takes count even without [requires].
        assert_eq!(
            config("", THREE).unmet_by(&worker(3)).unwrap().to_string(),
            "needs 4 cores (has 3)"
        );
    }

    #[test]
    fn a_gpu_test_is_taken_only_by_workers_with_enough_gpus_of_its_kind() {
        use crate::gpu::GpuFacts;
        let gpu = |model: &str, memory_mb| GpuFacts {
            vendor: "nvidia".into(),
            model: model.into(),
            memory_mb,
        };
        let c = config("[requires]\ngpus = 1", THREE);
        assert_eq!(
            c.unmet_by(&worker(8)).unwrap().to_string(),
            "needs 1 GPU (has 0)"
        );
        let mut w = worker(8);
        w.gpus = vec![gpu("NVIDIA GeForce RTX 4090", 24564)];
        assert_eq!(c.unmet_by(&w), None);
        assert_eq!(c.requires.gpu_need().count, 1);
        let two = config(
            "[requires]\ngpus = 2\ngpu_model = \"4090\"\ngpu_memory_mb = 20000",
            THREE,
        );
        assert_eq!(
            two.unmet_by(&w).unwrap().to_string(),
            "needs 2 GPUs 4090 of 20000 MiB (has 1)"
        );
        w.gpus.push(gpu("NVIDIA GeForce RTX 3060", 12288));
        assert!(two.unmet_by(&w).is_some(), "the 3060 is not a 4090");
        w.gpus.push(gpu("nvidia geforce rtx 4090", 24564));
        assert_eq!(two.unmet_by(&w), None, "the model in any case");
        // A model alone asks for one GPU a game; no [requires] asks for none.
        let model = config("[requires]\ngpu_model = \"A100\"", THREE);
        assert_eq!(model.requires.gpu_need().count, 1);
        assert!(model.unmet_by(&w).unwrap().to_string().contains("A100"));
        assert_eq!(config("", THREE).requires.gpu_need().count, 0);
    }

    #[test]
    fn bad_requirements_threads_and_labels_are_named_in_the_file() {
        let bad = |extra: &str, engines: &str| {
            let text = format!(
                "name = \"t\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 1\n\
                 openings = {{ plies = 2 }}\nlimits = {{ nodes = 10 }}\n{extra}\n{engines}"
            );
            TournamentConfig::parse(&text, "t.toml")
                .unwrap_err()
                .to_string()
        };
        let e = bad("[requires]\ncores = 0", THREE);
        assert!(
            e.contains("requires.cores") && e.contains("1 or more"),
            "{e}"
        );
        let e = bad("[requires]\ncpu_features = [\"AVX2\"]", THREE);
        assert!(
            e.contains("requires.cpu_features") && e.contains("'AVX2'"),
            "{e}"
        );
        let e = bad("labels = [\"a b\"]", THREE);
        assert!(e.contains("labels") && e.contains("'a b'"), "{e}");
        let e = bad("threads = 0", THREE);
        assert!(e.contains("threads") && e.contains("1 to 1024"), "{e}");
        let built_in = "[[engine]]\nname = \"a\"\nplayer = \"ab\"\nthreads = 2\n\
            [[engine]]\nname = \"b\"\nplayer = \"ab\"\n";
        let e = bad("", built_in);
        assert!(
            e.contains("engine[0].threads") && e.contains("one thread"),
            "{e}"
        );
        let e = bad("[requires]\ngpu = 1", THREE);
        assert!(e.contains("gpu"), "{e}");
        let e = bad("[requires]\ngpus = 0", THREE);
        assert!(e.contains("requires.gpus") && e.contains("1 to 16"), "{e}");
        let e = bad("[requires]\ngpus = 1\ngpu_model = \"\"", THREE);
        assert!(e.contains("requires.gpu_model"), "{e}");
    }
}
