//! Tournament files (TOML): what to play, between whom, under which limits, and when to
//! stop. Errors name the file, the line and the key.
//!
//! ```toml
//! name = "eval-v2-vs-v1"
//! game = "loa"
//! rules = { double-connection = "mover-wins" }
//! format = "sprt"
//! sprt = { elo0 = 0.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, model = "normalized", max_pairs = 20000 }
//! openings = { plies = 4, seed = 1 }
//! limits = { nodes = 20000 }
//! adjudication = { max_plies = 400 }
//!
//! [[engine]]
//! name = "v2"
//! player = "ab:connectedness=80"
//!
//! [[engine]]
//! name = "v1"
//! player = "ab"
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tourney_rules::GameKind;

mod engine;
mod error;
mod fleet;
pub mod followup;
mod outcome;
mod pool;
pub(crate) mod settings;
#[cfg(test)]
mod tests;
mod validate;

pub use crate::seed::game_seed;
use crate::seed::mix;
pub use engine::EngineEntry;
pub use error::{ConfigError, VersionError, parse_toml};
pub use fleet::Unmet;
pub use outcome::{PairOutcome, State};
pub use pool::{PoolConfig, PoolGate, PoolMember};
pub use settings::{
    AdjudicationSettings, ClockScale, DatagenOpenings, DatagenSettings, EngineLimits, EngineLogs,
    Format, LimitSettings, MAX_DATAGEN_FILE_MB, MAX_DATAGEN_POSITIONS, MAX_ENGINES, MAX_NAME_CHARS,
    MAX_PAIRS, OpeningSettings, OpeningsFormat, OpeningsOrder, SprtModel, SprtSettings,
};
pub use validate::{MAX_MATCH_PAIRS, MAX_NORMALIZED_ELO, MAX_TAKES, beyond_normalized};

/// A tournament file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentConfig {
    /// The tournament's name.
    pub name: String,
    /// `loa` or `amazons`.
    #[serde(with = "crate::game_kind")]
    pub game: GameKind,
    /// Rule options, e.g. `{ double-connection = "draw" }`.
    #[serde(default)]
    pub rules: BTreeMap<String, String>,
    /// How the engines meet.
    pub format: Format,
    /// Round-robin, gauntlet, pyramid and Swiss: rounds.
    pub rounds: Option<u32>,
    /// Match: pairs to play; knockout: pairs a match; Swiss: pairs a pairing.
    pub pairs: Option<u64>,
    /// Gauntlet: the first `seeds` engines each play all the others (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<u32>,
    /// Knockout: pairs played one at a time while a match is tied (default 1), before the
    /// higher seed goes through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiebreak_pairs: Option<u32>,
    /// SPRT settings (formats `sprt` and `takes`).
    pub sprt: Option<SprtSettings>,
    /// Tuning settings (format `spsa`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spsa: Option<crate::spsa::SpsaSettings>,
    /// Data generation settings (format `datagen`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datagen: Option<DatagenSettings>,
    /// Rating pool settings (format `pool`, all optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool: Option<PoolConfig>,
    /// Openings.
    #[serde(default)]
    pub openings: OpeningSettings,
    /// Limits.
    #[serde(default)]
    pub limits: LimitSettings,
    /// Adjudication.
    #[serde(default)]
    pub adjudication: AdjudicationSettings,
    /// What outside engines' processes may use.
    #[serde(default)]
    pub engine_limits: EngineLimits,
    /// Which games keep their outside engines' logs: `"failures"` (the default) or
    /// `"all"`.
    #[serde(default)]
    pub engine_logs: EngineLogs,
    /// Scheduling priority: higher runs first.
    #[serde(default)]
    pub priority: i32,
    /// Share of the workers among tournaments of equal priority.
    #[serde(default = "one_f64")]
    pub weight: f64,
    /// Threads each outside engine is given unless its `[[engine]]` says otherwise
    /// (default 1); a game takes the cores of its costliest side (see
    /// [`crate::fleet::cores_of_game`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// What a worker must have to take its pairs.
    #[serde(default, skip_serializing_if = "crate::fleet::Requirements::is_empty")]
    pub requires: crate::fleet::Requirements,
    /// Its own labels, which workers started with `--only LABEL` look for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    /// A test that disturbs the machine it runs on (all its cores, its memory bandwidth):
    /// workers started with `--avoid-noisy` do not take it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub noisy: bool,
    /// Seed of the games: each game's seed derives from it, its pair and its game (see
    /// [`TournamentConfig::pair_seed`]), and seeded built-in players mix it into their own.
    #[serde(default = "settings::one")]
    pub seed: u64,
    /// The engines.
    #[serde(default, rename = "engine")]
    pub engines: Vec<EngineEntry>,
}

