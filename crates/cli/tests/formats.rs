//! The formats that pair by results, end to end on a real coordinator and two worker
//! processes: a 32-engine Swiss runs to its end, no pairing repeated, also through a
//! coordinator killed and restarted mid-round; a knockout crowns its champion with the
//! bracket in `status`; a grouped test accepts its better take; a rating pool rates its
//! players relative to its anchor.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use tourney_tests::http::get;

/// A tournament of `engines` random players at a few plies a game.
fn file(format: &str, engines: usize, extra: &str) -> String {
    let mut text = format!(
        "name = \"{format}-test\"\ngame = \"loa\"\nformat = \"{format}\"\n{extra}\n\
         openings = {{ plies = 2, seed = 5 }}\nlimits = {{ nodes = 50 }}\n\
         adjudication = {{ max_plies = 40 }}\n"
    );
    for i in 0..engines {
        text += &format!("[[engine]]\nname = \"e{i:02}\"\nplayer = \"random\"\n");
    }
    text
}

/// Submits `text` to a new coordinator with two workers; its final status, games and
/// dashboard view.
fn run_to_the_end(text: &str) -> (serde_json::Value, Vec<serde_json::Value>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    std::fs::write(&path, text).unwrap();
    let (mut coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let id = submit(port, &path);
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    let games = admin(port, &["export", &id, "--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (code, body) = get(
        &format!("127.0.0.1:{port}"),
        &format!("/api/v1/tournaments/{id}"),
    )
    .unwrap();
    assert!(code.contains("200"), "{code}: {body}");
    let mut view: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (_, verdicts) = get(&format!("127.0.0.1:{port}"), "/api/v1/verdicts").unwrap();
    view["verdicts"] = serde_json::from_str(&verdicts).unwrap();
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let _ = coordinator.kill();
    let _ = coordinator.wait();
    (end, games, view)
}

#[test]
fn a_32_engine_swiss_runs_on_two_workers_to_its_end_without_a_repeated_pairing() {
    let (end, games, view) = run_to_the_end(&file("swiss", 32, "rounds = 5"));
    // The dashboard's table and the report's JSON say the same.
    assert_eq!(view["progress"]["title"], "Swiss: round 5 of 5");
    assert_eq!(view["progress"]["rows"].as_array().unwrap().len(), 32);
    assert_eq!(view["report"]["progress"], end["progress"]);
    assert_eq!(end["pairs_done"], 5 * 16);
    assert_eq!(games.len(), 5 * 16 * 2);
    let progress = &end["progress"];
    assert_eq!(progress["format"], "swiss");
    assert_eq!(progress["round"], 5);
    let standings = progress["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 32);
    // Each pairing is two games: the points add up to the games played.
    let points: f64 = standings
        .iter()
        .map(|l| l["points"].as_f64().unwrap())
        .sum();
    assert_eq!(points, 5.0 * 16.0 * 2.0);
    let ordered = standings
        .windows(2)
        .all(|w| w[0]["points"].as_f64() >= w[1]["points"].as_f64());
    assert!(ordered, "{standings:?}");
    // No two engines met twice, and each played both colours equally.
    let mut pairings: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    let mut colours: BTreeMap<String, i64> = BTreeMap::new();
    for g in &games {
        let (white, black) = (g["white"].as_str().unwrap(), g["black"].as_str().unwrap());
        let pair = pairings.entry(g["pair"].as_u64().unwrap()).or_default();
        pair.insert(white.to_string());
        pair.insert(black.to_string());
        *colours.entry(white.to_string()).or_default() += 1;
        *colours.entry(black.to_string()).or_default() -= 1;
    }
    let met: BTreeSet<&BTreeSet<String>> = pairings.values().collect();
    assert_eq!(met.len(), pairings.len(), "a pairing repeated");
    assert!(colours.values().all(|&c| c == 0), "{colours:?}");
}

#[test]
fn a_knockout_on_two_workers_names_its_champion_and_its_bracket() {
    let (end, games, view) = run_to_the_end(&file("knockout", 6, "pairs = 2\ntiebreak_pairs = 1"));
    let progress = &end["progress"];
    assert_eq!(progress["format"], "knockout");
    let champion = progress["champion"].as_str().unwrap();
    let rounds = progress["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 3);
    let last = &rounds[2][0];
    assert_eq!(last["winner"], champion);
    assert_eq!(
        view["progress"]["title"],
        format!("Knockout: won by {champion}")
    );
    // Five matches of two pairs, and a pair more for each tied one.
    let pairs = end["pairs_done"].as_u64().unwrap();
    assert!((10..=15).contains(&pairs), "{pairs}");
    assert_eq!(games.len() as u64, 2 * pairs);
    // The champion won (or went through) every match it played.
    for m in rounds.iter().flat_map(|r| r.as_array().unwrap()) {
        if m["players"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == champion)
        {
            assert_eq!(m["winner"], champion, "{m}");
        }
    }
}

#[test]
fn a_grouped_test_accepts_the_take_that_is_better_and_drops_the_others() {
    let text = "name = \"takes-test\"\ngame = \"loa\"\nformat = \"takes\"\n\
        sprt = { elo0 = 0.0, elo1 = 50.0, alpha = 0.05, beta = 0.05, max_pairs = 2000 }\n\
        openings = { plies = 4, seed = 2 }\nlimits = { nodes = 300 }\n\
        adjudication = { max_plies = 200 }\n\
        [[engine]]\nname = \"base\"\nplayer = \"ab:depth=1\"\n\
        [[engine]]\nname = \"same\"\nplayer = \"ab:depth=1\"\n\
        [[engine]]\nname = \"deeper\"\nplayer = \"ab:depth=3\"\n";
    let (end, games, view) = run_to_the_end(text);
    let progress = &end["progress"];
    assert_eq!(progress["format"], "takes");
    assert_eq!(progress["verdict"], "accepted deeper", "{progress}");
    let takes = progress["takes"].as_array().unwrap();
    assert_eq!(takes[1]["state"], "accepted");
    assert_eq!(takes[0]["state"], "dropped");
    let upper = progress["bounds"][1].as_f64().unwrap();
    assert!(takes[1]["llr"].as_f64().unwrap() >= upper);
    // Every game is a take against the base, and the dropped take's pairs count too.
    assert!(
        games
            .iter()
            .all(|g| g["white"] == "base" || g["black"] == "base")
    );
    let standings = end["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    assert!(
        view["progress"]["title"]
            .as_str()
            .unwrap()
            .starts_with("Grouped test: accepted deeper")
    );
    // The accepted take is a verdict of its engine line, against the base.
    let verdict = &view["verdicts"][0]["verdicts"][0];
    assert_eq!(verdict["patch"], "deeper", "{verdict}");
    assert_eq!(verdict["base"], "base", "{verdict}");
    assert!(verdict["elo"].as_f64().unwrap() > 0.0, "{verdict}");
}

#[test]
fn a_swiss_goes_on_exactly_through_a_coordinator_killed_in_the_middle_of_a_round() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let path = dir.path().join("t.toml");
    // Slower games than the others' (alpha-beta at 400 nodes), so that the kill lands
    // while pairs are out.
    let text = file("swiss", 16, "rounds = 4").replace("player = \"random\"", "player = \"ab\"");
    std::fs::write(&path, text.replace("nodes = 50", "nodes = 400")).unwrap();
    let (mut coordinator, port) = start_coordinator(0, &data);
    let id = submit(port, &path);
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    let before = wait_for(port, &id, "a round and a half", |s| {
        s["pairs_done"].as_u64().unwrap() >= 12
    });
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let (mut coordinator, _) = restart_coordinator(port, &data);
    // What was done is read back as it was: the rounds paired and the points.
    let after = status(port, &id);
    let done = after["pairs_done"].as_u64().unwrap();
    assert!(done >= before["pairs_done"].as_u64().unwrap());
    let end = wait_for(port, &id, "the end", |s| s["state"] == "finished");
    assert_eq!(end["pairs_done"], 4 * 8);
    assert_eq!(end["progress"]["round"], 4, "{end}");
    let games: Vec<serde_json::Value> = admin(port, &["export", &id, "--format", "jsonl"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 4 * 8 * 2);
    let mut pairings: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for g in &games {
        let pair = pairings.entry(g["pair"].as_u64().unwrap()).or_default();
        pair.insert(g["white"].as_str().unwrap().to_string());
        pair.insert(g["black"].as_str().unwrap().to_string());
    }
    let met: BTreeSet<&BTreeSet<String>> = pairings.values().collect();
    assert_eq!(met.len(), 4 * 8, "every pairing once");
    // Each engine played every round.
    let standings = end["progress"]["standings"].as_array().unwrap();
    let points: f64 = standings
        .iter()
        .map(|l| l["points"].as_f64().unwrap())
        .sum();
    assert_eq!(points, 4.0 * 8.0 * 2.0);
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let _ = coordinator.kill();
    let _ = coordinator.wait();
}

#[test]
fn a_pool_of_built_in_players_rates_them_relative_to_its_anchor() {
    let text = "name = \"pool-test\"\ngame = \"loa\"\nformat = \"pool\"\n\
        openings = { plies = 4, seed = 3 }\nlimits = { nodes = 300 }\n\
        adjudication = { max_plies = 120 }\n\
        [pool]\nanchor = \"depth1\"\nmax_pairs = 30\n\
        [[engine]]\nname = \"depth1\"\nplayer = \"ab:depth=1\"\n\
        [[engine]]\nname = \"depth2\"\nplayer = \"ab:depth=2\"\n\
        [[engine]]\nname = \"random\"\nplayer = \"random\"\n";
    let (end, games, view) = run_to_the_end(text);
    // Its budget ends it; without one it would play on.
    assert_eq!(end["pairs_done"], 30);
    assert_eq!(games.len(), 60);
    assert!(
        end["progress"].is_null(),
        "a pool's standings are its ratings"
    );
    let standings = end["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    let row = |name: &str| {
        (standings.iter())
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {standings:?}"))
    };
    let anchor = row("depth1");
    assert_eq!(
        (anchor["elo"].as_f64(), anchor["plus"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    // Every member played (the floor), each rated with a finite interval.
    for p in standings {
        assert!(p["games"].as_u64().unwrap() > 0, "{p}");
        let plus = p["plus"].as_f64().unwrap();
        assert!(plus.is_finite() && plus < 1000.0, "{p}");
    }
    assert_eq!(standings[2]["name"], "random", "{standings:?}");
    assert!(row("random")["elo"].as_f64().unwrap() < 0.0);
    // The report (on the dashboard's page) has the same ratings, and says how.
    let ratings = &view["report"]["ratings"];
    assert_eq!(ratings["method"], "pool (bayeselo, relative to depth1)");
    assert_eq!(ratings["players"][0]["name"], standings[0]["name"]);
}

#[test]
fn a_pool_goes_on_to_its_budget_through_a_coordinator_killed_while_pairs_are_out() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let path = dir.path().join("t.toml");
    // Alpha-beta at 400 nodes: slow enough that the kill lands while pairs are out.
    let text = file("pool", 4, "pool = { max_pairs = 40 }")
        .replace("player = \"random\"", "player = \"ab\"")
        .replace("nodes = 50", "nodes = 400");
    std::fs::write(&path, text).unwrap();
    let (mut coordinator, port) = start_coordinator(0, &data);
    let id = submit(port, &path);
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    let before = wait_for(port, &id, "a few pairs", |s| {
        s["pairs_done"].as_u64().unwrap() >= 10
    });
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let (mut coordinator, _) = restart_coordinator(port, &data);
    // What was done is read back; the pairs that were out are played again.
    let after = status(port, &id);
    assert!(after["pairs_done"].as_u64() >= before["pairs_done"].as_u64());
    let end = wait_for(port, &id, "its budget", |s| s["state"] == "finished");
    assert_eq!(end["pairs_done"], 40, "{end}");
    let standings = end["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 4);
    assert!(standings.iter().all(|p| p["games"].as_u64() > Some(0)));
    let anchor = (standings.iter()).find(|p| p["name"] == "e00").unwrap();
    assert_eq!(
        (anchor["elo"].as_f64(), anchor["plus"].as_f64()),
        (Some(0.0), Some(0.0))
    );
    for w in &mut workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let _ = coordinator.kill();
    let _ = coordinator.wait();
}
