//! Loading the test data in `tests/data/` (see its README.md).

use std::path::PathBuf;

/// The text of a file in `tests/data/`.
pub(crate) fn read(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// FNV-1a 64 of the sorted move texts joined by newlines, as the oracle's `digest`.
pub(crate) fn digest(mut moves: Vec<String>) -> String {
    moves.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in moves.join("\n").bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A perft case: name, position string, and (depth, count) pairs.
pub(crate) struct PerftCase {
    pub(crate) name: String,
    pub(crate) position: String,
    pub(crate) counts: Vec<(u32, u64)>,
}

/// Parses a `.perft` file: `id`, `position` and `perft <depth> <nodes>` lines.
pub(crate) fn perft_cases(name: &str) -> Vec<PerftCase> {
    let mut cases: Vec<PerftCase> = Vec::new();
    for (n, line) in read(name).lines().enumerate() {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        match key {
            "" => {}
            "id" => cases.push(PerftCase {
                name: value.into(),
                position: String::new(),
                counts: vec![],
            }),
            "position" => cases.last_mut().unwrap().position = value.into(),
            "perft" => {
                let (d, v) = value.split_once(' ').unwrap();
                cases
                    .last_mut()
                    .unwrap()
                    .counts
                    .push((d.parse().unwrap(), v.parse().unwrap()));
            }
            _ => panic!("{name}:{}: unknown line '{line}'", n + 1),
        }
    }
    cases
}
