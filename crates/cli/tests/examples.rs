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
