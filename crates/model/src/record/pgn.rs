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
