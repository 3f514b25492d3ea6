//! From a commit to a verdict, on a real cluster on loopback: engines built from commits of
//! a small C engine kept in a local git repository, by two workers sharing one host cache;
//! an SPRT between two commits decided through `submit --wait`; a commit whose bench
//! signature is not the registered one refused and its tournament paused; and a build that
//! fails, a repository that cannot be fetched and a commit that does not exist, each said
//! where the user looks.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;
use tourney_tests::git::sh;
use tourney_tests::process::Reaped;

/// Commits an engine that is `tourney engine SPEC` behind a C program of its own (so the
/// build is a real compile), tagged `tag`.
fn commit_engine(repo: &Path, spec: &str, tag: &str) {
    let source = format!(
        "#include <unistd.h>\n\
         int main(void) {{\n\
             execl(\"{}\", \"tourney\", \"engine\", \"{spec}\", (char *)0);\n\
             return 127;\n\
         }}\n",
        env!("CARGO_BIN_EXE_tourney")
    );
    std::fs::write(repo.join("engine.c"), source).unwrap();
    sh(
        repo,
        &format!("git add engine.c && git commit -q -m '{tag}' && git tag {tag}"),
    );
}

/// `tourney submit FILE --wait` as the admin: its exit code and stdout.
fn submit_wait(port: u16, dir: &Path, name: &str, text: &str) -> (Option<i32>, String) {
    let file = dir.join(name);
    std::fs::write(&file, text).unwrap();
    let out = as_admin(port, &["submit", file.to_str().unwrap(), "--wait"]);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    (out.status.code(), format!("{stdout}{stderr}"))
}

/// A tournament of two versions: an SPRT, or a match of `pairs` pairs.
fn versions_file(first: &str, second: &str, pairs: Option<u64>) -> String {
    let format = match pairs {
        Some(n) => format!("format = \"match\"\npairs = {n}\n"),
        None => "format = \"sprt\"\nsprt = { elo0 = 0, elo1 = 200 }\n".to_string(),
    };
    format!(
        "name = \"{first}-vs-{second}\"\ngame = \"loa\"\n{format}\
         openings = {{ plies = 2, seed = 1 }}\nlimits = {{ depth = 1 }}\n\
         adjudication = {{ max_plies = 150 }}\n\n\
         [[engine]]\nversion = \"{first}\"\n\n[[engine]]\nversion = \"{second}\"\n"
    )
}

