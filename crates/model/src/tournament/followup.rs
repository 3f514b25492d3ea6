//! Follow-ups of a test: its tournament file changed for a new test (`tourney clone`,
//! fishtest's reschedule: a passed STC again at LTC).
//!
//! The file is changed as a TOML table: a changed file keeps its keys and values but not
//! its comments or layout (tables' keys come out sorted). A clone with no change keeps
//! the text as it was.

use std::collections::BTreeMap;

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

/// The keys a registered preset may set (`tourney version add --preset`).
pub const PRESET_KEYS: &[&str] = &["tc", "elo0", "elo1", "max_pairs", "priority", "weight"];

/// The changes of a preset as a version line registers it: `key:value` pairs joined by
/// commas, of [`PRESET_KEYS`] (`tc:60+0.6,elo0:0.5,elo1:2.5,max_pairs:40000`).
///
/// # Errors
/// An unknown key, a value of the wrong kind, an empty preset; the message names it.
pub fn preset_changes(spec: &str) -> Result<Changes, String> {
    let mut changes = Changes::default();
    for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) =
            (pair.split_once(':')).ok_or_else(|| format!("'{pair}': expected KEY:VALUE"))?;
        let (key, value) = (key.trim(), value.trim());
        let bad = |e: &dyn std::fmt::Display| format!("'{pair}': {e}");
        match key {
            "tc" => {
                value.parse::<crate::TimeControl>().map_err(|e| bad(&e))?;
                changes.tc = Some(value.to_string());
            }
            "elo0" => changes.elo0 = Some(value.parse().map_err(|e| bad(&e))?),
            "elo1" => changes.elo1 = Some(value.parse().map_err(|e| bad(&e))?),
            "max_pairs" => changes.max_pairs = Some(value.parse().map_err(|e| bad(&e))?),
            "priority" => changes.priority = Some(value.parse().map_err(|e| bad(&e))?),
            "weight" => changes.weight = Some(value.parse().map_err(|e| bad(&e))?),
            _ => {
                return Err(format!(
                    "'{pair}': no key '{key}' (a preset sets {})",
                    PRESET_KEYS.join(", ")
                ));
            }
        }
    }
    if changes == Changes::default() {
        return Err(format!(
            "'{spec}': a preset sets at least one of {}",
            PRESET_KEYS.join(", ")
        ));
    }
    Ok(changes)
}

