//! Complete game records, as JSON (serde) and as PGN-style text.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
    /// The last lines the engine wrote to stderr, kept on failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stderr: Vec<String>,
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

/// A complete game: setup, players, moves with their times, result and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// `loa` or `amazons`.
    pub game: String,
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
    pub result: String,
    /// Why the game ended.
    pub termination: Termination,
    /// Details of the ending, e.g. the illegal move sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Reproducibility and bookkeeping: seeds, opening and pair index, worker, version.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub meta: BTreeMap<String, String>,
}

/// What the coordinator's metrics and dashboard need of a [`GameRecord`], read from its
/// JSON without keeping the rest: the moves' notation, scores and the setup are skipped
/// rather than allocated.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct GameSummary {
    /// `loa` or `amazons`.
    pub game: String,
    /// The white player.
    pub white: PlayerName,
    /// The black player.
    pub black: PlayerName,
    /// Each move's time and nodes.
    pub moves: Vec<MoveCost>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// Why the game ended.
    pub termination: Termination,
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
}

impl GameSummary {
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
}

/// The PGN-style name of a game: `LOA` or `Amazons`.
fn game_title(game: &str) -> &str {
    match game {
        "loa" => "LOA",
        "amazons" => "Amazons",
        other => other,
    }
}

fn tag(out: &mut String, name: &str, value: &str) {
    let _ = writeln!(
        out,
        "[{name} \"{}\"]",
        value.replace('\\', "\\\\").replace('"', "\\\"")
    );
}

impl GameRecord {
    /// The record as PGN-style text: tags (`Game`, `Variant`, `FEN`, `White`, `Black`,
    /// `Result`, `Termination`, ...), then the numbered moves and the result.
    pub fn to_pgn(&self) -> String {
        let mut out = String::new();
        tag(
            &mut out,
            "Event",
            self.meta
                .get("tournament")
                .map_or("tourney game", String::as_str),
        );
        if let Some(round) = self.meta.get("pair") {
            tag(&mut out, "Round", round);
        }
        tag(&mut out, "Game", game_title(&self.game));
        if !self.rules.is_empty() {
            tag(&mut out, "Variant", &self.rules);
        }
        tag(&mut out, "FEN", &self.start);
        tag(&mut out, "White", &self.white.name);
        tag(&mut out, "Black", &self.black.name);
        tag(&mut out, "Result", &self.result);
        tag(&mut out, "Termination", self.termination.name());
        if let Some(detail) = &self.detail {
            tag(&mut out, "TerminationDetails", detail);
        }
        tag(&mut out, "TimeControl", &self.time_control);
        tag(&mut out, "PlyCount", &self.moves.len().to_string());
        out.push('\n');
        let mut line = String::new();
        for (i, m) in self.moves.iter().enumerate() {
            let token = if i % 2 == 0 {
                format!("{}. {}", i / 2 + 1, m.mv)
            } else {
                m.mv.clone()
            };
            if line.len() + token.len() + 1 > 80 {
                out.push_str(line.trim_end());
                out.push('\n');
                line.clear();
            }
            line.push_str(&token);
            line.push(' ');
        }
        line.push_str(&self.result);
        out.push_str(&line);
        out.push_str("\n\n");
        out
    }

    /// The winner's colour name (`white`, `black`) or `None` for a draw.
    pub fn winner(&self) -> Option<&'static str> {
        match self.result.as_str() {
            "1-0" => Some("white"),
            "0-1" => Some("black"),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> GameRecord {
        GameRecord {
            game: "loa".into(),
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
            result: "0-1".into(),
            termination: Termination::TimeForfeit,
            detail: Some("white used 61.2 s".into()),
            meta: BTreeMap::from([("pair".into(), "7".into())]),
        }
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
        assert_eq!((s.game.as_str(), s.result.as_str()), ("loa", "0-1"));
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
    fn pgn_has_the_tags_and_numbered_moves() {
        let pgn = record().to_pgn();
        for line in [
            "[Game \"LOA\"]",
            "[Variant \"double-connection=draw\"]",
            "[FEN \"1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\"]",
            "[Result \"0-1\"]",
            "[Termination \"time-forfeit\"]",
            "[Black \"v2 \\\"new\\\"\"]",
            "[Round \"7\"]",
        ] {
            assert!(pgn.contains(line), "missing {line} in\n{pgn}");
        }
        assert!(pgn.contains("1. b1-b3 a2-c2 2. b3xc2 0-1"), "{pgn}");
        assert_eq!(record().winner(), Some("black"));
        assert!(Termination::Crash.is_failure() && !Termination::Connection.is_failure());
    }
}
