//! Every command in the documentation runs (issue 60): the shell blocks of README.md and of
//! every page under docs/ are run as a user would type them, and where a block shows what a
//! command prints, the output must match. A command that fails, times out or prints
//! something else fails this test, and so does a block left out without a reason.
//!
//! The convention (CONTRIBUTING.md, "Commands in the documentation"):
//!
//! - A shell block is a fence of `sh`, `bash`, `shell` or `console`, or a `text` (or
//!   untagged) fence whose first line is a `$ command` transcript. A `text` fence whose
//!   first line is a `tourney` command is an error: tag it `sh`. docs/cli.md's `Usage:`
//!   blocks are not shell blocks: they are synopses with placeholders (`<FILE>`), generated
//!   from `--help` and checked against it by the binary's own `docs` test.
//! - A script (no `$` lines) runs whole under `bash` with `set -euo pipefail`. A transcript
//!   runs each `$ command` (a line ending in `\` goes on on the next) and compares what it
//!   prints (stdout and stderr together, trailing spaces ignored) with the lines under it:
//!   a line `...` stands for any number of lines, and `...` inside a line for any text.
//! - An HTML comment just above the fence, `<!-- doc-test: DIRECTIVE; DIRECTIVE -->`, says
//!   more: `skip — REASON` (not run, and why: the reason is required), `coordinator` (run
//!   with a coordinator and a worker on loopback, reached through `TOURNEY_COORDINATOR`
//!   and the tokens in the environment), `interrupt SECONDS` (Ctrl-C after that long, as
//!   a terminal sends it: SIGINT to the block's processes), `exit N` (the script, or a
//!   transcript's last command, exits with N), `timeout SECONDS` (default 120). Above a
//!   non-shell fence, `file NAME` writes the block into the scratch directory as NAME
//!   before the page's commands run.
//! - The blocks of one page run in order in one scratch directory, which holds copies of
//!   config/, examples/ and docs/, the files of `crates/cli/tests/doc-fixtures/world/`, a
//!   home and a temporary directory, and the `tourney` under test first on the PATH. Git
//!   fetches `https://github.com/me/engine` (the docs' example repository) from a local
//!   repository of `crates/cli/tests/doc-fixtures/engine/`, committed on `main`. Nothing
//!   reaches the network.
//!
//! At least 80 % of the shell blocks must run. `TOURNEY_DOC_TEST=docs/engines.md` runs one
//! page alone (without the coverage check), when changing it.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tourney_tests::process::{Reaped, spawn_listening};

/// The least share of shell blocks that must run, percent.
const COVERAGE_PERCENT: usize = 80;
/// How long a block may run unless its marker says otherwise, seconds.
const DEFAULT_TIMEOUT: u64 = 120;
/// The tokens of the coordinator a `coordinator` block runs with.
const WORKER_TOKEN: &str = "doc-test-worker-token";
const ADMIN_TOKEN: &str = "doc-test-admin-token";
/// The docs' example repository, fetched from the fixture committed on `main`.
const ENGINE_REPOSITORY: &str = "https://github.com/me/engine";
/// The coordinator's default address, where docs/operations.md's quick start serves.
const DEFAULT_COORDINATOR: &str = "127.0.0.1:7070";

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository's root")
}

/// What a marker says of its block.
#[derive(Debug, Clone, PartialEq)]
enum Directive {
    Skip(String),
    Coordinator,
    File(String),
    Interrupt(u64),
    Exit(i32),
    Timeout(u64),
}

/// One directive of a marker, or what is wrong with it.
fn directive(text: &str) -> Result<Directive, String> {
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim();
    match word {
        "skip" | "skip:" | "skip—" => {
            let reason = rest.trim_start_matches(['—', '–', '-', ':']).trim();
            if reason.is_empty() {
                Err("`skip` needs its reason: `skip — why`".into())
            } else {
                Ok(Directive::Skip(reason.to_string()))
            }
        }
        "coordinator" if rest.is_empty() => Ok(Directive::Coordinator),
        "file" if !rest.is_empty() && !rest.contains("..") && !rest.starts_with('/') => {
            Ok(Directive::File(rest.to_string()))
        }
        "interrupt" => rest
            .parse()
            .map(Directive::Interrupt)
            .map_err(|_| format!("`interrupt` needs seconds: '{text}'")),
        "exit" => rest
            .parse()
            .map(Directive::Exit)
            .map_err(|_| format!("`exit` needs a status: '{text}'")),
        "timeout" => rest
            .parse()
            .map(Directive::Timeout)
            .map_err(|_| format!("`timeout` needs seconds: '{text}'")),
        _ => Err(format!("unknown directive '{text}'")),
    }
}

