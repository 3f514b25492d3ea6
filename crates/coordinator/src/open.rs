//! Opening a coordinator on its store: what a restart reads back of every tournament, the
//! committer started, ended tournaments summarised, and tuning runs' verifications sent.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use prometheus::Registry;
use tokio::sync::{mpsc, watch};
use tourney_model::job::GameSettings;
use tourney_model::tournament::TournamentConfig;
use tourney_model::version::EngineVersion;
use tourney_store::{Store, StoreError};

use crate::clock::{Clock, SystemClock};
use crate::fleet::Fleet;
use crate::metrics::CoordinatorMetrics;
use crate::scheduler::{Scheduler, TournamentId};
use crate::state::REPORTS_IN_FLIGHT;
use crate::state::{Coordinator, Entry, Inner};
use crate::tournaments::commit::committer;
use crate::tournaments::history::Restored;
use crate::types::{Settings, StoreFault};

impl Coordinator {
    /// A coordinator over `store`, restoring every stored tournament, with its group-commit
    /// task running on the current tokio runtime and its metrics registered in `registry`.
    ///
    /// A stored tournament whose file no longer parses is left in the store and not
    /// scheduled (the log says which and why).
    ///
    /// # Errors
    /// The store could not be read.
    pub fn open(
        store: Store,
        settings: Settings,
        registry: &Registry,
    ) -> Result<Arc<Coordinator>, StoreError> {
        Self::open_with_clock(store, settings, registry, Arc::new(SystemClock::default()))
    }