#[test]
fn commits_are_built_once_per_host_decided_by_sprt_and_a_wrong_bench_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("engine");
    std::fs::create_dir(&repo).unwrap();
    sh(&repo, "git init -q -b main .");
    commit_engine(&repo, "random", "one");
    commit_engine(&repo, "ab:depth=2", "two");
    commit_engine(&repo, "ab:depth=2,connectedness=80", "three");
    let url = format!("file://{}", repo.display());
    let build = "cc -O1 -o engine engine.c".to_string();

    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // Two workers of one host, sharing its cache.
    let cache = dir.path().join("host-cache");
    let _workers: Vec<Reaped> = ["host-a", "host-a-2"]
        .iter()
        .map(|name| {
            let mut worker = worker_with_cache(port, name, &cache);
            worker.arg("--allow-root-engines");
            Reaped(
                worker
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    let add = |name: &str, tag: &str, extra: &[&str]| {
        let mut args = vec![
            "version", "add", name, "--git", &url, "--commit", tag, "--build", &build, "--binary",
            "engine",
        ];
        args.extend_from_slice(extra);
        admin(port, &args)
    };
    add("v1", "one", &[]);
    add("v2", "two", &["--parent", "v1"]);
    add("v3", "three", &["--parent", "v2", "--bench", "12345"]);
    let listed = admin(port, &["version", "list"]);
    let commit_two = sh(&repo, "git rev-parse two");
    assert!(
        listed.contains(&commit_two),
        "the tag is stored as its commit: {listed}"
    );

    // The patch (v2) against its base (v1): H1, exit 0.
    let started = std::time::Instant::now();
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "sprt.toml",
        &versions_file("v2", "v1", None),
    );
    eprintln!(
        "submit --wait to verdict: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("finished, H1 accepted"), "{out}");
    // v2's signature was taken from the first worker that measured it, and shown.
    let shown = admin(port, &["version", "show", "v2"]);
    let bench_line = shown.lines().find(|l| l.starts_with("bench")).unwrap();
    assert!(bench_line.ends_with(" nodes"), "{shown}");
    assert!(shown.contains("host-a"), "a worker's check: {shown}");

    // v3's registered signature is wrong: refused on both workers, its tournament paused.
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "v3.toml",
        &versions_file("v3", "v1", Some(4)),
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains(": paused ("), "{out}");
    assert!(
        out.contains("bench signature mismatch: expected 12345 nodes, this worker found "),
        "{out}"
    );
    let shown = admin(port, &["version", "show", "v3"]);
    assert!(
        shown.contains("refused") && shown.contains("expected 12345"),
        "{shown}"
    );

    // The CI script of docs/examples on the same two commits: it registers them under
    // names of its own (built already: the host's cache has them) and exits by the verdict.
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/examples/tourney-sprt.sh"
    );
    let verdict = dir.path().join("verdict.txt");
    let out = Command::new("bash")
        .arg(script)
        .current_dir(dir.path())
        .env("TOURNEY", env!("CARGO_BIN_EXE_tourney"))
        .env("TOURNEY_COORDINATOR", format!("http://127.0.0.1:{port}"))
        .env("TOURNEY_TOKEN", "admin-secret")
        .env("BASE_REPO", &url)
        .env("BASE_SHA", sh(&repo, "git rev-parse one"))
        .env("HEAD_REPO", &url)
        .env("HEAD_SHA", &commit_two)
        .env("BUILD", &build)
        .env("BINARY", "engine")
        .env("ELO1", "200")
        .env("LIMITS", "{ depth = 1 }")
        .env("OPENINGS", "{ plies = 2, seed = 1 }")
        .env("VERDICT_FILE", &verdict)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{said}");
    let summary = std::fs::read_to_string(&verdict).unwrap();
    assert!(
        summary
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("H1 accepted"),
        "{summary}"
    );
    let listed = admin(port, &["version", "list"]);
    assert!(
        listed.contains(&format!("pr-{}", &commit_two[..12])),
        "{listed}"
    );

    // Each commit built once on this host, whichever worker got there first: one entry
    // each in the host cache, each log written once.
    let logs = || -> Vec<(std::path::PathBuf, std::time::SystemTime)> {
        let mut logs: Vec<_> = std::fs::read_dir(cache.join("builds"))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path().join("build.log"))
            .filter_map(|log| Some((log.clone(), log.metadata().ok()?.modified().ok()?)))
            .collect();
        logs.sort();
        logs
    };
    let built = logs();
    assert_eq!(built.len(), 3, "{built:?}");
    // A second tournament of the same commits builds nothing.
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "again.toml",
        &versions_file("v2", "v1", Some(2)),
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(logs(), built, "nothing built again");

    // Its games replay with the build the host cache holds (the record names only
    // `git:URL@COMMIT`), and say where to look when the cache is not this host's.
    // `submit --wait` prints the id first.
    let id = out.lines().next().unwrap_or_default().trim().to_string();
    assert!(id.parse::<u64>().is_ok(), "{out}");
    let cache_arg = cache.to_str().unwrap();
    let args = ["replay", &id, "0", "0", "--ply", "2", "--cache", cache_arg];
    let replayed = as_admin(port, &args);
    let said = String::from_utf8_lossy(&replayed.stdout);
    assert!(
        replayed.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&replayed.stderr)
    );
    assert!(
        said.contains(&format!("with `{}/builds/", cache.display())) && said.contains("(legal)"),
        "{said}"
    );
    let elsewhere = dir.path().join("no-cache");
    let args = [
        "replay",
        &id,
        "0",
        "0",
        "--ply",
        "2",
        "--cache",
        elsewhere.to_str().unwrap(),
    ];
    let failed = as_admin(port, &args);
    let e = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success() && e.contains("is not built in the host cache"),
        "{e}"
    );
}

