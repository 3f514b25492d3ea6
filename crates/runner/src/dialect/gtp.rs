//! GTP (the Go Text Protocol, version 2) as Amazons programs speak it: `boardsize`,
//! `clear_board`, and one turn as three GTP moves of one colour: the amazon's square, where
//! it goes, where its arrow lands (`genmove b` three times; `play b D1`, `play b D7`,
//! `play b G7`).
//!
//! Vertices are GTP's: a column letter from `A` with `I` left out, then the row from 1 at
//! the bottom (`a1`..`j10` are `A1`..`K10`); case does not matter. Colours: the side that
//! moves first is GTP's black unless the protocol says `gtp:first=white` (KataGo-style
//! programs take black to move first). Every answer is `= text` or `? error` and ends with
//! an empty line.

use tourney_rules::{Amazons, Color, Position};

/// GTP's column letters: `I` is left out.
const COLUMNS: &[u8] = b"ABCDEFGHJKLMNOPQRSTUVWXYZ";

/// The GTP vertex of a square named like `d10`; `None` when `square` is not one.
pub fn vertex(square: &str) -> Option<String> {
    let file = square.bytes().next()?;
    let rank = &square[1..];
    if !file.is_ascii_lowercase() || rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let column = COLUMNS.get(usize::from(file - b'a'))?;
    Some(format!("{}{rank}", *column as char))
}

/// The square named like `d10` of a GTP vertex (`D10`, `k3`); `None` when it is not one.
pub fn square(vertex: &str) -> Option<String> {
    let column = vertex.bytes().next()?.to_ascii_uppercase();
    let rank = &vertex[1..];
    if rank.is_empty() || !rank.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let file = COLUMNS.iter().position(|&c| c == column)?;
    Some(format!("{}{rank}", (b'a' + file as u8) as char))
}

/// Whether the square named `square` (`d10`) is on a `size`×`size` board.
pub fn on_board(square: &str, size: usize) -> bool {
    let file = square
        .bytes()
        .next()
        .map_or(usize::MAX, |b| usize::from(b.wrapping_sub(b'a')));
    let rank: usize = square.get(1..).and_then(|r| r.parse().ok()).unwrap_or(0);
    file < size && (1..=size).contains(&rank)
}

/// The GTP colour word of `side`, the side that moves first being `first` in GTP's words.
pub fn colour(side: Color, mover_first: Color, first: Color) -> &'static str {
    let gtp = if side == mover_first {
        first
    } else {
        first.opponent()
    };
    match gtp {
        Color::Black => "b",
        Color::White => "w",
    }
}

/// An answer's first line read: `Ok(text)` for `= text`, `Err(text)` for `? text` (an id
/// after the sign is skipped); `None` for a line that starts no answer.
pub fn answer(line: &str) -> Option<Result<&str, &str>> {
    let line = line.trim();
    let (ok, rest) = match line.as_bytes().first()? {
        b'=' => (true, &line[1..]),
        b'?' => (false, &line[1..]),
        _ => return None,
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit()).trim();
    Some(if ok { Ok(rest) } else { Err(rest) })
}

/// The three squares of a move written like `d1-d7/g7` or `d1d7g7`.
pub fn turn_squares(mv: &str) -> Vec<String> {
    super::squares_of(&super::compact_move(mv))
        .into_iter()
        .map(String::from)
        .collect()
}

