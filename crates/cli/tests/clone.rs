//! `tourney clone`: a submitted SPRT rescheduled at a longer clock from a directory that
//! has none of its files, keeping its engines' commit, program, data file and openings;
//! and the errors a user meets (a viewer's token, an unknown test, a bad clock, an unknown
//! preset, bounds the SPRT refuses). A version line's presets, with their book, engine
//! options, per-move limits and threads, change a test at `submit` and `clone`. On the dashboard, a finished SPRT that accepted H1
//! offers **Reschedule as LTC**: the New test form at six times its clock with the LTC
//! bounds, which submits.

mod common;

use std::path::Path;

use common::*;
use tourney_proto::v1 as pb;
use tourney_tests::git::sh;
use tourney_tests::process::{Reaped, output_with_stdin};
use tourney_tests::webdriver::Browser;

/// The tournament file: an engine from a branch of `repo`, an uploaded program with a data
/// file, and an openings file played shuffled from an offset.
fn stc_file(repo: &Path) -> String {
    format!(
        r#"# the patch at STC
name = "patch STC"
game = "loa"
format = "sprt"
sprt = {{ elo0 = 0, elo1 = 2, max_pairs = 1000 }}
openings = {{ file = "book.txt", format = "moves", order = "random", seed = 3, offset = 1 }}
limits = {{ tc = "10+0.1", nodes = 5000 }}

[[engine]]
name = "patch"
git = "file://{}"
commit = "main"
build = "true"
binary = "engine"

[[engine]]
name = "base"
command = "./engine.sh"
files = {{ "nn.bin" = "nn.bin" }}
"#,
        repo.display()
    )
}

/// What the coordinator on `port` gives to clone tournament `id` (Admin/GetFile).
fn get_file(port: u16, id: &str) -> pb::GetFileResponse {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let channel = tourney_worker::connect(&format!("http://127.0.0.1:{port}"), None)
            .await
            .unwrap();
        let token = tourney_worker::TokenInterceptor::new(Some("admin-secret"));
        let mut admin = pb::admin_client::AdminClient::with_interceptor(channel, token);
        let id = id.parse().unwrap();
        let reply = admin.get_file(pb::GetFileRequest { id }).await;
        reply.unwrap().into_inner()
    })
}

/// `tourney clone ARGS` run in `dir`: its exit status, stdout and stderr.
fn clone_in(port: u16, dir: &Path, args: &[&str]) -> (bool, String, String) {
    clone_as(port, dir, "admin-secret", args)
}

