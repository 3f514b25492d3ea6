//! Tournament files: parsing, validation, errors located, seeds and pairings.

use super::*;

const SPRT: &str = r#"
name = "eval-v2-vs-v1"
game = "loa"
rules = { double-connection = "mover-wins" }
format = "sprt"
sprt = { elo0 = 0.0, elo1 = 5.0, alpha = 0.05, beta = 0.05, model = "normalized", max_pairs = 20000 }
openings = { plies = 4, seed = 1 }
limits = { nodes = 20000 }
adjudication = { max_plies = 400 }

[[engine]]
name = "v2"
player = "ab:depth=3"

[[engine]]
name = "v1"
command = "./engines/v1"
options = { Hash = 64 }
"#;

#[test]
fn the_issue_example_parses() {
    let c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
    assert_eq!(c.format, Format::Sprt);
    assert_eq!(c.rules_text(), "double-connection=mover-wins");
    assert_eq!(c.planned_pairs(), None);
    assert_eq!(c.pair_budget(), 20000);
    assert_eq!(c.engines[1].command.as_deref(), Some("./engines/v1"));
}

#[test]
fn the_example_configs_parse() {
    for file in [
        "loa-quick.toml",
        "amazons-quick.toml",
        "sprt-loa.toml",
        "gauntlet-outside.toml",
        "sprt-versions.toml",
        "book-loa.toml",
        "time-odds.toml",
        "spsa-loa.toml",
        "datagen-loa.toml",
    ] {
        let path = format!("{}/../../config/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        TournamentConfig::parse(&text, file).unwrap_or_else(|e| panic!("{e}"));
    }
    // And the strength tests' SPRTs, tuning runs and screening gauntlets, of issue 17's
    // round and of this one (issue 38's).
    let earlier = formats_in("experiments/strength");
    assert_eq!(earlier.len(), 18);
    assert!((earlier.iter()).all(|f| matches!(f, Format::Sprt | Format::Spsa | Format::Gauntlet)));
    let round = formats_in("experiments/strength/raised");
    assert_eq!(round.iter().filter(|&&f| f == Format::Sprt).count(), 12);
    assert_eq!(round.iter().filter(|&&f| f == Format::Datagen).count(), 2);
    assert_eq!(round.len(), 14);
}

/// The formats of the tournament files in `dir` of the repository (each must parse).
fn formats_in(dir: &str) -> Vec<Format> {
    let dir = format!("{}/../../{dir}", env!("CARGO_MANIFEST_DIR"));
    let mut formats = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let c = TournamentConfig::parse(&text, &path.display().to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            formats.push(c.format);
        }
    }
    formats
}

fn error(text: &str) -> ConfigError {
    TournamentConfig::parse(text, "t.toml").unwrap_err()
}

const SPSA: &str = r#"
name = "tune"
game = "loa"
format = "spsa"
openings = { plies = 4 }
limits = { nodes = 2000 }

[spsa]
pairs = 100
verify = { elo0 = 0, elo1 = 5 }

[[spsa.param]]
name = "connectedness"
start = 60
min = 0
max = 200
c_end = 8
r_end = 0.002

[[engine]]
name = "ab"
version = "v3"
"#;

const DATAGEN: &str = r#"
name = "data"
game = "loa"
format = "datagen"
openings = { plies = 8 }
limits = { nodes = 2000 }

[datagen]
positions = 1000

[[engine]]
name = "ab"
player = "ab"
"#;

#[test]
fn a_datagen_file_plays_one_engine_against_itself_each_opening_once() {
    let c = TournamentConfig::parse(DATAGEN, "t.toml").unwrap();
    assert_eq!(c.format, Format::Datagen);
    let names: Vec<&str> = c.engines.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["ab.1", "ab.2"]);
    let d = c.datagen().unwrap();
    assert_eq!(
        (d.skip_plies, d.skip_captures, d.skip_decided, d.dedup),
        (8, true, true, true)
    );
    assert_eq!(d.openings, DatagenOpenings::Suite);
    assert_eq!((c.planned_pairs(), c.pair_budget()), (None, 1000));
    assert_eq!(c.pairing(7), Some((0, 1, 7)));
    assert_eq!(c.pair_openings(7), [14, 15]);
    assert_eq!(c.openings_wanted(), 2000, "two a pair");
    // Two engines are a pairing; every other format plays one opening twice.
    let two = DATAGEN.replace(
        "player = \"ab\"\n",
        "player = \"ab\"\n\n[[engine]]\nname = \"mcts\"\nplayer = \"mcts\"\n",
    );
    let c = TournamentConfig::parse(&two, "t.toml").unwrap();
    assert_eq!(c.engines.len(), 2);
    assert_eq!(c.engines[1].name, "mcts");
    let sprt = TournamentConfig::parse(SPRT, "t.toml").unwrap();
    assert_eq!(sprt.pair_openings(7), [7, 7]);
    let engine = DATAGEN.replace(
        "positions = 1000",
        "positions = 10\nopenings = \"engine\"\nmax_pairs = 3",
    );
    let c = TournamentConfig::parse(&engine, "t.toml").unwrap();
    assert_eq!(c.datagen().unwrap().openings, DatagenOpenings::Engine);
    assert_eq!(c.pair_budget(), 3);
    assert_eq!(c.openings_wanted(), 0, "the engine makes them");
}

