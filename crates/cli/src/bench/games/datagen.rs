//! `tourney bench datagen`: data generation on one core, positions kept per second, and
//! the Texel fit's passes over them.

use std::time::Instant;

use anyhow::Result;
use tourney_ai::Heuristics;
use tourney_dataset::Filters;
use tourney_dataset::extract::Seen;
use tourney_dataset::record::Packing;
use tourney_runner::{Adjudicate, BuiltIn, Setup};

use crate::bench::BenchArgs;
use crate::bench::harness::play_a_b;

/// Plays `ab` at `args.nodes` nodes a move against itself from `genfens` openings for
/// `args.seconds` on this thread, keeping positions under datagen's default filters;
/// then times Texel passes (loss and gradient) over what was kept.
pub(crate) fn datagen<P: Heuristics + Adjudicate + Packing>(args: &BenchArgs) -> Result<()> {
    let spec = format!("ab:nodes={}", args.nodes);
    let (mut a, mut b) = (
        BuiltIn::<P>::new(&spec).map_err(anyhow::Error::msg)?,
        BuiltIn::<P>::new(&spec).map_err(anyhow::Error::msg)?,
    );
    let filters = Filters {
        skip_plies: 8,
        skip_captures: true,
        skip_decided: true,
    };
    let mut seen = Seen::default();
    let mut split = tourney_texel::Split::new(0.0);
    let started = Instant::now();
    let (mut games, mut plies, mut kept) = (0u64, 0u64, 0u64);
    while started.elapsed().as_secs_f64() < args.seconds {
        let openings = tourney_ai::genfens::genfens(P::start(), 2, args.seed.wrapping_add(games));
        for start in openings {
            let mut setup = Setup::<P>::new(Default::default());
            setup.start = start;
            setup.max_plies = Some(300);
            setup.seed = games + 1;
            let record = play_a_b(&setup, &mut a, &mut b)?;
            let mut extracted =
                tourney_dataset::extract(&record, games, &filters).map_err(anyhow::Error::msg)?;
            seen.keep_new(&mut extracted);
            for r in &extracted.records {
                split.push::<P>(r).map_err(anyhow::Error::msg)?;
            }
            kept += extracted.records.len() as u64;
            plies += record.moves.len() as u64;
            games += 1;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "{} datagen {spec} self-play, one core: {games} games ({:.1} plies each) in {seconds:.1} s, \
         {kept} positions kept = {:.0} positions/s a core ({:.0} plies/s)",
        P::GAME,
        plies as f64 / games.max(1) as f64,
        kept as f64 / seconds,
        plies as f64 / seconds
    );
    let weights = vec![1.0; P::WEIGHTS.len()];
    let passes = 20;
    let timer = Instant::now();
    for _ in 0..passes {
        std::hint::black_box(tourney_texel::loss(&split.train, &weights, 1.0, 0.0, 1));
    }
    let per_pass = timer.elapsed().as_secs_f64() / f64::from(passes);
    println!(
        "{} texel: a loss pass over {} positions takes {:.2} ms on one thread = {:.1} M positions/s",
        P::GAME,
        split.train.len(),
        per_pass * 1e3,
        split.train.len() as f64 / per_pass / 1e6
    );
    Ok(())
}
