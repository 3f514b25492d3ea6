//! GPUs as a resource: what a worker says of its GPUs, what a tournament's games need of
//! them (`[requires] gpus`, `gpu_model`, `gpu_memory_mb`), and which GPUs meet that need.

use serde::{Deserialize, Serialize};

/// The most GPUs a worker may report (more are dropped), and a game may need.
pub const MAX_GPUS: usize = 16;

/// The longest GPU vendor or model text kept.
pub const MAX_GPU_TEXT: usize = 64;

/// One GPU as a worker reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GpuFacts {
    /// Its vendor (`nvidia`, `amd`, `intel`; empty: unknown).
    pub vendor: String,
    /// Its model (`NVIDIA GeForce RTX 4090`; empty: unknown).
    pub model: String,
    /// Its memory, MiB (0: unknown).
    pub memory_mb: u64,
}

/// `text` cut to [`MAX_GPU_TEXT`] printable characters.
fn cut(text: &str) -> String {
    (text.chars())
        .filter(|c| !c.is_control())
        .take(MAX_GPU_TEXT)
        .collect::<String>()
        .trim()
        .to_string()
}

impl GpuFacts {
    /// The facts with their texts cut to [`MAX_GPU_TEXT`] printable characters (the
    /// vendor lowercased).
    pub fn bounded(&self) -> GpuFacts {
        GpuFacts {
            vendor: cut(&self.vendor).to_ascii_lowercase(),
            model: cut(&self.model),
            memory_mb: self.memory_mb,
        }
    }
}

/// What a worker claims of its GPUs, bounded: at most [`MAX_GPUS`], each text cut.
pub fn bounded(gpus: impl IntoIterator<Item = GpuFacts>) -> Vec<GpuFacts> {
    gpus.into_iter()
        .take(MAX_GPUS)
        .map(|g| g.bounded())
        .collect()
}

/// Whether `gpu` is of a model whose name contains `model` (ASCII case ignored) and has
/// at least `memory_mb`. Allocates nothing.
pub fn fits(gpu: &GpuFacts, model: Option<&str>, memory_mb: Option<u64>) -> bool {
    let contains = |text: &[u8], part: &[u8]| {
        part.is_empty()
            || text
                .windows(part.len())
                .any(|w| w.eq_ignore_ascii_case(part))
    };
    model.is_none_or(|m| contains(gpu.model.as_bytes(), m.as_bytes()))
        && memory_mb.is_none_or(|mb| gpu.memory_mb >= mb)
}

/// What one game needs of the worker's GPUs: `count` of them, each of a model whose name
/// contains `model` (any case) and with at least `memory_mb`. A count of 0 needs none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct GpuNeed {
    /// The GPUs a game takes.
    pub count: u32,
    /// Part of their model's name (`4090`, `A100`), any case.
    pub model: Option<String>,
    /// Their least memory, MiB.
    pub memory_mb: Option<u64>,
}

impl GpuNeed {
    /// Whether `gpu` is one this need can take.
    pub fn fits(&self, gpu: &GpuFacts) -> bool {
        fits(gpu, self.model.as_deref(), self.memory_mb)
    }

    /// How many of `gpus` it can take.
    pub fn fitting(&self, gpus: &[GpuFacts]) -> u32 {
        gpus.iter().filter(|g| self.fits(g)).count() as u32
    }
}

impl std::fmt::Display for GpuNeed {
    /// `1 GPU`, `2 GPUs 4090 of 24576 MiB`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = if self.count == 1 { "" } else { "s" };
        write!(f, "{} GPU{s}", self.count)?;
        if let Some(model) = &self.model {
            write!(f, " {model}")?;
        }
        if let Some(mb) = self.memory_mb {
            write!(f, " of {mb} MiB")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(model: &str, memory_mb: u64) -> GpuFacts {
        GpuFacts {
            vendor: "nvidia".into(),
            model: model.into(),
            memory_mb,
        }
    }

    #[test]
    fn a_need_takes_gpus_of_its_model_and_memory_only() {
        let gpus = [
            gpu("NVIDIA GeForce RTX 4090", 24564),
            gpu("NVIDIA A100-SXM4-80GB", 81920),
            gpu("", 0),
        ];
        let any = GpuNeed {
            count: 1,
            ..GpuNeed::default()
        };
        assert_eq!(any.fitting(&gpus), 3);
        let big = GpuNeed {
            count: 2,
            model: None,
            memory_mb: Some(20000),
        };
        assert_eq!(big.fitting(&gpus), 2);
        let a100 = GpuNeed {
            count: 1,
            model: Some("a100".into()),
            memory_mb: None,
        };
        assert_eq!(a100.fitting(&gpus), 1, "the model is matched in any case");
        assert_eq!(big.to_string(), "2 GPUs of 20000 MiB");
        assert_eq!(a100.to_string(), "1 GPU a100");
    }

    #[test]
    fn what_a_worker_claims_of_its_gpus_is_bounded() {
        let claim = (0..100).map(|i| GpuFacts {
            vendor: "NVIDIA\n".into(),
            model: format!("{}{i}", "x".repeat(200)),
            memory_mb: i,
        });
        let kept = bounded(claim);
        assert_eq!(kept.len(), MAX_GPUS);
        assert!(kept.iter().all(|g| g.model.chars().count() == MAX_GPU_TEXT));
        assert_eq!(kept[0].vendor, "nvidia");
    }
}
