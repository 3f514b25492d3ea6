//! Validation of a parsed tournament file, in named steps; each problem names its table,
//! key path and message, which `error.rs` turns into a file and line.

use std::collections::HashSet;

use super::{
    EngineEntry, Format, LimitSettings, MAX_ENGINES, MAX_NAME_CHARS, MAX_PAIRS, SprtSettings,
    TournamentConfig,
};
use crate::adjudication::DECISIVE;

/// The most takes a grouped test may have (as `tourney_stats::takes::MAX_TAKES`).
pub const MAX_TAKES: usize = 16;

/// The largest |Elo| an SPRT in the normalized model can test with pair counts: past it
/// the generalized likelihood has no solution (the MLE's first step, from a uniform
/// distribution over the five pair scores, finds no root; fishtest's MLE fails there too)
/// and the LLR would be NaN. `tourney-stats` derives it and tests both sides of it.
pub const MAX_NORMALIZED_ELO: f64 = 231.6;

/// The most pairs a knockout match or Swiss pairing may play, and the most tie-break pairs.
pub const MAX_MATCH_PAIRS: u64 = 1000;

/// A problem found by validation: the table it is in (name, instance), the key path, and
/// the message.
type Problem = (Option<(&'static str, usize)>, String, String);

/// A problem with a top-level key.
fn top(key: &str, message: String) -> Result<(), Problem> {
    Err((None, key.to_string(), message))
}

/// What is wrong with an SPRT's settings, as (key, message).
pub(super) fn sprt_problem(sprt: &SprtSettings) -> Option<(&'static str, String)> {
    if sprt.elo0.is_nan() || sprt.elo1.is_nan() || sprt.elo0 >= sprt.elo1 {
        return Some((
            "elo1",
            format!("elo1 ({}) must be above elo0 ({})", sprt.elo1, sprt.elo0),
        ));
    }
    for (key, v) in [("alpha", sprt.alpha), ("beta", sprt.beta)] {
        if !(v > 0.0 && v < 0.5) {
            return Some((key, format!("must be between 0 and 0.5, found {v}")));
        }
    }
    if sprt.model == super::SprtModel::Normalized {
        for (key, v) in [("elo0", sprt.elo0), ("elo1", sprt.elo1)] {
            if v.abs() > MAX_NORMALIZED_ELO {
                return Some((key, beyond_normalized(v)));
            }
        }
    }
    (sprt.max_pairs == 0).then(|| ("max_pairs", "must be 1 or more".to_string()))
}

/// Why a bound of `value` nElo cannot be tested in the normalized model.
pub fn beyond_normalized(value: f64) -> String {
    format!(
        "{value} nElo is beyond the normalized model: it can test bounds up to \
         ±{MAX_NORMALIZED_ELO} (its likelihood has no solution past that); use a bound \
         within it, or model = \"logistic\""
    )
}

impl TournamentConfig {
    /// Checks what TOML alone cannot: a problem as (table, key path, message).
    pub(super) fn validate(&self) -> Result<(), Problem> {
        if self.name.trim().is_empty() {
            return top("name", "must not be empty".into());
        }
        self.check_engine_count()?;
        self.check_rules()?;
        let mut names = HashSet::new();
        for (i, engine) in self.engines.iter().enumerate() {
            check_engine(i, engine, &mut names)?;
            if let Some(p) = &engine.protocol
                && !crate::source::protocol_plays(p, self.game)
            {
                return Err((
                    Some(("engine", i)),
                    format!("engine[{i}].protocol"),
                    format!("{p} is for Amazons; this tournament plays {}", self.game),
                ));
            }
        }
        self.check_fleet()?;
        self.check_format()?;
        self.check_openings()?;
        self.check_adjudication()?;
        self.check_bounds()
    }

    /// As many `[[engine]]` tables as the format takes, and at most [`MAX_ENGINES`].
    /// The `[rules]` table: options the game knows (LOA `double-connection`, Amazons
    /// `size`).
    fn check_rules(&self) -> Result<(), Problem> {
        use tourney_rules::Position;
        let text = self.rules_text();
        let parsed = tourney_rules::with_position!(self.game, P => {
            text.parse::<<P as Position>::Rules>().map(|_| ())
        });
        match parsed {
            Ok(()) => Ok(()),
            Err(e) => top("rules", format!("{}: {}", self.game, e.message)),
        }
    }

    fn check_engine_count(&self) -> Result<(), Problem> {
        let n = self.engines.len();
        let two_only = matches!(self.format, Format::Sprt | Format::Match);
        let one_only = self.format == Format::Spsa;
        let datagen = self.format == Format::Datagen;
        let takes = self.format == Format::Takes;
        let wrong = if datagen {
            !(1..=2).contains(&n)
        } else if takes {
            !(2..=1 + MAX_TAKES).contains(&n)
        } else {
            (n < 2 && !one_only) || (two_only && n != 2) || (one_only && n != 1)
        };
        if wrong {
            let want = match (two_only, one_only) {
                _ if datagen => "1 (self-play) or 2",
                _ if takes => "the base and 1 to 16 takes: 2 to 17",
                (true, _) => "exactly 2",
                (_, true) => "exactly 1 (the engine to tune)",
                _ => "at least 2",
            };
            return top(
                "engine",
                format!(
                    "a {} tournament needs {want} [[engine]] tables, found {n}",
                    self.format.name()
                ),
            );
        }
        if n > MAX_ENGINES {
            return top(
                "engine",
                format!("at most {MAX_ENGINES} [[engine]] tables, found {n}"),
            );
        }
        Ok(())
    }

    /// Threads within bounds and only for outside engines; the `[requires]` table and the
    /// labels well formed.
    fn check_fleet(&self) -> Result<(), Problem> {
        use crate::fleet::{MAX_LABELS, MAX_THREADS, check_labels};
        let bad_threads = |t: u32| !(1..=MAX_THREADS).contains(&t);
        if let Some(t) = self.threads.filter(|t| bad_threads(*t)) {
            return top("threads", format!("must be 1 to {MAX_THREADS}, found {t}"));
        }
        for (i, engine) in self.engines.iter().enumerate() {
            let at = |message: String| {
                Err((Some(("engine", i)), format!("engine[{i}].threads"), message))
            };
            match engine.threads {
                Some(t) if bad_threads(t) => {
                    return at(format!("must be 1 to {MAX_THREADS}, found {t}"));
                }
                Some(t) if t > 1 && engine.player.is_some() => {
                    return at(format!(
                        "built-in players think on one thread: give threads = 1 or leave \
                         it out (found {t})"
                    ));
                }
                _ => {}
            }
        }
        if let Some((key, message)) = self.requires.problem() {
            return Err((Some(("requires", 0)), format!("requires.{key}"), message));
        }
        check_labels(&self.labels, MAX_LABELS).or_else(|message| top("labels", message))
    }

    /// What the format needs: rounds, pairs, an SPRT's or a tuning run's table.
    fn check_format(&self) -> Result<(), Problem> {
        match self.format {
            Format::RoundRobin | Format::Gauntlet | Format::Pyramid | Format::Swiss
                if self.rounds.is_none_or(|r| r == 0) =>
            {
                return top(
                    "rounds",
                    format!("a {} needs rounds = 1 or more", self.format.name()),
                );
            }
            Format::Swiss if self.rounds.unwrap_or(0) as usize >= self.engines.len() => {
                return top(
                    "rounds",
                    format!(
                        "a Swiss of {} engines has at most {} rounds without a repeated \
                         pairing, found {}",
                        self.engines.len(),
                        self.engines.len() - 1,
                        self.rounds.unwrap_or(0)
                    ),
                );
            }
            Format::Knockout if self.sprt.is_some() && self.pairs.is_none() => {
                return top(
                    "pairs",
                    "a knockout whose matches stop by an sprt needs pairs = N, the most \
                     pairs a match plays"
                        .into(),
                );
            }
            Format::Knockout => {
                if let Some(problem) = self.sprt.as_ref().and_then(sprt_problem) {
                    return Err((Some(("sprt", 0)), format!("sprt.{}", problem.0), problem.1));
                }
            }
            Format::Takes if self.sprt.is_none() => {
                return top(
                    "sprt",
                    "a takes test needs sprt = { elo0 = ..., elo1 = ... } (its family-wise \
                     alpha, beta for each take, max_pairs for the group)"
                        .into(),
                );
            }
            Format::Match if self.pairs.is_none_or(|p| p == 0) => {
                return top("pairs", "a match needs pairs = 1 or more".into());
            }
            Format::Sprt | Format::Takes => {
                let Some(sprt) = &self.sprt else {
                    return top(
                        "sprt",
                        "an sprt tournament needs sprt = { elo0 = ..., elo1 = ... }".into(),
                    );
                };
                if let Some(problem) = sprt_problem(sprt) {
                    return Err((Some(("sprt", 0)), format!("sprt.{}", problem.0), problem.1));
                }
            }
            Format::Spsa => {
                let Some(spsa) = &self.spsa else {
                    return top(
                        "spsa",
                        "an spsa tournament needs an [spsa] table (pairs, [[spsa.param]] ...)"
                            .into(),
                    );
                };
                if let Some((key, message)) = spsa.problem() {
                    let table = match key.strip_prefix("param[") {
                        Some(rest) => {
                            let i = rest.split(']').next().and_then(|i| i.parse().ok());
                            ("spsa.param", i.unwrap_or(0))
                        }
                        None => ("spsa", 0),
                    };
                    return Err((Some(table), format!("spsa.{key}"), message));
                }
                if let Some(problem) = spsa.verify.as_ref().and_then(sprt_problem) {
                    return Err((
                        Some(("spsa", 0)),
                        format!("spsa.verify.{}", problem.0),
                        problem.1,
                    ));
                }
            }
            Format::Pool => self.check_pool()?,
            Format::Datagen => {
                let Some(datagen) = &self.datagen else {
                    return top(
                        "datagen",
                        "a datagen tournament needs a [datagen] table (positions = ...)".into(),
                    );
                };
                if let Some((key, message)) = datagen.problem() {
                    return Err((Some(("datagen", 0)), format!("datagen.{key}"), message));
                }
            }
            _ => {}
        }
        self.check_format_keys()?;
        if self.spsa.is_some() && self.format != Format::Spsa {
            return top("spsa", "an [spsa] table is for format = \"spsa\"".into());
        }
        if self.pool.is_some() && self.format != Format::Pool {
            return top("pool", "a [pool] table is for format = \"pool\"".into());
        }
        if self.datagen.is_some() && self.format != Format::Datagen {
            return top(
                "datagen",
                "a [datagen] table is for format = \"datagen\"".into(),
            );
        }
        Ok(())
    }

    /// A pool: no rounds, pairs or SPRT (it never ends by itself; its budget is
    /// `pool.max_pairs`), and its `[pool]` table's keys within bounds.
    fn check_pool(&self) -> Result<(), Problem> {
        let given = [
            ("rounds", self.rounds.is_some()),
            ("pairs", self.pairs.is_some()),
            ("sprt", self.sprt.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(_, given)| *given) {
            return top(
                key,
                format!(
                    "a pool takes no {key}: it plays until it is cancelled or paused, or \
                     up to [pool] max_pairs"
                ),
            );
        }
        let names: Vec<&str> = self.engines.iter().map(|e| e.name.as_str()).collect();
        match self.pool.as_ref().and_then(|p| p.problem(&names)) {
            Some((key, message)) => Err((Some(("pool", 0)), format!("pool.{key}"), message)),
            None => Ok(()),
        }
    }

    /// The keys only some formats take (`seeds`, `tiebreak_pairs`, `pairs`), within their
    /// bounds.
    fn check_format_keys(&self) -> Result<(), Problem> {
        let n = self.engines.len();
        if let Some(k) = self.seeds {
            if self.format != Format::Gauntlet {
                return top("seeds", "seeds is for format = \"gauntlet\"".into());
            }
            if !(1..n.max(2) as u32).contains(&k) {
                return top(
                    "seeds",
                    format!(
                        "must be 1 to {} (one fewer than the engines), found {k}",
                        n - 1
                    ),
                );
            }
        }
        if let Some(t) = self.tiebreak_pairs {
            if self.format != Format::Knockout {
                return top(
                    "tiebreak_pairs",
                    "tiebreak_pairs is for format = \"knockout\"".into(),
                );
            }
            if t > MAX_MATCH_PAIRS as u32 {
                return top(
                    "tiebreak_pairs",
                    format!("must be 0 to {MAX_MATCH_PAIRS}, found {t}"),
                );
            }
        }
        match (self.format, self.pairs) {
            (Format::Knockout | Format::Swiss, Some(p)) if !(1..=MAX_MATCH_PAIRS).contains(&p) => {
                top(
                    "pairs",
                    format!("must be 1 to {MAX_MATCH_PAIRS}, found {p}"),
                )
            }
            _ => Ok(()),
        }
    }

    /// Generated openings or a file, not both; a file's format only with a file.
    fn check_openings(&self) -> Result<(), Problem> {
        let o = &self.openings;
        let at = |key: &str, message: String| {
            Err((Some(("openings", 0)), format!("openings.{key}"), message))
        };
        match (o.plies, &o.file) {
            (Some(_), Some(_)) => {
                return at(
                    "file",
                    "give plies (generated openings) or file, not both".into(),
                );
            }
            (None, None) => return at("plies", "give plies = N or file = \"...\"".into()),
            _ => {}
        }
        if o.format.is_some() && o.file.is_none() {
            return at(
                "format",
                "format says how an openings file is written: give file = \"...\"".into(),
            );
        }
        Ok(())
    }

    /// The score rules within their ranges; playing on only what a score rule adjudicated.
    fn check_adjudication(&self) -> Result<(), Problem> {
        let adjudication = |key: &str, message: String| {
            Err((
                Some(("adjudication", 0)),
                format!("adjudication.{key}"),
                message,
            ))
        };
        if let Some(r) = self.adjudication.resign
            && (!(1..DECISIVE).contains(&r.score) || !(1..=100).contains(&r.moves))
        {
            return adjudication(
                "resign",
                format!("score must be 1 to {}, moves 1 to 100", DECISIVE - 1),
            );
        }
        if let Some(d) = self.adjudication.draw
            && (!(0..DECISIVE).contains(&d.score) || !(1..=100).contains(&d.moves))
        {
            return adjudication(
                "draw",
                format!("score must be 0 to {}, moves 1 to 100", DECISIVE - 1),
            );
        }
        let play_on = self.adjudication.play_on;
        if !(0.0..=1.0).contains(&play_on) {
            return adjudication("play_on", format!("must be 0 to 1, found {play_on}"));
        }
        if play_on > 0.0 && self.adjudication.resign.is_none() && self.adjudication.draw.is_none() {
            return adjudication(
                "play_on",
                "plays on games adjudicated by score: give resign or draw too".into(),
            );
        }
        Ok(())
    }

    /// The limits, and the bounds on what a tournament may cost: its name, what an outside
    /// engine may use, the pairs planned, a positive weight.
    fn check_bounds(&self) -> Result<(), Problem> {
        if let Some((key, message)) = self.limits.problem() {
            let key = if key.is_empty() {
                "limits".to_string()
            } else {
                format!("limits.{key}")
            };
            return Err((Some(("limits", 0)), key, message));
        }
        if self.name.chars().count() > MAX_NAME_CHARS {
            return top("name", format!("at most {MAX_NAME_CHARS} characters"));
        }
        for (key, value, max) in self.engine_limits.numbers() {
            if value == 0 || value > max {
                return Err((
                    Some(("engine_limits", 0)),
                    format!("engine_limits.{key}"),
                    format!("must be 1 to {max}, found {value}"),
                ));
            }
        }
        if self.pair_budget() > MAX_PAIRS {
            let key = match self.format {
                Format::Match => "pairs",
                Format::Sprt | Format::Takes => "sprt.max_pairs",
                Format::Knockout => "pairs",
                Format::Spsa => "spsa.pairs",
                Format::Pool => "pool.max_pairs",
                _ => "rounds",
            };
            return top(
                key,
                format!(
                    "{} pairs planned; at most {MAX_PAIRS} (a billion pairs: years of play)",
                    self.pair_budget()
                ),
            );
        }
        if !(self.weight > 0.0 && self.weight.is_finite()) {
            return top(
                "weight",
                format!("must be a positive number, found {}", self.weight),
            );
        }
        Ok(())
    }
}

/// Engine `i`: a name of its own within bounds, its limits, and exactly one of a player, a
/// command or a version (options only for a command or a version, over its own).
fn check_engine<'a>(
    i: usize,
    engine: &'a EngineEntry,
    names: &mut HashSet<&'a str>,
) -> Result<(), Problem> {
    if engine.name.chars().count() > MAX_NAME_CHARS {
        return Err((
            Some(("engine", i)),
            format!("engine[{i}].name"),
            format!("at most {MAX_NAME_CHARS} characters"),
        ));
    }
    let at = |key: &str, message: String| {
        Err((Some(("engine", i)), format!("engine[{i}].{key}"), message))
    };
    if engine.name.trim().is_empty() {
        return at("name", "must not be empty".into());
    }
    if !names.insert(engine.name.as_str()) {
        return at(
            "name",
            format!("'{}' is used by another engine", engine.name),
        );
    }
    // Named at the `limits` key (its table is inline, on one line).
    if let Some((key, message)) = engine.limits.as_ref().and_then(LimitSettings::problem) {
        let message = if key.is_empty() {
            message
        } else {
            format!("{key}: {message}")
        };
        return at("limits", message);
    }
    let source = match crate::source::Source::from_keys(
        engine.git.as_deref(),
        engine.commit.as_deref(),
        engine.build.as_deref(),
        engine.binary.as_deref(),
    ) {
        Ok(source) => source,
        Err((key, message)) => return at(key, message),
    };
    let given = [
        engine.player.is_some(),
        engine.command.is_some(),
        source.is_some(),
    ];
    match (given, &engine.version) {
        (_, Some(v)) if v.trim().is_empty() => return at("version", "must not be empty".into()),
        ([false, false, false], Some(_)) if !engine.files.is_empty() || engine.bench.is_some() => return at("files", "a version has its files and bench".into()),
        ([false, false, false], Some(_)) if engine.protocol.is_some() => return at("protocol", "a version has its protocol".into()),
        ([false, false, false], Some(_)) => return Ok(()),
        (_, Some(_)) => return at("version", "give a version, or a player, command or source, not both".into()),
        ([false, false, false], None) => return at("player", "give a built-in player (player = \"ab:depth=6\"), an outside engine (command = \"./engine\"), a source (git, commit, build, binary) or a registered version (version = \"eval-v3\")".into()),
        ([true, true, _], None) | ([true, _, true], None) => return at("player", "give one of player, command or source, not two".into()),
        ([false, true, true], None) => return at("command", "a source's program is its binary: give command or git, not both".into()),
        _ => {}
    }
    if let Some(c) = &engine.command
        && c.trim().is_empty()
    {
        return at("command", "must not be empty".into());
    }
    if engine.player.is_some() && !engine.options.is_empty() {
        return at(
            "options",
            "options are for outside engines (command = ...)".into(),
        );
    }
    if engine.player.is_some() && (!engine.files.is_empty() || engine.bench.is_some()) {
        return at(
            "files",
            "files and bench are for outside engines (command or git)".into(),
        );
    }
    if let Err(message) = crate::source::check_files(&engine.files, false) {
        return at("files", message);
    }
    if let Some(p) = &engine.protocol {
        if engine.player.is_some() {
            return at(
                "protocol",
                "a protocol is for outside engines (command or git)".into(),
            );
        }
        if let Err(message) = crate::source::check_protocol(p) {
            return at("protocol", message);
        }
    }
    Ok(())
}