#[test]
fn datagen_files_are_checked_key_by_key() {
    for (from, to, key) in [
        ("positions = 1000", "positions = 0", "datagen.positions"),
        (
            "positions = 1000",
            "positions = 20000001",
            "datagen.positions",
        ),
        (
            "positions = 1000",
            "positions = 5\nfile_mb = 0",
            "datagen.file_mb",
        ),
        (
            "positions = 1000",
            "positions = 5\nmax_pairs = 0",
            "datagen.max_pairs",
        ),
        ("[datagen]\npositions = 1000\n", "", "datagen"),
    ] {
        let e = error(&DATAGEN.replace(from, to));
        assert!(e.to_string().contains(key), "{to}: {e}");
    }
    let three = DATAGEN.replace(
        "player = \"ab\"\n",
        "player = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"ab\"\n[[engine]]\nname = \"c\"\nplayer = \"ab\"\n",
    );
    assert!(error(&three).to_string().contains("1 (self-play) or 2"));
    let stray = SPRT.replace(
        "[[engine]]\nname = \"v2\"",
        "[datagen]\npositions = 5\n\n[[engine]]\nname = \"v2\"",
    );
    assert!(
        error(&stray)
            .to_string()
            .contains("is for format = \"datagen\"")
    );
}

#[test]
fn an_spsa_file_tunes_one_engine_against_itself() {
    let c = TournamentConfig::parse(SPSA, "t.toml").unwrap();
    assert_eq!(c.format, Format::Spsa);
    let names: Vec<&str> = c.engines.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["ab+", "ab-"]);
    assert_eq!(c.engines[1].version.as_deref(), Some("v3"));
    // Tuned sides are not the version itself: they stay off its timeline.
    assert_eq!(c.versions(), [None, None]);
    assert_eq!((c.planned_pairs(), c.pair_budget()), (Some(100), 100));
    assert_eq!(c.pairing(7), Some((0, 1, 7)));
    let s = c.spsa.as_ref().unwrap();
    assert_eq!((s.alpha, s.gamma, s.params.len()), (0.602, 0.101, 1));
    assert_eq!(s.verify.as_ref().unwrap().elo1, 5.0);

    let two = SPSA.replace(
        "[[engine]]\nname = \"ab\"",
        "[[engine]]\nname = \"x\"\nplayer = \"ab\"\n\n[[engine]]\nname = \"ab\"",
    );
    let e = error(&two);
    assert!(e.message.contains("exactly 1 (the engine to tune)"), "{e}");
    let e = error(&SPSA.replace("c_end = 8", "c_end = 0"));
    assert_eq!(e.key.as_deref(), Some("spsa.param[0].c_end"), "{e}");
    assert_eq!(e.line, Some(17), "{e}");
    let e = error(&SPSA.replace("start = 60", "start = 260"));
    assert_eq!(e.key.as_deref(), Some("spsa.param[0].start"), "{e}");
    let e = error(&SPSA.replace("elo1 = 5", "elo1 = -5"));
    assert_eq!(e.key.as_deref(), Some("spsa.verify.elo1"), "{e}");
    let e = error(&SPSA.replace("pairs = 100", "pairs = 100\nsteps = 3"));
    assert!(e.message.contains("unknown field `steps`"), "{e}");
    let e = error(&SPSA.replace("format = \"spsa\"", "format = \"match\"\npairs = 3"));
    assert!(e.message.contains("exactly 2"), "{e}");
    let no_table = SPSA.split("[spsa]").next().unwrap().to_string()
        + "[[engine]]\nname = \"ab\"\nplayer = \"ab\"\n";
    assert_eq!(error(&no_table).key.as_deref(), Some("spsa"));
}

