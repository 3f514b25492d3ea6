//! A rating pool end to end: built-in players' versions on a real coordinator and two
//! workers, versions added while it runs, a gate that refuses a weaker version and
//! promotes a stronger one, and the whole killed with SIGKILL in the middle: the same
//! ratings and gates afterwards, and on with another version.

mod common;

use common::*;
use tourney_tests::http::get;
use tourney_tests::wait;

/// A gated pool of `base` (alpha-beta at 20 nodes a move) and `weak` (random moves); the
/// others search 60 (`middling`) and 600 (`stronger`).
const POOL: &str = "name = \"nightly\"\ngame = \"loa\"\nformat = \"pool\"\n\
                    openings = { plies = 2, seed = 5 }\nlimits = { nodes = 600 }\n\
                    adjudication = { max_plies = 60 }\n\
                    [pool]\nmax_pairs = 20000\n\
                    gate = { sprt = { elo0 = 0, elo1 = 150, model = \"logistic\" } }\n\
                    [[engine]]\nversion = \"base\"\n[[engine]]\nversion = \"weak\"\n";

/// The gates of `status` as (candidate, against, state).
fn gates(status: &serde_json::Value) -> Vec<(String, String, String)> {
    let text = |g: &serde_json::Value, key: &str| g[key].as_str().unwrap_or_default().to_string();
    (status["progress"]["gates"].as_array().into_iter().flatten())
        .map(|g| (text(g, "candidate"), text(g, "against"), text(g, "state")))
        .collect()
}

fn gate(candidate: &str, against: &str, state: &str) -> (String, String, String) {
    (candidate.into(), against.into(), state.into())
}

#[test]
fn a_gated_pool_takes_versions_as_they_come_and_survives_sigkill_with_the_same_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (mut coordinator, port) = start_coordinator(0, &data);
    for (name, spec) in [
        ("base", "ab:nodes=20"),
        ("weak", "random:seed=1"),
        ("middling", "ab:nodes=60"),
    ] {
        admin(port, &["version", "add", name, "--player", spec]);
    }
    let path = dir.path().join("pool.toml");
    std::fs::write(&path, POOL).unwrap();
    let id = submit(port, &path);
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    // The file's second engine plays its gate against the anchor first, and is refused.
    let refused = wait_for(port, &id, "weak's gate", |s| {
        !gates(s).is_empty() && gates(s)[0].2 != "playing"
    });
    assert_eq!(
        gates(&refused)[0],
        gate("weak", "base", "refused"),
        "{refused}"
    );
    // A version registered into the pool while it runs joins it and is promoted.
    let spec = "ab:nodes=600,seed=2";
    let add = [
        "version", "add", "stronger", "--player", spec, "--pool", "nightly",
    ];
    let added = as_admin(port, &add);
    let said = String::from_utf8_lossy(&added.stdout);
    let why = String::from_utf8_lossy(&added.stderr);
    assert!(said.contains("stronger joins pool"), "{said} {why}");
    let promoted = wait_for(port, &id, "stronger's gate", |s| {
        gates(s).len() == 2 && gates(s)[1].2 != "playing"
    });
    assert_eq!(
        gates(&promoted)[1],
        gate("stronger", "base", "promoted"),
        "{promoted}"
    );
    assert_eq!(admin(port, &["pool", "best", "nightly"]).trim(), "stronger");

    // The whole killed: the workers first, then (its figures read) the coordinator.
    for w in &mut workers {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    let before = wait::until(20, "the pool to stand still", || {
        let first = status(port, &id);
        std::thread::sleep(std::time::Duration::from_millis(400));
        let second = status(port, &id);
        match first["pairs_done"] == second["pairs_done"] {
            true => Ok(second),
            false => Err(second.to_string()),
        }
    });
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let (mut coordinator, _) = restart_coordinator(port, &data);
    let after = status(port, &id);
    for key in ["pairs_done", "standings", "progress"] {
        assert_eq!(after[key], before[key], "{key}");
    }
    assert_eq!(admin(port, &["pool", "best", &id]).trim(), "stronger");
    // The promotion is a verdict on the dashboard's Verdicts list, in its line.
    let (code, body) = get(&format!("127.0.0.1:{port}"), "/api/v1/verdicts").unwrap();
    assert!(code.contains("200"), "{code} {body}");
    let lines: serde_json::Value = serde_json::from_str(&body).unwrap();
    let verdict = &lines[0]["verdicts"][0];
    assert_eq!(
        (&verdict["patch"], &verdict["base"]),
        (&"stronger".into(), &"base".into())
    );
    assert_eq!(verdict["name"], "nightly", "{lines}");

    // On, with a weaker version added after the restart: refused against the new best.
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    admin(port, &["pool", "add", &id, "middling"]);
    let end = wait_for(port, &id, "middling's gate", |s| {
        gates(s).len() == 3 && gates(s)[2].2 != "playing"
    });
    assert_eq!(
        gates(&end)[2],
        gate("middling", "stronger", "refused"),
        "{end}"
    );
    assert!(end["pairs_done"].as_u64() > after["pairs_done"].as_u64());
    let standings = end["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 4);
    let elo = |name: &str| {
        let p = standings.iter().find(|p| p["name"] == name).unwrap();
        p["elo"].as_f64().unwrap()
    };
    assert_eq!(elo("base"), 0.0);
    assert!(elo("weak") < 0.0 && elo("stronger") > 0.0, "{standings:?}");
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    admin(port, &["cancel", &id]);
    let _ = coordinator.kill();
    let _ = coordinator.wait();
}
