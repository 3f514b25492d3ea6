//! Game results of many players, by colour: the input of joint ratings.

use std::collections::HashMap;

pub use tourney_model::GameResult;

use crate::StatsError;

/// Results between named players, kept per ordered pair (white, black) as
/// `[white wins, draws, black wins]`. Players are numbered in order of first appearance,
/// White before Black (as BayesElo numbers them).
#[derive(Debug, Clone, Default)]
pub struct GameTable {
    names: Vec<String>,
    index: HashMap<String, usize>,
    /// `results[white][black]`.
    results: Vec<Vec<[u64; 3]>>,
}

impl GameTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of a player, adding it if new.
    pub fn player(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len();
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        for row in &mut self.results {
            row.push([0; 3]);
        }
        self.results.push(vec![[0; 3]; i + 1]);
        i
    }

    /// Records one game.
    pub fn add(&mut self, white: &str, black: &str, result: GameResult) {
        self.add_many(white, black, result, 1);
    }

    /// Records `count` games with the same players, colours and result.
    pub fn add_many(&mut self, white: &str, black: &str, result: GameResult, count: u64) {
        let (w, b) = (self.player(white), self.player(black));
        self.add_numbered(w, b, result, count);
    }

    /// Records `count` games between players already numbered (see [`GameTable::player`]).
    ///
    /// # Panics
    /// If `white` or `black` is not a player's number.
    pub fn add_numbered(&mut self, white: usize, black: usize, result: GameResult, count: u64) {
        let (w, b) = (white, black);
        let slot = match result {
            GameResult::WhiteWins => 0,
            GameResult::Draw => 1,
            GameResult::BlackWins => 2,
        };
        self.results[w][b][slot] += count;
    }

    /// Player names by number.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Number of players.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether no player has played.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// `[white wins, draws, black wins]` of the games `white` against `black`.
    pub fn results(&self, white: usize, black: usize) -> [u64; 3] {
        self.results[white][black]
    }

    /// Games of player `i`, all colours.
    pub fn games_of(&self, i: usize) -> u64 {
        (0..self.len()).map(|j| self.games_between(i, j)).sum()
    }

    /// Games between `i` and `j`, both colours.
    pub fn games_between(&self, i: usize, j: usize) -> u64 {
        self.results[i][j].iter().sum::<u64>()
            + if i == j {
                0
            } else {
                self.results[j][i].iter().sum::<u64>()
            }
    }

    /// Wins, draws and losses of `i` against `j`, both colours.
    pub fn wdl(&self, i: usize, j: usize) -> [u64; 3] {
        let [ww, wd, wl] = self.results[i][j];
        let [bl, bd, bw] = self.results[j][i];
        [ww + bw, wd + bd, wl + bl]
    }

    /// Wins, draws and losses of `i` against everyone.
    pub fn totals(&self, i: usize) -> [u64; 3] {
        (0..self.len()).filter(|&j| j != i).fold([0; 3], |acc, j| {
            let r = self.wdl(i, j);
            [acc[0] + r[0], acc[1] + r[1], acc[2] + r[2]]
        })
    }

    /// Reads the players and results of PGN text (the `White`, `Black` and `Result` tags of
    /// each game; unfinished games `*` are skipped).
    ///
    /// # Errors
    /// A message naming the line of a malformed tag or a game without players.
    pub fn from_pgn(text: &str) -> Result<GameTable, StatsError> {
        let mut table = GameTable::new();
        let mut tags: HashMap<String, String> = HashMap::new();
        let mut start_line = 0;
        let mut in_moves = false;
        let flush = |tags: &mut HashMap<String, String>,
                     line: usize,
                     table: &mut GameTable|
         -> Result<(), StatsError> {
            if tags.is_empty() {
                return Ok(());
            }
            let get = |k: &str| {
                tags.get(k).ok_or_else(|| StatsError::Pgn {
                    line,
                    message: format!("game without a {k} tag"),
                })
            };
            let (white, black, result) = (get("White")?, get("Black")?, get("Result")?);
            if let Some(r) = GameResult::parse(result) {
                table.add(white, black, r);
            }
            tags.clear();
            Ok(())
        };
        for (n, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.starts_with('[') {
                if in_moves {
                    flush(&mut tags, start_line, &mut table)?;
                    in_moves = false;
                }
                if tags.is_empty() {
                    start_line = n + 1;
                }
                let inner = line.strip_prefix('[').and_then(|l| l.strip_suffix(']'));
                let parsed = inner.and_then(|l| {
                    let (key, value) = l.split_once(' ')?;
                    let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
                    Some((key.to_string(), value.replace("\\\"", "\"")))
                });
                let (key, value) = parsed.ok_or_else(|| StatsError::Pgn {
                    line: n + 1,
                    message: format!("malformed tag '{line}'"),
                })?;
                tags.insert(key, value);
            } else if !line.is_empty() {
                in_moves = true;
            }
        }
        flush(&mut tags, start_line, &mut table)?;
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_results_are_read_per_colour() {
        let pgn = "[White \"A\"]\n[Black \"B\"]\n[Result \"1-0\"]\n\n1. e4 1-0\n\n\
                   [White \"B\"]\n[Black \"A\"]\n[Result \"1/2-1/2\"]\n\n1/2-1/2\n\
                   [White \"C\"]\n[Black \"A\"]\n[Result \"*\"]\n*\n";
        let table = GameTable::from_pgn(pgn).unwrap();
        // The unfinished game adds nobody.
        assert_eq!(table.names(), ["A", "B"]);
        assert_eq!(table.results(0, 1), [1, 0, 0]);
        assert_eq!(table.results(1, 0), [0, 1, 0]);
        assert_eq!(table.wdl(0, 1), [1, 1, 0]);
        assert_eq!(table.games_of(0), 2);
        let err = GameTable::from_pgn("[White \"A\"]\n[Black B]\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: malformed tag '[Black B]'");
        let err = GameTable::from_pgn("[White \"A\"]\n[Result \"1-0\"]\n\n1-0\n").unwrap_err();
        assert_eq!(err.to_string(), "line 1: game without a Black tag");
    }
}