#[test]
fn a_share_of_adjudicated_games_is_played_on_only_with_score_rules() {
    let with = |adjudication: &str| SPRT.replace("{ max_plies = 400 }", adjudication);
    let c = TournamentConfig::parse(
        &with("{ resign = { score = 600, moves = 3 }, play_on = 0.25 }"),
        "t.toml",
    )
    .unwrap();
    assert_eq!(c.adjudication.score_rules().play_on, 2_500);
    let e = error(&with(
        "{ resign = { score = 600, moves = 3 }, play_on = 1.5 }",
    ));
    assert_eq!(e.key.as_deref(), Some("adjudication.play_on"), "{e}");
    let e = error(&with("{ max_plies = 400, play_on = 0.5 }"));
    assert!(e.message.contains("give resign or draw too"), "{e}");
}

#[test]
fn errors_name_the_file_line_and_key() {
    let e = error(&SPRT.replace("max_plies = 400", "max_plies = 400, speed = 3"));
    assert_eq!(e.line, Some(9), "{e}");
    assert!(e.message.contains("unknown field `speed`"), "{e}");
    // An unknown key is named with the table it is in.
    assert_eq!(e.key.as_deref(), Some("adjudication.speed"), "{e}");
    let e = error(&SPRT.replace("nodes = 20000", "nodse = 20000"));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("limits.nodse"), Some(8)),
        "{e}"
    );
    let e = error(&SPRT.replace("elo1 = 5.0", "elo1 = -5.0"));
    assert_eq!(
        e.to_string(),
        "t.toml:6: sprt.elo1: elo1 (-5) must be above elo0 (0)"
    );
    // The normalized model has no likelihood past ±231.6 nElo: refused, naming the limit.
    let e = error(&SPRT.replace("elo1 = 5.0", "elo1 = 300.0"));
    assert_eq!(e.key.as_deref(), Some("sprt.elo1"), "{e}");
    assert!(e.message.contains("up to ±231.6"), "{e}");
    let e = error(&SPRT.replace("elo0 = 0.0", "elo0 = -240.0"));
    assert_eq!(e.key.as_deref(), Some("sprt.elo0"), "{e}");
    assert!(
        TournamentConfig::parse(&SPRT.replace("elo1 = 5.0", "elo1 = 231.5"), "t.toml").is_ok(),
        "a bound within the domain"
    );
    let logistic = SPRT
        .replace("elo1 = 5.0", "elo1 = 300.0")
        .replace("\"normalized\"", "\"logistic\"");
    assert!(
        TournamentConfig::parse(&logistic, "t.toml").is_ok(),
        "the logistic model has no such limit"
    );
    let e = error(&SPRT.replace("player = \"ab:depth=3\"", "program = \"x\""));
    assert!(e.message.contains("unknown field `program`"), "{e}");
    assert_eq!(e.line, Some(13));
    assert_eq!(e.key.as_deref(), Some("engine[0].program"), "{e}");
    let e = error(&SPRT.replace("command = \"./engines/v1\"\n", ""));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("engine[1].player"), Some(15)),
        "{e}"
    );
    let e = error(&SPRT.replace(
        "limits = { nodes = 20000 }",
        "limits = { tc = \"ten minutes\" }",
    ));
    assert_eq!(e.key.as_deref(), Some("limits.tc"), "{e}");
    assert_eq!(e.line, Some(8));
    let e = error(&SPRT.replace("game = \"loa\"", "game = \"chess\""));
    assert_eq!(
        e.to_string(),
        "t.toml:3: game: unknown game 'chess': expected 'loa' or 'amazons'"
    );
    let e = error(&SPRT.replace("model = \"normalized\"", "model = \"gaussian\""));
    assert_eq!(
        (e.line, e.key.as_deref()),
        (Some(6), Some("sprt.model")),
        "{e}"
    );
    assert!(e.message.contains("unknown variant `gaussian`"), "{e}");
    let e = error(&SPRT.replace("format = \"sprt\"", "format = \"ladder\""));
    assert!(e.message.contains("ladder"), "{e}");
    assert_eq!(e.line, Some(5));
    // Which games keep engine logs: failures (the default) or all.
    let c = TournamentConfig::parse(&format!("engine_logs = \"all\"\n{SPRT}"), "t.toml").unwrap();
    assert_eq!(c.engine_logs, crate::tournament::EngineLogs::All);
    assert_eq!(
        crate::job::GameSettings::of(&c).engine_logs,
        crate::tournament::EngineLogs::All
    );
    let e = error(&format!("engine_logs = \"some\"\n{SPRT}"));
    assert!(e.to_string().contains("engine_logs"), "{e}");
    // A dialect's options are checked, and GTP is for Amazons.
    let gtp = |protocol: &str| {
        error(&SPRT.replace(
            "command = \"./engines/v1\"\n",
            &format!("command = \"./engines/v1\"\nprotocol = \"{protocol}\"\n"),
        ))
    };
    let e = gtp("gtp:first=red");
    assert_eq!(e.key.as_deref(), Some("engine[1].protocol"), "{e}");
    assert!(e.message.contains("first=black or first=white"), "{e}");
    let e = gtp("gtp");
    assert_eq!(e.key.as_deref(), Some("engine[1].protocol"), "{e}");
    assert!(e.message.contains("gtp is for Amazons"), "{e}");
    assert!(gtp("codingame:x=1").message.contains("takes no options"));
    let e = error(&SPRT.replace("name = \"v1\"", "name = \"v2\""));
    assert_eq!(e.key.as_deref(), Some("engine[1].name"));
    assert!(
        e.message.contains("'v2'"),
        "the repeated name is named: {e}"
    );
}

