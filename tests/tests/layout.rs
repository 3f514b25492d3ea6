//! The source layout ARCHITECTURE.md promises: no source file over 800 lines outside the
//! tests, and no two files of a crate importing each other, directly or round a circle (a
//! file may use what its parent module defines: a folder is one unit with its `mod.rs`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file other than tests may be, in lines.
const MAX_LINES: usize = 800;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_path_buf()
}

/// Whether `file`, under `src`, holds tests: a `tests.rs`, or anything in a `tests` folder
/// of `src`.
fn is_test(src: &Path, file: &Path) -> bool {
    let relative = file.strip_prefix(src).unwrap_or(file);
    relative.ends_with("tests.rs") || relative.components().any(|c| c.as_os_str() == "tests")
}

/// The `.rs` files under `dir`.
fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// A crate's modules by path (`scheduler::pairs`; the root is ``), each with its text,
/// tests and comments left out.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files
        .into_iter()
        .filter(|f| !is_test(src, f))
        .map(|file| {
            let relative = file.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            (
                parts.join("::"),
                code_of(&std::fs::read_to_string(&file).unwrap()),
            )
        })
        .collect()
}

/// `text` without its inline test module and its comments.
fn code_of(text: &str) -> String {
    let text = text
        .split("#[cfg(test)]\nmod tests {")
        .next()
        .unwrap_or_default();
    text.lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths after `prefix` in `code`: `crate::a::b::Thing` gives `a::b`, and a
/// group `crate::{a::X, b}` gives `a` and `b` (lower-case segments only: modules, not
/// types).
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    let segments = |text: &'a str| -> Vec<&'a str> {
        text.split("::")
            .map(|s| {
                let s = s.trim();
                s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")
            })
            .take_while(|s| s.starts_with(|c: char| c.is_ascii_lowercase()))
            .collect()
    };
    let mut paths = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let group = group.split('}').next().unwrap_or_default();
                paths.extend(group.split(',').map(segments));
            }
            None => paths.push(segments(rest)),
        }
    }
    paths
}

/// Which modules each module imports from (its ancestors left out).
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<&str, BTreeSet<&str>> {
    let ancestor =
        |of: &str, module: &str| module.is_empty() || of.starts_with(&format!("{module}::"));
    modules
        .iter()
        .map(|(name, code)| {
            let parent = name.rsplit_once("::").map_or("", |(p, _)| p);
            let mut targets = BTreeSet::new();
            let mut add = |path: Vec<&str>, base: &str| {
                for n in (1..=path.len()).rev() {
                    let joined = path[..n].join("::");
                    let candidate = if base.is_empty() {
                        joined
                    } else {
                        format!("{base}::{joined}")
                    };
                    if let Some((key, _)) = modules.get_key_value(&candidate) {
                        if key != name && !ancestor(name, key) {
                            targets.insert(key.as_str());
                        }
                        return;
                    }
                }
            };
            for path in paths_after(code, "crate::") {
                add(path, "");
            }
            for path in paths_after(code, "super::") {
                add(path, parent);
            }
            (name.as_str(), targets)
        })
        .collect()
}

/// A circle of imports among `graph`'s modules, if there is one.
fn circle<'a>(graph: &BTreeMap<&'a str, BTreeSet<&'a str>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        at: &'a str,
        graph: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(start) = path.iter().position(|&m| m == at) {
            let mut found = path[start..].to_vec();
            found.push(at);
            return Some(found);
        }
        if !done.insert(at) {
            return None;
        }
        path.push(at);
        for &next in graph.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|&start| visit(start, graph, &mut Vec::new(), &mut done))
}

/// Every crate's `src` folder.
fn crate_sources() -> Vec<PathBuf> {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("src"))
        .collect();
    sources.push(root().join("tests/src"));
    sources.sort();
    sources
}

#[test]
fn no_file_of_a_crate_imports_one_that_imports_it() {
    for src in crate_sources() {
        let modules = modules(&src);
        assert!(!modules.is_empty(), "no sources read in {}", src.display());
        if let Some(found) = circle(&imports(&modules)) {
            panic!(
                "{}: the files import each other: {}",
                src.display(),
                found.join(" -> ")
            );
        }
    }
}

#[test]
fn no_source_file_outside_the_tests_is_over_800_lines() {
    let mut long = Vec::new();
    for src in crate_sources() {
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            if is_test(&src, &file) {
                continue;
            }
            let lines = std::fs::read_to_string(&file).unwrap().lines().count();
            if lines > MAX_LINES {
                long.push(format!("{}: {lines} lines", file.display()));
            }
        }
    }
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn the_circle_finder_sees_a_circle_and_allows_a_parent() {
    let modules: BTreeMap<String, String> = [
        ("", "mod a; mod b;"),
        ("a", "use crate::{Root, b::Thing};"),
        ("b", "use super::a::Other;"),
        ("b::c", "use super::Parent; use crate::b::More;"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let found = circle(&imports(&modules)).expect("a and b import each other");
    assert!(found.contains(&"a") && found.contains(&"b"), "{found:?}");
    let without: BTreeMap<String, String> = modules.into_iter().filter(|(k, _)| k != "a").collect();
    assert_eq!(
        circle(&imports(&without)),
        None,
        "a child may use its parent"
    );
}