fn one_f64() -> f64 {
    1.0
}

/// The two sides of a tuning run: the engine moved one way (`NAME+`, first in each pair)
/// and the other (`NAME-`).
fn spsa_sides(engine: &EngineEntry) -> [EngineEntry; 2] {
    let side = |sign: &str| EngineEntry {
        name: format!("{}{sign}", engine.name),
        ..engine.clone()
    };
    [side("+"), side("-")]
}

/// The two sides of one engine's self-play (`NAME.1`, first in each pair, and `NAME.2`).
fn self_play_sides(engine: &EngineEntry) -> [EngineEntry; 2] {
    let side = |n: u8| EngineEntry {
        name: format!("{}.{n}", engine.name),
        ..engine.clone()
    };
    [side(1), side(2)]
}

impl TournamentConfig {
    /// Parses and checks a tournament file's text; `file` names it in errors.
    ///
    /// # Errors
    /// [`ConfigError`] naming the line and key of the first problem.
    pub fn parse(text: &str, file: &str) -> Result<TournamentConfig, ConfigError> {
        let mut config: TournamentConfig = parse_toml(text, file)?;
        for engine in &mut config.engines {
            if let (true, Some(version)) = (engine.name.is_empty(), &engine.version) {
                engine.name = version.clone();
            }
        }
        config.validate().map_err(|(table, key, message)| {
            ConfigError::at_key(text, file, table, key, message)
        })?;
        match (config.format, config.engines.len()) {
            (Format::Spsa, _) => config.engines = spsa_sides(&config.engines[0]).into(),
            (Format::Datagen, 1) => config.engines = self_play_sides(&config.engines[0]).into(),
            _ => {}
        }
        Ok(config)
    }

    /// Fills in each engine given by `version` from the registered version `lookup`
    /// finds: its player, or its command or source, options (the entry's own over the
    /// version's), files and bench signature.
    /// Returns the outside programs' sha256 by engine name.
    ///
    /// # Errors
    /// An engine names a version `lookup` does not know, gives options to a version that
    /// is a built-in player, or names a version whose protocol cannot play this game (as
    /// an engine's own `protocol` is checked when the file is parsed).
    pub fn resolve_versions(
        &mut self,
        lookup: impl Fn(&str) -> Option<crate::version::EngineVersion>,
    ) -> Result<BTreeMap<String, String>, VersionError> {
        let mut artifacts = BTreeMap::new();
        let game = self.game;
        for (i, engine) in self.engines.iter_mut().enumerate() {
            let Some(name) = &engine.version else {
                continue;
            };
            let problem = |key, message| VersionError {
                engine: i,
                key,
                message,
            };
            let version = lookup(name).ok_or_else(|| {
                problem(
                    "version",
                    format!("no version '{name}' (see `tourney version list`)"),
                )
            })?;
            if version.player.is_some() && !engine.options.is_empty() {
                return Err(problem(
                    "options",
                    format!(
                        "version '{name}' is a built-in player: options are for outside engines"
                    ),
                ));
            }
            if let Some(p) = &version.protocol
                && !crate::source::protocol_plays(p, game)
            {
                return Err(problem(
                    "version",
                    format!(
                        "version '{name}' speaks {p}, which is for Amazons; this tournament \
                         plays {game}"
                    ),
                ));
            }
            engine.player = version.player;
            engine.command = version.command;
            engine.set_source(version.source);
            // The entry's own options are over the version's (a preset's `option.Hash`).
            let own = std::mem::take(&mut engine.options);
            engine.options = (version.options.into_iter())
                .map(|(k, v)| (k, toml::Value::String(v)))
                .chain(own)
                .collect();
            engine.files = version.files;
            engine.bench = version.bench;
            engine.protocol = version.protocol;
            if let Some(sha) = version.artifact {
                artifacts.insert(engine.name.clone(), sha);
            }
        }
        Ok(artifacts)
    }

