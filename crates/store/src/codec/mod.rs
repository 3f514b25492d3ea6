//! How pair records are stored: compact, and read back exactly.
//!
//! A game's JSON is mostly its moves (`{"move":"b1-d3","time_ms":12,"nodes":840}` about
//! 200 times), which general compression barely shrinks. Schema 3 stores each game's moves
//! as columns: the notations bit-packed (a shape code, then each square as an index on the
//! smallest board that holds them: 13 bits a LOA move, 21 an Amazons turn), the times and
//! the optional nodes, depths and scores as varints; the rest of the record stays JSON.
//! The whole is LZ4-compressed behind [`COLUMNAR_TAG`].
//!
//! A moves array that does not fit the columns exactly (a notation of another shape, a
//! field this version does not know) is kept as JSON, so that every record reads back as
//! it came in. The same pass computes the pair's [`PairDigest`]: what a restarted
//! coordinator needs of it, without its games.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tourney_model::Termination;
use tourney_model::adjudication::PlayedOn;
use tourney_model::tournament::PairOutcome;

mod bits;
mod moves;
#[cfg(test)]
mod tests;

use bits::{Reader, corrupt};
use moves::{AS_JSON, COLUMNS, pack_moves, unpack_moves, varint};

use crate::{PairRecord, StoreError};

/// First byte of a schema 2 pair record: its JSON, LZ4-compressed (a schema 1 record is
/// plain JSON and starts with `{`).
pub(crate) const LZ4_TAG: u8 = 1;
/// First byte of a schema 3 pair record: moves in columns, LZ4-compressed.
pub(crate) const COLUMNAR_TAG: u8 = 2;

/// What a pair record's JSON usually says, given to LZ4 as its dictionary: the keys and
/// common values cost a few bytes each instead of their length. Part of the format of
/// [`COLUMNAR_TAG`] records: never to be changed (a new dictionary needs a new tag).
const DICTIONARY: &[u8] = b"{\"tournament\":1,\"outcome\":{\"pair\":0,\"first\":0,\"second\":1,\
\"half_points\":[1,1],\"white\":[0,1]},\"worker\":\"\",\"token\":\"\",\"games\":[\
{\"black\":{\"name\":\"\",\"spec\":\"ab:depth=\",\"artifact\":\"\",\"stderr\":[]},\"detail\":\"\",\
\"game\":\"amazons\",\"meta\":{},\"opening_plies\":0,\"result\":\"1/2-1/2\",\"rules\":\"\",\
\"start\":\"3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w\",\"started_ms\":17,\"termination\":\"no-moves\",\
\"time_control\":\"movetime=\",\"white\":{\"name\":\"\",\"spec\":\"mcts:\"}},\
{\"black\":{\"name\":\"\",\"spec\":\"cmd:\"},\"game\":\"loa\",\"opening_plies\":0,\"result\":\"1-0\",\
\"rules\":\"\",\"start\":\"1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\",\"started_ms\":17,\
\"termination\":\"connection\",\"time_control\":\"nodes=\",\"white\":{\"name\":\"\",\"spec\":\"random:seed=\"}}]}\
\"result\":\"0-1\",\"termination\":\"time-forfeit\",\"termination\":\"repetition\",\"termination\":\"max-plies\",\
\"termination\":\"illegal-move\",\"termination\":\"crash\",\"termination\":\"unresponsive\",\"time_control\":\"inf\"";

/// Where a digest's termination byte keeps the game's [`PlayedOn`].
const PLAYED_ON_SHIFT: u8 = 6;

/// What a restarted coordinator keeps of a pair: its outcome, who played it, and how
/// each game ended with its fingerprint ([`tourney_model::fingerprint`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairDigest {
    /// What it contributes to the standings.
    pub outcome: PairOutcome,
    /// The worker that played it.
    pub worker: String,
    /// Each game's termination, fingerprint, and how it ended when played on past its
    /// adjudication, in order (none when the games are not game records: only their JSON
    /// syntax is checked when they come in).
    pub games: Vec<(Termination, u128, PlayedOn)>,
}