/// The directives of `line` when it is a `<!-- doc-test: ... -->` marker.
fn marker(line: &str) -> Option<Vec<Result<Directive, String>>> {
    let inner = line
        .trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim()
        .strip_prefix("doc-test:")?
        .trim();
    if inner.starts_with("skip") {
        // A reason is free text, `;` included.
        return Some(vec![directive(inner)]);
    }
    Some(
        inner
            .split(';')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(directive)
            .collect(),
    )
}

/// A fenced block of a page.
struct Block {
    /// Its fence's line, from 1.
    line: usize,
    info: String,
    body: Vec<String>,
    directives: Vec<Result<Directive, String>>,
}

impl Block {
    /// Whether it is a shell block: a shell's fence, or a transcript of `$` commands.
    fn is_shell(&self) -> bool {
        matches!(self.info.as_str(), "sh" | "bash" | "shell" | "console") || self.is_transcript()
    }

    /// Whether its commands are `$` lines with their output under them.
    fn is_transcript(&self) -> bool {
        self.body
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| l.starts_with("$ "))
    }

    fn skip_reason(&self) -> Option<&str> {
        self.directives.iter().find_map(|d| match d {
            Ok(Directive::Skip(reason)) => Some(reason.as_str()),
            _ => None,
        })
    }

    fn has(&self, wanted: &Directive) -> bool {
        self.directives.iter().any(|d| d.as_ref() == Ok(wanted))
    }

    fn exit(&self) -> i32 {
        self.directives
            .iter()
            .find_map(|d| match d {
                Ok(Directive::Exit(n)) => Some(*n),
                _ => None,
            })
            .unwrap_or(0)
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(
            self.directives
                .iter()
                .find_map(|d| match d {
                    Ok(Directive::Timeout(n)) => Some(*n),
                    _ => None,
                })
                .unwrap_or(DEFAULT_TIMEOUT),
        )
    }

    fn interrupt(&self) -> Option<Duration> {
        self.directives.iter().find_map(|d| match d {
            Ok(Directive::Interrupt(n)) => Some(Duration::from_secs(*n)),
            _ => None,
        })
    }

    fn file(&self) -> Option<&str> {
        self.directives.iter().find_map(|d| match d {
            Ok(Directive::File(name)) => Some(name.as_str()),
            _ => None,
        })
    }
}

/// The fenced blocks of a Markdown text, each with the marker on the line just above it.
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let trimmed = lines[i].trim_start();
        if let Some(rest) = trimmed.strip_prefix("```") {
            let indent = lines[i].len() - trimmed.len();
            let start = i;
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && lines[i].trim() != "```" {
                let line = lines[i];
                let cut = line.len() - line.trim_start().len();
                body.push(line[cut.min(indent)..].to_string());
                i += 1;
            }
            let directives = start
                .checked_sub(1)
                .and_then(|above| marker(lines[above]))
                .unwrap_or_default();
            found.push(Block {
                line: start + 1,
                info: rest.split_whitespace().next().unwrap_or("").to_string(),
                body,
                directives,
            });
        }
        i += 1;
    }
    found
}

/// A transcript's commands, each with its line and the output shown under it.
fn transcript(body: &[String]) -> Vec<(String, Vec<String>)> {
    let mut steps: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = body.iter();
    while let Some(line) = lines.next() {
        if let Some(command) = line.strip_prefix("$ ") {
            let mut command = command.to_string();
            while command.ends_with('\\') {
                command.push('\n');
                command.push_str(lines.next().map_or("", String::as_str));
            }
            steps.push((command, Vec::new()));
        } else if let Some((_, output)) = steps.last_mut() {
            output.push(line.clone());
        }
    }
    steps
}

/// Whether one output line matches its pattern, where `...` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let (pattern, line) = (pattern.trim_end(), line.trim_end());
    let parts: Vec<&str> = pattern.split("...").collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == line;
    };
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    for piece in middle {
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether `actual` matches the lines `expected`, where a line `...` stands for any lines.
fn output_matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((dots, rest)) if dots.trim() == "..." => {
            (0..=actual.len()).any(|skip| output_matches(rest, &actual[skip..]))
        }
        Some((pattern, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(pattern, line) && output_matches(rest, more)),
    }
}

