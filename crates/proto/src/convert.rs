//! Conversions between the wire messages and the model's types, in one place: the
//! coordinator sends model values, the worker receives model values, and anything that
//! does not fit the model (an unknown game, a clock that does not parse, a missing engine)
//! is an error here, at the edge where the bytes come in.

use tourney_model::TimeControl;
use tourney_model::adjudication::{DrawRule, ResignRule, ScoreRules};
use tourney_model::job::{Engine, EngineKind, GameSettings, MoveLimits, PairJob};
use tourney_model::source::{Source, check_files};
use tourney_model::tournament::EngineLimits;
use tourney_model::version::EngineVersion;

use crate::v1 as pb;

/// A wire message that does not fit the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// A required field is missing.
    #[error("{0} is missing")]
    Missing(&'static str),
    /// A field's text does not parse.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
}

fn invalid(field: &'static str, message: impl ToString) -> WireError {
    WireError::Invalid {
        field,
        message: message.to_string(),
    }
}

/// A clock as the wire writes it (empty for none).
fn tc_text(tc: TimeControl) -> String {
    match tc {
        TimeControl::Infinite => String::new(),
        tc => tc.to_string(),
    }
}

/// A clock from the wire (empty: none).
fn tc_of(text: &str, field: &'static str) -> Result<TimeControl, WireError> {
    if text.is_empty() {
        Ok(TimeControl::Infinite)
    } else {
        text.parse().map_err(|e| invalid(field, e))
    }
}

impl From<&GameSettings> for pb::GameSettings {
    fn from(s: &GameSettings) -> Self {
        pb::GameSettings {
            tournament_name: s.tournament_name.clone(),
            game: s.game.to_string(),
            rules: s.rules.clone(),
            tc: tc_text(s.time_control),
            nodes: s.nodes,
            depth: s.depth,
            movetime_ms: s.movetime_ms,
            max_plies: s.max_plies,
            adjudicate: s.adjudicate,
            margin_ms: s.margin_ms,
            scale_by_speed: s.scale_by_speed,
            resign: s.score_rules.resign.map(|r| pb::ScoreRule {
                score: r.score,
                moves: r.moves,
                after: 0,
            }),
            draw: s.score_rules.draw.map(|d| pb::ScoreRule {
                score: d.score,
                moves: d.moves,
                after: d.after,
            }),
            play_on: s.score_rules.play_on,
            engine_limits: Some(pb::EngineLimits {
                memory_mb: s.engine_limits.memory_mb,
                cpu_seconds: s.engine_limits.cpu_seconds,
                processes: s.engine_limits.processes,
                open_files: s.engine_limits.open_files,
                file_size_mb: s.engine_limits.file_size_mb,
                stderr_kb: s.engine_limits.stderr_kb,
                network: s.engine_limits.network,
            }),
            all_engine_logs: s.engine_logs == tourney_model::tournament::EngineLogs::All,
            engine_openings: s.engine_openings,
        }
    }
}

impl TryFrom<pb::GameSettings> for GameSettings {
    type Error = WireError;
    fn try_from(s: pb::GameSettings) -> Result<Self, WireError> {
        Ok(GameSettings {
            engine_logs: if s.all_engine_logs {
                tourney_model::tournament::EngineLogs::All
            } else {
                tourney_model::tournament::EngineLogs::Failures
            },
            engine_openings: s.engine_openings,
            game: s.game.parse().map_err(|e| invalid("settings.game", e))?,
            time_control: tc_of(&s.tc, "settings.tc")?,
            tournament_name: s.tournament_name,
            rules: s.rules,
            nodes: s.nodes,
            depth: s.depth,
            movetime_ms: s.movetime_ms,
            max_plies: s.max_plies,
            adjudicate: s.adjudicate,
            margin_ms: s.margin_ms,
            scale_by_speed: s.scale_by_speed,
            score_rules: ScoreRules {
                resign: s.resign.map(|r| ResignRule {
                    score: r.score,
                    moves: r.moves,
                }),
                draw: s.draw.map(|d| DrawRule {
                    score: d.score,
                    moves: d.moves,
                    after: d.after,
                }),
                play_on: s.play_on.min(10_000),
            },
            engine_limits: match s.engine_limits {
                None => EngineLimits::default(),
                Some(l) => {
                    let limits = EngineLimits {
                        memory_mb: l.memory_mb,
                        cpu_seconds: l.cpu_seconds,
                        processes: l.processes,
                        open_files: l.open_files,
                        file_size_mb: l.file_size_mb,
                        stderr_kb: l.stderr_kb,
                        network: l.network,
                    };
                    if let Some((key, value, max)) = limits
                        .numbers()
                        .into_iter()
                        .find(|&(_, v, max)| v == 0 || v > max)
                    {
                        return Err(invalid(
                            "settings.engine_limits",
                            format!("{key} must be 1 to {max}, found {value}"),
                        ));
                    }
                    limits
                }
            },
        })
    }
}

