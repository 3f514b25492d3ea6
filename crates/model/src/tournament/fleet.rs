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

    /// The most cores one of its games takes ([`cores_of_game`] of its two costliest
    /// engines).
    pub fn cores_per_game(&self) -> u32 {
        let mut costs: Vec<(u32, Option<u32>)> = (0..self.engines.len())
            .map(|i| {
                let t = self.threads_of(i);
                (t.unwrap_or(1), t)
            })
            .collect();
        costs.sort_unstable_by_key(|c| std::cmp::Reverse(c.0));
        match costs.as_slice() {
            [a, b, ..] => cores_of_game([a.1, b.1]),
            [a] => cores_of_game([a.1, a.1]),
            [] => 1,
        }
    }

    /// Why `worker` cannot take this tournament's pairs (`None`: it can), in a few words
    /// ("needs 16 cores (has 8)").
    pub fn unmet_by(&self, worker: &WorkerProfile) -> Option<String> {
        let r = &self.requires;
        let cores = self.cores_per_game().max(r.cores.unwrap_or(1));
        if worker.cores < cores {
            return Some(format!("needs {cores} cores (has {})", worker.cores));
        }
        if let Some(mb) = r.memory_mb
            && worker.memory_mb < mb
        {
            return Some(format!("needs {mb} MiB (has {})", worker.memory_mb));
        }
        let missing = |want: &[String], have: &BTreeSet<String>| {
            want.iter().find(|w| !have.contains(*w)).cloned()
        };
        if let Some(feature) = missing(&r.cpu_features, &worker.cpu_features) {
            return Some(format!("needs the CPU feature {feature}"));
        }
        if let Some(os) = &r.os
            && *os != worker.os
        {
            return Some(format!("needs {os} (runs {})", worker.os));
        }
        if let Some(label) = missing(&r.labels, &worker.labels) {
            return Some(format!("needs a worker labelled {label}"));
        }
        if !worker.only.is_empty() && !self.labels.iter().any(|l| worker.only.contains(l)) {
            return Some("the worker takes only other labels (--only)".into());
        }
        if worker.avoid_noisy && self.noisy {
            return Some("noisy, and the worker avoids noisy tests".into());
        }
        None
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
    fn a_game_takes_its_outside_engines_threads_and_one_core_for_built_in_sides() {
        assert_eq!(cores_of_game([Some(4), Some(4)]), 8);
        assert_eq!(cores_of_game([Some(1), Some(1)]), 2);
        assert_eq!(
            cores_of_game([None, None]),
            1,
            "one game thread, one side at a time"
        );
        assert_eq!(cores_of_game([Some(8), None]), 9);
        let c = config("threads = 2", THREE);
        assert_eq!(
            (c.threads_of(0), c.threads_of(1), c.threads_of(2)),
            (Some(4), Some(2), None),
            "an engine's own threads, else the tournament's; none for a built-in player"
        );
        assert_eq!(c.cores_per_game(), 6, "a (4) against b (2)");
        assert_eq!(config("", THREE).cores_per_game(), 5);
    }

    #[test]
    fn a_worker_meets_a_tournament_only_with_everything_it_requires() {
        let c = config(
            "labels = [\"smp\"]\nnoisy = true\n[requires]\ncores = 8\nmemory_mb = 4096\n\
             cpu_features = [\"avx2\"]\nos = \"linux\"\nlabels = [\"big-cache\"]",
            THREE,
        );
        let mut w = worker(8);
        assert_eq!(c.unmet_by(&w).unwrap(), "needs a worker labelled big-cache");
        w.labels.insert("big-cache".into());
        assert_eq!(c.unmet_by(&w), None);
        assert_eq!(c.unmet_by(&worker(4)).unwrap(), "needs 8 cores (has 4)");
        let mut small = w.clone();
        small.memory_mb = 2048;
        assert_eq!(c.unmet_by(&small).unwrap(), "needs 4096 MiB (has 2048)");
        let mut old = w.clone();
        old.cpu_features.remove("avx2");
        assert_eq!(c.unmet_by(&old).unwrap(), "needs the CPU feature avx2");
        let mut mac = w.clone();
        mac.os = "macos".into();
        assert_eq!(c.unmet_by(&mac).unwrap(), "needs linux (runs macos)");
        let mut picky = w.clone();
        picky.only.insert("nightly".into());
        assert!(c.unmet_by(&picky).unwrap().contains("--only"));
        picky.only.insert("smp".into());
        assert_eq!(c.unmet_by(&picky), None, "one of its labels is enough");
        let mut quiet = w.clone();
        quiet.avoid_noisy = true;
        assert!(c.unmet_by(&quiet).unwrap().contains("noisy"));
        // The cores a game takes count even without [requires].
        assert_eq!(
            config("", THREE).unmet_by(&worker(4)).unwrap(),
            "needs 5 cores (has 4)"
        );
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
    }
}
