//! Follow-ups of a test: its tournament file changed for a new test (`tourney clone`,
//! fishtest's reschedule: a passed STC again at LTC).
//!
//! The file is changed as a TOML table: a changed file keeps its keys and values but not
//! its comments or layout (tables' keys come out sorted). A clone with no change keeps
//! the text as it was.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use toml::{Table, Value};

use super::{Format, TournamentConfig};
use crate::source::EngineFacts;

/// The SPRT bound presets, in normalized Elo, as fishtest's and the dashboard's form
/// name them: `stc` [0, 2], `ltc` [0.5, 2.5], `nonreg` [−1.75, 0.25] (non-regression).
pub const BOUND_PRESETS: &[(&str, f64, f64)] = &[
    ("stc", 0.0, 2.0),
    ("ltc", 0.5, 2.5),
    ("nonreg", -1.75, 0.25),
];

/// The bounds (elo0, elo1) of preset `name`.
///
/// # Errors
/// An unknown preset, the message listing those known.
pub fn bound_preset(name: &str) -> Result<(f64, f64), String> {
    (BOUND_PRESETS.iter())
        .find(|(n, _, _)| n.eq_ignore_ascii_case(name))
        .map(|&(_, elo0, elo1)| (elo0, elo1))
        .ok_or_else(|| {
            let known: Vec<String> = (BOUND_PRESETS.iter())
                .map(|(n, a, b)| format!("{n} [{a}, {b}]"))
                .collect();
            format!("no preset '{name}' (known: {})", known.join(", "))
        })
}

/// The keys a registered preset may set (`tourney version add --preset`), besides
/// `option.NAME` (an engine option, [`Changes::options`]).
pub const PRESET_KEYS: &[&str] = &[
    "tc",
    "nodes",
    "depth",
    "movetime",
    "threads",
    "elo0",
    "elo1",
    "max_pairs",
    "priority",
    "weight",
    "book",
    "book_format",
    "book_order",
];

/// The longest preset, in characters.
pub const MAX_PRESET_CHARS: usize = 2000;

/// The most engine options (`option.NAME`) one preset sets: as many as a version sets
/// ([`crate::version::MAX_OPTIONS`], checked there).
pub const MAX_PRESET_OPTIONS: usize = 64;

/// The longest engine option's name or value in a preset, in characters.
pub const MAX_OPTION_CHARS: usize = 200;

/// The changes of a preset as a version line registers it: `key:value` pairs joined by
/// commas, of [`PRESET_KEYS`] and `option.NAME` (`tc:60+0.6,elo0:0.5,elo1:2.5,
/// max_pairs:40000,option.Hash:64,book:<sha256>,book_format:moves`). `book` is the sha256
/// of an openings file uploaded to the coordinator (`tourney version add --preset` uploads
/// one given by path); `book_format` and `book_order` are its `openings.format` and
/// `openings.order`.
///
/// # Errors
/// An unknown key, a value of the wrong kind or out of bounds, a key given twice, an
/// empty or too long preset; the message names the pair.
pub fn preset_changes(spec: &str) -> Result<Changes, String> {
    if spec.chars().count() > MAX_PRESET_CHARS {
        return Err(format!(
            "a preset has at most {MAX_PRESET_CHARS} characters"
        ));
    }
    let mut changes = Changes::default();
    let mut seen = BTreeSet::new();
    for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) =
            (pair.split_once(':')).ok_or_else(|| format!("'{pair}': expected KEY:VALUE"))?;
        let (key, value) = (key.trim(), value.trim());
        if !seen.insert(key) {
            return Err(format!("'{pair}': '{key}' is given twice"));
        }
        preset_pair(&mut changes, key, value).map_err(|e| format!("'{pair}': {e}"))?;
    }
    if changes.options.len() > MAX_PRESET_OPTIONS {
        return Err(format!(
            "'{spec}': at most {MAX_PRESET_OPTIONS} options a preset"
        ));
    }
    if changes == Changes::default() {
        return Err(format!(
            "'{spec}': a preset sets at least one of {} or option.NAME",
            PRESET_KEYS.join(", ")
        ));
    }
    if changes.book.is_none() && (changes.book_format.is_some() || changes.book_order.is_some()) {
        return Err(format!(
            "'{spec}': book_format and book_order are of a book: give book too"
        ));
    }
    Ok(changes)
}

