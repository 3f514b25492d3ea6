//! What a report says about how its numbers were made: the game and rules, the format,
//! limits, adjudication, openings, each engine's spec or program hash, and when it started,
//! how long it has run and when it should end (before its first pair: when it was
//! submitted). Shown on the dashboard and in every report.

use std::collections::BTreeMap;

use tourney_model::tournament::{Format, TournamentConfig};
use tourney_model::{Utc, hms};

use crate::types::Status;

/// The labelled lines of a tournament's details. `openings`: the size of its suite;
/// `artifacts`: uploaded programs' sha256 by engine name; `now_ms`: Unix milliseconds.
pub fn details(
    status: &Status,
    openings: usize,
    artifacts: &BTreeMap<String, String>,
    now_ms: u64,
) -> Vec<(String, String)> {
    let c = &status.config;
    let mut out = vec![
        ("Game".to_string(), game_text(c)),
        ("Format".into(), format_text(c)),
        ("Limits".into(), limits_text(c)),
        ("Adjudication".into(), adjudication_text(c)),
        ("Openings".into(), {
            let text = openings_text(c, openings);
            match status.openings_note() {
                Some(note) => format!("{text}; {note}"),
                None => text,
            }
        }),
    ];
    for engine in &c.engines {
        let what = match (&engine.player, &engine.command) {
            (Some(spec), _) => spec.clone(),
            (None, Some(command)) => {
                let mut text = format!("command `{command}`");
                if let Some(protocol) = engine.protocol.as_deref().filter(|p| *p != "tourney") {
                    text += &format!(", protocol {protocol}");
                }
                match artifacts.get(&engine.name) {
                    Some(sha) => text += &format!(", program sha256 {sha}"),
                    // A bare name (an interpreter, `python3`) is each worker's own.
                    None => {
                        let words = tourney_model::source::split_command(command);
                        if let Some(program) = words.first().filter(|p| !p.contains('/')) {
                            text += &format!(", {program} from each worker's PATH");
                        }
                    }
                }
                if !engine.files.is_empty() {
                    let names: Vec<&str> = engine.files.keys().map(String::as_str).collect();
                    text += &format!(", files {}", names.join(" "));
                }
                if !engine.options.is_empty() {
                    let options: Vec<String> = engine
                        .option_values()
                        .into_iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    text += &format!(", options {}", options.join(" "));
                }
                text
            }
            (None, None) => String::new(),
        };
        out.push((format!("Engine {}", engine.name), what));
    }
    let submitted = Utc::from_unix_ms(status.created_ms).to_string();
    if status.pairs_done == 0 {
        // Nothing played yet (waiting for approval or for workers): no start, no time
        // run.
        out.push(("Submitted".into(), submitted));
        out.push(("ETA".into(), eta_text(status, 0, now_ms)));
        return out;
    }
    out.push(("Started".into(), submitted));
    let end = status.ended_ms.unwrap_or(now_ms);
    let elapsed = end.saturating_sub(status.created_ms);
    out.push(("Elapsed".into(), hms(elapsed)));
    out.push(("ETA".into(), eta_text(status, elapsed, now_ms)));
    out
}

fn game_text(c: &TournamentConfig) -> String {
    match c.rules_text() {
        rules if rules.is_empty() => c.game.to_string(),
        rules => format!("{} ({rules})", c.game),
    }
}