/// `lines` without the blank lines at their end.
fn trimmed<T: AsRef<str>>(lines: &[T]) -> &[T] {
    let end = lines
        .iter()
        .rposition(|l| !l.as_ref().trim().is_empty())
        .map_or(0, |at| at + 1);
    &lines[..end]
}

/// How a command ended: its exit status (`None`: it ran out of time) and what it printed.
struct Ran {
    status: Option<i32>,
    output: String,
}

/// Runs `script` under bash with `set -euo pipefail` in `dir`, stdout and stderr together,
/// for at most `timeout`, with Ctrl-C (SIGINT to its process group) after `interrupt`;
/// whatever it left running in its process group is killed after.
fn run(script: &str, dir: &Path, env: &[(String, String)], block: &Block) -> Ran {
    let (timeout, mut interrupt) = (block.timeout(), block.interrupt());
    let file = dir.join(".doc-test/block.sh");
    std::fs::write(&file, format!("set -euo pipefail\nexec 2>&1\n{script}\n")).unwrap();
    let mut child = Command::new("bash")
        .arg(&file)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .expect("bash starts");
    let group = child.id() as i32;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status.code();
        }
        if interrupt.is_some_and(|after| started.elapsed() >= after) {
            interrupt = None;
            // SAFETY: kill(2) on the process group this test made for the block.
            unsafe { libc::kill(-group, libc::SIGINT) };
        }
        if started.elapsed() >= timeout {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill(2) on the process group this test made for the block.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    let _ = child.wait();
    Ran {
        status,
        output: reader.join().expect("the output is read"),
    }
}

/// A coordinator and a worker on loopback, for the blocks marked `coordinator`.
struct Fleet {
    _coordinator: Reaped,
    _worker: Reaped,
}

/// The scratch directory of a page, its environment and its fleet once one is needed.
struct Scratch {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
    fleet: Option<Fleet>,
}

impl Scratch {
    fn new() -> Self {
        let root = root();
        let dir = tempfile::Builder::new()
            .prefix("doc-test")
            .tempdir()
            .unwrap();
        let path = dir.path();
        let fixtures = root.join("crates/cli/tests/doc-fixtures");
        for from in ["config", "examples", "docs"] {
            copy(&root.join(from), &path.join(from));
        }
        copy(&fixtures.join("world"), path);
        let own = path.join(".doc-test");
        let (bin, home, cache, tmp) = (
            own.join("bin"),
            own.join("home"),
            own.join("cache"),
            own.join("tmp"),
        );
        for d in [&bin, &home, &cache, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_tourney"), bin.join("tourney")).unwrap();
        // The docs' example repository, committed on `main`, fetched from here.
        let repository = own.join("repos/engine");
        copy(&fixtures.join("engine"), &repository);
        tourney_tests::git::sh(
            &repository,
            "git init -q -b main . && git add -A && git commit -q -m 'the example engine'",
        );
        let gitconfig = home.join(".gitconfig");
        std::fs::write(
            &gitconfig,
            format!(
                "[url \"file://{}\"]\n\tinsteadOf = {ENGINE_REPOSITORY}\n\
                 [user]\n\tname = doc\n\temail = doc@example.org\n",
                repository.display()
            ),
        )
        .unwrap();
        let path_var = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = vec![
            ("PATH".into(), path_var),
            ("HOME".into(), home.display().to_string()),
            ("GIT_CONFIG_GLOBAL".into(), gitconfig.display().to_string()),
            ("XDG_CACHE_HOME".into(), cache.display().to_string()),
            ("LANG".into(), "C.UTF-8".into()),
            ("TERM".into(), "dumb".into()),
            ("TMPDIR".into(), tmp.display().to_string()),
        ];
        Self {
            dir,
            env,
            fleet: None,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Starts the coordinator and the worker, once, and puts them in the environment.
    fn with_fleet(&mut self) {
        if self.fleet.is_some() {
            return;
        }
        let own = self.path().join(".doc-test");
        let tourney = || {
            let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
            command
                .env_clear()
                .envs(self.env.iter().map(|(k, v)| (k, v)))
                .env("TOURNEY_WORKER_TOKEN", WORKER_TOKEN)
                .env("TOURNEY_ADMIN_TOKEN", ADMIN_TOKEN)
                .current_dir(self.path());
            command
        };
        let mut coordinator = tourney();
        coordinator
            .args(["coordinator", "--listen", "127.0.0.1:0", "--data"])
            .arg(own.join("coordinator"))
            .args(["--lease-seconds", "5"]);
        let (coordinator, port) = spawn_listening(coordinator, "coordinator serving");
        let coordinator = Reaped(coordinator);
        let url = format!("http://127.0.0.1:{port}");
        let mut worker = tourney();
        worker
            .args(["worker", "--coordinator", &url, "--concurrency", "2"])
            .args([
                "--name",
                "doc-worker",
                "--metrics",
                "127.0.0.1:0",
                "--cache",
            ])
            .arg(own.join("cache/worker"));
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            // The fixture's outside engines are the docs' own examples.
            worker.arg("--allow-root-engines");
        }
        let (worker, _) = spawn_listening(worker, "metrics serving");
        self.env.extend([
            ("TOURNEY_COORDINATOR".into(), url),
            ("TOURNEY_WORKER_TOKEN".into(), WORKER_TOKEN.into()),
            ("TOURNEY_ADMIN_TOKEN".into(), ADMIN_TOKEN.into()),
        ]);
        self.fleet = Some(Fleet {
            _coordinator: coordinator,
            _worker: Reaped(worker),
        });
    }
}

/// Copies the directory `from` into `to` (made if missing), contents and all.
fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let status = Command::new("cp")
        .arg("-R")
        .arg(format!("{}/.", from.display()))
        .arg(to)
        .status()
        .expect("cp runs");
    assert!(status.success(), "copying {}", from.display());
}

/// The Markdown pages whose commands must run: README.md and every page under docs/.
fn pages() -> Vec<String> {
    let root = root();
    let mut pages = vec!["README.md".to_string()];
    let mut stack = vec![root.join("docs")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                let relative = path.strip_prefix(&root).unwrap();
                pages.push(relative.display().to_string());
            }
        }
    }
    pages[1..].sort();
    pages
}

