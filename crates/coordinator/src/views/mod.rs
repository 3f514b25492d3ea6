//! Views: what the coordinator shows of its tournaments: status with ratings (cached
//! while a tournament runs), reports and the metrics text; stored games and exports in
//! `exports.rs`.

pub(crate) mod details;
pub(crate) mod downloads;
pub(crate) mod search;
use std::collections::HashMap;
use std::sync::Arc;

use tourney_model::tournament::{Format, PairOutcome, TournamentConfig};
use tourney_model::{GameRecord, Termination};
use tourney_report::{
    AdjudicationCheck, Crosstable, OpeningResult, Report, SprtReport, WorkersReport,
};
use tourney_stats::{GameResult, GameTable};

use crate::metrics::TournamentGauges;
use crate::pool_metrics::PoolEngine;
use crate::scheduler::{TournamentId, sprt_of};
use crate::state::Coordinator;
use crate::types::{CachedRatings, Status};

pub(crate) mod exports;

pub(crate) fn game_table(config: &TournamentConfig, outcomes: &[PairOutcome]) -> GameTable {
    let mut table = GameTable::new();
    for engine in &config.engines {
        table.player(&engine.name);
    }
    add_games(&mut table, config, outcomes, |i| {
        Some(&config.engines[i].name)
    });
    table
}

/// Adds the games of `outcomes` to `table`, each engine (by index) under the name
/// `name_of` gives it; games of an engine without one are left out.
pub(crate) fn add_games<'a>(
    table: &mut GameTable,
    config: &TournamentConfig,
    outcomes: &[PairOutcome],
    name_of: impl Fn(usize) -> Option<&'a str>,
) {
    // Counted by engine index first: the table's lookups by name would cost more than the
    // rating itself over thousands of pairs.
    let n = config.engines.len();
    let mut counts = vec![[0u64; 3]; n * n];
    for o in outcomes {
        for g in 0..2 {
            let white = o.white[g];
            let black = if white == o.first { o.second } else { o.first };
            // White wins, draw, black wins.
            counts[white * n + black][2 - o.white_half_points(g) as usize] += 1;
        }
    }
    let results = [
        GameResult::WhiteWins,
        GameResult::Draw,
        GameResult::BlackWins,
    ];
    for (cell, count) in counts.iter().enumerate() {
        let (Some(white), Some(black)) = (name_of(cell / n), name_of(cell % n)) else {
            continue;
        };
        for (result, &k) in results.iter().zip(count) {
            if k > 0 {
                table.add_many(white, black, *result, k);
            }
        }
    }
}

/// What a report says of the games that repeat an earlier game move for move: how many,
/// in which pairs, and how many of them the standings and the SPRT count (`in_sprt` of
/// the pairs holding one are among its `counted` pairs).
fn duplicate_note(status: &Status, sprt: Option<(u64, u64)>) -> Vec<String> {
    if status.duplicate_games == 0 {
        return Vec::new();
    }
    let games = 2 * status.pairs_done;
    let shown: Vec<String> = status.duplicate_pairs.iter().map(u64::to_string).collect();
    let more = if status.duplicate_pair_count > shown.len() as u64 {
        ", …"
    } else {
        ""
    };
    let mut note = format!(
        "{} of the {games} games repeat an earlier game move for move (same players, colours, \
         start and moves; {} distinct), in {} pairs ({}{more}): they are counted by the \
         standings as if they were new evidence",
        status.duplicate_games,
        games - status.duplicate_games,
        status.duplicate_pair_count,
        shown.join(", ")
    );
    if let Some((in_sprt, counted)) = sprt {
        note += &format!(", and {in_sprt} of the SPRT's {counted} pairs hold one");
    }
    vec![note + "."]
}

