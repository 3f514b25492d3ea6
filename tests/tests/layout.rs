//! The source layout ARCHITECTURE.md promises: no source file over 600 lines outside the
//! tests, and no two files of a crate importing each other, directly or round a circle (a
//! file may use what its parent module defines: a folder is one unit with its `mod.rs`; a
//! name a module re-exports with `pub use` leads to the file that defines it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file other than tests may be, in lines.
const MAX_LINES: usize = 600;

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

/// The paths of the use tree at the start of `text`, each with the name it brings in (its
/// last segment, or its alias): `a::{b::X, c as d}` gives `a::b::X` as `X` and `a::c` as
/// `d`. A path in code (`a::f(x)`) reads as a tree of one path.
fn use_paths(text: &str) -> Vec<(Vec<&str>, &str)> {
    fn skip_space(text: &str, at: &mut usize) {
        *at += text[*at..].len() - text[*at..].trim_start().len();
    }
    fn ident<'a>(text: &'a str, at: &mut usize) -> &'a str {
        let rest = &text[*at..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        *at += len;
        &rest[..len]
    }
    fn tree<'a>(
        text: &'a str,
        at: &mut usize,
        prefix: &mut Vec<&'a str>,
        found: &mut Vec<(Vec<&'a str>, &'a str)>,
    ) {
        let depth = prefix.len();
        loop {
            skip_space(text, at);
            if text[*at..].starts_with('{') {
                *at += 1;
                loop {
                    tree(text, at, prefix, found);
                    skip_space(text, at);
                    if text[*at..].starts_with(',') {
                        *at += 1;
                        skip_space(text, at);
                    }
                    if text[*at..].starts_with('}') {
                        *at += 1;
                        break;
                    }
                    if text[*at..].is_empty() || text[*at..].starts_with(';') {
                        break;
                    }
                }
                prefix.truncate(depth);
                return;
            }
            let segment = ident(text, at);
            if segment.is_empty() {
                break;
            }
            prefix.push(segment);
            if text[*at..].starts_with("::") {
                *at += 2;
            } else {
                break;
            }
        }
        let mut name = prefix.last().copied().unwrap_or_default();
        let mut after = *at;
        skip_space(text, &mut after);
        if let Some(rest) = text[after..].strip_prefix("as ") {
            after = text.len() - rest.len();
            skip_space(text, &mut after);
            name = ident(text, &mut after);
            *at = after;
        }
        if prefix.len() > depth {
            found.push((prefix.clone(), name));
        }
        prefix.truncate(depth);
    }
    let mut found = Vec::new();
    tree(text, &mut 0, &mut Vec::new(), &mut found);
    found
}

/// The paths after each `prefix` in `code`: `crate::a::b::Thing` gives `a::b::Thing`, and
/// a group `crate::{a::X, b}` gives `a::X` and `b`.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<Vec<&'a str>> {
    code.match_indices(prefix)
        .filter(|(at, _)| {
            !code[..*at].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        })
        .flat_map(|(at, _)| use_paths(&code[at + prefix.len()..]))
        .map(|(path, _)| path)
        .collect()
}

/// The module `path` starts with, read from `base`: the longest prefix that names one of
/// `modules` (`base` itself when none does), with how many segments it took.
fn module_of<'a>(
    modules: &'a BTreeMap<String, String>,
    base: &str,
    path: &[&str],
) -> Option<(&'a str, usize)> {
    (0..=path.len()).rev().find_map(|n| {
        let joined = path[..n].join("::");
        let candidate = match (base.is_empty(), joined.is_empty()) {
            (true, _) => joined,
            (false, true) => base.to_string(),
            (false, false) => format!("{base}::{joined}"),
        };
        modules
            .get_key_value(&candidate)
            .map(|(key, _)| (key.as_str(), n))
    })
}

/// The parent of module `name` (the root's is itself).
fn parent_of(name: &str) -> &str {
    name.rsplit_once("::").map_or("", |(p, _)| p)
}

/// What each module re-exports with `pub use` (or `pub(crate) use`, ...): (module, name)
/// to (the module the path leads to, its name there).
fn reexports(modules: &BTreeMap<String, String>) -> BTreeMap<(&str, &str), (&str, &str)> {
    let mut found = BTreeMap::new();
    for (name, code) in modules {
        let statements = code.match_indices("pub").filter_map(|(at, _)| {
            let rest = code[at + 3..].trim_start();
            let rest = match rest.strip_prefix('(') {
                Some(scoped) => scoped.split_once(')')?.1.trim_start(),
                None => rest,
            };
            rest.strip_prefix("use ")
        });
        for statement in statements {
            for (path, exported) in use_paths(statement) {
                let (base, path) = match path.split_first() {
                    Some((&"crate", rest)) => ("", rest),
                    Some((&"self", rest)) => (name.as_str(), rest),
                    Some((&"super", rest)) => (parent_of(name), rest),
                    _ => (name.as_str(), &path[..]),
                };
                if let Some((module, n)) = module_of(modules, base, path)
                    && n + 1 == path.len()
                    && (n > 0 || module != name)
                {
                    found.insert((name.as_str(), exported), (module, path[n]));
                }
            }
        }
    }
    found
}