impl From<&Engine> for pb::EngineSpec {
    fn from(e: &Engine) -> Self {
        let mut spec = pb::EngineSpec {
            name: e.name.clone(),
            ..Default::default()
        };
        match &e.kind {
            EngineKind::BuiltIn(player) => spec.player = player.clone(),
            EngineKind::Outside {
                command,
                artifact_sha256,
                options,
                source,
                files,
                bench,
                reference_nps,
                protocol,
                threads,
            } => {
                spec.command = command.clone();
                spec.artifact_sha256 = artifact_sha256.clone().unwrap_or_default();
                spec.options = options.iter().cloned().collect();
                spec.source = source.as_ref().map(Into::into);
                spec.files = files.iter().cloned().collect();
                spec.bench = *bench;
                spec.reference_nps = *reference_nps;
                spec.protocol = protocol.clone();
                spec.threads = *threads;
            }
        }
        spec.limits = e.limits.map(|l| pb::MoveLimits {
            tc: tc_text(l.time_control),
            nodes: l.nodes,
            depth: l.depth,
            movetime_ms: l.movetime_ms,
        });
        spec
    }
}

impl TryFrom<pb::EngineSpec> for Engine {
    type Error = WireError;
    fn try_from(e: pb::EngineSpec) -> Result<Self, WireError> {
        let source = e.source.map(Source::from);
        if let Some(s) = &source {
            s.check(true)
                .map_err(|(key, message)| invalid("engine.source", format!("{key}: {message}")))?;
        }
        if !e.protocol.is_empty() {
            tourney_model::source::check_protocol(&e.protocol)
                .map_err(|message| invalid("engine.protocol", message))?;
        }
        let files: Vec<(String, String)> = e.files.into_iter().collect();
        check_files(&files.iter().cloned().collect(), true)
            .map_err(|message| invalid("engine.files", message))?;
        let kind = match (
            e.player.is_empty(),
            e.command.is_empty() && source.is_none(),
        ) {
            (false, true) => EngineKind::BuiltIn(e.player),
            (true, false) => EngineKind::Outside {
                command: e.command,
                artifact_sha256: (!e.artifact_sha256.is_empty()).then_some(e.artifact_sha256),
                options: e.options.into_iter().collect(),
                source,
                files,
                bench: e.bench,
                reference_nps: e.reference_nps,
                protocol: e.protocol,
                threads: e.threads.clamp(1, tourney_model::fleet::MAX_THREADS),
            },
            (true, true) => return Err(WireError::Missing("engine player or command")),
            (false, false) => return Err(invalid("engine", "both a player and a command")),
        };
        let limits = match e.limits {
            Some(l) => Some(MoveLimits {
                time_control: tc_of(&l.tc, "engine.limits.tc")?,
                nodes: l.nodes,
                depth: l.depth,
                movetime_ms: l.movetime_ms,
            }),
            None => None,
        };
        Ok(Engine {
            name: e.name,
            kind,
            limits,
        })
    }
}

impl From<&PairJob> for pb::PairJob {
    fn from(j: &PairJob) -> Self {
        pb::PairJob {
            tournament: j.tournament,
            pair: j.pair,
            settings: Some((&j.settings).into()),
            first: Some((&j.first).into()),
            second: Some((&j.second).into()),
            opening: j.opening.clone(),
            opening_index: j.opening_index,
            seed: j.seed,
            ticket: j.ticket.clone(),
            second_opening: j.second_opening.as_ref().map(|(o, _)| o.clone()),
            second_opening_index: j.second_opening.as_ref().map_or(0, |(_, i)| *i),
            gpus: j.gpus.count,
            gpu_model: j.gpus.model.clone().unwrap_or_default(),
            gpu_memory_mb: j.gpus.memory_mb.unwrap_or(0),
        }
    }
}

