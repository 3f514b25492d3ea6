//! The worker's GPUs: found as it starts (`nvidia-smi`, else the render nodes of
//! `/dev/dri`) or given with `tourney worker --gpus`, reported as it registers, and given
//! out to games: a game of a tournament that requires `gpus = N` takes N devices of its
//! own (each device serves at most `--games-per-gpu` games at once, one by default), and
//! its outside engines see only them, through `CUDA_VISIBLE_DEVICES`,
//! `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`, `ZE_AFFINITY_MASK` (the devices'
//! indices) and `TOURNEY_GPU_DEVICES` (their device names: an index, or a render node's
//! path).

use std::path::Path;
use std::process::Command;

use tourney_model::gpu::{GpuFacts, GpuNeed, MAX_GPU_TEXT, MAX_GPUS};

/// One GPU of this worker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Gpu {
    /// Its index, as `CUDA_VISIBLE_DEVICES` names it.
    pub index: u32,
    /// Its device: the index again (`nvidia-smi`, `--gpus`), or a render node's path
    /// (`/dev/dri/renderD128`).
    pub device: String,
    /// What the coordinator is told of it.
    pub facts: GpuFacts,
}

/// The environment variables that show a game's engines its devices (and only them).
pub fn environment(gpus: &[&Gpu]) -> Vec<(String, String)> {
    let join = |f: &dyn Fn(&Gpu) -> String| gpus.iter().map(|g| f(g)).collect::<Vec<_>>().join(",");
    let indices = join(&|g| g.index.to_string());
    let devices = join(&|g| g.device.clone());
    [
        "CUDA_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "ZE_AFFINITY_MASK",
    ]
    .into_iter()
    .map(|name| (name.to_string(), indices.clone()))
    .chain([("TOURNEY_GPU_DEVICES".to_string(), devices)])
    .collect()
}

/// Parses `--gpus`: `auto` (found: see [`detect`]), `none` or `0` (none), a count (`2`:
/// devices 0 and 1, model unknown), or a list of `INDEX[:MODEL[:MEMORY_MIB]]` separated
/// by commas (`0:RTX 4090:24576,1:RTX 4090:24576`). `None`: find them.
///
/// # Errors
/// What is wrong with it.
pub fn parse(spec: &str) -> Result<Option<Vec<Gpu>>, String> {
    let spec = spec.trim();
    match spec {
        "auto" => return Ok(None),
        "" | "none" | "0" => return Ok(Some(Vec::new())),
        _ => {}
    }
    if let Ok(count) = spec.parse::<usize>() {
        if count > MAX_GPUS {
            return Err(format!("at most {MAX_GPUS} GPUs"));
        }
        return Ok(Some(
            (0..count as u32).map(|i| by_index(i, "", 0)).collect(),
        ));
    }
    let gpus = (spec.split(','))
        .map(|entry| {
            let mut parts = entry.splitn(3, ':');
            let index = parts.next().unwrap_or_default().trim();
            let index = index.parse::<u32>().map_err(|_| {
                format!("'{entry}': INDEX[:MODEL[:MEMORY_MIB]], the index a number")
            })?;
            let model = parts.next().unwrap_or_default().trim();
            if model.chars().count() > MAX_GPU_TEXT {
                return Err(format!(
                    "'{entry}': a model of at most {MAX_GPU_TEXT} characters"
                ));
            }
            let memory_mb = match parts.next().map(str::trim) {
                None | Some("") => 0,
                Some(mb) => mb
                    .parse()
                    .map_err(|_| format!("'{entry}': the memory is MiB, a number"))?,
            };
            Ok(by_index(index, model, memory_mb))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if gpus.len() > MAX_GPUS {
        return Err(format!("at most {MAX_GPUS} GPUs"));
    }
    let mut indices: Vec<u32> = gpus.iter().map(|g| g.index).collect();
    indices.sort_unstable();
    indices.dedup();
    if indices.len() < gpus.len() {
        return Err("a GPU index given twice".into());
    }
    Ok(Some(gpus))
}

fn by_index(index: u32, model: &str, memory_mb: u64) -> Gpu {
    let vendor = if model.to_ascii_lowercase().contains("nvidia") || model.contains("RTX") {
        "nvidia"
    } else {
        ""
    };
    Gpu {
        index,
        device: index.to_string(),
        facts: GpuFacts {
            vendor: vendor.into(),
            model: model.into(),
            memory_mb,
        },
    }
}

/// The GPUs of this machine: `nvidia-smi`'s if it runs, else the render nodes of
/// `/dev/dri` (see [`render_nodes`]); at most [`MAX_GPUS`].
pub fn detect() -> Vec<Gpu> {
    let smi = Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,name,memory.total",
            "--format=csv,noheader,nounits",
        ])
        .stderr(std::process::Stdio::null())
        .output();
    if let Ok(out) = smi
        && out.status.success()
    {
        let gpus = nvidia_smi(&String::from_utf8_lossy(&out.stdout));
        if !gpus.is_empty() {
            return gpus;
        }
    }
    render_nodes(Path::new("/dev/dri"), Path::new("/sys/class/drm"))
}

