//! Opening suites: positions after a few random plies, deduplicated, optionally kept only
//! when a quick search judges them balanced. Tournaments play each opening twice with
//! colours swapped.

use std::collections::HashSet;
use std::sync::atomic::AtomicBool;

use tourney_ai::{Heuristics, Limits, PlayerSpec, Rng, Score, SpecError};
use tourney_rules::Game;

/// How to make an opening suite.
#[derive(Debug, Clone)]
pub struct OpeningSettings {
    /// Random plies from the start.
    pub plies: u32,
    /// Openings wanted.
    pub count: usize,
    /// Seed of the random plies.
    pub seed: u64,
    /// The rule options (`size=8` for 8×8 Amazons; empty for the defaults), which say the
    /// start position.
    pub rules: String,
    /// A player spec that judges balance (`ab:depth=3`), with the largest accepted
    /// |score| in centi-units.
    pub balanced: Option<(String, i32)>,
    /// The most search nodes the judge may spend on the whole suite (`None`: no bound),
    /// each judgement at most [`JUDGE_NODES`]: when they are spent, the suite is what was
    /// found so far.
    pub judge_budget: Option<u64>,
}

/// The most nodes one balance judgement may search when the suite has a budget.
pub const JUDGE_NODES: u64 = 1_000_000;

/// Why a suite could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpeningsError {
    /// The balance judge's spec does not build.
    #[error("balanced: {0}")]
    Judge(#[from] SpecError),
    /// The rule options do not parse.
    #[error("rules: {0}")]
    Rules(String),
    /// Fewer distinct (balanced) openings than wanted.
    #[error(
        "only {found} distinct openings of {wanted} wanted after {attempts} tries (fewer plies, a wider --max-score or a smaller --count may help)"
    )]
    TooFew {
        /// Openings found.
        found: usize,
        /// Openings wanted.
        wanted: usize,
        /// Tries made.
        attempts: usize,
    },
}

/// The suite as openings ([`tourney_model::opening`]: each position string with the
/// random plies that reach it), exactly `count` of them.
///
/// # Errors
/// A bad judge spec, or too few distinct (balanced) openings after many tries.
pub fn generate<P: Heuristics>(settings: &OpeningSettings) -> Result<Vec<String>, OpeningsError> {
    let (out, attempts) = collect::<P>(settings)?;
    if out.len() < settings.count {
        return Err(OpeningsError::TooFew {
            found: out.len(),
            wanted: settings.count,
            attempts,
        });
    }
    Ok(out)
}

/// Up to `count` openings: all the distinct ones found when fewer exist (at least one).
///
/// # Errors
/// A bad judge spec, or no opening at all.
pub fn generate_up_to<P: Heuristics>(
    settings: &OpeningSettings,
) -> Result<Vec<String>, OpeningsError> {
    let (out, attempts) = collect::<P>(settings)?;
    if out.is_empty() {
        return Err(OpeningsError::TooFew {
            found: 0,
            wanted: 1,
            attempts,
        });
    }
    Ok(out)
}

/// Distinct openings, at most `count`, and the number of tries made.
fn collect<P: Heuristics>(
    settings: &OpeningSettings,
) -> Result<(Vec<String>, usize), OpeningsError> {
    let mut judge = match &settings.balanced {
        Some((spec, _)) => Some(spec.parse::<PlayerSpec>()?.build::<P>()?),
        None => None,
    };
    let rules: P::Rules = settings
        .rules
        .parse()
        .map_err(|e: tourney_rules::ParseError| OpeningsError::Rules(e.to_string()))?;
    let mut rng = Rng::new(settings.seed);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let attempts = settings.count * 50 + 1000;
    let mut spent = 0u64;
    for _ in 0..attempts {
        if out.len() == settings.count || settings.judge_budget.is_some_and(|b| spent >= b) {
            break;
        }
        let mut game = Game::new(P::start_for(rules), rules);
        let mut moves = Vec::with_capacity(settings.plies as usize);
        for _ in 0..settings.plies {
            if game.outcome().is_some() {
                break;
            }
            let mv = game
                .position()
                .random_move(rng.next_u64())
                .expect("the game is not over");
            game.play(mv).expect("random moves are legal");
            moves.push(mv);
        }
        if game.outcome().is_some() || !seen.insert(*game.position()) {
            continue;
        }
        if let (Some(judge), Some((_, max))) = (judge.as_mut(), &settings.balanced) {
            judge.new_game(0);
            let limits = Limits {
                nodes: settings.judge_budget.map(|b| (b - spent).min(JUDGE_NODES)),
                ..Limits::default()
            };
            let result = judge.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
            spent += result.info.nodes.max(1);
            match result.info.score {
                Some(Score::Cp(cp)) if cp.abs() <= *max => {}
                _ => continue,
            }
        }
        out.push(tourney_model::opening::with_moves(
            &game.position().to_string(),
            &moves,
        ));
    }
    Ok((out, attempts))
}

/// A suite put in the order pairs take it: shuffled by `seed` when `order` is random, then
/// started at opening `offset` (wrapping around).
pub fn arrange(
    mut suite: Vec<String>,
    order: tourney_model::tournament::OpeningsOrder,
    seed: u64,
    offset: u64,
) -> Vec<String> {
    if order == tourney_model::tournament::OpeningsOrder::Random {
        let mut rng = tourney_ai::Rng::new(seed);
        for i in (1..suite.len()).rev() {
            suite.swap(i, rng.below(i + 1));
        }
    }
    if !suite.is_empty() {
        let start = (offset % suite.len() as u64) as usize;
        suite.rotate_left(start);
    }
    suite
}
