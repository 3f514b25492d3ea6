//! What a report says about how its numbers were made: the game and its rules variant, the
//! format, every limit (each engine's own, NPS scaling), the adjudication rules, the
//! openings used, each engine's source, program hash, protocol and options, the
//! statistics, tourney's version and the hosts, and when it started,
//! how long it has run and when it should end (before its first pair: when it was
//! submitted). Shown on the dashboard and in every report.

use std::collections::BTreeMap;

use tourney_model::tournament::{
    ClockScale, EngineEntry, Format, LimitSettings, OpeningsFormat, OpeningsOrder, TournamentConfig,
};
use tourney_model::{Utc, hms};

use crate::types::Status;

/// What the details of a tournament are made from, beyond its status.
pub(crate) struct DetailsInput<'a> {
    /// The size of its openings suite.
    pub openings: usize,
    /// The openings its counted pairs were played from.
    pub openings_used: usize,
    /// Uploaded programs' sha256 by engine name.
    pub artifacts: &'a BTreeMap<String, String>,
    /// The hosts that played its games.
    pub hosts: Vec<String>,
    /// Unix milliseconds now.
    pub now_ms: u64,
}

/// The most hosts named on the `Hosts` line; the rest are counted.
const HOSTS_NAMED: usize = 12;

/// The labelled lines of a tournament's details: everything that decides a result.
pub(crate) fn details(status: &Status, input: &DetailsInput<'_>) -> Vec<(String, String)> {
    let c = &status.config;
    let mut out = vec![
        ("Game".to_string(), game_text(c)),
        ("Rules".into(), rules_variant(c)),
        ("Format".into(), format_text(c)),
        ("Limits".into(), limits_text(c)),
        ("Adjudication".into(), adjudication_text(c)),
        ("Openings".into(), {
            let text = openings_text(c, input.openings, input.openings_used);
            match status.openings_note() {
                Some(note) => format!("{text}; {note}"),
                None => text,
            }
        }),
    ];
    for engine in &c.engines {
        out.push((
            format!("Engine {}", engine.name),
            engine_text(engine, input.artifacts),
        ));
    }
    out.push(("Statistics".into(), statistics_text(c)));
    out.push((
        "Tourney".into(),
        format!("coordinator {}", env!("CARGO_PKG_VERSION")),
    ));
    if !input.hosts.is_empty() {
        let mut hosts = input.hosts[..input.hosts.len().min(HOSTS_NAMED)].join(", ");
        if input.hosts.len() > HOSTS_NAMED {
            hosts += &format!(" and {} more", input.hosts.len() - HOSTS_NAMED);
        }
        out.push(("Hosts".into(), hosts));
    }
    let submitted = Utc::from_unix_ms(status.created_ms).to_string();
    if status.pairs_done == 0 {
        // Nothing played yet (waiting for approval or for workers): no start, no time
        // run.
        out.push(("Submitted".into(), submitted));
        out.push(("ETA".into(), eta_text(status, 0, input.now_ms)));
        return out;
    }
    out.push(("Started".into(), submitted));
    let end = status.ended_ms.unwrap_or(input.now_ms);
    let elapsed = end.saturating_sub(status.created_ms);
    out.push(("Elapsed".into(), hms(elapsed)));
    out.push(("ETA".into(), eta_text(status, elapsed, input.now_ms)));
    out
}

/// What an engine is: its version, its player, program or source and build, protocol,
/// program hash, data files, bench signature, threads, options and own limits.
fn engine_text(engine: &EngineEntry, artifacts: &BTreeMap<String, String>) -> String {
    let mut parts = Vec::new();
    if let Some(version) = &engine.version {
        parts.push(format!("version {version}"));
    }
    if let Some(spec) = &engine.player {
        parts.push(spec.clone());
    }
    if let Some(source) = engine.source() {
        parts.push(format!(
            "built from {} at commit {} by `{}`, program {}",
            source.git, source.commit, source.build, source.binary
        ));
    }
    if let Some(command) = &engine.command {
        parts.push(format!("command `{command}`"));
    }
    if engine.player.is_none() {
        let protocol = engine.protocol.as_deref().unwrap_or("tourney");
        parts.push(format!("protocol {protocol}"));
    }
    match (artifacts.get(&engine.name), &engine.command) {
        (Some(sha), _) => parts.push(format!("program sha256 {sha}")),
        // A bare name (an interpreter, `python3`) is each worker's own.
        (None, Some(command)) if engine.source().is_none() => {
            let words = tourney_model::source::split_command(command);
            if let Some(program) = words.first().filter(|p| !p.contains('/')) {
                parts.push(format!("{program} from each worker's PATH"));
            }
        }
        _ => {}
    }
    if !engine.files.is_empty() {
        let files: Vec<String> = (engine.files.iter())
            .map(|(name, sha)| format!("{name} (sha256 {sha})"))
            .collect();
        parts.push(format!("files {}", files.join(", ")));
    }
    if let Some(bench) = engine.bench {
        parts.push(format!("bench {bench} nodes"));
    }
    if let Some(threads) = engine.threads {
        parts.push(format!("{threads} threads"));
    }
    if !engine.options.is_empty() {
        let options: Vec<String> = (engine.option_values().into_iter())
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        parts.push(format!("options {}", options.join(" ")));
    }
    if let Some(limits) = &engine.limits {
        parts.push(format!("own limits: {}", limit_parts(limits).join(", ")));
    }
    parts.join(", ")
}

