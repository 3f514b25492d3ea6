//! Commit: results made durable, a batch of reports in one transaction and one flush
//! (the group commit), and only then counted and acknowledged.

use std::collections::HashSet;
use std::sync::Arc;

use prometheus::Histogram;
use tokio::sync::{mpsc, oneshot};
use tourney_model::check::{Rejection, Side};
use tourney_model::job::{Identity, MoveLimits};
use tourney_model::tournament::{PairOutcome, TournamentConfig};
use tourney_model::{GameRecord, GameSummary, MetaValue};
use tourney_rules::Color;
use tourney_store::{PairDigest, PairRecord, Store};

use crate::accounts::Principal;
use crate::scheduler::{ReportAck, TournamentId};
use crate::state::{Coordinator, Inner};
use crate::ticket::Sealed;
use crate::tournaments::{datagen, pools, search_again};
use crate::types::{CommitJob, Refusal, Reported};
use crate::types::{CoordinatorError, Finished, StoreFault};

/// The group commit: takes every commit waiting, writes them in one transaction, flushes
/// once, then answers them all.
pub(crate) async fn committer(
    store: Store,
    mut jobs: mpsc::Receiver<CommitJob>,
    latency: Histogram,
    fault: StoreFault,
) {
    while let Some(first) = jobs.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = jobs.try_recv() {
            batch.push(more);
        }
        let all: Vec<PairRecord> = batch
            .iter()
            .flat_map(|j| j.records.iter().cloned())
            .collect();
        let timer = latency.start_timer();
        let result = store.commit_pairs(&all).await.map_err(|e| e.to_string());
        timer.observe_duration();
        if let Err(e) = &result {
            // Nothing of the batch is acknowledged; the coordinator stops leasing and says
            // NOT_SERVING until the store takes writes again.
            let mut fault = fault.lock().unwrap_or_else(|p| p.into_inner());
            if fault.is_none() {
                tracing::error!(error = %e, "the store failed: leasing stops until it recovers");
            }
            *fault = Some(e.clone());
        }
        let mut offset = 0;
        for job in batch {
            let n = job.records.len();
            let answer = result
                .as_ref()
                .map(|fresh| fresh[offset..offset + n].to_vec())
                .map_err(|e| CoordinatorError::Commit(e.clone()));
            offset += n;
            let _ = job.reply.send(answer);
        }
    }
}

/// What the checks know of one of a tournament's engines: its own limits, and whether its
/// player reports scores.
fn side_of(config: &TournamentConfig, index: usize) -> Side {
    let engine = &config.engines[index];
    Side {
        limits: engine.limits.as_ref().map(MoveLimits::of),
        reports_scores: engine.player.as_deref().is_none_or(|spec| {
            spec.parse::<tourney_ai::PlayerSpec>()
                .is_ok_and(|s| s.kind.reports_scores())
        }),
    }
}

/// Refused results after which a worker is barred from a tournament.
pub const REFUSALS_TO_BAR: u64 = 3;

impl Coordinator {
    /// Whether pair `pair` of tournament `id` is done: a result for it is a repeat.
    pub fn is_done(&self, id: TournamentId, pair: u64) -> bool {
        (self.lock().scheduler.tournament(id)).is_some_and(|t| t.is_done(pair))
    }