#[test]
fn huge_tournaments_are_refused_before_anything_is_planned() {
    let e = error(&SPRT.replace("max_pairs = 20000", "max_pairs = 1000000000000"));
    assert_eq!(e.key.as_deref(), Some("sprt.max_pairs"), "{e}");
    assert!(e.message.contains("at most 1000000000"), "{e}");
    let engines: String = (0..MAX_ENGINES + 1)
        .map(|i| format!("[[engine]]\nname = \"e{i}\"\nplayer = \"random\"\n"))
        .collect();
    let text = format!(
        "name = \"rr\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 1\n\
         openings = {{ plies = 2, seed = 1 }}\nlimits = {{ depth = 1 }}\n{engines}"
    );
    let e = error(&text);
    assert_eq!(e.key.as_deref(), Some("engine"), "{e}");
    // Rounds that would overflow the pair count are refused too, not wrapped.
    let two: String = engines.lines().take(6).collect::<Vec<_>>().join("\n");
    let e = error(&format!(
        "name = \"rr\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 4000000000\n\
             openings = {{ plies = 2, seed = 1 }}\nlimits = {{ depth = 1 }}\n{two}\n"
    ));
    assert_eq!(e.key.as_deref(), Some("rounds"), "{e}");
}

#[test]
fn a_value_of_the_wrong_type_names_its_key() {
    let e = error(&SPRT.replace("max_plies = 400", "max_plies = \"400\""));
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("adjudication.max_plies"), Some(9)),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("t.toml:9: adjudication.max_plies: invalid type"),
        "{e}"
    );
    let e = error(&SPRT.replace("player = \"ab:depth=3\"", "player = 3"));
    assert_eq!(e.key.as_deref(), Some("engine[0].player"), "{e}");
    let e = error(&SPRT.replace("options = { Hash = 64 }", "options = [1]"));
    assert_eq!(e.key.as_deref(), Some("engine[1].options"), "{e}");
    let e = error(&SPRT.replace("game = \"loa\"", "game = 1"));
    assert_eq!(
        e.to_string(),
        "t.toml:3: game: invalid type: integer `1`, expected a string"
    );
    let e = error(&SPRT.replace("alpha = 0.05", "alpha = \"a, {b}\", gamma = \"x\""));
    assert_eq!(e.key.as_deref(), Some("sprt.alpha"), "{e}");
}

#[test]
fn every_game_of_a_tournament_has_its_own_seed() {
    let mut c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
    assert_eq!(c.seed, 1, "the default");
    let seeds: std::collections::HashSet<u64> = (0..5000)
        .flat_map(|p| [0, 1].map(|g| game_seed(c.pair_seed(p), g)))
        .collect();
    assert_eq!(seeds.len(), 10_000);
    assert!(!seeds.contains(&0));
    let first = c.pair_seed(0);
    c.seed = 2;
    assert_ne!(
        c.pair_seed(0),
        first,
        "another tournament seed, other games"
    );
}