/// [`clone_in`] with `token`.
fn clone_as(port: u16, dir: &Path, token: &str, args: &[&str]) -> (bool, String, String) {
    let out = tourney()
        .arg("clone")
        .args(args)
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", token)
        .current_dir(dir)
        .output()
        .unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn a_passed_stc_is_rescheduled_as_its_ltc_from_another_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, project, elsewhere) = (
        tmp.path().join("repo"),
        tmp.path().join("project"),
        tmp.path().join("elsewhere"),
    );
    for dir in [&repo, &project, &elsewhere] {
        std::fs::create_dir_all(dir).unwrap();
    }
    sh(&repo, "git init -q -b main . && echo one > a && git add a");
    sh(&repo, "git commit -q -m one");
    let built_at = sh(&repo, "git rev-parse HEAD");
    std::fs::write(project.join("stc.toml"), stc_file(&repo)).unwrap();
    std::fs::write(project.join("book.txt"), "b1-b3\nc1-c3\nd1-d3\n").unwrap();
    std::fs::write(project.join("nn.bin"), "weights").unwrap();
    let program = project.join("engine.sh");
    std::fs::write(&program, "#!/bin/sh\nexec tourney engine ab\n").unwrap();
    sh(&project, "chmod +x engine.sh");

    let (coordinator, port) = start_coordinator(0, &tmp.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let stc = submit(port, &project.join("stc.toml"));
    let original = get_file(port, &stc);
    assert_eq!(original.commits["patch"], built_at);
    assert_eq!(original.files.len(), 1, "{:?}", original.files);
    assert!(original.artifacts.contains_key("base"), "{original:?}");
    let played: Vec<&str> = original.openings.lines().collect();
    assert_eq!(played.len(), 3, "{}", original.openings);

    // The branch moves on and the project's files are gone: the clone needs neither.
    sh(&repo, "echo two > a && git commit -q -am two");
    std::fs::remove_dir_all(&project).unwrap();
    let (ok, out, err) = clone_in(
        port,
        &elsewhere,
        &[
            &stc,
            "--tc",
            "60+0.6",
            "--no-move-limits",
            "--preset",
            "ltc",
            "--name",
            "patch LTC",
        ],
    );
    assert!(ok, "{err}");
    let ltc = out.trim().to_string();
    assert_ne!(ltc, stc);
    assert_eq!(status(port, &ltc)["name"], "patch LTC");

    let clone = get_file(port, &ltc);
    assert_eq!(
        clone.commits, original.commits,
        "the same commit, not main's"
    );
    assert_eq!(clone.artifacts, original.artifacts, "the same program");
    assert_eq!(clone.files, original.files, "the same data file");
    assert_eq!(
        clone.openings, original.openings,
        "the same openings, in order"
    );
    let config = tourney_model::tournament::TournamentConfig::parse(&clone.config, "c").unwrap();
    assert_eq!(config.limits.tc.as_deref(), Some("60+0.6"));
    assert_eq!(config.limits.nodes, None);
    let sprt = config.sprt.unwrap();
    assert_eq!((sprt.elo0, sprt.elo1, sprt.max_pairs), (0.5, 2.5, 1000));

    // `--print`: the file alone, commit and data file pinned, nothing submitted.
    let (ok, printed, err) = clone_in(port, &elsewhere, &[&stc, "--max-pairs", "9", "--print"]);
    assert!(ok, "{err}");
    let config = tourney_model::tournament::TournamentConfig::parse(&printed, "p").unwrap();
    assert_eq!(config.sprt.unwrap().max_pairs, 9);
    assert_eq!(config.engines[0].source().unwrap().commit, built_at);
    assert_eq!(config.engines[1].files["nn.bin"], original.files[0].sha256);
    assert_eq!(config.limits.tc.as_deref(), Some("10+0.1"));

    // A viewer may not clone, as on the dashboard.
    admin(port, &["user", "add", "vi", "--role", "viewer"]);
    let viewer = admin(port, &["user", "token", "vi"]);
    let (ok, _, err) = clone_as(port, &elsewhere, viewer.trim(), &[&stc, "--print"]);
    assert!(!ok && err.contains("needs the user role"), "{err}");

    // Errors: an unknown test, a bad clock, bounds of a match, an unknown preset.
    let (ok, _, err) = clone_in(port, &elsewhere, &["999"]);
    assert!(!ok && err.contains("no tournament 999"), "{err}");
    let (ok, _, err) = clone_in(port, &elsewhere, &[&stc, "--tc", "60+x"]);
    assert!(!ok && err.contains("--tc"), "{err}");
    let (ok, _, err) = clone_in(port, &elsewhere, &[&stc, "--preset", "vltc"]);
    assert!(
        !ok && err.contains("--preset") && err.contains("ltc [0.5, 2.5]"),
        "{err}"
    );
    let (ok, _, err) = clone_in(port, &elsewhere, &[&stc, "--elo0", "5"]);
    assert!(!ok && err.contains("sprt.elo1"), "{err}");
}

