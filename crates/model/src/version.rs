//! Engine versions: a name for what an engine is (a built-in player spec with its weights
//! and seed, an outside program by its sha256, or an engine built from a commit, with its
//! options, data files and bench signature), registered once and
//! used by name in tournament files (`[[engine]] version = "eval-v3"`). A version that has
//! played is never changed: a changed engine is a new version, whose `parent` says where
//! it came from. The regression timeline rates every version from all tournaments.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::source::{Source, check_files};
use crate::tournament::settings::MAX_NAME_CHARS;

/// The longest note of a version, in characters.
pub const MAX_NOTE_CHARS: usize = 500;
/// The most options a version may set.
pub const MAX_OPTIONS: usize = 64;
// A preset sets as many options as a version.
const _: () = assert!(MAX_OPTIONS == crate::tournament::followup::MAX_PRESET_OPTIONS);

/// The most follow-up presets a version carries.
pub const MAX_PRESETS: usize = 16;

/// A registered engine version.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineVersion {
    /// Its name: what tournament files and the timeline call it.
    pub name: String,
    /// A built-in player spec (`ab:depth=6,connectedness=80,seed=3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
    /// An outside engine's command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The sha256 of the outside engine's program, uploaded as an artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// An engine built from source: its repository, commit, build command and program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// The protocol an outside engine speaks (`None`: tourney's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// `setoption` values of an outside engine.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    /// Data files placed in an outside engine's working directory: name → sha256 of the
    /// uploaded content.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// The expected bench signature (nodes of the engine's `bench`): given at
    /// registration, or taken from the first worker that measures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
    /// The version it was made from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What changed, in the developer's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// When it was registered, Unix milliseconds.
    #[serde(default)]
    pub created_ms: u64,
    /// Its line's follow-up presets, by name: what `tourney clone --preset NAME` and
    /// `tourney submit --preset NAME` change in a test whose first engine is this version
    /// (`tc:60+0.6,elo0:0.5,elo1:2.5`; [`crate::tournament::followup::preset_changes`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub presets: BTreeMap<String, String>,
}

impl EngineVersion {
    /// Checks what a version must be: a name of 1 to [`MAX_NAME_CHARS`] characters
    /// without spaces or control characters; a player or a command, not both; options
    /// only for a command (at most [`MAX_OPTIONS`]); an artifact as 64 hex digits; a note
    /// of at most [`MAX_NOTE_CHARS`]; not its own parent.
    ///
    /// # Errors
    /// What is wrong, naming the field.
    pub fn check(&self) -> Result<(), String> {
        let name_ok = |name: &str| {
            !name.is_empty()
                && name.chars().count() <= MAX_NAME_CHARS
                && !name.chars().any(|c| c.is_whitespace() || c.is_control())
        };
        if !name_ok(&self.name) {
            return Err(format!(
                "name {:?}: 1 to {MAX_NAME_CHARS} characters, no spaces",
                self.name
            ));
        }
        match (&self.player, &self.command, &self.source) {
            (None, None, None) => {
                return Err("give a built-in player (--player ab:depth=6), an outside engine (--command ./engine) or a source (--git URL --commit REV --build CMD --binary PATH)".into());
            }
            (Some(_), None, None) | (None, Some(_), None) | (None, None, Some(_)) => {}
            _ => return Err("give one of player, command or source (git), not two".into()),
        }
        if let Some(c) = &self.command
            && c.trim().is_empty()
        {
            return Err("command: must not be empty".into());
        }
        if self.presets.len() > MAX_PRESETS {
            return Err(format!("presets: at most {MAX_PRESETS}"));
        }
        for (name, spec) in &self.presets {
            if !name_ok(name) {
                return Err(format!(
                    "preset {name:?}: 1 to {MAX_NAME_CHARS} characters, no spaces"
                ));
            }
            crate::tournament::followup::preset_changes(spec)
                .map_err(|e| format!("preset {name}: {e}"))?;
        }
        if let Some(p) = &self.player
            && p.trim().is_empty()
        {
            return Err("player: must not be empty".into());
        }
        if let Some(source) = &self.source {
            source
                .check(true)
                .map_err(|(key, message)| format!("{key}: {message}"))?;
        }
        let outside = self.player.is_none();
        if !outside
            && (!self.options.is_empty()
                || self.artifact.is_some()
                || !self.files.is_empty()
                || self.bench.is_some())
        {
            return Err("options, programs, files and bench are for outside engines".into());
        }
        if self.source.is_some() && self.artifact.is_some() {
            return Err("a version built from source has no uploaded program".into());
        }
        if let Some(p) = &self.protocol {
            if !outside {
                return Err(format!("protocol '{p}' is for an outside engine"));
            }
            crate::source::check_protocol(p)?;
        }
        if self.options.len() > MAX_OPTIONS {
            return Err(format!("at most {MAX_OPTIONS} options"));
        }
        check_files(&self.files, true).map_err(|e| format!("file {e}"))?;
        if let Some(sha) = &self.artifact
            && !crate::source::is_sha256(sha)
        {
            return Err(format!(
                "artifact {sha:?}: expected a sha256 (64 hex digits)"
            ));
        }
        if self.note.chars().count() > MAX_NOTE_CHARS {
            return Err(format!("note: at most {MAX_NOTE_CHARS} characters"));
        }
        match &self.parent {
            Some(p) if p == &self.name => Err("a version is not its own parent".into()),
            Some(p) if !name_ok(p) => Err(format!("parent {p:?} is not a version name")),
            _ => Ok(()),
        }
    }