impl TryFrom<pb::PairJob> for PairJob {
    type Error = WireError;
    fn try_from(j: pb::PairJob) -> Result<Self, WireError> {
        Ok(PairJob {
            tournament: j.tournament,
            pair: j.pair,
            settings: j
                .settings
                .ok_or(WireError::Missing("settings"))?
                .try_into()?,
            first: j.first.ok_or(WireError::Missing("first"))?.try_into()?,
            second: j.second.ok_or(WireError::Missing("second"))?.try_into()?,
            opening: j.opening,
            opening_index: j.opening_index,
            second_opening: j.second_opening.map(|o| (o, j.second_opening_index)),
            seed: j.seed,
            ticket: j.ticket,
            gpus: tourney_model::gpu::GpuNeed {
                count: j.gpus.min(tourney_model::gpu::MAX_GPUS as u32),
                model: non_empty(j.gpu_model),
                memory_mb: (j.gpu_memory_mb > 0).then_some(j.gpu_memory_mb),
            },
        })
    }
}

/// `None` for an empty text.
fn non_empty(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

impl From<&EngineVersion> for pb::EngineVersion {
    fn from(v: &EngineVersion) -> Self {
        pb::EngineVersion {
            name: v.name.clone(),
            player: v.player.clone().unwrap_or_default(),
            command: v.command.clone().unwrap_or_default(),
            artifact: v.artifact.clone().unwrap_or_default(),
            options: v.options.clone().into_iter().collect(),
            parent: v.parent.clone().unwrap_or_default(),
            note: v.note.clone(),
            created_ms: v.created_ms,
            source: v.source.as_ref().map(Into::into),
            files: v.files.clone().into_iter().collect(),
            bench: v.bench,
            checks: Vec::new(),
            protocol: v.protocol.clone().unwrap_or_default(),
            presets: v.presets.clone().into_iter().collect(),
        }
    }
}

impl From<&Source> for pb::Source {
    fn from(s: &Source) -> Self {
        pb::Source {
            git: s.git.clone(),
            commit: s.commit.clone(),
            build: s.build.clone(),
            binary: s.binary.clone(),
        }
    }
}

impl From<pb::Source> for Source {
    fn from(s: pb::Source) -> Self {
        Source {
            git: s.git,
            commit: s.commit,
            build: s.build,
            binary: s.binary,
        }
    }
}

impl From<pb::EngineVersion> for EngineVersion {
    fn from(v: pb::EngineVersion) -> Self {
        EngineVersion {
            name: v.name,
            player: non_empty(v.player),
            command: non_empty(v.command),
            artifact: non_empty(v.artifact),
            options: v.options.into_iter().collect(),
            parent: non_empty(v.parent),
            note: v.note,
            created_ms: v.created_ms,
            source: v.source.map(Into::into),
            files: v.files.into_iter().collect(),
            bench: v.bench,
            protocol: non_empty(v.protocol),
            presets: v.presets.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::GameKind;

    fn job() -> PairJob {
        PairJob {
            tournament: 3,
            pair: 9,
            settings: GameSettings {
                tournament_name: "t".into(),
                game: GameKind::Amazons,
                rules: String::new(),
                time_control: "40/60+0.5".parse().unwrap(),
                nodes: Some(100),
                depth: None,
                movetime_ms: Some(20),
                max_plies: Some(300),
                adjudicate: true,
                margin_ms: 100,
                scale_by_speed: true,
                score_rules: ScoreRules {
                    resign: Some(ResignRule {
                        score: 600,
                        moves: 3,
                    }),
                    draw: Some(DrawRule {
                        score: 10,
                        moves: 8,
                        after: 60,
                    }),
                    play_on: 1_500,
                },
                engine_limits: tourney_model::tournament::EngineLimits {
                    memory_mb: 512,
                    network: true,
                    ..Default::default()
                },
                engine_logs: tourney_model::tournament::EngineLogs::All,
                engine_openings: true,
            },
            first: Engine {
                name: "a".into(),
                kind: EngineKind::BuiltIn("ab:depth=2".into()),
                limits: Some(MoveLimits {
                    time_control: "5+0.05".parse().unwrap(),
                    nodes: None,
                    depth: Some(3),
                    movetime_ms: None,
                }),
            },
            second: Engine {
                name: "b".into(),
                kind: EngineKind::Outside {
                    command: "./engine --fast".into(),
                    artifact_sha256: Some("ab".repeat(32)),
                    options: vec![("Hash".into(), "64".into())],
                    source: None,
                    files: vec![("nn.bin".into(), "cd".repeat(32))],
                    bench: Some(123_456),
                    reference_nps: None,
                    protocol: "uci".into(),
                    threads: 4,
                },
                limits: None,
            },
            opening: "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w".into(),
            opening_index: 4,
            second_opening: Some(("3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 b".into(), 5)),
            seed: 99,
            ticket: "seal".into(),
            gpus: tourney_model::gpu::GpuNeed {
                count: 2,
                model: Some("4090".into()),
                memory_mb: Some(20_000),
            },
        }
    }

    #[test]
    fn a_job_survives_the_wire() {
        let wire = pb::PairJob::from(&job());
        assert_eq!(PairJob::try_from(wire).unwrap(), job());
        let mut no_clock = job();
        no_clock.settings.time_control = TimeControl::Infinite;
        let wire = pb::PairJob::from(&no_clock);
        assert_eq!(wire.settings.as_ref().unwrap().tc, "");
        assert_eq!(PairJob::try_from(wire).unwrap(), no_clock);
        // An engine built from source: no command, its source and files.
        let mut built = job();
        built.second.kind = EngineKind::Outside {
            command: String::new(),
            artifact_sha256: None,
            options: Vec::new(),
            source: Some(Source {
                git: "https://example.org/e.git".into(),
                commit: "e".repeat(40),
                build: "make".into(),
                binary: "e".into(),
            }),
            files: Vec::new(),
            bench: None,
            reference_nps: Some(2_000_000),
            protocol: String::new(),
            threads: 1,
        };
        let wire = pb::PairJob::from(&built);
        assert_eq!(PairJob::try_from(wire.clone()).unwrap(), built);
        // A hostile coordinator's source or file names are refused.
        let mut bad = wire.clone();
        bad.second.as_mut().unwrap().source.as_mut().unwrap().binary = "../../bin/sh".into();
        assert!(PairJob::try_from(bad).is_err());
        let mut bad = wire;
        bad.second
            .as_mut()
            .unwrap()
            .files
            .insert("../x".into(), "cd".repeat(32));
        assert!(PairJob::try_from(bad).is_err());
    }

    #[test]
    fn what_does_not_fit_the_model_is_refused_with_the_field() {
        let mut wire = pb::PairJob::from(&job());
        wire.settings.as_mut().unwrap().game = "chess".into();
        let e = PairJob::try_from(wire).unwrap_err().to_string();
        assert!(e.starts_with("settings.game: unknown game 'chess'"), "{e}");
        let mut wire = pb::PairJob::from(&job());
        wire.settings.as_mut().unwrap().tc = "soon".into();
        assert!(
            PairJob::try_from(wire)
                .unwrap_err()
                .to_string()
                .starts_with("settings.tc: ")
        );
        let mut wire = pb::PairJob::from(&job());
        wire.first.as_mut().unwrap().limits.as_mut().unwrap().tc = "later".into();
        let e = PairJob::try_from(wire).unwrap_err().to_string();
        assert!(e.starts_with("engine.limits.tc: "), "{e}");
        let mut wire = pb::PairJob::from(&job());
        wire.second = None;
        assert_eq!(
            PairJob::try_from(wire).unwrap_err(),
            WireError::Missing("second")
        );
        let mut wire = pb::PairJob::from(&job());
        wire.first.as_mut().unwrap().player.clear();
        assert_eq!(
            PairJob::try_from(wire).unwrap_err(),
            WireError::Missing("engine player or command")
        );
    }
}