#[test]
fn an_outcome_stored_without_colours_gets_them_from_the_old_rule() {
    let old: PairOutcome =
        serde_json::from_str(r#"{"pair":3,"first":2,"second":0,"half_points":[2,1]}"#).unwrap();
    assert_eq!(old.white, PairOutcome::COLOURS_UNKNOWN);
    // LOA: Black moves first, so the first engine had Black in game 0.
    let loa = old.with_legacy_colours(tourney_rules::Color::Black);
    assert_eq!(loa.white, [0, 2]);
    assert_eq!((loa.white_half_points(0), loa.white_half_points(1)), (0, 1));
    let amazons = old.with_legacy_colours(tourney_rules::Color::White);
    assert_eq!(amazons.white, [2, 0]);
    assert_eq!(
        amazons.with_legacy_colours(tourney_rules::Color::Black),
        amazons
    );
    let json = serde_json::to_string(&amazons).unwrap();
    assert!(json.contains("\"white\":[2,0]"), "{json}");
}

#[test]
fn round_robin_pairs_cover_every_pairing_once_per_round() {
    let mut c = TournamentConfig::parse(SPRT, "t.toml").unwrap();
    c.format = Format::RoundRobin;
    c.rounds = Some(2);
    for i in 0..3 {
        c.engines.push(EngineEntry {
            name: format!("e{i}"),
            player: Some("random".into()),
            ..EngineEntry::default()
        });
    }
    assert_eq!(c.planned_pairs(), Some(20));
    let mut seen = std::collections::BTreeMap::new();
    for p in 0..20 {
        let (a, b, round) = c.pairing(p).unwrap();
        assert!(a < b && b < 5);
        *seen.entry((a, b)).or_insert(0) += 1;
        assert_eq!(round, p / 10);
    }
    assert_eq!(seen.len(), 10);
    assert!(seen.values().all(|&n| n == 2));
    c.format = Format::Gauntlet;
    assert_eq!(c.planned_pairs(), Some(8));
    assert_eq!(c.pairing(5), Some((0, 2, 1)));
    // Two seeds: 0 against 1..4, then 1 against 2..4: 7 pairs a round.
    c.seeds = Some(2);
    assert_eq!(c.planned_pairs(), Some(14));
    let round: Vec<(usize, usize, u64)> = (7..14).map(|p| c.pairing(p).unwrap()).collect();
    assert_eq!(
        round,
        [
            (0, 1, 1),
            (0, 2, 1),
            (0, 3, 1),
            (0, 4, 1),
            (1, 2, 1),
            (1, 3, 1),
            (1, 4, 1)
        ]
    );
    // A pyramid: each engine against every engine above it, in that order.
    c.seeds = None;
    c.format = Format::Pyramid;
    assert_eq!(c.planned_pairs(), Some(20));
    let first: Vec<(usize, usize)> = (0..6)
        .map(|p| c.pairing(p).map(|(a, b, _)| (a, b)).unwrap())
        .collect();
    assert_eq!(first, [(1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2)]);
    assert_eq!(c.pairing(10), Some((1, 0, 1)));
    // Formats that pair as results come in leave it to the scheduler.
    for format in [Format::Swiss, Format::Knockout, Format::Takes] {
        c.format = format;
        assert!(format.is_dynamic());
        assert_eq!(c.pairing(3), None);
        assert_eq!(c.pair_openings(3), [3, 3], "a pair of its own opening");
    }
}

/// A tournament file of `format` with `engines` built-in engines and `extra` lines.
fn with_engines(format: &str, engines: usize, extra: &str) -> String {
    let mut text = format!(
        "name = \"t\"\ngame = \"loa\"\nformat = \"{format}\"\nlimits = {{ nodes = 100 }}\n{extra}\n"
    );
    for i in 0..engines {
        text += &format!("[[engine]]\nname = \"e{i}\"\nplayer = \"random\"\n");
    }
    text
}

#[test]
fn the_formats_that_pair_by_results_check_their_keys() {
    let swiss =
        TournamentConfig::parse(&with_engines("swiss", 9, "rounds = 4\npairs = 2"), "s.toml")
            .unwrap();
    assert_eq!(swiss.planned_pairs(), Some(4 * 4 * 2));
    let knockout = TournamentConfig::parse(
        &with_engines("knockout", 5, "pairs = 2\ntiebreak_pairs = 3"),
        "k.toml",
    )
    .unwrap();
    assert_eq!(
        (knockout.planned_pairs(), knockout.pair_budget()),
        (None, 4 * 5)
    );
    let takes = TournamentConfig::parse(
        &with_engines(
            "takes",
            4,
            "sprt = { elo0 = 0.0, elo1 = 5.0, max_pairs = 3000 }",
        ),
        "g.toml",
    )
    .unwrap();
    assert_eq!((takes.planned_pairs(), takes.pair_budget()), (None, 3000));
    // Its budget changes as an SPRT's; a Swiss's rounds do not.
    let mut takes = takes;
    takes.set_pair_budget(5000).unwrap();
    assert_eq!(
        (takes.pair_budget(), takes.pair_budget_set()),
        (5000, Some(5000))
    );
    let mut swiss = swiss;
    assert!(swiss.set_pair_budget(5000).unwrap_err().contains("swiss"));
    assert_eq!(swiss.pair_budget_set(), None, "rounds are no budget to set");
    for (text, key) in [
        (with_engines("swiss", 4, "rounds = 4"), "rounds"),
        (with_engines("swiss", 4, ""), "rounds"),
        (with_engines("pyramid", 4, ""), "rounds"),
        (with_engines("takes", 4, ""), "sprt"),
        (
            with_engines("takes", 18, "sprt = { elo0 = 0.0, elo1 = 5.0 }"),
            "engine",
        ),
        (
            with_engines("takes", 1, "sprt = { elo0 = 0.0, elo1 = 5.0 }"),
            "engine",
        ),
        (
            with_engines("gauntlet", 4, "rounds = 1\nseeds = 4"),
            "seeds",
        ),
        (
            with_engines("round-robin", 4, "rounds = 1\nseeds = 2"),
            "seeds",
        ),
        (
            with_engines("swiss", 4, "rounds = 1\ntiebreak_pairs = 1"),
            "tiebreak_pairs",
        ),
        (with_engines("knockout", 4, "pairs = 0"), "pairs"),
    ] {
        let e = TournamentConfig::parse(&text, "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{key}: {e}");
    }
}

#[test]
fn an_engine_may_be_a_registered_version_filled_in_when_submitted() {
    let text = "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { nodes = 1 }\n\
                [[engine]]\nversion = \"ab-v2\"\n\
                [[engine]]\nname = \"mine\"\nversion = \"prog-7\"\n";
    let mut c = TournamentConfig::parse(text, "t.toml").unwrap();
    assert_eq!(c.engines[0].name, "ab-v2", "named after its version");
    assert_eq!(c.versions(), [Some("ab-v2"), Some("prog-7")]);
    let lookup = |name: &str| {
        let mut v = crate::version::EngineVersion {
            name: name.into(),
            ..Default::default()
        };
        match name {
            "ab-v2" => v.player = Some("ab:depth=2".into()),
            "prog-7" => {
                v.command = Some("./engine".into());
                v.artifact = Some("f".repeat(64));
                v.options.insert("Hash".into(), "64".into());
            }
            _ => return None,
        }
        Some(v)
    };
    let programs = c.resolve_versions(lookup).unwrap();
    assert_eq!(c.engines[0].player.as_deref(), Some("ab:depth=2"));
    assert_eq!(c.engines[1].command.as_deref(), Some("./engine"));
    assert_eq!(c.engines[1].option_values(), [("Hash".into(), "64".into())]);
    assert_eq!(programs.get("mine").map(String::len), Some(64));

    let unknown = text.replace("prog-7", "prog-8");
    let mut c = TournamentConfig::parse(&unknown, "t.toml").unwrap();
    let e = c.resolve_versions(lookup).unwrap_err().to_string();
    assert!(e.contains("engine[1].version: no version 'prog-8'"), "{e}");
    let both = text.replace(
        "version = \"prog-7\"",
        "version = \"prog-7\"\nplayer = \"ab\"",
    );
    let e = TournamentConfig::parse(&both, "t.toml").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("engine[1].version"), "{e}");
    assert!(e.to_string().contains("not both"), "{e}");

    // An entry's own options (a preset's) are over its version's; a built-in has none.
    let own = text.replace(
        "version = \"prog-7\"",
        "version = \"prog-7\"\noptions = { Hash = 128, Threads = 2 }",
    );
    let mut c = TournamentConfig::parse(&own, "t.toml").unwrap();
    c.resolve_versions(lookup).unwrap();
    let values = c.engines[1].option_values();
    assert_eq!(
        values,
        [
            ("Hash".into(), "128".into()),
            ("Threads".into(), "2".into())
        ]
    );
    let built_in = text.replace(
        "version = \"ab-v2\"",
        "version = \"ab-v2\"\noptions = { Hash = 1 }",
    );
    let mut c = TournamentConfig::parse(&built_in, "t.toml").unwrap();
    let e = c.resolve_versions(lookup).unwrap_err().to_string();
    assert!(
        e.contains("engine[0].options: version 'ab-v2' is a built-in"),
        "{e}"
    );
}