/// Which modules each module imports from (its ancestors left out); a name a module
/// re-exports counts as an import from the module that defines it.
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<&str, BTreeSet<&str>> {
    let ancestor =
        |of: &str, module: &str| module.is_empty() || of.starts_with(&format!("{module}::"));
    let reexported = reexports(modules);
    modules
        .iter()
        .map(|(name, code)| {
            let mut targets = BTreeSet::new();
            let mut add = |path: Vec<&str>, base: &str| {
                let Some((mut key, n)) = module_of(modules, base, &path) else {
                    return;
                };
                if let Some(&first) = path.get(n) {
                    let mut seen = BTreeSet::new();
                    let mut item = first;
                    while let Some(&(module, original)) = reexported.get(&(key, item)) {
                        if !seen.insert((module, original)) {
                            break;
                        }
                        (key, item) = (module, original);
                    }
                }
                if key != name && !ancestor(name, key) {
                    targets.insert(key);
                }
            };
            for path in paths_after(code, "crate::") {
                add(path, "");
            }
            for path in paths_after(code, "super::") {
                add(path, parent_of(name));
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
    let mut circles = Vec::new();
    for src in crate_sources() {
        let modules = modules(&src);
        assert!(!modules.is_empty(), "no sources read in {}", src.display());
        let graph = imports(&modules);
        if let Some(found) = circle(&graph) {
            circles.push(format!("{}: {}", src.display(), found.join(" -> ")));
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn no_source_file_outside_the_tests_is_over_600_lines() {
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
                long.push(format!(
                    "{}: {lines} lines, over {MAX_LINES}",
                    file.display()
                ));
            }
        }
    }
    assert!(long.is_empty(), "too long:\n{}", long.join("\n"));
}

/// The most source files a folder holds side by side, in a crate's `src` and among its
/// integration tests (where each file is a test binary of its own): more is a folder whose
/// parts want names. A CLI's `commands/` (one file per command, as cargo's) is the
/// exception.
const MAX_FILES_IN_A_FOLDER: usize = 15;

/// Every folder of integration tests: each crate's `tests`, and `tests/tests`.
fn test_folders() -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.path().join("tests"))
        .filter(|tests| tests.is_dir())
        .collect();
    folders.push(root().join("tests/tests"));
    folders.sort();
    folders
}

#[test]
fn no_source_or_test_folder_holds_more_than_15_files_side_by_side() {
    let mut crowded = Vec::new();
    let sources = crate_sources().into_iter().map(|src| (src, true));
    for (dir, commands_aside) in sources.chain(test_folders().into_iter().map(|t| (t, false))) {
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let mut by_folder: BTreeMap<&Path, usize> = BTreeMap::new();
        for file in &files {
            *by_folder.entry(file.parent().unwrap()).or_default() += 1;
        }
        for (folder, n) in by_folder {
            if n > MAX_FILES_IN_A_FOLDER && !(commands_aside && folder.ends_with("commands")) {
                crowded.push(format!("{}: {n} files", folder.display()));
            }
        }
    }
    assert!(
        crowded.is_empty(),
        "crowded folders:\n{}",
        crowded.join("\n")
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

#[test]
fn the_circle_finder_follows_a_reexport() {
    let modules = |b: &str| -> BTreeMap<String, String> {
        [
            (
                "",
                "mod a; mod b; pub use a::{Origin, inner::Kind as Sort};",
            ),
            ("a", "pub use crate::b::Thing;"),
            ("a::inner", "pub struct Kind; use crate::b::Thing;"),
            ("b", b),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    };
    let origin = modules("use crate::Origin;");
    let found = circle(&imports(&origin)).expect("b uses a's Origin");
    assert!(found.contains(&"a") && found.contains(&"b"), "{found:?}");
    let sort = modules("use crate::{\n    Sort,\n};");
    let found = circle(&imports(&sort)).expect("b uses a::inner's Kind, renamed at the root");
    assert!(
        found.contains(&"a::inner") && found.contains(&"b"),
        "{found:?}"
    );
    assert_eq!(
        circle(&imports(&modules("use crate::Thing;"))),
        None,
        "a name the root does not re-export is no import"
    );
}