    /// Reads a reported pair once, into the typed records the exporters read, and checks
    /// it: its records are two games between the pair's two engines with colours swapped,
    /// in the tournament's game, named as they were leased (the ticket); the reporting
    /// registration holds the pair, or its ticket is the pair's (a lease from before a
    /// restart or a new registration, taken while the pair is open); each game replays on
    /// the rules core from the pair's opening to the ending it claims within its clocks
    /// ([`tourney_model::check::check`]); and the half-points agree with the results.
    /// The colours come from the records.
    ///
    /// # Errors
    /// The [`Refusal`]; the worker is told the result was rejected.
    pub fn check_reported(&self, worker: &str, r: Reported) -> Result<Finished, Refusal> {
        let (config, settings, openings, held, token, version, (first, second)) = {
            let inner = self.lock();
            let entry = inner
                .tournaments
                .get(&r.tournament)
                .ok_or(Refusal::NotHeld)?;
            // The engines it was handed out with (a pair of a format whose pairings are
            // made as results come in is known only once handed out, in this run).
            let scheduled = (inner.scheduler.tournament(r.tournament))
                .filter(|t| r.pair < t.pair_limit())
                .ok_or(Refusal::NotHeld)?;
            let (first, second, _) = scheduled.pairing(r.pair).ok_or(Refusal::NotHeld)?;
            let held = inner.scheduler.holds(worker, r.lease, r.tournament, r.pair);
            let suite = &entry.openings;
            // Engine-made openings (`genfens`) are the games' own starts, which the rules
            // check; suite openings are the suite's.
            let openings = (!entry.settings.engine_openings).then(|| {
                scheduled.config.pair_openings(r.pair).map(|index| {
                    (suite.get((index % suite.len().max(1) as u64) as usize))
                        .unwrap_or_default()
                        .to_string()
                })
            });
            (
                Arc::clone(&scheduled.config),
                Arc::clone(&entry.settings),
                openings,
                held,
                inner.fleet.token_of(worker).unwrap_or_default().to_string(),
                inner
                    .fleet
                    .version_of(worker)
                    .unwrap_or_default()
                    .to_string(),
                (first, second),
            )
        };
        let mut records: Vec<GameRecord> =
            serde_json::from_str(&r.games_json).map_err(|e| Refusal::Records(e.to_string()))?;
        if records.len() != 2 {
            return Err(Refusal::Records(format!("{} games, not 2", records.len())));
        }
        let index = |name: &str| {
            [first, second]
                .into_iter()
                .find(|&i| config.engines[i].name == name)
        };
        // Each engine as the records name it, the same in both games.
        let mut named: [Option<Identity>; 2] = [None, None];
        let mut white = [0; 2];
        for (g, game) in records.iter().enumerate() {
            let (Some(w), Some(b)) = (index(&game.white.name), index(&game.black.name)) else {
                return Err(Refusal::Seats);
            };
            if w == b || game.game != config.game {
                return Err(Refusal::Seats);
            }
            white[g] = w;
            for (engine, player) in [(w, &game.white), (b, &game.black)] {
                let seat = usize::from(engine == second);
                let identity = Identity::of(player);
                match &named[seat] {
                    Some(known) if *known != identity => return Err(Refusal::Ticket),
                    _ => named[seat] = Some(identity),
                }
            }
        }
        if white[0] == white[1] {
            return Err(Refusal::Seats);
        }
        let [Some(first_named), Some(second_named)] = &named else {
            return Err(Refusal::Seats);
        };
        let sealed = Sealed {
            tournament: r.tournament,
            pair: r.pair,
            host: crate::scheduler::host(worker),
            token: &token,
            engines: [first_named, second_named],
        };
        if !sealed.matches(&self.lease_key, &r.ticket) {
            return Err(if held {
                Refusal::Ticket
            } else {
                Refusal::NotHeld
            });
        }
        let mut half_points = [0u8; 2];
        let mut summaries = Vec::with_capacity(2);
        for (g, game) in records.iter_mut().enumerate() {
            let w = white[g];
            let b = if w == first { second } else { first };
            let game_error = |e| Refusal::Game(g, e);
            for (key, value) in [("pair", r.pair), ("game", g as u64)] {
                match game.meta.get(key).map(MetaValue::as_u64) {
                    None => {
                        game.meta.insert(key.into(), value.into());
                    }
                    Some(Some(v)) if v == value => {}
                    Some(_) => {
                        return Err(game_error(Rejection::Record(format!(
                            "meta {key} is not {value}"
                        ))));
                    }
                }
            }
            let mut sides = [Side::default(); 2];
            sides[Color::White.index()] = side_of(&config, w);
            sides[Color::Black.index()] = side_of(&config, b);
            let opening = openings.as_ref().map_or(&game.start, |o| &o[g]).clone();
            tourney_model::check::check(game, &opening, &settings, sides).map_err(game_error)?;
            let first_plays = if w == first {
                Color::White
            } else {
                Color::Black
            };
            half_points[g] = game.result.half_points(first_plays);
            if u32::from(half_points[g]) != r.half_points[g] {
                return Err(Refusal::HalfPoints);
            }
            summaries.push(GameSummary::of(game).map_err(Refusal::Records)?);
        }
        // A data generation run's positions, read off the checked games.
        let positions = match config.datagen() {
            Some(d) => {
                // Its scores are the training target: checked before any is taken.
                for (g, game) in records.iter().enumerate() {
                    tourney_dataset::check_scores(game).map_err(|e| Refusal::Scores(g, e))?;
                }
                // A sample searched again, where the worker runs this coordinator's players.
                if version == env!("CARGO_PKG_VERSION")
                    && let Some(g) = search_again::sampled(
                        &self.lease_key,
                        self.settings.search_again_every,
                        r.tournament,
                        r.pair,
                    )
                {
                    let game = &records[g];
                    let b = if white[g] == first { second } else { first };
                    let limits = [b, white[g]].map(|i| {
                        let side = side_of(&config, i);
                        let own = side.limits.unwrap_or(MoveLimits {
                            time_control: settings.time_control,
                            nodes: settings.nodes,
                            depth: settings.depth,
                            movetime_ms: settings.movetime_ms,
                        });
                        let built_in = config.engines[i].player.is_some();
                        built_in
                            .then(|| search_again::reproducible(&own, game.moves.len()))
                            .flatten()
                    });
                    if let [Some(black), Some(white)] = limits {
                        let seed = tourney_model::tournament::game_seed(
                            config.pair_seed(r.pair),
                            g as u64,
                        );
                        let verdict =
                            search_again::verify(game, &settings.rules, seed, [black, white]);
                        let result = if verdict.is_ok() { "agreed" } else { "refused" };
                        (self.metrics.searched_again)
                            .with_label_values(&[result])
                            .inc();
                        verdict.map_err(|e| Refusal::SearchedAgain(g, e))?;
                    }
                }
                Some(datagen::extract(d, r.pair, &records).map_err(Refusal::Records)?)
            }
            None => None,
        };
        // Stored as the typed records write themselves: whatever is stored exports,
        // replays and archives.
        let games = serde_json::value::to_raw_value(&records)
            .map_err(|e| Refusal::Records(e.to_string()))?;
        Ok(Finished {
            tournament: r.tournament,
            lease: r.lease,
            outcome: PairOutcome {
                pair: r.pair,
                first,
                second,
                half_points,
                white,
            },
            games,
            summaries,
            held,
            positions,
        })
    }

