//! GPUs as a resource, with fake inventories (`tourney worker --gpus`): a test that
//! requires a GPU is played only by workers with one, and each game's engines see the
//! device the worker gave that game in their environment.

mod common;

use std::os::unix::fs::PermissionsExt;

use common::*;

use tourney_tests::process::Reaped;
use tourney_tests::tournaments::MatchFile;

/// An outside engine that writes its GPU variables to stderr as it starts (the games keep
/// it: `engine_logs = "all"`), then serves `tourney engine random`.
fn gpu_engine(dir: &std::path::Path) -> String {
    let engine = dir.join("gpu-engine.sh");
    std::fs::write(
        &engine,
        format!(
            "#!/bin/sh\necho \"CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\" >&2\n\
             echo \"TOURNEY_GPU_DEVICES=$TOURNEY_GPU_DEVICES\" >&2\n\
             exec {} engine random\n",
            env!("CARGO_BIN_EXE_tourney")
        ),
    )
    .unwrap();
    std::fs::set_permissions(&engine, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("cmd:{}", engine.display())
}

/// Submits a 3-pair match of the GPU engine against a built-in player, with `requires`.
fn submit_gpu_test(port: u16, dir: &std::path::Path, name: &str, requires: &str) -> String {
    let outside = gpu_engine(dir);
    let toml = MatchFile {
        name,
        pairs: 3,
        limits: "{ movetime = 5 }",
        adjudication: Some("{ max_plies = 40 }"),
        engines: [("outside", &outside), ("builtin", "random")],
        ..Default::default()
    }
    .toml();
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!("engine_logs = \"all\"\n{toml}\n[requires]\n{requires}\n"),
    )
    .unwrap();
    submit(port, &file)
}

/// Each game's worker, and the lines its outside engine wrote starting with `prefix`.
fn games_of(port: u16, id: &str, prefix: &str) -> Vec<(String, Vec<String>)> {
    let games = admin(port, &["export", id]);
    (games.lines())
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|g| {
            let worker = g["worker"].as_str().unwrap_or_default().to_string();
            let sides = [g["white_stderr"].clone(), g["black_stderr"].clone()];
            let lines = (sides.into_iter())
                .flat_map(|s| s.as_array().cloned().unwrap_or_default())
                .filter_map(|l| l.as_str().map(str::to_string))
                .filter(|l| l.starts_with(prefix))
                .collect();
            (worker, lines)
        })
        .collect()
}

/// Every line of `games`.
fn lines(games: &[(String, Vec<String>)]) -> Vec<String> {
    games.iter().flat_map(|(_, l)| l.iter().cloned()).collect()
}

fn quiet(mut command: std::process::Command) -> Reaped {
    Reaped(
        command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    )
}

#[test]
fn a_test_requiring_a_gpu_is_played_only_by_the_worker_with_one_which_shows_its_engines_it() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, dir.path());
    let _coordinator = Reaped(coordinator);
    let id = submit_gpu_test(port, dir.path(), "nn", "gpus = 1");
    let mut plain = worker_command(port, "plain");
    plain.args(["--gpus", "none", "--allow-root-engines"]);
    let _plain = quiet(plain);
    let waiting = wait_for(port, &id, "the GPU-less worker to be judged", |s| {
        s["unrunnable"].is_string()
    });
    assert_eq!(waiting["unrunnable"], "needs 1 GPU (has 0)");
    assert_eq!(waiting["pairs_done"], 0);

    // A worker with one (fake) GPU, device 1, plays every pair; the other stays idle.
    let mut gpu = worker_command(port, "gpu");
    gpu.args(["--gpus", "1:Fake GPU:8192", "--allow-root-engines"]);
    let _gpu = quiet(gpu);
    let done = wait_for(port, &id, "the GPU test to finish", |s| {
        s["state"] == "finished"
    });
    assert_eq!(done["pairs_done"], 3);
    let games = games_of(port, &id, "CUDA_VISIBLE_DEVICES=");
    assert_eq!(games.len(), 6);
    for (worker, _) in &games {
        assert!(worker.starts_with("gpu"), "played by {worker}");
    }
    // An engine process serves the games of later pairs too: it speaks as it starts.
    let seen = lines(&games);
    assert!(!seen.is_empty(), "no engine said its GPU");
    assert!(
        seen.iter().all(|l| l == "CUDA_VISIBLE_DEVICES=1"),
        "{seen:?}"
    );
    // The machines list shows each host's GPUs.
    let machines = admin(port, &["machines"]);
    let line = |host: &str| {
        (machines.lines())
            .find(|l| l.starts_with(host))
            .unwrap_or_else(|| panic!("no {host} in {machines}"))
            .to_string()
    };
    assert!(
        line("gpu ").contains("GPUs: 1 × Fake GPU 8192 MiB"),
        "{machines}"
    );
    assert!(!line("plain ").contains("GPUs"), "{machines}");
    let json = admin(port, &["machines", "--json"]);
    assert!(
        json.contains(r#""gpus":[{"memory_mb":8192,"model":"Fake GPU","vendor":""}]"#),
        "{json}"
    );
    let devices = games_of(port, &id, "TOURNEY_GPU_DEVICES=");
    assert!(
        (devices.iter().flat_map(|(_, l)| l)).all(|l| l == "TOURNEY_GPU_DEVICES=1"),
        "{devices:?}"
    );
}

#[test]
fn each_game_gets_a_gpu_of_the_model_it_requires_and_a_gpu_less_test_none() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, dir.path());
    let _coordinator = Reaped(coordinator);
    let mut worker = worker_command(port, "two-gpus");
    worker.args([
        "--gpus",
        "0:Fake RTX 3060:12288,1:Fake RTX 4090:24576",
        "--allow-root-engines",
    ]);
    let _worker = quiet(worker);
    let id = submit_gpu_test(port, dir.path(), "big-net", "gpu_model = \"4090\"");
    wait_for(port, &id, "the 4090 test to finish", |s| {
        s["state"] == "finished"
    });
    let seen = lines(&games_of(port, &id, "CUDA_VISIBLE_DEVICES="));
    assert!(!seen.is_empty(), "no engine said its GPU");
    assert!(
        seen.iter().all(|l| l == "CUDA_VISIBLE_DEVICES=1"),
        "the 4090 only: {seen:?}"
    );
    // A test that requires none: its engines are given no device at all.
    let outside = gpu_engine(dir.path());
    let toml = MatchFile {
        name: "cpu",
        pairs: 1,
        limits: "{ movetime = 5 }",
        adjudication: Some("{ max_plies = 20 }"),
        engines: [("outside", &outside), ("builtin", "random")],
        ..Default::default()
    }
    .toml();
    let file = dir.path().join("cpu.toml");
    std::fs::write(&file, format!("engine_logs = \"all\"\n{toml}")).unwrap();
    let cpu = submit(port, &file);
    wait_for(port, &cpu, "the CPU test to finish", |s| {
        s["state"] == "finished"
    });
    let seen = lines(&games_of(port, &cpu, "CUDA_VISIBLE_DEVICES="));
    assert!(!seen.is_empty(), "no engine said its GPU");
    assert!(
        seen.iter().all(|l| l == "CUDA_VISIBLE_DEVICES="),
        "no device: {seen:?}"
    );
}

#[test]
fn a_malformed_gpu_list_is_refused_as_the_worker_starts() {
    let out = tourney()
        .args([
            "worker",
            "--gpus",
            "0:a,0:b",
            "--coordinator",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--gpus: a GPU index given twice"), "{err}");
}
