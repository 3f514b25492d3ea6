//! `tourney bench selfplay`: `ab:depth=2` self-play through the referee, games per minute.

use std::time::Instant;

use anyhow::Result;
use tourney_ai::Heuristics;
use tourney_plan::openings::{OpeningSettings, generate};
use tourney_rules::GameKind;
use tourney_runner::{Adjudicate, BuiltIn, Setup};

use crate::bench::BenchArgs;
use crate::bench::harness::play_a_b;

/// Plays `ab:depth=2` against itself through the referee for `args.seconds`.
pub(crate) fn selfplay<P: Heuristics + Adjudicate>(args: &BenchArgs) -> Result<()> {
    let settings = OpeningSettings {
        plies: 4,
        count: 200,
        seed: args.seed,
        rules: String::new(),
        balanced: None,
        judge_budget: None,
    };
    let openings = generate::<P>(&settings).map_err(anyhow::Error::msg)?;
    let spec = match P::GAME {
        GameKind::Loa => "ab:depth=2",
        GameKind::Amazons => "ab:depth=1",
    };
    let (mut white, mut black) = (
        BuiltIn::<P>::new(spec).map_err(anyhow::Error::msg)?,
        BuiltIn::<P>::new(spec).map_err(anyhow::Error::msg)?,
    );
    let started = Instant::now();
    let (mut games, mut plies) = (0u64, 0u64);
    while started.elapsed().as_secs_f64() < args.seconds {
        let mut setup = Setup::<P>::new(Default::default());
        setup
            .set_opening(&openings[games as usize % openings.len()])
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        setup.max_plies = Some(1000);
        let record = play_a_b(&setup, &mut white, &mut black)?;
        games += 1;
        plies += record.moves.len() as u64;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} self-play {spec} vs {spec}: {games} games in {seconds:.2} s = {:.0} games/minute ({:.1} plies/game)",
        P::GAME,
        games as f64 / seconds * 60.0,
        plies as f64 / games.max(1) as f64
    );
    Ok(())
}
