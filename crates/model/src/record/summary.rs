//! What a record says in brief (players, result, ending, start, moves in their
//! notation, costs) and the fingerprint that makes a game that game.

use serde::Deserialize;
use tourney_rules::GameKind;

use super::{GameRecord, GameResult, MetaValue, Termination};

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