#[test]
fn a_version_speaking_gtp_is_refused_in_loa_as_an_inline_gtp_engine_is() {
    let text = "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { nodes = 1 }\n\
                [[engine]]\nplayer = \"ab\"\nname = \"ab\"\n\
                [[engine]]\nname = \"mine\"\nversion = \"gtp-1\"\n";
    let lookup = |name: &str| {
        (name == "gtp-1").then(|| crate::version::EngineVersion {
            name: name.into(),
            command: Some("python3 x.py".into()),
            protocol: Some("gtp".into()),
            ..Default::default()
        })
    };
    let mut c = TournamentConfig::parse(text, "gtp-loa.toml").unwrap();
    let e = c.resolve_versions(lookup).unwrap_err();
    assert_eq!(
        e.located(text, "gtp-loa.toml").to_string(),
        "gtp-loa.toml:11: engine[1].version: version 'gtp-1' speaks gtp, which is for \
         Amazons; this tournament plays loa"
    );
    // In Amazons it plays.
    let amazons = text.replace("\"loa\"", "\"amazons\"");
    let mut c = TournamentConfig::parse(&amazons, "gtp.toml").unwrap();
    c.resolve_versions(lookup).unwrap();
    assert_eq!(c.engines[1].protocol.as_deref(), Some("gtp"));
}

