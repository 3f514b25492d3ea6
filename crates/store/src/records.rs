//! What the store keeps: tournaments (with their exclusions and opening suites) and
//! pair records.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tourney_model::GameRecord;
use tourney_model::tournament::{PairOutcome, State};

use crate::StoreError;

/// A tournament as stored: its file and where it is (its opening suite is stored apart,
/// see [`Store::openings`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TournamentRecord {
    /// Its number.
    pub id: u64,
    /// The tournament file's text, as submitted.
    pub config_text: String,
    /// The file name it was submitted from.
    pub file: String,
    /// The opening suite, in records written before suites were stored apart: moved to
    /// [`Store::openings`] as the store opens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub openings: Vec<String>,
    /// Where it is.
    pub state: State,
    /// Submission time, Unix milliseconds.
    pub created_ms: u64,
    /// Artifact sha256 per outside engine name.
    #[serde(default)]
    pub artifacts: std::collections::BTreeMap<String, String>,
    /// What its engines are beyond its file, by engine name: resolved commits, uploaded
    /// data files, learnt bench signatures.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub engines: std::collections::BTreeMap<String, tourney_model::source::EngineFacts>,
    /// Why it is paused, while it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_reason: Option<String>,
    /// The end of the failed build's output that paused it, while it is paused: for its
    /// author, approvers and admins alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_log: Option<String>,
    /// When it finished or was cancelled, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<u64>,
    /// Operators' exclusions of workers' results, and their reversals, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusions: Vec<WorkerExclusion>,
    /// When its games were archived (written to files and removed from the store; their
    /// digests and its summary stay), Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_ms: Option<u64>,
    /// A tuning run's verification SPRT, once submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verification: Option<u64>,
    /// The tuning run a verification SPRT checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuned_by: Option<u64>,
    /// Who submitted it: a user, or an operator token's name (`None` before accounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// Who approved it, when it waited for approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// Its priority as it is now, written from its settings (in place of its file's,
    /// which may have been changed after submission; `None`: its file's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// Its weight (share of the workers) as it is now, written like `priority`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// What its author says of it (free text).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
    /// Links that go with it: a diff, a pull request.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<String>,
    /// Its pair budget as it is now, written like `priority` (in place of its file's
    /// `pairs`, `sprt.max_pairs` or `pool.max_pairs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "max_pairs")]
    pub pair_budget: Option<u64>,
    /// Deleted from the lists (overview, search) by a person; its games and figures stay.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub hidden: bool,
    /// A rating pool's versions added while it ran, in the order they joined (after its
    /// file's engines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pool_members: Vec<tourney_model::tournament::PoolMember>,
}

/// An operator's decision about one worker's results in a tournament: left out of every
/// figure, or counted again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerExclusion {
    /// The worker's host (its name, without the session number).
    pub worker: String,
    /// Left out (`true`) or counted again (`false`).
    pub excluded: bool,
    /// Why, in the operator's words.
    pub reason: String,
    /// When, Unix milliseconds.
    pub at_ms: u64,
}

impl TournamentRecord {
    /// The hosts whose results are excluded now (by their latest decision), with that
    /// decision.
    pub fn excluded_workers(&self) -> std::collections::BTreeMap<&str, &WorkerExclusion> {
        let mut latest = std::collections::BTreeMap::new();
        for e in &self.exclusions {
            latest.insert(e.worker.as_str(), e);
        }
        latest.retain(|_, e| e.excluded);
        latest
    }
}

/// A tournament's opening suite: openings as [`tourney_model::opening`] writes them (a
/// position string, and the moves from the start that reach it when known), kept in one
/// text, one a line, with where each starts (a million openings cost their text and four
/// bytes an opening).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpeningSuite {
    /// The openings, each followed by a line break.
    text: String,
    /// Where each opening starts in `text`, and where the text ends.
    bounds: Vec<u32>,
}

impl OpeningSuite {
    /// A suite of `openings` (no line breaks).
    pub fn new<S: AsRef<str>>(openings: &[S]) -> OpeningSuite {
        let mut text = String::with_capacity(openings.iter().map(|o| o.as_ref().len() + 1).sum());
        for o in openings {
            text.push_str(o.as_ref());
            text.push('\n');
        }
        Self::of_lines(text)
    }

    /// The suite of a text of one opening a line, each line ended.
    fn of_lines(text: String) -> OpeningSuite {
        let mut bounds = Vec::with_capacity(text.len() / 40 + 1);
        bounds.push(0);
        bounds.extend(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        OpeningSuite { text, bounds }
    }

    /// How many openings it has.
    pub fn len(&self) -> usize {
        self.bounds.len().saturating_sub(1)
    }

    /// Whether it has none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Opening `i`'s position string.
    pub fn get(&self, i: usize) -> Option<&str> {
        self.line(i).map(tourney_model::opening::position)
    }

    /// Opening `i` as kept: its position string and the moves that reach it, when known.
    pub fn line(&self, i: usize) -> Option<&str> {
        let (start, end) = (*self.bounds.get(i)?, *self.bounds.get(i + 1)?);
        self.text.get(start as usize..end as usize - 1)
    }

    /// The stored form: the text, compressed.
    pub(crate) fn encode(&self) -> Vec<u8> {
        lz4_flex::compress_prepend_size(self.text.as_bytes())
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<OpeningSuite, StoreError> {
        let mut text = lz4_flex::decompress_size_prepended(bytes)
            .map_err(|e| StoreError::Compression(e.to_string()))?;
        if text.last().is_some_and(|&b| b != b'\n') {
            text.push(b'\n');
        }
        let text = String::from_utf8(text)
            .map_err(|_| StoreError::Compression("an opening suite is not UTF-8".into()))?;
        Ok(Self::of_lines(text))
    }
}

/// A completed pair: its outcome and both games.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PairRecord {
    /// The tournament.
    pub tournament: u64,
    /// What it contributes to the standings.
    pub outcome: PairOutcome,
    /// The two games' records as a JSON array (game 0: the pairing's first engine moves
    /// first), kept as the worker sent them.
    pub games: Box<RawValue>,
    /// The worker that played it.
    pub worker: String,
    /// The name of the worker token that delivered it (`open` when none was needed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub token: String,
}

impl PairRecord {
    /// The two games, decoded.
    ///
    /// # Errors
    /// The stored records do not decode.
    pub fn games(&self) -> Result<Vec<GameRecord>, serde_json::Error> {
        // A pair stored without its games (`null`) has none.
        Ok(serde_json::from_str::<Option<Vec<GameRecord>>>(self.games.get())?.unwrap_or_default())
    }
}
