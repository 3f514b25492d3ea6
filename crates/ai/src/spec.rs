//! Player spec strings: `kind[:key=value,...]`, e.g. `ab:depth=6,tt=64`,
//! `mcts:c=0.7,playout=eval4`, `random:seed=7`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::alphabeta::{AbConfig, AlphaBeta};
use crate::eval::Heuristics;
use crate::mcts::{DEFAULT_TREE_MIB, Mcts, MctsConfig, Playout};
use crate::random::RandomPlayer;
use crate::{Limits, Player};

/// A bad player spec, with what would have been accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError(pub String);

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SpecError {}

/// The kinds of built-in player.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Uniformly random legal moves.
    Random,
    /// Alpha-beta search.
    AlphaBeta,
    /// Monte-Carlo tree search.
    Mcts,
}

impl Kind {
    /// Whether its moves come with a score: the searching players give one, `random` none.
    pub fn reports_scores(self) -> bool {
        !matches!(self, Kind::Random)
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Random => "random",
            Kind::AlphaBeta => "ab",
            Kind::Mcts => "mcts",
        }
    }
}

/// A built-in player and its parameters, as written in a spec string. Parsing checks the
/// syntax; [`PlayerSpec::build`] checks keys and values for a game.
///
/// Keys of every player: `nodes`, `depth`, `movetime` (ms) set the player's own limits
/// (combined with the limits of each move: the tighter wins), `seed`. `ab` adds `tt` (MiB,
/// default 16), `eval` (`default`), `order` (from this depth, moves ordered by the
/// evaluation of their positions; default 3 for Amazons, 0 (never) for LOA), `prune` (then
/// only this many below the root; default 10 for Amazons, 0 (all) for LOA), `null`
/// (null-move pruning: `on` by default for LOA, `off` for Amazons), `rfp` (reverse futility
/// pruning's margin a ply of depth, in evaluation units; default 60 for LOA, 0 (off) for
/// Amazons), `asp` (the root's aspiration window either side of the last iteration's
/// score; default 30 for LOA, 0 (the full window) for Amazons) and the evaluation weights of the game; `mcts` adds `puct` (PUCT selection's weight, default
/// 0.5; 0 selects by UCT), `temp` (the temperature of PUCT's policy, the softmax of the
/// children's evaluations; default 100 for LOA, 300 for Amazons), `c` (UCT's exploration,
/// default 0.7 for LOA, 0.5 for Amazons), `playout` (`random` or `evalN`: N random moves
/// then the evaluation; default `eval0` for LOA, `eval4` for Amazons), `bias` (progressive-bias weight, default
/// 0), `minimax` (weight of implicit minimax backups of the evaluation, 0 to 1; default
/// 0.8), `width` (when not 0, a new node keeps only its best this many moves by
/// evaluation, the root all of them, best first, and selection widens with visits; a new
/// leaf is valued by its best child instead of a playout; default 15 for Amazons, 0 for
/// LOA), `expand` (a leaf is expanded on this visit, valued by its evaluation until then,
/// which counts as its first visit; default 3, 1 expands at once), `solver` (`on`/`off`),
/// `mem` (MiB of tree, default 256) and the weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerSpec {
    /// The kind of player.
    pub kind: Kind,
    /// `key=value` parameters in the order given.
    pub params: Vec<(String, String)>,
}

impl FromStr for PlayerSpec {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        let (kind, rest) = text.split_once(':').unwrap_or((text, ""));
        let kind = match kind.trim() {
            "random" => Kind::Random,
            "ab" | "alphabeta" => Kind::AlphaBeta,
            "mcts" => Kind::Mcts,
            other => {
                return Err(SpecError(format!(
                    "unknown player '{other}' in '{text}': expected random, ab or mcts (e.g. ab:depth=6)"
                )));
            }
        };
        let mut params = Vec::new();
        for item in rest.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let Some((key, value)) = item.split_once('=') else {
                return Err(SpecError(format!("'{item}' in '{text}' is not key=value")));
            };
            params.push((key.trim().to_string(), value.trim().to_string()));
        }
        Ok(PlayerSpec { kind, params })
    }
}