fn format_text(c: &TournamentConfig) -> String {
    let planned = c.planned_pairs().unwrap_or(0);
    match c.format {
        Format::RoundRobin | Format::Gauntlet | Format::Pyramid => format!(
            "{}, {} round(s){}: {planned} pairs, {} games",
            c.format.name(),
            c.rounds.unwrap_or(1),
            c.seeds.map_or(String::new(), |k| format!(", {k} seeds")),
            2 * planned
        ),
        Format::Swiss => format!(
            "swiss, {} round(s) of {} pair(s) a pairing: at most {planned} pairs",
            c.rounds.unwrap_or(1),
            c.match_pairs()
        ),
        Format::Knockout => format!(
            "knockout: {} pair(s) a match, up to {} tie-break pair(s), at most {} pairs",
            c.match_pairs(),
            c.tiebreak_pairs.unwrap_or(1),
            c.max_pairs()
        ),
        Format::Takes => c.sprt.as_ref().map_or_else(String::new, |s| {
            format!(
                "takes: {} takes against {}, elo0 {}, elo1 {}, family-wise alpha {}, beta {}, \
                 {} model, at most {} pairs",
                c.engines.len().saturating_sub(1),
                c.engines.first().map_or("", |e| e.name.as_str()),
                s.elo0,
                s.elo1,
                s.alpha,
                s.beta,
                s.model,
                s.max_pairs
            )
        }),
        Format::Match => format!("match: {planned} pairs, {} games", 2 * planned),
        Format::Sprt => c.sprt.as_ref().map_or_else(String::new, |s| {
            format!(
                "sprt: elo0 {}, elo1 {}, alpha {}, beta {}, {} model, at most {} pairs",
                s.elo0, s.elo1, s.alpha, s.beta, s.model, s.max_pairs
            )
        }),
        Format::Spsa => c.spsa.as_ref().map_or_else(String::new, |s| {
            let names: Vec<&str> = s.params.iter().map(|p| p.name.as_str()).collect();
            let verify = s.verify.as_ref().map_or(String::new(), |v| {
                format!(
                    "; then an SPRT [{}, {}] of tuned against start",
                    v.elo0, v.elo1
                )
            });
            format!(
                "spsa: {planned} pairs tuning {} (alpha {}, gamma {}){verify}",
                names.join(", "),
                s.alpha,
                s.gamma
            )
        }),
        Format::Datagen => c.datagen.as_ref().map_or_else(String::new, |d| {
            let mut skips = vec![format!("the first {} plies", d.skip_plies)];
            for (on, what) in [
                (d.skip_captures, "captures"),
                (d.skip_decided, "decided scores"),
                (d.dedup, "duplicates"),
            ] {
                if on {
                    skips.push(what.into());
                }
            }
            format!(
                "datagen: {} positions from {} openings, at most {} pairs; skipping {}",
                d.positions,
                match d.openings {
                    tourney_model::tournament::DatagenOpenings::Suite => "suite",
                    tourney_model::tournament::DatagenOpenings::Engine => "engine-made",
                },
                d.max_pairs(),
                skips.join(", ")
            )
        }),
    }
}

fn limits_text(c: &TournamentConfig) -> String {
    let l = &c.limits;
    let mut parts = Vec::new();
    if let Some(tc) = &l.tc {
        parts.push(format!("clock {tc} (margin {} ms)", l.margin));
    }
    if let Some(n) = l.nodes {
        parts.push(format!("{n} nodes per move"));
    }
    if let Some(d) = l.depth {
        parts.push(format!("depth {d} per move"));
    }
    if let Some(t) = l.movetime {
        parts.push(format!("{t} ms per move"));
    }
    parts.join(", ")
}

fn adjudication_text(c: &TournamentConfig) -> String {
    let a = &c.adjudication;
    let mut parts = Vec::new();
    if let Some(n) = a.max_plies {
        parts.push(format!("draw after {n} plies"));
    }
    if a.regions {
        parts.push("Amazons regions decided".to_string());
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn openings_text(c: &TournamentConfig, suite: usize) -> String {
    let o = &c.openings;
    let mut text = match (&o.file, o.plies) {
        (Some(file), _) => format!("file {file}: {suite} positions"),
        (None, plies) => format!(
            "{suite} generated: {} random plies, seed {}",
            plies.unwrap_or(4),
            o.seed
        ),
    };
    if let Some(judge) = &o.balanced {
        text += &format!(", kept when {judge} scores within ±{}", o.max_score);
    }
    text + ", each played with both colours"
}

/// The estimated time left: the pairs left at the rate so far.
fn eta_text(status: &Status, elapsed_ms: u64, now_ms: u64) -> String {
    if status.state == tourney_model::tournament::State::Pending {
        return "once approved, after the first pairs".into();
    }
    if status.ended_ms.is_some() || !status.state.is_active() {
        return format!("— ({})", status.state_name());
    }
    let Some(planned) = status.pairs_planned() else {
        return "open-ended until the SPRT decides".into();
    };
    if status.pairs_done == 0 {
        return "after the first pairs".into();
    }
    let left = planned.saturating_sub(status.pairs_done);
    let ms = (elapsed_ms as u128 * u128::from(left) / u128::from(status.pairs_done)) as u64;
    format!("{} (at {})", hms(ms), Utc::from_unix_ms(now_ms + ms))
}