/// What a follow-up changes of its test's file; `None` (or `false`) keeps it as it was.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    /// `name`.
    pub name: Option<String>,
    /// `limits.tc`, the clock (`60+0.6`; the changed file is checked as a whole).
    pub tc: Option<String>,
    /// Drops the per-move limits `limits.nodes`, `limits.depth` and `limits.movetime`.
    pub no_move_limits: bool,
    /// `sprt.elo0`.
    pub elo0: Option<f64>,
    /// `sprt.elo1`.
    pub elo1: Option<f64>,
    /// The pair budget: an SPRT's (or grouped test's) `sprt.max_pairs`, a match's `pairs`.
    pub max_pairs: Option<u64>,
    /// `priority`.
    pub priority: Option<i32>,
    /// `weight`.
    pub weight: Option<f64>,
    /// The openings file becomes the suite as played (`format = "positions"`, `order =
    /// "sequential"`, no `offset`), sent with the clone in place of the file.
    pub openings_as_played: bool,
    /// Engines from source get their full commit, and data files their sha256, written in
    /// the file (by engine name), so that it submits alike from anywhere.
    pub pins: BTreeMap<String, EngineFacts>,
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
    if changes.tc.is_some() || changes.no_move_limits {
        let limits = sub_table(&mut table, "limits");
        if let Some(tc) = &changes.tc {
            limits.insert("tc".into(), Value::String(tc.clone()));
        }
        if changes.no_move_limits {
            for key in ["nodes", "depth", "movetime"] {
                limits.remove(key);
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
    if let Some(pairs) = changes.max_pairs {
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
    if changes.openings_as_played && config.openings.file.is_some() {
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
mod tests {
    use super::*;

    const SPRT: &str = r#"# the patch at STC
name = "patch"
game = "loa"
format = "sprt"
sprt = { elo0 = 0.0, elo1 = 2.0, max_pairs = 1000 }
openings = { file = "book.txt", order = "random", offset = 5 }
limits = { tc = "10+0.1", nodes = 5000 }

[[engine]]
name = "new"
git = "https://example.com/e.git"
commit = "main"
build = "make"
binary = "e"
files = { "nn.bin" = "nets/nn.bin" }

[[engine]]
name = "old"
player = "ab"
"#;

    #[test]
    fn a_clone_without_changes_keeps_the_text() {
        let (text, notes) = follow_up(SPRT, "stc.toml", &Changes::default()).unwrap();
        assert_eq!(text, SPRT);
        assert!(notes.is_empty());
    }

    #[test]
    fn a_reschedule_at_ltc_changes_the_clock_and_the_bounds() {
        let (elo0, elo1) = bound_preset("LTC").unwrap();
        let sha = "ab".repeat(32);
        let commit = "c0ffee".repeat(6) + "c0ff";
        let changes = Changes {
            name: Some("patch LTC".into()),
            tc: Some("60+0.6".into()),
            no_move_limits: true,
            elo0: Some(elo0),
            elo1: Some(elo1),
            max_pairs: Some(5000),
            priority: Some(2),
            weight: Some(1.5),
            openings_as_played: true,
            pins: BTreeMap::from([(
                "new".to_string(),
                EngineFacts {
                    commit: Some(commit.clone()),
                    files: BTreeMap::from([("nn.bin".to_string(), sha.clone())]),
                    ..Default::default()
                },
            )]),
        };
        let (text, _) = follow_up(SPRT, "stc.toml", &changes).unwrap();
        let c = TournamentConfig::parse(&text, "ltc.toml").unwrap();
        assert_eq!(c.name, "patch LTC");
        assert_eq!(c.limits.tc.as_deref(), Some("60+0.6"));
        assert_eq!((c.limits.nodes, c.limits.movetime), (None, None));
        let sprt = c.sprt.unwrap();
        assert_eq!((sprt.elo0, sprt.elo1, sprt.max_pairs), (0.5, 2.5, 5000));
        assert_eq!((c.priority, c.weight), (2, 1.5));
        assert_eq!(
            c.openings.order,
            crate::tournament::OpeningsOrder::Sequential
        );
        assert_eq!(c.openings.offset, 0);
        let new = &c.engines[0];
        assert_eq!(new.files["nn.bin"], sha);
        assert_eq!(new.source().unwrap().commit, commit);
    }

    #[test]
    fn a_change_the_format_has_no_place_for_is_refused() {
        let robin = "name = \"r\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 2\n\
                     limits = { nodes = 100 }\n\
                     [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n";
        let bounds = Changes {
            elo0: Some(0.0),
            ..Default::default()
        };
        let e = follow_up(robin, "r.toml", &bounds).unwrap_err();
        assert!(e.contains("round-robin has no sprt table"), "{e}");
        let pairs = Changes {
            max_pairs: Some(10),
            ..Default::default()
        };
        let e = follow_up(robin, "r.toml", &pairs).unwrap_err();
        assert!(e.contains("--max-pairs"), "{e}");
        // Bounds the SPRT refuses are named by their key.
        let wrong = Changes {
            elo0: Some(3.0),
            ..Default::default()
        };
        let e = follow_up(SPRT, "stc.toml", &wrong).unwrap_err();
        assert!(e.contains("sprt.elo1"), "{e}");
        assert!(bound_preset("vltc").unwrap_err().contains("ltc [0.5, 2.5]"));
    }

    #[test]
    fn a_registered_preset_reads_as_changes() {
        let ltc = preset_changes("tc:60+0.6, elo0:0.5,elo1:2.5,max_pairs:40000").unwrap();
        assert_eq!(ltc.tc.as_deref(), Some("60+0.6"));
        assert_eq!(
            (ltc.elo0, ltc.elo1, ltc.max_pairs),
            (Some(0.5), Some(2.5), Some(40000))
        );
        for (bad, says) in [
            ("tc:60+x", "'tc:60+x'"),
            ("book:x.epd", "no key 'book'"),
            ("elo0", "expected KEY:VALUE"),
            ("", "at least one"),
        ] {
            let e = preset_changes(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
