//! The example engines under `examples/`, as `docs/engines.md` shows them: each passes
//! `tourney check-engine` in its protocol and plays whole tournaments through a worker. The
//! C bot is built with the host's `cc` (the Rust toolchain's linker); the Python engines
//! run when `python3` is on the PATH and are skipped, saying so, when it is not.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tourney(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(args)
        .output()
        .expect("tourney runs")
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `check-engine` passes every check of `command` in `protocol` and `game`.
fn passes(command: &str, protocol: &str, game: &str) {
    let out = tourney(&[
        "check-engine",
        command,
        "--protocol",
        protocol,
        "--game",
        game,
    ]);
    let report = text(&out.stdout);
    assert!(
        out.status.success(),
        "{command}: {report}{}",
        text(&out.stderr)
    );
    assert!(report.contains(" 0 failed, 0 skipped"), "{report}");
}

/// A match of two engines (TOML lines each) in `game` through `tourney run`: finished, no
/// game lost by an engine failing.
fn plays(dir: &Path, game: &str, first: &str, second: &str) {
    let file = dir.join(format!("{game}.toml"));
    let cap = if game == "amazons" {
        "\nadjudication = { max_plies = 30 }"
    } else {
        ""
    };
    std::fs::write(
        &file,
        format!(
            "name = \"examples\"\ngame = \"{game}\"\nformat = \"match\"\npairs = 2\n\
             openings = {{ plies = 2, seed = 5 }}\nlimits = {{ movetime = 500 }}{cap}\n\n\
             [[engine]]\nname = \"first\"\n{first}\n\n[[engine]]\nname = \"second\"\n{second}\n"
        ),
    )
    .unwrap();
    let data = dir.join(format!("data-{game}"));
    let out = tourney(&[
        "run",
        file.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--concurrency",
        "1",
    ]);
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}{}", text(&out.stderr));
    assert!(report.contains("finished"), "{report}");
    for failure in ["illegal", "crash", "unfit", "time forfeit", "unresponsive"] {
        assert!(!report.contains(failure), "{failure}: {report}");
    }
}

#[test]
fn the_c_codingame_bot_passes_its_checks_and_plays_both_games() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("codingame_bot");
    let built = Command::new("cc")
        .args(["-O2", "-o"])
        .arg(&bot)
        .arg(examples().join("c/codingame_bot.c"))
        .output()
        .expect("cc runs");
    assert!(built.status.success(), "{}", text(&built.stderr));
    let bot = bot.to_str().unwrap();
    for game in ["loa", "amazons"] {
        passes(&format!("{bot} {game}"), "codingame", game);
        let engine = format!("command = \"{bot} {game}\"\nprotocol = \"codingame\"");
        plays(dir.path(), game, &engine, "player = \"random\"");
    }
}

#[test]
fn the_python_engines_pass_their_checks_and_play() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3 on the PATH for the Python examples");
        return;
    }
    let loa = examples().join("python/random_loa.py");
    let gtp = examples().join("python/gtp_amazons.py");
    let (loa, gtp) = (loa.to_str().unwrap(), gtp.to_str().unwrap());
    for protocol in ["tourney", "ugi", "uci"] {
        passes(
            &format!("python3 {loa} --protocol {protocol}"),
            protocol,
            "loa",
        );
    }
    passes(&format!("python3 {gtp}"), "gtp", "amazons");
    let dir = tempfile::tempdir().unwrap();
    let ugi = format!("command = \"python3 {loa} --protocol ugi\"\nprotocol = \"ugi\"");
    let uci = format!("command = \"python3 {loa} --protocol uci\"\nprotocol = \"uci\"");
    plays(dir.path(), "loa", &ugi, &uci);
    let gtp = format!("command = \"python3 {gtp}\"\nprotocol = \"gtp\"");
    plays(dir.path(), "amazons", &gtp, "player = \"random\"");
}

#[test]
fn run_plays_the_docs_script_engine_from_its_own_directory() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3 on the PATH for the Python examples");
        return;
    }
    // docs/engines.md's engine table as written, run as a user would: in the tournament
    // file's directory, with a relative `--data`.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("examples/python")).unwrap();
    std::fs::copy(
        examples().join("python/random_loa.py"),
        dir.path().join("examples/python/random_loa.py"),
    )
    .unwrap();
    let engine = "name = \"mine\"\ncommand = \"python3 examples/python/random_loa.py \
                  --protocol ugi\"\nprotocol = \"ugi\"";
    a_match(dir.path(), "mine", 1, engine);
    let out = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(["run", "mine.toml", "--data", "data"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}{}", text(&out.stderr));
    assert!(report.contains("1 pairs, 2 games"), "{report}");
}

