//! A game's moves in bit-packed columns: each move in its notation's shape (squares as
//! indices, captures and passes as flags), with its time, nodes, depth and score as
//! variable-length numbers; anything that does not fit stays JSON.

use serde_json::Value;

use super::bits::{BitReader, BitWriter, Reader, corrupt};
use crate::StoreError;

/// A game's moves array in columns (`None`: kept as JSON).
pub(super) const COLUMNS: u8 = 1;

pub(super) const AS_JSON: u8 = 0;

/// Notation shapes: `a1-b2`, `a1xb2`, `a1-b2/c3`, `a1xb2/c3`, `pass`.
pub(super) const SHAPES: [&[u8]; 5] = [b"-", b"x", b"-/", b"x/", b""];

pub(super) const PASS: usize = 4;

/// The highest rank a packed square may have (files are `a`..=`z`).
pub(super) const MAX_RANK: u32 = 26;

/// A notation's shape, its squares (file, rank from 0) and how many of them there are.
pub(super) type Notation = (usize, [(u32, u32); 3], usize);

/// A move's notation split into its shape and squares.
pub(super) fn parse_notation(text: &str) -> Option<Notation> {
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
pub(super) fn bits_for(n: u32) -> u32 {
    if n <= 1 {
        0
    } else {
        32 - (n - 1).leading_zeros()
    }
}

/// Which optional per-move fields a moves array has.
pub(super) const NODES: usize = 0;

pub(super) const DEPTH: usize = 1;

pub(super) const SCORE: usize = 2;

/// The columns of a moves array, or `None` when it does not fit them exactly.
pub(super) fn pack_moves(moves: &[Value]) -> Option<Vec<u8>> {
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
pub(super) fn unpack_moves(r: &mut Reader<'_>, out: &mut String) -> Result<(), StoreError> {
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
pub(super) fn push_number(out: &mut String, mut n: u64) {
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

pub(super) fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}
