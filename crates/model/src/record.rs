//! Complete game records, as JSON (serde) and as PGN-style text.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::fmt::Write as _;
use tourney_rules::{Color, GameKind};

/// Why a game ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum Termination {
    /// LOA: a side connected its pieces.
    Connection,
    /// Amazons: the side to move had no complete turn.
    NoMoves,
    /// LOA: third occurrence of a position.
    Repetition,
    /// Decided by the referee before the end (Amazons: the board split into regions).
    Adjudication,
    /// Drawn at the maximum number of plies.
    MaxPlies,
    /// A player sent a move that is not legal (or not a move).
    IllegalMove,
    /// A player ran out of time.
    TimeForfeit,
    /// A player's process exited, crashed or closed its output.
    Crash,
    /// A player stopped answering.
    Unresponsive,
}

impl Termination {
    /// Every termination, rule endings first.
    pub const ALL: [Termination; 9] = [
        Termination::Connection,
        Termination::NoMoves,
        Termination::Repetition,
        Termination::Adjudication,
        Termination::MaxPlies,
        Termination::IllegalMove,
        Termination::TimeForfeit,
        Termination::Crash,
        Termination::Unresponsive,
    ];

    /// The name used in records: `connection`, `no-moves`, `time-forfeit`, ...
    pub fn name(self) -> &'static str {
        match self {
            Termination::Connection => "connection",
            Termination::NoMoves => "no-moves",
            Termination::Repetition => "repetition",
            Termination::Adjudication => "adjudication",
            Termination::MaxPlies => "max-plies",
            Termination::IllegalMove => "illegal-move",
            Termination::TimeForfeit => "time-forfeit",
            Termination::Crash => "crash",
            Termination::Unresponsive => "unresponsive",
        }
    }

    /// Whether the game was lost by a player's failure rather than played out.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Termination::IllegalMove
                | Termination::TimeForfeit
                | Termination::Crash
                | Termination::Unresponsive
        )
    }
}

impl std::fmt::Display for Termination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Who played one colour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PlayerRecord {
    /// The engine's name in the tournament.
    pub name: String,
    /// The built-in player spec (`ab:depth=6`) or the command line (`cmd:./engine`).
    pub spec: String,
    /// The sha256 of an outside engine's artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
    /// An outside engine's options (`setoption`), as the tournament (or its tuning run)
    /// gave them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, String>,
    /// The last lines the engine wrote to stderr, kept on failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
    /// The game's protocol with an outside engine that lost it by failing (crash, time,
    /// illegal move, silence): each line as `SECONDS DIR TEXT`, seconds since the game
    /// began, `>` sent to the engine, `<` from its stdout, `!` its stderr; at most 64 KiB
    /// (its first and last lines, those between counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transcript: Vec<String>,
}

/// The most stderr lines a record keeps of a player (its last ones).
pub const MAX_STDERR_LINES: usize = 50;
/// The longest stderr line a record keeps, in characters (a longer one is cut).
pub const MAX_STDERR_LINE_CHARS: usize = 4096;
/// The most bytes of a game's protocol a record keeps of a player (its first and last
/// lines, those between counted).
pub const MAX_TRANSCRIPT_BYTES: usize = 64 << 10;
/// The most lines of a transcript: each takes at least 16 bytes of the budget.
pub const MAX_TRANSCRIPT_LINES: usize = MAX_TRANSCRIPT_BYTES / 16 + 1;
/// The longest transcript line a record keeps, in characters, with its time and
/// direction (a longer one is cut, its length said).
pub const MAX_TRANSCRIPT_LINE_CHARS: usize = 1024 + 64;