    /// Notes a refused report: logged with the worker and the reason, counted by reason
    /// (`tourney_results_rejected_total`) and for the worker (the dashboard's workers).
    /// The pair, if `worker` holds it in `lease`, goes back to be played by any worker;
    /// at [`REFUSALS_TO_BAR`] refusals of results of its own leases (held, or sealed by
    /// their tickets) in the tournament the worker (by name, all its sessions) is barred
    /// from it: an event, the `suspect` webhook, and none of its pairs
    /// offered to it again. A refusal never pauses the tournament: the honest workers
    /// play on.
    pub fn refused(
        &self,
        worker: &str,
        tournament: TournamentId,
        pair: u64,
        lease: u64,
        refusal: &Refusal,
    ) {
        tracing::warn!(%worker, tournament, pair, reason = %refusal, "result rejected");
        self.metrics
            .results_rejected
            .with_label_values(&[refusal.kind()])
            .inc();
        let barred = {
            let mut inner = self.lock();
            inner.fleet.rejected(worker);
            let held = inner.scheduler.holds(worker, lease, tournament, pair);
            if held {
                inner.scheduler.give_back(tournament, pair);
            }
            // Only a result of the worker's own lease counts against it: one it holds, or
            // one its ticket proves it was given. A stale one (its lease expired, or was
            // handed out before a restart and the pair's number given to other engines
            // since) is refused without blame.
            let blamed = held || refusal.sealed();
            let refusals = (inner.tournaments.get_mut(&tournament))
                .filter(|_| blamed)
                .map_or(0, |entry| entry.workers.rejected(worker));
            let bar = refusals == REFUSALS_TO_BAR && !inner.scheduler.is_unfit(tournament, worker);
            if bar {
                inner.scheduler.unfit(tournament, worker, pair);
            }
            bar
        };
        if barred {
            let name = crate::scheduler::host(worker);
            tracing::warn!(worker = %name, tournament, "worker barred: its results were refused");
            self.record_event(
                &Principal::operator("coordinator"),
                "worker-barred",
                &format!("tournament {tournament}"),
                &format!("{name}: {REFUSALS_TO_BAR} results refused, the last: {refusal}"),
            );
            self.notify(crate::notify::Event::Barred {
                id: tournament,
                worker: name.to_string(),
                reason: refusal.to_string(),
            });
            self.changed();
        }
    }

