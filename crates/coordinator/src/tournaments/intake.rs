//! Intake: tournaments submitted (checked, their opening suite made, stored before they
//! are scheduled). What happens to them afterwards is in [`crate::tournaments::lifecycle`].

use std::collections::BTreeMap;
use std::sync::Arc;

use tourney_model::source::{EngineFacts, is_sha256};
use tourney_model::tournament::{State, TournamentConfig};
use tourney_rules::with_position;
use tourney_store::{OpeningSuite, TournamentRecord};

use crate::scheduler::TournamentId;
use crate::state::{Coordinator, Entry};
use crate::types::{CoordinatorError, Origin};

/// The most openings generated for a tournament: one per pair up to this many. A suite
/// of `plies` random plies holds 40 bytes or so an opening.
pub(crate) const GENERATED_OPENINGS_MAX: u64 = 100_000;

/// The most openings generated when each must be judged balanced by a search: about 75 µs
/// an opening (`ab:depth=2`, LOA), so 20,000 take 1.5 s at submission.
pub(crate) const BALANCED_OPENINGS_MAX: u64 = 20_000;

/// The opening suite of a tournament, from the openings file's text or generated, in the
/// order its pairs take it.
fn openings_of(
    config: &TournamentConfig,
    file_text: &str,
    judge_budget: u64,
) -> Result<Vec<String>, CoordinatorError> {
    let o = &config.openings;
    let suite = suite_of(config, file_text, judge_budget)?;
    Ok(tourney_plan::openings::arrange(
        suite, o.order, o.seed, o.offset,
    ))
}

/// The opening suite of a tournament as its file or its generator gives it.
fn suite_of(
    config: &TournamentConfig,
    file_text: &str,
    judge_budget: u64,
) -> Result<Vec<String>, CoordinatorError> {
    let o = &config.openings;
    if let Some(name) = &o.file {
        return Ok(tourney_plan::check::openings_file(config, file_text, name)?);
    }
    // As many as the tournament can play, up to a bound (said in its status when smaller).
    let most = if o.balanced.is_some() {
        BALANCED_OPENINGS_MAX
    } else {
        GENERATED_OPENINGS_MAX
    };
    let settings = tourney_plan::openings::OpeningSettings {
        plies: o.plies.unwrap_or(4),
        count: config.openings_wanted().clamp(1, most) as usize,
        seed: o.seed,
        rules: config.rules_text(),
        balanced: o.balanced.clone().map(|spec| (spec, o.max_score)),
        judge_budget: Some(judge_budget),
    };
    with_position!(config.game, P => tourney_plan::openings::generate_up_to::<P>(&settings))
        .map_err(|e| CoordinatorError::Invalid(format!("openings: {e}")))
}

/// The largest openings file a tournament names by sha256 (an uploaded book), read
/// whole at submission.
pub(crate) const MAX_BOOK_BYTES: usize = 16 << 20;

impl Coordinator {
    /// The text of the uploaded openings file of sha256 `sha` (`openings.file`).
    ///
    /// # Errors
    /// It is not stored here (never uploaded, or only linked), larger than
    /// [`MAX_BOOK_BYTES`], or not text.
    fn book(&self, sha: &str) -> Result<String, CoordinatorError> {
        let why = |e: String| CoordinatorError::Invalid(format!("openings.file: {sha}: {e}"));
        let Some((bytes, size)) = self.store.read_artifact(sha, 0, MAX_BOOK_BYTES)? else {
            return Err(why(
                "no file of this sha256 was uploaded (a linked one is not read here: upload \
                 it, as `tourney version add --preset NAME=book:PATH` does)"
                    .into(),
            ));
        };
        if size > MAX_BOOK_BYTES as u64 {
            return Err(why(format!(
                "{size} bytes, more than the {} MiB a book may have",
                MAX_BOOK_BYTES >> 20
            )));
        }
        String::from_utf8(bytes).map_err(|_| why("not UTF-8 text".into()))
    }
}

impl Coordinator {
    /// Submits a tournament file; returns its id.
    ///
    /// # Errors
    /// A message naming the problem (file, line, key) if the tournament is not valid.
    pub async fn submit(
        &self,
        text: &str,
        file: &str,
        openings_text: &str,
        artifacts: BTreeMap<String, String>,
    ) -> Result<TournamentId, CoordinatorError> {
        self.submit_with(
            text,
            file,
            openings_text,
            artifacts,
            BTreeMap::new(),
            Origin::default(),
        )
        .await
    }