    /// [`Coordinator::open`] going by `clock` (tests move a [`crate::clock::ManualClock`]).
    ///
    /// # Errors
    /// The store could not be read.
    pub fn open_with_clock(
        store: Store,
        settings: Settings,
        registry: &Registry,
        clock: Arc<dyn Clock>,
    ) -> Result<Arc<Coordinator>, StoreError> {
        let metrics = CoordinatorMetrics::new(registry);
        let notifier = tourney_notify::Notifier::start(&settings.webhooks, registry);
        // Lease ids from this start's time in microseconds on: past every id an earlier
        // run gave (a run gives fewer than a million a second).
        let mut scheduler = Scheduler::new(settings.lease_ms)
            .with_author_shares(settings.author_shares)
            .starting_leases_at(tourney_model::unix_ms_now().saturating_mul(1000));
        let mut tournaments = BTreeMap::new();
        let versions: BTreeMap<String, EngineVersion> = store
            .versions()?
            .into_iter()
            .map(|v| (v.name.clone(), v))
            .collect();
        for record in store.tournaments()? {
            // A stored file that no longer parses (a rule tightened since it was submitted)
            // is left in the store, untouched, and not scheduled: said in the log.
            let parsed = TournamentConfig::parse(&record.config_text, &record.file)
                .map_err(|e| e.to_string())
                .and_then(|mut config| {
                    for member in &record.pool_members {
                        config.add_pool_member(member)?;
                    }
                    (config.resolve_versions(|name| versions.get(name).cloned()))
                        .map_err(|e| e.located(&record.config_text, &record.file).to_string())?;
                    config.apply_facts(&record.engines)?;
                    config.priority = record.priority.unwrap_or(config.priority);
                    config.weight = record.weight.unwrap_or(config.weight);
                    if let Some(pairs) = record.pair_budget {
                        config.set_pair_budget(pairs)?;
                    }
                    Ok(config)
                });
            let config = match parsed {
                Ok(config) => config,
                Err(e) => {
                    tracing::warn!(
                        tournament = record.id,
                        error = %e,
                        "stored tournament not scheduled: its file no longer parses"
                    );
                    continue;
                }
            };
            let restored = Restored::read(&store, record.id, &config, true)?;
            let workers = restored.workers;
            let settings = Arc::new(GameSettings::of(&config));
            let config = Arc::new(config);
            let completed = restored.done.outcomes(&config);
            scheduler.add(record.id, Arc::clone(&config), record.state, completed);
            scheduler.set_author(record.id, record.author.as_deref().unwrap_or_default());
            for host in record.excluded_workers().keys() {
                scheduler.set_excluded(record.id, host, true, &workers.pairs_of(host));
            }
            let entry = Entry {
                openings: store.openings(record.id)?,
                settings,
                artifacts: Arc::new(record.artifacts.clone()),
                ratings: None,
                workers,
                games: restored.games,
                tuning: Default::default(),
                verifying: false,
                suspects_told: 0,
                gates_told: crate::tournaments::pools::gate_decisions(&scheduler, record.id).len(),
                record,
            };
            tournaments.insert(entry.record.id, entry);
        }
        let lease_key = store.lease_key()?;
        let (commits, rx) = mpsc::channel(4096);
        let fault = StoreFault::default();
        tokio::spawn(committer(
            store.clone(),
            rx,
            metrics.commit_latency.clone(),
            Arc::clone(&fault),
        ));
        let datasets = crate::tournaments::datasets::DataSets::new(settings.data_dir.as_deref())
            .map_err(|e| StoreError::DataDir {
                path: settings
                    .data_dir
                    .as_ref()
                    .map_or("<temporary>".into(), |d| d.display().to_string()),
                reason: format!("cannot make the data sets' directory: {e}"),
            })?;
        let lease_budget = crate::fleet::cadence::Budget::new(settings.leases_per_second);
        let register_budget = crate::fleet::cadence::Budget::new(settings.registrations_per_second);
        let releases = crate::fleet::release::Releases::new(settings.worker_release.clone());
        let coordinator = Arc::new(Coordinator {
            inner: Mutex::new(Inner {
                scheduler,
                tournaments,
                fleet: Fleet::new(),
                versions,
                version_checks: Default::default(),
            }),
            store,
            commits,
            clock,
            settings,
            changes: watch::channel(0).0,
            metrics,
            generating: tokio::sync::Semaphore::new(1),
            fault,
            lease_key,
            report_room: tokio::sync::Semaphore::new(REPORTS_IN_FLIGHT >> 10),
            restart_work: Mutex::new(None),
            notifier,
            lease_budget: Mutex::new(lease_budget),
            register_budget: Mutex::new(register_budget),
            datasets,
            releases,
        });
        for id in coordinator.ids() {
            coordinator.open_dataset(id)?;
            // A tournament whose stored pairs complete it (played while no coordinator saw
            // it end) is stored as ended.
            let ended = {
                let mut inner = coordinator.lock();
                let stored = inner.tournaments.get(&id).map(|e| e.record.state);
                let now = inner.scheduler.tournament(id).map(|t| t.state);
                match (stored, now, inner.tournaments.get_mut(&id)) {
                    (Some(stored), Some(now), Some(entry)) if stored != now => {
                        if now.has_ended() {
                            entry
                                .record
                                .ended_ms
                                .get_or_insert_with(tourney_model::unix_ms_now);
                        }
                        inner.record(id)
                    }
                    _ => None,
                }
            };
            if let Some(record) = ended {
                coordinator.store.put_tournament(&record)?;
            }
            // Tournaments that ended without a summary (or with more pairs since) get one.
            coordinator.summarise(id);
        }
        // A tuning run that ended without its verification SPRT (the coordinator stopped
        // first) gets it now.
        let pending: Vec<TournamentId> = {
            let inner = coordinator.lock();
            (inner.with_configs())
                .filter(|(_, e, _)| e.record.verification.is_none())
                .filter(|(_, _, c)| c.spsa.as_ref().is_some_and(|s| s.verify.is_some()))
                .map(|(id, _, _)| id)
                .collect()
        };
        if !pending.is_empty() {
            let c = Arc::clone(&coordinator);
            let work = tokio::spawn(async move {
                for id in pending {
                    if let Err(e) = c.verify_tuning(id).await {
                        tracing::warn!(tuning = id, error = %e, "verification SPRT not submitted");
                    }
                }
            });
            *coordinator
                .restart_work
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(work);
        }
        Ok(coordinator)
    }

    /// Writes the summary of tournament `id` if it has ended, and lets go of its games'
    /// fingerprints: a restart reads the summary instead of its pairs' digests. Nothing is
    /// written while it runs, or once more pairs were counted than the store holds. A
    /// summary is a shortcut: when the store fails to take it, the log says so and a
    /// restart reads the digests.
    pub(crate) fn summarise(&self, id: TournamentId) {
        let (bytes, covers) = {
            let inner = self.lock();
            let (Some(t), Some(entry)) =
                (inner.scheduler.tournament(id), inner.tournaments.get(&id))
            else {
                return;
            };
            if !t.state.has_ended() || entry.games.is_folded() {
                return;
            }
            let bytes =
                crate::tournaments::history::summary(t.outcomes(), &entry.workers, &entry.games);
            (bytes, t.pairs_done())
        };
        let stored = self.store.put_summary(id, covers, &bytes);
        if let Err(e) = &stored {
            tracing::warn!(tournament = id, error = %e, "its summary could not be stored");
        }
        if stored.unwrap_or(false) {
            let mut inner = self.lock();
            let still = inner
                .scheduler
                .tournament(id)
                .is_some_and(|t| t.pairs_done() == covers);
            if let (true, Some(entry)) = (still, inner.tournaments.get_mut(&id)) {
                entry.games.fold();
            }
        }
    }
}
