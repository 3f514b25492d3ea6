//! Engine versions and the regression timeline: versions are registered once and used by
//! name in tournament files; the timeline rates every version jointly (BayesElo) from the
//! counted games of every tournament between two versions, anchored at one of them, with
//! the tournaments that measured each.

use std::collections::{BTreeMap, BTreeSet};

use tourney_model::version::EngineVersion;
use tourney_report::{Report, TimelineReport, TimelineRow};
use tourney_stats::{BayesElo, GameTable, PlayerRating};

use crate::scheduler::TournamentId;
use crate::state::Coordinator;
use crate::types::{CoordinatorError, Status};

/// The most versions a coordinator registers.
pub const MAX_VERSIONS: usize = 10_000;

/// One version on the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// The version.
    pub version: EngineVersion,
    /// Its joint rating, if it played another version.
    pub rating: Option<PlayerRating>,
    /// The tournaments whose games between versions it played in.
    pub tournaments: Vec<TournamentId>,
}

/// Every version, oldest first, rated jointly.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The version rated 0.
    pub anchor: Option<String>,
    /// The versions, by registration time.
    pub entries: Vec<TimelineEntry>,
    /// Games between versions counted.
    pub games: u64,
}

impl Timeline {
    /// The timeline as a report (text, HTML with its chart).
    pub fn report(&self) -> TimelineReport {
        TimelineReport {
            anchor: self.anchor.clone().unwrap_or_default(),
            games: self.games,
            rows: self
                .entries
                .iter()
                .map(|e| TimelineRow {
                    name: e.version.name.clone(),
                    parent: e.version.parent.clone().unwrap_or_default(),
                    plays: e.version.describe(),
                    elo: e.rating.as_ref().map(|r| r.elo),
                    plus: e.rating.as_ref().map_or(0.0, |r| r.plus),
                    minus: e.rating.as_ref().map_or(0.0, |r| r.minus),
                    games: e.rating.as_ref().map_or(0, |r| r.games),
                    score: e.rating.as_ref().map_or(0.0, |r| r.score),
                    tournaments: e.tournaments.clone(),
                })
                .collect(),
        }
    }
}

impl Coordinator {
    /// Registers `version` (its `created_ms` set now). With `replace`, a version of its
    /// name that no tournament has used is replaced.
    ///
    /// # Errors
    /// It is not a valid version (a spec that builds for neither game, a program not
    /// uploaded, an unknown parent), its name is taken (and used, or `replace` was not
    /// asked), or the store failed.
    pub fn add_version(
        &self,
        mut version: EngineVersion,
        replace: bool,
    ) -> Result<(), CoordinatorError> {
        let invalid = |message: String| {
            CoordinatorError::Invalid(format!("version {}: {message}", version.name))
        };
        version.check().map_err(invalid)?;
        if let Some(spec) = &version.player {
            tourney_plan::check::check_spec(spec)
                .map_err(|e| invalid(format!("player {spec}: {e}")))?;
        }
        if let Some(sha) = &version.artifact
            && !self.store.has_artifact(sha)?
        {
            return Err(invalid(format!("program {sha} was not uploaded")));
        }
        for (name, sha) in &version.files {
            if !self.store.has_artifact(sha)? {
                return Err(invalid(format!("file '{name}' ({sha}) was not uploaded")));
            }
        }
        for (name, spec) in &version.presets {
            let book = tourney_model::tournament::followup::preset_changes(spec)
                .map_err(|e| invalid(format!("preset {name}: {e}")))?
                .book;
            if let Some(sha) = book
                && self.store.artifact_size(&sha)?.is_none()
            {
                return Err(invalid(format!(
                    "preset {name}: book {sha} was not uploaded (give its path to `tourney \
                     version add --preset`, which uploads it)"
                )));
            }
        }
        version.created_ms = tourney_model::unix_ms_now();
        let mut inner = self.lock();
        if let Some(parent) = &version.parent
            && !inner.versions.contains_key(parent)
        {
            return Err(invalid(format!("no parent version '{parent}'")));
        }
        if inner.versions.contains_key(&version.name) {
            let used = (inner.scheduler.tournaments())
                .find(|t| t.config.versions().contains(&Some(version.name.as_str())));
            match (replace, used) {
                (false, _) => {
                    return Err(invalid(
                        "exists already: a changed engine is a new version (pick a new name, \
                         with this one as its parent)"
                            .into(),
                    ));
                }
                (true, Some(t)) if t.pairs_done() > 0 => {
                    return Err(invalid(format!(
                        "has played (tournament {}): a version that has played never changes",
                        t.id
                    )));
                }
                (true, Some(t)) => {
                    return Err(invalid(format!(
                        "tournament {} names it (no pair played yet): a version a test names \
                         never changes; cancel that test, register the fix under a new name \
                         (`--parent {}`) and submit the test's file with it (`tourney clone \
                         {} --print` gives the file)",
                        t.id, version.name, t.id
                    )));
                }
                (true, None) => {}
            }
        } else if inner.versions.len() >= MAX_VERSIONS {
            return Err(CoordinatorError::Exhausted(format!(
                "{MAX_VERSIONS} versions are registered already"
            )));
        }
        self.store.put_version(&version)?;
        tracing::info!(version = %version.name, plays = %version.describe(), "version registered");
        inner.versions.insert(version.name.clone(), version);
        Ok(())
    }