    /// Records finished pairs: durable (committed and flushed) before this returns.
    ///
    /// # Errors
    /// The store failed; nothing was acknowledged.
    pub async fn report(
        &self,
        worker: &str,
        results: Vec<Finished>,
    ) -> Result<ReportAck, CoordinatorError> {
        let mut ack = ReportAck::default();
        let mut fresh_candidates: Vec<Finished> = Vec::new();
        {
            let inner = self.lock();
            for r in results {
                match inner.scheduler.tournament(r.tournament) {
                    None => ack.rejected += 1,
                    Some(t) if r.outcome.pair >= t.pair_limit() => ack.rejected += 1,
                    Some(t) if t.is_done(r.outcome.pair) => ack.duplicates += 1,
                    Some(_) => fresh_candidates.push(r),
                }
            }
        }
        if fresh_candidates.is_empty() {
            return Ok(ack);
        }
        let token = self
            .lock()
            .fleet
            .token_of(worker)
            .unwrap_or_default()
            .to_string();
        let records: Vec<PairRecord> = fresh_candidates
            .iter()
            .map(|r| PairRecord {
                tournament: r.tournament,
                outcome: r.outcome,
                games: r.games.clone(),
                worker: worker.to_string(),
                token: token.clone(),
            })
            .collect();
        let (reply, wait) = oneshot::channel();
        self.commits
            .send(CommitJob { records, reply })
            .await
            .map_err(|_| CoordinatorError::Closed)?;
        let fresh = wait.await.map_err(|_| CoordinatorError::Closed)??;
        // Data generation runs' positions follow their committed pairs into the data files.
        let positions = (fresh_candidates.iter_mut().zip(&fresh))
            .filter(|(_, new)| **new)
            .filter_map(|(r, _)| Some((r.tournament, r.positions.take()?)))
            .collect();
        let reached = self.append_positions(positions);
        let now = self.now_ms();
        let mut changed_states = Vec::new();
        let mut ended = Vec::new();
        let mut suspect = Vec::new();
        let gates;
        {
            let mut inner = self.lock();
            // The store decides which of two racing results for a pair is the first.
            let mut applied: Vec<(TournamentId, PairOutcome)> = Vec::new();
            let mut late = 0;
            for (r, _) in fresh_candidates.iter().zip(&fresh).filter(|(_, new)| **new) {
                // Late: its lease expired, and nobody else holds the pair now or did it.
                late += u64::from(
                    inner.scheduler.lease_of(r.tournament, r.outcome.pair) != Some(r.lease),
                );
                applied.push((r.tournament, r.outcome));
            }
            ack.duplicates += fresh.iter().filter(|new| !**new).count() as u32;

            self.metrics.pairs_committed.inc_by(applied.len() as u64);
            self.metrics.pairs_late.inc_by(late);
            // Games of an ended tournament whose fingerprints were let go: they are read
            // back first, for the pairs counted before these (under the same lock as the
            // scheduler's record of them, so no pair is counted twice).
            for &(tid, _) in &applied {
                if inner
                    .tournaments
                    .get(&tid)
                    .is_some_and(|e| e.games.is_folded())
                {
                    let new: HashSet<u64> = (applied.iter())
                        .filter(|(t, _)| *t == tid)
                        .map(|(_, o)| o.pair)
                        .collect();
                    unfold(&mut inner, tid, &self.store.digests(tid)?, &new);
                }
            }
            let (scheduler_ack, mut changed) =
                inner.scheduler.report(worker, &applied, self.now_ms());
            gates = pools::untold_gates(&mut inner, applied.iter().map(|a| a.0));
            for &tid in &reached {
                if inner.scheduler.reach_target(tid) && !changed.contains(&tid) {
                    changed.push(tid);
                }
            }
            ack.accepted += scheduler_ack.accepted;
            ack.duplicates += scheduler_ack.duplicates;
            let touched = changed.clone();
            for tid in changed {
                let now_ended = inner
                    .scheduler
                    .tournament(tid)
                    .is_some_and(|t| t.state.has_ended());
                if let (true, Some(entry)) = (now_ended, inner.tournaments.get_mut(&tid)) {
                    entry
                        .record
                        .ended_ms
                        .get_or_insert_with(tourney_model::unix_ms_now);
                    ended.push(tid);
                }
                changed_states.extend(inner.record(tid));
            }
            inner.fleet.seen(worker, now);
            for (r, _) in fresh_candidates.iter().zip(&fresh).filter(|(_, new)| **new) {
                let (tournament, outcome, games) = (r.tournament, &r.outcome, &r.summaries);
                if let Some(entry) = inner.tournaments.get_mut(&tournament) {
                    let terminations: Vec<_> = games
                        .iter()
                        .map(|g| (g.termination, g.played_on()))
                        .collect();
                    let prints: Vec<_> = games.iter().map(|g| g.fingerprint()).collect();
                    entry.workers.count(worker, outcome, &terminations);
                    let repeats = entry.games.count(outcome.pair, &prints);
                    if repeats > 0 {
                        self.metrics
                            .duplicate_games
                            .with_label_values(&[&tournament.to_string()])
                            .inc_by(repeats);
                    }
                }
                for (index, game) in games.iter().enumerate() {
                    inner
                        .fleet
                        .record_game(worker, tournament, outcome.pair, index, game);
                }
            }
            // A worker newly suspect is news for the webhooks.
            for tid in touched {
                if let Some(entry) = inner.tournaments.get_mut(&tid) {
                    let suspects = (entry.workers)
                        .assess(&entry.record.excluded_workers())
                        .suspects;
                    if suspects > entry.suspects_told {
                        suspect.push(tid);
                    }
                    entry.suspects_told = suspects;
                }
            }
        }
        for (r, _) in fresh_candidates.iter().zip(&fresh).filter(|(_, new)| **new) {
            for game in &r.summaries {
                self.metrics.observe_game(r.tournament, game);
            }
        }
        for record in changed_states {
            self.store.put_tournament(&record)?;
        }
        for &id in &ended {
            self.summarise(id);
            self.notify(crate::notify::Event::Finished(id));
        }
        for id in suspect {
            self.notify(crate::notify::Event::Suspect(id));
        }
        self.tell_gates(gates);
        for id in ended {
            // A tuning run that ended is checked by an SPRT of its own.
            if let Err(e) = self.verify_tuning(id).await {
                tracing::warn!(tuning = id, error = %e, "verification SPRT not submitted");
            }
        }
        self.changed();
        tracing::debug!(
            %worker,
            accepted = ack.accepted,
            duplicates = ack.duplicates,
            rejected = ack.rejected,
            "report committed"
        );
        Ok(ack)
    }

