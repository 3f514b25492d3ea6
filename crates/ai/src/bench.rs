//! The bench signature of a built-in player: the nodes its search visits in fixed
//! positions under fixed limits. The count depends only on the player (its kind, weights and
//! search), never on the machine or the time, so two builds that play alike count alike;
//! the time it takes gives the player's speed on this machine. The protocol's `bench`
//! answers with both (`bench nodes N nps M`).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use tourney_rules::{Game, Position};

use crate::{Heuristics, Limits, PlayerSpec, SpecError};

/// Positions searched: the start, and the positions after 8, 16 and 24 plies of a fixed
/// walk through the legal moves.
const PLIES: [usize; 4] = [0, 8, 16, 24];

/// The most nodes searched per position (the depth below usually stops sooner).
const NODES_PER_POSITION: u64 = 200_000;

/// What a bench run counted and how long it took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bench {
    /// Nodes searched over every bench position: the signature.
    pub nodes: u64,
    /// The time the searches took.
    pub time: Duration,
}

impl Bench {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.time.as_secs_f64().max(1e-9)) as u64
    }
}

/// The search depth of the bench in game `P`: a few tenths of a second for `ab`.
fn depth<P: Position>() -> u32 {
    match P::GAME {
        tourney_rules::GameKind::Loa => 5,
        tourney_rules::GameKind::Amazons => 2,
    }
}

/// The bench positions of game `P`.
fn positions<P: Position>() -> Vec<P> {
    let mut position = P::start();
    let mut out = Vec::new();
    for ply in 0..=PLIES[PLIES.len() - 1] {
        if PLIES.contains(&ply) {
            out.push(position);
        }
        let moves = position.legal_moves();
        if moves.is_empty() {
            break;
        }
        // A fixed walk: the move at a position that moves with the ply.
        let mv = moves[(ply * 7 + 3) % moves.len()];
        match position.play(mv) {
            Ok(next) if next.outcome(Default::default()).is_none() => position = next,
            _ => break,
        }
    }
    out
}

/// Runs the bench of the player `spec` in game `P`.
///
/// # Errors
/// The spec does not make a player of the game.
pub fn bench<P: Heuristics>(spec: &PlayerSpec) -> Result<Bench, SpecError> {
    let mut player = spec.build::<P>()?;
    let limits = Limits {
        depth: Some(depth::<P>()),
        nodes: Some(NODES_PER_POSITION),
        ..Limits::default()
    };
    let stop = AtomicBool::new(false);
    let (mut nodes, mut time) = (0, Duration::ZERO);
    for position in positions::<P>() {
        player.new_game(0);
        let game = Game::new(position, Default::default());
        let started = Instant::now();
        let result = player.choose(&game, &limits, &stop, &mut |_| {});
        time += started.elapsed();
        nodes += result.info.nodes;
    }
    Ok(Bench { nodes, time })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_rules::{Amazons, Loa};

    fn nodes<P: Heuristics>(spec: &str) -> u64 {
        bench::<P>(&spec.parse().unwrap()).unwrap().nodes
    }

    #[test]
    fn the_signature_is_the_same_every_run_and_changes_with_the_player() {
        for spec in ["ab", "ab:connectedness=80", "mcts:seed=3", "random"] {
            assert_eq!(nodes::<Loa>(spec), nodes::<Loa>(spec), "{spec}");
        }
        assert_eq!(nodes::<Amazons>("ab"), nodes::<Amazons>("ab"));
        assert_ne!(nodes::<Loa>("ab"), nodes::<Loa>("ab:connectedness=80"));
        assert!(nodes::<Loa>("ab") > 1000);
        assert_eq!(positions::<Loa>().len(), PLIES.len());
    }
}
