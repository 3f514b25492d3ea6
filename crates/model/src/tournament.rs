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

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use crate::TimeControl;
use tourney_rules::GameKind;

/// splitmix64 of `a` and `b`: seeds of pairs and games that are all different.
fn mix(a: u64, b: u64) -> u64 {
    let mut x = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The seed of game `g` (0 or 1) of a pair seeded `pair_seed`. Never 0.
pub fn game_seed(pair_seed: u64, g: u64) -> u64 {
    mix(pair_seed, g.wrapping_add(1)).max(1)
}

/// Where a tournament is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    /// Submitted, no pair played yet.
    Queued,
    /// Pairs are being played.
    Running,
    /// Every planned pair played, or the SPRT decided (or reached its maximum).
    Finished,
    /// Stopped by an operator.
    Cancelled,
    /// Stopped because a pair could not be played (an engine that does not start, does not
    /// support the game, or whose program cannot be fetched); `tourney resume` goes on.
    Paused,
}

impl State {
    /// `queued`, `running`, `finished`, `cancelled` or `paused`.
    pub fn name(self) -> &'static str {
        match self {
            State::Queued => "queued",
            State::Running => "running",
            State::Finished => "finished",
            State::Cancelled => "cancelled",
            State::Paused => "paused",
        }
    }

    /// Whether pairs can still be leased.
    pub fn is_active(self) -> bool {
        matches!(self, State::Queued | State::Running)
    }
}

/// What a finished pair contributes to the standings: the two engines, the half-points of
/// `first` in each game (game 0: `first` moves first; game 1: colours swapped), and who
/// played White in each, as the game records say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairOutcome {
    /// The pair's index.
    pub pair: u64,
    /// Index of the pairing's first engine.
    pub first: usize,
    /// Index of the second engine.
    pub second: usize,
    /// Half-points of `first` in game 0 and game 1 (0, 1 or 2 each).
    pub half_points: [u8; 2],
    /// The engine (index) that played White in game 0 and in game 1. Records stored before
    /// colours were kept read as [`PairOutcome::COLOURS_UNKNOWN`] until
    /// [`PairOutcome::with_legacy_colours`] fills them in.
    #[serde(default = "colours_unknown")]
    pub white: [usize; 2],
}

fn colours_unknown() -> [usize; 2] {
    PairOutcome::COLOURS_UNKNOWN
}

impl PairOutcome {
    /// `white` of a stored outcome that did not record colours.
    pub const COLOURS_UNKNOWN: [usize; 2] = [usize::MAX; 2];

    /// Fills in the colours of an outcome stored without them: then `first` always moved
    /// first in game 0, so it had `first_mover`'s colour there and the other in game 1.
    pub fn with_legacy_colours(mut self, first_mover: tourney_rules::Color) -> PairOutcome {
        if self.white == Self::COLOURS_UNKNOWN {
            self.white = match first_mover {
                tourney_rules::Color::White => [self.first, self.second],
                tourney_rules::Color::Black => [self.second, self.first],
            };
        }
        self
    }

    /// White's half-points (0, 1 or 2) in game `g`.
    pub fn white_half_points(&self, g: usize) -> u8 {
        if self.white[g] == self.first {
            self.half_points[g]
        } else {
            2 - self.half_points[g]
        }
    }
}

/// The most engines a tournament may have: its cross-table and ratings grow with the
/// square of this.
pub const MAX_ENGINES: usize = 128;
/// The most pairs a tournament may plan (or an SPRT play).
pub const MAX_PAIRS: u64 = 1_000_000_000;
/// The longest tournament or engine name.
pub const MAX_NAME_CHARS: usize = 100;

/// How the engines meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Every engine against every other, `rounds` times (one pair per pairing per round).
    RoundRobin,
    /// The first engine against each of the others, `rounds` times.
    Gauntlet,
    /// Two engines until the SPRT decides (or `sprt.max_pairs`).
    Sprt,
    /// Two engines, a fixed number of `pairs`.
    Match,
    /// One engine tuned against itself: its parameters perturbed each pair, moved by the
    /// results (`[spsa]`, see [`crate::spsa`]).
    Spsa,
}

impl Format {
    /// The name in tournament files.
    pub fn name(self) -> &'static str {
        match self {
            Format::RoundRobin => "round-robin",
            Format::Gauntlet => "gauntlet",
            Format::Sprt => "sprt",
            Format::Match => "match",
            Format::Spsa => "spsa",
        }
    }
}

/// The Elo scale of an SPRT's bounds, as fishtest names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SprtModel {
    /// Normalized Elo (fishtest's default).
    #[default]
    Normalized,
    /// Logistic Elo.
    Logistic,
    /// BayesElo, converted through the observed draw rate.
    BayesElo,
}

impl SprtModel {
    /// The name in tournament files: `normalized`, `logistic` or `bayeselo`.
    pub fn name(self) -> &'static str {
        match self {
            SprtModel::Normalized => "normalized",
            SprtModel::Logistic => "logistic",
            SprtModel::BayesElo => "bayeselo",
        }
    }
}

