//! Fuzzing of everything that reads untrusted input: reported results (compressed
//! records, game records, their replay), tournament files, position strings and moves,
//! and the engine protocol. Each target takes arbitrary and mutated input for a bounded
//! number of cases (`PROPTEST_CASES`, 256 by default: seconds in CI) and must never panic,
//! hang or allocate without bound; what it accepts must be consistent.

use proptest::prelude::*;
use tourney_model::job::GameSettings;
use tourney_model::tournament::TournamentConfig;
use tourney_model::{GameRecord, GameSummary};
use tourney_rules::{Amazons, Loa, Position};
use tourney_runner::protocol::parse_message;

/// A valid two-game report of LOA games from the start, as a worker sends it.
fn valid_games() -> String {
    let game = |white: &str, black: &str| {
        format!(
            r#"{{"game":"loa","white":{{"name":"{white}","spec":"random"}},"black":{{"name":"{black}","spec":"random"}},"time_control":"depth=1","start":"{}","moves":[{{"move":"b1-b3","time_ms":1}}],"result":"1-0","termination":"crash"}}"#,
            Loa::start()
        )
    };
    format!("[{},{}]", game("a", "b"), game("b", "a"))
}

fn settings() -> GameSettings {
    let text = "name = \"f\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\n\
                openings = { plies = 2, seed = 1 }\nlimits = { depth = 1 }\n\
                [[engine]]\nname = \"a\"\nplayer = \"random\"\n\
                [[engine]]\nname = \"b\"\nplayer = \"random\"\n";
    GameSettings::of(&TournamentConfig::parse(text, "f.toml").unwrap())
}

/// Reads `json` as the coordinator reads reported records, and replays and summarises
/// what decodes; what passes the checks writes itself again and reads back the same.
fn read_records(json: &str) {
    let Ok(games) = serde_json::from_str::<Vec<GameRecord>>(json) else {
        return;
    };
    let settings = settings();
    let sides = [tourney_model::check::Side::default(); 2];
    for game in &games {
        let checked =
            tourney_model::check::check(game, &Loa::start().to_string(), &settings, sides);
        if let Ok(summary) = GameSummary::of(game) {
            let _ = summary.fingerprint();
        }
        if checked.is_ok() {
            let again: GameRecord =
                serde_json::from_str(&serde_json::to_string(game).unwrap()).unwrap();
            assert_eq!(&again, game);
        }
    }
}

/// `text` with a byte range replaced by `insert`.
fn mutate(text: &str, at: usize, cut: usize, insert: &str) -> String {
    let bytes = text.as_bytes();
    let at = at % (bytes.len() + 1);
    let end = (at + cut).min(bytes.len());
    let mut out = bytes[..at].to_vec();
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&bytes[end..]);
    String::from_utf8_lossy(&out).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn compressed_reports_decode_within_their_bound_or_not_at_all(
        bytes in proptest::collection::vec(any::<u8>(), 0..256),
        claimed in any::<u32>(),
    ) {
        let _ = tourney_coordinator::api::service::games_json(String::new(), &bytes);
        // A block claiming any size: nothing over the bounds is inflated.
        let mut block = claimed.to_le_bytes().to_vec();
        block.extend_from_slice(&bytes);
        if let Some(json) = tourney_coordinator::api::service::games_json(String::new(), &block) {
            prop_assert!(json.len() <= tourney_coordinator::api::service::MAX_GAMES_JSON);
            read_records(&json);
        }
        // A real compressed report with bytes flipped.
        let mut real = lz4_flex::compress_prepend_size(valid_games().as_bytes());
        for (i, b) in bytes.iter().enumerate().take(4) {
            let at = (usize::from(*b) * 7 + i) % real.len();
            real[at] ^= b | 1;
        }
        if let Some(json) = tourney_coordinator::api::service::games_json(String::new(), &real) {
            read_records(&json);
        }
    }

    #[test]
    fn arbitrary_and_mutated_game_records_are_refused_or_replayed(
        text in "\\PC{0,200}",
        at in any::<usize>(),
        cut in 0usize..20,
        insert in "[\\[\\]{}\",:0-9a-z\\- ]{0,12}",
    ) {
        read_records(&text);
        read_records(&mutate(&valid_games(), at, cut, &insert));
    }

    #[test]
    fn arbitrary_and_mutated_tournament_files_parse_or_name_a_line(
        text in "\\PC{0,300}",
        at in any::<usize>(),
        cut in 0usize..30,
        insert in "[\\[\\]{}\"=,.\\n0-9a-z_ ]{0,20}",
    ) {
        let _ = TournamentConfig::parse(&text, "fuzz.toml");
        let base = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/sprt-loa.toml"
        ))
        .unwrap();
        match TournamentConfig::parse(&mutate(&base, at, cut, &insert), "fuzz.toml") {
            Ok(config) => prop_assert!(config.pair_budget() <= tourney_model::tournament::MAX_PAIRS),
            Err(e) => prop_assert!(e.to_string().starts_with("fuzz.toml"), "{}", e),
        }
    }

    #[test]
    fn position_strings_and_moves_parse_or_fail_cleanly(
        text in "\\PC{0,80}",
        at in any::<usize>(),
        insert in "[a-j0-9/bw x\\-]{0,6}",
        mv in "[a-j0-9\\-x/()]{0,12}",
    ) {
        let _ = text.parse::<Loa>();
        let _ = text.parse::<Amazons>();
        for position in [Loa::start().to_string(), Amazons::start().to_string()] {
            let mutated = mutate(&position, at, 2, &insert);
            if let Ok(loa) = mutated.parse::<Loa>() {
                prop_assert_eq!(loa.to_string().parse::<Loa>().unwrap(), loa);
                let _ = loa.parse_move(&mv);
            }
            if let Ok(amazons) = mutated.parse::<Amazons>() {
                prop_assert_eq!(amazons.to_string().parse::<Amazons>().unwrap(), amazons);
                let _ = amazons.parse_move(&mv);
            }
        }
    }

    #[test]
    fn any_engine_output_line_is_a_message(
        line in "\\PC{0,200}",
        word in "(id|ugiok|readyok|bestmove|info|error|option)",
        rest in "[ -~]{0,60}",
    ) {
        let _ = parse_message(&line);
        let _ = parse_message(&format!("{word} {rest}"));
    }
}