mod common;

/// `dir/<name>.toml`: a LOA match of `pairs` pairs, short games, between the engine of the
/// `[[engine]]` lines `engine` and the built-in random player.
fn a_match(dir: &Path, name: &str, pairs: u32, engine: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ngame = \"loa\"\nformat = \"match\"\npairs = {pairs}\n\
             limits = {{ movetime = 50 }}\nadjudication = {{ max_plies = 40 }}\n\n\
             [[engine]]\n{engine}\n\n[[engine]]\nname = \"random\"\nplayer = \"random\"\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_script_engine_is_uploaded_with_its_script_and_a_dying_one_pauses_with_its_stderr() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3 on the PATH for the Python examples");
        return;
    }
    // The docs' engine table as written, the script beside the tournament file, and a
    // worker whose working directory has no such script: only the upload brings it.
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("engines/py")).unwrap();
    std::fs::copy(
        examples().join("python/random_loa.py"),
        project.join("engines/py/random_loa.py"),
    )
    .unwrap();
    std::fs::write(
        project.join("engines/py/broken.py"),
        "import sys\nsys.stderr.write('ModuleNotFoundError: numpy\\n')\nsys.exit(1)\n",
    )
    .unwrap();
    let file = |name: &str, script: &str| {
        let engine = format!(
            "name = \"py\"\ncommand = \"python3 {script} --protocol ugi\"\nprotocol = \"ugi\""
        );
        a_match(&project, name, 2, &engine)
    };
    let (good, broken) = (
        file("script", "engines/py/random_loa.py"),
        file("broken", "./engines/py/broken.py"),
    );
    let (mut coordinator, port) = common::start_coordinator(0, &dir.path().join("data"));
    // The worker's own directory holds another script at the same path: the uploaded one,
    // whose sha256 the report names, must be what plays.
    let elsewhere = dir.path().join("worker");
    std::fs::create_dir_all(elsewhere.join("engines/py")).unwrap();
    std::fs::write(
        elsewhere.join("engines/py/random_loa.py"),
        "import sys\nsys.stderr.write('the worker directory copy ran\\n')\nsys.exit(1)\n",
    )
    .unwrap();
    let mut worker = common::worker_with_cache(port, "w", &dir.path().join("cache"))
        .arg("--allow-root-engines")
        .current_dir(&elsewhere)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let id = common::submit(port, &good);
    let end = common::wait_for(port, &id, "the script's match to end", |s| {
        s["state"] == "finished" || s["state"] == "paused"
    });
    assert_eq!(end["state"], "finished", "{end}");
    assert_eq!(end["games"], 4);
    let report = common::admin(port, &["report", &id]);
    assert!(
        report.contains(
            "protocol ugi, python3 from each worker's PATH, files engines/py/random_loa.py"
        ),
        "{report}"
    );
    let id = common::submit(port, &broken);
    let paused = common::wait_for(port, &id, "the broken script to pause", |s| {
        s["state"] == "paused"
    });
    let reason = paused["paused_reason"].as_str().unwrap();
    assert!(
        reason.contains("before 'ugiok'; its stderr ends: ModuleNotFoundError: numpy"),
        "{reason}"
    );
    a_script_version_carries_its_script(port, &project);
    a_missing_script_is_refused(port, &project);
    worker.kill().unwrap();
    coordinator.kill().unwrap();
    let _ = (worker.wait(), coordinator.wait());
}