impl PlayerRecord {
    /// Whether its stderr and transcript stay within what a worker keeps
    /// ([`MAX_STDERR_LINES`], [`MAX_TRANSCRIPT_BYTES`], ...); what is wrong if not.
    ///
    /// # Errors
    /// The bound it goes past.
    pub fn check_bounds(&self) -> Result<(), String> {
        if self.stderr.len() > MAX_STDERR_LINES {
            return Err(format!(
                "{} stderr lines, at most {MAX_STDERR_LINES}",
                self.stderr.len()
            ));
        }
        if let Some(line) = (self.stderr.iter()).find(|l| l.chars().count() > MAX_STDERR_LINE_CHARS)
        {
            return Err(format!(
                "a stderr line of {} characters, at most {MAX_STDERR_LINE_CHARS}",
                line.chars().count()
            ));
        }
        // Each line counts its text and 16 bytes (time and direction); the line that counts
        // those left out comes on top.
        let bytes: usize = self.transcript.iter().map(|l| l.len().max(16)).sum();
        if self.transcript.len() > MAX_TRANSCRIPT_LINES || bytes > MAX_TRANSCRIPT_BYTES + 256 {
            return Err(format!(
                "a transcript of {} lines and {bytes} bytes, at most {} KiB",
                self.transcript.len(),
                MAX_TRANSCRIPT_BYTES >> 10
            ));
        }
        if let Some(line) =
            (self.transcript.iter()).find(|l| l.chars().count() > MAX_TRANSCRIPT_LINE_CHARS)
        {
            return Err(format!(
                "a transcript line of {} characters, at most {MAX_TRANSCRIPT_LINE_CHARS}",
                line.chars().count()
            ));
        }
        Ok(())
    }
}

/// One move as played.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveRecord {
    /// The move in notation.
    #[serde(rename = "move")]
    pub mv: String,
    /// Thinking time measured by the referee, in milliseconds.
    pub time_ms: u64,
    /// Nodes searched, if the player said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    /// Search depth, if the player said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Score from the mover's view as the protocol writes it (`cp 35`, `win 7`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<String>,
}

/// How a game ended, from White's side; written `1-0`, `1/2-1/2` or `0-1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GameResult {
    /// White won (`1-0`).
    #[serde(rename = "1-0")]
    WhiteWins,
    /// Drawn (`1/2-1/2`).
    #[serde(rename = "1/2-1/2")]
    Draw,
    /// Black won (`0-1`).
    #[serde(rename = "0-1")]
    BlackWins,
}

impl GameResult {
    /// Parses `1-0`, `0-1` or `1/2-1/2`; `None` for anything else (e.g. PGN's `*`).
    pub fn parse(text: &str) -> Option<GameResult> {
        match text {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" => Some(GameResult::Draw),
            _ => None,
        }
    }

    /// The result of a game `winner` won (`None`: a draw).
    pub fn of_winner(winner: Option<Color>) -> GameResult {
        match winner {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }

    /// The winner, `None` for a draw.
    pub fn winner(self) -> Option<Color> {
        match self {
            GameResult::WhiteWins => Some(Color::White),
            GameResult::BlackWins => Some(Color::Black),
            GameResult::Draw => None,
        }
    }

    /// `1-0`, `1/2-1/2` or `0-1`.
    pub fn as_str(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::Draw => "1/2-1/2",
            GameResult::BlackWins => "0-1",
        }
    }

    /// White's score: 1, ½ or 0.
    pub fn white_score(self) -> f64 {
        match self {
            GameResult::WhiteWins => 1.0,
            GameResult::Draw => 0.5,
            GameResult::BlackWins => 0.0,
        }
    }

    /// Half-points (0, 1 or 2) of the side that played `color`.
    pub fn half_points(self, color: Color) -> u8 {
        match (self.winner(), color) {
            (None, _) => 1,
            (Some(winner), color) if winner == color => 2,
            _ => 0,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A complete game: setup, players, moves with their times, result and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// `loa` or `amazons`.
    #[serde(with = "crate::game_kind")]
    pub game: GameKind,
    /// Rule options (`double-connection=draw`; empty for the defaults or Amazons).
    #[serde(default)]
    pub rules: String,
    /// Position string the game started from.
    pub start: String,
    /// How many of the first moves came from the opening (not chosen by the players).
    #[serde(default)]
    pub opening_plies: u32,
    /// The time control (`40/60+0.5`, `inf`) or per-move limits (`nodes=20000`).
    pub time_control: String,
    /// The white player.
    pub white: PlayerRecord,
    /// The black player.
    pub black: PlayerRecord,
    /// Moves in order, opening moves included.
    pub moves: Vec<MoveRecord>,
    /// `1-0` (White won), `0-1` (Black won) or `1/2-1/2`.
    pub result: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// Details of the ending, e.g. the illegal move sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the game started, Unix milliseconds (PGN's `Date` and `Time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_ms: Option<u64>,
    /// Reproducibility and bookkeeping: seeds, opening and pair index, worker, version.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, MetaValue>,
}

/// A value in a record's `meta`: a number (`pair`, `game`, `opening`) or text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MetaValue {
    /// A count or an index.
    Number(u64),
    /// Anything else (names, hashes, versions).
    Text(String),
}

impl MetaValue {
    /// The number, also from text of digits (records written before numbers were numbers).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            MetaValue::Number(n) => Some(*n),
            MetaValue::Text(t) => t.parse().ok(),
        }
    }
}

