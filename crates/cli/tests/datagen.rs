//! Data generation on a real cluster: a coordinator process and two worker processes make
//! a data set that `tourney data stats` describes, `tourney data export` writes and
//! `tourney tune texel` reads; a coordinator restarted with its data set's summary gone
//! rebuilds it from the stored games.

mod common;

use std::collections::HashSet;

use common::*;

/// LOA self-play at 300 nodes a move until 400 positions are kept.
const DATAGEN: &str = r#"
name = "datagen-test"
game = "loa"
format = "datagen"
openings = { plies = 6, seed = 3 }
limits = { nodes = 300 }
adjudication = { max_plies = 200 }

[datagen]
positions = 400
skip_plies = 2

[[engine]]
name = "ab"
player = "ab"
"#;

/// The number after `label` in `text` (`positions  412 from ...`).
fn number_after(text: &str, label: &str) -> u64 {
    let rest = &text[text
        .find(label)
        .unwrap_or_else(|| panic!("{label} in {text}"))
        + label.len()..];
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_datagen_run_on_two_workers_makes_data_that_stats_export_and_texel_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("datagen.toml");
    std::fs::write(&file, DATAGEN).unwrap();
    // Every pair's games are searched again by the coordinator: honest workers' all agree.
    let (mut coordinator, port) = start_coordinator_with(0, &data, &["--search-again-every", "1"]);
    let id = submit(port, &file);
    let mut workers = [start_worker(port, "w1"), start_worker(port, "w2")];
    wait_for(port, &id, "the run to end", |s| s["state"] == "finished");
    let (_, metrics) = tourney_tests::http::get(&format!("127.0.0.1:{port}"), "/metrics").unwrap();
    let count = |series: &str| -> u64 {
        (metrics.lines())
            .find_map(|l| l.strip_prefix(series))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{series} in {metrics}"))
    };
    assert!(
        count("tourney_datagen_searched_again_total{result=\"agreed\"}") > 0,
        "{metrics}"
    );
    assert_eq!(
        count("tourney_datagen_searched_again_total{result=\"refused\"}"),
        0
    );
    assert_eq!(
        count("tourney_results_rejected_total{reason=\"searched-again\"}"),
        0
    );
    // Pairs in play when it ended are still taken: stopped workers report no more.
    for w in &mut workers {
        w.kill().unwrap();
        w.wait().unwrap();
    }
    // Reports the workers sent before they stopped land in their own time: wait until
    // the count holds still.
    let mut end = status(port, &id);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(300));
        let again = status(port, &id);
        if again["pairs_done"] == end["pairs_done"] {
            break;
        }
        end = again;
    }
    let pairs = end["pairs_done"].as_u64().unwrap();
    assert_eq!(end["positions_wanted"], 400);
    assert!(end["positions"].as_u64().unwrap() >= 400, "{end}");
    let line = admin(port, &["status", &id]);
    assert!(line.contains(" of 400 positions"), "{line}");
    assert!(
        pairs > 0 && pairs < 400,
        "it stops at its positions: {pairs} pairs"
    );

    let stats = admin(port, &["data", "stats", &id]);
    let positions = number_after(&stats, "\npositions");
    assert!(positions >= 400, "{stats}");
    assert!(
        stats.contains(&format!("{positions} of 400 positions wanted")),
        "{stats}"
    );
    assert!(
        stats.contains("early plies") && stats.contains("captures"),
        "{stats}"
    );
    // Game ids are pair × 2 + game, at most two games a pair.
    assert!(
        number_after(&stats, &format!("{positions} from")) <= 2 * pairs,
        "{stats}"
    );

    // The binary export is a data file of exactly those positions, every one legal, past
    // the skipped plies, and none twice.
    let exported = dir.path().join("loa.bin");
    admin(
        port,
        &["data", "export", &id, "-o", exported.to_str().unwrap()],
    );
    let bytes = std::fs::read(&exported).unwrap();
    assert_eq!(bytes.len() as u64, 16 + 40 * positions);
    let mut keys = HashSet::new();
    let mut games = HashSet::new();
    tourney_dataset::read_records(&bytes[..], |r| {
        assert!(r.ply >= 2, "ply {}", r.ply);
        assert!(r.position::<tourney_rules::Loa>().is_ok());
        assert!(
            r.game_id < 2 * 400,
            "game {} past the most pairs",
            r.game_id
        );
        assert!(keys.insert(r.key()), "a duplicate position");
        games.insert(r.game_id);
        Ok(())
    })
    .unwrap();
    assert_eq!(keys.len() as u64, positions);
    // Each opening once: the two games of a pair are different games.
    assert!(
        games.len() as u64 > pairs,
        "{} games of {pairs} pairs",
        games.len()
    );
    let jsonl = admin(port, &["data", "export", &id, "--format", "jsonl"]);
    assert_eq!(jsonl.lines().count() as u64, positions);
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(first["game"], "loa");
    assert!(
        first["position"]
            .as_str()
            .unwrap()
            .parse::<tourney_rules::Loa>()
            .is_ok()
    );

    // Texel tuning reads the export and prints a spec of the game's weights.
    let texel = |args: &[&str]| {
        (tourney().args(["tune", "texel", exported.to_str().unwrap(), "--player"]))
            .args(args)
            .output()
            .unwrap()
    };
    let tuned = texel(&["ab", "--iterations", "5"]);
    let out = String::from_utf8_lossy(&tuned.stdout);
    assert!(
        tuned.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&tuned.stderr)
    );
    // Each line names the pass its weights come after, as the kept weights are named.
    assert!(out.contains("after   4  train"), "{out}");
    let kept = (out.lines())
        .find_map(|l| l.strip_prefix("kept     the weights after iteration "))
        .and_then(|rest| rest.split_once(" (loss "))
        .unwrap();
    let line = format!("after {:>3}  ", kept.0);
    let shown = (out.lines().find(|l| l.starts_with(&line)))
        .map(|l| l.rsplit(' ').next().unwrap().to_string());
    // The pass after all of them is measured without a line of its own.
    if kept.0 != "5" {
        assert_eq!(
            shown.as_deref(),
            Some(kept.1.trim_end_matches(')')),
            "{out}"
        );
    }
    let spec = out
        .lines()
        .find_map(|l| l.strip_prefix("tuned    "))
        .unwrap();
    assert!(
        spec.starts_with("ab:") && spec.contains("connectedness="),
        "{spec}"
    );
    // Only the weights named move, and --verify writes an SPRT of tuned against untuned.
    let verify = dir.path().join("verify.toml");
    let verify_path = verify.to_str().unwrap();
    let tuned = texel(&[
        "ab:depth=3",
        "--params",
        "quads",
        "--iterations",
        "3",
        "--verify",
        verify_path,
    ]);
    assert!(
        tuned.status.success(),
        "{}",
        String::from_utf8_lossy(&tuned.stderr)
    );
    let text = std::fs::read_to_string(&verify).unwrap();
    let sprt = tourney_model::tournament::TournamentConfig::parse(&text, "verify.toml").unwrap();
    assert_eq!(sprt.format, tourney_model::tournament::Format::Sprt);
    let [tuned, start] = [0, 1].map(|i| sprt.engines[i].player.clone().unwrap());
    let quads = tourney_ai::eval::LoaWeights::default().quads;
    assert!(
        start.starts_with("ab:depth=3,") && start.contains(&format!("quads={quads}")),
        "{start}"
    );
    let differs: Vec<&str> = (tuned.split(',').zip(start.split(',')))
        .filter(|(a, b)| a != b)
        .map(|(a, _)| a)
        .collect();
    assert!(
        differs.len() <= 1 && differs.iter().all(|d| d.starts_with("quads=")),
        "{tuned}"
    );
    let bad = texel(&["ab", "--params", "speed"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("speed is not a weight of loa"));

    // With its summary gone, a restarted coordinator rebuilds the data set from the store:
    // the same positions as it held when it stopped (with any pair reported since the
    // first count; no worker runs now).
    let settled = number_after(&admin(port, &["data", "stats", &id]), "\npositions");
    assert!(settled >= positions);
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let run_dir = data.join("positions").join(&id);
    std::fs::remove_file(run_dir.join("summary.json")).unwrap();
    let (mut coordinator, port) = start_coordinator(port, &data);
    let again = admin(port, &["data", "stats", &id]);
    assert_eq!(number_after(&again, "\npositions"), settled, "{again}");
    let rebuilt = dir.path().join("rebuilt.bin");
    admin(
        port,
        &["data", "export", &id, "-o", rebuilt.to_str().unwrap()],
    );
    let rebuilt = std::fs::read(&rebuilt).unwrap().len() as u64;
    assert_eq!(rebuilt, 16 + 40 * settled);
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

#[test]
fn data_commands_refuse_a_tournament_that_is_not_a_datagen_run() {
    let dir = tempfile::tempdir().unwrap();
    let (mut coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let file = dir.path().join("match.toml");
    std::fs::write(
        &file,
        DATAGEN
            .replace("format = \"datagen\"", "format = \"match\"\npairs = 1")
            .replace("[datagen]\npositions = 400\nskip_plies = 2\n", "")
            .replace(
                "name = \"ab\"\nplayer = \"ab\"",
                "name = \"a\"\nplayer = \"ab\"\n\n[[engine]]\nname = \"b\"\nplayer = \"random\"",
            ),
    )
    .unwrap();
    let id = submit(port, &file);
    let out = as_admin(port, &["data", "stats", &id]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a data generation run"), "{err}");
    let out = as_admin(port, &["data", "export", "999"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no tournament 999"));
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
}

#[test]
fn engine_made_openings_come_from_a_real_engine_process_answering_genfens() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("genfens.toml");
    let text = DATAGEN
        .replace(
            "positions = 400\nskip_plies = 2",
            "positions = 60\nskip_plies = 0\nopenings = \"engine\"",
        )
        .replace("player = \"ab\"", "command = \"tourney engine ab\"");
    std::fs::write(&file, &text).unwrap();
    let out = tourney()
        .args([
            "run",
            file.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--concurrency",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let config = tourney_model::tournament::TournamentConfig::parse(&text, "genfens.toml").unwrap();
    let exported = tourney()
        .args(["export", "1", "--data", data.to_str().unwrap()])
        .output()
        .unwrap();
    let games: Vec<serde_json::Value> = String::from_utf8_lossy(&exported.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(games.len() >= 2, "{} games", games.len());
    // Each game starts where `genfens 2 seed <the pair's seed>` put it, the pair's two
    // games at its two openings.
    for g in &games {
        let (pair, game) = (
            g["pair"].as_u64().unwrap(),
            g["meta"]["game"].as_u64().unwrap(),
        );
        let made = tourney_ai::genfens::genfens(
            <tourney_rules::Loa as tourney_rules::Position>::start(),
            2,
            config.pair_seed(pair),
        );
        assert_eq!(
            g["start"],
            made[game as usize].to_string(),
            "pair {pair} game {game}"
        );
        assert_ne!(
            g["start"],
            <tourney_rules::Loa as tourney_rules::Position>::start().to_string()
        );
    }
    let stats = tourney()
        .args(["data", "stats", "1", "--data", data.to_str().unwrap()])
        .output()
        .unwrap();
    let stats = String::from_utf8_lossy(&stats.stdout);
    assert!(number_after(&stats, "\npositions") >= 60, "{stats}");
}

#[test]
fn engine_made_openings_are_of_the_rules_board_size() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = dir.path().join("small.toml");
    std::fs::write(
        &file,
        "name = \"small\"\ngame = \"amazons\"\nrules = { size = \"8\" }\nformat = \"datagen\"\n\
         limits = { nodes = 300 }\nadjudication = { max_plies = 200, regions = true }\n\n\
         [datagen]\npositions = 40\nskip_plies = 2\nopenings = \"engine\"\n\n\
         [[engine]]\nname = \"e\"\ncommand = \"tourney engine ab\"\n",
    )
    .unwrap();
    let data = data.to_str().unwrap();
    let out = tourney()
        .args([
            "run",
            file.to_str().unwrap(),
            "--data",
            data,
            "--concurrency",
            "1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exported = tourney()
        .args(["export", "1", "--data", data])
        .output()
        .unwrap();
    for line in String::from_utf8_lossy(&exported.stdout).lines() {
        let game: serde_json::Value = serde_json::from_str(line).unwrap();
        let start: tourney_rules::Amazons = game["start"].as_str().unwrap().parse().unwrap();
        assert_eq!(start.size(), 8, "{}", game["start"]);
    }
}