    /// Applies what the submitter resolved and the workers found (`facts`, by engine name):
    /// commits, data files' sha256 and learnt bench signatures. Afterwards every engine
    /// built from source names a full commit hash and every data file a sha256 (one given
    /// as a sha256 in the file stands for itself).
    ///
    /// # Errors
    /// An engine's commit is not resolved, or a data file of it was not uploaded.
    pub fn apply_facts(
        &mut self,
        facts: &BTreeMap<String, crate::source::EngineFacts>,
    ) -> Result<(), String> {
        for (i, engine) in self.engines.iter_mut().enumerate() {
            let known = facts.get(&engine.name);
            if let Some(commit) = known.and_then(|f| f.commit.clone())
                && engine.git.is_some()
            {
                engine.commit = Some(commit);
            }
            if engine.bench.is_none() {
                engine.bench = known.and_then(|f| f.bench);
            }
            engine.reference_nps = known.and_then(|f| f.nps);
            // The files its command names (a script), uploaded with it.
            if engine.command.is_some() {
                for (name, sha) in known.map(|f| &f.files).into_iter().flatten() {
                    engine
                        .files
                        .entry(name.clone())
                        .or_insert_with(|| sha.clone());
                }
            }
            for (name, content) in engine.files.iter_mut() {
                match known.and_then(|f| f.files.get(name)) {
                    Some(sha) => *content = sha.clone(),
                    // Already the sha256 of an uploaded file (a version's, a run's own).
                    None if crate::source::is_sha256(content) => {}
                    None => return Err(format!("engine[{i}].files: '{name}' was not uploaded")),
                }
            }
            if let Some(source) = engine.source() {
                source
                    .check(true)
                    .map_err(|(key, message)| format!("engine[{i}].{key}: {message}"))?;
            }
        }
        Ok(())
    }

    /// The version each engine is, by engine index (`None`: not a registered version, or
    /// a version played with tuned parameters).
    pub fn versions(&self) -> Vec<Option<&str>> {
        (self.engines.iter())
            .map(|e| e.version.as_deref().filter(|_| self.format != Format::Spsa))
            .collect()
    }

