//! A test's life after submission: approved, cancelled, paused when its pairs cannot be
//! played (a failed build's log kept for those who may read it), saved, resumed, a
//! worker's results excluded or counted again, archived.

use tourney_model::account::Role;
use tourney_model::tournament::State;
use tourney_store::{TournamentRecord, WorkerExclusion};

use crate::accounts::Principal;
use crate::scheduler::TournamentId;
use crate::state::Coordinator;
use crate::types::{CoordinatorError, Unplayable};

impl Coordinator {
    /// Approves a tournament waiting for it (an approver or admin other than its author):
    /// its pairs are leased from now on. Returns whether it was waiting.
    ///
    /// # Errors
    /// Not allowed (a lesser role, its own author), or the store failed.
    pub async fn approve(
        &self,
        by: &Principal,
        id: TournamentId,
    ) -> Result<bool, CoordinatorError> {
        by.require(Role::Approver)?;
        let record = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            if entry.record.author.as_deref() == Some(by.name.as_str()) {
                return Err(CoordinatorError::Forbidden(format!(
                    "'{}' submitted tournament {id}: another approver approves it",
                    by.name
                )));
            }
            if !inner.scheduler.approve(id) {
                return Ok(false);
            }
            if let Some(entry) = inner.tournaments.get_mut(&id) {
                entry.record.approved_by = Some(by.name.clone());
            }
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        self.record_event(by, "approved", &format!("tournament {id}"), "");
        Ok(true)
    }

    /// Cancels a tournament.
    ///
    /// # Errors
    /// The store failed.
    pub async fn cancel(&self, id: TournamentId) -> Result<bool, CoordinatorError> {
        let record = {
            let mut inner = self.lock();
            if !inner.scheduler.cancel(id) {
                return Ok(false);
            }
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            entry.record.paused_reason = None;
            entry.record.paused_log = None;
            entry.record.ended_ms = Some(tourney_model::unix_ms_now());
            inner.record(id)
        };
        self.save(record).await?;
        Ok(true)
    }

    /// The build log that paused tournament `id`, for `by` when it may read it (the test's
    /// author, an approver or an admin); `None` otherwise, or when none is kept.
    pub fn paused_log(&self, by: &Principal, id: TournamentId) -> Option<String> {
        by.require_owner(&self.author(id).unwrap_or_default())
            .ok()?;
        let inner = self.lock();
        inner.tournaments.get(&id)?.record.paused_log.clone()
    }

    /// A pair could not be played on `worker` (an engine unfit to play, a program that
    /// cannot be fetched): nothing is scored, the pair is offered again, and the worker's
    /// host is offered no more pairs of the tournament. When no connected worker is left
    /// that could play it, the tournament is paused with the reason; resuming it makes
    /// every host eligible again.
    ///
    /// # Errors
    /// The store failed.
    pub async fn pair_failed(
        &self,
        worker: &str,
        id: TournamentId,
        pair: u64,
        reason: &str,
    ) -> Result<(), CoordinatorError> {
        let failure = Unplayable {
            reason,
            ..Unplayable::default()
        };
        self.engine_failed(worker, id, pair, failure).await
    }

