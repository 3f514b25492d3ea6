//! A game record as PGN-style text: the seven-tag roster, then this project's tags and
//! the movetext.

use std::fmt::Write as _;

use tourney_rules::GameKind;

use super::{GameRecord, MetaValue};

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
    /// `Site` is the worker that played the game (`?` when unknown). Each move has a
    /// comment as cutechess writes them, `{+0.35/12 0.21s}` (score from the mover's view,
    /// depth, time), and `{book}` for the opening's moves.
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
        let (mut line, mut token) = (String::new(), String::new());
        for (i, m) in self.moves.iter().enumerate() {
            let slot = i + usize::from(black_starts);
            token.clear();
            let _ = match (slot % 2, i) {
                (0, _) => write!(token, "{}. ", slot / 2 + 1),
                (_, 0) => write!(token, "{}... ", slot / 2 + 1),
                _ => Ok(()),
            };
            token.push_str(&crate::printable(&m.mv));
            token.push_str(" {");
            if i < self.opening_plies as usize {
                token.push_str("book");
            } else {
                write_comment(&mut token, m);
            }
            token.push('}');
            if !line.is_empty() && line.len() + token.len() + 1 > 80 {
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

/// A move's comment as cutechess writes it: `+0.35/12 0.21s`, the score in units (the
/// record's centi-units / 100, from the mover's view, `+` when above 0) or `+M5`/`-M5`
/// (a forced win or loss in that many moves of the mover's, from `win`/`loss` plies), `/`
/// and the depth, then the time in seconds (3 decimals under 0.1 s, 2 under 1 s, 1 under
/// 10 s, none above; `0s` for none). What the player did not report is left out: without
/// a score the comment is the time alone (`0.21s`, a depth without a score left out too),
/// and a score without a depth is `+0.35 0.21s`. Written at the end of `out`.
fn write_comment(out: &mut String, m: &super::MoveRecord) {
    if let Some((kind, n)) = m.score.as_deref().and_then(score_of) {
        // Plies to the end, as moves of the mover's: a win in 1 or 2 plies is M1.
        let moves = (n.max(0) + 1) / 2;
        let _ = match kind {
            Kind::Cp if n > 0 => write!(out, "+{:.2}", n as f64 / 100.0),
            Kind::Cp => write!(out, "{:.2}", n as f64 / 100.0),
            Kind::Win => write!(out, "+M{moves}"),
            Kind::Loss => write!(out, "-M{moves}"),
        };
        if let Some(depth) = m.depth {
            let _ = write!(out, "/{depth}");
        }
        out.push(' ');
    }
    let t = m.time_ms;
    let precision = match t {
        0 => {
            out.push_str("0s");
            return;
        }
        1..100 => 3,
        100..1000 => 2,
        1000..10_000 => 1,
        _ => 0,
    };
    let _ = write!(out, "{:.precision$}s", t as f64 / 1000.0);
}

/// What a protocol score is.
enum Kind {
    Cp,
    Win,
    Loss,
}

/// A protocol score (`cp 35`, `win 7`, `loss 4`): its kind and number; `None` for
/// anything else.
fn score_of(score: &str) -> Option<(Kind, i64)> {
    let (kind, n) = score.trim().split_once(' ')?;
    let n: i64 = n.trim().parse().ok()?;
    let kind = match kind {
        "cp" => Kind::Cp,
        "win" => Kind::Win,
        "loss" => Kind::Loss,
        _ => return None,
    };
    Some((kind, n))
}

/// A move's comment alone ([`write_comment`]).
#[cfg(test)]
pub(super) fn move_comment(m: &super::MoveRecord) -> String {
    let mut out = String::new();
    write_comment(&mut out, m);
    out
}