#[test]
fn a_failed_build_a_lost_repository_and_a_missing_commit_are_said_where_users_look() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("engine");
    std::fs::create_dir(&repo).unwrap();
    sh(&repo, "git init -q -b main .");
    commit_engine(&repo, "random", "good");
    std::fs::write(repo.join("engine.c"), "int main(void) { return 0 }\n").unwrap();
    sh(&repo, "git commit -q -am broken && git tag broken");
    let url = format!("file://{}", repo.display());
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let mut worker = worker_with_cache(port, "host-b", &dir.path().join("cache"));
    worker.arg("--allow-root-engines");
    let _worker = Reaped(
        worker
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let add = |name: &str, git: &str, rev: &str| {
        as_admin(
            port,
            &[
                "version",
                "add",
                name,
                "--git",
                git,
                "--commit",
                rev,
                "--build",
                "cc -o engine engine.c",
                "--binary",
                "engine",
            ],
        )
    };
    // A data file: the engine of commit `reads-file` plays the player its `spec.txt` names,
    // a file uploaded with the version and placed in its working directory.
    let reader = format!(
        "#include <stdio.h>\n#include <string.h>\n#include <unistd.h>\n\
         int main(void) {{\n\
             char spec[64] = {{0}};\n\
             FILE *f = fopen(\"spec.txt\", \"r\");\n\
             if (!f || !fgets(spec, sizeof spec, f)) return 126;\n\
             spec[strcspn(spec, \"\\n\")] = 0;\n\
             execl(\"{}\", \"tourney\", \"engine\", spec, (char *)0);\n\
             return 127;\n\
         }}\n",
        env!("CARGO_BIN_EXE_tourney")
    );
    std::fs::write(repo.join("engine.c"), reader).unwrap();
    sh(&repo, "git commit -q -am reads-file && git tag reads-file");
    let spec = dir.path().join("spec.txt");
    std::fs::write(&spec, "random\n").unwrap();
    let with_file = as_admin(
        port,
        &[
            "version",
            "add",
            "with-file",
            "--git",
            &url,
            "--commit",
            "reads-file",
            "--build",
            "cc -o engine engine.c",
            "--binary",
            "engine",
            "--file",
            &format!("spec.txt={}", spec.display()),
        ],
    );
    assert!(
        with_file.status.success(),
        "{}",
        String::from_utf8_lossy(&with_file.stderr)
    );
    assert!(admin(port, &["version", "show", "with-file"]).contains("file       spec.txt"));

    // A commit that does not exist, and a repository that cannot be fetched: the CLI says
    // which, and registers nothing.
    let missing = add("nope", &url, "0123456789abcdef0123456789abcdef01234567");
    assert!(!missing.status.success());
    let said = String::from_utf8_lossy(&missing.stderr);
    assert!(said.contains("has no commit 0123456789abcdef"), "{said}");
    let gone = add("gone", "file:///nonexistent/engine", "main");
    assert!(String::from_utf8_lossy(&gone.stderr).contains("cannot be fetched"));
    assert!(!admin(port, &["version", "list"]).contains("nope"));

    // A build that fails pauses its tournament at once, with the reason in the CLI's
    // summary, the status and the report, and the end of the compiler's log for its author
    // and admins (`submit --wait` and `status` print it; the report does not).
    assert!(add("good", &url, "good").status.success());
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "f.toml",
        &versions_file("with-file", "good", Some(2)),
    );
    assert_eq!(code, Some(0), "the engine found its file: {out}");
    assert!(add("broken", &url, "broken").status.success());
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "b.toml",
        &versions_file("broken", "good", Some(2)),
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("the build failed") && out.contains("error:"),
        "{out}"
    );
    let id = out.lines().next().unwrap().trim().to_string();
    let status = status(port, &id);
    let reason = status["paused_reason"].as_str().unwrap();
    assert!(
        reason.contains("engine broken could not play") && !reason.contains("error:"),
        "{reason}"
    );
    let log = status["paused_log"].as_str().unwrap();
    assert!(log.contains("error:"), "{log}");
    let report = admin(port, &["report", &id]);
    assert!(
        report.contains("the build failed") && !report.contains(log.trim()),
        "{report}"
    );
    let shown = admin(port, &["version", "show", "broken"]);
    assert!(
        shown.contains("refused") && shown.contains("the build failed"),
        "{shown}"
    );
    // Nothing was lost: no game was played or counted.
    assert_eq!(status["pairs_done"], 0);

    // A repository that goes away after registration: the worker cannot fetch it and
    // says so; with no other worker, the tournament pauses with the reason.
    let copy = dir.path().join("copy");
    sh(
        dir.path(),
        &format!("git clone -q {} {}", repo.display(), copy.display()),
    );
    assert!(
        add("moved", &format!("file://{}", copy.display()), "good")
            .status
            .success()
    );
    std::fs::remove_dir_all(&copy).unwrap();
    let (code, out) = submit_wait(
        port,
        dir.path(),
        "m.toml",
        &versions_file("moved", "good", Some(2)),
    );
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("engine moved could not play on worker host-b")
            && out.contains(": fetching file://"),
        "{out}"
    );
}