#[test]
fn a_passed_sprt_is_rescheduled_as_its_ltc_on_the_dashboard() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let _worker = Reaped(start_worker(port, "w1"));
    let file = dir.path().join("stc.toml");
    std::fs::write(
        &file,
        "name = \"patch\"\ngame = \"loa\"\nformat = \"sprt\"\n\
         sprt = { elo0 = 0, elo1 = 200, max_pairs = 300 }\nopenings = { plies = 2, seed = 1 }\n\
         limits = { tc = \"10+0.1\", depth = 1 }\nadjudication = { max_plies = 150 }\n\n\
         [[engine]]\nname = \"patch\"\nplayer = \"ab\"\n\n\
         [[engine]]\nname = \"base\"\nplayer = \"random\"\n",
    )
    .unwrap();
    let passed = as_admin(port, &["submit", file.to_str().unwrap(), "--wait"]);
    assert_eq!(passed.status.code(), Some(0), "H1: {passed:?}");
    let stc = String::from_utf8_lossy(&passed.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    let mut add = tourney();
    add.args(["user", "add", "ann", "--role", "user", "--password-stdin"])
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", "admin-secret");
    assert!(
        output_with_stdin(&mut add, "ann's long password\n")
            .status
            .success()
    );

    let browser = Browser::start(1280, 1400);
    browser.goto(&format!("http://127.0.0.1:{port}/#t={stc}"));
    browser.log_in("ann", "ann's long password");
    browser.wait_for(
        20,
        "Reschedule as LTC on the passed test",
        "return !document.querySelector('#action-reschedule').hidden;",
    );
    browser.click("#action-reschedule");
    let form = browser.wait_for(
        10,
        "the form at LTC",
        "const v = (id) => document.querySelector(id).value; \
         return document.querySelector('#new-test').open && v('#f-tc') === '60+0.6' \
           ? [v('#f-name'), v('#f-elo0'), v('#f-elo1'), v('#f-preset')] : null;",
    );
    assert_eq!(
        form,
        serde_json::json!(["patch LTC", "0.5", "2.5", "0.5,2.5"])
    );
    let invalid = browser.eval(
        "return [...document.querySelectorAll('#new-form :invalid')] \
           .map((e) => `${e.id || e.dataset.field}=${e.value}: ${e.validationMessage}`);",
    );
    assert_eq!(invalid, serde_json::json!([]), "fields the browser refuses");
    browser.click("#new-submit");
    let sent = browser.wait_for(
        30,
        "the LTC submitted",
        "const error = document.querySelector('#new-error').textContent; \
         return !document.querySelector('#new-test').open || error ? error || 'sent' : null;",
    );
    assert_eq!(sent, "sent");
    let ltc = (stc.parse::<u64>().unwrap() + 1).to_string();
    let config =
        tourney_model::tournament::TournamentConfig::parse(&get_file(port, &ltc).config, "l")
            .unwrap();
    assert_eq!(config.name, "patch LTC");
    assert_eq!(config.limits.tc.as_deref(), Some("60+0.6"));
    assert_eq!(config.limits.depth, Some(1));
    let sprt = config.sprt.unwrap();
    assert_eq!((sprt.elo0, sprt.elo1), (0.5, 2.5));
}

/// An SPRT of version `patch` against version `base` at 10+0.1, written in `dir`; its path.
fn patch_against_base(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("stc.toml");
    std::fs::write(
        &file,
        "name = \"patch\"\ngame = \"loa\"\nformat = \"sprt\"\nsprt = { elo0 = 0, elo1 = 2 }\n\
         openings = { plies = 2, seed = 1 }\nlimits = { tc = \"10+0.1\" }\n\n\
         [[engine]]\nversion = \"patch\"\n\n[[engine]]\nversion = \"base\"\n",
    )
    .unwrap();
    file
}

#[test]
fn a_version_line_s_presets_change_its_tests_at_submit_and_clone() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    admin(port, &["version", "add", "base", "--player", "random"]);
    admin(
        port,
        &[
            "version",
            "add",
            "patch",
            "--player",
            "ab",
            "--parent",
            "base",
            "--preset",
            "ltc=tc:30+0.3,elo0:1,elo1:3,max_pairs:777",
            "--preset",
            "urgent=priority:3",
        ],
    );
    let shown = admin(port, &["version", "show", "patch"]);
    assert!(
        shown.contains("preset     ltc: tc:30+0.3,elo0:1,elo1:3,max_pairs:777"),
        "{shown}"
    );
    let bad = as_admin(
        port,
        &[
            "version",
            "add",
            "bad",
            "--player",
            "ab",
            "--preset",
            "x=bookk:a",
        ],
    );
    let said = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && said.contains("--preset") && said.contains("no key 'bookk'"),
        "{said}"
    );

    let file = patch_against_base(dir.path());
    let stc = admin(
        port,
        &["submit", file.to_str().unwrap(), "--preset", "urgent"],
    );
    let stc = stc.trim();
    let parse = |id: &str| {
        tourney_model::tournament::TournamentConfig::parse(&get_file(port, id).config, id).unwrap()
    };
    assert_eq!(parse(stc).priority, 3);

    let (ok, out, err) = clone_in(port, dir.path(), &[stc, "--preset", "ltc"]);
    assert!(ok, "{err}");
    let ltc = parse(out.trim());
    assert_eq!(ltc.limits.tc.as_deref(), Some("30+0.3"));
    let sprt = ltc.sprt.unwrap();
    assert_eq!((sprt.elo0, sprt.elo1, sprt.max_pairs), (1.0, 3.0, 777));
    // A flag changes what the preset sets; a name the line lacks is a bound preset.
    let (ok, out, err) = clone_in(
        port,
        dir.path(),
        &[stc, "--preset", "ltc", "--tc", "40+0.4", "--print"],
    );
    assert!(ok, "{err}");
    let c = tourney_model::tournament::TournamentConfig::parse(&out, "p").unwrap();
    assert_eq!(c.limits.tc.as_deref(), Some("40+0.4"));
    let (ok, out, err) = clone_in(port, dir.path(), &[stc, "--preset", "nonreg", "--print"]);
    assert!(ok, "{err}");
    let c = tourney_model::tournament::TournamentConfig::parse(&out, "p").unwrap();
    assert_eq!(c.sprt.map(|s| (s.elo0, s.elo1)), Some((-1.75, 0.25)));
    let (ok, _, err) = clone_in(port, dir.path(), &[stc, "--preset", "vltc"]);
    assert!(
        !ok && err.contains("version 'patch' has no preset 'vltc'"),
        "{err}"
    );
}

