//! What an outside engine is beyond its command: built from source (a git repository, a
//! commit, a build command and the path of the program it builds, which every worker
//! fetches and builds for its own machine), the data files (networks, books) it finds in
//! its working directory, and the protocol it speaks.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The protocols an outside engine may speak: tourney's own, UGI, UCI as LOA programs
/// speak it, CodinGame's per-turn input and GTP for Amazons (the runner's `dialect`
/// translates each).
pub const PROTOCOLS: [&str; 5] = ["tourney", "ugi", "uci", "codingame", "gtp"];

/// Checks a protocol as a tournament file or `--protocol` gives it: one of [`PROTOCOLS`],
/// then after a colon the options its dialect takes, comma-separated
/// ([`protocol_options`]).
///
/// # Errors
/// What is wrong with it.
pub fn check_protocol(text: &str) -> Result<(), String> {
    protocol_options(text).map(|_| ())
}

/// A protocol's options as `key=value` pairs, in the order written.
pub type ProtocolOptions<'a> = Vec<(&'a str, &'a str)>;

/// A protocol's name and its options, checked:
/// - GTP: `first=black|white`, the colour of the side that moves first (black by default,
///   as KataGo-style programs expect): `gtp:first=white`.
/// - UCI and UGI, for programs whose position strings or moves differ from tourney's:
///   `pieces=XY` or `XYZ`, the letters the program writes for tourney's `b`, `w` (and the
///   Amazons arrow `x`); `turn=XY`, its letters for Black to move and White to move;
///   `moves=compact|separated`, whether its moves are written `b1b3` (UCI's default) or
///   `b1-b3`, `d1-d7/g7` (UGI's). LOABot: `uci:pieces=Ll,turn=wb`.
///
/// # Errors
/// An unknown protocol or option, or a malformed value, named.
pub fn protocol_options(text: &str) -> Result<(&str, ProtocolOptions<'_>), String> {
    let (name, options) = text.split_once(':').unwrap_or((text, ""));
    if !PROTOCOLS.contains(&name) {
        return Err(format!(
            "unknown protocol '{text}': expected {}",
            PROTOCOLS.join(", ")
        ));
    }
    let mut checked = Vec::new();
    for option in options.split(',').filter(|o| !o.is_empty()) {
        let (key, value) = option.split_once('=').unwrap_or((option, ""));
        let letters = |n: std::ops::RangeInclusive<usize>| {
            n.contains(&value.len()) && value.bytes().all(|b| b.is_ascii_alphabetic())
        };
        let fits = match (name, key) {
            ("gtp", "first") => matches!(value, "black" | "white"),
            ("uci" | "ugi", "pieces") => letters(2..=3),
            ("uci" | "ugi", "turn") => letters(2..=2),
            ("uci" | "ugi", "moves") => matches!(value, "compact" | "separated"),
            ("gtp", _) => {
                return Err(format!(
                    "unknown GTP option '{option}' in '{text}': expected first=black or \
                     first=white"
                ));
            }
            ("uci" | "ugi", _) => {
                return Err(format!(
                    "unknown {name} option '{option}' in '{text}': expected pieces=, turn= \
                     or moves="
                ));
            }
            _ => {
                return Err(format!(
                    "the {name} protocol takes no options, found '{option}'"
                ));
            }
        };
        if !fits {
            let expected = match key {
                "first" => "first=black or first=white",
                "pieces" => "pieces= and 2 or 3 letters, the program's for b, w (and x)",
                "turn" => "turn= and 2 letters, the program's for Black and White to move",
                _ => "moves=compact or moves=separated",
            };
            return Err(format!("'{option}' in '{text}': expected {expected}"));
        }
        checked.push((key, value));
    }
    Ok((name, checked))
}

/// Splits a command line into words; double or single quotes group words.
pub fn split_command(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut quote = None;
    let mut has_word = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                has_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if has_word || !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                    has_word = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if has_word || !word.is_empty() {
        words.push(word);
    }
    words
}

/// Whether an engine speaking `protocol` can play `game`: GTP is for Amazons only.
pub fn protocol_plays(protocol: &str, game: tourney_rules::GameKind) -> bool {
    !(protocol.starts_with("gtp") && game == tourney_rules::GameKind::Loa)
}

/// The longest repository URL, build command or program path, in characters.
pub const MAX_SOURCE_CHARS: usize = 1000;
/// The most data files an engine may have.
pub const MAX_FILES: usize = 16;
/// The longest data file name, in characters.
pub const MAX_FILE_NAME_CHARS: usize = 100;

