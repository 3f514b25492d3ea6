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

/// A game's moves array in columns (`None`: kept as JSON).
const COLUMNS: u8 = 1;
const AS_JSON: u8 = 0;

/// Notation shapes: `a1-b2`, `a1xb2`, `a1-b2/c3`, `a1xb2/c3`, `pass`.
const SHAPES: [&[u8]; 5] = [b"-", b"x", b"-/", b"x/", b""];
const PASS: usize = 4;
/// The highest rank a packed square may have (files are `a`..=`z`).
const MAX_RANK: u32 = 26;

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

fn corrupt(what: &str) -> StoreError {
    StoreError::Compression(format!("{what} is corrupt"))
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

/// A notation's shape, its squares (file, rank from 0) and how many of them there are.
type Notation = (usize, [(u32, u32); 3], usize);

/// A move's notation split into its shape and squares.
fn parse_notation(text: &str) -> Option<Notation> {
    if text == "pass" {
        return Some((PASS, [(0, 0); 3], 0));
    }
    let bytes = text.as_bytes();
    let mut squares = [(0, 0); 3];
    let mut separators = [0u8; 2];
    let (mut n, mut at) = (0, 0);
    loop {
        let file = *bytes.get(at)?;
        if !file.is_ascii_lowercase() {
            return None;
        }
        at += 1;
        let digits = bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        // No leading zero, so the text is the only one for its square.
        if digits == 0 || digits > 2 || bytes[at] == b'0' {
            return None;
        }
        let rank: u32 = text[at..at + digits].parse().ok()?;
        if rank > MAX_RANK {
            return None;
        }
        at += digits;
        squares[n] = (u32::from(file - b'a'), rank - 1);
        n += 1;
        if at == bytes.len() {
            break;
        }
        if n == 3 {
            return None;
        }
        separators[n - 1] = bytes[at];
        at += 1;
    }
    let shape = SHAPES.iter().position(|s| *s == &separators[..n - 1])?;
    // `a1-b2` has two squares, `a1-b2/c3` three: the shape says how many.
    (n == SHAPES[shape].len() + 1).then_some((shape, squares, n))
}

/// Bits to tell `n` values apart.
fn bits_for(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// Which optional per-move fields a moves array has.
const NODES: usize = 0;
const DEPTH: usize = 1;
const SCORE: usize = 2;

/// The columns of a moves array, or `None` when it does not fit them exactly.
fn pack_moves(moves: &[Value]) -> Option<Vec<u8>> {
    let mut parsed = Vec::with_capacity(moves.len());
    let (mut width, mut height, mut shapes) = (1u32, 1u32, 0u8);
    let mut times = Vec::with_capacity(moves.len());
    let mut optional: [Vec<Option<&Value>>; 3] = Default::default();
    for m in moves {
        let object = m.as_object()?;
        let mut known = 2;
        let (shape, squares, n) = parse_notation(object.get("move")?.as_str()?)?;
        for &(file, rank) in &squares[..n] {
            width = width.max(file + 1);
            height = height.max(rank + 1);
        }
        shapes |= 1 << shape;
        parsed.push((shape, squares, n));
        times.push(object.get("time_ms")?.as_u64()?);
        for (column, key) in ["nodes", "depth", "score"].into_iter().enumerate() {
            let value = object.get(key);
            match (column, value) {
                (_, None) => {}
                (SCORE, Some(Value::String(_))) => known += 1,
                (NODES | DEPTH, Some(v)) if v.is_u64() => known += 1,
                _ => return None,
            }
            optional[column].push(value);
        }
        if object.len() != known {
            return None;
        }
    }
    let mut out = Vec::with_capacity(moves.len() * 4 + 16);
    varint(&mut out, moves.len() as u64);
    out.extend_from_slice(&[width as u8, height as u8, shapes]);
    let codes: Vec<usize> = (0..SHAPES.len())
        .filter(|s| shapes & (1 << s) != 0)
        .collect();
    let shape_bits = bits_for(codes.len() as u32);
    let square_bits = bits_for(width * height);
    let mut bits = BitWriter::default();
    for (shape, squares, n) in &parsed {
        let code = codes.iter().position(|s| s == shape).unwrap_or_default();
        bits.put(code as u64, shape_bits);
        for &(file, rank) in &squares[..*n] {
            bits.put(u64::from(rank * width + file), square_bits);
        }
    }
    let packed = bits.finish();
    varint(&mut out, packed.len() as u64);
    out.extend_from_slice(&packed);
    for t in times {
        varint(&mut out, t);
    }
    for (column, values) in optional.iter().enumerate() {
        let present: Vec<bool> = values.iter().map(Option::is_some).collect();
        match (present.iter().all(|&p| p), present.iter().any(|&p| p)) {
            (_, false) => {
                out.push(0);
                continue;
            }
            (true, _) => out.push(1),
            (false, true) => {
                out.push(2);
                let mut map = BitWriter::default();
                for p in &present {
                    map.put(u64::from(*p), 1);
                }
                out.extend_from_slice(&map.finish());
            }
        }
        for v in values.iter().flatten() {
            if column == SCORE {
                let s = v.as_str().unwrap_or_default();
                varint(&mut out, s.len() as u64);
                out.extend_from_slice(s.as_bytes());
            } else {
                varint(&mut out, v.as_u64().unwrap_or_default());
            }
        }
    }
    Some(out)
}

/// Writes the JSON array of the moves packed at `r`, as [`tourney_model::MoveRecord`]
/// writes them.
fn unpack_moves(r: &mut Reader<'_>, out: &mut String) -> Result<(), StoreError> {
    let n = r.varint()? as usize;
    let (width, height, shapes) = (u32::from(r.byte()?), u32::from(r.byte()?), r.byte()?);
    if width == 0 || height == 0 || n > r.bytes.len() * 8 {
        return Err(corrupt("a moves column"));
    }
    let codes: Vec<usize> = (0..SHAPES.len())
        .filter(|s| shapes & (1 << s) != 0)
        .collect();
    let shape_bits = bits_for(codes.len() as u32);
    let square_bits = bits_for(width * height);
    let len = r.varint()? as usize;
    let mut bits = BitReader::new(r.take(len)?);
    let mut notations = Vec::with_capacity(n);
    for _ in 0..n {
        let shape = *codes
            .get(bits.get(shape_bits)? as usize)
            .ok_or_else(|| corrupt("a move's shape"))?;
        let mut squares = [0u32; 3];
        let count = if shape == PASS {
            0
        } else {
            SHAPES[shape].len() + 1
        };
        for square in &mut squares[..count] {
            *square = bits.get(square_bits)? as u32;
            if *square / width >= height {
                return Err(corrupt("a move's square"));
            }
        }
        notations.push((shape, squares, count));
    }
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        times.push(r.varint()?);
    }
    let mut numbers: [Vec<Option<u64>>; 2] = Default::default();
    let mut scores: Vec<Option<&str>> = Vec::new();
    for column in [NODES, DEPTH, SCORE] {
        let present: Vec<bool> = match r.byte()? {
            0 => vec![false; n],
            1 => vec![true; n],
            2 => {
                let mut map = BitReader::new(r.take(n.div_ceil(8))?);
                (0..n)
                    .map(|_| map.get(1).map(|b| b == 1))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(corrupt("a moves column")),
        };
        for p in present {
            match (p, column) {
                (false, SCORE) => scores.push(None),
                (false, _) => numbers[column].push(None),
                (true, SCORE) => {
                    let len = r.varint()? as usize;
                    let s =
                        std::str::from_utf8(r.take(len)?).map_err(|_| corrupt("a move's score"))?;
                    scores.push(Some(s));
                }
                (true, _) => numbers[column].push(Some(r.varint()?)),
            }
        }
    }
    out.push('[');
    for (i, &(shape, squares, count)) in notations.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"move\":\"");
        if shape == PASS {
            out.push_str("pass");
        }
        for (k, square) in squares[..count].iter().enumerate() {
            if k > 0 {
                out.push(char::from(SHAPES[shape][k - 1]));
            }
            out.push(char::from(b'a' + (square % width) as u8));
            push_number(out, u64::from(square / width + 1));
        }
        out.push_str("\",\"time_ms\":");
        push_number(out, times[i]);
        for (key, column) in [(",\"nodes\":", NODES), (",\"depth\":", DEPTH)] {
            if let Some(v) = numbers[column][i] {
                out.push_str(key);
                push_number(out, v);
            }
        }
        if let Some(score) = scores[i] {
            out.push_str(",\"score\":");
            out.push_str(&serde_json::to_string(score)?);
        }
        out.push('}');
    }
    out.push(']');
    Ok(())
}

