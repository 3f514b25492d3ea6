//! An `[[engine]]` entry of a tournament file: a built-in player, an outside program, an
//! engine built from source or a registered version, with its own limits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LimitSettings;

/// An engine of the tournament: a built-in player, an outside program, or a registered
/// version of either ([`crate::version::EngineVersion`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineEntry {
    /// Its name in the standings (a version's name when it is left out).
    #[serde(default)]
    pub name: String,
    /// A registered version: the coordinator fills in its player, or its command, program
    /// and options ([`TournamentConfig::resolve_versions`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// A built-in player spec (`ab:depth=6`).
    pub player: Option<String>,
    /// An outside engine's command line; its program is uploaded as an artifact.
    pub command: Option<String>,
    /// An engine built from source: the repository (with `commit`, `build`, `binary`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<String>,
    /// Its commit (a branch or tag is resolved to its commit at submission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its build command, run by `sh -c` in the checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<String>,
    /// The built program's path in the checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
    /// The protocol an outside engine speaks: `tourney` (the default), `ugi` or `uci`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// Threads this outside engine is given (its `Threads` option, unless `options` set
    /// it), in place of the tournament's `threads`; a worker keeps that many cores for it
    /// while its game runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// `setoption` values for an outside engine.
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
    /// Data files placed in an outside engine's working directory: name → path of the
    /// file (beside the tournament file), uploaded at submission and kept as its sha256.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// The expected bench signature (nodes of the engine's `bench`); when left out, the
    /// first worker's count is taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
    /// Its reference bench speed (nodes per second), learnt from the first worker that
    /// measured it (see [`crate::source::EngineFacts::nps`]); not a key of the file.
    #[serde(skip)]
    pub reference_nps: Option<u64>,
    /// A rating pool's member added while it ran ([`super::pool::PoolMember`]): the pair
    /// from which on it is in the pool (0 for the file's engines); not a key of the file.
    #[serde(skip)]
    pub joins_at_pair: u64,
    /// This engine's own clock or per-move limits, in place of the tournament's (time
    /// odds); the time margin stays the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitSettings>,
}

impl EngineEntry {
    /// The source it is built from, when its four keys are given (a validated entry has
    /// all four or none).
    pub fn source(&self) -> Option<crate::source::Source> {
        crate::source::Source::from_keys(
            self.git.as_deref(),
            self.commit.as_deref(),
            self.build.as_deref(),
            self.binary.as_deref(),
        )
        .ok()
        .flatten()
    }

    /// Sets the four source keys from `source`.
    pub fn set_source(&mut self, source: Option<crate::source::Source>) {
        let parts = source.map(|s| (s.git, s.commit, s.build, s.binary));
        let (git, commit, build, binary) = match parts {
            Some((g, c, b, p)) => (Some(g), Some(c), Some(b), Some(p)),
            None => (None, None, None, None),
        };
        (self.git, self.commit, self.build, self.binary) = (git, commit, build, binary);
    }

    /// The `setoption` values of an outside engine, as the protocol sends them (text; an
    /// array as its items separated by spaces).
    pub fn option_values(&self) -> Vec<(String, String)> {
        fn text(v: &toml::Value) -> String {
            match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                toml::Value::Datetime(d) => d.to_string(),
                toml::Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(" "),
                toml::Value::Table(t) => t
                    .iter()
                    .map(|(k, v)| format!("{k}={}", text(v)))
                    .collect::<Vec<_>>()
                    .join(" "),
            }
        }
        self.options
            .iter()
            .map(|(k, v)| (k.clone(), text(v)))
            .collect()
    }
}
