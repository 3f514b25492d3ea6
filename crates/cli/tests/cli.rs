//! The `tourney` binary as users run it: `perft`, `legal` and their errors, and outside
//! engines that close their input (which must not kill `play` or `run`).

use std::process::{Command, Output, Stdio};

use tourney_tests::process::{forking_engine, output_with_stdin};
use tourney_tests::tournaments::MatchFile;

fn tourney(args: &[&str], stdin: &str) -> Output {
    output_with_stdin(
        Command::new(env!("CARGO_BIN_EXE_tourney")).args(args),
        stdin,
    )
}

/// `tourney run FILE --data DATA --concurrency 1`.
fn run_one_at_a_time(file: &std::path::Path, data: &std::path::Path) -> Output {
    let (file, data) = (file.to_str().unwrap(), data.to_str().unwrap());
    tourney(&["run", file, "--data", data, "--concurrency", "1"], "")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn perft_prints_the_count_on_the_last_line_and_the_rate_on_stderr() {
    let out = tourney(&["perft", "loa", "3"], "");
    assert!(out.status.success());
    assert_eq!(stdout(&out).lines().last(), Some("44952"));
    assert!(stderr(&out).contains("leaves/s"), "{}", stderr(&out));
}

#[test]
fn perft_from_a_position_with_divide() {
    let position = "1bb1bw2/w6w/w2b2b1/w7/w1b4w/w3w3/2w3ww/2bb1bb1 b";
    let out = tourney(
        &["perft", "loa", "2", "--position", position, "--divide"],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"929"));
    assert_eq!(lines.len(), 26, "25 moves and the total");
    let sum: u64 = lines[..25]
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 929);
    let out = tourney(&["perft", "amazons", "1"], "");
    assert_eq!(stdout(&out).trim(), "2176");
}

