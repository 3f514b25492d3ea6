//! The documentation's relative links: every `[text](path)` and `[text](path#anchor)` in
//! the repository's Markdown files names a file that exists, and an anchor a heading of
//! that file (GitHub's slugs). Links to other sites are not fetched.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the repository")
        .to_path_buf()
}

/// Every Markdown file of the repository, outside build output and hidden folders.
fn markdown_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "tourney-data" {
            continue;
        }
        if path.is_dir() {
            markdown_files(&path, found);
        } else if name.ends_with(".md") {
            found.push(path);
        }
    }
}

/// The text of `markdown` outside fenced code blocks and inline code.
fn prose(markdown: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            let mut inline = false;
            for c in line.chars() {
                if c == '`' {
                    inline = !inline;
                } else if !inline {
                    out.push(c);
                }
            }
            out.push('\n');
        }
    }
    out
}

/// The targets of the inline links `[text](target)` in `text`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        if let Some(end) = rest.find(')') {
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            targets.push(target.to_string());
            rest = &rest[end..];
        }
    }
    targets
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of the headings of a Markdown file.
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(slug(line.trim_start_matches('#')));
        }
    }
    found
}

/// The broken relative links of the file at `path`, as "file: target (why)".
fn broken_links(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut broken = Vec::new();
    for target in link_targets(&prose(&text)) {
        if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (file, anchor) = match target.split_once('#') {
            Some((file, anchor)) => (file, Some(anchor)),
            None => (target.as_str(), None),
        };
        let linked = if file.is_empty() {
            path.to_path_buf()
        } else {
            path.parent().unwrap().join(file)
        };
        if !linked.exists() {
            broken.push(format!("{name}: {target} (no such file)"));
            continue;
        }
        if let Some(anchor) = anchor
            && linked.extension().is_some_and(|e| e == "md")
            && !anchors(&std::fs::read_to_string(&linked).unwrap()).contains(anchor)
        {
            broken.push(format!("{name}: {target} (no such heading)"));
        }
    }
    broken
}

#[test]
fn every_relative_link_of_the_documentation_resolves() {
    let mut files = Vec::new();
    markdown_files(&root(), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("docs/cli.md")),
        "the documentation was not found under {}",
        root().display()
    );
    let broken: Vec<String> = files.iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_checker_sees_what_is_broken() {
    let dir = std::env::temp_dir().join(format!("tourney-links-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("b.md"), "# Some `code` title\n\ntext\n").unwrap();
    let page = dir.join("a.md");
    std::fs::write(
        &page,
        "[ok](b.md) [ok](b.md#some-code-title) [gone](c.md) [bad](b.md#nothing) \
         `[code](x.md)` [web](https://example.invalid/x) [self](#top)\n\n## Top\n",
    )
    .unwrap();
    let broken = broken_links(&page);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(broken[0].contains("c.md (no such file)"), "{broken:?}");
    assert!(
        broken[1].contains("b.md#nothing (no such heading)"),
        "{broken:?}"
    );
}

/// The `tourney-*` crates a crate's `Cargo.toml` lists under `[dependencies]`, by short
/// name (`tourney-rules` → `rules`).
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut in_dependencies = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_dependencies = line.trim() == "[dependencies]";
        } else if in_dependencies && let Some(name) = line.strip_prefix("tourney-") {
            let name = name.split(['.', ' ', '=']).next().unwrap_or("");
            found.insert(name.to_string());
        }
    }
    found
}

/// The arrows of ARCHITECTURE.md's picture: each crate's short name and what it depends on.
fn pictured_arrows(text: &str) -> Vec<(String, BTreeSet<String>)> {
    let picture = text
        .split("```text")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("ARCHITECTURE.md has a ```text picture");
    picture
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (left, right) = line.split_once("──►").unwrap_or((line, ""));
            let name = left
                .split_whitespace()
                .last()
                .unwrap()
                .trim_matches(['(', ')'])
                .to_string();
            let targets = right
                .split(['✗', '('])
                .next()
                .unwrap_or("")
                .split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect();
            (name, targets)
        })
        .collect()
}