impl fmt::Display for SprtModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An SPRT's hypotheses and error rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SprtSettings {
    /// Elo under H0.
    pub elo0: f64,
    /// Elo under H1.
    pub elo1: f64,
    /// False-positive rate.
    #[serde(default = "five_percent")]
    pub alpha: f64,
    /// False-negative rate.
    #[serde(default = "five_percent")]
    pub beta: f64,
    /// The Elo scale of `elo0` and `elo1`.
    #[serde(default)]
    pub model: SprtModel,
    /// Stop (undecided) after this many pairs.
    #[serde(default = "default_max_pairs")]
    pub max_pairs: u64,
}

fn five_percent() -> f64 {
    0.05
}
fn default_max_pairs() -> u64 {
    100_000
}

/// Where openings come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpeningSettings {
    /// Random plies from the start (generated suite).
    pub plies: Option<u32>,
    /// Seed of the generated suite.
    #[serde(default = "one")]
    pub seed: u64,
    /// Keep only positions this player judges balanced.
    pub balanced: Option<String>,
    /// The balance threshold in centi-units.
    #[serde(default = "hundred")]
    pub max_score: i32,
    /// A file of openings (relative to the tournament file).
    pub file: Option<String>,
    /// How the file writes them (default: `pgn` for a `.pgn` file, else `positions`).
    pub format: Option<OpeningsFormat>,
    /// The order pairs take them in.
    #[serde(default)]
    pub order: OpeningsOrder,
    /// The opening the first pair plays (the suite starts there and wraps around).
    #[serde(default)]
    pub offset: u64,
}

/// How an openings file writes its openings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpeningsFormat {
    /// One position string per line.
    Positions,
    /// One move sequence per line, from the game's start position (`b1-b3 a2-c2 ...`;
    /// move numbers such as `1.` or `2...` are skipped).
    Moves,
    /// PGN-style games: each game's start (its `FEN` tag, or the start position) and
    /// moves; results and comments are skipped.
    Pgn,
}

/// The order pairs take the openings in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpeningsOrder {
    /// As the file (or the generator) gives them.
    #[default]
    Sequential,
    /// Shuffled by the openings' `seed`.
    Random,
}

impl OpeningSettings {
    /// The format of the openings file `name`, said or inferred.
    pub fn file_format(&self, name: &str) -> OpeningsFormat {
        self.format
            .unwrap_or(if name.to_ascii_lowercase().ends_with(".pgn") {
                OpeningsFormat::Pgn
            } else {
                OpeningsFormat::Positions
            })
    }
}

fn one() -> u64 {
    1
}
fn hundred() -> i32 {
    100
}

impl Default for OpeningSettings {
    fn default() -> Self {
        OpeningSettings {
            plies: Some(4),
            seed: 1,
            balanced: None,
            max_score: 100,
            file: None,
            format: None,
            order: OpeningsOrder::Sequential,
            offset: 0,
        }
    }
}

/// Per-move limits and the clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    /// Time control, e.g. `10+0.1`.
    pub tc: Option<String>,
    /// Nodes per move.
    pub nodes: Option<u64>,
    /// Depth per move.
    pub depth: Option<u32>,
    /// Milliseconds per move.
    pub movetime: Option<u64>,
    /// Extra milliseconds over the clock before a time forfeit.
    #[serde(default = "margin")]
    pub margin: u64,
    /// `"nps"`: every clock and movetime scaled by the worker's speed, measured by a fixed
    /// built-in benchmark, so that a slower worker gets proportionally more time.
    #[serde(default)]
    pub scale: ClockScale,
}

/// How clocks are scaled on each worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClockScale {
    /// As written.
    #[default]
    None,
    /// By the worker's speed against the reference machine's.
    Nps,
}

fn margin() -> u64 {
    100
}

impl LimitSettings {
    /// What is wrong with these limits, if anything: a clock that does not parse, or no
    /// limit at all.
    fn problem(&self) -> Option<(&'static str, String)> {
        if let Some(tc) = &self.tc
            && let Err(e) = tc.parse::<TimeControl>()
        {
            return Some(("tc", e.to_string()));
        }
        if self.scale == ClockScale::Nps && self.tc.is_none() && self.movetime.is_none() {
            return Some((
                "scale",
                "scale = \"nps\" scales a clock or a movetime: give tc or movetime".into(),
            ));
        }
        if self.tc.is_none()
            && self.nodes.is_none()
            && self.depth.is_none()
            && self.movetime.is_none()
        {
            return Some((
                "",
                "set a clock (tc = \"10+0.1\") or per-move limits (nodes, depth, movetime)".into(),
            ));
        }
        None
    }
}

/// Early ends decided by the referee.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdjudicationSettings {
    /// Draw after this many plies.
    pub max_plies: Option<u32>,
    /// Amazons: decide once the board is split into regions of one side each.
    #[serde(default)]
    pub regions: bool,
    /// Resign when both engines' scores agree that one side wins.
    pub resign: Option<crate::adjudication::ResignRule>,
    /// Draw when both engines' scores agree that the game is even.
    pub draw: Option<crate::adjudication::DrawRule>,
    /// The share of score-adjudicated games played on to their end, to measure how often
    /// adjudication is wrong (0 to 1; default 0).
    #[serde(default)]
    pub play_on: f64,
}