impl From<u64> for MetaValue {
    fn from(n: u64) -> Self {
        MetaValue::Number(n)
    }
}

impl From<String> for MetaValue {
    fn from(t: String) -> Self {
        MetaValue::Text(t)
    }
}

impl From<&str> for MetaValue {
    fn from(t: &str) -> Self {
        MetaValue::Text(t.to_string())
    }
}

impl std::fmt::Display for MetaValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetaValue::Number(n) => write!(f, "{n}"),
            MetaValue::Text(t) => f.write_str(t),
        }
    }
}

/// What the coordinator's checks, metrics and dashboard need of a [`GameRecord`], read
/// from its JSON without keeping the rest: the moves' notation is hashed, not allocated,
/// and scores and the rest of the setup are skipped.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GameSummary {
    /// `loa` or `amazons`.
    #[serde(with = "crate::game_kind")]
    pub game: GameKind,
    /// The white player.
    pub white: PlayerName,
    /// The black player.
    pub black: PlayerName,
    /// The start position.
    #[serde(default)]
    pub start: String,
    /// Each move's time and nodes, and a hash of its notation.
    pub moves: Vec<MoveCost>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// What the coordinator reads of the record's `meta`.
    #[serde(default)]
    pub meta: SummaryMeta,
}

/// The `meta` fields a [`GameSummary`] keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct SummaryMeta {
    /// An adjudicated game played on: how it really ended.
    #[serde(default)]
    pub played_on: Option<GameResult>,
}

/// A player's name in a [`GameSummary`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PlayerName {
    /// The engine's name in the tournament.
    pub name: String,
}

/// What one move cost, in a [`GameSummary`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct MoveCost {
    /// Thinking time measured by the referee, in milliseconds.
    pub time_ms: u64,
    /// Nodes searched, if the player said.
    #[serde(default)]
    pub nodes: Option<u64>,
    /// The move's notation, kept inline (no allocation).
    #[serde(rename = "move")]
    pub notation: Notation,
    /// The mover's score in centi-units (`cp 35`; `win`/`loss` near
    /// [`crate::adjudication::DECISIVE`]), if it gave one that reads.
    #[serde(default, deserialize_with = "score_centi")]
    pub score: Option<i32>,
}

fn score_centi<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    Ok(text.as_deref().and_then(crate::adjudication::centi))
}

/// A move's notation (`b1-b3`, `d1-d7/g7`, `pass`), up to 15 bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Notation {
    bytes: [u8; 15],
    len: u8,
}

impl Notation {
    /// The notation's text.
    pub fn as_str(&self) -> &str {
        // Built only from a `&str` cut at its end: always UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for Notation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::str::FromStr for Notation {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        if text.len() > 15 {
            return Err(format!("move notation '{text}' is longer than 15 bytes"));
        }
        let mut bytes = [0; 15];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Ok(Notation {
            bytes,
            len: text.len() as u8,
        })
    }
}