#[test]
fn a_line_s_preset_gives_its_test_a_book_options_limits_and_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let book = dir.path().join("books").join("two.txt");
    std::fs::create_dir_all(book.parent().unwrap()).unwrap();
    std::fs::write(&book, "b1-b3\nc1-c3\n").unwrap();
    admin(port, &["version", "add", "base", "--player", "random"]);
    let preset = format!(
        "ltc=tc:60+0.6,movetime:900,threads:2,option.Hash:64,book:{},book_format:moves",
        book.display()
    );
    add_program_version(
        port,
        "patch",
        &[
            "--option",
            "Hash=16",
            "--option",
            "Ponder=false",
            "--preset",
            &preset,
        ],
    );
    // The book was uploaded; the version names it by its sha256.
    let sha = preset_book(port, "patch");

    let file = patch_against_base(dir.path());
    let id = admin(port, &["submit", file.to_str().unwrap(), "--preset", "ltc"]);
    let got = get_file(port, id.trim());
    let c = tourney_model::tournament::TournamentConfig::parse(&got.config, "ltc").unwrap();
    assert_eq!(c.limits.tc.as_deref(), Some("60+0.6"));
    assert_eq!(c.limits.movetime, Some(900));
    assert_eq!(c.threads, Some(2));
    assert_eq!(c.openings.file.as_deref(), Some(sha.as_str()));
    assert_eq!(
        c.openings.format,
        Some(tourney_model::tournament::OpeningsFormat::Moves)
    );
    assert_eq!(
        got.openings.lines().count(),
        2,
        "the book: {}",
        got.openings
    );
    // The patch's Hash is the preset's, over its version's; the built-in base has none.
    assert_eq!(c.engines[0].options["Hash"].as_str(), Some("64"));
    assert!(c.engines[1].options.is_empty(), "{:?}", c.engines[1]);
    let again = status(port, id.trim());
    assert_eq!(again["openings"], 2, "{again}");

    // Cloned with the preset: the book as uploaded, not the played suite.
    let (ok, out, err) = clone_in(port, dir.path(), &[id.trim(), "--preset", "ltc"]);
    assert!(ok, "{err}");
    let cloned = get_file(port, out.trim());
    assert_eq!(cloned.openings.lines().count(), 2, "{}", cloned.openings);

    // Errors name the preset's key and value.
    for (spec, says) in [
        (
            "x=book:/no/such/book.txt",
            "--preset x: book /no/such/book.txt",
        ),
        ("x=option.Hash", "expected KEY:VALUE"),
        ("x=threads:0", "'threads:0': must be 1 or more"),
        (&format!("x=book:{}", "e".repeat(64)), "book eeeeeeee"),
    ] {
        let out = as_admin(
            port,
            &[
                "version",
                "add",
                "bad",
                "--command",
                "tourney engine ab",
                "--preset",
                spec,
            ],
        );
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && said.contains(says),
            "{spec}: {said}"
        );
    }
}