    /// What it plays as, in one line: the spec, or the command with its options.
    pub fn describe(&self) -> String {
        let program = match (&self.player, &self.command, &self.source) {
            (Some(p), _, _) => return p.clone(),
            (None, Some(c), _) => {
                let sha = self.artifact.as_deref().map_or(String::new(), |s| {
                    format!(" (sha256 {})", &s[..12.min(s.len())])
                });
                format!("cmd:{c}{sha}")
            }
            (None, None, Some(source)) => source.spec(),
            (None, None, None) => return String::new(),
        };
        let extras: Vec<String> = (self.options.iter())
            .map(|(k, v)| format!("{k}={v}"))
            .chain(self.files.keys().map(|name| format!("file:{name}")))
            .chain(self.bench.map(|n| format!("bench:{n}")))
            .collect();
        if extras.is_empty() {
            program
        } else {
            format!("{program} {}", extras.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in(name: &str) -> EngineVersion {
        EngineVersion {
            name: name.into(),
            player: Some("ab:depth=4".into()),
            created_ms: 1,
            ..EngineVersion::default()
        }
    }

    #[test]
    fn a_version_is_a_player_or_a_command_with_a_plain_name() {
        assert_eq!(built_in("ab-v1").check(), Ok(()));
        let wrong = |change: fn(&mut EngineVersion)| {
            let mut v = built_in("ab-v1");
            change(&mut v);
            v.check().unwrap_err()
        };
        assert!(wrong(|v| v.name = "with space".into()).contains("no spaces"));
        assert!(wrong(|v| v.name = String::new()).contains("name"));
        assert!(wrong(|v| v.name = "x".repeat(101)).contains("100"));
        assert!(wrong(|v| v.command = Some("./e".into())).contains("not two"));
        assert!(wrong(|v| v.player = None).contains("give a built-in"));
        assert!(
            wrong(|v| {
                v.options.insert("Hash".into(), "64".into());
            })
            .contains("outside engines")
        );
        assert!(wrong(|v| v.parent = Some("ab-v1".into())).contains("own parent"));
        assert!(wrong(|v| v.note = "n".repeat(501)).contains("note"));
        let mut program = built_in("prog");
        program.player = None;
        program.command = Some("./engine --uci".into());
        program.artifact = Some("ab".repeat(32));
        program.options.insert("Hash".into(), "64".into());
        assert_eq!(program.check(), Ok(()));
        assert_eq!(
            program.describe(),
            "cmd:./engine --uci (sha256 abababababab) Hash=64"
        );
        program.artifact = Some("xyz".into());
        assert!(program.check().unwrap_err().contains("sha256"));
    }

    #[test]
    fn a_version_from_source_has_a_resolved_commit_and_no_program() {
        let mut v = built_in("src-1");
        v.player = None;
        v.source = Some(Source {
            git: "file:///repos/engine".into(),
            commit: "c".repeat(40),
            build: "cc -O2 -o engine engine.c".into(),
            binary: "engine".into(),
        });
        v.files.insert("net.bin".into(), "d".repeat(64));
        v.bench = Some(1234);
        assert_eq!(v.check(), Ok(()));
        assert_eq!(
            v.describe(),
            format!(
                "git:file:///repos/engine@{} file:net.bin bench:1234",
                "c".repeat(40)
            )
        );
        let mut branch = v.clone();
        branch.source.as_mut().unwrap().commit = "main".into();
        assert!(branch.check().unwrap_err().contains("commit"));
        let mut both = v.clone();
        both.artifact = Some("e".repeat(64));
        assert!(both.check().unwrap_err().contains("no uploaded program"));
        let mut bad_file = v.clone();
        bad_file.files.insert("a/../b".into(), "d".repeat(64));
        assert!(bad_file.check().unwrap_err().contains("a/../b"));
        let mut speaks = v.clone();
        speaks.protocol = Some("uci".into());
        assert_eq!(speaks.check(), Ok(()));
        speaks.protocol = Some("gtp2".into());
        assert!(speaks.check().unwrap_err().contains("protocol 'gtp2'"));
        let mut player_protocol = built_in("pp");
        player_protocol.protocol = Some("ugi".into());
        assert!(
            player_protocol
                .check()
                .unwrap_err()
                .contains("outside engine")
        );
        let mut player_bench = built_in("p");
        player_bench.bench = Some(1);
        assert!(
            player_bench
                .check()
                .unwrap_err()
                .contains("outside engines")
        );
    }
}