/// Turns from the standard start that reach `target` (GTP has no way to set up a board,
/// so an opening given as a position is played out to the program as moves): a search
/// whose turns shoot only at `target`'s arrows, within `budget` positions. `None` when none
/// is found.
pub fn turns_to(target: &Amazons, budget: usize) -> Option<Vec<String>> {
    /// The search: `left` turns to play from `at`.
    fn search(
        at: Amazons,
        target: &Amazons,
        left: usize,
        path: &mut Vec<String>,
        budget: &mut usize,
    ) -> bool {
        if left == 0 {
            return at == *target;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        // Each side's amazons not yet where they end need a turn of that side each.
        let mover = at.turn();
        let turns = [(mover, left.div_ceil(2)), (mover.opponent(), left / 2)];
        if turns
            .iter()
            .any(|&(side, n)| (at.amazons(side) & !target.amazons(side)).count_ones() as usize > n)
        {
            return false;
        }
        let mut found = false;
        at.generate_moves(|mv| {
            if found || target.arrows() & (1 << mv.arrow.index()) == 0 {
                return;
            }
            let mut next = at;
            next.play_unchecked(mv);
            path.push(mv.to_string());
            found = search(next, target, left - 1, path, budget);
            if !found {
                path.pop();
            }
        });
        found
    }
    let start = Amazons::start_sized(target.size());
    let plies = target.arrows().count_ones() as usize;
    let mut path = Vec::with_capacity(plies);
    let mut budget = budget;
    search(start, target, plies, &mut path, &mut budget).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertices_leave_out_i_and_read_back_in_any_case() {
        assert_eq!(vertex("a1").as_deref(), Some("A1"));
        assert_eq!(vertex("h8").as_deref(), Some("H8"));
        assert_eq!(vertex("i9").as_deref(), Some("J9"));
        assert_eq!(vertex("j10").as_deref(), Some("K10"));
        assert_eq!(vertex("10"), None);
        assert_eq!(square("K10").as_deref(), Some("j10"));
        assert_eq!(square("j9").as_deref(), Some("i9"));
        assert_eq!(square("I5"), None, "GTP has no column I");
        assert_eq!(square("pass"), None);
        assert!(on_board("h8", 8) && on_board("j10", 10));
        assert!(!on_board("i8", 8) && !on_board("a9", 8) && !on_board("a0", 10));
        assert!(!on_board("y99", 10));
        for file in b'a'..=b'j' {
            let name = format!("{}7", file as char);
            assert_eq!(square(&vertex(&name).unwrap()), Some(name));
        }
    }

    #[test]
    fn answers_and_colours_read_as_gtp_says() {
        assert_eq!(answer("= D7"), Some(Ok("D7")));
        assert_eq!(answer("=12 D7"), Some(Ok("D7")));
        assert_eq!(answer("="), Some(Ok("")));
        assert_eq!(answer("? illegal move"), Some(Err("illegal move")));
        assert_eq!(answer("info"), None);
        assert_eq!(answer(""), None);
        // Amazons' White moves first: GTP black unless the protocol says otherwise.
        assert_eq!(colour(Color::White, Color::White, Color::Black), "b");
        assert_eq!(colour(Color::Black, Color::White, Color::Black), "w");
        assert_eq!(colour(Color::White, Color::White, Color::White), "w");
        assert_eq!(turn_squares("d1-d10/g7"), ["d1", "d10", "g7"]);
    }

    #[test]
    fn an_opening_position_is_reached_by_turns_from_the_start() {
        let mut game = tourney_rules::Game::new(Amazons::start(), Default::default());
        let mut random = 7u64;
        for _ in 0..4 {
            random = random
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mv = game.position().random_move(random).unwrap();
            game.play(mv).unwrap();
        }
        let target = *game.position();
        let turns = turns_to(&target, 100_000).expect("found");
        let mut replay = Amazons::start();
        for mv in &turns {
            replay = replay.play(replay.parse_move(mv).unwrap()).unwrap();
        }
        assert_eq!(replay, target);
        assert_eq!(turns_to(&Amazons::start(), 10), Some(Vec::new()));
        // A board no game reaches (an arrow but the amazons at home, Black to move).
        let unreachable: Amazons = "3b2b3/10/10/b8b/10/4x5/w8w/10/10/3w2w3 b".parse().unwrap();
        assert_eq!(turns_to(&unreachable, 100_000), None);
    }
}