/// A report of `status` over its counted pairs in pair order, of which those below
/// `prefix` follow each other without a pair missing (excluded pairs aside).
fn report_from(
    status: Status,
    outcomes: &[PairOutcome],
    prefix: u64,
    terminations: Vec<(String, u64)>,
) -> Report {
    let config = &status.config;
    let table = game_table(config, outcomes);
    let names: Vec<String> = status
        .ratings
        .players
        .iter()
        .map(|p| p.name.clone())
        .collect();
    let sprt = sprt_of(config).and_then(|sprt| {
        // The sequential test counts the prefix of completed pairs in index order; its
        // estimate covers every counted pair, as the standings do.
        let pairs: Vec<[u8; 2]> = outcomes.iter().map(|o| o.half_points).collect();
        let sequential = outcomes.iter().take_while(|o| o.pair < prefix).count();
        SprtReport::from_pairs(sprt, &pairs, sequential, 200).ok()
    });
    Report {
        title: format!(
            "{} (#{}, {}, {}, {})",
            config.name,
            status.id,
            config.game,
            config.format.name(),
            status.state_name()
        ),
        details: Vec::new(),
        notes: Vec::new(),
        crosstable: Crosstable::new(&table, &names),
        ratings: status.ratings,
        sprt,
        terminations,
        openings: opening_results(config, outcomes, status.openings),
        engine_failures: Vec::new(),
        latency: Vec::new(),
        workers: Default::default(),
        timeline: None,
        spsa: None,
        progress: status.progress.clone(),
        adjudication_check: None,
    }
}

/// How many openings of a suite of `suite` the pairs in `outcomes` were played from.
fn openings_used(config: &TournamentConfig, outcomes: &[PairOutcome], suite: usize) -> usize {
    let suite = suite.max(1) as u64;
    let used: std::collections::HashSet<u64> = (outcomes.iter())
        .flat_map(|o| config.pair_openings(o.pair))
        .map(|opening| opening % suite)
        .collect();
    used.len()
}

/// White's results per opening of a suite of `suite` openings, most lopsided first; their
/// positions are for the caller to fill in.
fn opening_results(
    config: &TournamentConfig,
    outcomes: &[PairOutcome],
    suite: u64,
) -> Vec<OpeningResult> {
    let mut by_opening: HashMap<u64, (u64, u64)> = HashMap::new();
    for o in outcomes {
        let index = config.pair_openings(o.pair)[0] % suite.max(1);
        let (games, white_halves) = by_opening.entry(index).or_default();
        *games += 2;
        *white_halves += u64::from(o.white_half_points(0)) + u64::from(o.white_half_points(1));
    }
    Report::most_lopsided(
        by_opening
            .into_iter()
            .map(|(index, (games, white_halves))| OpeningResult {
                index,
                position: String::new(),
                games,
                white_points: white_halves as f64 / 2.0,
            })
            .collect(),
    )
}

/// A rating pool's engines in the order they joined, rated as its standings rate them,
/// while it has not ended (`None` for other formats, and once it has).
fn pool_engines(s: &Status) -> Option<Vec<PoolEngine<'_>>> {
    if s.config.format != Format::Pool || s.ended_ms.is_some() {
        return None;
    }
    let rated = |name: &str| s.ratings.players.iter().find(|p| p.name == name);
    Some(
        (s.config.engines.iter())
            .map(|e| {
                let rating = rated(&e.name);
                PoolEngine {
                    name: &e.name,
                    elo: rating.map_or(0.0, |p| p.elo),
                    interval: rating.map_or(0.0, |p| p.plus.max(p.minus)),
                    games: rating.map_or(0, |p| p.games),
                }
            })
            .collect(),
    )
}