impl<'de> Deserialize<'de> for Notation {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Borrowed when the text has no escapes, as moves do.
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// FNV-1a over `bytes`, from `state`: stable across runs and builds.
fn fnv1a(mut state: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(0x0000_0100_0000_01b3);
    }
    state
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

impl GameSummary {
    /// What the coordinator keeps of a whole record.
    ///
    /// # Errors
    /// A move's notation longer than any move's (15 bytes): no game has such a move.
    pub fn of(record: &GameRecord) -> Result<GameSummary, String> {
        let moves = (record.moves.iter())
            .map(|m| {
                Ok(MoveCost {
                    time_ms: m.time_ms,
                    nodes: m.nodes,
                    notation: m.mv.parse()?,
                    score: m.score.as_deref().and_then(crate::adjudication::centi),
                })
            })
            .collect::<Result<_, String>>()?;
        let played_on = record.meta.get("played_on").and_then(|v| match v {
            MetaValue::Text(t) => GameResult::parse(t),
            MetaValue::Number(_) => None,
        });
        Ok(GameSummary {
            game: record.game,
            white: PlayerName {
                name: record.white.name.clone(),
            },
            black: PlayerName {
                name: record.black.name.clone(),
            },
            start: record.start.clone(),
            moves,
            result: record.result,
            termination: record.termination,
            meta: SummaryMeta { played_on },
        })
    }

    /// How the game ended when played on past its adjudication, against it.
    pub fn played_on(&self) -> crate::adjudication::PlayedOn {
        let adjudicated = self.termination == Termination::Adjudication;
        crate::adjudication::PlayedOn::of(self.result, self.meta.played_on.filter(|_| adjudicated))
    }

    /// Plies played.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// Thinking time of both sides, in milliseconds.
    pub fn thinking_ms(&self) -> u64 {
        self.moves.iter().map(|m| m.time_ms).sum()
    }

    /// Nodes the players reported searching.
    pub fn nodes(&self) -> u64 {
        self.moves.iter().filter_map(|m| m.nodes).sum()
    }

    /// What makes a game this game: its players with their colours, its start and its
    /// moves, hashed: see [`fingerprint`].
    pub fn fingerprint(&self) -> u128 {
        fingerprint(
            &self.white.name,
            &self.black.name,
            &self.start,
            self.moves.iter().map(|m| m.notation.as_str()),
        )
    }
}

/// The fingerprint of a game: its players with their colours, its start and its moves,
/// hashed (two 64-bit FNV-1a lanes): equal for two games that are move for move the same,
/// different otherwise but for a chance of about 2^-128.
pub fn fingerprint<'a>(
    white: &str,
    black: &str,
    start: &str,
    moves: impl Iterator<Item = &'a str> + Clone,
) -> u128 {
    let lane = |seed: u64| {
        let mut h = fnv1a(seed, white.as_bytes());
        h = fnv1a(h, &[0xff]);
        h = fnv1a(h, black.as_bytes());
        h = fnv1a(h, &[0xff]);
        h = fnv1a(h, start.as_bytes());
        for m in moves.clone() {
            h = fnv1a(h, m.as_bytes());
            h = fnv1a(h, &[0xff]);
        }
        h
    };
    (u128::from(lane(FNV_OFFSET)) << 64) | u128::from(lane(FNV_OFFSET ^ 0x5bd1_e995_0000_0001))
}

/// The PGN-style name of a game: `LOA` or `Amazons`.
fn game_title(game: GameKind) -> &'static str {
    match game {
        GameKind::Loa => "LOA",
        GameKind::Amazons => "Amazons",
    }
}

fn tag(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(
        out,
        "[{name} \"{}\"]",
        crate::printable(value)
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', " ")
    );
}

