//! People's actions on tests, with the rights each takes: submit, cancel, resume, modify
//! (priority, weight, pair budget), delete from the lists, annotate; and a test's file as
//! submitted, to clone it. The gRPC service and the web pages both go through these
//! methods; each is recorded in the events log.

use std::collections::BTreeMap;

use tourney_model::account::{self, Role};
use tourney_model::source::EngineFacts;

use crate::accounts::Principal;
use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// The largest priority, either way, a test may be given after submission.
pub const MAX_PRIORITY: u32 = 1_000_000;

/// The largest weight a test may be given after submission.
pub const MAX_WEIGHT: f64 = 1e6;

/// A tournament as submitted, for a clone ([`Coordinator::submission_of`]).
#[derive(Debug, Clone, Default)]
pub struct Submission {
    /// The file's name as submitted.
    pub file: String,
    /// Its text as submitted.
    pub text: String,
    /// Its opening suite in the order played (one position a line) when it names an
    /// openings file; else empty.
    pub openings: String,
    /// Its outside engines' programs by sha256, by engine name.
    pub artifacts: BTreeMap<String, String>,
    /// Its engines' commits and data files, by engine name.
    pub engines: BTreeMap<String, EngineFacts>,
}

/// What a change of a running test sets; each field left `None` stays as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Modification {
    /// Its priority (higher first).
    pub priority: Option<i32>,
    /// Its weight: its share of the workers among tests of its priority.
    pub weight: Option<f64>,
    /// Its pair budget: the most pairs it may play.
    pub pair_budget: Option<u64>,
}

/// The longest note of a test, in characters.
pub const MAX_NOTE: usize = 2000;
/// The most links of a test.
pub const MAX_LINKS: usize = 10;
/// The longest link, in bytes.
pub const MAX_LINK: usize = 500;

impl Coordinator {
    /// Submits a tournament file for `by` (at least a user) as its author, recording it:
    /// a user's test waits for approval when the coordinator asks for it. See
    /// [`Coordinator::submit_with`].
    ///
    /// # Errors
    /// Not allowed, or as [`Coordinator::submit_with`].
    pub async fn submit_as(
        &self,
        by: &Principal,
        text: &str,
        file: &str,
        openings_text: &str,
        artifacts: BTreeMap<String, String>,
        facts: BTreeMap<String, EngineFacts>,
    ) -> Result<u64, CoordinatorError> {
        by.require(Role::User)?;
        let origin = crate::Origin {
            tuned_by: None,
            author: Some(by.name.clone()),
            pending: self.settings.approval && !by.operator && by.role == Role::User,
        };
        let id = self
            .submit_with(text, file, openings_text, artifacts, facts, origin)
            .await?;
        self.record_event(by, "submitted", &format!("tournament {id}"), file);
        Ok(id)
    }