/// Sets `key` of a preset to `value` in `changes`.
fn preset_pair(changes: &mut Changes, key: &str, value: &str) -> Result<(), String> {
    fn count<T: std::str::FromStr<Err: std::fmt::Display> + Default + PartialEq>(
        value: &str,
    ) -> Result<T, String> {
        let n: T = value.parse().map_err(|e| format!("{e}"))?;
        if n == T::default() {
            return Err("must be 1 or more".into());
        }
        Ok(n)
    }
    let bad = |e: &dyn std::fmt::Display| e.to_string();
    match key {
        "tc" => {
            value.parse::<crate::TimeControl>().map_err(|e| bad(&e))?;
            changes.tc = Some(value.to_string());
        }
        "nodes" => changes.nodes = Some(count(value)?),
        "depth" => changes.depth = Some(count(value)?),
        "movetime" => changes.movetime = Some(count(value)?),
        "threads" => {
            let most = crate::fleet::MAX_THREADS;
            let n: u32 = count(value)?;
            if n > most {
                return Err(format!("must be 1 to {most}"));
            }
            changes.threads = Some(n);
        }
        "elo0" => changes.elo0 = Some(value.parse().map_err(|e| bad(&e))?),
        "elo1" => changes.elo1 = Some(value.parse().map_err(|e| bad(&e))?),
        "max_pairs" => changes.pair_budget = Some(value.parse().map_err(|e| bad(&e))?),
        "priority" => changes.priority = Some(value.parse().map_err(|e| bad(&e))?),
        "weight" => changes.weight = Some(value.parse().map_err(|e| bad(&e))?),
        "book" => {
            if !crate::source::is_sha256(value) {
                return Err("expected the sha256 of an uploaded openings file (64 hex \
                            digits)"
                    .into());
            }
            changes.book = Some(value.to_ascii_lowercase());
        }
        "book_format" => {
            changes.book_format = Some(enum_value(value, "positions, moves or pgn")?);
        }
        "book_order" => {
            changes.book_order = Some(enum_value(value, "sequential or random")?);
        }
        _ => {
            let Some(name) = key.strip_prefix("option.") else {
                return Err(format!(
                    "no key '{key}' (a preset sets {} or option.NAME)",
                    PRESET_KEYS.join(", ")
                ));
            };
            let plain = |t: &str| {
                (1..=MAX_OPTION_CHARS).contains(&t.chars().count())
                    && !t.chars().any(|c| c.is_control() || c == '=')
            };
            if !plain(name) || !plain(value) {
                return Err(format!(
                    "an option's name and value are 1 to {MAX_OPTION_CHARS} characters, \
                     no '=' or control characters"
                ));
            }
            changes.options.insert(name.to_string(), value.to_string());
        }
    }
    Ok(())
}

/// A value of a kebab-case enum of the tournament file (`moves`), `expected` naming those
/// known.
fn enum_value<T: serde::de::DeserializeOwned>(value: &str, expected: &str) -> Result<T, String> {
    T::deserialize(toml::Value::String(value.to_string()))
        .map_err(|_| format!("expected {expected}"))
}

/// What a follow-up changes of its test's file; `None` (or `false`, or empty) keeps it as
/// it was. Serialized, what a preset sets (the dashboard's form fills its fields from it).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Changes {
    /// `name`.
    #[serde(skip)]
    pub name: Option<String>,
    /// `limits.tc`, the clock (`60+0.6`; the changed file is checked as a whole).
    pub tc: Option<String>,
    /// `limits.nodes`.
    pub nodes: Option<u64>,
    /// `limits.depth`.
    pub depth: Option<u32>,
    /// `limits.movetime`, milliseconds.
    pub movetime: Option<u64>,
    /// Drops the per-move limits `limits.nodes`, `limits.depth` and `limits.movetime`
    /// (those the other fields do not set).
    #[serde(skip)]
    pub no_move_limits: bool,
    /// `threads`: each outside engine's threads.
    pub threads: Option<u32>,
    /// `sprt.elo0`.
    pub elo0: Option<f64>,
    /// `sprt.elo1`.
    pub elo1: Option<f64>,
    /// The pair budget: an SPRT's (or grouped test's) `sprt.max_pairs`, a match's `pairs`.
    pub pair_budget: Option<u64>,
    /// `priority`.
    pub priority: Option<i32>,
    /// `weight`.
    pub weight: Option<f64>,
    /// The openings: a file uploaded to the coordinator, by sha256 (`openings = { file =
    /// "<sha256>" }`, in place of the openings the file had; its `seed` kept).
    pub book: Option<String>,
    /// With `book`: `openings.format`.
    pub book_format: Option<super::OpeningsFormat>,
    /// With `book`: `openings.order`.
    pub book_order: Option<super::OpeningsOrder>,
    /// Engine options (`setoption` values), set in the `options` of every engine that
    /// takes them (an outside engine, or a registered version not in `players`), as
    /// OpenBench's presets give both engines their options: an SPRT's two sides keep the
    /// same hash and threads.
    pub options: BTreeMap<String, String>,
    /// The registered versions that are built-in players (which take no options).
    #[serde(skip)]
    pub players: BTreeSet<String>,
    /// The openings file becomes the suite as played (`format = "positions"`, `order =
    /// "sequential"`, no `offset`), sent with the clone in place of the file.
    #[serde(skip)]
    pub openings_as_played: bool,
    /// Engines from source get their full commit, and data files their sha256, written in
    /// the file (by engine name), so that it submits alike from anywhere.
    #[serde(skip)]
    pub pins: BTreeMap<String, EngineFacts>,
}