/// What the test found: counts, skips and failures.
#[derive(Default)]
struct Tally {
    shell: usize,
    run: usize,
    skipped: Vec<String>,
    failures: Vec<String>,
}

/// Checks `page`'s markers and runs its shell blocks.
fn check_page(page: &str, tally: &mut Tally) {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let blocks = blocks(&text);
    let mut scratch: Option<Scratch> = None;
    for block in &blocks {
        let at = format!("{page}:{}", block.line);
        for wrong in block.directives.iter().filter_map(|d| d.as_ref().err()) {
            tally.failures.push(format!("{at}: {wrong}"));
        }
        if !block.is_shell() {
            if block.info == "text"
                && block
                    .body
                    .first()
                    .is_some_and(|l| l.starts_with("tourney "))
            {
                tally
                    .failures
                    .push(format!("{at}: commands in a `text` fence: tag it `sh`"));
            }
            if block
                .directives
                .iter()
                .any(|d| !matches!(d, Ok(Directive::File(_)) | Err(_)))
            {
                tally.failures.push(format!(
                    "{at}: only `file NAME` goes above a block that is not a shell block"
                ));
            }
            continue;
        }
        tally.shell += 1;
        if block.file().is_some() {
            tally.failures.push(format!(
                "{at}: `file` goes above a file's block, not a shell block"
            ));
        }
        if let Some(reason) = block.skip_reason() {
            tally.skipped.push(format!("{at}: {reason}"));
            continue;
        }
        let scratch = scratch.get_or_insert_with(|| {
            let scratch = Scratch::new();
            for file_block in &blocks {
                if let Some(name) = file_block.file() {
                    let path = scratch.path().join(name);
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::write(&path, file_block.body.join("\n") + "\n").unwrap();
                }
            }
            scratch
        });
        if block.has(&Directive::Coordinator) {
            scratch.with_fleet();
        }
        tally.run += 1;
        let started = Instant::now();
        let failure = if block.is_transcript() {
            run_transcript(block, scratch)
        } else {
            run_script(block, scratch)
        };
        println!(
            "{at}: {} in {:.1} s",
            if failure.is_some() { "FAILED" } else { "ran" },
            started.elapsed().as_secs_f64()
        );
        if let Some(failure) = failure {
            tally.failures.push(format!("{at}: {failure}"));
        }
    }
}

