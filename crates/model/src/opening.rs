//! An opening as a tournament's suite keeps it and a pair's job carries it: its position
//! string, and, when the opening was reached from the game's standard start by moves (a
//! move book, a PGN game without a `FEN` tag, generated random plies), those moves after a
//! tab: `1bbbbbb1/... w\tb1-b3`. The moves let a worker tell an engine
//! `position startpos moves …`, which every UCI program reads, where a position string in
//! tourney's letters may not be read as meant.

/// What separates an opening's position string from its moves.
pub const MOVES_SEPARATOR: char = '\t';

/// The opening of `position` reached from the standard start by `moves` (none: the
/// position alone).
pub fn with_moves<M: std::fmt::Display>(position: &str, moves: &[M]) -> String {
    let mut line = position.to_string();
    for (i, mv) in moves.iter().enumerate() {
        line.push(if i == 0 { MOVES_SEPARATOR } else { ' ' });
        line += &mv.to_string();
    }
    line
}

/// The position string of an opening.
pub fn position(opening: &str) -> &str {
    opening
        .split_once(MOVES_SEPARATOR)
        .map_or(opening, |(p, _)| p)
}

/// The moves from the standard start that reach an opening's position (empty: not known,
/// or the start itself).
pub fn moves(opening: &str) -> impl Iterator<Item = &str> {
    opening
        .split_once(MOVES_SEPARATOR)
        .map_or("", |(_, m)| m)
        .split_whitespace()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opening_keeps_its_position_and_the_moves_that_reach_it() {
        let start = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b";
        let line = with_moves(start, &["b1-b3", "a2-c2"]);
        assert_eq!(line, format!("{start}\tb1-b3 a2-c2"));
        assert_eq!(position(&line), start);
        assert_eq!(moves(&line).collect::<Vec<_>>(), ["b1-b3", "a2-c2"]);
        let alone = with_moves::<&str>(start, &[]);
        assert_eq!(alone, start);
        assert_eq!(position(&alone), start);
        assert_eq!(moves(&alone).count(), 0);
    }
}