impl Changes {
    /// These changes, with what they leave unset taken from `preset` (flags over a
    /// preset); options are merged, these winning.
    #[must_use]
    pub fn over(self, preset: Changes) -> Changes {
        let mut options = preset.options;
        options.extend(self.options);
        let mut players = preset.players;
        players.extend(self.players);
        Changes {
            name: self.name.or(preset.name),
            tc: self.tc.or(preset.tc),
            nodes: self.nodes.or(preset.nodes),
            depth: self.depth.or(preset.depth),
            movetime: self.movetime.or(preset.movetime),
            no_move_limits: self.no_move_limits || preset.no_move_limits,
            threads: self.threads.or(preset.threads),
            elo0: self.elo0.or(preset.elo0),
            elo1: self.elo1.or(preset.elo1),
            pair_budget: self.pair_budget.or(preset.pair_budget),
            priority: self.priority.or(preset.priority),
            weight: self.weight.or(preset.weight),
            book: self.book.clone().or(preset.book),
            book_format: if self.book.is_some() {
                self.book_format
            } else {
                preset.book_format
            },
            book_order: if self.book.is_some() {
                self.book_order
            } else {
                preset.book_order
            },
            options,
            players,
            openings_as_played: self.openings_as_played || preset.openings_as_played,
            pins: if self.pins.is_empty() {
                preset.pins
            } else {
                self.pins
            },
        }
    }
}

/// A follow-up's file: `text` (named `file`) with `changes`, checked as a tournament file,
/// and what its author should know (an engine that keeps its own clock).
///
/// # Errors
/// The text is no tournament file; a change its format has no place for (bounds of a test
/// without an SPRT, a pair budget of a round robin); the changed file is no valid
/// tournament (the message names the key).
pub fn follow_up(
    text: &str,
    file: &str,
    changes: &Changes,
) -> Result<(String, Vec<String>), String> {
    let config = TournamentConfig::parse(text, file).map_err(|e| e.to_string())?;
    if *changes == Changes::default() {
        return Ok((text.to_string(), Vec::new()));
    }
    let mut table: Table = text.parse().map_err(|e| format!("{file}: {e}"))?;
    let mut notes = Vec::new();
    if let Some(name) = &changes.name {
        table.insert("name".into(), Value::String(name.clone()));
    }
    let per_move = [
        ("nodes", changes.nodes),
        ("depth", changes.depth.map(u64::from)),
        ("movetime", changes.movetime),
    ];
    if changes.tc.is_some() || changes.no_move_limits || per_move.iter().any(|(_, v)| v.is_some()) {
        let limits = sub_table(&mut table, "limits");
        if let Some(tc) = &changes.tc {
            limits.insert("tc".into(), Value::String(tc.clone()));
        }
        if changes.no_move_limits {
            for key in ["nodes", "depth", "movetime"] {
                limits.remove(key);
            }
        }
        for (key, value) in per_move {
            if let Some(v) = value {
                let v = i64::try_from(v).map_err(|_| format!("limits.{key}: too large"))?;
                limits.insert(key.into(), Value::Integer(v));
            }
        }
        for engine in config.engines.iter().filter(|e| e.limits.is_some()) {
            notes.push(format!(
                "engine '{}' keeps its own limits ([[engine]] limits)",
                engine.name
            ));
        }
    }
    if changes.elo0.is_some() || changes.elo1.is_some() {
        if config.sprt.is_none() {
            return Err(format!(
                "{file}: --elo0/--elo1/--preset: a {} has no sprt table to change",
                config.format.name()
            ));
        }
        let sprt = sub_table(&mut table, "sprt");
        for (key, value) in [("elo0", changes.elo0), ("elo1", changes.elo1)] {
            if let Some(v) = value {
                sprt.insert(key.into(), Value::Float(v));
            }
        }
    }
    if let Some(pairs) = changes.pair_budget {
        let pairs = Value::Integer(i64::try_from(pairs).map_err(|_| "--max-pairs: too many")?);
        match config.format {
            Format::Sprt | Format::Takes => {
                sub_table(&mut table, "sprt").insert("max_pairs".into(), pairs);
            }
            Format::Match => {
                table.insert("pairs".into(), pairs);
            }
            other => {
                return Err(format!(
                    "--max-pairs: a {} has no pair budget (only an SPRT, a grouped test or a \
                     match)",
                    other.name()
                ));
            }
        }
    }
    if let Some(priority) = changes.priority {
        table.insert("priority".into(), Value::Integer(priority.into()));
    }
    if let Some(weight) = changes.weight {
        table.insert("weight".into(), Value::Float(weight));
    }
    if let Some(threads) = changes.threads {
        table.insert("threads".into(), Value::Integer(threads.into()));
    }
    if let Some(book) = &changes.book {
        let seed = (table.get("openings").and_then(|o| o.get("seed")).cloned())
            .unwrap_or(Value::Integer(1));
        let mut openings = Table::new();
        openings.insert("file".into(), Value::String(book.clone()));
        openings.insert("seed".into(), seed);
        if let Some(format) = &changes.book_format {
            openings.insert("format".into(), enum_text(format)?);
        }
        if let Some(order) = &changes.book_order {
            openings.insert("order".into(), enum_text(order)?);
        }
        table.insert("openings".into(), Value::Table(openings));
    }
    set_options(&mut table, &changes.options, &changes.players);
    if changes.openings_as_played && changes.book.is_none() && config.openings.file.is_some() {
        let openings = sub_table(&mut table, "openings");
        openings.insert("format".into(), Value::String("positions".into()));
        openings.insert("order".into(), Value::String("sequential".into()));
        openings.remove("offset");
    }
    pin(&mut table, &changes.pins);
    let changed = toml::to_string(&table).map_err(|e| format!("{file}: {e}"))?;
    TournamentConfig::parse(&changed, file).map_err(|e| e.to_string())?;
    Ok((changed, notes))
}