impl AdjudicationSettings {
    /// The score rules of these settings.
    pub fn score_rules(&self) -> crate::adjudication::ScoreRules {
        crate::adjudication::ScoreRules {
            resign: self.resign,
            draw: self.draw,
            play_on: (self.play_on.clamp(0.0, 1.0) * 10_000.0).round() as u32,
        }
    }
}

/// What an outside engine's process may use, on every worker: the tournament file's
/// `engine_limits` table. A limit it hits ends its game, with the reason recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineLimits {
    /// Address space, MiB (`RLIMIT_AS`).
    pub memory_mb: u64,
    /// CPU time over the process's life, seconds (`RLIMIT_CPU`).
    pub cpu_seconds: u64,
    /// Processes and threads it may start (`RLIMIT_NPROC`, which counts the whole user's:
    /// over what the worker's user runs already, unless engines have a user of their own).
    pub processes: u64,
    /// Open files (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Largest file it may write, MiB (`RLIMIT_FSIZE`).
    pub file_size_mb: u64,
    /// Bytes of stderr read before it is stopped, KiB.
    pub stderr_kb: u64,
    /// May reach the network (`false`: a network namespace of its own where the OS allows
    /// it).
    pub network: bool,
}

impl Default for EngineLimits {
    fn default() -> Self {
        EngineLimits {
            memory_mb: 4096,
            cpu_seconds: 3600,
            processes: 512,
            open_files: 256,
            file_size_mb: 64,
            stderr_kb: 1024,
            network: false,
        }
    }
}

impl EngineLimits {
    /// The largest value each numeric limit may take in a tournament file.
    pub const MAX: EngineLimits = EngineLimits {
        memory_mb: 1 << 20,
        cpu_seconds: 7 * 24 * 3600,
        processes: 1 << 16,
        open_files: 1 << 16,
        file_size_mb: 1 << 20,
        stderr_kb: 1 << 20,
        network: true,
    };

    /// The limits as `(key, value, largest)`, for checks and reports.
    pub fn numbers(&self) -> [(&'static str, u64, u64); 6] {
        let max = Self::MAX;
        [
            ("memory_mb", self.memory_mb, max.memory_mb),
            ("cpu_seconds", self.cpu_seconds, max.cpu_seconds),
            ("processes", self.processes, max.processes),
            ("open_files", self.open_files, max.open_files),
            ("file_size_mb", self.file_size_mb, max.file_size_mb),
            ("stderr_kb", self.stderr_kb, max.stderr_kb),
        ]
    }
}

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
    /// Round-robin and gauntlet: rounds.
    pub rounds: Option<u32>,
    /// Match: pairs to play.
    pub pairs: Option<u64>,
    /// SPRT settings (format `sprt`).
    pub sprt: Option<SprtSettings>,
    /// Tuning settings (format `spsa`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spsa: Option<crate::spsa::SpsaSettings>,
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
    /// Scheduling priority: higher runs first.
    #[serde(default)]
    pub priority: i32,
    /// Share of the workers among tournaments of equal priority.
    #[serde(default = "one_f64")]
    pub weight: f64,
    /// Seed of the games: each game's seed derives from it, its pair and its game (see
    /// [`TournamentConfig::pair_seed`]), and seeded built-in players mix it into their own.
    #[serde(default = "one")]
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

/// What is wrong with an SPRT's settings, as (key, message).
fn sprt_problem(sprt: &SprtSettings) -> Option<(&'static str, String)> {
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
    (sprt.max_pairs == 0).then(|| ("max_pairs", "must be 1 or more".to_string()))
}

/// A tournament file that is not right: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file (or `<text>`).
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// The key concerned, e.g. `sprt.elo1` or `engine[2].player`.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl ConfigError {
    /// An error about `key` (a path such as `engine[1].player`) of the file `text`, with the
    /// line where the key is set: in `table` (name and instance, e.g. `("engine", 1)`) when
    /// given, else at the top level.
    pub fn at_key(
        text: &str,
        file: &str,
        table: Option<(&str, usize)>,
        key: String,
        message: String,
    ) -> ConfigError {
        let leaf = key.rsplit('.').next().unwrap_or(&key);
        let leaf = leaf.split('[').next().unwrap_or(leaf);
        ConfigError {
            file: file.to_string(),
            line: key_line(text, table, leaf),
            key: Some(key),
            message,
        }
    }
}

/// Deserializes a TOML file's text; `file` names it in errors, which give the line and
/// what is wrong (an unknown or mistyped key is named in the message).
///
/// # Errors
/// [`ConfigError`] for TOML that is malformed or does not fit `T`.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<T, ConfigError> {
    toml::from_str(text).map_err(|e| {
        let span: Option<Range<usize>> = e.span();
        ConfigError {
            file: file.to_string(),
            line: span.as_ref().map(|s| line_of(text, s.start)),
            key: span.and_then(|s| key_of_value_at(text, s.start)),
            message: e.message().trim().to_string(),
        }
    })
}

