//! The settings of a tournament file: format, SPRT, openings, limits, adjudication, what
//! an outside engine may use, and the bounds on its size.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::TimeControl;

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
    /// Self-play training data (`[datagen]`): one engine (or two), each opening played
    /// once, the positions kept until there are `datagen.positions` of them.
    Datagen,
    /// A grouped test: the first engine is the base, the others (1 to 16) are takes of one
    /// idea, decided together by the `sprt` table with one family-wise error rate
    /// (`tourney_stats::takes`).
    Takes,
    /// A seeded single-elimination bracket: `pairs` pairs a match, `tiebreak_pairs` more
    /// one at a time while it is tied, then the higher seed goes through.
    Knockout,
    /// Each engine against every engine above it, in that order (cutechess's pyramid),
    /// `rounds` times.
    Pyramid,
    /// `rounds` rounds paired by score with no repeated pairing (docs/formats.md).
    Swiss,
    /// A rating pool: every engine rated jointly, each next pair chosen by the
    /// information it adds (`[pool]`, docs/formats.md); it never ends by itself.
    Pool,
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
            Format::Datagen => "datagen",
            Format::Takes => "takes",
            Format::Knockout => "knockout",
            Format::Pyramid => "pyramid",
            Format::Swiss => "swiss",
            Format::Pool => "pool",
        }
    }

    /// Whether its pairings depend on results (a grouped test's allocation, a bracket's, a
    /// Swiss round's or a pool's): then the scheduler makes them as it hands pairs out, and each
    /// pair plays the opening of its own number.
    pub fn is_dynamic(self) -> bool {
        matches!(
            self,
            Format::Takes | Format::Knockout | Format::Swiss | Format::Pool
        )
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

/// The most positions a data generation run may want: its duplicate filter holds a key of
/// 8 bytes (about 20 with the set's overhead) for each one kept.
pub const MAX_DATAGEN_POSITIONS: u64 = 20_000_000;

/// The largest data file, in MiB, before the next one is started.
pub const MAX_DATAGEN_FILE_MB: u64 = 4096;

/// Where a data generation run's openings come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DatagenOpenings {
    /// The tournament's suite (`[openings]`), each opening played once.
    #[default]
    Suite,
    /// The first engine makes them (`genfens`, docs/engine-protocol.md), two a pair.
    Engine,
}

/// A data generation run (`[datagen]`, format `datagen`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatagenSettings {
    /// Positions wanted: the run ends once its data files hold this many.
    pub positions: u64,
    /// At most this many pairs (default: as many as positions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pairs: Option<u64>,
    /// Positions before this many moves of a game are skipped.
    #[serde(default = "eight")]
    pub skip_plies: u32,
    /// LOA: positions whose played move captures are skipped.
    #[serde(default = "yes")]
    pub skip_captures: bool,
    /// Positions whose score is a forced win or loss are skipped.
    #[serde(default = "yes")]
    pub skip_decided: bool,
    /// A position already in the data set is skipped.
    #[serde(default = "yes")]
    pub dedup: bool,
    /// Where openings come from.
    #[serde(default)]
    pub openings: DatagenOpenings,
    /// A data file's size, MiB, before the next one is started.
    #[serde(default = "sixty_four")]
    pub file_mb: u64,
}

fn eight() -> u32 {
    8
}

fn yes() -> bool {
    true
}

fn sixty_four() -> u64 {
    64
}

impl DatagenSettings {
    /// The most pairs the run may play.
    pub fn max_pairs(&self) -> u64 {
        self.max_pairs.unwrap_or(self.positions).min(MAX_PAIRS)
    }

    /// The key at fault and why, if any.
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if !(1..=MAX_DATAGEN_POSITIONS).contains(&self.positions) {
            return Some((
                "positions",
                format!(
                    "must be 1 to {MAX_DATAGEN_POSITIONS}, found {} (split larger sets over runs)",
                    self.positions
                ),
            ));
        }
        if self.max_pairs == Some(0) {
            return Some(("max_pairs", "must be 1 or more".into()));
        }
        if !(1..=MAX_DATAGEN_FILE_MB).contains(&self.file_mb) {
            return Some((
                "file_mb",
                format!("must be 1 to {MAX_DATAGEN_FILE_MB}, found {}", self.file_mb),
            ));
        }
        None
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

/// Which games keep their outside engines' logs (the protocol transcript and stderr).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EngineLogs {
    /// Only a game an engine lost by failing (crash, time, illegal move, silence).
    #[default]
    Failures,
    /// Every game.
    All,
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

pub(super) fn one() -> u64 {
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
    pub(super) fn problem(&self) -> Option<(&'static str, String)> {
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