    /// Cancels tournament `id` for `by` (its author, an approver or an admin), recording
    /// it. Returns whether it could be cancelled.
    ///
    /// # Errors
    /// Not allowed, or the store failed.
    pub async fn cancel_as(&self, by: &Principal, id: u64) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let cancelled = self.cancel(id).await?;
        if cancelled {
            self.record_event(by, "cancelled", &format!("tournament {id}"), "");
        }
        Ok(cancelled)
    }

    /// Resumes paused or cancelled tournament `id` for `by` (its author, an approver or an
    /// admin), recording it. A user's cancelled test that was never approved waits for an
    /// approver again. Returns whether it was paused or cancelled.
    ///
    /// # Errors
    /// Not allowed, one that cannot be resumed ([`Coordinator::resume`]), or the store
    /// failed.
    pub async fn resume_as(&self, by: &Principal, id: u64) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let unapproved =
            (self.lock().tournaments.get(&id)).is_some_and(|e| e.record.approved_by.is_none());
        let pending = self.settings.approval && !by.operator && by.role == Role::User && unapproved;
        let resumed = self.resume_with(id, pending).await?;
        if resumed {
            self.record_event(by, "resumed", &format!("tournament {id}"), "");
        }
        Ok(resumed)
    }

    /// Changes tournament `id`'s priority, weight and/or pair budget for `by` (its author,
    /// an approver or an admin), recording it. Returns whether it had not ended.
    ///
    /// # Errors
    /// Not allowed, a value out of bounds (priority within ±[`MAX_PRIORITY`], weight above
    /// 0 and at most [`MAX_WEIGHT`], a budget below the pairs handed out or of a format
    /// without one), or the store failed.
    pub async fn modify_as(
        &self,
        by: &Principal,
        id: u64,
        change: Modification,
    ) -> Result<bool, CoordinatorError> {
        let Modification {
            priority,
            weight,
            pair_budget,
        } = change;
        by.require_owner(&self.author(id).unwrap_or_default())?;
        if priority.is_some_and(|p| p.unsigned_abs() > MAX_PRIORITY) {
            return Err(CoordinatorError::Invalid(format!(
                "priority: from -{MAX_PRIORITY} to {MAX_PRIORITY}"
            )));
        }
        if weight.is_some_and(|w| !(w > 0.0 && w <= MAX_WEIGHT)) {
            return Err(CoordinatorError::Invalid(format!(
                "weight: above 0 and at most {MAX_WEIGHT}"
            )));
        }
        let record = {
            let mut inner = self.lock();
            let Some(config) = inner.config(id) else {
                return Ok(false);
            };
            let priority = priority.unwrap_or(config.priority);
            let weight = weight.unwrap_or(config.weight);
            // The scheduler's settings are the one copy; the record is made from them.
            if let Some(pairs) = pair_budget {
                match inner.scheduler.set_pair_budget(id, pairs) {
                    Ok(true) => {}
                    Ok(false) => return Ok(false),
                    Err(why) => return Err(CoordinatorError::Invalid(why)),
                }
            }
            if !inner.scheduler.set_share(id, priority, weight) {
                return Ok(false);
            }
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        let detail = [
            priority.map(|p| format!("priority {p}")),
            weight.map(|w| format!("weight {w}")),
            pair_budget.map(|n| format!("pair budget {n}")),
        ];
        let detail: Vec<String> = detail.into_iter().flatten().collect();
        self.record_event(
            by,
            "modified",
            &format!("tournament {id}"),
            &detail.join(", "),
        );
        Ok(true)
    }

    /// Deletes tournament `id` from the lists (the overview's, searches) for `by` (its
    /// author, an approver or an admin), or brings it back: its games, figures and page
    /// stay. Returns whether it exists.
    ///
    /// # Errors
    /// Not allowed, a test that has not ended (stop it first), or the store failed.
    pub async fn hide_as(
        &self,
        by: &Principal,
        id: u64,
        hidden: bool,
    ) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let record = {
            let mut inner = self.lock();
            let ended = (inner.scheduler.tournament(id)).is_some_and(|t| t.state.has_ended());
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            if hidden && !ended {
                return Err(CoordinatorError::Invalid(format!(
                    "tournament {id} has not ended: stop it before deleting it from the lists"
                )));
            }
            entry.record.hidden = hidden;
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        let action = if hidden { "deleted" } else { "restored" };
        self.record_event(by, action, &format!("tournament {id}"), "");
        Ok(true)
    }

    /// Sets tournament `id`'s note and links for `by` (its author, an approver or an
    /// admin), recording it. Returns whether the tournament exists.
    ///
    /// # Errors
    /// Not allowed, a note longer than [`MAX_NOTE`] characters, more than [`MAX_LINKS`]
    /// links, a link that is not an `http(s)://` address of at most [`MAX_LINK`]
    /// characters, or the store failed.
    pub async fn annotate_as(
        &self,
        by: &Principal,
        id: u64,
        note: &str,
        links: &[String],
    ) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        if note.chars().count() > MAX_NOTE {
            return Err(CoordinatorError::Invalid(format!(
                "a note is at most {MAX_NOTE} characters"
            )));
        }
        if links.len() > MAX_LINKS {
            return Err(CoordinatorError::Invalid(format!(
                "at most {MAX_LINKS} links"
            )));
        }
        if let Some(bad) = links.iter().find(|l| {
            !(l.starts_with("https://") || l.starts_with("http://"))
                || l.len() > MAX_LINK
                || l.chars().any(|c| c.is_whitespace() || c.is_control())
        }) {
            return Err(CoordinatorError::Invalid(format!(
                "link '{}': an http:// or https:// address of at most {MAX_LINK} characters",
                account::cut(bad, 80)
            )));
        }
        let record = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            entry.record.note = note.to_string();
            entry.record.links = links.to_vec();
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        self.record_event(by, "annotated", &format!("tournament {id}"), note);
        Ok(true)
    }

    /// Tournament `id`'s file as submitted, with its name, for a logged-in user to clone.
    pub fn file_of(&self, id: u64) -> Option<(String, String)> {
        let inner = self.lock();
        let record = &inner.tournaments.get(&id)?.record;
        Some((record.file.clone(), record.config_text.clone()))
    }

    /// What tournament `id` was submitted with, to submit it again changed (`tourney
    /// clone`, Admin/GetFile): what [`Coordinator::file_of`] gives, the sha256 of its
    /// programs, its engines' commits and files, and, when it names an openings file, its
    /// suite as its pairs took it (one position a line), so that a clone needs none of the
    /// original files.
    pub fn submission_of(&self, id: u64) -> Option<Submission> {
        let inner = self.lock();
        let entry = inner.tournaments.get(&id)?;
        let record = &entry.record;
        let mut openings = String::new();
        if inner.config(id)?.openings.file.is_some() {
            for line in (0..entry.openings.len()).filter_map(|i| entry.openings.get(i)) {
                openings.push_str(line);
                openings.push('\n');
            }
        }
        Some(Submission {
            file: record.file.clone(),
            text: record.config_text.clone(),
            openings,
            artifacts: record.artifacts.clone(),
            engines: record.engines.clone(),
        })
    }
}
