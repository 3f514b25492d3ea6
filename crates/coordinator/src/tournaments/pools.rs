//! Rating pools as they run: registered versions added to a pool (`tourney pool add`,
//! `tourney version add --pool`), a pool found by its name, and its best member.

use std::sync::Arc;

use tourney_model::tournament::{Format, PoolMember, TournamentConfig};
use tourney_stats::PlayerRating;

use crate::accounts::Principal;
use crate::scheduler::{GateDecision, Planner, Scheduler, TournamentId};
use crate::state::{Coordinator, Inner};
use crate::types::CoordinatorError;

impl Coordinator {
    /// The rating pool `pool` names: its id, or its name (the newest pool of that name
    /// that has not ended, else the newest of that name).
    ///
    /// # Errors
    /// No pool has that id or name.
    pub fn find_pool(&self, pool: &str) -> Result<TournamentId, CoordinatorError> {
        let inner = self.lock();
        let pools =
            || (inner.scheduler.tournaments().rev()).filter(|t| t.config.format == Format::Pool);
        let by_id = pool.parse::<TournamentId>().ok();
        let found = (pools().find(|t| Some(t.id) == by_id))
            .or_else(|| pools().find(|t| t.config.name == pool && !t.state.has_ended()))
            .or_else(|| pools().find(|t| t.config.name == pool));
        found.map(|t| t.id).ok_or_else(|| {
            CoordinatorError::NotFound(format!("no rating pool with id or name '{pool}'"))
        })
    }

    /// Adds registered version `version` to rating pool `id` for `by` (the pool's author,
    /// an approver or an admin): stored with the pool before anything else sees it, a
    /// member from the pool's next pair on. Returns that pair.
    ///
    /// # Errors
    /// Not allowed, no such pool, it has ended, the version is unknown or already a
    /// member, its player does not play the pool's game, the pool is full, or the store
    /// failed.
    pub async fn add_to_pool(
        &self,
        by: &Principal,
        id: TournamentId,
        version: &str,
    ) -> Result<u64, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let invalid = |why: String| CoordinatorError::Invalid(format!("pool {id}: {why}"));
        let (record, from) = {
            let mut guard = self.lock();
            let inner = &mut *guard;
            let (Some(t), Some(entry)) =
                (inner.scheduler.tournament(id), inner.tournaments.get(&id))
            else {
                return Err(CoordinatorError::NotFound(format!("no tournament {id}")));
            };
            if t.state.has_ended() {
                return Err(invalid(format!("it has ended ({})", t.state.name())));
            }
            if !inner.versions.contains_key(version) {
                return Err(invalid(format!(
                    "no version '{version}' (see `tourney version list`)"
                )));
            }
            let member = PoolMember {
                version: version.to_string(),
                from_pair: t.next_pair(),
                added_ms: tourney_model::unix_ms_now(),
                by: by.name.clone(),
            };
            let mut config = TournamentConfig::clone(&t.config);
            config.add_pool_member(&member).map_err(invalid)?;
            let record = &entry.record;
            let programs = (config.resolve_versions(|name| inner.versions.get(name).cloned()))
                .map_err(|e| match e.engine + 1 == config.engines.len() {
                    // The joining version, which is in no line of the file.
                    true => invalid(e.message),
                    false => invalid(e.located(&record.config_text, &record.file).to_string()),
                })?;
            tourney_plan::check::check_players(&config, &record.config_text, &record.file)
                .map_err(|e| invalid(format!("version '{version}': {e}")))?;
            let mut artifacts = (*entry.artifacts).clone();
            artifacts.extend(programs.into_iter().filter(|(name, _)| name == version));
            let mut record = inner.record(id).expect("checked above");
            record.pool_members.push(member.clone());
            record.artifacts = artifacts.clone();
            // Stored before the pool pairs it: a pair of it is never stored without it.
            self.store.put_tournament(&record)?;
            let engine = config.engines.last().cloned().expect("just added");
            let from = (inner.scheduler.join_pool(id, engine)).expect("a pool that has not ended");
            debug_assert_eq!(from, member.from_pair);
            let entry = inner.tournaments.get_mut(&id).expect("checked above");
            entry.settings = Arc::new(tourney_model::job::GameSettings::of(&config));
            entry.artifacts = Arc::new(artifacts);
            entry.record = record;
            entry.ratings = None;
            (inner.record(id), from)
        };
        self.save(record).await?;
        self.record_event(
            by,
            "pool-joined",
            &format!("tournament {id}"),
            &format!("{version} from pair {from}"),
        );
        Ok(from)
    }

    /// The best member of pool `id` now, with its standing: with a gate the one its gates
    /// promoted last (the anchor before any), else the highest rated of those that have
    /// played (`None` while none has).
    ///
    /// # Errors
    /// No pool `id`.
    pub fn pool_best(&self, id: TournamentId) -> Result<Option<PlayerRating>, CoordinatorError> {
        let gated = {
            let inner = self.lock();
            let gate = |t: &crate::scheduler::Tournament| match t.planner() {
                Some(Planner::Pool(pool)) => pool.gate().map(|g| g.best),
                _ => None,
            };
            let t = inner.scheduler.tournament(id);
            (t.and_then(gate)).and_then(|best| Some(t?.config.engines.get(best)?.name.clone()))
        };
        let status = (self.status(id))
            .filter(|s| s.config.format == Format::Pool)
            .ok_or_else(|| CoordinatorError::NotFound(format!("no rating pool {id}")))?;
        let players = status.ratings.players.into_iter();
        Ok(match gated {
            Some(best) => players.into_iter().find(|p| p.name == best),
            None => (players.filter(|p| p.games > 0)).max_by(|a, b| a.elo.total_cmp(&b.elo)),
        })
    }

    /// The promotions by pool `id`'s gate, newest first: the candidate, the best it
    /// replaced, and the pairs its SPRT counted.
    pub(crate) fn promotions(&self, id: TournamentId) -> Vec<(usize, usize, u64)> {
        let inner = self.lock();
        (gate_decisions(&inner.scheduler, id).iter().rev())
            .filter(|d| d.promoted)
            .map(|d| (d.candidate, d.against, d.pairs))
            .collect()
    }

    /// Records and tells the webhooks each gate decision in `verdicts`, by pool.
    pub(crate) fn tell_gates(&self, verdicts: Vec<(TournamentId, String)>) {
        let coordinator = Principal::operator("coordinator");
        for (id, verdict) in verdicts {
            tracing::info!(tournament = id, %verdict, "pool gate decided");
            self.record_event(
                &coordinator,
                "pool-gate",
                &format!("tournament {id}"),
                &verdict,
            );
            self.notify(crate::notify::Event::Gate { id, verdict });
        }
    }
}