/// `tourney <args>` as the admin of the coordinator on `port`, working in `dir`.
fn admin_in(dir: &Path, port: u16, args: &[&str]) -> Output {
    common::tourney()
        .args(args)
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", "admin-secret")
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A version registered in `project` whose command names a script there has the script
/// uploaded with it, and a test of it plays on a worker working elsewhere.
fn a_script_version_carries_its_script(port: u16, project: &Path) {
    let command = "python3 engines/py/random_loa.py --protocol ugi";
    let args = ["version", "add", "py-1", "--command", command];
    let added = admin_in(project, port, &[&args[..], &["--protocol", "ugi"]].concat());
    assert!(added.status.success(), "{}", text(&added.stderr));
    let shown = common::admin(port, &["version", "show", "py-1", "--json"]);
    let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
    let files = shown["files"].as_object().expect("files");
    let sha = tourney_model::sha256_hex(
        &std::fs::read(project.join("engines/py/random_loa.py")).unwrap(),
    );
    assert_eq!(
        files.get("engines/py/random_loa.py"),
        Some(&sha.into()),
        "{shown}"
    );
    let test = a_match(project, "version", 1, "version = \"py-1\"");
    let id = common::submit(port, &test);
    let end = common::wait_for(port, &id, "the version's match to end", |s| {
        s["state"] == "finished" || s["state"] == "paused"
    });
    assert_eq!(end["state"], "finished", "{end}");
}

/// A command whose script is not there is refused by `submit` (at the line of the engine's
/// `command`) and `version add`, naming the script, where it was looked for and the file of
/// the nearest name; nothing is submitted.
fn a_missing_script_is_refused(port: u16, project: &Path) {
    let command = "python3 engines/py/random_lao.py --protocol ugi";
    let engine = format!("name = \"typo\"\ncommand = \"{command}\"\nprotocol = \"ugi\"");
    let file = a_match(project, "typo", 1, &engine);
    let out = admin_in(project, port, &["submit", file.to_str().unwrap()]);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    let missing = project.join("engines/py/random_lao.py");
    let said = text(&out.stderr);
    for part in [
        format!("{}:10: engine[0].command: ", file.display()),
        format!(
            "script 'engines/py/random_lao.py' not found: no file {}",
            missing.display()
        ),
        "; did you mean 'engines/py/random_loa.py'?".to_string(),
    ] {
        assert!(said.contains(&part), "{part}: {said}");
    }
    let out = admin_in(
        project,
        port,
        &["version", "add", "typo", "--command", command],
    );
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("--command") && said.contains("no file ./engines/py/random_lao.py"),
        "{said}"
    );
    let listed = common::admin(port, &["status", "--json"]);
    assert!(!listed.contains("\"typo\""), "{listed}");
}

/// A loopback HTTP server answering every GET with `body`; its address.
fn serve_file(body: Vec<u8>) -> String {
    use std::io::{BufRead, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
            while reader.read_line(&mut String::new()).is_ok_and(|n| n > 2) {}
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(&body);
        }
    });
    addr
}

#[test]
fn a_linked_data_file_reaches_the_engine_and_a_wrong_hash_pauses_the_test() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3 on the PATH for the Python examples");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let net: Vec<u8> = (0..3u32 << 20).map(|i| (i % 251) as u8).collect();
    let sha = tourney_model::sha256_hex(&net);
    let url = format!("http://{}/nets/net.bin", serve_file(net));
    std::fs::copy(
        examples().join("python/random_loa.py"),
        dir.path().join("random_loa.py"),
    )
    .unwrap();
    // The object store is on loopback, as the fleet's own hosts are: linked only because
    // the operator allows it.
    let data = dir.path().join("data");
    let (mut coordinator, port) =
        common::start_coordinator_with(0, &data, &["--allow-link-host", "127.0.0.1"]);
    let linked = common::admin(port, &["link", &url, "--sha256", &sha]);
    assert_eq!(linked.trim(), sha);
    let wrong = "0".repeat(64);
    common::admin(port, &["link", &url, "--sha256", &wrong]);
    let file = |name: &str, sha: &str| {
        let engine = format!(
            "name = \"net\"\ncommand = \"python3 random_loa.py\"\nfiles = {{ \"net.bin\" = \"{sha}\" }}"
        );
        a_match(dir.path(), name, 1, &engine)
    };
    let cache = dir.path().join("cache");
    let mut worker = common::worker_with_cache(port, "w", &cache)
        .arg("--allow-root-engines")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let id = common::submit(port, &file("linked", &sha));
    let end = common::wait_for(port, &id, "the linked net's match", |s| {
        s["state"] == "finished" || s["state"] == "paused"
    });
    assert_eq!(end["state"], "finished", "{end}");
    let cached = std::fs::read_dir(cache.join("files"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy() == sha);
    assert!(cached, "the net is in the host's cache under its sha256");
    let id = common::submit(port, &file("wrong", &wrong));
    let paused = common::wait_for(port, &id, "the wrong hash to pause", |s| {
        s["state"] == "paused"
    });
    let reason = paused["paused_reason"].as_str().unwrap();
    assert!(reason.contains("does not match its sha256"), "{reason}");
    worker.kill().unwrap();
    coordinator.kill().unwrap();
    let _ = (worker.wait(), coordinator.wait());
}