#[test]
fn the_crate_picture_is_the_workspace() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let arrows = pictured_arrows(&text);
    let mut pictured: Vec<&str> = arrows.iter().map(|(name, _)| name.as_str()).collect();
    pictured.sort_unstable();
    let mut crates: Vec<String> = std::fs::read_dir(root().join("crates"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    crates.sort_unstable();
    assert_eq!(pictured, crates, "every crate is pictured, once");
    for (name, targets) in &arrows {
        let manifest = root().join("crates").join(name).join("Cargo.toml");
        assert_eq!(
            targets,
            &dependencies(&manifest),
            "ARCHITECTURE.md's arrows of {name} are not its Cargo.toml's"
        );
    }
}

/// The source files and folders under `dir` (tests aside), as paths relative to `dir`.
fn coordinator_parts(dir: &Path, prefix: &str, parts: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() {
            if name == "tests" {
                continue;
            }
            let before = parts.len();
            coordinator_parts(&path, &format!("{prefix}{name}/"), parts);
            // A folder that holds only tests (`scheduler/share/`) is a test.
            if parts.len() > before {
                parts.push(format!("{prefix}{name}/"));
            }
        } else if name.ends_with(".rs")
            && !name.ends_with("tests.rs")
            && name != "mod.rs"
            && name != "lib.rs"
        {
            parts.push(format!("{prefix}{name}"));
        }
    }
}

#[test]
fn the_coordinator_picture_is_its_source_tree() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let picture = text
        .split("```text")
        .nth(2)
        .and_then(|rest| rest.split("```").next())
        .expect("ARCHITECTURE.md pictures the coordinator in its second ```text block");
    let words_of = |text: &'static str| -> BTreeSet<&'static str> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || "_./".contains(c)))
            .map(|w| w.trim_end_matches(['.', ',']))
            .filter(|w| !w.is_empty())
            .collect()
    };
    let picture: &'static str = String::leak(picture.to_string());
    let words = words_of(picture);
    // The words from folder `folder/`'s line to the end of its layer (the next line that
    // starts with a layer's name).
    let lines: Vec<&'static str> = picture.lines().collect();
    let section = |folder: &str| -> BTreeSet<&'static str> {
        let token = format!("{folder}/");
        let Some(start) = (lines.iter()).position(|l| words_of(l).contains(token.as_str())) else {
            return BTreeSet::new();
        };
        let end = (start + 1..lines.len())
            .find(|&i| lines[i].len() > 1 && !lines[i][1..].starts_with(' '))
            .unwrap_or(lines.len());
        lines[start..end].iter().flat_map(|l| words_of(l)).collect()
    };
    let src = root().join("crates/coordinator/src");
    let mut parts = Vec::new();
    coordinator_parts(&src, "", &mut parts);
    assert!(
        parts.len() > 40,
        "the coordinator's files were found: {parts:?}"
    );
    for part in &parts {
        let name = part.trim_end_matches('/').rsplit('/').next().unwrap();
        let named = match part.ends_with('/') {
            true => words.contains(format!("{name}/").as_str()),
            false => {
                let stem = name.trim_end_matches(".rs");
                // A file in a folder is named in its folder's part of the picture.
                let near = match part.rsplit_once('/') {
                    Some((folder, _)) => section(folder.rsplit('/').next().unwrap()),
                    None => words.clone(),
                };
                near.contains(name) || near.contains(stem)
            }
        };
        assert!(
            named,
            "ARCHITECTURE.md's coordinator picture leaves out {part}"
        );
    }
    let names: BTreeSet<&str> = (parts.iter())
        .map(|p| p.trim_end_matches('/').rsplit('/').next().unwrap())
        .collect();
    for word in words
        .iter()
        .filter(|w| w.ends_with(".rs") || w.ends_with('/'))
    {
        let name = word.trim_end_matches('/').rsplit('/').next().unwrap();
        assert!(
            names.contains(name),
            "ARCHITECTURE.md's coordinator picture names {word}, which is not in crates/coordinator/src"
        );
    }
}