    /// The rule options as `key=value,...` (the rules crate's text form).
    pub fn rules_text(&self) -> String {
        self.rules
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Pairs planned, or `None` where results decide how many (an SPRT or grouped test,
    /// open-ended up to `max_pairs`; a data generation run; a knockout's tie-breaks).
    pub fn planned_pairs(&self) -> Option<u64> {
        let n = self.engines.len() as u64;
        let rounds = u64::from(self.rounds.unwrap_or(1));
        match self.format {
            Format::RoundRobin | Format::Pyramid => {
                Some(rounds.saturating_mul(n * n.saturating_sub(1) / 2))
            }
            Format::Gauntlet => Some(rounds.saturating_mul(self.gauntlet_pairs_a_round())),
            Format::Match => self.pairs,
            Format::Spsa => self.spsa.as_ref().map(|s| s.pairs),
            Format::Swiss => Some(
                rounds
                    .saturating_mul(n / 2)
                    .saturating_mul(self.match_pairs()),
            ),
            Format::Sprt | Format::Datagen | Format::Takes | Format::Knockout | Format::Pool => {
                None
            }
        }
    }

    /// Its pair budget: the most pairs the tournament can play.
    pub fn pair_budget(&self) -> u64 {
        self.planned_pairs().unwrap_or_else(|| match self.format {
            Format::Datagen => self.datagen.as_ref().map_or(0, DatagenSettings::max_pairs),
            // Never ends by itself: its budget, or as many pairs as any test may play.
            Format::Pool => (self.pool.as_ref())
                .and_then(|p| p.max_pairs)
                .unwrap_or(MAX_PAIRS),
            // One match fewer than engines, each at most its pairs and tie-breaks.
            Format::Knockout => (self.engines.len() as u64)
                .saturating_sub(1)
                .saturating_mul(self.match_pairs() + u64::from(self.tiebreak_pairs.unwrap_or(1))),
            _ => self.sprt.as_ref().map_or(0, |s| s.max_pairs),
        })
    }

    /// Pairs a knockout match or a Swiss pairing plays before any tie-break (`pairs`,
    /// default 1).
    pub fn match_pairs(&self) -> u64 {
        self.pairs.unwrap_or(1).max(1)
    }

    /// A gauntlet round's pairs: each of the first `seeds` engines against every engine
    /// after it.
    fn gauntlet_pairs_a_round(&self) -> u64 {
        let n = self.engines.len() as u64;
        let k = u64::from(self.seeds.unwrap_or(1)).min(n);
        (0..k).map(|i| n - 1 - i).sum()
    }

    /// Sets the most pairs it may play (its pair budget): an SPRT's or a grouped test's
    /// `sprt.max_pairs`, a match's `pairs`, a pool's `pool.max_pairs`.
    ///
    /// # Errors
    /// A budget of 0, or a format whose length is not a number of pairs (rounds of a round
    /// robin or gauntlet, an SPSA run's schedule).
    pub fn set_pair_budget(&mut self, pairs: u64) -> Result<(), String> {
        if pairs == 0 {
            return Err("max_pairs: at least 1".into());
        }
        if !matches!(
            (self.format, &self.sprt),
            (Format::Sprt | Format::Takes, Some(_)) | (Format::Match | Format::Pool, _)
        ) {
            return Err(format!(
                "max_pairs: a {} test's length is not a pair budget (its rounds or \
                 schedule are its file's: clone it to change them)",
                self.format.name()
            ));
        }
        match self.format {
            Format::Match => self.pairs = Some(pairs),
            Format::Pool => self.pool.get_or_insert_default().max_pairs = Some(pairs),
            _ => self.sprt.as_mut().expect("checked above").max_pairs = pairs,
        }
        Ok(())
    }

    /// The pair budget as [`Self::set_pair_budget`] sets it: an SPRT's or a grouped test's
    /// `max_pairs`, a match's `pairs`, a pool's `max_pairs` if it has one; `None` where
    /// there is none to set (a pool without a bound, rounds, a schedule).
    pub fn pair_budget_set(&self) -> Option<u64> {
        match (self.format, &self.sprt) {
            (Format::Sprt | Format::Takes, Some(s)) => Some(s.max_pairs),
            (Format::Match, _) => Some(self.match_pairs()),
            (Format::Pool, _) => self.pool.as_ref().and_then(|p| p.max_pairs),
            _ => None,
        }
    }

    /// The seed of pair `index`; its game `g` (0 or 1) has seed
    /// [`game_seed`]`(pair_seed, g)`. Never 0.
    pub fn pair_seed(&self, index: u64) -> u64 {
        mix(self.seed, index.wrapping_add(1)).max(1)
    }

    /// The engines of pair `index` (indices into [`TournamentConfig::engines`]) and the
    /// index of its opening, for formats whose pairings are fixed by the file. Each pair
    /// plays the opening twice with colours swapped. `None` for the formats whose pairings
    /// depend on results ([`Format::is_dynamic`]): the scheduler makes those.
    pub fn pairing(&self, index: u64) -> Option<(usize, usize, u64)> {
        let n = self.engines.len() as u64;
        Some(match self.format {
            Format::RoundRobin => {
                let per_round = n * (n - 1) / 2;
                let (round, k) = (index / per_round, index % per_round);
                let (mut a, mut k) = (0, k);
                while k >= n - 1 - a {
                    k -= n - 1 - a;
                    a += 1;
                }
                (a as usize, (a + 1 + k) as usize, round)
            }
            Format::Pyramid => {
                // Engine b meets 0, 1, ..., b − 1 in turn: pairs (1,0), (2,0), (2,1), ...
                let per_round = n * (n - 1) / 2;
                let (round, k) = (index / per_round, index % per_round);
                let (mut b, mut k) = (1, k);
                while k >= b {
                    k -= b;
                    b += 1;
                }
                (b as usize, k as usize, round)
            }
            Format::Gauntlet => {
                let per_round = self.gauntlet_pairs_a_round();
                let (round, mut k) = (index / per_round, index % per_round);
                let mut seed = 0;
                while k >= n - 1 - seed {
                    k -= n - 1 - seed;
                    seed += 1;
                }
                (seed as usize, (seed + 1 + k) as usize, round)
            }
            Format::Sprt | Format::Match | Format::Spsa | Format::Datagen => (0, 1, index),
            Format::Takes | Format::Knockout | Format::Swiss | Format::Pool => return None,
        })
    }

    /// The openings the tournament may play: one a pair, or two for a data generation
    /// run from its suite (none when its engine makes them).
    pub fn openings_wanted(&self) -> u64 {
        match self.datagen().map(|d| d.openings) {
            Some(DatagenOpenings::Suite) => self.pair_budget().saturating_mul(2),
            Some(DatagenOpenings::Engine) => 0,
            None => self.pair_budget(),
        }
    }

    /// The data generation settings of a `datagen` run (`None` for other formats).
    pub fn datagen(&self) -> Option<&DatagenSettings> {
        self.datagen
            .as_ref()
            .filter(|_| self.format == Format::Datagen)
    }

    /// The suite openings of pair `index`'s two games: a data generation run plays each
    /// opening once (`2·index` and `2·index + 1`); every other format plays one twice,
    /// colours swapped (its round's, [`TournamentConfig::pairing`], or for a format whose
    /// pairings depend on results, the pair's own).
    pub fn pair_openings(&self, index: u64) -> [u64; 2] {
        match self.format {
            Format::Datagen => [index.saturating_mul(2), index.saturating_mul(2) | 1],
            _ => {
                let opening = self.pairing(index).map_or(index, |(_, _, round)| round);
                [opening, opening]
            }
        }
    }
}