/// A kebab-case enum of the tournament file as its TOML value (`"moves"`).
fn enum_text(value: &impl Serialize) -> Result<Value, String> {
    Value::try_from(value).map_err(|e| e.to_string())
}

/// Sets `options` in every engine that takes options: one with a command or a source,
/// or a registered version not in `players` (built-in players).
fn set_options(table: &mut Table, options: &BTreeMap<String, String>, players: &BTreeSet<String>) {
    let Some(Value::Array(engines)) = table.get_mut("engine").filter(|_| !options.is_empty())
    else {
        return;
    };
    for engine in engines.iter_mut().filter_map(Value::as_table_mut) {
        let version = engine.get("version").and_then(Value::as_str);
        let outside = engine.contains_key("command") || engine.contains_key("git");
        if !outside && version.is_none_or(|v| players.contains(v)) {
            continue;
        }
        let set = sub_table(engine, "options");
        for (name, value) in options {
            set.insert(name.clone(), Value::String(value.clone()));
        }
    }
}

/// Writes each engine's full commit and its data files' sha256 into its `[[engine]]`.
fn pin(table: &mut Table, pins: &BTreeMap<String, EngineFacts>) {
    let Some(Value::Array(engines)) = table.get_mut("engine") else {
        return;
    };
    for engine in engines.iter_mut().filter_map(Value::as_table_mut) {
        let name = (engine.get("name").or_else(|| engine.get("version")))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let Some(facts) = pins.get(&name) else {
            continue;
        };
        if let Some(commit) = &facts.commit
            && engine.contains_key("commit")
        {
            engine.insert("commit".into(), Value::String(commit.clone()));
        }
        if let Some(Value::Table(files)) = engine.get_mut("files") {
            for (name, sha256) in &facts.files {
                if files.contains_key(name) {
                    files.insert(name.clone(), Value::String(sha256.clone()));
                }
            }
        }
    }
}

/// `table[key]`, made an empty table when absent (or not a table).
fn sub_table<'a>(table: &'a mut Table, key: &str) -> &'a mut Table {
    let entry = table
        .entry(key.to_string())
        .or_insert_with(|| Value::Table(Table::new()));
    if !entry.is_table() {
        *entry = Value::Table(Table::new());
    }
    match entry {
        Value::Table(t) => t,
        _ => unreachable!("made a table above"),
    }
}

#[cfg(test)]
mod tests;
