//! Lists the dashboard's forms and pages read: the registered versions (for the New test
//! form's engines) and the accepted tests of each engine line (the verdicts list).

use std::collections::BTreeMap;

use serde::Serialize;
use tourney_model::tournament::Format;
use tourney_model::tournament::followup::{Changes, preset_changes};
use tourney_stats::Decision;

use crate::state::Coordinator;

/// The most accepted tests the verdicts list holds (the newest).
pub(super) const MAX_VERDICTS: usize = 500;

/// A registered version as the New test form offers it.
#[derive(Debug, Serialize)]
pub(super) struct VersionItem {
    name: String,
    parent: Option<String>,
    note: String,
    /// `player`, `program`, `source`.
    kind: &'static str,
    created_ms: u64,
    /// Its line's presets by name, for the form to fill its fields from.
    presets: BTreeMap<String, PresetItem>,
}

/// A version's preset (`tourney version add --preset`) as the New test form applies it:
/// what it sets (null: kept as the form has it).
#[derive(Debug, Serialize)]
pub(super) struct PresetItem {
    /// As registered (`tc:60+0.6,elo0:0.5,elo1:2.5`).
    spec: String,
    /// What it sets: `tc`, `nodes`, `depth`, `movetime`, `threads`, `elo0`, `elo1`,
    /// `max_pairs`, `priority`, `weight`, `book` (a sha256), `book_format`, `book_order`,
    /// `options`.
    #[serde(flatten)]
    sets: Changes,
}

/// The presets of a version as the form applies them (a spec that no longer reads, as
/// after a change of its keys, is left out).
fn presets_of(presets: &BTreeMap<String, String>) -> BTreeMap<String, PresetItem> {
    (presets.iter())
        .filter_map(|(name, spec)| {
            let sets = preset_changes(spec).ok()?;
            Some((
                name.clone(),
                PresetItem {
                    spec: spec.clone(),
                    sets,
                },
            ))
        })
        .collect()
}

/// Every registered version, newest first.
pub(super) fn version_list(c: &Coordinator) -> Vec<VersionItem> {
    let mut versions: Vec<VersionItem> = (c.versions().into_iter())
        .map(|v| VersionItem {
            kind: if v.player.is_some() {
                "player"
            } else if v.source.is_some() {
                "source"
            } else {
                "program"
            },
            presets: presets_of(&v.presets),
            name: v.name,
            parent: v.parent,
            note: v.note,
            created_ms: v.created_ms,
        })
        .collect();
    versions.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(a.name.cmp(&b.name)));
    versions
}

/// One accepted test: an SPRT that ended with H1.
#[derive(Debug, Serialize)]
pub(super) struct Verdict {
    id: u64,
    name: String,
    /// The patch (the first engine) and its base, by version where they are versions.
    patch: String,
    base: String,
    /// The patch's Elo against the base, as the ratings estimate it.
    elo: Option<f64>,
    pairs: u64,
    ended_ms: Option<u64>,
}

/// An engine line (the oldest ancestor of the patch's version, or the patch's name when
/// it is no version) and its accepted tests, newest first.
#[derive(Debug, Serialize)]
pub(super) struct Line {
    line: String,
    verdicts: Vec<Verdict>,
}

/// The patch and base engines (indices) of a finished test that accepted a patch: an
/// SPRT's first engine, or a grouped test's accepted take, against its base.
fn accepted(status: &crate::Status) -> Option<(usize, usize)> {
    match &status.progress {
        Some(tourney_report::FormatProgress::Takes { takes, .. }) => {
            let k = takes.iter().position(|t| t.state == "accepted")?;
            Some((k + 1, 0))
        }
        _ => (status.sprt.map(|s| s.decision) == Some(Decision::AcceptH1)).then_some((0, 1)),
    }
}

/// The accepted SPRTs, grouped tests' accepted takes and the versions rating pools' gates
/// promoted (at most [`MAX_VERDICTS`], the newest), by engine line.
pub(super) fn verdicts(c: &Coordinator) -> Vec<Line> {
    let parents: BTreeMap<String, Option<String>> = (c.versions().into_iter())
        .map(|v| (v.name, v.parent))
        .collect();
    let root = |name: &str| {
        let mut at = name.to_string();
        // A chain is at most as long as the versions are many (guards a loop).
        for _ in 0..parents.len() {
            match parents.get(&at).cloned().flatten() {
                Some(parent) if parents.contains_key(&parent) => at = parent,
                _ => break,
            }
        }
        at
    };
    let mut lines: BTreeMap<String, Vec<Verdict>> = BTreeMap::new();
    let mut kept = 0;
    for id in c.with_verdicts() {
        if kept == MAX_VERDICTS {
            break;
        }
        let Some(status) = c.status(id) else { continue };
        // A pool's promotions at its gate, newest first; another test's acceptance.
        let found: Vec<(usize, usize, u64)> = match status.config.format {
            Format::Pool => c.promotions(id),
            _ => accepted(&status)
                .map(|(p, b)| (p, b, status.pairs_done))
                .into_iter()
                .collect(),
        };
        for (p, b, pairs) in found {
            if kept == MAX_VERDICTS || p.max(b) >= status.config.engines.len() {
                break;
            }
            let label = |i: usize| {
                let e = &status.config.engines[i];
                e.version.clone().unwrap_or_else(|| e.name.clone())
            };
            let (patch, base) = (label(p), label(b));
            let players = &status.ratings.players;
            let named = |i: usize| {
                players
                    .iter()
                    .find(|x| x.name == status.config.engines[i].name)
            };
            let elo = named(p).zip(named(b)).map(|(a, b)| a.elo - b.elo);
            lines.entry(root(&patch)).or_default().push(Verdict {
                id,
                name: status.config.name.clone(),
                patch,
                base,
                elo,
                pairs,
                ended_ms: status.ended_ms,
            });
            kept += 1;
        }
    }
    lines
        .into_iter()
        .map(|(line, verdicts)| Line { line, verdicts })
        .collect()
}