/// An engine built from source on each worker: what it is fetched from and how it is built.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Source {
    /// The repository, as `git` fetches it (`https://`, `ssh://`, `git://`, `file://`).
    pub git: String,
    /// The commit: a full hash once registered (a branch or tag is resolved to it then).
    pub commit: String,
    /// The build command, run by `sh -c` in the checkout.
    pub build: String,
    /// The built program's path in the checkout.
    pub binary: String,
}

/// Where a source key is wrong: the key and what is wrong with it.
pub type SourceProblem = (&'static str, String);

impl Source {
    /// The source the four keys give (`None` when none is given).
    ///
    /// # Errors
    /// Some keys without the others, or a key whose value cannot be right (see
    /// [`Source::check`]).
    pub fn from_keys(
        git: Option<&str>,
        commit: Option<&str>,
        build: Option<&str>,
        binary: Option<&str>,
    ) -> Result<Option<Source>, SourceProblem> {
        let keys = [
            ("git", git),
            ("commit", commit),
            ("build", build),
            ("binary", binary),
        ];
        if keys.iter().all(|(_, v)| v.is_none()) {
            return Ok(None);
        }
        if let Some((key, _)) = keys.iter().find(|(_, v)| v.is_none()) {
            return Err((
                key,
                "an engine built from source needs git, commit, build and binary".into(),
            ));
        }
        let text = |v: Option<&str>| v.unwrap_or_default().to_string();
        let source = Source {
            git: text(git),
            commit: text(commit),
            build: text(build),
            binary: text(binary),
        };
        source.check(false)?;
        Ok(Some(source))
    }

    /// Checks each key: a URL `git` can fetch without taking it for an option; a commit
    /// (with `resolved`, a full hash); a build command; a program path inside the checkout.
    ///
    /// # Errors
    /// The key and what is wrong.
    pub fn check(&self, resolved: bool) -> Result<(), SourceProblem> {
        let plain = |key: &'static str, value: &str| {
            if value.trim().is_empty() {
                Err((key, "must not be empty".to_string()))
            } else if value.chars().count() > MAX_SOURCE_CHARS {
                Err((key, format!("at most {MAX_SOURCE_CHARS} characters")))
            } else if value.chars().any(|c| c.is_control()) {
                Err((key, "must not hold control characters".to_string()))
            } else {
                Ok(())
            }
        };
        plain("git", &self.git)?;
        plain("commit", &self.commit)?;
        plain("build", &self.build)?;
        plain("binary", &self.binary)?;
        let schemes = ["https://", "http://", "ssh://", "git://", "file://"];
        let scp_like = self.git.contains(':') && !self.git.contains("://");
        if self.git.starts_with('-')
            || self.git.chars().any(char::is_whitespace)
            || !(schemes.iter().any(|s| self.git.starts_with(s)) || scp_like)
        {
            return Err((
                "git",
                format!(
                    "'{}': expected a repository URL (https://, ssh://, git://, file:// or host:path)",
                    self.git
                ),
            ));
        }
        if self.commit.starts_with('-') || self.commit.chars().any(char::is_whitespace) {
            return Err(("commit", format!("'{}' is not a revision", self.commit)));
        }
        if resolved && !is_commit_hash(&self.commit) {
            return Err((
                "commit",
                format!(
                    "'{}' is not a commit hash: `tourney version add` and `tourney submit` resolve branches and tags to their commit",
                    self.commit
                ),
            ));
        }
        let path = std::path::Path::new(&self.binary);
        let inside = path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        if !inside || self.binary.starts_with('-') {
            return Err((
                "binary",
                format!(
                    "'{}': expected a path inside the checkout (relative, without ..)",
                    self.binary
                ),
            ));
        }
        Ok(())
    }

    /// How records and listings name it: `git:URL@COMMIT`.
    pub fn spec(&self) -> String {
        format!("git:{}@{}", self.git, self.commit)
    }
}