impl Coordinator {
    /// Every metric in the Prometheus text format, gauges read from the current state.
    /// Tournaments that ended more than [`Settings::metrics_retention_ms`] ago have their
    /// series removed.
    pub fn metrics_text(&self) -> String {
        let now = tourney_model::unix_ms_now();
        let retention = self.settings.metrics_retention_ms;
        let (statuses, expired): (Vec<Status>, Vec<Status>) = self
            .ids()
            .into_iter()
            .filter_map(|id| self.status(id))
            .partition(|s| {
                s.ended_ms
                    .is_none_or(|end| now.saturating_sub(end) < retention)
            });
        for s in &expired {
            let engines: Vec<&str> = s.config.engines.iter().map(|e| e.name.as_str()).collect();
            let info = [
                s.config.name.as_str(),
                s.config.game.name(),
                s.config.format.name(),
            ];
            self.metrics.forget_tournament(s.id, info, &engines);
        }
        let gauges: Vec<TournamentGauges<'_>> = statuses
            .iter()
            .map(|s| TournamentGauges {
                id: s.id,
                info: [&s.config.name, s.config.game.name(), s.config.format.name()],
                state: s.state_name(),
                pending: s
                    .pairs_planned()
                    .map(|planned| planned.saturating_sub(s.pairs_done + s.pairs_leased)),
                leased: s.pairs_leased,
                done: s.pairs_done,
                excluded: s.pairs_excluded,
                suspects: s.suspect_workers,
                llr: s.sprt.as_ref().map(|sprt| sprt.llr),
                share: s.share,
                // A rating pool's engines (up to 256) have their own, bounded gauges.
                elo: (s.ratings.players.iter())
                    .filter(|_| s.config.format != Format::Pool)
                    .map(|p| (p.name.as_str(), p.elo))
                    .collect(),
                pool: pool_engines(s),
            })
            .collect();
        self.metrics.set_gauges(&self.workers(), &gauges);
        self.metrics.encode()
    }

    /// A page of tournaments, newest first: up to `size` of those older than `after` (all
    /// from the newest when `None`), and where the next page starts after, if there is one.
    pub fn page(
        &self,
        after: Option<TournamentId>,
        size: usize,
    ) -> (Vec<Status>, Option<TournamentId>) {
        let ids: Vec<TournamentId> = {
            let inner = self.lock();
            (inner.tournaments.iter().rev())
                .filter(|&(&id, e)| after.is_none_or(|a| id < a) && !e.record.hidden)
                .take(size.max(1) + 1)
                .map(|(&id, _)| id)
                .collect()
        };
        let more = ids.len() > size.max(1);
        let page: Vec<Status> = ids
            .into_iter()
            .take(size.max(1))
            .filter_map(|id| self.status(id))
            .collect();
        let next = more.then(|| page.last().map(|s| s.id)).flatten();
        (page, next)
    }

    /// How many tournaments there are.
    pub fn tournament_count(&self) -> usize {
        self.lock().tournaments.len()
    }

    /// A tournament's status with standings.
    pub fn status(&self, id: TournamentId) -> Option<Status> {
        self.snapshot(id, false).map(|(status, ..)| status)
    }