impl PairDigest {
    /// The binary form kept in the `digests` tree.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.worker.len() + 17 * self.games.len());
        let o = &self.outcome;
        for v in [o.pair, o.first as u64, o.second as u64] {
            varint(&mut out, v);
        }
        out.extend_from_slice(&o.half_points);
        for w in o.white {
            // Unknown colours (records older than colours) as 0, others shifted by one.
            varint(&mut out, if w == usize::MAX { 0 } else { w as u64 + 1 });
        }
        varint(&mut out, self.worker.len() as u64);
        out.extend_from_slice(self.worker.as_bytes());
        varint(&mut out, self.games.len() as u64);
        for (termination, print, played_on) in &self.games {
            // The check in the top bits: a digest written before it reads as not played on.
            out.push(*termination as u8 | (*played_on as u8) << PLAYED_ON_SHIFT);
            out.extend_from_slice(&print.to_le_bytes());
        }
        out
    }

    /// Reads what [`PairDigest::encode`] wrote.
    pub(crate) fn decode(bytes: &[u8]) -> Result<PairDigest, StoreError> {
        let mut r = Reader { bytes, at: 0 };
        let pair = r.varint()?;
        let first = r.varint()? as usize;
        let second = r.varint()? as usize;
        let half_points = [r.byte()?, r.byte()?];
        let mut white = [0usize; 2];
        for w in &mut white {
            *w = match r.varint()? {
                0 => usize::MAX,
                n => n as usize - 1,
            };
        }
        let len = r.varint()? as usize;
        let worker = String::from_utf8(r.take(len)?.to_vec())
            .map_err(|_| corrupt("a digest's worker is not UTF-8"))?;
        let n = r.varint()? as usize;
        let mut games = Vec::with_capacity(n.min(2));
        for _ in 0..n {
            let byte = r.byte()?;
            let termination = *Termination::ALL
                .get(usize::from(byte & ((1 << PLAYED_ON_SHIFT) - 1)))
                .ok_or_else(|| corrupt("a digest's termination"))?;
            let played_on = *[PlayedOn::No, PlayedOn::Agreed, PlayedOn::Overturned]
                .get(usize::from(byte >> PLAYED_ON_SHIFT))
                .ok_or_else(|| corrupt("a digest's adjudication check"))?;
            let print = u128::from_le_bytes(
                r.take(16)?
                    .try_into()
                    .map_err(|_| corrupt("a digest's fingerprint"))?,
            );
            games.push((termination, print, played_on));
        }
        Ok(PairDigest {
            outcome: PairOutcome {
                pair,
                first,
                second,
                half_points,
                white,
            },
            worker,
            games,
        })
    }
}

/// The record's fields but its games, as stored in front of the columns.
#[derive(Serialize, Deserialize)]
struct Head {
    tournament: u64,
    outcome: PairOutcome,
    worker: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    token: String,
    /// Each game's JSON object, without its moves when they are in columns.
    games: Vec<Map<String, Value>>,
}

/// Encodes a pair record (schema 3) and computes its digest.
///
/// # Errors
/// Its games are not a JSON array of objects.
pub(crate) fn encode(record: &PairRecord) -> Result<(Vec<u8>, PairDigest), StoreError> {
    let games: Vec<Map<String, Value>> = serde_json::from_str(record.games.get())?;
    let mut head = Head {
        tournament: record.tournament,
        outcome: record.outcome,
        worker: record.worker.clone(),
        token: record.token.clone(),
        games,
    };
    let mut columns = Vec::new();
    let mut digests = Vec::with_capacity(head.games.len());
    for game in &mut head.games {
        let text = |key: &str| game.get(key).and_then(Value::as_str).unwrap_or_default();
        let name = |side: &str| {
            game.get(side)
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let moves = game.get("moves").and_then(Value::as_array);
        let notations = moves
            .into_iter()
            .flatten()
            .map(|m| m.get("move").and_then(Value::as_str).unwrap_or_default());
        let print =
            tourney_model::fingerprint(name("white"), name("black"), text("start"), notations);
        let termination = game
            .get("termination")
            .cloned()
            .and_then(|t| serde_json::from_value::<Termination>(t).ok());
        let read = |v: Option<&Value>| v.cloned().and_then(|r| serde_json::from_value(r).ok());
        let played_on = match (termination, read(game.get("result"))) {
            (Some(Termination::Adjudication), Some(result)) => PlayedOn::of(
                result,
                read(game.get("meta").and_then(|m| m.get("played_on"))),
            ),
            _ => PlayedOn::No,
        };
        digests.push(termination.map(|t| (t, print, played_on)));
        match moves.and_then(|m| pack_moves(m)) {
            Some(packed) => {
                game.remove("moves");
                columns.push(COLUMNS);
                columns.extend_from_slice(&packed);
            }
            None => columns.push(AS_JSON),
        }
    }
    let json = serde_json::to_vec(&head)?;
    let mut payload = Vec::with_capacity(json.len() + columns.len() + 8);
    varint(&mut payload, json.len() as u64);
    payload.extend_from_slice(&json);
    payload.extend_from_slice(&columns);
    let mut value = Vec::with_capacity(payload.len() / 2 + 8);
    value.push(COLUMNAR_TAG);
    value.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(
        &payload, DICTIONARY,
    ));
    let digest = PairDigest {
        outcome: record.outcome,
        worker: record.worker.clone(),
        // Games that are not game records (only their JSON syntax was checked) are not
        // counted: neither of the pair's.
        games: digests
            .into_iter()
            .collect::<Option<_>>()
            .unwrap_or_default(),
    };
    Ok((value, digest))
}

