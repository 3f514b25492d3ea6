//! A tournament's games as a file to download: PGN (with cutechess's move comments) or
//! JSON Lines (the export's lines), plain or gzip, made a page of the export at a time so
//! that a download of any size holds the coordinator's lock only while a page is read and
//! keeps about a page in memory.

use std::io::Write as _;

use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::BTreeMap;

use serde::Deserialize;
use tourney_model::{GameKind, GameRecord, GameResult, MetaValue, MoveRecord, Termination};

use crate::scheduler::TournamentId;
use crate::state::Coordinator;
use crate::types::{CoordinatorError, ExportFilter};

/// What a download holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GamesFormat {
    /// PGN-style text with move comments ([`GameRecord::to_pgn`]).
    Pgn,
    /// One JSON record per line, as `tourney export --format jsonl` writes them.
    Jsonl,
}

impl GamesFormat {
    /// The file name's extension: `pgn` or `jsonl`.
    pub fn extension(self) -> &'static str {
        match self {
            GamesFormat::Pgn => "pgn",
            GamesFormat::Jsonl => "jsonl",
        }
    }
}

/// The gzip level of compressed downloads: quick, and most of what level 6 saves on text
/// this repetitive.
const GZIP_LEVEL: u32 = 3;

/// A download under way: the next page of the export, in its format, compressed or not.
pub struct Download {
    id: TournamentId,
    filter: ExportFilter,
    format: GamesFormat,
    gzip: Option<GzEncoder<Vec<u8>>>,
    /// The pair the next page starts at; `None` once the last was made.
    from: Option<u64>,
    /// Games made so far.
    pub games: u64,
}

impl Download {
    /// A download of tournament `id`'s games that `filter` keeps, in `format`, gzip
    /// compressed with `gzip`.
    pub fn new(id: TournamentId, filter: ExportFilter, format: GamesFormat, gzip: bool) -> Self {
        Download {
            id,
            filter,
            format,
            gzip: gzip.then(|| GzEncoder::new(Vec::new(), Compression::new(GZIP_LEVEL))),
            from: Some(0),
            games: 0,
        }
    }

    /// The next piece of the file (about a mebibyte of games, the export's page, before
    /// compression; possibly empty when the filter left a page out), `None` after
    /// the last.
    ///
    /// # Errors
    /// The store failed or holds a record that does not decode, the tournament's games
    /// were archived, or a record does not read as one.
    pub fn next_piece(&mut self, c: &Coordinator) -> Result<Option<Vec<u8>>, CoordinatorError> {
        let Some(from) = self.from else {
            return Ok(None);
        };
        let (lines, next) = c.export_page(self.id, &self.filter, from)?;
        self.from = next;
        let mut text = Vec::with_capacity(lines.iter().map(String::len).sum::<usize>());
        for line in &lines {
            match self.format {
                GamesFormat::Jsonl => {
                    text.extend_from_slice(line.as_bytes());
                    text.push(b'\n');
                }
                GamesFormat::Pgn => {
                    let record = pgn_record_of_export_line(line)?;
                    text.extend_from_slice(record.to_pgn().as_bytes());
                }
            }
        }
        self.games += lines.len() as u64;
        let Some(gzip) = self.gzip.as_mut() else {
            return Ok(Some(text));
        };
        // Writing to memory does not fail; were it to, the download ends with the error.
        let io = |e: std::io::Error| CoordinatorError::Record(serde_json::Error::io(e));
        gzip.write_all(&text).map_err(io)?;
        if self.from.is_none() {
            // The last page: the rest of the stream and its trailer.
            let gzip = self.gzip.take().expect("compressing");
            return gzip.finish().map(Some).map_err(io);
        }
        // What the encoder wrote so far (it keeps the rest for the next page).
        Ok(Some(std::mem::take(gzip.get_mut())))
    }
}

/// The game record of an export line ([`Coordinator::export_page`]): the players back as
/// objects (name, spec, and what the line kept of them), and the worker that played it in
/// its `meta` (PGN's `Site`).
///
/// # Errors
/// The line is not a JSON object, or not a record.
pub fn record_of_export_line(line: &str) -> Result<GameRecord, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(line)?;
    let Some(object) = value.as_object_mut() else {
        return Err(serde::de::Error::custom("an export line is a JSON object"));
    };
    // The worker that played it is PGN's Site (a record may come without a meta).
    let worker = object.get("worker").cloned().unwrap_or_default();
    if let Some(meta) = object
        .entry("meta")
        .or_insert_with(|| serde_json::json!({}))
        .as_object_mut()
    {
        meta.insert("worker".into(), worker);
    }
    // Restore the record's own shape (players as objects).
    for side in ["white", "black"] {
        let name = value[side].clone();
        let mut player =
            serde_json::json!({ "name": name, "spec": value[format!("{side}_spec")].clone() });
        for kept in ["stderr", "transcript", "artifact", "options"] {
            if let Some(lines) = value.get(format!("{side}_{kept}")) {
                player[kept] = lines.clone();
            }
        }
        value[side] = player;
    }
    serde_json::from_value(value)
}

/// What the PGN of an export line reads of it: the record's fields, the players' names and
/// the worker.
#[derive(Deserialize)]
struct PgnLine {
    #[serde(with = "tourney_model::game_kind")]
    game: GameKind,
    #[serde(default)]
    rules: String,
    start: String,
    #[serde(default)]
    opening_plies: u32,
    time_control: String,
    white: String,
    black: String,
    moves: Vec<MoveRecord>,
    result: GameResult,
    termination: Termination,
    #[serde(default)]
    detail: Option<String>,
    #[serde(default)]
    started_ms: Option<u64>,
    #[serde(default)]
    meta: BTreeMap<String, MetaValue>,
    #[serde(default)]
    worker: Option<String>,
}

/// The record of an export line as its PGN needs it ([`record_of_export_line`] less what
/// PGN does not write: players' specs, logs, programs and options), read straight from
/// the text rather than through a JSON tree: a download of long games runs more than twice
/// as fast.
fn pgn_record_of_export_line(line: &str) -> Result<GameRecord, serde_json::Error> {
    let l: PgnLine = serde_json::from_str(line)?;
    let player = |name: String| tourney_model::PlayerRecord {
        name,
        ..Default::default()
    };
    let mut meta = l.meta;
    if let Some(worker) = l.worker {
        meta.insert("worker".into(), MetaValue::Text(worker));
    }
    Ok(GameRecord {
        game: l.game,
        rules: l.rules,
        start: l.start,
        opening_plies: l.opening_plies,
        time_control: l.time_control,
        white: player(l.white),
        black: player(l.black),
        moves: l.moves,
        result: l.result,
        termination: l.termination,
        detail: l.detail,
        started_ms: l.started_ms,
        meta,
    })
}