impl GameRecord {
    /// The record as PGN-style text: the seven-tag roster (`Event`, `Site`, `Date`,
    /// `Round`, `White`, `Black`, `Result`), then `Game`, `Variant`, `SetUp` and `FEN`,
    /// `Termination`, ..., then the numbered moves and the result.
    ///
    /// Moves are numbered as in PGN from a set-up position: a move number covers one ply of
    /// each side, White's first. LOA starts with Black, so its movetext begins `1... `
    /// (Black's ply in the second slot of move 1) and PGN tools that read `FEN` with the
    /// side to move place every ply with its side. `Round` is `pair.game`, counted from 1;
    /// `Site` is the worker that played the game (`?` when unknown).
    pub fn to_pgn(&self) -> String {
        let mut out = String::new();
        let meta = |key: &str| self.meta.get(key);
        let event = meta("tournament").map_or("tourney game".to_string(), ToString::to_string);
        tag(&mut out, "Event", &event);
        tag(
            &mut out,
            "Site",
            &meta("worker").map_or("?".into(), ToString::to_string),
        );
        let started = self.started_ms.map(crate::Utc::from_unix_ms);
        tag(
            &mut out,
            "Date",
            &started.map_or("????.??.??".into(), |t| t.pgn_date()),
        );
        let round = match (
            meta("pair").and_then(MetaValue::as_u64),
            meta("game").and_then(MetaValue::as_u64),
        ) {
            (Some(pair), Some(game)) => format!("{}.{}", pair + 1, game + 1),
            (Some(pair), None) => (pair + 1).to_string(),
            _ => "-".into(),
        };
        tag(&mut out, "Round", &round);
        tag(&mut out, "White", &self.white.name);
        tag(&mut out, "Black", &self.black.name);
        tag(&mut out, "Result", self.result.as_str());
        if let Some(t) = started {
            tag(&mut out, "Time", &t.clock());
        }
        tag(&mut out, "Game", game_title(self.game));
        if !self.rules.is_empty() {
            tag(&mut out, "Variant", &self.rules);
        }
        tag(&mut out, "SetUp", "1");
        tag(&mut out, "FEN", &self.start);
        tag(&mut out, "Termination", self.termination.name());
        if let Some(detail) = &self.detail {
            tag(&mut out, "TerminationDetails", detail);
        }
        tag(&mut out, "TimeControl", &self.time_control);
        tag(&mut out, "PlyCount", &self.moves.len().to_string());
        out.push('\n');
        // Slot 0 of a move number is White's ply, slot 1 Black's.
        let black_starts = self.start.trim_end().ends_with(" b");
        let mut line = String::new();
        for (i, m) in self.moves.iter().enumerate() {
            let slot = i + usize::from(black_starts);
            let token = match (slot % 2, i) {
                (0, _) => format!("{}. {}", slot / 2 + 1, m.mv),
                (_, 0) => format!("{}... {}", slot / 2 + 1, m.mv),
                _ => m.mv.clone(),
            };
            if line.len() + token.len() + 1 > 80 {
                out.push_str(line.trim_end());
                out.push('\n');
                line.clear();
            }
            line.push_str(&token);
            line.push(' ');
        }
        line.push_str(self.result.as_str());
        out.push_str(&line);
        out.push_str("\n\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> GameRecord {
        GameRecord {
            game: GameKind::Loa,
            rules: "double-connection=draw".into(),
            start: "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b".into(),
            opening_plies: 2,
            time_control: "40/60+0.5".into(),
            white: PlayerRecord {
                name: "v1".into(),
                spec: "ab:depth=4".into(),
                ..Default::default()
            },
            black: PlayerRecord {
                name: "v2 \"new\"".into(),
                spec: "cmd:./engine".into(),
                stderr: vec!["oops".into()],
                ..Default::default()
            },
            moves: ["b1-b3", "a2-c2", "b3xc2"]
                .iter()
                .map(|m| MoveRecord {
                    mv: m.to_string(),
                    time_ms: 12,
                    nodes: Some(100),
                    depth: None,
                    score: Some("cp 5".into()),
                })
                .collect(),
            result: GameResult::BlackWins,
            termination: Termination::TimeForfeit,
            detail: Some("white used 61.2 s".into()),
            started_ms: Some(1_796_089_411_999),
            meta: BTreeMap::from([
                ("pair".into(), 7.into()),
                ("game".into(), 1.into()),
                ("worker".into(), "host-3".into()),
            ]),
        }
    }

    #[test]
    fn meta_numbers_are_json_numbers_and_old_text_digits_still_read() {
        let json = serde_json::to_value(record()).unwrap();
        assert_eq!(json["meta"]["pair"], 7);
        assert_eq!(json["meta"]["worker"], "host-3");
        let mut old = json.clone();
        old["meta"]["pair"] = "7".into();
        let r: GameRecord = serde_json::from_value(old).unwrap();
        assert_eq!(r.meta["pair"].as_u64(), Some(7));
        assert!(r.to_pgn().contains("[Round \"8.2\"]"));
    }

    #[test]
    fn json_round_trips_with_stable_names() {
        let r = record();
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"termination\":\"time-forfeit\""));
        assert!(json.contains("\"move\":\"b1-b3\""));
        assert!(json.contains("\"result\":\"0-1\""));
        assert_eq!(serde_json::from_str::<GameRecord>(&json).unwrap(), r);
    }

    #[test]
    fn a_summary_reads_the_costs_and_outcome_of_a_record() {
        let mut r = record();
        r.moves[1].nodes = None;
        let json = serde_json::to_string(&[&r, &r]).unwrap();
        let summaries: Vec<GameSummary> = serde_json::from_str(&json).unwrap();
        let s = &summaries[1];
        assert_eq!((s.game, s.result), (GameKind::Loa, GameResult::BlackWins));
        assert_eq!(
            (s.white.name.as_str(), s.black.name.as_str()),
            ("v1", "v2 \"new\"")
        );
        assert_eq!(s.termination, Termination::TimeForfeit);
        assert_eq!((s.plies(), s.thinking_ms(), s.nodes()), (3, 36, 200));
        // Not a record: refused, not summarised as something else.
        assert!(serde_json::from_str::<Vec<GameSummary>>("[{\"game\":\"loa\"}]").is_err());
    }

    #[test]
    fn a_fingerprint_is_the_players_their_colours_the_start_and_the_moves() {
        let summary = |r: &GameRecord| -> GameSummary {
            serde_json::from_str(&serde_json::to_string(r).unwrap()).unwrap()
        };
        let base = record();
        let print = summary(&base).fingerprint();
        let mut same = base.clone();
        same.moves[0].time_ms += 7;
        same.meta.clear();
        assert_eq!(
            summary(&same).fingerprint(),
            print,
            "times and meta do not count"
        );
        let mut other_move = base.clone();
        other_move.moves[2].mv = "b3-b5".into();
        let mut swapped = base.clone();
        std::mem::swap(&mut swapped.white, &mut swapped.black);
        let mut other_start = base.clone();
        other_start.start = other_start.start.replace(" b", " w");
        let mut fewer = base.clone();
        fewer.moves.pop();
        for (what, r) in [
            ("a move", other_move),
            ("colours", swapped),
            ("start", other_start),
            ("length", fewer),
        ] {
            assert_ne!(summary(&r).fingerprint(), print, "{what}");
        }
    }

    #[test]
    fn pgn_tags_carry_no_terminal_escapes_or_line_breaks() {
        let mut r = record();
        r.white.name = "evil\u{1b}[2J".into();
        r.detail = Some("line\nbreak\r".into());
        let pgn = r.to_pgn();
        assert!(!pgn.contains('\u{1b}') && !pgn.contains('\r'), "{pgn}");
        assert!(pgn.contains("[White \"evil\\\\x1b[2J\"]"), "{pgn}");
        assert!(
            pgn.contains("[TerminationDetails \"line break\\\\x0d\"]"),
            "{pgn}"
        );
    }

    #[test]
    fn pgn_has_the_tags_and_numbered_moves() {
        let pgn = record().to_pgn();
        for line in [
            "[Game \"LOA\"]",
            "[Variant \"double-connection=draw\"]",
            "[FEN \"1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\"]",
            "[Result \"0-1\"]",
            "[Termination \"time-forfeit\"]",
            "[Black \"v2 \\\"new\\\"\"]",
            "[Round \"8.2\"]",
            "[Site \"host-3\"]",
            "[Date \"2026.12.01\"]",
            "[Time \"01:43:31\"]",
            "[SetUp \"1\"]",
        ] {
            assert!(pgn.contains(line), "missing {line} in\n{pgn}");
        }
        assert!(pgn.starts_with("[Event \"tourney game\"]\n[Site "), "{pgn}");
        // LOA: Black moves first, in the second slot of move 1.
        assert!(pgn.contains("\n1... b1-b3 2. a2-c2 b3xc2 0-1"), "{pgn}");
        let mut white_starts = record();
        white_starts.start = white_starts.start.replace(" b", " w");
        assert!(
            white_starts
                .to_pgn()
                .contains("\n1. b1-b3 a2-c2 2. b3xc2 0-1")
        );
        assert_eq!(record().result.winner(), Some(Color::Black));
        assert!(Termination::Crash.is_failure() && !Termination::Connection.is_failure());
    }
}