    /// [`Coordinator::pair_failed`] naming the engine at fault, if one is; with
    /// `engine_fault` (its build failed: no worker can play it), the tournament pauses at
    /// once, its build log kept for those who may read it ([`Coordinator::paused_log`]).
    /// A registered version's failure is kept with the version
    /// ([`Coordinator::version_checks`]).
    ///
    /// # Errors
    /// The store failed.
    pub async fn engine_failed(
        &self,
        worker: &str,
        id: TournamentId,
        pair: u64,
        failure: Unplayable<'_>,
    ) -> Result<(), CoordinatorError> {
        let Unplayable {
            engine,
            engine_fault,
            reason,
            log,
        } = failure;
        let reason = tourney_model::printable(&crate::fleet::checks::bounded(reason)).into_owned();
        let reason = match engine {
            "" => format!("pair {pair} could not be played on worker {worker}: {reason}"),
            engine => format!("engine {engine} could not play on worker {worker}: {reason}"),
        };
        self.metrics
            .engine_failures
            .with_label_values(&["unfit"])
            .inc();
        let now = self.now_ms();
        let record = {
            let mut inner = self.lock();
            if !inner.scheduler.unfit(id, worker, pair) {
                return Ok(());
            }
            crate::fleet::checks::note_problem(&mut inner, worker, id, engine, &reason);
            // A broken host (a missing library, say) does not stop the others: the pair
            // goes to them. With none left that can play it, or an engine no host can
            // play, the tournament waits for a fix.
            let others = !engine_fault
                && inner
                    .fleet
                    .connected(now, self.settings.lease_ms)
                    .iter()
                    .any(|w| !inner.scheduler.is_unfit(id, &w.id));
            if others {
                drop(inner);
                tracing::warn!(tournament = id, pair, %worker, %reason, "host excluded; the pair goes to the other workers");
                self.changed();
                return Ok(());
            }
            if !inner.scheduler.pause(id) {
                return Ok(());
            }
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(());
            };
            entry.record.paused_reason = Some(reason.clone());
            entry.record.paused_log = (!log.is_empty()).then(|| {
                tourney_model::printable(&crate::fleet::checks::bounded(log)).into_owned()
            });
            inner.record(id)
        };
        tracing::warn!(tournament = id, pair, %worker, %reason, "tournament paused");
        if engine_fault {
            let on = crate::accounts::Principal::operator(worker);
            self.record_event(&on, "build-failed", &format!("tournament {id}"), &reason);
        }
        self.notify(crate::notify::Event::paused(id, &reason, engine_fault));
        self.save(record).await
    }

    /// Stores a tournament's new state durably (nothing for an unknown one), then tells
    /// the watchers.
    pub(crate) async fn save(
        &self,
        record: Option<TournamentRecord>,
    ) -> Result<(), CoordinatorError> {
        let Some(record) = record else {
            return Ok(());
        };
        self.store.put_tournament(&record)?;
        self.store.flush().await?;
        self.summarise(record.id);
        self.changed();
        Ok(())
    }

    /// Resumes a paused or cancelled tournament with the games it has (queued, or running
    /// once it has pairs done); returns whether it was paused or cancelled.
    ///
    /// # Errors
    /// A cancelled tournament whose games were archived (they are no longer in the store),
    /// or that was deleted from the lists (restore it first); the store failed.
    pub async fn resume(&self, id: TournamentId) -> Result<bool, CoordinatorError> {
        self.resume_with(id, false).await
    }

    /// [`Coordinator::resume`]; with `pending`, a cancelled tournament that never played a
    /// pair waits for an approver again.
    pub(crate) async fn resume_with(
        &self,
        id: TournamentId,
        pending: bool,
    ) -> Result<bool, CoordinatorError> {
        let record = {
            let mut inner = self.lock();
            if let Some(entry) = inner.tournaments.get(&id) {
                if let Some(at) = entry.record.archived_ms {
                    return Err(CoordinatorError::Invalid(format!(
                        "tournament {id} cannot be resumed: its games were archived at {} \
                         and are no longer in the store; submit its file again (Clone on \
                         the dashboard) to play it anew",
                        tourney_model::Utc::from_unix_ms(at)
                    )));
                }
                if entry.record.hidden {
                    return Err(CoordinatorError::Invalid(format!(
                        "tournament {id} was deleted from the lists: restore it first \
                         (tourney modify {id} --restore), then resume it"
                    )));
                }
            }
            if !inner.scheduler.resume(id, pending) {
                return Ok(false);
            }
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            entry.record.paused_reason = None;
            entry.record.paused_log = None;
            entry.record.ended_ms = None;
            inner.record(id)
        };
        self.save(record).await?;
        Ok(true)
    }

    /// Leaves `worker`'s results in tournament `id` out of every figure (`excluded`), or
    /// counts them again, for `reason`. The decision is recorded with its time in the
    /// tournament's record (at most [`MAX_EXCLUSIONS`](crate::fleet::workers::MAX_EXCLUSIONS) decisions). An excluded worker's
    /// host is offered no more of the tournament's pairs; its pairs stay stored and done
    /// (they are not played again), and the SPRT is run again over what counts, so a
    /// tournament it decided may run on, or one finish. Returns the number of pairs
    /// concerned, `None` for an unknown tournament.
    ///
    /// # Errors
    /// [`CoordinatorError::Invalid`] for a worker that played nothing in the tournament,
    /// a decision already in force, an empty or overlong reason, or too many decisions;
    /// the store failed.
    pub async fn exclude_worker(
        &self,
        id: TournamentId,
        worker: &str,
        excluded: bool,
        reason: &str,
    ) -> Result<Option<u64>, CoordinatorError> {
        let worker = crate::scheduler::host(worker.trim());
        let reason = reason.trim();
        let most = crate::fleet::workers::MAX_REASON_CHARS;
        if reason.is_empty() || reason.chars().count() > most {
            return Err(CoordinatorError::Invalid(format!(
                "reason: say why in 1 to {most} characters"
            )));
        }
        let (record, pairs) = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get(&id) else {
                return Ok(None);
            };
            if !entry.workers.knows(worker) {
                return Err(CoordinatorError::Invalid(format!(
                    "worker {worker:?} played nothing in tournament {id}"
                )));
            }
            let now_excluded = entry.record.excluded_workers().contains_key(worker);
            if now_excluded == excluded {
                return Err(CoordinatorError::Invalid(format!(
                    "worker {worker:?}'s results in tournament {id} are already {}",
                    if excluded { "excluded" } else { "counted" }
                )));
            }
            let most = crate::fleet::workers::MAX_EXCLUSIONS;
            if entry.record.exclusions.len() >= most {
                return Err(CoordinatorError::Invalid(format!(
                    "tournament {id} already has {most} exclusion decisions"
                )));
            }
            let pairs = entry.workers.pairs_of(worker);
            let changed = inner.scheduler.set_excluded(id, worker, excluded, &pairs);
            let finished = inner
                .scheduler
                .tournament(id)
                .is_some_and(|t| t.state == State::Finished);
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(None);
            };
            entry.record.exclusions.push(WorkerExclusion {
                worker: worker.to_string(),
                excluded,
                reason: reason.to_string(),
                at_ms: tourney_model::unix_ms_now(),
            });
            entry.ratings = None;
            if changed {
                entry.record.ended_ms = finished.then(tourney_model::unix_ms_now);
            }
            (inner.record(id), pairs.len() as u64)
        };
        tracing::warn!(
            tournament = id,
            %worker,
            excluded,
            pairs,
            %reason,
            "worker's results {}",
            if excluded { "excluded" } else { "counted again" }
        );
        self.save(record).await?;
        Ok(Some(pairs))
    }

    /// Removes the games of ended tournament `id` from the store once an archive of them
    /// is written: `games` is how many games that archive holds, which must be every game
    /// stored. Its summary and its pairs' digests stay, so its report, ratings and
    /// restarts are as before; its export says where the games went. Returns the pairs
    /// whose games were removed (`None`: no such tournament).
    ///
    /// # Errors
    /// It has not ended, its games were archived already, the archive does not hold every
    /// game, or the store failed.
    pub async fn archive(
        &self,
        id: TournamentId,
        games: u64,
    ) -> Result<Option<u64>, CoordinatorError> {
        self.summarise(id);
        let record = {
            let inner = self.lock();
            let (Some(t), Some(entry)) =
                (inner.scheduler.tournament(id), inner.tournaments.get(&id))
            else {
                return Ok(None);
            };
            if !t.state.has_ended() {
                return Err(CoordinatorError::Invalid(format!(
                    "tournament {id} is {}: only a finished or cancelled tournament is archived",
                    t.state.name()
                )));
            }
            if let Some(at) = entry.record.archived_ms {
                return Err(CoordinatorError::Invalid(format!(
                    "tournament {id}'s games were archived already, at {}",
                    tourney_model::Utc::from_unix_ms(at)
                )));
            }
            let mut record = entry.record.clone();
            record.state = t.state;
            record
        };
        let stored = self.store.pair_count(id)?;
        if games != 2 * stored || self.store.summary(id)?.is_none() {
            return Err(CoordinatorError::Invalid(format!(
                "tournament {id} has {} games stored, the archive holds {games}: nothing removed; \
                 archive it again",
                2 * stored
            )));
        }
        let mut record = record;
        record.archived_ms = Some(tourney_model::unix_ms_now());
        // Marked first: a crash halfway leaves a tournament whose export says it was
        // archived, never one that silently lost games.
        self.store.put_tournament(&record)?;
        self.store.flush().await?;
        if let Some(entry) = self.lock().tournaments.get_mut(&id) {
            entry.record.archived_ms = record.archived_ms;
        }
        let removed = self.store.remove_games(id).await?;
        tracing::info!(
            tournament = id,
            pairs = removed,
            "games archived and removed from the store"
        );
        self.changed();
        Ok(Some(removed))
    }
}