impl fmt::Display for PlayerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            write!(f, "{}{k}={v}", if i == 0 { ':' } else { ',' })?;
        }
        Ok(())
    }
}

fn number<T: FromStr>(kind: Kind, key: &str, value: &str, what: &str) -> Result<T, SpecError> {
    value
        .parse()
        .map_err(|_| SpecError(format!("{}: {key}={value} is not {what}", kind.name())))
}

/// A search margin in evaluation units, 0 to 65535.
fn margin(kind: Kind, key: &str, value: &str) -> Result<i32, SpecError> {
    number::<u16>(kind, key, value, "a margin of 0 to 65535").map(i32::from)
}

/// An `on`/`off` value.
fn switch(kind: Kind, key: &str, value: &str) -> Result<bool, SpecError> {
    match value {
        "on" | "true" | "1" => Ok(true),
        "off" | "false" | "0" => Ok(false),
        _ => Err(SpecError(format!(
            "{}: {key}={value}: expected on or off",
            kind.name()
        ))),
    }
}

impl PlayerSpec {
    /// The evaluation weights it plays with in game `P`, in [`Heuristics::WEIGHTS`] order:
    /// the defaults, as its keys set them.
    ///
    /// # Errors
    /// A weight whose value is not a whole number.
    pub fn weights<P: Heuristics>(&self) -> Result<Vec<i32>, SpecError> {
        let mut weights = P::Weights::default();
        for (key, value) in &self.params {
            if P::WEIGHTS.contains(&key.as_str()) {
                let v = number(self.kind, key, value, "a whole number")?;
                P::set_weight(&mut weights, key, v);
            }
        }
        Ok((P::WEIGHTS.iter())
            .map(|name| P::weight(&weights, name).expect("a weight of the game"))
            .collect())
    }

