//! Data generation runs (`format = "datagen"`): their checked games' positions, the data
//! sets they go to ([`crate::tournaments::datasets`]), and what the API gives of them.

use std::path::PathBuf;

use tourney_dataset::{Extracted, Filters};
use tourney_model::GameRecord;
use tourney_model::tournament::DatagenSettings;

use crate::scheduler::TournamentId;

/// The filters of a run's settings.
fn filters_of(d: &DatagenSettings) -> Filters {
    Filters {
        skip_plies: d.skip_plies,
        skip_captures: d.skip_captures,
        skip_decided: d.skip_decided,
    }
}

/// The positions of a checked pair's games (game ids `pair × 2 + game`).
///
/// # Errors
/// A game does not replay (it was not checked).
pub(crate) fn extract(
    d: &DatagenSettings,
    pair: u64,
    games: &[GameRecord],
) -> Result<Extracted, String> {
    let filters = filters_of(d);
    let mut all = Extracted::default();
    for (g, game) in games.iter().enumerate() {
        let e = tourney_dataset::extract(game, pair * 2 + g as u64, &filters)?;
        all.records.extend(e.records);
        all.skipped.add(&e.skipped);
    }
    Ok(all)
}

impl crate::state::Coordinator {
    /// Opens run `id`'s data set, if it is a data generation run, after a restart; one
    /// with the positions it wants is finished.
    ///
    /// # Errors
    /// Its data set could not be read or rebuilt.
    pub(crate) fn open_dataset(&self, id: TournamentId) -> Result<(), tourney_store::StoreError> {
        let (config, done) = {
            let inner = self.lock();
            let Some(t) = inner.scheduler.tournament(id) else {
                return Ok(());
            };
            (std::sync::Arc::clone(&t.config), t.pairs_done())
        };
        let Some(d) = config.datagen() else {
            return Ok(());
        };
        let stored = |sink: &mut dyn FnMut(Vec<Extracted>) -> Result<(), String>| {
            self.stored_positions(id, d, sink)
        };
        self.datasets.open(id, d, done, stored).map_err(|reason| {
            tourney_store::StoreError::DataDir {
                path: self.datasets.dir_of(id).display().to_string(),
                reason,
            }
        })?;
        let held = self.datasets.summary(id).map_or(0, |s| s.positions);
        if held >= d.positions {
            self.lock().scheduler.reach_target(id);
        }
        Ok(())
    }

    /// The positions of every stored pair of run `id`, in pair order, to `sink` 256
    /// pairs at a time.
    fn stored_positions(
        &self,
        id: TournamentId,
        d: &DatagenSettings,
        sink: &mut dyn FnMut(Vec<Extracted>) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut from = 0;
        loop {
            let pairs = self
                .store
                .pair_games_from(id, from, 256)
                .map_err(|e| e.to_string())?;
            let Some(last) = pairs.last() else {
                return Ok(());
            };
            from = last.outcome.pair + 1;
            let mut out = Vec::with_capacity(pairs.len());
            for pair in pairs {
                let games = (pair.games.iter())
                    .map(|g| {
                        let json = g.to_json().map_err(|e| e.to_string())?;
                        serde_json::from_str::<GameRecord>(&json).map_err(|e| e.to_string())
                    })
                    .collect::<Result<Vec<_>, String>>()?;
                out.push(extract(d, pair.outcome.pair, &games)?);
            }
            sink(out)?;
        }
    }

    /// Appends committed pairs' positions to their runs' data sets; the runs that now hold
    /// the positions they want. A data set that cannot be written is rebuilt from the
    /// store (said in the log), as a restart would.
    pub(crate) fn append_positions(
        &self,
        batch: Vec<(TournamentId, Extracted)>,
    ) -> Vec<TournamentId> {
        let mut by_run: std::collections::BTreeMap<TournamentId, Vec<Extracted>> =
            Default::default();
        for (id, extracted) in batch {
            by_run.entry(id).or_default().push(extracted);
        }
        let mut reached = Vec::new();
        for (id, pairs) in by_run {
            let config = {
                let inner = self.lock();
                match inner.config(id) {
                    Some(config) => std::sync::Arc::clone(config),
                    None => continue,
                }
            };
            let Some(d) = config.datagen() else { continue };
            let held = match self.datasets.append(id, d, pairs) {
                Ok(held) => held,
                Err(e) => {
                    tracing::error!(tournament = id, error = %e, "data set not written: rebuilding it from the store");
                    if let Err(e) = self.open_dataset(id) {
                        tracing::error!(tournament = id, error = %e, "data set not rebuilt");
                    }
                    continue;
                }
            };
            if held >= d.positions {
                reached.push(id);
            }
        }
        reached
    }
}

impl crate::state::Coordinator {
    /// Run `id`'s data files and the records of each, as its summary counts them now.
    ///
    /// # Errors
    /// `id` is not a data generation run.
    pub(crate) fn data_files(
        &self,
        id: TournamentId,
    ) -> Result<Vec<(PathBuf, u64)>, crate::types::CoordinatorError> {
        self.datagen_of(id)?;
        let dir = self.datasets.dir_of(id);
        let summary = self.datasets.summary(id).unwrap_or_default();
        Ok((summary.files.into_iter())
            .map(|f| (dir.join(f.name), f.records))
            .collect())
    }

    /// What run `id`'s data set holds and skipped.
    ///
    /// # Errors
    /// `id` is not a data generation run.
    pub(crate) fn data_summary(
        &self,
        id: TournamentId,
    ) -> Result<tourney_proto::v1::DataSummaryResponse, crate::types::CoordinatorError> {
        let target = self.datagen_of(id)?;
        let s = self.datasets.summary(id).unwrap_or_default();
        let k = s.skipped;
        Ok(tourney_proto::v1::DataSummaryResponse {
            positions: s.positions,
            pairs: s.pairs,
            files: s.files.len() as u64,
            target,
            duplicates: k.duplicates,
            early: k.early,
            captures: k.captures,
            decided: k.decided,
            unscored: k.unscored,
            forfeits: k.forfeits,
            directory: self.datasets.dir_of(id).display().to_string(),
        })
    }

    /// The positions run `id` wants.
    fn datagen_of(&self, id: TournamentId) -> Result<u64, crate::types::CoordinatorError> {
        let inner = self.lock();
        (inner.config(id))
            .and_then(|c| c.datagen().map(|d| d.positions))
            .ok_or_else(|| {
                crate::types::CoordinatorError::Invalid(format!(
                    "tournament {id} is not a data generation run (format = \"datagen\")"
                ))
            })
    }
}
