//! Slow, obviously-correct move generators written from the rules text on plain arrays,
//! the oracle for the bitboard generators in the property tests. They use only the public
//! board accessors and produce moves as text.

use tourney_rules::amazons::{Piece, Square as AmazonsSquare};
use tourney_rules::loa::Square as LoaSquare;
use tourney_rules::{Amazons, Color, Loa, Position};

const DIRECTIONS: [(i32, i32); 8] = [
    (0, 1),
    (0, -1),
    (1, 0),
    (-1, 0),
    (1, 1),
    (-1, -1),
    (-1, 1),
    (1, -1),
];

fn name(file: i32, rank: i32) -> String {
    format!("{}{}", (b'a' + file as u8) as char, rank + 1)
}

/// Whether the pieces of one colour (a set of (file, rank)) form one 8-connected group.
fn one_group(pieces: &[(i32, i32)]) -> bool {
    let mut seen = vec![pieces[0]];
    let mut i = 0;
    while i < seen.len() {
        let (f, r) = seen[i];
        for &p in pieces {
            if (p.0 - f).abs() <= 1 && (p.1 - r).abs() <= 1 && !seen.contains(&p) {
                seen.push(p);
            }
        }
        i += 1;
    }
    seen.len() == pieces.len()
}

/// The legal LOA moves, sorted: steps, or `pass` when there is none; nothing once a side
/// is connected.
pub(crate) fn loa_moves(position: &Loa) -> Vec<String> {
    let at = |f: i32, r: i32| -> Option<Color> {
        if (0..8).contains(&f) && (0..8).contains(&r) {
            position.piece_at(LoaSquare::new(f as usize, r as usize))
        } else {
            None
        }
    };
    let me = position.turn();
    let pieces = |c: Color| -> Vec<(i32, i32)> {
        (0..64)
            .map(|i| (i % 8, i / 8))
            .filter(|&(f, r)| at(f, r) == Some(c))
            .collect()
    };
    if one_group(&pieces(Color::Black)) || one_group(&pieces(Color::White)) {
        return Vec::new();
    }
    let mut moves = Vec::new();
    for (f, r) in pieces(me) {
        for (df, dr) in DIRECTIONS {
            // Pieces on the whole line through (f, r) parallel to (df, dr).
            let mut count = 0;
            for k in -8..=8 {
                if at(f + k * df, r + k * dr).is_some() {
                    count += 1;
                }
            }
            let (tf, tr) = (f + count * df, r + count * dr);
            if !(0..8).contains(&tf) || !(0..8).contains(&tr) {
                continue;
            }
            let jumps_enemy = (1..count).any(|k| at(f + k * df, r + k * dr) == Some(!me));
            let target = at(tf, tr);
            if jumps_enemy || target == Some(me) {
                continue;
            }
            let sign = if target.is_some() { 'x' } else { '-' };
            moves.push(format!("{}{sign}{}", name(f, r), name(tf, tr)));
        }
    }
    if moves.is_empty() {
        moves.push("pass".to_string());
    }
    moves.sort();
    moves
}

/// The legal Amazons turns, sorted.
pub(crate) fn amazons_moves(position: &Amazons) -> Vec<String> {
    let mut board = [[false; 10]; 10];
    let mut mine = Vec::new();
    for (f, column) in board.iter_mut().enumerate() {
        for (r, cell) in column.iter_mut().enumerate() {
            let piece = position.piece_at(AmazonsSquare::new(f, r));
            *cell = piece.is_some();
            if piece == Some(Piece::Amazon(position.turn())) {
                mine.push((f as i32, r as i32));
            }
        }
    }
    let free = |b: &[[bool; 10]; 10], f: i32, r: i32| {
        (0..10).contains(&f) && (0..10).contains(&r) && !b[f as usize][r as usize]
    };
    let slides = |b: &[[bool; 10]; 10], f: i32, r: i32| -> Vec<(i32, i32)> {
        let mut out = Vec::new();
        for (df, dr) in DIRECTIONS {
            let (mut x, mut y) = (f + df, r + dr);
            while free(b, x, y) {
                out.push((x, y));
                x += df;
                y += dr;
            }
        }
        out
    };
    let mut moves = Vec::new();
    for (f, r) in mine {
        let mut lifted = board;
        lifted[f as usize][r as usize] = false;
        for (tf, tr) in slides(&lifted, f, r) {
            for (af, ar) in slides(&lifted, tf, tr) {
                moves.push(format!("{}-{}/{}", name(f, r), name(tf, tr), name(af, ar)));
            }
        }
    }
    moves.sort();
    moves
}