/// Whether `text` is a full commit hash (40 hex digits, or 64 in a SHA-256 repository).
pub fn is_commit_hash(text: &str) -> bool {
    (text.len() == 40 || text.len() == 64) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Whether `text` is a sha256 as 64 hex digits.
pub fn is_sha256(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Checks an engine's data files, name → content: at most [`MAX_FILES`], each named by a
/// relative path of at most [`MAX_FILE_NAME_CHARS`] (`net.bin`, or `lib/board.py` for a
/// script's module) whose parts are plain names (no `..`, none starting with `.`); with
/// `stored`, each content a sha256 (as the coordinator keeps them; a file as written names
/// a path on the submitter's side).
///
/// # Errors
/// The file's name and what is wrong.
pub fn check_files(files: &BTreeMap<String, String>, stored: bool) -> Result<(), String> {
    if files.len() > MAX_FILES {
        return Err(format!("at most {MAX_FILES} files"));
    }
    for (name, content) in files {
        let plain = |part: &str| {
            !part.is_empty()
                && !part.starts_with('.')
                && !part.chars().any(|c| c == '\\' || c.is_control())
        };
        if name.chars().count() > MAX_FILE_NAME_CHARS || !name.split('/').all(plain) {
            return Err(format!(
                "'{name}': a relative path of 1 to {MAX_FILE_NAME_CHARS} characters whose \
                 parts are names (no '..', none starting with '.')"
            ));
        }
        if stored && !is_sha256(content) {
            return Err(format!("'{name}': expected the sha256 of an uploaded file"));
        }
        if content.is_empty() {
            return Err(format!("'{name}': names no file"));
        }
    }
    Ok(())
}

/// What a tournament's engine is beyond its file: the commit its `commit` resolved to, its
/// data files as uploaded, and its bench signature once known. Kept with the tournament
/// and applied to its file each time it is read ([`crate::tournament::TournamentConfig::apply_facts`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineFacts {
    /// The full commit hash of an engine built from source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its data files: name → sha256 of the uploaded content.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Its bench signature, taken from the first worker that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
    /// Its speed on that worker's bench, nodes per second: the reference that scales a
    /// worker's clocks (`limits.scale = "nps"`) by its own bench speed of the engine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nps: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source() -> Source {
        Source {
            git: "https://example.org/engine.git".into(),
            commit: "a".repeat(40),
            build: "make".into(),
            binary: "build/engine".into(),
        }
    }

    #[test]
    fn the_four_keys_come_together() {
        assert_eq!(Source::from_keys(None, None, None, None), Ok(None));
        let (key, message) =
            Source::from_keys(Some("file:///r"), Some("main"), None, Some("e")).unwrap_err();
        assert_eq!(key, "build");
        assert!(message.contains("git, commit, build and binary"));
        let made = Source::from_keys(Some("file:///r"), Some("main"), Some("make"), Some("e"));
        assert_eq!(made.unwrap().unwrap().commit, "main");
    }

    #[test]
    fn each_key_is_checked() {
        assert_eq!(source().check(true), Ok(()));
        let wrong = |change: fn(&mut Source), resolved: bool| {
            let mut s = source();
            change(&mut s);
            s.check(resolved).unwrap_err()
        };
        assert_eq!(wrong(|s| s.git = "--upload-pack=x".into(), false).0, "git");
        assert_eq!(wrong(|s| s.git = "just words".into(), false).0, "git");
        assert_eq!(wrong(|s| s.git = "/local/path".into(), false).0, "git");
        assert!(
            Source {
                git: "git@host:repo.git".into(),
                ..source()
            }
            .check(true)
            .is_ok()
        );
        assert_eq!(wrong(|s| s.commit = "main".into(), true).0, "commit");
        assert!(
            Source {
                commit: "main".into(),
                ..source()
            }
            .check(false)
            .is_ok()
        );
        assert_eq!(wrong(|s| s.commit = "-x".into(), false).0, "commit");
        assert_eq!(wrong(|s| s.build = " ".into(), false).0, "build");
        assert_eq!(wrong(|s| s.binary = "/usr/bin/x".into(), false).0, "binary");
        assert_eq!(wrong(|s| s.binary = "../x".into(), false).0, "binary");
        assert_eq!(wrong(|s| s.build = "a\u{1b}b".into(), false).0, "build");
        assert_eq!(
            source().spec(),
            format!("git:https://example.org/engine.git@{}", "a".repeat(40))
        );
    }

    #[test]
    fn files_are_relative_paths_of_uploaded_content() {
        let mut files = BTreeMap::from([("net.bin".to_string(), "b".repeat(64))]);
        assert_eq!(check_files(&files, true), Ok(()));
        // A script's module keeps its place beside it.
        files.insert("engines/py/board.py".into(), "b".repeat(64));
        assert_eq!(check_files(&files, true), Ok(()));
        for bad in [
            "../escape",
            "a/../../b",
            "/etc/passwd",
            "a//b",
            ".hidden",
            "a/.git/x",
            "",
        ] {
            let mut with = files.clone();
            with.insert(bad.into(), "b".repeat(64));
            let e = check_files(&with, true).unwrap_err();
            assert!(e.contains(&format!("'{bad}'")), "{bad}: {e}");
        }
        let paths = BTreeMap::from([("book.txt".to_string(), "books/book.txt".to_string())]);
        assert_eq!(check_files(&paths, false), Ok(()));
        assert!(check_files(&paths, true).unwrap_err().contains("sha256"));
        let many: BTreeMap<String, String> = (0..=MAX_FILES)
            .map(|i| (format!("f{i}"), "c".repeat(64)))
            .collect();
        assert!(check_files(&many, true).unwrap_err().contains("at most"));
    }
}
