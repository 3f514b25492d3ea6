//! A rating pool's settings (`format = "pool"`, the optional `[pool]` table): a standing
//! test that rates its engines jointly and pairs them by information, and never ends by
//! itself (docs/formats.md, "Rating pool").

use serde::{Deserialize, Serialize};

use super::validate::sprt_problem;
use super::{EngineEntry, MAX_ENGINES, MAX_PAIRS, SprtSettings, TournamentConfig};

/// The `[pool]` table of a `format = "pool"` tournament; every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolConfig {
    /// The engine whose rating is 0 (an `[[engine]]` name; default the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// The floor: an engine in fewer than this fraction of an even share of the recent
    /// pairs is paired first (0 to 1; default the rating pool's, 0.25).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
    /// A budget: the pool stops after this many pairs (default: it never stops by itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pairs: Option<u64>,
    /// Gating: each member after the first best plays an SPRT against the pool's best
    /// before it is paired in the pool, and becomes the best when it passes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<PoolGate>,
}

/// `[pool.gate]`: the SPRT each new member plays against the pool's best (the anchor at
/// first). Accepting H1 makes it the best; H0, or `max_pairs` undecided, leaves the best
/// as it is. Either way it is then paired in the pool like any member.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolGate {
    /// The SPRT, as an `sprt` test's table (`elo0`, `elo1`, `alpha`, `beta`, `model`,
    /// `max_pairs`).
    pub sprt: SprtSettings,
}

impl PoolConfig {
    /// The key at fault and why, if any, for a pool of `engines` (by name).
    pub fn problem(&self, engines: &[&str]) -> Option<(&'static str, String)> {
        if let Some(anchor) = &self.anchor
            && !engines.contains(&anchor.as_str())
        {
            return Some((
                "anchor",
                format!(
                    "'{anchor}' is not an engine of this pool (engines: {})",
                    engines.join(", ")
                ),
            ));
        }
        if let Some(floor) = self.floor
            && !(0.0..=1.0).contains(&floor)
        {
            return Some(("floor", format!("must be 0 to 1, found {floor}")));
        }
        if let Some((key, message)) = (self.gate.as_ref()).and_then(|g| sprt_problem(&g.sprt)) {
            return Some(("gate", format!("sprt.{key}: {message}")));
        }
        match self.max_pairs {
            Some(p) if !(1..=MAX_PAIRS).contains(&p) => {
                Some(("max_pairs", format!("must be 1 to {MAX_PAIRS}, found {p}")))
            }
            _ => None,
        }
    }
}

/// A registered version added to a running pool (`tourney pool add`), kept with the
/// tournament's record: a restart adds it again, from the same pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolMember {
    /// The registered version: its name is the engine's.
    pub version: String,
    /// The pair from which on it is in the pool: the pool's next pair when it was added.
    /// Its ratings count it from when every earlier pair is counted, so a restart rates
    /// it from the same point.
    pub from_pair: u64,
    /// When it was added, Unix milliseconds.
    pub added_ms: u64,
    /// Who added it.
    pub by: String,
}

impl TournamentConfig {
    /// Adds `member` as a pool's last engine, named as its version (its player, command or
    /// source filled in by [`TournamentConfig::resolve_versions`]).
    ///
    /// # Errors
    /// Not a pool, a name an engine of it has, or the pool is full ([`MAX_ENGINES`]).
    pub fn add_pool_member(&mut self, member: &PoolMember) -> Result<(), String> {
        let name = &member.version;
        if self.format != super::Format::Pool {
            return Err(format!(
                "'{}' is a {} tournament: versions join rating pools (format = \"pool\")",
                self.name,
                self.format.name()
            ));
        }
        if self.engines.iter().any(|e| &e.name == name) {
            return Err(format!(
                "'{name}' is already an engine of pool '{}'",
                self.name
            ));
        }
        if self.engines.len() >= MAX_ENGINES {
            return Err(format!(
                "pool '{}' has {MAX_ENGINES} engines, the most a tournament has",
                self.name
            ));
        }
        if let Some(last) = self.engines.last()
            && last.joins_at_pair > member.from_pair
        {
            return Err(format!(
                "'{name}' joins at pair {}, before the last member (pair {})",
                member.from_pair, last.joins_at_pair
            ));
        }
        self.engines.push(EngineEntry {
            name: name.clone(),
            version: Some(name.clone()),
            joins_at_pair: member.from_pair,
            ..EngineEntry::default()
        });
        Ok(())
    }

    /// A pool's settings (`None` for other formats); the defaults when it has no `[pool]`
    /// table.
    pub fn pool(&self) -> Option<PoolConfig> {
        (self.format == super::Format::Pool).then(|| self.pool.clone().unwrap_or_default())
    }

    /// The index of a pool's anchor: the engine `[pool] anchor` names, or the first.
    pub fn pool_anchor(&self) -> usize {
        let named = self.pool.as_ref().and_then(|p| p.anchor.as_deref());
        named
            .and_then(|a| self.engines.iter().position(|e| e.name == a))
            .unwrap_or(0)
    }
}
