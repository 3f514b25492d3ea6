//! Engines once the program quits. A test process of its own: `end_engines` is for good.

use tourney_rules::Loa;
use tourney_runner::confine::{self, EnginePolicy};
use tourney_runner::{Contestant, EngineConfig, ExternalEngine};

/// Whether a process whose command line is `sleep <marker>` runs.
fn sleeping(marker: &str) -> bool {
    let needle = format!("sleep\0{marker}");
    std::fs::read_dir("/proc").unwrap().any(|e| {
        let path = e.unwrap().path().join("cmdline");
        std::fs::read(path).is_ok_and(|line| String::from_utf8_lossy(&line).contains(&needle))
    })
}

#[test]
fn no_engine_starts_once_the_engines_are_ended() {
    let marker = format!("97.{}", std::process::id());
    confine::end_engines();
    let mut config = EngineConfig::new(&format!("sleep {marker}"));
    config.policy = EnginePolicy {
        allow_root: true,
        ..EnginePolicy::default()
    };
    let mut engine = ExternalEngine::new(config);
    let refused = Contestant::<Loa>::new_game(&mut engine, Default::default(), 0, &[]).unwrap_err();
    assert!(refused.0.contains("the program is quitting"), "{refused}");
    assert!(!sleeping(&marker), "the refused engine ran");
    // The check sees such a process when one runs.
    let mut seen = std::process::Command::new("sleep")
        .arg(&marker)
        .spawn()
        .unwrap();
    let found = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        sleeping(&marker)
    });
    seen.kill().unwrap();
    seen.wait().unwrap();
    assert!(found);
}