/// Writes a number's decimal digits.
fn push_number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads bytes and varints, every read bounded by what is there.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Result<u8, StoreError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| corrupt("a record"))?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| corrupt("a record"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn varint(&mut self) -> Result<u64, StoreError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(corrupt("a number"))
    }
}

/// Packs values of a few bits each, low bits first.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    fn put(&mut self, value: u64, bits: u32) {
        self.acc |= value << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Reads what a [`BitWriter`] packed.
struct BitReader<'a> {
    bytes: &'a [u8],
    at: usize,
    acc: u64,
    n: u32,
}

impl<'a> BitReader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        BitReader {
            bytes,
            at: 0,
            acc: 0,
            n: 0,
        }
    }

    fn get(&mut self, bits: u32) -> Result<u64, StoreError> {
        while self.n < bits {
            let b = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| corrupt("a moves column"))?;
            self.acc |= u64::from(b) << self.n;
            self.at += 1;
            self.n += 8;
        }
        let v = self.acc & ((1u64 << bits) - 1);
        self.acc >>= bits;
        self.n -= bits;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(games: Value) -> PairRecord {
        PairRecord {
            tournament: 7,
            outcome: PairOutcome {
                pair: 3,
                first: 0,
                second: 1,
                half_points: [2, 1],
                white: [1, 0],
            },
            games: serde_json::value::to_raw_value(&games).unwrap(),
            worker: "box-1#2".into(),
            token: "lab".into(),
        }
    }

    fn game(moves: Value) -> Value {
        json!({
            "game": "loa", "rules": "", "start": "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
            "opening_plies": 0, "time_control": "movetime=100",
            "white": {"name": "a", "spec": "ab"}, "black": {"name": "b", "spec": "mcts"},
            "moves": moves, "result": "1-0", "termination": "connection", "started_ms": 17
        })
    }

    /// Encodes and decodes `record`; asserts that its games read back equal, and returns
    /// the stored bytes.
    fn round_trip(record: &PairRecord) -> Vec<u8> {
        let (bytes, digest) = encode(record).unwrap();
        let back = decode(&bytes).unwrap();
        let value = |r: &PairRecord| serde_json::from_str::<Value>(r.games.get()).unwrap();
        assert_eq!(value(&back), value(record));
        assert_eq!(
            (back.tournament, back.outcome, &back.worker, &back.token),
            (
                record.tournament,
                record.outcome,
                &record.worker,
                &record.token
            )
        );
        assert_eq!(PairDigest::decode(&digest.encode()).unwrap(), digest);
        bytes
    }

    #[test]
    fn every_notation_shape_and_optional_field_reads_back_exactly() {
        let moves = json!([
            {"move": "b1-b3", "time_ms": 12, "nodes": 840, "depth": 3, "score": "cp 35"},
            {"move": "h2xf4", "time_ms": 0},
            {"move": "pass", "time_ms": 1, "nodes": 0},
            {"move": "d1-d7/g7", "time_ms": 300000, "score": "win 7"},
            {"move": "j10xa1/j1", "time_ms": 5, "depth": 40},
            {"move": "z26-a1", "time_ms": u64::MAX, "nodes": u64::MAX},
        ]);
        let r = record(json!([game(moves.clone()), game(json!([]))]));
        let bytes = round_trip(&r);
        assert_eq!(bytes[0], COLUMNAR_TAG);
        // Records written by the referee (keys in MoveRecord's order) come back byte for
        // byte.
        let games: Vec<Map<String, Value>> =
            serde_json::from_str(decode(&bytes).unwrap().games.get()).unwrap();
        assert_eq!(
            serde_json::to_string(&games[0]["moves"]).unwrap(),
            serde_json::to_string(&moves).unwrap()
        );
    }

    #[test]
    fn moves_that_do_not_fit_the_columns_are_kept_as_json() {
        for odd in [
            json!([{"move": "e7-e8=Q", "time_ms": 1}]),
            json!([{"move": "a01-a2", "time_ms": 1}]),
            json!([{"move": "a27-a2", "time_ms": 1}]),
            json!([{"move": "a1-", "time_ms": 1}]),
            json!([{"move": "a1-b2-c3", "time_ms": 1}]),
            json!([{"move": "a1/b2", "time_ms": 1}]),
            json!([{"move": "b1-b3", "time_ms": 1, "nodes": null}]),
            json!([{"move": "b1-b3", "time_ms": -1}]),
            json!([{"move": "b1-b3", "time_ms": 1, "comment": "new field"}]),
            json!([{"move": "b1-b3"}]),
            json!(["b1-b3"]),
            json!("not an array"),
        ] {
            let r = record(json!([game(odd.clone()), {"moves": []}, {}]));
            round_trip(&r);
        }
    }

    #[test]
    fn a_long_loa_game_takes_a_few_hundred_bytes() {
        // 214 plies over the whole board, as random players play them.
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let moves: Vec<Value> = (0..214)
            .map(|_| {
                let sq = |f: u64, r: u64| format!("{}{}", char::from(b'a' + f as u8), r + 1);
                let sep = if next(3) == 0 { "x" } else { "-" };
                json!({"move": format!("{}{sep}{}", sq(next(8), next(8)), sq(next(8), next(8))),
                       "time_ms": next(3), "nodes": 1})
            })
            .collect();
        let r = record(json!([game(json!(moves.clone())), game(json!(moves))]));
        let json_len = r.games.get().len();
        let bytes = round_trip(&r);
        assert!(
            bytes.len() < 2 * 600,
            "{} bytes for two games ({json_len} bytes of JSON)",
            bytes.len()
        );
    }

    #[test]
    fn a_damaged_record_is_an_error_never_a_panic() {
        let moves = json!([{"move": "b1-b3", "time_ms": 12, "score": "cp 1"},
                           {"move": "d1-d7/g7", "time_ms": 3, "nodes": 9}]);
        let r = record(json!([game(moves)]));
        let (bytes, digest) = encode(&r).unwrap();
        let payload =
            lz4_flex::block::decompress_size_prepended_with_dict(&bytes[1..], DICTIONARY).unwrap();
        let pack = |payload: &[u8]| {
            let mut damaged = vec![COLUMNAR_TAG];
            damaged.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(
                payload, DICTIONARY,
            ));
            damaged
        };
        assert!(decode(&pack(&payload)).is_ok());
        for cut in 0..payload.len() {
            let damaged = pack(&payload[..cut]);
            assert!(decode(&damaged).is_err(), "cut at {cut}");
        }
        for flip in 0..payload.len() {
            let mut changed = payload.clone();
            changed[flip] ^= 0xa5;
            let _ = decode(&pack(&changed));
        }
        let d = digest.encode();
        for cut in 0..d.len() {
            assert!(
                PairDigest::decode(&d[..cut]).is_err(),
                "digest cut at {cut}"
            );
        }
    }

    #[test]
    fn a_digest_has_the_outcome_the_worker_and_each_games_ending_and_fingerprint() {
        let moves = json!([{"move": "b1-b3", "time_ms": 12}]);
        let mut lost = game(moves.clone());
        lost["termination"] = json!("time-forfeit");
        let r = record(json!([game(moves.clone()), lost]));
        let (_, digest) = encode(&r).unwrap();
        let print = tourney_model::fingerprint(
            "a",
            "b",
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
            ["b1-b3"].into_iter(),
        );
        assert_eq!(
            digest.games,
            [
                (Termination::Connection, print, PlayedOn::No),
                (Termination::TimeForfeit, print, PlayedOn::No)
            ]
        );
        // An adjudicated game played on keeps how it ended against the adjudication.
        let mut judged = game(moves.clone());
        judged["termination"] = json!("adjudication");
        judged["result"] = json!("1-0");
        judged["meta"] = json!({"played_on": "1/2-1/2"});
        let mut agreed = judged.clone();
        agreed["meta"] = json!({"played_on": "1-0"});
        let (_, judged) = encode(&record(json!([judged, agreed]))).unwrap();
        let checks: Vec<PlayedOn> = judged.games.iter().map(|g| g.2).collect();
        assert_eq!(checks, [PlayedOn::Overturned, PlayedOn::Agreed]);
        assert_eq!(PairDigest::decode(&judged.encode()).unwrap(), judged);
        assert_eq!(
            (digest.outcome, digest.worker.as_str()),
            (r.outcome, "box-1#2")
        );
        let mut old = digest.clone();
        old.outcome.white = PairOutcome::COLOURS_UNKNOWN;
        assert_eq!(PairDigest::decode(&old.encode()).unwrap(), old);
    }
}