/// The gate decisions of tournament `id` so far (none but for a gated pool).
pub(crate) fn gate_decisions(scheduler: &Scheduler, id: TournamentId) -> &[GateDecision] {
    match scheduler.tournament(id).and_then(|t| t.planner()) {
        Some(Planner::Pool(pool)) => pool.gate().map_or(&[], |g| &g.decisions),
        _ => &[],
    }
}

/// The gate decisions not told yet of the tournaments in `ids`, in words, by pool; now
/// marked told.
pub(crate) fn untold_gates(
    inner: &mut Inner,
    ids: impl IntoIterator<Item = TournamentId>,
) -> Vec<(TournamentId, String)> {
    let mut verdicts = Vec::new();
    for id in ids {
        let decisions = gate_decisions(&inner.scheduler, id);
        let (Some(entry), Some(config)) =
            (inner.tournaments.get_mut(&id), inner.scheduler.config(id))
        else {
            continue;
        };
        let name = |i: usize| (config.engines.get(i)).map_or("?", |e| e.name.as_str());
        for d in decisions.iter().skip(entry.gates_told) {
            let (candidate, against) = (name(d.candidate), name(d.against));
            let verdict = if d.promoted {
                format!("{candidate} promoted, the pool's best over {against}")
            } else {
                format!("{candidate} refused: not better than {against}")
            };
            let sprt = format!("(gate SPRT: LLR {:.2} after {} pairs)", d.llr, d.pairs);
            verdicts.push((id, format!("{verdict} {sprt}")));
        }
        entry.gates_told = decisions.len();
    }
    verdicts
}