/// The dotted key whose value starts at byte `offset` (`adjudication.max_plies`,
/// `engine[1].player`): the table header above it, the inline tables the value sits in
/// on its line, and its own key. `None` when `offset` is not at a value (a key, a header).
fn key_of_value_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let mut path: Vec<String> = Vec::new();
    if let Some(header) = before[..line_start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
    {
        let name = header.trim_matches(|c| c == '[' || c == ']').trim();
        if header.starts_with("[[") {
            let index = before[..line_start]
                .lines()
                .filter(|l| l.trim() == header)
                .count()
                - 1;
            path.push(format!("{name}[{index}]"));
        } else {
            path.push(name.to_string());
        }
    }
    // Keys of the inline tables open at `offset`, then the key being set.
    let (mut open, mut key, mut token) = (Vec::<String>::new(), None::<String>, String::new());
    let mut in_string = None;
    for c in before[line_start..].chars() {
        match (in_string, c) {
            (Some(q), c) if c == q => in_string = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => in_string = Some(c),
            (None, '=') => key = Some(std::mem::take(&mut token).trim().to_string()),
            (None, '{') => open.extend(key.take()),
            (None, '}') => {
                open.pop();
                key = None;
            }
            (None, ',') => {
                key = None;
                token.clear();
            }
            (None, c) => token.push(c),
        }
    }
    if !token.trim().is_empty() {
        return None; // `offset` is past a value's start: not where a value begins
    }
    path.extend(open);
    path.push(key.filter(|k| !k.is_empty())?);
    Some(path.join("."))
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line where `key` is set: the first `key =` after the header of `table` (the
/// `n`-th `[[table]]` for arrays of tables, counted from 0), or the header itself when the
/// key is missing there; an inline `table = { ... }` is found by its own line.
fn key_line(text: &str, table: Option<(&str, usize)>, key: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let sets = |line: &str, name: &str| {
        let t = line.trim_start();
        t.strip_prefix(name)
            .is_some_and(|after| after.trim_start().starts_with('='))
    };
    let Some((name, n)) = table else {
        return lines.iter().position(|l| sets(l, key)).map(|i| i + 1);
    };
    let (array_header, header) = (format!("[[{name}]]"), format!("[{name}]"));
    let Some(start) = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.trim() == array_header || l.trim() == header)
        .nth(n)
        .map(|(i, _)| i)
    else {
        return lines.iter().position(|l| sets(l, name)).map(|i| i + 1);
    };
    let end = lines[start + 1..]
        .iter()
        .position(|l| l.trim_start().starts_with('['))
        .map_or(lines.len(), |i| start + 1 + i);
    Some(
        lines[start..end]
            .iter()
            .position(|l| sets(l, key))
            .map_or(start, |i| start + i)
            + 1,
    )
}

/// A problem found by validation: the table it is in (name, instance), the key path, and
/// the message.
type Problem = (Option<(&'static str, usize)>, String, String);

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
        if config.format == Format::Spsa {
            config.engines = spsa_sides(&config.engines[0]).into();
        }
        Ok(config)
    }

    /// Fills in each engine given by `version` from the registered version `lookup`
    /// finds: its player, or its command and options. Returns the outside programs'
    /// sha256 by engine name.
    ///
    /// # Errors
    /// An engine names a version `lookup` does not know.
    pub fn resolve_versions(
        &mut self,
        lookup: impl Fn(&str) -> Option<crate::version::EngineVersion>,
    ) -> Result<BTreeMap<String, String>, String> {
        let mut artifacts = BTreeMap::new();
        for (i, engine) in self.engines.iter_mut().enumerate() {
            let Some(name) = &engine.version else {
                continue;
            };
            let version = lookup(name).ok_or_else(|| {
                format!("engine[{i}].version: no version '{name}' (see `tourney version list`)")
            })?;
            engine.player = version.player;
            engine.command = version.command;
            engine.options = (version.options.into_iter())
                .map(|(k, v)| (k, toml::Value::String(v)))
                .collect();
            if let Some(sha) = version.artifact {
                artifacts.insert(engine.name.clone(), sha);
            }
        }
        Ok(artifacts)
    }

    /// The version each engine is, by engine index (`None`: not a registered version, or
    /// a version played with tuned parameters).
    pub fn versions(&self) -> Vec<Option<&str>> {
        (self.engines.iter())
            .map(|e| e.version.as_deref().filter(|_| self.format != Format::Spsa))
            .collect()
    }

    /// Checks what TOML alone cannot: a problem as (table, key path, message).
    fn validate(&self) -> Result<(), Problem> {
        let top = |key: &str, message: String| Err((None, key.to_string(), message));
        if self.name.trim().is_empty() {
            return top("name", "must not be empty".into());
        }
        let n = self.engines.len();
        let two_only = matches!(self.format, Format::Sprt | Format::Match);
        let one_only = self.format == Format::Spsa;
        if (n < 2 && !one_only) || (two_only && n != 2) || (one_only && n != 1) {
            let want = match (two_only, one_only) {
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
        let mut names = std::collections::HashSet::new();
        for (i, engine) in self.engines.iter().enumerate() {
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
            match (&engine.player, &engine.command, &engine.version) {
                (_, _, Some(v)) if v.trim().is_empty() => return at("version", "must not be empty".into()),
                (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => return at("version", "give a version, or a player or command, not both".into()),
                (None, None, Some(_)) if !engine.options.is_empty() => return at("options", "a version has its options".into()),
                (None, None, Some(_)) => continue,
                (Some(_), Some(_), None) => return at("player", "give player or command, not both".into()),
                (None, None, None) => return at("player", "give a built-in player (player = \"ab:depth=6\"), an outside engine (command = \"./engine\") or a registered version (version = \"eval-v3\")".into()),
                (None, Some(c), None) if c.trim().is_empty() => return at("command", "must not be empty".into()),
                _ => {}
            }
            if engine.player.is_some() && !engine.options.is_empty() {
                return at(
                    "options",
                    "options are for outside engines (command = ...)".into(),
                );
            }
        }
        match self.format {
            Format::RoundRobin | Format::Gauntlet if self.rounds.is_none_or(|r| r == 0) => {
                return top(
                    "rounds",
                    format!("a {} needs rounds = 1 or more", self.format.name()),
                );
            }
            Format::Match if self.pairs.is_none_or(|p| p == 0) => {
                return top("pairs", "a match needs pairs = 1 or more".into());
            }
            Format::Sprt => {
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
            _ => {}
        }
        if self.spsa.is_some() && self.format != Format::Spsa {
            return top("spsa", "an [spsa] table is for format = \"spsa\"".into());
        }
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
        let adjudication = |key: &str, message: String| {
            Err((
                Some(("adjudication", 0)),
                format!("adjudication.{key}"),
                message,
            ))
        };
        if let Some(r) = self.adjudication.resign
            && (!(1..crate::adjudication::DECISIVE).contains(&r.score)
                || !(1..=100).contains(&r.moves))
        {
            return adjudication(
                "resign",
                format!(
                    "score must be 1 to {}, moves 1 to 100",
                    crate::adjudication::DECISIVE - 1
                ),
            );
        }
        if let Some(d) = self.adjudication.draw
            && (!(0..crate::adjudication::DECISIVE).contains(&d.score)
                || !(1..=100).contains(&d.moves))
        {
            return adjudication(
                "draw",
                format!(
                    "score must be 0 to {}, moves 1 to 100",
                    crate::adjudication::DECISIVE - 1
                ),
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
        if self.max_pairs() > MAX_PAIRS {
            let key = match self.format {
                Format::Match => "pairs",
                Format::Sprt => "sprt.max_pairs",
                Format::Spsa => "spsa.pairs",
                _ => "rounds",
            };
            return top(
                key,
                format!(
                    "{} pairs planned; at most {MAX_PAIRS} (a billion pairs: years of play)",
                    self.max_pairs()
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

    /// The rule options as `key=value,...` (the rules crate's text form).
    pub fn rules_text(&self) -> String {
        self.rules
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Pairs planned, or `None` for an SPRT (open-ended up to `max_pairs`).
    pub fn planned_pairs(&self) -> Option<u64> {
        let n = self.engines.len() as u64;
        let rounds = u64::from(self.rounds.unwrap_or(1));
        match self.format {
            Format::RoundRobin => Some(rounds.saturating_mul(n * n.saturating_sub(1) / 2)),
            Format::Gauntlet => Some(rounds.saturating_mul(n.saturating_sub(1))),
            Format::Match => self.pairs,
            Format::Spsa => self.spsa.as_ref().map(|s| s.pairs),
            Format::Sprt => None,
        }
    }

    /// The most pairs the tournament can play.
    pub fn max_pairs(&self) -> u64 {
        self.planned_pairs()
            .unwrap_or_else(|| self.sprt.as_ref().map_or(0, |s| s.max_pairs))
    }

    /// The seed of pair `index`; its game `g` (0 or 1) has seed
    /// [`game_seed`]`(pair_seed, g)`. Never 0.
    pub fn pair_seed(&self, index: u64) -> u64 {
        mix(self.seed, index.wrapping_add(1)).max(1)
    }

    /// The engines of pair `index` (indices into [`TournamentConfig::engines`]) and the
    /// index of its opening. Each pair plays the opening twice with colours swapped.
    pub fn pairing(&self, index: u64) -> (usize, usize, u64) {
        let n = self.engines.len() as u64;
        match self.format {
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
            Format::Gauntlet => {
                let per_round = n - 1;
                (0, (1 + index % per_round) as usize, index / per_round)
            }
            Format::Sprt | Format::Match | Format::Spsa => (0, 1, index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPRT: &str = r#"
name = "eval-v2-vs-v1"
game = "loa"
rules = { double-connection = "mover-wins" }
format = "sprt"
sprt = { elo0 = 0.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, model = "normalized", max_pairs = 20000 }
openings = { plies = 4, seed = 1 }
limits = { nodes = 20000 }
adjudication = { max_plies = 400 }

[[engine]]
name = "v2"
player = "ab:depth=3"

[[engine]]
name = "v1"
command = "./engines/v1"
options = { Hash = 64 }
"#;

    #[test]
    fn the_issue_example_parses() {
        let c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
        assert_eq!(c.format, Format::Sprt);
        assert_eq!(c.rules_text(), "double-connection=mover-wins");
        assert_eq!(c.planned_pairs(), None);
        assert_eq!(c.max_pairs(), 20000);
        assert_eq!(c.engines[1].command.as_deref(), Some("./engines/v1"));
    }

    #[test]
    fn the_example_configs_parse() {
        for file in [
            "loa-quick.toml",
            "amazons-quick.toml",
            "sprt-loa.toml",
            "gauntlet-outside.toml",
            "sprt-versions.toml",
            "book-loa.toml",
            "time-odds.toml",
            "spsa-loa.toml",
        ] {
            let path = format!("{}/../../config/{file}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).unwrap();
            TournamentConfig::parse(&text, file).unwrap_or_else(|e| panic!("{e}"));
        }
        // And the strength tests' SPRTs, tuning runs and screening gauntlets.
        let dir = format!("{}/../../bench/strength", env!("CARGO_MANIFEST_DIR"));
        let mut files = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).unwrap();
                let c = TournamentConfig::parse(&text, &path.display().to_string())
                    .unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    matches!(c.format, Format::Sprt | Format::Spsa | Format::Gauntlet),
                    "{}",
                    path.display()
                );
                files += 1;
            }
        }
        assert_eq!(files, 18);
    }

    fn error(text: &str) -> ConfigError {
        TournamentConfig::parse(text, "t.toml").unwrap_err()
    }

    const SPSA: &str = r#"
name = "tune"
game = "loa"
format = "spsa"
openings = { plies = 4 }
limits = { nodes = 2000 }

[spsa]
pairs = 100
verify = { elo0 = 0, elo1 = 5 }

[[spsa.param]]
name = "connectedness"
start = 60
min = 0
max = 200
c_end = 8
r_end = 0.002

[[engine]]
name = "ab"
version = "v3"
"#;

    #[test]
    fn an_spsa_file_tunes_one_engine_against_itself() {
        let c = TournamentConfig::parse(SPSA, "t.toml").unwrap();
        assert_eq!(c.format, Format::Spsa);
        let names: Vec<&str> = c.engines.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["ab+", "ab-"]);
        assert_eq!(c.engines[1].version.as_deref(), Some("v3"));
        // Tuned sides are not the version itself: they stay off its timeline.
        assert_eq!(c.versions(), [None, None]);
        assert_eq!((c.planned_pairs(), c.max_pairs()), (Some(100), 100));
        assert_eq!(c.pairing(7), (0, 1, 7));
        let s = c.spsa.as_ref().unwrap();
        assert_eq!((s.alpha, s.gamma, s.params.len()), (0.602, 0.101, 1));
        assert_eq!(s.verify.as_ref().unwrap().elo1, 5.0);

        let two = SPSA.replace(
            "[[engine]]\nname = \"ab\"",
            "[[engine]]\nname = \"x\"\nplayer = \"ab\"\n\n[[engine]]\nname = \"ab\"",
        );
        let e = error(&two);
        assert!(e.message.contains("exactly 1 (the engine to tune)"), "{e}");
        let e = error(&SPSA.replace("c_end = 8", "c_end = 0"));
        assert_eq!(e.key.as_deref(), Some("spsa.param[0].c_end"), "{e}");
        assert_eq!(e.line, Some(17), "{e}");
        let e = error(&SPSA.replace("start = 60", "start = 260"));
        assert_eq!(e.key.as_deref(), Some("spsa.param[0].start"), "{e}");
        let e = error(&SPSA.replace("elo1 = 5", "elo1 = -5"));
        assert_eq!(e.key.as_deref(), Some("spsa.verify.elo1"), "{e}");
        let e = error(&SPSA.replace("pairs = 100", "pairs = 100\nsteps = 3"));
        assert!(e.message.contains("unknown field `steps`"), "{e}");
        let e = error(&SPSA.replace("format = \"spsa\"", "format = \"match\"\npairs = 3"));
        assert!(e.message.contains("exactly 2"), "{e}");
        let no_table = SPSA.split("[spsa]").next().unwrap().to_string()
            + "[[engine]]\nname = \"ab\"\nplayer = \"ab\"\n";
        assert_eq!(error(&no_table).key.as_deref(), Some("spsa"));
    }

    #[test]
    fn a_share_of_adjudicated_games_is_played_on_only_with_score_rules() {
        let with = |adjudication: &str| SPRT.replace("{ max_plies = 400 }", adjudication);
        let c = TournamentConfig::parse(
            &with("{ resign = { score = 600, moves = 3 }, play_on = 0.25 }"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(c.adjudication.score_rules().play_on, 2_500);
        let e = error(&with(
            "{ resign = { score = 600, moves = 3 }, play_on = 1.5 }",
        ));
        assert_eq!(e.key.as_deref(), Some("adjudication.play_on"), "{e}");
        let e = error(&with("{ max_plies = 400, play_on = 0.5 }"));
        assert!(e.message.contains("give resign or draw too"), "{e}");
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let e = error(&SPRT.replace("max_plies = 400", "max_plies = 400, speed = 3"));
        assert_eq!(e.line, Some(9), "{e}");
        assert!(e.message.contains("unknown field `speed`"), "{e}");
        let e = error(&SPRT.replace("elo1 = 5.0", "elo1 = -5.0"));
        assert_eq!(
            e.to_string(),
            "t.toml:6: sprt.elo1: elo1 (-5) must be above elo0 (0)"
        );
        let e = error(&SPRT.replace("player = \"ab:depth=3\"", "program = \"x\""));
        assert!(e.message.contains("unknown field `program`"), "{e}");
        assert_eq!(e.line, Some(13));
        let e = error(&SPRT.replace("command = \"./engines/v1\"\n", ""));
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("engine[1].player"), Some(15)),
            "{e}"
        );
        let e = error(&SPRT.replace(
            "limits = { nodes = 20000 }",
            "limits = { tc = \"ten minutes\" }",
        ));
        assert_eq!(e.key.as_deref(), Some("limits.tc"), "{e}");
        assert_eq!(e.line, Some(8));
        let e = error(&SPRT.replace("game = \"loa\"", "game = \"chess\""));
        assert_eq!(
            e.to_string(),
            "t.toml:3: game: unknown game 'chess': expected 'loa' or 'amazons'"
        );
        let e = error(&SPRT.replace("model = \"normalized\"", "model = \"gaussian\""));
        assert_eq!(
            (e.line, e.key.as_deref()),
            (Some(6), Some("sprt.model")),
            "{e}"
        );
        assert!(e.message.contains("unknown variant `gaussian`"), "{e}");
        let e = error(&SPRT.replace("format = \"sprt\"", "format = \"swiss\""));
        assert!(e.message.contains("swiss"), "{e}");
        assert_eq!(e.line, Some(5));
        let e = error(&SPRT.replace("name = \"v1\"", "name = \"v2\""));
        assert_eq!(e.key.as_deref(), Some("engine[1].name"));
        assert!(
            e.message.contains("'v2'"),
            "the repeated name is named: {e}"
        );
    }

    #[test]
    fn huge_tournaments_are_refused_before_anything_is_planned() {
        let e = error(&SPRT.replace("max_pairs = 20000", "max_pairs = 1000000000000"));
        assert_eq!(e.key.as_deref(), Some("sprt.max_pairs"), "{e}");
        assert!(e.message.contains("at most 1000000000"), "{e}");
        let engines: String = (0..MAX_ENGINES + 1)
            .map(|i| format!("[[engine]]\nname = \"e{i}\"\nplayer = \"random\"\n"))
            .collect();
        let text = format!(
            "name = \"rr\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 1\n\
             openings = {{ plies = 2, seed = 1 }}\nlimits = {{ depth = 1 }}\n{engines}"
        );
        let e = error(&text);
        assert_eq!(e.key.as_deref(), Some("engine"), "{e}");
        // Rounds that would overflow the pair count are refused too, not wrapped.
        let two: String = engines.lines().take(6).collect::<Vec<_>>().join("\n");
        let e = error(&format!(
            "name = \"rr\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 4000000000\n\
                 openings = {{ plies = 2, seed = 1 }}\nlimits = {{ depth = 1 }}\n{two}\n"
        ));
        assert_eq!(e.key.as_deref(), Some("rounds"), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key() {
        let e = error(&SPRT.replace("max_plies = 400", "max_plies = \"400\""));
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("adjudication.max_plies"), Some(9)),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("t.toml:9: adjudication.max_plies: invalid type"),
            "{e}"
        );
        let e = error(&SPRT.replace("player = \"ab:depth=3\"", "player = 3"));
        assert_eq!(e.key.as_deref(), Some("engine[0].player"), "{e}");
        let e = error(&SPRT.replace("options = { Hash = 64 }", "options = [1]"));
        assert_eq!(e.key.as_deref(), Some("engine[1].options"), "{e}");
        let e = error(&SPRT.replace("game = \"loa\"", "game = 1"));
        assert_eq!(
            e.to_string(),
            "t.toml:3: game: invalid type: integer `1`, expected a string"
        );
        let e = error(&SPRT.replace("alpha = 0.05", "alpha = \"a, {b}\", gamma = \"x\""));
        assert_eq!(e.key.as_deref(), Some("sprt.alpha"), "{e}");
    }

    #[test]
    fn every_game_of_a_tournament_has_its_own_seed() {
        let mut c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
        assert_eq!(c.seed, 1, "the default");
        let seeds: std::collections::HashSet<u64> = (0..5000)
            .flat_map(|p| [0, 1].map(|g| game_seed(c.pair_seed(p), g)))
            .collect();
        assert_eq!(seeds.len(), 10_000);
        assert!(!seeds.contains(&0));
        let first = c.pair_seed(0);
        c.seed = 2;
        assert_ne!(
            c.pair_seed(0),
            first,
            "another tournament seed, other games"
        );
    }

    #[test]
    fn an_outcome_stored_without_colours_gets_them_from_the_old_rule() {
        let old: PairOutcome =
            serde_json::from_str(r#"{"pair":3,"first":2,"second":0,"half_points":[2,1]}"#).unwrap();
        assert_eq!(old.white, PairOutcome::COLOURS_UNKNOWN);
        // LOA: Black moves first, so the first engine had Black in game 0.
        let loa = old.with_legacy_colours(tourney_rules::Color::Black);
        assert_eq!(loa.white, [0, 2]);
        assert_eq!((loa.white_half_points(0), loa.white_half_points(1)), (0, 1));
        let amazons = old.with_legacy_colours(tourney_rules::Color::White);
        assert_eq!(amazons.white, [2, 0]);
        assert_eq!(
            amazons.with_legacy_colours(tourney_rules::Color::Black),
            amazons
        );
        let json = serde_json::to_string(&amazons).unwrap();
        assert!(json.contains("\"white\":[2,0]"), "{json}");
    }

    #[test]
    fn round_robin_pairs_cover_every_pairing_once_per_round() {
        let mut c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
        c.format = Format::RoundRobin;
        c.rounds = Some(2);
        for i in 0..3 {
            c.engines.push(EngineEntry {
                name: format!("e{i}"),
                version: None,
                player: Some("random".into()),
                command: None,
                options: BTreeMap::new(),
                limits: None,
            });
        }
        assert_eq!(c.planned_pairs(), Some(20));
        let mut seen = std::collections::BTreeMap::new();
        for p in 0..20 {
            let (a, b, round) = c.pairing(p);
            assert!(a < b && b < 5);
            *seen.entry((a, b)).or_insert(0) += 1;
            assert_eq!(round, p / 10);
        }
        assert_eq!(seen.len(), 10);
        assert!(seen.values().all(|&n| n == 2));
        c.format = Format::Gauntlet;
        assert_eq!(c.planned_pairs(), Some(8));
        assert_eq!(c.pairing(5), (0, 2, 1));
    }

    #[test]
    fn an_engine_may_be_a_registered_version_filled_in_when_submitted() {
        let text = "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { nodes = 1 }\n\
                    [[engine]]\nversion = \"ab-v2\"\n\
                    [[engine]]\nname = \"mine\"\nversion = \"prog-7\"\n";
        let mut c = TournamentConfig::parse(text, "t.toml").unwrap();
        assert_eq!(c.engines[0].name, "ab-v2", "named after its version");
        assert_eq!(c.versions(), [Some("ab-v2"), Some("prog-7")]);
        let lookup = |name: &str| {
            let mut v = crate::version::EngineVersion {
                name: name.into(),
                player: None,
                command: None,
                artifact: None,
                options: BTreeMap::new(),
                parent: None,
                note: String::new(),
                created_ms: 0,
            };
            match name {
                "ab-v2" => v.player = Some("ab:depth=2".into()),
                "prog-7" => {
                    v.command = Some("./engine".into());
                    v.artifact = Some("f".repeat(64));
                    v.options.insert("Hash".into(), "64".into());
                }
                _ => return None,
            }
            Some(v)
        };
        let programs = c.resolve_versions(lookup).unwrap();
        assert_eq!(c.engines[0].player.as_deref(), Some("ab:depth=2"));
        assert_eq!(c.engines[1].command.as_deref(), Some("./engine"));
        assert_eq!(c.engines[1].option_values(), [("Hash".into(), "64".into())]);
        assert_eq!(programs.get("mine").map(String::len), Some(64));

        let unknown = text.replace("prog-7", "prog-8");
        let mut c = TournamentConfig::parse(&unknown, "t.toml").unwrap();
        let e = c.resolve_versions(lookup).unwrap_err();
        assert!(e.contains("engine[1].version: no version 'prog-8'"), "{e}");
        let both = text.replace(
            "version = \"prog-7\"",
            "version = \"prog-7\"\nplayer = \"ab\"",
        );
        let e = TournamentConfig::parse(&both, "t.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("engine[1].version"), "{e}");
        assert!(e.to_string().contains("not both"), "{e}");
    }

    #[test]
    fn an_engine_may_have_its_own_limits_for_time_odds() {
        let text = "name = \"odds\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { tc = \"10+0.1\" }\n\
                    [[engine]]\nname = \"fast\"\nplayer = \"ab\"\nlimits = { tc = \"2+0.02\" }\n\
                    [[engine]]\nname = \"slow\"\nplayer = \"ab\"\n";
        let c = TournamentConfig::parse(text, "odds.toml").unwrap();
        let odds = crate::job::Engine::of(&c, 0, &BTreeMap::new());
        assert_eq!(
            odds.limits.map(|l| l.time_control.to_string()),
            Some("2+0.02".into())
        );
        assert_eq!(crate::job::Engine::of(&c, 1, &BTreeMap::new()).limits, None);
        let bad = text.replace("2+0.02", "soon");
        let e = TournamentConfig::parse(&bad, "odds.toml").unwrap_err();
        assert_eq!(
            (e.key.as_deref(), e.line),
            (Some("engine[0].limits"), Some(9)),
            "{e}"
        );
        assert!(e.to_string().contains("tc: base time 'soon'"), "{e}");
        assert!(!crate::job::GameSettings::of(&c).scale_by_speed);
        let scaled = text.replace("tc = \"10+0.1\" }", "tc = \"10+0.1\", scale = \"nps\" }");
        let c = TournamentConfig::parse(&scaled, "odds.toml").unwrap();
        assert!(crate::job::GameSettings::of(&c).scale_by_speed);
        let nothing_to_scale = "name = \"n\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\n\
                                limits = { nodes = 5, scale = \"nps\" }\n[[engine]]\nname = \"a\"\nplayer = \"ab\"\n\
                                [[engine]]\nname = \"b\"\nplayer = \"ab\"\n";
        let e = TournamentConfig::parse(nothing_to_scale, "n.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("limits.scale"), "{e}");
        let empty = text.replace("limits = { tc = \"2+0.02\" }", "limits = { }");
        let e = TournamentConfig::parse(&empty, "odds.toml").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("engine[0].limits"), "{e}");
    }
}
