//! `tourney bench search`: alpha-beta on fixed positions to fixed depths; total nodes (the
//! search's signature) and nodes per second.

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use anyhow::Result;
use tourney_ai::{Heuristics, Limits, PlayerSpec};
use tourney_rules::Game;

/// The search benchmark's LOA positions: the start and the oracle's perft positions.
pub(crate) const LOA_POSITIONS: &[&str] = &[
    "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
    "1bb1bw2/w6w/w2b2b1/w7/w1b4w/w3w3/2w3ww/2bb1bb1 b",
    "1b1b2b1/w2b3w/b1w2w2/w7/7w/wb3b1w/2wb3w/1b2bb2 w",
    "1b1w2b1/w4w1w/7b/1w3w2/1b2w3/w2b4/7w/2bb2bw b",
    "8/2bb1b1w/w6w/1bw2ww1/2bw4/wb2b2w/w6b/4b3 b",
    "bw4bb/2b5/w2bb3/2w2w2/3w1w2/1ww2bwb/w6w/b7 b",
];

/// The search benchmark's Amazons positions: the start and three of the oracle's.
pub(crate) const AMAZONS_POSITIONS: &[&str] = &[
    "3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w",
    "3b1b4/1x2xw4/3x1x4/5x3b/8x1/6x3/3w3x1w/2x3w3/5bx3/10 w",
    "10/xx1x3xx1/x2xx4w/w3x1bx2/2x2b2x1/2x1x1x3/1b4x2b/3w1x4/2x3w3/1x1x6 w",
    "x3x5/xw4xb2/x3x2x2/2xx1xx2x/xwb1xx4/1bx1x1xxxx/1x2x2w2/1w5x1x/3xx3b1/1x1x4x1 w",
];

/// Searches each position to `depth` with a fresh `ab` player; prints nodes and nodes/s.
pub(crate) fn search<P: Heuristics>(positions: &[&str], depth: u32) -> Result<()> {
    let (mut nodes, mut seconds) = (0u64, 0f64);
    for text in positions {
        let position: P = text
            .parse()
            .map_err(|e| anyhow::anyhow!("bench position '{text}': {e}"))?;
        let mut player = "ab".parse::<PlayerSpec>()?.build::<P>()?;
        let game = Game::new(position, Default::default());
        let limits = Limits {
            depth: Some(depth),
            ..Limits::default()
        };
        let started = Instant::now();
        let result = player.choose(&game, &limits, &AtomicBool::new(false), &mut |_| {});
        seconds += started.elapsed().as_secs_f64();
        nodes += result.info.nodes;
        println!("  {text}: {} ({} nodes)", result.mv, result.info.nodes);
    }
    println!(
        "{} depth {depth}: {nodes} nodes in {seconds:.3} s = {:.2} M nodes/s",
        P::GAME,
        nodes as f64 / seconds / 1e6
    );
    Ok(())
}
