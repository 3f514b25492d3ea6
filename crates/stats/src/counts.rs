//! Match results as counts: wins/draws/losses and game-pair (pentanomial) counts.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::StatsError;

/// Game results of the tested player: wins, draws, losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Trinomial {
    /// Games won by the tested player.
    pub wins: u64,
    /// Drawn games.
    pub draws: u64,
    /// Games lost by the tested player.
    pub losses: u64,
}

impl Trinomial {
    /// Number of games.
    pub fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    /// Counts in score order `[L, D, W]` (bin `i` scores `i/2`), as fishtest takes them.
    pub fn bins(&self) -> [f64; 3] {
        [self.losses as f64, self.draws as f64, self.wins as f64]
    }

    /// The same games from the opponent's side.
    pub fn swapped(&self) -> Trinomial {
        Trinomial {
            wins: self.losses,
            draws: self.draws,
            losses: self.wins,
        }
    }

    /// Adds one game.
    pub fn add(&mut self, result: GameScore) {
        match result {
            GameScore::Win => self.wins += 1,
            GameScore::Draw => self.draws += 1,
            GameScore::Loss => self.losses += 1,
        }
    }
}

/// One game from the tested player's side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GameScore {
    /// The tested player won.
    Win,
    /// A draw.
    Draw,
    /// The tested player lost.
    Loss,
}

impl GameScore {
    /// Half-points scored: 2, 1 or 0.
    pub fn half_points(self) -> usize {
        match self {
            GameScore::Win => 2,
            GameScore::Draw => 1,
            GameScore::Loss => 0,
        }
    }
}

/// Game-pair counts: `bins[k]` pairs (one opening, colours swapped) in which the tested
/// player scored `k/2` points, in fishtest's order `[LL, LD+DL, LW+WL+DD, WD+DW, WW]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Pentanomial {
    /// Pair counts by points scored, 0 to 2 in half-point steps.
    pub bins: [u64; 5],
}

impl Pentanomial {
    /// Number of pairs.
    pub fn pairs(&self) -> u64 {
        self.bins.iter().sum()
    }

    /// Counts as floating point.
    pub fn bins_f64(&self) -> [f64; 5] {
        self.bins.map(|b| b as f64)
    }

    /// Adds the pair of games `first` and `second`.
    pub fn add_pair(&mut self, first: GameScore, second: GameScore) {
        self.bins[first.half_points() + second.half_points()] += 1;
    }

    /// The same pairs from the opponent's side.
    pub fn swapped(&self) -> Pentanomial {
        let mut bins = self.bins;
        bins.reverse();
        Pentanomial { bins }
    }
}

/// Counts parsed from `W,D,L` or `LL,LD,D,WD,WW` text.
fn parse_list<const N: usize>(text: &str, what: &'static str) -> Result<[u64; N], StatsError> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != N {
        return Err(StatsError::CountFields {
            what,
            expected: N,
            found: parts.len(),
            text: text.to_string(),
        });
    }
    let mut out = [0; N];
    for (i, part) in parts.iter().enumerate() {
        out[i] = part.parse().map_err(|_| StatsError::Count {
            what,
            index: i + 1,
            text: part.to_string(),
        })?;
    }
    Ok(out)
}

impl FromStr for Trinomial {
    type Err = StatsError;
    /// Parses `W,D,L`.
    fn from_str(text: &str) -> Result<Self, StatsError> {
        let [wins, draws, losses] = parse_list::<3>(text, "W,D,L")?;
        Ok(Trinomial {
            wins,
            draws,
            losses,
        })
    }
}

impl FromStr for Pentanomial {
    type Err = StatsError;
    /// Parses `LL,LD,D,WD,WW`.
    fn from_str(text: &str) -> Result<Self, StatsError> {
        Ok(Pentanomial {
            bins: parse_list::<5>(text, "LL,LD,D,WD,WW")?,
        })
    }
}

impl fmt::Display for Pentanomial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bins;
        write!(f, "[{}, {}, {}, {}, {}]", b[0], b[1], b[2], b[3], b[4])
    }
}

/// Replaces zero counts by 1e-3 (fishtest `LLRcalc.regularize`).
pub(crate) fn regularize<const N: usize>(bins: [f64; N]) -> [f64; N] {
    bins.map(|b| if b == 0.0 { 1e-3 } else { b })
}
