//! `tourney bench source`: engines built from source. A C engine (a program that runs
//! `tourney engine SPEC`, compiled with `cc`) is kept in a local git repository, three
//! commits of it; each is made ready as a worker does before its first game, first with
//! the host's build cache empty (fetch, compile, bench) and then with it warm (the cached
//! program, bench): the build's time against the cached start. Then a small SPRT between
//! two of the commits on a coordinator and two worker processes sharing one host cache,
//! timed from `tourney submit --wait` to its verdict.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use tourney_model::TimeControl;
use tourney_model::job::{Engine, EngineKind, GameSettings, PairJob};
use tourney_model::source::Source;
use tourney_rules::{GameKind, Loa, Position};
use tourney_runner::confine::EnginePolicy;

use crate::bench::harness::coordinator_process;

/// The commits: a tag and the built-in player the engine runs.
const COMMITS: [(&str, &str); 3] = [
    ("one", "random"),
    ("two", "ab:depth=2"),
    ("three", "ab:depth=3"),
];

/// Runs git in `dir` as a fixed author.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(["-c", "user.name=bench", "-c", "user.email=bench@localhost"])
        .args(args)
        .current_dir(dir)
        .output()
        .context("git")?;
    if !out.status.success() {
        bail!("git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A repository at `repo` with one tagged commit per entry of [`COMMITS`].
fn repository(repo: &Path) -> Result<()> {
    std::fs::create_dir_all(repo)?;
    git(repo, &["init", "-q", "-b", "main", "."])?;
    let tourney = std::env::current_exe()?;
    for (tag, spec) in COMMITS {
        let source = format!(
            "#include <unistd.h>\nint main(void) {{\n    execl(\"{}\", \"tourney\", \"engine\", \"{spec}\", (char *)0);\n    return 127;\n}}\n",
            tourney.display()
        );
        std::fs::write(repo.join("engine.c"), source)?;
        git(repo, &["add", "engine.c"])?;
        git(repo, &["commit", "-q", "-m", tag])?;
        git(repo, &["tag", tag])?;
    }
    Ok(())
}

/// A pair whose first engine is `source` (against a built-in player).
fn job(source: Source) -> PairJob {
    let engine = |name: &str, kind| Engine {
        name: name.into(),
        kind,
        limits: None,
    };
    PairJob {
        tournament: 1,
        pair: 0,
        settings: GameSettings {
            tournament_name: "bench-source".into(),
            game: GameKind::Loa,
            rules: String::new(),
            time_control: TimeControl::Infinite,
            nodes: Some(1),
            depth: None,
            movetime_ms: None,
            max_plies: None,
            adjudicate: false,
            margin_ms: 100,
            scale_by_speed: false,
            score_rules: Default::default(),
            engine_limits: Default::default(),
            engine_logs: Default::default(),
            engine_openings: false,
        },
        first: engine(
            "source",
            EngineKind::Outside {
                command: String::new(),
                artifact_sha256: None,
                options: Vec::new(),
                source: Some(source),
                files: Vec::new(),
                bench: None,
                reference_nps: None,
                protocol: String::new(),
                threads: 1,
            },
        ),
        second: engine("base", EngineKind::BuiltIn("random".into())),
        opening: Loa::start().to_string(),
        opening_index: 0,
        second_opening: None,
        ticket: String::new(),
        seed: 1,
        gpus: Default::default(),
    }
}

/// Milliseconds `f` takes.
fn timed(f: impl FnOnce() -> Result<(), String>) -> Result<f64> {
    let started = Instant::now();
    f().map_err(anyhow::Error::msg)?;
    Ok(started.elapsed().as_secs_f64() * 1000.0)
}

pub(crate) fn source() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let repo = dir.path().join("engine");
    repository(&repo)?;
    let url = format!("file://{}", repo.display());
    let build = "cc -O2 -o engine engine.c";
    let policy = EnginePolicy {
        allow_root: true,
        ..EnginePolicy::default()
    };
    println!("engines from source: a C engine in a local git repository, `{build}`");
    println!(
        "  {:<8} {:<12} {:>16} {:>16} {:>7}",
        "commit", "runs", "build+bench ms", "cached start ms", "ratio"
    );
    let cache = dir.path().join("host-cache");
    for (tag, spec) in COMMITS {
        let source = Source {
            git: url.clone(),
            commit: git(&repo, &["rev-parse", tag])?,
            build: build.into(),
            binary: "engine".into(),
        };
        let cold = timed(|| tourney_worker::ready_here(&mut job(source.clone()), &cache, &policy))?;
        let warm = timed(|| tourney_worker::ready_here(&mut job(source.clone()), &cache, &policy))?;
        println!(
            "  {tag:<8} {spec:<12} {cold:>16.0} {warm:>16.0} {:>6.1}x",
            cold / warm
        );
    }
    verdict(dir.path(), &url, build)
}

/// The time from `tourney submit --wait` to the verdict of an SPRT of commit `two`
/// against commit `one`, on a coordinator and two workers of one host.
fn verdict(dir: &Path, url: &str, build: &str) -> Result<()> {
    let (mut coordinator, port) = coordinator_process(&dir.join("data"), &[])?;
    let address = format!("http://127.0.0.1:{port}");
    let tourney = std::env::current_exe()?;
    let mut workers = Vec::new();
    for name in ["bench-a", "bench-b"] {
        let cache = dir.join("cluster-cache");
        workers.push(
            Command::new(&tourney)
                .args([
                    "worker",
                    "--coordinator",
                    &address,
                    "--concurrency",
                    "1",
                    "--name",
                    name,
                ])
                .arg("--cache")
                .arg(&cache)
                .arg("--allow-root-engines")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?,
        );
    }
    let admin = |args: &[&str]| -> Result<std::process::Output> {
        Ok(Command::new(&tourney)
            .args(args)
            .args(["--coordinator", &address])
            .output()?)
    };
    for (name, tag) in [("one", "one"), ("two", "two")] {
        let out = admin(&[
            "version", "add", name, "--git", url, "--commit", tag, "--build", build, "--binary",
            "engine",
        ])?;
        if !out.status.success() {
            bail!(
                "version add {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    let file = dir.join("sprt.toml");
    std::fs::write(
        &file,
        "name = \"two-vs-one\"\ngame = \"loa\"\nformat = \"sprt\"\n\
         sprt = { elo0 = 0, elo1 = 200 }\nopenings = { plies = 2, seed = 1 }\n\
         limits = { depth = 1 }\nadjudication = { max_plies = 150 }\n\n\
         [[engine]]\nversion = \"two\"\n\n[[engine]]\nversion = \"one\"\n",
    )?;
    let started = Instant::now();
    let out = admin(&["submit", file.to_str().context("a path")?, "--wait"])?;
    let took = started.elapsed().as_secs_f64();
    let said = String::from_utf8_lossy(&out.stdout);
    println!(
        "submit --wait to verdict (a small SPRT, builds included, 2 workers): {took:.1} s, exit {}",
        out.status.code().unwrap_or(-1)
    );
    println!("  {}", said.lines().last().unwrap_or_default());
    for mut w in workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let _ = coordinator.kill();
    let _ = coordinator.wait();
    Ok(())
}