    /// Counts the stored pairs the coordinator does not know as done: after the store was
    /// opened again, what a batch that failed to flush left on disk after all. They were
    /// never acknowledged; a worker that reports one again is told it is a duplicate.
    ///
    /// # Errors
    /// The store failed.
    pub(crate) fn count_stored(&self) -> Result<u64, CoordinatorError> {
        let mut counted = 0;
        for id in self.ids() {
            let digests = self.store.digests(id)?;
            let mut inner = self.lock();
            let Some(t) = inner.scheduler.tournament(id) else {
                continue;
            };
            let unknown: Vec<&PairDigest> = digests
                .iter()
                .filter(|d| !t.is_done(d.outcome.pair))
                .collect();
            if unknown.is_empty() {
                continue;
            }
            let new: HashSet<u64> = unknown.iter().map(|d| d.outcome.pair).collect();
            unfold(&mut inner, id, &digests, &new);
            for d in &unknown {
                inner
                    .scheduler
                    .report(&d.worker, &[(id, d.outcome)], self.now_ms());
                if let Some(entry) = inner.tournaments.get_mut(&id) {
                    let terminations: Vec<_> = d.games.iter().map(|g| (g.0, g.2)).collect();
                    let prints: Vec<_> = d.games.iter().map(|g| g.1).collect();
                    entry.workers.count(&d.worker, &d.outcome, &terminations);
                    entry.games.count(d.outcome.pair, &prints);
                    entry.ratings = None;
                }
            }
            counted += unknown.len() as u64;
            let record = inner.record(id);
            drop(inner);
            if let Some(record) = record {
                self.store.put_tournament(&record)?;
            }
        }
        Ok(counted)
    }
}

/// Reads back the fingerprints of ended tournament `id`'s games (let go of when it was
/// summarised) from its pairs' `digests`, for the pairs counted before the `new` ones.
fn unfold(inner: &mut Inner, id: TournamentId, digests: &[PairDigest], new: &HashSet<u64>) {
    let Some(t) = inner.scheduler.tournament(id) else {
        return;
    };
    let counted: HashSet<u64> = digests
        .iter()
        .map(|d| d.outcome.pair)
        .filter(|&p| t.is_done(p) && !new.contains(&p))
        .collect();
    if let Some(entry) = inner.tournaments.get_mut(&id)
        && entry.games.is_folded()
    {
        entry.games.unfold(digests, |p| counted.contains(&p));
    }
}