    /// Builds the player for game `P`.
    ///
    /// # Errors
    /// An unknown key (the message lists the accepted ones) or a bad value.
    pub fn build<P: Heuristics>(&self) -> Result<Box<dyn Player<P>>, SpecError> {
        let kind = self.kind;
        let mut limits = Limits::default();
        let mut seed = 1u64;
        let mut weights = P::Weights::default();
        let mut ab = AbConfig::<P::Weights>::for_game(P::GAME);
        let mut mcts = MctsConfig::<P::Weights>::for_game(
            P::GAME,
            Mcts::<P>::nodes_in(DEFAULT_TREE_MIB << 20),
        );
        let mut mem = DEFAULT_TREE_MIB;
        let own: &[&str] = match kind {
            Kind::Random => &[],
            Kind::AlphaBeta => &["tt", "eval", "order", "prune", "null", "rfp", "asp"],
            Kind::Mcts => &[
                "c", "playout", "bias", "minimax", "solver", "width", "expand", "puct", "temp",
                "mem",
            ],
        };
        for (key, value) in &self.params {
            let key = key.as_str();
            match (kind, key) {
                (_, "nodes") => limits.nodes = Some(number(kind, key, value, "a whole number")?),
                (_, "depth") => limits.depth = Some(number(kind, key, value, "a whole number")?),
                (_, "movetime") => {
                    limits.movetime = Some(Duration::from_millis(number(
                        kind,
                        key,
                        value,
                        "milliseconds",
                    )?));
                }
                (_, "seed") => seed = number(kind, key, value, "a whole number")?,
                (Kind::AlphaBeta, "tt") => ab.tt_megabytes = number(kind, key, value, "MiB")?,
                (Kind::AlphaBeta, "order") => ab.eval_order = number(kind, key, value, "plies")?,
                (Kind::AlphaBeta, "null") => ab.null_move = switch(kind, key, value)?,
                (Kind::AlphaBeta, "rfp") => ab.futility = margin(kind, key, value)?,
                (Kind::AlphaBeta, "asp") => ab.aspiration = margin(kind, key, value)?,
                (Kind::AlphaBeta, "prune") => {
                    ab.prune = number(kind, key, value, "a whole number")?
                }
                (Kind::AlphaBeta, "eval") => {
                    if !matches!(value.as_str(), "default" | "mia" | "territory") {
                        return Err(SpecError(format!(
                            "ab: eval={value}: the evaluations are default (LOA: mia, Amazons: territory)"
                        )));
                    }
                }
                (Kind::Mcts, "c") => mcts.exploration = number(kind, key, value, "a number")?,
                (Kind::Mcts, "bias") => mcts.bias = number(kind, key, value, "a number")?,
                (Kind::Mcts, "minimax") => {
                    mcts.minimax = number(kind, key, value, "a number from 0 to 1")?;
                    if !(0.0..=1.0).contains(&mcts.minimax) {
                        return Err(SpecError(format!(
                            "mcts: minimax={value}: expected a number from 0 to 1"
                        )));
                    }
                }
                (Kind::Mcts, "width") => mcts.width = number(kind, key, value, "a whole number")?,
                (Kind::Mcts, "expand") => {
                    mcts.expand_at = number(kind, key, value, "a visit count from 1")?;
                    if mcts.expand_at == 0 {
                        return Err(SpecError(format!(
                            "mcts: expand={value}: expected a visit count from 1"
                        )));
                    }
                }
                (Kind::Mcts, "puct") => {
                    mcts.puct = number(kind, key, value, "a number")?;
                    if !(mcts.puct >= 0.0 && mcts.puct.is_finite()) {
                        return Err(SpecError(format!(
                            "mcts: puct={value}: expected 0 (UCT) or a positive weight"
                        )));
                    }
                }
                (Kind::Mcts, "temp") => {
                    mcts.temperature = number(kind, key, value, "a number")?;
                    if !(mcts.temperature > 0.0 && mcts.temperature.is_finite()) {
                        return Err(SpecError(format!(
                            "mcts: temp={value}: expected a positive temperature"
                        )));
                    }
                }
                (Kind::Mcts, "mem") => mem = number(kind, key, value, "MiB")?,
                (Kind::Mcts, "solver") => mcts.solver = switch(kind, key, value)?,
                (Kind::Mcts, "playout") => {
                    mcts.playout = match value.strip_prefix("eval") {
                        _ if value == "random" => Playout::Random,
                        Some(n) => {
                            Playout::EvalAfter(number(kind, key, n, "evalN with a whole number N")?)
                        }
                        None => {
                            return Err(SpecError(format!(
                                "mcts: playout={value}: expected random or evalN (e.g. eval4)"
                            )));
                        }
                    }
                }
                (Kind::AlphaBeta | Kind::Mcts, _) if P::WEIGHTS.contains(&key) => {
                    let v = number(kind, key, value, "a whole number")?;
                    P::set_weight(&mut weights, key, v);
                }
                _ => {
                    let mut accepted: Vec<&str> = vec!["nodes", "depth", "movetime", "seed"];
                    accepted.extend(own);
                    if kind != Kind::Random {
                        accepted.extend(P::WEIGHTS);
                    }
                    return Err(SpecError(format!(
                        "{}: unknown key '{key}' for {}; accepted keys: {}",
                        kind.name(),
                        P::GAME,
                        accepted.join(", ")
                    )));
                }
            }
        }
        Ok(match kind {
            Kind::Random => Box::new(RandomPlayer::new(seed)),
            Kind::AlphaBeta => Box::new(AlphaBeta::<P>::new(AbConfig {
                weights,
                limits,
                ..ab
            })),
            Kind::Mcts => Box::new(Mcts::<P>::new(MctsConfig {
                weights,
                limits,
                seed,
                max_nodes: Mcts::<P>::nodes_in(mem << 20),
                ..mcts
            })),
        })
    }
}
