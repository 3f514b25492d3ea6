//! Stored games and exports: a tournament's stored games, a pair's or a page of them as export lines, read
//! only while the store holds them.

use crate::scheduler::TournamentId;
use crate::state::Coordinator;
use crate::types::{CoordinatorError, ExportFilter};
use tourney_model::GameRecord;

impl Coordinator {
    /// Whether tournament `id`'s games can be read from the store: not while the store
    /// fails (it may hold writes that were never made durable nor acknowledged), nor once
    /// they were archived.
    pub(crate) fn readable(&self, id: TournamentId) -> Result<(), CoordinatorError> {
        if let Some(why) = self.store_fault() {
            return Err(CoordinatorError::Unavailable(why));
        }
        let archived = self
            .lock()
            .tournaments
            .get(&id)
            .and_then(|e| e.record.archived_ms);
        match archived {
            Some(at) => Err(CoordinatorError::Invalid(format!(
                "tournament {id}'s games were archived at {}: they are in the files \
                 `tourney archive` wrote (its report and ratings stay here)",
                tourney_model::Utc::from_unix_ms(at)
            ))),
            None => Ok(()),
        }
    }

    /// One stored pair's games.
    ///
    /// # Errors
    /// The store failed or holds a record that does not decode.
    pub fn pair_games(
        &self,
        id: TournamentId,
        pair: u64,
    ) -> Result<Option<Vec<GameRecord>>, CoordinatorError> {
        self.readable(id)?;
        match self.store.pair(id, pair)? {
            Some(record) => Ok(Some(record.games()?)),
            None => Ok(None),
        }
    }

    /// A page of the acknowledged games of a tournament that `filter` keeps (a batch
    /// still being made durable is not shown), as JSON objects in pair
    /// order, each with its pair index and the engine names as `white` and `black`: from
    /// pair `from` on, about [`EXPORT_PAGE_BYTES`] of them, and the pair the next page
    /// starts at (`None` after the last).
    ///
    /// # Errors
    /// The store failed, or holds a record that does not decode.
    pub fn export_page(
        &self,
        id: TournamentId,
        filter: &ExportFilter,
        from: u64,
    ) -> Result<(Vec<String>, Option<u64>), CoordinatorError> {
        self.readable(id)?;
        let (first, last) = filter.pairs.unwrap_or((0, u64::MAX));
        let mut from = from.max(first);
        let (mut lines, mut bytes) = (Vec::new(), 0);
        while bytes < EXPORT_PAGE_BYTES {
            let pairs = self.store.pair_games_from(id, from, EXPORT_READ_PAIRS)?;
            let read_all = pairs.len() < EXPORT_READ_PAIRS;
            // Only acknowledged pairs: a batch being made durable is already readable.
            let acknowledged: Vec<bool> = {
                let inner = self.lock();
                let t = inner.scheduler.tournament(id);
                (pairs.iter())
                    .map(|p| t.is_none_or(|t| t.is_done(p.outcome.pair)))
                    .collect()
            };
            for (pair, acknowledged) in pairs.into_iter().zip(acknowledged) {
                if pair.outcome.pair > last {
                    return Ok((lines, None));
                }
                from = pair.outcome.pair + 1;
                if !acknowledged {
                    continue;
                }
                for game in &pair.games {
                    if let Some(line) = export_line(id, &pair, game, filter)? {
                        bytes += line.len();
                        lines.push(line);
                    }
                }
            }
            if read_all {
                return Ok((lines, None));
            }
        }
        Ok((lines, Some(from)))
    }
}

/// About how many bytes of games an export page holds.
pub(crate) const EXPORT_PAGE_BYTES: usize = 1 << 20;
/// Pairs read from the store at a time by an export.
const EXPORT_READ_PAIRS: usize = 64;

/// A game of `pair` as an export line (`None` when `filter` leaves it out): the stored
/// record's fields as they came in (whatever passed the checks exports, even fields this
/// version does not know), players by name with their specs beside (and the stderr and
/// protocol transcript of one that lost by failing), and where it was played.
fn export_line(
    id: TournamentId,
    pair: &tourney_store::PairGames,
    game: &tourney_store::GameJson,
    filter: &ExportFilter,
) -> Result<Option<String>, serde_json::Error> {
    let mut game = game.clone();
    let map = &mut game.fields;
    let field = |map: &serde_json::Map<String, serde_json::Value>, side: &str, key: &str| {
        map.get(side).and_then(|p| p.get(key)).cloned()
    };
    let name = |map: &serde_json::Map<String, serde_json::Value>, side: &str| {
        field(map, side, "name")
            .and_then(|n| n.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let (white, black) = (name(map, "white"), name(map, "black"));
    let started = map.get("started_ms").and_then(serde_json::Value::as_u64);
    if !filter.keeps(&white, &black, started) {
        return Ok(None);
    }
    for side in ["white", "black"] {
        let spec = field(map, side, "spec").unwrap_or_default();
        map.insert(format!("{side}_spec"), spec);
        // How to run it again (`tourney replay`): its program's sha256 and its options.
        for kept in ["artifact", "options"] {
            if let Some(value) = field(map, side, kept)
                .filter(|v| !(v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty)))
            {
                map.insert(format!("{side}_{kept}"), value);
            }
        }
        // What an engine that lost by failing left: its stderr and the game's protocol.
        for kept in ["stderr", "transcript"] {
            if let Some(lines) =
                field(map, side, kept).filter(|v| v.as_array().is_some_and(|a| !a.is_empty()))
            {
                map.insert(format!("{side}_{kept}"), lines);
            }
        }
    }
    map.insert("pair".into(), pair.outcome.pair.into());
    map.insert("tournament".into(), id.into());
    map.insert("worker".into(), pair.worker.clone().into());
    map.insert("token".into(), pair.token.clone().into());
    map.insert("white".into(), white.into());
    map.insert("black".into(), black.into());
    game.to_json().map(Some)
}