    /// A tournament's status, its workers' assessment (which gives the status its suspect
    /// count), and with `with_outcomes` its counted pairs in pair order and its completed
    /// prefix.
    /// Ratings are computed once for each number of completed pairs, and for a running
    /// tournament at most every [`RATINGS_EVERY`]; the pairs are copied only when they are
    /// needed.
    fn snapshot(
        &self,
        id: TournamentId,
        with_outcomes: bool,
    ) -> Option<(Status, Vec<PairOutcome>, u64, WorkersReport)> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let share = inner.scheduler.share_of(id, self.now_ms());
        let t = inner.scheduler.tournament(id)?;
        let entry = inner.tournaments.get(&id)?;
        let config = Arc::clone(&t.config);
        let (state, pairs_done, pairs_leased, sprt, prefix, pairs_excluded) = (
            t.state,
            t.pairs_done(),
            t.pairs_leased() as u64,
            t.sprt_status(),
            t.prefix(),
            t.pairs_excluded(),
        );
        let cached = entry
            .ratings
            .as_ref()
            .filter(|c| c.fresh(pairs_done, state.is_active(), self.now_ms()))
            .map(|c| c.ratings.clone());
        let outcomes: Vec<PairOutcome> = if with_outcomes || cached.is_none() {
            t.counted().collect()
        } else {
            Vec::new()
        };
        let record = &entry.record;
        let paused_reason = record.paused_reason.clone();
        let (created_ms, ended_ms) = (record.created_ms, record.ended_ms);
        let openings = entry.openings.len() as u64;
        let duplicate_games = entry.games.repeats;
        let duplicate_pairs: Vec<u64> = (entry.games.pairs.iter().copied())
            .take(crate::types::DUPLICATE_PAIRS_LISTED)
            .collect();
        let duplicate_pair_count = entry.games.pairs.len() as u64;
        let workers = entry.workers.assess(&record.excluded_workers());
        let suspect_workers = workers.suspects;
        let author = record.author.clone();
        let progress =
            (t.planner()).and_then(|p| crate::tournaments::progress::progress(&config, p));
        let eligibility = if t.state.is_active() {
            (inner.fleet).eligibility(&config, self.now_ms(), self.settings.lease_ms)
        } else {
            crate::fleet::profiles::Eligibility::default()
        };
        drop(guard);
        let ratings = cached.unwrap_or_else(|| {
            let table = game_table(&config, &outcomes);
            let ratings = crate::tournaments::standings::standings(&config, &table);
            let cached = CachedRatings {
                pairs: pairs_done,
                at_ms: self.now_ms(),
                ratings: ratings.clone(),
            };
            if let Some(entry) = self.lock().tournaments.get_mut(&id) {
                entry.ratings = Some(cached);
            }
            ratings
        });
        let positions = config.datagen().map(|d| {
            let held = self.datasets.summary(id).map_or(0, |s| s.positions);
            (held, d.positions)
        });
        let status = Status {
            share,
            positions,
            progress,
            id,
            config,
            state,
            pairs_done,
            pairs_leased,
            ratings,
            sprt,
            paused_reason,
            created_ms,
            ended_ms,
            openings,
            duplicate_games,
            duplicate_pairs,
            duplicate_pair_count,
            pairs_excluded,
            suspect_workers,
            author,
            eligibility,
        };
        Some((status, outcomes, prefix, workers))
    }

    /// The report of a tournament (standings, cross-table, SPRT history, terminations),
    /// from what the coordinator holds in memory, with its status.
    pub fn report_of(&self, id: TournamentId) -> Option<(Status, Report)> {
        let (status, outcomes, prefix, workers) = self.snapshot(id, true)?;
        let (terminations, engine_failures, details, check) = {
            let inner = self.lock();
            let entry = inner.tournaments.get(&id)?;
            let config = inner.config(id)?;
            let exclusions = entry.record.excluded_workers();
            let excluded = |host: &str| exclusions.contains_key(host);
            let mut terminations: Vec<(String, u64)> = entry
                .workers
                .terminations(&excluded)
                .into_iter()
                .map(|(t, n)| (t.name().to_string(), n))
                .collect();
            terminations.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let [agreed, overturned] = entry.workers.played_on(&excluded);
            let share = config.adjudication.play_on;
            let adjudicated = (terminations.iter())
                .find(|(t, _)| t == Termination::Adjudication.name())
                .map_or(0, |(_, n)| *n);
            let check = (share > 0.0 || agreed + overturned > 0).then_some(AdjudicationCheck {
                adjudicated,
                share,
                played_on: agreed + overturned,
                overturned,
            });
            let engine_failures = entry
                .workers
                .engine_failures(&excluded)
                .into_iter()
                .map(|((engine, t), n)| {
                    (config.engines[engine].name.clone(), t.name().to_string(), n)
                })
                .collect();
            let now_ms = tourney_model::unix_ms_now();
            let hosts = (workers.workers.iter()).map(|w| w.worker.clone()).collect();
            let input = crate::views::details::DetailsInput {
                openings: entry.openings.len(),
                openings_used: openings_used(config, &outcomes, entry.openings.len()),
                artifacts: &entry.artifacts,
                hosts,
                now_ms,
            };
            let mut details = crate::views::details::details(&status, &input);
            if let Some(author) = &entry.record.author {
                let by = match &entry.record.approved_by {
                    Some(approver) => format!("{author}, approved by {approver}"),
                    None => author.clone(),
                };
                details.insert(0, ("Submitted by".to_string(), by));
            }
            if !entry.record.note.is_empty() {
                details.push(("Note".to_string(), entry.record.note.clone()));
            }
            if !entry.record.links.is_empty() {
                details.push(("Links".to_string(), entry.record.links.join(" ")));
            }
            (terminations, engine_failures, details, check)
        };
        let mut report = report_from(status.clone(), &outcomes, prefix, terminations);
        let mut guard = self.lock();
        let inner = &mut *guard;
        if let (Some(entry), Some(t)) = (
            inner.tournaments.get_mut(&id),
            inner.scheduler.tournament(id),
        ) {
            report.spsa = crate::tournaments::tuning::report(entry, t);
            for o in &mut report.openings {
                o.position = (entry.openings.get(o.index as usize))
                    .unwrap_or_default()
                    .to_string();
            }
        }
        drop(guard);
        report.details = details;
        report.adjudication_check = check;
        report.engine_failures = engine_failures;
        report.latency = self.latency(id);
        report.workers = workers;
        let sprt = report.sprt.as_ref().map(|s| {
            let counted = s.sequential_pairs;
            let inner = self.lock();
            let in_sprt = inner
                .tournaments
                .get(&id)
                .map_or(0, |e| e.games.pairs.range(..counted).count() as u64);
            (in_sprt, counted)
        });
        report.notes = duplicate_note(&status, sprt);
        if let Some(reason) = &status.paused_reason {
            report.notes.insert(0, format!("Paused: {reason}"));
        }
        if status.state == tourney_model::tournament::State::Pending {
            report.notes.insert(
                0,
                format!(
                    "Waiting for approval: an approver other than its author approves it \
                     (tourney approve {id}); nothing is played until then."
                ),
            );
        }
        if status.pairs_excluded > 0 {
            report.notes.push(format!(
                "{} completed pairs are left out of every figure: their workers' results are excluded (see Workers).",
                status.pairs_excluded
            ));
        }
        Some((status, report))
    }

    /// Each outside engine's latency over the moves whose search time it reported, in the
    /// first [`LATENCY_PAIRS`] pairs stored (none while the store cannot be read).
    fn latency(&self, id: TournamentId) -> Vec<tourney_report::EngineLatency> {
        if self.readable(id).is_err() {
            return Vec::new();
        }
        let Ok(pairs) = self.store.pair_games_from(id, 0, LATENCY_PAIRS) else {
            return Vec::new();
        };
        let mut per_engine: std::collections::BTreeMap<String, Vec<u64>> = Default::default();
        for game in pairs.iter().flat_map(|p| &p.games) {
            let Some(record) = game
                .to_json()
                .ok()
                .and_then(|j| serde_json::from_str::<GameRecord>(&j).ok())
            else {
                continue;
            };
            let mut white = !record.start.ends_with(" b");
            for m in &record.moves {
                let side = if white { &record.white } else { &record.black };
                if let Some(own) = m.engine_ms {
                    (per_engine.entry(side.name.clone()).or_default())
                        .push(m.time_ms.saturating_sub(own));
                }
                white = !white;
            }
        }
        tourney_report::EngineLatency::of(per_engine)
    }
}

/// The most pairs (the first ones stored) a report's engine latency is measured over: a
/// report reads them from the store, so it stays quick however long the tournament.
const LATENCY_PAIRS: usize = 1_000;
