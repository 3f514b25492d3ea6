//! Errors of tournament files, located: the file, the line and the key.

use std::fmt;
use std::ops::Range;

/// A tournament file that is not right: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<text>`).
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// The key concerned, e.g. `sprt.elo1` or `engine[2].player`.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about `key` (a path such as `engine[1].player`) of the file `text`, with the
    /// line where the key is set: in `table` (name and instance, e.g. `("engine", 1)`) when
    /// given, else at the top level.
    pub fn at_key(
        text: &str,
        file: &str,
        table: Option<(&str, usize)>,
        key: String,
        message: String,
    ) -> ConfigError {
        let leaf = key.rsplit('.').next().unwrap_or(&key);
        let leaf = leaf.split('[').next().unwrap_or(leaf);
        ConfigError {
            file: file.to_string(),
            line: key_line(text, table, leaf),
            key: Some(key),
            message,
        }
    }
}

/// An engine's `version` that cannot be filled in from its registered version: the
/// engine's index, its key (`version`, `options`) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionError {
    /// The engine's index in the tournament (a pool's later member: past the file's).
    pub engine: usize,
    /// The engine's key concerned.
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "engine[{}].{}: {}", self.engine, self.key, self.message)
    }
}

impl std::error::Error for VersionError {}

impl VersionError {
    /// The error located in the tournament file `text` named `file`: the line of the
    /// engine's key (the engine's table when the file does not set it).
    pub fn located(&self, text: &str, file: &str) -> ConfigError {
        let key = format!("engine[{}].{}", self.engine, self.key);
        ConfigError::at_key(
            text,
            file,
            Some(("engine", self.engine)),
            key,
            self.message.clone(),
        )
    }
}

/// Deserializes a TOML file's text; `file` names it in errors, which give the line and
/// what is wrong (an unknown or mistyped key is named in the message).
///
/// # Errors
/// [`ConfigError`] for TOML that is malformed or does not fit `T`.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let span: Option<Range<usize>> = e.span();
        ConfigError {
            file: file.to_string(),
            line: span.as_ref().map(|s| line_of(text, s.start)),
            key: span.and_then(|s| key_of_value_at(text, s.start)),
            message: e.message().trim().to_string(),
        }
    })
}

/// The dotted key whose value or name starts at byte `offset` (`adjudication.max_plies`,
/// `engine[1].player`, an unknown `limits.movetim`): the table header above it, the inline
/// tables it sits in on its line, and its own key. `None` when `offset` is inside a value
/// or at a header.
fn key_of_value_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut path: Vec<String> = Vec::new();
    if let Some(header) = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
    {
        let name = header.trim_matches(|c| c == '[' || c == ']').trim();
        if header.starts_with("[[") {
            let index = before[..line_start]
                .lines()
                .filter(|l| l.trim() == header)
                .count()
                - 1;
            path.push(format!("{name}[{index}]"));
        } else {
            path.push(name.to_string());
        }
    }
    // Keys of the inline tables open at `offset`, then the key being set.
    let (mut open, mut key, mut token) = (Vec::<String>::new(), None::<String>, String::new());
    let mut in_string = None;
    for c in before[line_start..].chars() {
        match (in_string, c) {
            (Some(q), c) if c == q => in_string = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => in_string = Some(c),
            (None, '=') => key = Some(std::mem::take(&mut token).trim().to_string()),
            (None, '{') => open.extend(key.take()),
            (None, '}') => {
                open.pop();
                key = None;
            }
            (None, ',') => {
                key = None;
                token.clear();
            }
            (None, c) => token.push(c),
        }
    }
    if !token.trim().is_empty() {
        return None; // `offset` is past a value's start: not where a value begins
    }
    path.extend(open);
    let name = match key.filter(|k| !k.is_empty()) {
        Some(key) => key,
        // At a key's name (an unknown key): that name.
        None => {
            let rest = text.get(offset..)?;
            let name = rest.split(['=', '\n']).next()?.trim();
            let bare = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            (!name.is_empty() && name.chars().all(bare)).then(|| name.to_string())?
        }
    };
    path.push(name);
    Some(path.join("."))
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line where `key` is set: the first `key =` after the header of `table` (the
/// `n`-th `[[table]]` for arrays of tables, counted from 0), or the header itself when the
/// key is missing there; an inline `table = { ... }` is found by its own line.
fn key_line(text: &str, table: Option<(&str, usize)>, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let sets = |line: &str, name: &str| {
        let t = line.trim_start();
        t.strip_prefix(name)
            .is_some_and(|after| after.trim_start().starts_with('='))
    };
    let Some((name, n)) = table else {
        return lines.iter().position(|l| sets(l, key)).map(|i| i + 1);
    };
    let (array_header, header) = (format!("[[{name}]]"), format!("[{name}]"));
    let Some(start) = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == array_header || l.trim() == header)
        .nth(n)
        .map(|(i, _)| i)
    else {
        return lines.iter().position(|l| sets(l, name)).map(|i| i + 1);
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .map_or(lines.len(), |i| start + 1 + i);
    Some(
        lines[start..end]
            .iter()
            .position(|l| sets(l, key))
            .map_or(start, |i| start + i)
            + 1,
    )
}