#[test]
fn perft_rejects_a_bad_position_with_its_column() {
    let out = tourney(
        &[
            "perft",
            "loa",
            "1",
            "--position",
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbq1 b",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unexpected 'q'") && stderr(&out).contains("column 40"),
        "{}",
        stderr(&out)
    );
    let out = tourney(&["perft", "chess", "1"], "");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown game 'chess'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn legal_prints_sorted_moves_separated_by_single_spaces() {
    let out = tourney(
        &[
            "legal",
            "loa",
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
        ],
        "",
    );
    assert!(out.status.success());
    let text = stdout(&out);
    let moves: Vec<&str> = text.trim_end_matches('\n').split(' ').collect();
    assert_eq!(moves.len(), 36);
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    assert!(moves.contains(&"b1-b3"));
}

#[test]
fn legal_answers_each_stdin_line_with_pass_and_finished_games() {
    let input = "8/8/2b5/bb6/w1bb4/3b4/b1w1b3/1bb5 w\n\
                 8/8/8/8/8/8/bb5w/7w b\n\
                 3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w\n";
    let loa = tourney(
        &["legal", "loa"],
        &input.lines().take(2).collect::<Vec<_>>().join("\n"),
    );
    assert!(loa.status.success(), "{}", stderr(&loa));
    assert_eq!(stdout(&loa), "pass\n\n");
    let amazons = tourney(&["legal", "amazons"], input.lines().nth(2).unwrap());
    assert_eq!(stdout(&amazons).trim_end().split(' ').count(), 2176);
}

#[test]
fn legal_stops_at_a_malformed_line_after_answering_the_earlier_ones() {
    let input = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n1bbbbbb1/w6w/w6w b\n1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n";
    let out = tourney(&["legal", "loa"], input);
    assert!(!out.status.success());
    assert_eq!(stdout(&out).lines().count(), 1);
    let err = stderr(&out);
    assert!(
        err.contains("stdin line 2") && err.contains("board ends early"),
        "{err}"
    );
}

#[test]
fn stats_prints_the_summary_and_json_fields() {
    let out = tourney(&["stats", "--wdl", "120,100,80"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Elo: 46.60 +/- 32.34"),
        "{}",
        stdout(&out)
    );
    let out = tourney(&["stats", "--penta", "10,40,100,45,12", "--json"], "");
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    for field in [
        "games",
        "wins",
        "draws",
        "losses",
        "pentanomial",
        "score",
        "elo",
        "elo_error",
        "elo_lower",
        "elo_upper",
        "nelo",
        "nelo_error",
        "los",
        "draw_ratio",
    ] {
        assert!(json.get(field).is_some(), "missing {field}");
    }
    assert_eq!(json["games"], 414);
    let out = tourney(&["stats", "--wdl", "1,2"], "");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("W,D,L needs 3 comma-separated counts"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn stats_sprt_decides_like_fishtest() {
    let out = tourney(
        &[
            "stats",
            "sprt",
            "--penta",
            "1000,4000,10000,5000,1600",
            "--preset",
            "stc",
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["decision"], "H1 accepted");
    for field in [
        "llr",
        "lower_bound",
        "upper_bound",
        "elo0",
        "elo1",
        "alpha",
        "beta",
        "model",
    ] {
        assert!(json.get(field).is_some(), "missing {field}");
    }
    assert_eq!(json["model"], "normalized");
    let out = tourney(
        &[
            "stats", "sprt", "--wdl", "10,10,10", "--elo0", "-3", "--elo1", "1", "--model",
            "bayeselo",
        ],
        "",
    );
    assert!(
        stdout(&out).contains("Decision: continue"),
        "{}",
        stdout(&out)
    );
    let out = tourney(
        &[
            "stats",
            "sprt",
            "--penta",
            "1,1,1,1,1",
            "--elo0",
            "5",
            "--elo1",
            "1",
        ],
        "",
    );
    assert!(
        stderr(&out).contains("elo0 (5) must be below elo1 (1)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ratings_reads_pgn_and_jsonl_in_every_format() {
    let dir = std::env::temp_dir().join(format!("tourney-ratings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pgn = dir.join("games.pgn");
    std::fs::write(&pgn, "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n[Termination \"connection\"]\n\n1-0\n\n[White \"B\"]\n[Black \"A\"]\n[Result \"1/2-1/2\"]\n\n1/2-1/2\n\n[White \"C\"]\n[Black \"B\"]\n[Result \"0-1\"]\n\n0-1\n").unwrap();
    let jsonl = dir.join("games.jsonl");
    std::fs::write(&jsonl, "{\"white\":\"A\",\"black\":\"B\",\"result\":\"1-0\"}\n{\"white\":\"B\",\"black\":\"A\",\"result\":\"1/2-1/2\"}\n{\"white\":\"C\",\"black\":\"B\",\"result\":\"0-1\"}\n").unwrap();
    for file in [&pgn, &jsonl] {
        let out = tourney(&["ratings", file.to_str().unwrap(), "--json"], "");
        assert!(out.status.success(), "{}", stderr(&out));
        let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        let players = json["players"].as_array().unwrap();
        assert_eq!(players[0]["name"], "A");
        for field in ["name", "elo", "plus", "minus", "games", "score", "draws"] {
            assert!(players[0].get(field).is_some(), "missing {field}");
        }
    }
    let html = dir.join("report.html");
    let out = tourney(
        &[
            "ratings",
            pgn.to_str().unwrap(),
            "--format",
            "html",
            "-o",
            html.to_str().unwrap(),
            "--method",
            "ordo",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("connection"));
    let out = tourney(&["ratings", pgn.to_str().unwrap(), "--format", "csv"], "");
    assert_eq!(stdout(&out).lines().count(), 4);
    std::fs::write(&jsonl, "{\"white\":\"A\",\"result\":\"1-0\"}\n").unwrap();
    let out = tourney(&["ratings", jsonl.to_str().unwrap()], "");
    assert!(
        stderr(&out).contains("games.jsonl:1: missing string field 'black'"),
        "{}",
        stderr(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn play_prints_a_record_and_engine_plays_through_the_protocol() {
    let out = tourney(
        &[
            "play",
            "--game",
            "loa",
            "--white",
            "ab:depth=2",
            "--black",
            "random:seed=3",
            "--quiet",
            "--json",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let record: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(["1-0", "0-1", "1/2-1/2"].contains(&record["result"].as_str().unwrap()));
    assert!(record["termination"].is_string());
    // The built-in engine served over the protocol, as an outside engine of `play`.
    let engine = format!("cmd:{} engine ab:depth=2", env!("CARGO_BIN_EXE_tourney"));
    let out = tourney(
        &[
            "play",
            "--game",
            "amazons",
            "--white",
            &engine,
            "--black",
            "ab:depth=1",
            "--tc",
            "10+0.1",
            "--adjudicate",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let pgn = stdout(&out);
    assert!(
        pgn.contains("[Game \"Amazons\"]") && pgn.contains("[TimeControl \"10+0.1\"]"),
        "{pgn}"
    );
    assert!(
        !pgn.contains("[Termination \"crash\"]") && !pgn.contains("illegal-move"),
        "{pgn}"
    );
    // The board is shown on stderr as the game goes.
    assert!(stderr(&out).contains("a b c d e f g h i j"));
}

#[test]
fn play_refuses_bad_players_and_unfit_engines() {
    let out = tourney(
        &[
            "play",
            "--game",
            "loa",
            "--white",
            "ab:dept=2",
            "--black",
            "random",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown key 'dept'"),
        "{}",
        stderr(&out)
    );
    let out = tourney(
        &[
            "play",
            "--game",
            "loa",
            "--white",
            "cmd:/nonexistent/engine",
            "--black",
            "random",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unfit") && stderr(&out).contains("cannot start"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn openings_are_distinct_positions() {
    let out = tourney(
        &[
            "openings", "--game", "loa", "--plies", "4", "--count", "20", "--seed", "5",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20);
    let unique: std::collections::HashSet<&&str> = lines.iter().collect();
    assert_eq!(unique.len(), 20);
    let again = tourney(
        &[
            "openings", "--game", "loa", "--plies", "4", "--count", "20", "--seed", "5",
        ],
        "",
    );
    assert_eq!(stdout(&again), text, "same seed, same suite");
    let out = tourney(
        &[
            "openings",
            "--game",
            "amazons",
            "--plies",
            "2",
            "--count",
            "3",
            "--balanced",
            "ab:depth=1",
            "--max-score",
            "400",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 3);
}

/// An outside engine that closes its input before answering the handshake: the next
/// command sent to it meets a pipe with no reader.
const DEAF_ENGINE: &str = "sh -c \"read line; exec 0<&-; echo ugiok; sleep 5\"";

#[cfg(unix)]
#[test]
fn an_engine_that_closes_its_input_does_not_kill_play() {
    use std::os::unix::process::ExitStatusExt;
    let out = tourney(
        &[
            "play",
            "--game",
            "loa",
            "--white",
            &format!("cmd:{DEAF_ENGINE}"),
            "--black",
            "random",
            "--quiet",
        ],
        "",
    );
    assert_eq!(out.status.signal(), None, "killed by a signal");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("unfit"), "{}", stderr(&out));
}

#[cfg(unix)]
#[test]
fn run_pauses_on_an_engine_that_closes_its_input_and_says_why() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("deaf.toml");
    std::fs::write(
        &file,
        MatchFile {
            name: "deaf",
            pairs: 2,
            engines: [
                ("ab", "ab:depth=1"),
                ("deaf", &format!("cmd:{DEAF_ENGINE}")),
            ],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let out = run_one_at_a_time(&file, &dir.path().join("data"));
    assert_eq!(out.status.signal(), None, "killed by a signal");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("paused after 0 pairs") && err.contains("deaf"),
        "{err}"
    );
}

/// Four pairs of alpha-beta at depth 1 against random moves: a second of play.
fn quick_match() -> String {
    MatchFile {
        name: "quick",
        ..Default::default()
    }
    .toml()
}

#[test]
fn run_closes_with_the_counts_of_its_report_and_its_data_opens_in_a_coordinator() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("quick.toml");
    std::fs::write(&file, quick_match()).unwrap();
    let data = dir.path().join("data");
    let args = [
        "run",
        file.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
    ];
    let out = tourney(&args, "");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let closing = text.lines().last().unwrap();
    assert!(
        closing.starts_with("Tournament 1: 4 pairs, 8 games. HTML report: "),
        "{text}"
    );
    // The standings count the same games: each game counts once for each of its players.
    let games: u64 = text
        .lines()
        .skip_while(|l| !l.starts_with("Rank"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().nth(5).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(games, 2 * 8, "{text}");
    // Its store reads back whole.
    let verified = tourney(&["store", "verify", "--data", data.to_str().unwrap()], "");
    assert!(verified.status.success(), "{}", stderr(&verified));
    assert!(
        stdout(&verified)
            .ends_with("1 tournaments, 4 pairs, 0 artifacts read back whole; 0 damaged\n"),
        "{}",
        stdout(&verified)
    );
    let elsewhere = tourney(&["store", "verify", "--data", file.to_str().unwrap()], "");
    assert!(!elsewhere.status.success());
    assert!(
        stderr(&elsewhere).contains("not a directory"),
        "{}",
        stderr(&elsewhere)
    );
    assert!(
        text.contains("Limits  ") && text.contains("depth 1 per move"),
        "{text}"
    );

    // The same directory serves a cluster coordinator.
    let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
    command
        .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
        .arg(&data);
    let (mut coordinator, port) =
        tourney_tests::process::spawn_listening(command, "coordinator serving");
    let url = format!("http://127.0.0.1:{port}");
    let status = tourney_tests::wait::within(10, || {
        let out = tourney(&["status", "1", "--json", "--coordinator", &url], "");
        match out.status.success() {
            true => Ok(stdout(&out)),
            false => Err(stderr(&out)),
        }
    });
    // While it holds the directory, reading the directory itself is refused, saying why.
    let held = tourney(&["export", "1", "--data", data.to_str().unwrap()], "");
    let _ = coordinator.kill();
    let _ = coordinator.wait();
    let status: serde_json::Value =
        serde_json::from_str(&status.expect("the coordinator serves")).unwrap();
    assert_eq!(
        (status["state"].as_str(), status["pairs_done"].as_u64()),
        (Some("finished"), Some(4))
    );
    assert!(!held.status.success());
    assert!(
        stderr(&held).contains("a running coordinator holds it"),
        "{}",
        stderr(&held)
    );

    // Stopped, its games and report read from the directory, with no coordinator to ask.
    let exported = tourney(&["export", "1", "--data", data.to_str().unwrap()], "");
    assert!(exported.status.success(), "{}", stderr(&exported));
    let lines: Vec<serde_json::Value> = stdout(&exported)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    assert!(
        lines
            .iter()
            .all(|g| g["tournament"] == 1 && g["moves"].is_array())
    );
    let report = tourney(
        &[
            "report",
            "1",
            "--format",
            "json",
            "--data",
            data.to_str().unwrap(),
        ],
        "",
    );
    assert!(report.status.success(), "{}", stderr(&report));
    let report: serde_json::Value = serde_json::from_str(&stdout(&report)).unwrap();
    let games: u64 = (report["terminations"].as_array().unwrap().iter())
        .map(|reason| reason[1].as_u64().unwrap())
        .sum();
    assert_eq!(games, 8, "{report}");
}

#[test]
fn run_checks_the_tournament_file_before_it_starts_or_creates_anything() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let run = |text: &str| {
        let file = dir.path().join("t.toml");
        std::fs::write(&file, text).unwrap();
        tourney(
            &[
                "run",
                file.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ],
            "",
        )
    };
    let out = run(&quick_match().replace("player = \"random\"", "player = \"random:sed=3\""));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("error: ")
            && err.contains("t.toml:12: engine[1].player: random: unknown key 'sed'"),
        "{err}"
    );
    assert!(
        !err.contains("Live dashboard") && stdout(&out).is_empty(),
        "{err}"
    );
    assert!(!data.exists(), "no data directory for a bad file");

    std::fs::write(
        dir.path().join("o.txt"),
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\nnot a position\n",
    )
    .unwrap();
    let out = run(&quick_match().replace(
        "openings = { plies = 2, seed = 1 }",
        "openings = { file = \"o.txt\" }",
    ));
    let err = stderr(&out);
    assert!(err.contains("o.txt:2: not a loa position"), "{err}");
    assert!(
        !err.contains("not a position"),
        "the file's text is not echoed: {err}"
    );
    assert!(!data.exists());

    // Openings files stay under the tournament file's directory.
    let secret_name = format!("secret-{}.txt", std::process::id());
    let secret = dir.path().parent().unwrap().join(&secret_name);
    std::fs::write(&secret, "root:x:0:0\n").unwrap();
    for (name, says) in [
        (&format!("../{secret_name}")[..], "must be a path under"),
        ("/etc/passwd", "leads out of"),
        ("link.txt", "leads out of"),
    ] {
        let _ = std::os::unix::fs::symlink(&secret, dir.path().join("link.txt"));
        let out = run(&quick_match().replace(
            "openings = { plies = 2, seed = 1 }",
            &format!("openings = {{ file = \"{name}\" }}"),
        ));
        let err = stderr(&out);
        assert!(
            err.contains(says) && !err.contains("root:"),
            "{name}: {err}"
        );
    }
    let _ = std::fs::remove_file(secret);

    let out = run(&quick_match().replace("pairs = 4", "pairs = \"4\""));
    let err = stderr(&out);
    assert!(err.contains("t.toml:4: pairs: invalid type"), "{err}");
}

#[test]
fn a_directory_that_is_not_a_data_directory_is_refused_with_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let out = tourney(
        &[
            "coordinator",
            "--listen",
            "127.0.0.1:0",
            "--data",
            dir.path().to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("expected db/") && err.contains("notes.txt"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "nothing created"
    );
}

#[test]
fn run_without_a_terminal_prints_progress_lines_at_its_interval() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("slow.toml");
    // About 3 s of play: 8 games of about 35 plies at 10 ms a move, one at a time, with a
    // line every second (the hidden --progress-every; 10 s by default).
    std::fs::write(
        &file,
        MatchFile {
            name: "slow",
            limits: "{ movetime = 10 }",
            adjudication: Some("{ max_plies = 60 }"),
            engines: [("a", "ab"), ("b", "ab:walls=0")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let (file, data) = (file.to_str().unwrap(), dir.path().join("data"));
    let data = data.to_str().unwrap();
    let out = tourney(
        &[
            "run",
            file,
            "--data",
            data,
            "--concurrency",
            "1",
            "--progress-every",
            "1",
        ],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let progress: Vec<&str> = err.lines().filter(|l| l.starts_with("[0:00:")).collect();
    assert!(!progress.is_empty(), "no progress line in:\n{err}");
    assert!(
        progress
            .iter()
            .all(|l| l.contains("/4 pairs") && l.contains("games/s")),
        "{progress:?}"
    );
}

/// Starts `tourney run FILE --concurrency 1 --data DATA` and waits for its games to start
/// (its dashboard's address on stderr); the child, a thread that returns its stderr, and
/// the dashboard's address (`127.0.0.1:PORT`).
fn start_run(
    file: &std::path::Path,
    data: &std::path::Path,
) -> (std::process::Child, std::thread::JoinHandle<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args([
            "run",
            file.to_str().unwrap(),
            "--concurrency",
            "1",
            "--data",
        ])
        .arg(data)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (started, dashboard) = std::sync::mpsc::channel();
    let errors = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut text = String::new();
        for line in std::io::BufReader::new(errors).lines() {
            let line = line.unwrap();
            if let Some(url) = line.strip_prefix("Live dashboard: http://") {
                let _ = started.send(url.trim_end_matches('/').to_string());
            }
            text += &line;
            text += "\n";
        }
        text
    });
    let address = dashboard
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run starts");
    (child, err, address)
}

/// Waits until the run serving its dashboard at `address` has stored a pair.
fn wait_for_a_pair(address: &str) {
    tourney_tests::wait::until(60, "a pair to be stored", || {
        let (_, body) =
            tourney_tests::http::get(address, "/api/v1/overview").map_err(|e| e.to_string())?;
        let overview: serde_json::Value =
            serde_json::from_str(&body).map_err(|e| format!("{e}: {body}"))?;
        let done = overview["tournaments"][0]["pairs_done"]
            .as_u64()
            .unwrap_or(0);
        tourney_tests::wait::check(done > 0, || format!("{done} pairs"))
    });
}

#[test]
fn run_stopped_with_sigterm_ends_its_outside_engines_and_what_they_started() {
    let dir = tempfile::tempdir().unwrap();
    // Unique to this test process: the engine's child is found by it.
    let (engine, engine_child) = forking_engine(dir.path(), env!("CARGO_BIN_EXE_tourney"));
    let file = dir.path().join("outside.toml");
    let outside = format!("cmd:{}", engine.display());
    std::fs::write(
        &file,
        MatchFile {
            name: "outside",
            pairs: 100,
            limits: "{ movetime = 100 }",
            adjudication: Some("{ max_plies = 200 }"),
            engines: [("outside", &outside), ("builtin", "ab")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let (mut child, err, _) = start_run(&file, &dir.path().join("data"));
    engine_child.wait_started();
    // As systemd or `kill` stops it: the engines, in sessions of their own, get nothing.
    // SAFETY: kill has no memory effects; the pid is our child's, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    let status = child.wait().unwrap();
    let err = err.join().unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    // SIGKILL is delivered at once; give the kernel a moment to let them go.
    engine_child.wait_gone("the run");
}

#[test]
fn play_stopped_with_ctrl_c_ends_its_outside_engine_and_what_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let (engine, engine_child) = forking_engine(dir.path(), env!("CARGO_BIN_EXE_tourney"));
    let child = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args([
            "play",
            "--game",
            "loa",
            "--movetime",
            "500",
            "--quiet",
            "--white",
        ])
        .arg(format!("cmd:{}", engine.display()))
        .args(["--black", "ab"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    engine_child.wait_started();
    // SAFETY: kill has no memory effects; the pid is our child's, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the engines are stopped"),
        "{}",
        stderr(&out)
    );
    engine_child.wait_gone("play");
}

#[test]
fn run_stopped_with_ctrl_c_reports_what_is_stored_and_leaves_it_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.toml");
    // Far longer than the test: 400 games of up to 40 plies at 5 ms a move.
    std::fs::write(
        &file,
        MatchFile {
            name: "long",
            pairs: 200,
            limits: "{ movetime = 5 }",
            adjudication: Some("{ max_plies = 40 }"),
            engines: [("a", "ab"), ("b", "ab:walls=0")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let data = dir.path().join("data");
    let (child, err, dashboard) = start_run(&file, &data);
    wait_for_a_pair(&dashboard);
    // SAFETY: kill has no memory effects; the pid is our child's, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = err.join().unwrap();
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("Interrupted: the games under way are dropped")
            && err.contains("Run the same command again"),
        "{err}"
    );
    let text = stdout(&out);
    let closing = text.lines().last().unwrap_or_default();
    let pairs: u64 = closing
        .strip_prefix("Tournament 1: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no closing line in:\n{text}"));
    assert!(pairs < 200, "{closing}");
    assert!(text.contains("Rank"), "{text}");

    // What it reported is stored, whole, and the tournament is left running to resume.
    let status = tourney(
        &["status", "1", "--json", "--data", data.to_str().unwrap()],
        "",
    );
    assert!(status.status.success(), "{}", stderr(&status));
    let status: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(status["state"], "running");
    // A report already on its way when the run stopped may have landed after the report.
    assert!(status["pairs_done"].as_u64().unwrap() >= pairs, "{status}");
    let verified = tourney(&["store", "verify", "--data", data.to_str().unwrap()], "");
    assert!(verified.status.success(), "{}", stdout(&verified));
}

#[test]
fn logs_are_json_lines_with_span_fields_when_asked() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut coordinator = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
        .arg(dir.path().join("data"))
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = BufReader::new(coordinator.stderr.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let _ = coordinator.kill();
    let _ = coordinator.wait();
    let line: serde_json::Value =
        serde_json::from_str(&first).unwrap_or_else(|e| panic!("{e}: {first}"));
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["fields"]["message"], "coordinator serving", "{line}");
    let listen = line["fields"]["listen"].as_str().unwrap();
    assert!(
        listen.starts_with("127.0.0.1:") && !listen.ends_with(":0"),
        "the address bound: {line}"
    );

    // The worker's pairs and games run in spans that JSON lines carry.
    let file = dir.path().join("quick.toml");
    std::fs::write(&file, quick_match()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(["run", file.to_str().unwrap(), "--data"])
        .arg(dir.path().join("run"))
        .args(["--log-format", "json", "--concurrency", "1"])
        .env("RUST_LOG", "tourney_worker=debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let done: Vec<serde_json::Value> = err
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["fields"]["message"] == "pair done")
        .collect();
    assert_eq!(done.len(), 4, "{err}");
    assert!(
        done.iter()
            .all(|l| l["span"]["name"] == "pair" && l["span"]["tournament"] == 1),
        "{err}"
    );
}

#[test]
fn a_workers_token_never_shows_on_its_command_line() {
    // A coordinator that is not there: the worker keeps trying, long enough to look.
    let secret = "s3cret-token-of-the-worker";
    let mut child = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args([
            "worker",
            "--coordinator",
            "http://127.0.0.1:9",
            "--token",
            secret,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cmdline = format!("/proc/{}/cmdline", child.id());
    let blanked = tourney_tests::wait::within(5, || {
        let line = std::fs::read(&cmdline).unwrap_or_default();
        let text = String::from_utf8_lossy(&line).replace('\0', " ");
        tourney_tests::wait::check(text.contains("--token") && !text.contains(secret), || text)
    });
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        blanked.is_ok(),
        "the token still shows in {cmdline}: {blanked:?}"
    );
    // A token file works as well, and an empty one is an error that names it.
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("token");
    std::fs::write(&empty, "\n").unwrap();
    let out = tourney(&["worker", "--token-file", empty.to_str().unwrap()], "");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--token-file") && stderr.contains("empty"),
        "{stderr}"
    );
}

#[test]
fn engine_programs_are_read_only_from_beside_the_tournament_file_and_must_run() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "not for workers").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("link")).unwrap();
    std::fs::write(dir.path().join("plain"), "#!/bin/sh\n").unwrap();
    let file = dir.path().join("t.toml");
    let data = dir.path().join("data");
    for (command, says) in [
        (
            "/etc/passwd",
            "leads out of the tournament file's directory",
        ),
        ("../x", "no '..'"),
        ("./link", "leads out of the tournament file's directory"),
        ("./plain", "is not executable"),
        ("./missing", "reading"),
    ] {
        std::fs::write(
            &file,
            format!(
                "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 1\n\
                 limits = {{ depth = 1 }}\n\
                 [[engine]]\nname = \"a\"\nplayer = \"random\"\n\
                 [[engine]]\nname = \"x\"\ncommand = \"{command}\"\n"
            ),
        )
        .unwrap();
        let out = tourney(
            &[
                "run",
                file.to_str().unwrap(),
                "--data",
                data.to_str().unwrap(),
            ],
            "",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command}: {stderr}");
        assert!(
            stderr.contains(":11: engine[1].command: ") && stderr.contains(says),
            "{command}: {stderr}"
        );
        assert!(!data.exists(), "{command}: nothing is started");
    }
    // Given on the command line, a version's program may be anywhere, but must run.
    let out = tourney(
        &[
            "version",
            "add",
            "v",
            "--command",
            "/etc/passwd",
            "--coordinator",
            "http://127.0.0.1:9",
        ],
        "",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--command") && stderr.contains("not executable"),
        "{stderr}"
    );
}

#[test]
fn what_others_wrote_is_printed_without_terminal_control_characters() {
    let data = tempfile::tempdir().unwrap();
    let data = data.path().to_str().unwrap();
    let note = "\u{1b}[2J\u{1b}]0;owned\u{7}fake line\rover";
    let out = tourney(
        &[
            "version", "add", "v1", "--player", "random", "--note", note, "--data", data,
        ],
        "",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tourney(&["version", "list", "--data", data], "");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\r') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("\\x1b[2J\\x1b]0;owned\\x07fake line\\x0dover"),
        "{stdout}"
    );
}

#[test]
fn an_archive_stopped_halfway_leaves_no_part_file_and_removes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("many.toml");
    // Enough games that writing the archive takes a while.
    std::fs::write(
        &file,
        MatchFile {
            name: "many",
            pairs: 1500,
            limits: "{ nodes = 1 }",
            engines: [("a", "random"), ("b", "random:seed=2")],
            ..Default::default()
        }
        .toml(),
    )
    .unwrap();
    let data = dir.path().join("data");
    let data = data.to_str().unwrap();
    let out = tourney(&["run", file.to_str().unwrap(), "--data", data], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let archive = dir.path().join("archive");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(["archive", "1", "--data", data, "--out"])
        .arg(&archive)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let parts = || {
        std::fs::read_dir(&archive)
            .map(|d| {
                d.filter_map(Result::ok)
                    .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
                    .count()
            })
            .unwrap_or(0)
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while parts() == 0 {
        assert!(
            std::time::Instant::now() < until,
            "no part file was written"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    // SAFETY: a signal to a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status:?}");
    assert_eq!(parts(), 0, "the part files are removed");
    // Nothing was removed from the store: every game still exports.
    let out = tourney(&["export", "1", "--data", data], "");
    assert_eq!(stdout(&out).lines().count(), 3_000);
}

#[test]
fn engines_of_every_dialect_play_whole_tournaments_of_both_games() {
    let dir = tempfile::tempdir().unwrap();
    let engine = |spec: &str, protocol: &str, flags: &str| {
        format!(
            "command = \"tourney engine {spec} --protocol {protocol}{flags}\"\nprotocol = \"{protocol}\""
        )
    };
    // UCI is LOA's dialect (moves without separators), GTP Amazons'; UGI and CodinGame
    // play both games.
    let cases = [
        (
            "loa",
            engine("random", "ugi", ""),
            engine("ab:depth=1", "uci", ""),
        ),
        (
            "loa",
            engine("random", "codingame", " --movetime 10"),
            "player = \"random\"".to_string(),
        ),
        (
            "amazons",
            engine("random", "ugi", " --game amazons"),
            "player = \"random\"".to_string(),
        ),
        (
            "amazons",
            engine("random", "codingame", " --game amazons --movetime 10"),
            engine("ab:depth=1", "gtp", " --game amazons"),
        ),
    ];
    for (i, (game, first, second)) in cases.iter().enumerate() {
        let file = dir.path().join(format!("{i}.toml"));
        let limits = if *game == "loa" {
            "{ movetime = 200 }"
        } else {
            "{ movetime = 200 }\nadjudication = { max_plies = 40 }"
        };
        std::fs::write(
            &file,
            format!(
                "name = \"dialects-{i}\"\ngame = \"{game}\"\nformat = \"match\"\npairs = 3\n\
                 openings = {{ plies = 2, seed = 1 }}\nlimits = {limits}\n\n\
                 [[engine]]\nname = \"first\"\n{first}\n\n\
                 [[engine]]\nname = \"other\"\n{second}\n"
            ),
        )
        .unwrap();
        let out = run_one_at_a_time(&file, &dir.path().join(format!("data-{i}")));
        assert!(out.status.success(), "{first}: {}", stderr(&out));
        let report = stdout(&out);
        assert!(report.contains("finished"), "{report}");
        // Every game ended by the rules or the ply cap, none by an engine failing.
        for failure in ["illegal", "crash", "unfit", "time forfeit", "unresponsive"] {
            assert!(
                !report.contains(failure),
                "{first} / {second}: {failure}: {report}"
            );
        }
        if i == 0 {
            // What the UCI engine reported of each search is in the record: selective
            // depth, speed, its own time (the latency is the rest) and the PV.
            let data = dir.path().join("data-0");
            let exported = tourney(&["export", "1", "--data", data.to_str().unwrap()], "");
            let moves: Vec<serde_json::Value> = (stdout(&exported).lines())
                .flat_map(|l| {
                    let game: serde_json::Value = serde_json::from_str(l).unwrap();
                    game["moves"].as_array().unwrap().clone()
                })
                .collect();
            // The report gives each engine's mean latency.
            assert!(report.contains("Engine latency"), "{report}");
            assert!(report.contains("  other: mean "), "{report}");
            let searched: Vec<_> = moves.iter().filter(|m| m["pv"].is_array()).collect();
            assert!(!searched.is_empty(), "{moves:?}");
            for m in searched {
                assert!(
                    m["seldepth"].as_u64().is_some() && m["nps"].as_u64().is_some(),
                    "{m}"
                );
                let (engine, measured) = (m["engine_ms"].as_u64(), m["time_ms"].as_u64());
                assert!(engine.unwrap() <= measured.unwrap() + 5, "{m}");
                assert!(m["pv"].as_array().unwrap().len() <= 32, "{m}");
            }
        }
    }
    // A protocol that does not exist is named with its key.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "name = \"b\"\ngame = \"loa\"\nformat = \"match\"\npairs = 1\n\n[[engine]]\nname = \"a\"\n\
         command = \"./e\"\nprotocol = \"gtp2\"\n\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n",
    )
    .unwrap();
    let out = run_one_at_a_time(&bad, &dir.path().join("data-bad"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("engine[0].protocol: unknown protocol 'gtp2'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_8x8_amazons_tournament_plays_to_the_end_in_three_protocols() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a8.toml");
    std::fs::write(
        &file,
        "name = \"a8\"\ngame = \"amazons\"\nformat = \"round-robin\"\nrounds = 1\n\
         openings = { plies = 2, seed = 3 }\nlimits = { movetime = 100 }\n\n\
         [rules]\nsize = \"8\"\n\n\
         [[engine]]\nname = \"ab\"\nplayer = \"ab:depth=1\"\n\n\
         [[engine]]\nname = \"cg\"\ncommand = \"tourney engine random --protocol codingame --game amazons\"\nprotocol = \"codingame\"\n\n\
         [[engine]]\nname = \"gtp\"\ncommand = \"tourney engine ab:depth=1 --protocol gtp --game amazons\"\nprotocol = \"gtp\"\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let out = run_one_at_a_time(&file, &data);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("finished"), "{report}");
    for failure in ["illegal", "crash", "unfit", "time forfeit", "unresponsive"] {
        assert!(!report.contains(failure), "{failure}: {report}");
    }
    let exported = tourney(&["export", "1", "--data", data.to_str().unwrap()], "");
    let games: Vec<serde_json::Value> = stdout(&exported)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(games.len(), 6);
    for game in &games {
        // Every game on 8×8, from an opening of 8 ranks, to the end by the rules.
        assert_eq!(game["rules"], "size=8", "{game}");
        assert_eq!(
            game["start"].as_str().unwrap().split('/').count(),
            8,
            "{game}"
        );
        assert_eq!(game["termination"], "no-moves", "{game}");
    }
    // A rule option Amazons does not have is named with its key.
    std::fs::write(
        &file,
        std::fs::read_to_string(&file)
            .unwrap()
            .replace("size = \"8\"", "size = \"9\""),
    )
    .unwrap();
    let out = run_one_at_a_time(&file, &dir.path().join("data-bad"));
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("rules: amazons: size must be 8 or 10, found '9'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn check_engine_passes_every_reference_implementation() {
    for (protocol, game, spec) in [
        ("tourney", "loa", "ab:depth=2"),
        ("ugi", "loa", "ab:depth=2"),
        ("uci", "loa", "ab:depth=2"),
        ("ugi", "amazons", "ab:depth=1"),
        ("codingame", "loa", "ab:depth=2"),
        ("codingame", "amazons", "random"),
        ("gtp", "amazons", "random"),
    ] {
        let command = format!("tourney engine {spec} --protocol {protocol} --game {game}");
        let out = tourney(
            &[
                "check-engine",
                &command,
                "--protocol",
                protocol,
                "--game",
                game,
            ],
            "",
        );
        let report = stdout(&out);
        assert!(
            out.status.success(),
            "{protocol} {game}: {report}{}",
            stderr(&out)
        );
        assert!(report.contains(" 0 failed, 0 skipped"), "{report}");
        assert!(!report.contains("FAIL"), "{report}");
    }
    // A program that does not start: exit status 2, said.
    let out = tourney(&["check-engine", "/nonexistent/engine"], "");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot be started"),
        "{}",
        stderr(&out)
    );
    // Nor does one whose process ends at once (its script missing): 2, with the FAIL line
    // and its stderr.
    for protocol in ["tourney", "codingame"] {
        let command = "sh /nonexistent/engine.sh";
        let out = tourney(&["check-engine", command, "--protocol", protocol], "");
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{protocol}: {said}");
        assert!(said.contains("cannot be started"), "{protocol}: {said}");
        assert!(
            stdout(&out).contains("FAIL"),
            "{protocol}: {}",
            stdout(&out)
        );
    }
    // GTP is for Amazons.
    let out = tourney(&["check-engine", "x", "--protocol", "gtp"], "");
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--game amazons"), "{}", stderr(&out));
}
