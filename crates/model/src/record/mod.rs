//! Complete game records, as JSON (serde) and as PGN-style text.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use tourney_rules::{Color, GameKind};

mod pgn;
mod summary;

pub use summary::{GameSummary, MoveCost, Notation, PlayerName, SummaryMeta, fingerprint};

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Selective depth, if an outside engine said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seldepth: Option<u32>,
    /// Nodes per second, if an outside engine said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nps: Option<u64>,
    /// The search time an outside engine reported (its last `info time`), in
    /// milliseconds: `time_ms` less this is the move's latency (the protocol, the process,
    /// the operating system).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ms: Option<u64>,
    /// The principal variation an outside engine reported last, from this move on; at
    /// most [`MAX_PV_MOVES`] moves of at most [`MAX_PV_MOVE_CHARS`] characters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pv: Vec<String>,
}

/// The most moves a recorded principal variation keeps.
pub const MAX_PV_MOVES: usize = 32;
/// The longest move text a recorded principal variation keeps, in characters.
pub const MAX_PV_MOVE_CHARS: usize = 16;

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
                    ..Default::default()
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
        assert!(
            pgn.contains("\n1... b1-b3 {book} 2. a2-c2 {book} b3xc2 {+0.05 0.012s} 0-1"),
            "{pgn}"
        );
        let mut white_starts = record();
        white_starts.start = white_starts.start.replace(" b", " w");
        white_starts.opening_plies = 0;
        let pgn = white_starts.to_pgn();
        assert!(
            pgn.contains(
                "\n1. b1-b3 {+0.05 0.012s} a2-c2 {+0.05 0.012s} 2. b3xc2 {+0.05 0.012s} 0-1"
            ),
            "{pgn}"
        );
        assert_eq!(record().result.winner(), Some(Color::Black));
        assert!(Termination::Crash.is_failure() && !Termination::Connection.is_failure());
    }

    #[test]
    fn move_comments_are_cutechess_score_depth_and_time() {
        let comment = |score: Option<&str>, depth: Option<u32>, time_ms: u64| {
            pgn::move_comment(&MoveRecord {
                mv: "a1-a2".into(),
                time_ms,
                depth,
                score: score.map(str::to_string),
                ..Default::default()
            })
        };
        assert_eq!(comment(Some("cp 35"), Some(12), 210), "+0.35/12 0.21s");
        assert_eq!(comment(Some("cp -1200"), Some(3), 1234), "-12.00/3 1.2s");
        assert_eq!(comment(Some("cp 0"), Some(1), 12_345), "0.00/1 12s");
        assert_eq!(comment(Some("win 9"), Some(20), 50), "+M5/20 0.050s");
        assert_eq!(comment(Some("loss 2"), Some(20), 0), "-M1/20 0s");
        // What the player did not say is left out.
        assert_eq!(comment(None, None, 7), "0.007s");
        assert_eq!(comment(None, Some(8), 7), "0.007s");
        assert_eq!(comment(Some("cp 5"), None, 990), "+0.05 0.99s");
        assert_eq!(comment(Some("mate 3"), Some(4), 100), "0.10s");
    }
}