/// The GPUs of `nvidia-smi --query-gpu=index,name,memory.total
/// --format=csv,noheader,nounits`'s lines (`0, NVIDIA GeForce RTX 4090, 24564`).
pub fn nvidia_smi(text: &str) -> Vec<Gpu> {
    (text.lines())
        .filter_map(|line| {
            let mut fields = line.split(',').map(str::trim);
            let index = fields.next()?.parse().ok()?;
            let model = fields.next()?;
            let memory_mb = fields.next().and_then(|m| m.parse().ok()).unwrap_or(0);
            Some(Gpu {
                index,
                device: index.to_string(),
                facts: GpuFacts {
                    vendor: "nvidia".into(),
                    model: model.into(),
                    memory_mb,
                },
            })
        })
        .take(MAX_GPUS)
        .collect()
}

/// The render nodes of `dev` (`renderD128`, ...) in order, as GPUs indexed from 0, each
/// with its vendor (and an AMD one's memory) from `sys` (`/sys/class/drm`) where it says.
pub fn render_nodes(dev: &Path, sys: &Path) -> Vec<Gpu> {
    let Ok(entries) = std::fs::read_dir(dev) else {
        return Vec::new();
    };
    let mut nodes: Vec<(u32, String)> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let number = name.strip_prefix("renderD")?.parse().ok()?;
            Some((number, name))
        })
        .collect();
    nodes.sort_unstable();
    (nodes.into_iter().take(MAX_GPUS).enumerate())
        .map(|(index, (_, name))| {
            let read = |file: &str| {
                std::fs::read_to_string(sys.join(&name).join("device").join(file))
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            let vendor = match read("vendor").as_str() {
                "0x10de" => "nvidia",
                "0x1002" => "amd",
                "0x8086" => "intel",
                _ => "",
            };
            let memory_mb = read("mem_info_vram_total").parse::<u64>().unwrap_or(0) >> 20;
            Gpu {
                index: index as u32,
                device: dev.join(&name).display().to_string(),
                facts: GpuFacts {
                    vendor: vendor.into(),
                    model: String::new(),
                    memory_mb,
                },
            }
        })
        .collect()
}

/// Which GPUs are free: each serves at most `per_gpu` games at once.
#[derive(Debug)]
pub(crate) struct GpuSlots {
    gpus: Vec<Gpu>,
    /// Games each GPU may still take.
    free: Vec<u32>,
    per_gpu: u32,
}

impl GpuSlots {
    /// `gpus`, each serving at most `per_gpu` games (at least 1).
    pub(crate) fn new(gpus: Vec<Gpu>, per_gpu: u32) -> Self {
        let per_gpu = per_gpu.max(1);
        GpuSlots {
            free: vec![per_gpu; gpus.len()],
            gpus,
            per_gpu,
        }
    }

    /// The GPUs `need` may take, and of those the most that could ever be given to one
    /// game (a need of more is cut to it: the coordinator offers a pair only to workers
    /// with enough, so this is a worker whose GPUs changed).
    fn wanted(&self, need: &GpuNeed) -> usize {
        (need.count as usize).min(self.gpus.iter().filter(|g| need.fits(&g.facts)).count())
    }

    /// Games of `need` that could run at once.
    pub(crate) fn games(&self, need: &GpuNeed) -> usize {
        let fitting = self.gpus.iter().filter(|g| need.fits(&g.facts)).count();
        match self.wanted(need) {
            0 => usize::MAX,
            n => (fitting * self.per_gpu as usize / n).max(1),
        }
    }

    /// Takes free GPUs for one game of `need` (the least loaded first): their places, or
    /// `None` if not enough are free now.
    pub(crate) fn take(&mut self, need: &GpuNeed) -> Option<Vec<usize>> {
        let wanted = self.wanted(need);
        let mut free: Vec<usize> = (0..self.gpus.len())
            .filter(|&i| self.free[i] > 0 && need.fits(&self.gpus[i].facts))
            .collect();
        if free.len() < wanted {
            return None;
        }
        free.sort_by_key(|&i| std::cmp::Reverse(self.free[i]));
        free.truncate(wanted);
        free.sort_unstable();
        for &i in &free {
            self.free[i] -= 1;
        }
        Some(free)
    }

    /// Gives back what [`take`](Self::take) took.
    pub(crate) fn give(&mut self, taken: &[usize]) {
        for &i in taken {
            if let Some(f) = self.free.get_mut(i) {
                *f = (*f + 1).min(self.per_gpu);
            }
        }
    }

