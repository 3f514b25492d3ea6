//! SPSA tuning runs ([`tourney_model::spsa`]): the parameters as the completed pairs move
//! them, the values each leased pair plays with, the report's tuning section, and the
//! verification SPRT submitted when a run ends.
//!
//! Nothing of a run is stored but its pairs: the parameters are the fold of the completed
//! prefix's results in pair order, so a restart (or an exclusion) computes them again and
//! gets the same values.

use std::collections::BTreeMap;

use tourney_model::job::Engine;
use tourney_model::spsa::{self, SpsaSettings};
use tourney_model::tournament::{
    EngineEntry, Format, OpeningSettings, OpeningsFormat, OpeningsOrder, State, TournamentConfig,
};
use tourney_report::{SpsaParamRow, SpsaReport};

use crate::scheduler::{Tournament, TournamentId};
use crate::state::{Coordinator, Entry};
use crate::types::CoordinatorError;

/// The settings of a tuning run (`None` for other formats).
fn settings_of(config: &TournamentConfig) -> Option<&SpsaSettings> {
    config
        .spsa
        .as_ref()
        .filter(|_| config.format == Format::Spsa)
}

/// The two engines of pair `pair` of a tuning run, with the values they play: the first
/// moved one way from the current values, the second the other.
pub(crate) fn engines_of(
    entry: &mut Entry,
    t: &Tournament,
    pair: u64,
    engines: [Engine; 2],
) -> [Engine; 2] {
    let config = std::sync::Arc::clone(&t.config);
    let Some(s) = settings_of(&config) else {
        return engines;
    };
    let theta = entry.tuning.current(s, t).to_vec();
    let sides = s.perturbed(&theta, config.seed, pair);
    let [first, second] = engines;
    [
        first.with_values(&spsa::named(s, &sides[0])),
        second.with_values(&spsa::named(s, &sides[1])),
    ]
}

/// The engine tuned by a run: its file's `[[engine]]` (the first side, named as written).
fn base_engine(config: &TournamentConfig) -> EngineEntry {
    let mut base = config.engines[0].clone();
    base.name = base.name.trim_end_matches('+').to_string();
    base
}

/// The base engine with `values`: a built-in player's spec with the weights, or an outside
/// engine with the options.
fn engine_with(base: &EngineEntry, name: String, values: &[(&str, i64)]) -> EngineEntry {
    let mut engine = EngineEntry {
        name,
        version: None,
        ..base.clone()
    };
    match &mut engine.player {
        Some(spec) => *spec = spsa::spec_with(spec, values),
        None => {
            for (option, value) in values {
                engine
                    .options
                    .insert(option.to_string(), toml::Value::Integer(*value));
            }
        }
    }
    engine
}