#[test]
fn an_engine_may_have_its_own_limits_for_time_odds() {
    let text = "name = \"odds\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { tc = \"10+0.1\" }\n\
                [[engine]]\nname = \"fast\"\nplayer = \"ab\"\nlimits = { tc = \"2+0.02\" }\n\
                [[engine]]\nname = \"slow\"\nplayer = \"ab\"\n";
    let c = TournamentConfig::parse(text, "odds.toml").unwrap();
    let odds = crate::job::Engine::of(&c, 0, &BTreeMap::new());
    assert_eq!(
        odds.limits.map(|l| l.time_control.to_string()),
        Some("2+0.02".into())
    );
    assert_eq!(crate::job::Engine::of(&c, 1, &BTreeMap::new()).limits, None);
    let bad = text.replace("2+0.02", "soon");
    let e = TournamentConfig::parse(&bad, "odds.toml").unwrap_err();
    assert_eq!(
        (e.key.as_deref(), e.line),
        (Some("engine[0].limits"), Some(9)),
        "{e}"
    );
    assert!(e.to_string().contains("tc: base time 'soon'"), "{e}");
    assert!(!crate::job::GameSettings::of(&c).scale_by_speed);
    let scaled = text.replace("tc = \"10+0.1\" }", "tc = \"10+0.1\", scale = \"nps\" }");
    let c = TournamentConfig::parse(&scaled, "odds.toml").unwrap();
    assert!(crate::job::GameSettings::of(&c).scale_by_speed);
    let nothing_to_scale = "name = \"n\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\n\
                            limits = { nodes = 5, scale = \"nps\" }\n[[engine]]\nname = \"a\"\nplayer = \"ab\"\n\
                            [[engine]]\nname = \"b\"\nplayer = \"ab\"\n";
    let e = TournamentConfig::parse(nothing_to_scale, "n.toml").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("limits.scale"), "{e}");
    let empty = text.replace("limits = { tc = \"2+0.02\" }", "limits = { }");
    let e = TournamentConfig::parse(&empty, "odds.toml").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("engine[0].limits"), "{e}");
}