    /// [`Coordinator::submit`] with what the submitter resolved of its engines (`facts`,
    /// by engine name): the commits of engines built from source and the sha256 of their
    /// uploaded data files, and where it comes from (its author, whether it waits for an
    /// approver, the tuning run whose verification SPRT it is).
    ///
    /// # Errors
    /// As [`Coordinator::submit`]; also a commit not resolved or a data file not uploaded.
    pub async fn submit_with(
        &self,
        text: &str,
        file: &str,
        openings_text: &str,
        artifacts: BTreeMap<String, String>,
        facts: BTreeMap<String, EngineFacts>,
        origin: Origin,
    ) -> Result<TournamentId, CoordinatorError> {
        let Origin {
            tuned_by,
            author,
            pending,
        } = origin;
        let state = if pending {
            State::Pending
        } else {
            State::Queued
        };
        let live = (self.lock().scheduler.tournaments())
            .filter(|t| {
                matches!(
                    t.state,
                    State::Queued | State::Running | State::Paused | State::Pending
                )
            })
            .count();
        let most = self.settings.max_live_tournaments;
        if live >= most {
            return Err(CoordinatorError::Exhausted(format!(
                "{live} tournaments are queued, running or paused, the most this coordinator \
                 takes: cancel one or wait until one ends"
            )));
        }
        let mut config = TournamentConfig::parse(text, file)?;
        let programs = {
            let inner = self.lock();
            config.resolve_versions(|name| inner.versions.get(name).cloned())
        }
        .map_err(|e| e.located(text, file))?;
        if let Some(name) = facts
            .keys()
            .find(|n| config.engines.iter().all(|e| &e.name != *n))
        {
            return Err(CoordinatorError::Invalid(format!(
                "{file}: commits or files for '{name}', which is not an engine of it"
            )));
        }
        config
            .apply_facts(&facts)
            .map_err(|e| CoordinatorError::Invalid(format!("{file}: {e}")))?;
        tourney_plan::check::check_players(&config, text, file)?;
        for engine in &config.engines {
            for (name, sha) in &engine.files {
                if !self.store.has_artifact(sha)? {
                    return Err(CoordinatorError::Invalid(format!(
                        "{file}: file '{name}' of '{}' ({sha}) was not uploaded",
                        engine.name
                    )));
                }
            }
        }
        let mut artifacts = artifacts;
        for (name, sha) in programs {
            artifacts.entry(name).or_insert(sha);
        }
        for (name, sha) in &artifacts {
            if !config
                .engines
                .iter()
                .any(|e| &e.name == name && e.command.is_some())
            {
                return Err(CoordinatorError::Invalid(format!(
                    "artifact for '{name}', which is not an outside engine of {file}"
                )));
            }
            if !self.store.has_artifact(sha)? {
                return Err(CoordinatorError::Invalid(format!(
                    "artifact {sha} of '{name}' was not uploaded"
                )));
            }
        }
        // An openings file named by the sha256 of an uploaded file (a preset's book), when
        // its text is not sent with the tournament.
        let book = match &config.openings.file {
            Some(sha) if openings_text.is_empty() && is_sha256(sha) => Some(self.book(sha)?),
            _ => None,
        };
        let openings_text = book.as_deref().unwrap_or(openings_text);
        // Made on a blocking thread, one suite at a time: the runtime's threads keep
        // serving leases and reports meanwhile.
        let openings = {
            let _turn = self
                .generating
                .acquire()
                .await
                .map_err(|_| CoordinatorError::Closed)?;
            let (config, openings_text) = (config.clone(), openings_text.to_string());
            let budget = self.settings.judge_budget;
            tokio::task::spawn_blocking(move || openings_of(&config, &openings_text, budget))
                .await
                .map_err(|e| CoordinatorError::Invalid(format!("openings: {e}")))??
        };
        let id = self.store.next_tournament_id()?;
        let created_ms = tourney_model::unix_ms_now();
        let openings = OpeningSuite::new(&openings);
        let record = TournamentRecord {
            id,
            config_text: text.to_string(),
            file: file.to_string(),
            openings: Vec::new(),
            state,
            created_ms,
            artifacts: artifacts.clone(),
            engines: facts,
            paused_reason: None,
            paused_log: None,
            ended_ms: None,
            exclusions: Vec::new(),
            archived_ms: None,
            verification: None,
            tuned_by,
            author,
            approved_by: None,
            priority: None,
            weight: None,
            note: String::new(),
            links: Vec::new(),
            pair_budget: None,
            hidden: false,
            pool_members: Vec::new(),
        };
        self.store.put_openings(id, &openings)?;
        self.store.put_tournament(&record)?;
        self.store.flush().await?;
        let mut inner = self.lock();
        let settings = Arc::new(tourney_model::job::GameSettings::of(&config));
        inner.scheduler.add(id, config, state, Vec::new());
        let author = record.author.as_deref().unwrap_or_default();
        inner.scheduler.set_author(id, author);
        let entry = Entry {
            record,
            openings,
            settings,
            artifacts: Arc::new(artifacts),
            ratings: None,
            workers: Default::default(),
            games: Default::default(),
            tuning: Default::default(),
            verifying: false,
            suspects_told: 0,
            gates_told: 0,
        };
        inner.tournaments.insert(id, entry);
        drop(inner);
        self.changed();
        Ok(id)
    }
}