    /// [`Coordinator::report_of`] with, for a tournament between versions, the timeline of
    /// every version: what `GetReport` renders (the dashboard's live view, which
    /// shows no timeline, does without the work of rating all versions).
    pub fn report_with_timeline(&self, id: TournamentId) -> Option<(Status, Report)> {
        let (status, mut report) = self.report_of(id)?;
        if status.config.versions().iter().any(Option::is_some) {
            report.timeline = self.timeline(None).ok().map(|t| t.report());
        }
        Some((status, report))
    }

    /// When each of `names` was registered, Unix milliseconds (`None`: no name, or no
    /// such version).
    pub fn registered_ms(&self, names: &[Option<&str>]) -> Vec<Option<u64>> {
        let inner = self.lock();
        (names.iter())
            .map(|name| Some(inner.versions.get((*name)?)?.created_ms))
            .collect()
    }

    /// Every registered version, oldest first.
    pub fn versions(&self) -> Vec<EngineVersion> {
        let mut all: Vec<EngineVersion> = self.lock().versions.values().cloned().collect();
        all.sort_by(|a, b| (a.created_ms, &a.name).cmp(&(b.created_ms, &b.name)));
        all
    }

    /// The regression timeline: every version rated jointly from the counted games of all
    /// tournaments between versions, `anchor` (by default the oldest version rated) at 0.
    ///
    /// # Errors
    /// `anchor` is not a version with games between versions.
    pub fn timeline(&self, anchor: Option<&str>) -> Result<Timeline, CoordinatorError> {
        let played: Vec<_> = {
            let inner = self.lock();
            (inner.scheduler.tournaments())
                .filter(|t| t.config.versions().iter().flatten().count() >= 2)
                .map(|t| (t.id, t.config.clone(), t.counted().collect::<Vec<_>>()))
                .collect()
        };
        let mut table = GameTable::new();
        let mut measured: BTreeMap<String, BTreeSet<TournamentId>> = BTreeMap::new();
        for (id, config, outcomes) in &played {
            let versions = config.versions();
            crate::views::add_games(&mut table, config, outcomes, |i| versions[i]);
            for o in outcomes {
                if let (Some(a), Some(b)) = (versions[o.first], versions[o.second]) {
                    for v in [a, b] {
                        measured.entry(v.to_string()).or_default().insert(*id);
                    }
                }
            }
        }
        let games = (0..table.names().len())
            .map(|i| table.games_of(i))
            .sum::<u64>()
            / 2;
        let versions = self.versions();
        let rated = table.names();
        let anchor = match anchor {
            Some(a) if !rated.iter().any(|n| n == a) => {
                return Err(CoordinatorError::Invalid(format!(
                    "anchor '{a}': not a version with games against another version"
                )));
            }
            Some(a) => Some(a.to_string()),
            None => versions
                .iter()
                .find(|v| rated.contains(&v.name))
                .map(|v| v.name.clone()),
        };
        let ratings = BayesElo {
            anchor: anchor.clone(),
            ..BayesElo::default()
        }
        .rate(&table);
        let entries = versions
            .into_iter()
            .map(|version| TimelineEntry {
                rating: ratings
                    .players
                    .iter()
                    .find(|p| p.name == version.name)
                    .cloned(),
                tournaments: measured
                    .get(&version.name)
                    .map(|t| t.iter().copied().collect())
                    .unwrap_or_default(),
                version,
            })
            .collect();
        Ok(Timeline {
            anchor,
            entries,
            games,
        })
    }
}