#[test]
fn an_engine_built_from_source_takes_its_commit_and_files_from_the_submission() {
    let text = "name = \"t\"\ngame = \"loa\"\nformat = \"match\"\npairs = 2\nlimits = { nodes = 1 }\n\
                [[engine]]\nname = \"mine\"\ngit = \"https://example.org/e.git\"\ncommit = \"main\"\n\
                build = \"make\"\nbinary = \"build/e\"\nfiles = { \"nn.bin\" = \"nets/nn.bin\" }\n\
                [[engine]]\nname = \"base\"\nplayer = \"ab\"\n";
    let mut c = TournamentConfig::parse(text, "t.toml").unwrap();
    assert_eq!(c.engines[0].source().unwrap().commit, "main");
    // Not resolved: refused.
    let e = c.clone().apply_facts(&BTreeMap::new()).unwrap_err();
    assert!(
        e.contains("engine[0].files: 'nn.bin' was not uploaded"),
        "{e}"
    );
    let facts = BTreeMap::from([(
        "mine".to_string(),
        crate::source::EngineFacts {
            commit: Some("a".repeat(40)),
            files: BTreeMap::from([("nn.bin".to_string(), "b".repeat(64))]),
            bench: Some(99),
            nps: Some(1_500_000),
        },
    )]);
    c.apply_facts(&facts).unwrap();
    assert_eq!(
        c.engines[0].commit.as_deref(),
        Some("a".repeat(40).as_str())
    );
    assert_eq!(c.engines[0].files["nn.bin"], "b".repeat(64));
    assert_eq!(c.engines[0].bench, Some(99));
    assert_eq!(c.engines[0].reference_nps, Some(1_500_000));
    let job = crate::job::Engine::of(&c, 0, &BTreeMap::new());
    assert!(
        job.identity()
            .spec
            .starts_with("git:https://example.org/e.git@aaaa")
    );
    let mut unresolved = facts.clone();
    unresolved.get_mut("mine").unwrap().commit = Some("main".into());
    let mut again = TournamentConfig::parse(text, "t.toml").unwrap();
    let e = again.apply_facts(&unresolved).unwrap_err();
    assert!(
        e.contains("engine[0].commit") && e.contains("not a commit hash"),
        "{e}"
    );

    let wrong = |from: &str, to: &str| {
        TournamentConfig::parse(&text.replace(from, to), "t.toml")
            .unwrap_err()
            .to_string()
    };
    assert!(wrong("binary = \"build/e\"\n", "").contains("engine[0].binary"));
    assert!(
        wrong("commit = \"main\"", "commit = \"main\"\ncommand = \"./x\"")
            .contains("engine[0].command")
    );
    assert!(wrong("binary = \"build/e\"", "binary = \"../e\"").contains("engine[0].binary"));
    assert!(wrong("\"nn.bin\" =", "\"../b\" =").contains("engine[0].files"));
    assert!(wrong("player = \"ab\"", "player = \"ab\"\nbench = 5").contains("engine[1].files"));
}

#[test]
fn the_swiss_example_parses() {
    let c = TournamentConfig::parse(
        include_str!("../../../../config/swiss-loa.toml"),
        "swiss-loa.toml",
    )
    .unwrap();
    assert_eq!(
        (c.format, c.planned_pairs()),
        (Format::Swiss, Some(5 * 4 * 2))
    );
}

#[test]
fn a_pool_is_open_ended_and_checks_its_table() {
    let c = TournamentConfig::parse(
        include_str!("../../../../config/pool-loa.toml"),
        "pool-loa.toml",
    )
    .unwrap();
    assert_eq!(c.format, Format::Pool);
    assert!(c.format.is_dynamic());
    assert_eq!((c.planned_pairs(), c.pair_budget()), (None, 400));
    assert_eq!((c.pool_anchor(), c.pairing(3)), (0, None));
    // Without a [pool] table: the first engine anchors it, and it never ends by itself.
    let mut open = TournamentConfig::parse(&with_engines("pool", 3, ""), "p.toml").unwrap();
    assert_eq!(
        (open.planned_pairs(), open.pair_budget()),
        (None, MAX_PAIRS)
    );
    assert_eq!(open.pool(), Some(PoolConfig::default()));
    // No budget set: none to write down (a restart keeps it unbounded).
    assert_eq!(open.pair_budget_set(), None);
    open.set_pair_budget(50).unwrap();
    assert_eq!((open.pair_budget(), open.pair_budget_set()), (50, Some(50)));
    let named = with_engines("pool", 3, "pool = { anchor = \"e2\", floor = 0.5 }");
    let named = TournamentConfig::parse(&named, "p.toml").unwrap();
    assert_eq!(named.pool_anchor(), 2);
    assert_eq!(named.pool().and_then(|p| p.floor), Some(0.5));
    for (text, key) in [
        (with_engines("pool", 1, ""), "engine"),
        (
            with_engines("pool", 3, "[pool]\nanchor = \"nobody\""),
            "pool.anchor",
        ),
        (with_engines("pool", 3, "[pool]\nfloor = 1.5"), "pool.floor"),
        (
            with_engines("pool", 3, "[pool]\nmax_pairs = 0"),
            "pool.max_pairs",
        ),
        (with_engines("pool", 3, "[pool]\ngate = 1"), "gate"),
        (with_engines("pool", 3, "rounds = 2"), "rounds"),
        (
            with_engines("pool", 3, "sprt = { elo0 = 0.0, elo1 = 5.0 }"),
            "sprt",
        ),
        (
            with_engines("round-robin", 3, "rounds = 1\n[pool]\n"),
            "pool",
        ),
    ] {
        let e = error(&text).to_string();
        assert!(e.contains(key) && e.contains("t.toml"), "{key}: {e}");
    }
    let e = error(&with_engines("pool", 3, "[pool]\nanchor = \"nobody\""));
    assert!(e.to_string().contains("e0, e1, e2"), "{e}");
}
