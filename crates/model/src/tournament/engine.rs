//! An `[[engine]]` entry of a tournament file: a built-in player, an outside program or a
//! registered version, with its own limits.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::LimitSettings;

/// An engine of the tournament: a built-in player, an outside program, or a registered
/// version of either ([`crate::version::EngineVersion`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// `setoption` values for an outside engine.
    #[serde(default)]
    pub options: BTreeMap<String, toml::Value>,
    /// This engine's own clock or per-move limits, in place of the tournament's (time
    /// odds); the time margin stays the tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitSettings>,
}

impl EngineEntry {
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