/// How the figures are computed, and where that is explained.
fn statistics_text(c: &TournamentConfig) -> String {
    let mut text = if c.format == Format::Pool {
        "ratings by BayesElo's model fitted jointly (posterior mode, draws modelled; 95 % \
         intervals relative to the anchor, from the posterior covariance)"
    } else {
        "ratings by BayesElo's model (maximum likelihood, draws modelled; intervals with \
         the others held, BayesElo's exactdist)"
    }
    .to_string();
    if let Some(s) = &c.sprt {
        text += &format!(
            "; SPRT: generalized likelihood ratio on pair results (pentanomial), {} model",
            s.model
        );
    }
    text + "; see docs/statistics.md"
}

/// The rules variant, stated even when it is the default.
fn rules_variant(c: &TournamentConfig) -> String {
    match c.game {
        tourney_rules::GameKind::Loa => {
            let draw = c.rules.get("double-connection").map(String::as_str) == Some("draw");
            format!(
                "a move that connects both sides' groups at once: {}",
                if draw { "a draw" } else { "the mover wins" }
            )
        }
        tourney_rules::GameKind::Amazons => {
            let size = c.rules.get("size").map_or("10", String::as_str);
            format!("{size}×{size} board")
        }
    }
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
            c.pair_budget()
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
        Format::Pool => {
            let anchor = c
                .engines
                .get(c.pool_anchor())
                .map_or("", |e| e.name.as_str());
            let budget = match c.pool.as_ref().and_then(|p| p.max_pairs) {
                Some(most) => format!("at most {most} pairs"),
                None => "until cancelled".to_string(),
            };
            format!(
                "pool: {} engines rated relative to {anchor}, paired by information, {budget}",
                c.engines.len()
            )
        }
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
    let mut parts = limit_parts(&c.limits);
    if c.limits.tc.is_some() {
        parts[0] += &format!(" (margin {} ms)", c.limits.margin);
    }
    if c.limits.scale == ClockScale::Nps {
        parts.push(
            "clocks and move times scaled by each worker's measured speed (scale = \"nps\")".into(),
        );
    }
    let odds: Vec<String> = (c.engines.iter())
        .filter_map(|e| {
            let own = limit_parts(e.limits.as_ref()?).join(", ");
            Some(format!("{} plays at {own}", e.name))
        })
        .collect();
    if !odds.is_empty() {
        parts.push(format!("time odds: {}", odds.join("; ")));
    }
    parts.join(", ")
}

/// A clock's and per-move limits' parts: `clock 10+0.1`, `5000 nodes per move`.
fn limit_parts(l: &LimitSettings) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(tc) = &l.tc {
        parts.push(format!("clock {tc}"));
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
    parts
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
    if let Some(r) = &a.resign {
        parts.push(format!(
            "resign: a side both engines score {} or more ahead for {} moves each wins",
            r.score, r.moves
        ));
    }
    if let Some(d) = &a.draw {
        parts.push(format!(
            "draw: both scores within ±{} for {} moves each, from ply {}",
            d.score, d.moves, d.after
        ));
    }
    if a.play_on > 0.0 {
        parts.push(format!(
            "{}% of score-adjudicated games played on to check",
            a.play_on * 100.0
        ));
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

fn openings_text(c: &TournamentConfig, suite: usize, used: usize) -> String {
    let o = &c.openings;
    let source = match (&o.file, o.plies) {
        (Some(file), _) => format!("from file {file} of {suite} positions"),
        (None, plies) => format!(
            "generated ({} random plies, seed {}; a suite of {suite})",
            plies.unwrap_or(4),
            o.seed
        ),
    };
    let mut text = format!("{used} used, {source}");
    match o.file.as_deref().map(|file| o.file_format(file)) {
        Some(OpeningsFormat::Moves) => text += " (move sequences)",
        Some(OpeningsFormat::Pgn) => text += " (PGN games)",
        _ => {}
    }
    if o.order == OpeningsOrder::Random {
        text += &format!(", shuffled (seed {})", o.seed);
    }
    if o.offset > 0 {
        text += &format!(", from opening {}", o.offset);
    }
    if let Some(judge) = &o.balanced {
        text += &format!(", kept when {judge} scores within ±{}", o.max_score);
    }
    if c.format == Format::Datagen {
        text + ", each played once"
    } else {
        text + ", each played with both colours"
    }
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
