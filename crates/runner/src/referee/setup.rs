//! How a game is to be played: its start, opening and rules, and each side's clock and
//! per-move limits, made from a job's settings.

use std::collections::BTreeMap;
use std::time::Duration;

use tourney_ai::Limits;
use tourney_model::TimeControl;
use tourney_model::adjudication::ScoreRules;
use tourney_model::job::GameSettings;
use tourney_rules::{Color, Position};

use super::RulesError;

/// How a game is to be played.
#[derive(Debug, Clone)]
pub struct Setup<P: Position> {
    /// Position the game starts from.
    pub start: P,
    /// Moves from the standard start that reach `start`, when known (an opening given as
    /// moves): outside engines are told `position startpos moves …` rather than a position
    /// string, which programs with letters of their own may misread.
    pub start_path: Vec<P::Move>,
    /// Moves played from `start` before the players take over (an opening).
    pub opening: Vec<P::Move>,
    /// Rule options.
    pub rules: P::Rules,
    /// The clock.
    pub time_control: TimeControl,
    /// Per-move limits (`nodes`, `depth`, `movetime`), with or without a clock.
    pub limits: Limits,
    /// A side's own clock and limits in place of `time_control` and `limits` (time odds),
    /// by colour index.
    pub sides: [Option<SideLimits>; 2],
    /// Every clock and movetime is multiplied by this (a worker's speed factor; 1: as
    /// written).
    pub clock_scale: f64,
    /// Draw when this many plies have been played.
    pub max_plies: Option<u32>,
    /// Apply [`Adjudicate`] (Amazons: decide once the board is split).
    pub adjudicate: bool,
    /// Resign and draw by the engines' scores.
    pub score_rules: ScoreRules,
    /// Grace time on top of the clock before a time forfeit.
    pub time_margin: Duration,
    /// How long a player without a clock may think before it is unresponsive.
    pub unresponsive: Duration,
    /// The game's seed, mixed into seeded built-in players' own (0: their own alone);
    /// recorded as `seed` in the record's `meta`, so the game replays.
    pub seed: u64,
    /// Extra record fields (pair index, opening, ...).
    pub meta: BTreeMap<String, tourney_model::MetaValue>,
    /// Every game keeps its outside engines' transcripts and stderr, not only a game an
    /// engine lost by failing (`engine_logs = "all"`).
    pub keep_logs: bool,
}

impl<P: Position> Setup<P> {
    /// A game under `settings` (rules, clock, per-move limits, adjudication, margin) from
    /// the standard start: the one way a tournament's settings, or `tourney play`'s flags,
    /// become a game's setup.
    ///
    /// # Errors
    /// The rule options do not parse for this game.
    pub fn from_settings(settings: &GameSettings) -> Result<Self, RulesError> {
        let rules = settings.rules.parse().map_err(|source| RulesError {
            rules: settings.rules.clone(),
            source,
        })?;
        Ok(Setup {
            time_control: settings.time_control,
            limits: Limits {
                nodes: settings.nodes,
                depth: settings.depth,
                movetime: settings.movetime_ms.map(Duration::from_millis),
                clock: None,
            },
            max_plies: settings.max_plies,
            adjudicate: settings.adjudicate,
            score_rules: settings.score_rules,
            time_margin: Duration::from_millis(settings.margin_ms),
            keep_logs: settings.engine_logs == tourney_model::tournament::EngineLogs::All,
            ..Setup::new(rules)
        })
    }

    /// A game from the standard start with no clock and no limits.
    pub fn new(rules: P::Rules) -> Self {
        Setup {
            start: P::start_for(rules),
            start_path: Vec::new(),
            opening: Vec::new(),
            rules,
            time_control: TimeControl::Infinite,
            limits: Limits::default(),
            sides: [None; 2],
            clock_scale: 1.0,
            max_plies: None,
            adjudicate: false,
            score_rules: ScoreRules::default(),
            time_margin: Duration::from_millis(100),
            unresponsive: Duration::from_secs(60),
            seed: 0,
            meta: BTreeMap::new(),
            keep_logs: false,
        }
    }

    /// Starts the game at `opening` as a suite keeps it ([`tourney_model::opening`]): its
    /// position, and the moves that reach it from the standard start when they do (on the
    /// standard board; otherwise none are kept).
    ///
    /// # Errors
    /// The position string does not parse.
    pub fn set_opening(&mut self, opening: &str) -> Result<(), tourney_rules::ParseError> {
        self.start = tourney_model::opening::position(opening).parse()?;
        self.start_path.clear();
        if P::start_for(self.rules) != P::start() {
            return Ok(());
        }
        let mut position = P::start();
        for text in tourney_model::opening::moves(opening) {
            let Some(next) = position.parse_move(text).ok().and_then(|mv| {
                self.start_path.push(mv);
                position.play(mv).ok()
            }) else {
                self.start_path.clear();
                return Ok(());
            };
            position = next;
        }
        if position != self.start {
            self.start_path.clear();
        }
        Ok(())
    }

    /// The clock and limits of the side playing `color`.
    pub fn side(&self, color: Color) -> SideLimits {
        self.sides[color.index()].unwrap_or(SideLimits {
            time_control: self.time_control,
            limits: self.limits,
        })
    }

    /// How the time control reads in the record: one for both sides, or each side's
    /// (`white 10+0.1; black 5+0.05`) when they differ.
    pub(super) fn time_control_text(&self) -> String {
        let (white, black) = (self.side(Color::White), self.side(Color::Black));
        if white == black {
            white.text()
        } else {
            format!("white {}; black {}", white.text(), black.text())
        }
    }
}

/// One side's clock and per-move limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SideLimits {
    /// Its clock.
    pub time_control: TimeControl,
    /// Its per-move limits.
    pub limits: Limits,
}

impl SideLimits {
    /// The limits of an engine's own `limits` table.
    pub fn of(l: &tourney_model::job::MoveLimits) -> SideLimits {
        SideLimits {
            time_control: l.time_control,
            limits: Limits {
                nodes: l.nodes,
                depth: l.depth,
                movetime: l.movetime_ms.map(Duration::from_millis),
                clock: None,
            },
        }
    }

    /// As records write it: `10+0.1`, `nodes=500`, `inf`, `5+0.05,movetime=100`.
    fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.time_control != TimeControl::Infinite || self.limits.is_infinite() {
            parts.push(self.time_control.to_string());
        }
        if let Some(n) = self.limits.nodes {
            parts.push(format!("nodes={n}"));
        }
        if let Some(d) = self.limits.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(t) = self.limits.movetime {
            parts.push(format!("movetime={}", t.as_millis()));
        }
        parts.join(",")
    }
}