/// A stored game as JSON: its fields, and its moves array apart as JSON text (so that an
/// export writes the moves without parsing them).
#[derive(Debug, Clone, PartialEq)]
pub struct GameJson {
    /// The game object's fields but `moves`.
    pub fields: Map<String, Value>,
    /// The `moves` array as JSON, if the game has one.
    pub moves: Option<String>,
}

impl GameJson {
    /// The game as one JSON object (its moves last).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let object = serde_json::to_string(&self.fields)?;
        let Some(moves) = &self.moves else {
            return Ok(object);
        };
        let mut out = String::with_capacity(object.len() + moves.len() + 10);
        // The object without its closing brace, then the moves.
        out.push_str(&object[..object.len() - 1]);
        out.push_str(if self.fields.is_empty() {
            "\"moves\":"
        } else {
            ",\"moves\":"
        });
        out.push_str(moves);
        out.push('}');
        Ok(out)
    }

    /// A game from its JSON object (the moves taken out and written again).
    fn of(mut fields: Map<String, Value>) -> Result<GameJson, serde_json::Error> {
        let moves = fields
            .remove("moves")
            .map(|m| serde_json::to_string(&m))
            .transpose()?;
        Ok(GameJson { fields, moves })
    }
}

/// A stored pair read back with its games as [`GameJson`].
#[derive(Debug, Clone)]
pub struct PairGames {
    /// The tournament.
    pub tournament: u64,
    /// What it contributes to the standings.
    pub outcome: PairOutcome,
    /// The worker that played it.
    pub worker: String,
    /// The name of the worker token that delivered it.
    pub token: String,
    /// Its games, in order.
    pub games: Vec<GameJson>,
}

/// A stored pair record of any schema, decoded.
pub(crate) fn decode(value: &[u8]) -> Result<PairRecord, StoreError> {
    if value.first() != Some(&COLUMNAR_TAG) {
        return Ok(match value.split_first() {
            Some((&LZ4_TAG, compressed)) => serde_json::from_slice(&decompress(compressed)?)?,
            _ => serde_json::from_slice(value)?,
        });
    }
    let pair = decode_games(value)?;
    let mut games = String::with_capacity(4096);
    games.push('[');
    for (i, game) in pair.games.iter().enumerate() {
        if i > 0 {
            games.push(',');
        }
        games.push_str(&game.to_json()?);
    }
    games.push(']');
    Ok(PairRecord {
        tournament: pair.tournament,
        outcome: pair.outcome,
        games: serde_json::value::RawValue::from_string(games)?,
        worker: pair.worker,
        token: pair.token,
    })
}

/// A stored pair record of any schema, its games as [`GameJson`].
pub(crate) fn decode_games(value: &[u8]) -> Result<PairGames, StoreError> {
    let Some((&COLUMNAR_TAG, compressed)) = value.split_first() else {
        let record = decode(value)?;
        let games: Vec<Map<String, Value>> = serde_json::from_str(record.games.get())?;
        return Ok(PairGames {
            tournament: record.tournament,
            outcome: record.outcome,
            worker: record.worker,
            token: record.token,
            games: games
                .into_iter()
                .map(GameJson::of)
                .collect::<Result<_, _>>()?,
        });
    };
    let payload = lz4_flex::block::decompress_size_prepended_with_dict(compressed, DICTIONARY)
        .map_err(|e| StoreError::Compression(e.to_string()))?;
    let mut r = Reader {
        bytes: &payload,
        at: 0,
    };
    let len = r.varint()? as usize;
    let head: Head = serde_json::from_slice(r.take(len)?)?;
    let mut games = Vec::with_capacity(head.games.len());
    for fields in head.games {
        games.push(match r.byte()? {
            COLUMNS => {
                let mut moves = String::with_capacity(payload.len() * 8);
                unpack_moves(&mut r, &mut moves)?;
                GameJson {
                    fields,
                    moves: Some(moves),
                }
            }
            AS_JSON => GameJson::of(fields)?,
            _ => return Err(corrupt("a game's moves")),
        });
    }
    Ok(PairGames {
        tournament: head.tournament,
        outcome: head.outcome,
        worker: head.worker,
        token: head.token,
        games,
    })
}

fn decompress(compressed: &[u8]) -> Result<Vec<u8>, StoreError> {
    lz4_flex::decompress_size_prepended(compressed)
        .map_err(|e| StoreError::Compression(e.to_string()))
}