/// Runs a script block; what went wrong.
fn run_script(block: &Block, scratch: &Scratch) -> Option<String> {
    let ran = run(&block.body.join("\n"), scratch.path(), &scratch.env, block);
    match ran.status {
        Some(code) if code == block.exit() => None,
        Some(code) => Some(format!(
            "the block exited with {code}, not {}:\n{}",
            block.exit(),
            ran.output
        )),
        None => Some(format!(
            "the block ran out of its {} s:\n{}",
            block.timeout().as_secs(),
            ran.output
        )),
    }
}

/// Runs a transcript's commands in turn, comparing their output; what went wrong.
fn run_transcript(block: &Block, scratch: &Scratch) -> Option<String> {
    let steps = transcript(&block.body);
    for (n, (command, expected)) in steps.iter().enumerate() {
        let ran = run(command, scratch.path(), &scratch.env, block);
        let wanted = if n + 1 == steps.len() {
            block.exit()
        } else {
            0
        };
        let actual: Vec<&str> = ran.output.lines().collect();
        if ran.status != Some(wanted) {
            let how = ran.status.map_or("ran out of time".to_string(), |c| {
                format!("exited with {c}")
            });
            return Some(format!("`{command}` {how}, not {wanted}:\n{}", ran.output));
        }
        let expected = trimmed(expected);
        if !expected.is_empty() && !output_matches(expected, trimmed(&actual)) {
            return Some(format!(
                "`{command}` printed something else.\n--- the docs show\n{}\n--- it printed\n{}",
                expected.join("\n"),
                ran.output
            ));
        }
    }
    None
}

#[test]
fn every_documented_command_runs() {
    let only = std::env::var("TOURNEY_DOC_TEST").ok();
    assert!(
        std::net::TcpStream::connect(DEFAULT_COORDINATOR).is_err(),
        "something serves {DEFAULT_COORDINATOR}, where the quick start of docs/operations.md \
         starts its coordinator: stop it first"
    );
    let mut tally = Tally::default();
    for page in pages() {
        if only.as_ref().is_some_and(|only| *only != page) {
            continue;
        }
        check_page(&page, &mut tally);
    }
    println!(
        "doc commands: {} of {} shell blocks run ({} skipped)",
        tally.run,
        tally.shell,
        tally.skipped.len()
    );
    for skipped in &tally.skipped {
        println!("  skipped {skipped}");
    }
    assert!(
        tally.failures.is_empty(),
        "{} documented commands failed:\n\n{}",
        tally.failures.len(),
        tally.failures.join("\n\n")
    );
    if only.is_none() {
        assert!(
            tally.run * 100 >= tally.shell * COVERAGE_PERCENT,
            "only {} of {} shell blocks run: at least {COVERAGE_PERCENT} % must",
            tally.run,
            tally.shell
        );
    }
}

#[test]
fn outputs_match_with_elisions() {
    let lines = |text: &str| text.lines().map(String::from).collect::<Vec<_>>();
    let expected = lines("PASS  handshake  in ... ms\n...\n14 of 14 checks passed");
    let actual = [
        "PASS  handshake  in 219 ms",
        "a",
        "b",
        "14 of 14 checks passed",
    ];
    assert!(output_matches(&expected, &actual));
    assert!(!output_matches(&expected, &actual[..3]));
    assert!(!output_matches(&lines("in ... ms"), &["in 2 s"]));
    assert!(output_matches(&lines("55963132"), &["55963132  "]));
    assert!(!output_matches(&lines("55963132"), &["55963133"]));
    assert!(output_matches(&lines("a\n..."), &["a"]));
}

#[test]
fn markers_need_reasons() {
    assert_eq!(
        marker("<!-- doc-test: skip — needs a Kubernetes cluster -->"),
        Some(vec![Ok(Directive::Skip(
            "needs a Kubernetes cluster".into()
        ))])
    );
    assert!(marker("<!-- doc-test: skip -->").unwrap()[0].is_err());
    assert_eq!(
        marker("<!-- doc-test: coordinator; exit 1; timeout 30 -->"),
        Some(vec![
            Ok(Directive::Coordinator),
            Ok(Directive::Exit(1)),
            Ok(Directive::Timeout(30))
        ])
    );
    assert!(marker("<!-- doc-test: coordinatr -->").unwrap()[0].is_err());
    assert_eq!(marker("<!-- a comment -->"), None);
}