    /// The environment that shows a game the GPUs at `taken` (empty for none).
    pub(crate) fn environment(&self, taken: &[usize]) -> Vec<(String, String)> {
        if taken.is_empty() {
            return Vec::new();
        }
        environment(&taken.iter().map(|&i| &self.gpus[i]).collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_are_given_with_a_spec_or_found_by_nvidia_smi_or_in_dev_dri() {
        assert_eq!(parse("auto"), Ok(None));
        assert_eq!(parse("0"), Ok(Some(Vec::new())));
        assert_eq!(parse("none"), Ok(Some(Vec::new())));
        let two = parse("2").unwrap().unwrap();
        assert_eq!(
            (two.len(), two[1].index, two[1].device.as_str()),
            (2, 1, "1")
        );
        let listed = parse("0:NVIDIA GeForce RTX 4090:24564, 3:RTX 3060")
            .unwrap()
            .unwrap();
        assert_eq!(listed[0].facts.model, "NVIDIA GeForce RTX 4090");
        assert_eq!(listed[0].facts.memory_mb, 24564);
        assert_eq!(listed[0].facts.vendor, "nvidia");
        assert_eq!((listed[1].index, listed[1].facts.memory_mb), (3, 0));
        assert!(parse("x:RTX").unwrap_err().contains("index"));
        assert!(parse("0:a:lots").unwrap_err().contains("MiB"));
        assert!(parse("0,0").unwrap_err().contains("twice"));
        assert!(parse("99").is_err());
        let smi = nvidia_smi(
            "0, NVIDIA GeForce RTX 4090, 24564\n1, NVIDIA A100-SXM4-80GB, 81920\nNo devices\n",
        );
        assert_eq!(smi.len(), 2);
        assert_eq!(smi[1].facts.model, "NVIDIA A100-SXM4-80GB");
        assert_eq!((smi[1].index, smi[1].facts.memory_mb), (1, 81920));
        // A directory of device files, as /dev/dri, with /sys/class/drm's vendor.
        let root = std::env::temp_dir().join(format!("tourney-gpus-{}", std::process::id()));
        let (dev, sys) = (root.join("dri"), root.join("drm"));
        std::fs::create_dir_all(&dev).unwrap();
        for name in ["card0", "renderD129", "renderD128", "by-path"] {
            std::fs::write(dev.join(name), "").unwrap();
        }
        std::fs::create_dir_all(sys.join("renderD128/device")).unwrap();
        std::fs::write(sys.join("renderD128/device/vendor"), "0x1002\n").unwrap();
        std::fs::write(
            sys.join("renderD128/device/mem_info_vram_total"),
            format!("{}\n", 16u64 << 30),
        )
        .unwrap();
        let nodes = render_nodes(&dev, &sys);
        assert_eq!(nodes.len(), 2, "render nodes only");
        assert_eq!(
            nodes[0].device,
            dev.join("renderD128").display().to_string()
        );
        assert_eq!((nodes[0].index, nodes[0].facts.vendor.as_str()), (0, "amd"));
        assert_eq!(nodes[0].facts.memory_mb, 16384);
        assert_eq!((nodes[1].index, nodes[1].facts.vendor.as_str()), (1, ""));
        assert!(render_nodes(&root.join("none"), &sys).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn each_game_takes_gpus_of_its_own_one_game_a_gpu_unless_told_more() {
        let gpus = parse("0:RTX 4090:24564,1:RTX 4090:24564,2:RTX 3060:12288")
            .unwrap()
            .unwrap();
        let one = GpuNeed {
            count: 1,
            ..GpuNeed::default()
        };
        let mut slots = GpuSlots::new(gpus.clone(), 1);
        assert_eq!(slots.games(&one), 3);
        let taken: Vec<Vec<usize>> = std::iter::from_fn(|| slots.take(&one)).collect();
        assert_eq!(taken, [vec![0], vec![1], vec![2]], "one game a GPU");
        slots.give(&taken[1]);
        assert_eq!(slots.take(&one), Some(vec![1]));
        assert_eq!(
            slots.environment(&[1]),
            [
                ("CUDA_VISIBLE_DEVICES", "1"),
                ("HIP_VISIBLE_DEVICES", "1"),
                ("ROCR_VISIBLE_DEVICES", "1"),
                ("ZE_AFFINITY_MASK", "1"),
                ("TOURNEY_GPU_DEVICES", "1"),
            ]
            .map(|(n, v)| (n.to_string(), v.to_string()))
        );
        assert!(slots.environment(&[]).is_empty());
        // Two 4090s a game: one game at once; a GPU-less game needs none.
        let big = GpuNeed {
            count: 2,
            model: Some("4090".into()),
            memory_mb: None,
        };
        let mut slots = GpuSlots::new(gpus.clone(), 1);
        assert_eq!(slots.games(&big), 1);
        assert_eq!(slots.take(&big), Some(vec![0, 1]));
        assert_eq!(slots.take(&big), None);
        assert_eq!(slots.take(&GpuNeed::default()), Some(Vec::new()));
        assert_eq!(slots.games(&GpuNeed::default()), usize::MAX);
        // Two games a GPU when told so, spread over the GPUs first.
        let mut shared = GpuSlots::new(gpus, 2);
        let taken: Vec<Vec<usize>> = std::iter::from_fn(|| shared.take(&one)).collect();
        assert_eq!(taken.len(), 6);
        assert_eq!(taken[..3], [vec![0], vec![1], vec![2]]);
    }
}