/// How the tuned values are given: a built-in spec string, or an outside engine's options.
fn result_text(base: &EngineEntry, values: &[(&str, i64)]) -> String {
    match &base.player {
        Some(spec) => spsa::spec_with(spec, values),
        None => values
            .iter()
            .map(|(name, v)| format!("{name}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// The report's tuning section of a run, or `None` for other formats.
pub(crate) fn report(entry: &mut Entry, t: &Tournament) -> Option<SpsaReport> {
    let config = std::sync::Arc::clone(&t.config);
    let s = settings_of(&config)?;
    let theta = entry.tuning.current(s, t).to_vec();
    let through = entry.tuning.through;
    let trajectory = entry.tuning.trajectory();
    let k = (through + 1).min(s.pairs);
    let params = (s.params.iter().zip(&theta))
        .map(|(p, &value)| SpsaParamRow {
            name: p.name.clone(),
            start: p.start,
            min: p.min,
            max: p.max,
            value,
            c_k: s.c_k(p, k),
            r_k: s.r_k(p, k),
        })
        .collect();
    let base = base_engine(&config);
    Some(SpsaReport {
        pairs: through,
        planned: s.pairs,
        params,
        trajectory,
        result: result_text(&base, &spsa::named(s, &theta)),
        start: result_text(&base, &spsa::named(s, &s.start())),
        verify: s.verify.as_ref().map(|v| (v.elo0, v.elo1)),
        verification: entry.record.verification,
    })
}

/// The verification SPRT of a finished run: its tournament file (TOML) with the tuned and
/// the start values as two engines, the artifacts of outside engines by the new names,
/// and the run's opening suite as a positions file.
fn verification_of(
    id: TournamentId,
    entry: &mut Entry,
    t: &Tournament,
) -> Option<(String, String, String, BTreeMap<String, String>)> {
    let config = std::sync::Arc::clone(&t.config);
    let s = settings_of(&config)?;
    let verify = s.verify.clone()?;
    let tuned = spsa::named(s, entry.tuning.current(s, t));
    let base = base_engine(&config);
    let names = [
        format!("{}-tuned", base.name),
        format!("{}-start", base.name),
    ];
    let file = format!("tuning-{id}-verify.toml");
    let openings_file = format!("tuning-{id}-openings.txt");
    let mut name = format!("verify #{id}: {}", config.name);
    if name.chars().count() > tourney_model::tournament::MAX_NAME_CHARS {
        name = name
            .chars()
            .take(tourney_model::tournament::MAX_NAME_CHARS)
            .collect();
    }
    let verification = TournamentConfig {
        name,
        format: Format::Sprt,
        sprt: Some(verify),
        spsa: None,
        rounds: None,
        pairs: None,
        openings: OpeningSettings {
            plies: None,
            file: Some(openings_file),
            format: Some(OpeningsFormat::Positions),
            order: OpeningsOrder::Sequential,
            offset: 0,
            ..config.openings.clone()
        },
        engines: vec![
            engine_with(&base, names[0].clone(), &tuned),
            engine_with(&base, names[1].clone(), &spsa::named(s, &s.start())),
        ],
        ..TournamentConfig::clone(&config)
    };
    let text = format!(
        "# The verification SPRT of tuning run #{id}: its tuned values against its start \
         values.\n{}",
        toml::to_string(&verification).ok()?
    );
    let artifacts = match entry.artifacts.get(&config.engines[0].name) {
        Some(sha) => names.iter().map(|n| (n.clone(), sha.clone())).collect(),
        None => BTreeMap::new(),
    };
    let suite = (0..entry.openings.len())
        .filter_map(|i| entry.openings.get(i))
        .collect::<Vec<_>>()
        .join("\n");
    Some((text, file, suite, artifacts))
}

impl Coordinator {
    /// Submits the verification SPRT of tuning run `id` once it has finished (not when it
    /// was cancelled), unless it has one. Returns its id.
    ///
    /// # Errors
    /// The verification tournament could not be made or stored; the run stays without one
    /// (tried again at the next start).
    pub async fn verify_tuning(
        &self,
        id: TournamentId,
    ) -> Result<Option<TournamentId>, CoordinatorError> {
        let made = {
            let mut inner = self.lock();
            let inner = &mut *inner;
            let Some(t) = inner.scheduler.tournament(id) else {
                return Ok(None);
            };
            let entry = inner.tournaments.get_mut(&id);
            match entry {
                Some(entry)
                    if t.state == State::Finished
                        && entry.record.verification.is_none()
                        && !entry.verifying =>
                {
                    let made = verification_of(id, entry, t);
                    entry.verifying = made.is_some();
                    made.map(|m| (m, entry.record.author.clone()))
                }
                _ => None,
            }
        };
        // The verification SPRT is the tuning run's author's too.
        let Some(((text, file, suite, artifacts), author)) = made else {
            return Ok(None);
        };
        let origin = crate::Origin {
            tuned_by: Some(id),
            author,
            pending: false,
        };
        let submitted = self
            .submit_with(&text, &file, &suite, artifacts, BTreeMap::new(), origin)
            .await;
        let record = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(None);
            };
            entry.verifying = false;
            let vid = submitted?;
            entry.record.verification = Some(vid);
            tracing::info!(
                tuning = id,
                verification = vid,
                "verification SPRT submitted"
            );
            entry.record.clone()
        };
        self.store.put_tournament(&record)?;
        self.store.flush().await?;
        self.changed();
        Ok(record.verification)
    }
}
