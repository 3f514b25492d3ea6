//! A report's header names everything that decides its result: every limit (time odds,
//! NPS scaling), every adjudication rule, the openings used, the rules variant and each
//! engine's source, for the shipped example files and for engines built from source.

use std::collections::BTreeMap;

use tourney_model::source::Source;
use tourney_model::version::EngineVersion;

use super::*;

/// The details of tournament `text` (with openings file `openings`) as submitted.
async fn header(c: &Coordinator, text: &str, openings: &str) -> BTreeMap<String, String> {
    let id = c
        .submit(text, "example.toml", openings, BTreeMap::new())
        .await
        .unwrap();
    c.report_of(id).unwrap().1.details.into_iter().collect()
}

#[tokio::test]
async fn time_odds_name_each_engine_s_clock_and_the_nps_scaling() {
    let c = on_temporary_store();
    let d = header(&c, include_str!("../../../../config/time-odds.toml"), "").await;
    let limits = &d["Limits"];
    assert!(
        limits.starts_with("clock 10+0.1 (margin 100 ms)"),
        "{limits}"
    );
    assert!(limits.contains("(scale = \"nps\")"), "{limits}");
    assert!(
        limits.ends_with("time odds: ab-fifth plays at clock 2+0.02"),
        "{limits}"
    );
    assert_eq!(d["Engine ab-fifth"], "ab, own limits: clock 2+0.02");
    assert_eq!(d["Engine ab-d3"], "ab:depth=3");
    assert_eq!(
        d["Rules"],
        "a move that connects both sides' groups at once: the mover wins"
    );
}

#[tokio::test]
async fn a_book_match_names_its_adjudication_rules_and_how_its_book_is_used() {
    let c = on_temporary_store();
    let d = header(
        &c,
        include_str!("../../../../config/book-loa.toml"),
        include_str!("../../../../config/loa-book.txt"),
    )
    .await;
    assert_eq!(
        d["Adjudication"],
        "draw after 300 plies, resign: a side both engines score 800 or more ahead for 4 \
         moves each wins, draw: both scores within ±5 for 10 moves each, from ply 80, 20% \
         of score-adjudicated games played on to check"
    );
    let openings = &d["Openings"];
    assert!(
        openings.starts_with(
            "0 used, from file loa-book.txt of 5 positions (move sequences), shuffled \
             (seed 3), from opening 2, each played with both colours"
        ),
        "{openings}"
    );
    // The draw variant of LOA's double connection is said too.
    let draw = include_str!("../../../../config/book-loa.toml").replace(
        "game = \"loa\"",
        "game = \"loa\"\nrules = { double-connection = \"draw\" }",
    );
    let d = header(&c, &draw, include_str!("../../../../config/loa-book.txt")).await;
    assert!(d["Rules"].ends_with("a draw"), "{d:?}");
}

#[tokio::test]
async fn an_sprt_of_two_versions_built_from_source_names_their_sources() {
    let c = on_temporary_store();
    for (name, commit) in [("v1", "a"), ("v2", "b")] {
        let version = EngineVersion {
            name: name.into(),
            source: Some(Source {
                git: "https://example.org/engine.git".into(),
                commit: commit.repeat(40),
                build: "make -j".into(),
                binary: "build/engine".into(),
            }),
            options: BTreeMap::from([("Hash".to_string(), "64".to_string())]),
            ..EngineVersion::default()
        };
        c.add_version(version, false).unwrap();
    }
    let sprt = "name = \"v2-vs-v1\"\ngame = \"amazons\"\nrules = { size = \"8\" }\n\
                format = \"sprt\"\nsprt = { elo0 = 0.0, elo1 = 5.0 }\n\
                limits = { tc = \"8+0.08\" }\nadjudication = { regions = true }\n\n\
                [[engine]]\nversion = \"v2\"\n\n[[engine]]\nversion = \"v1\"\n";
    let d = header(&c, sprt, "").await;
    for (name, commit) in [("v1", "a"), ("v2", "b")] {
        assert_eq!(
            d[&format!("Engine {name}")],
            format!(
                "version {name}, built from https://example.org/engine.git at commit {} by \
                 `make -j`, program build/engine, protocol tourney, options Hash=64",
                commit.repeat(40)
            )
        );
    }
    assert_eq!(d["Rules"], "8×8 board");
    assert_eq!(d["Adjudication"], "Amazons regions decided");
    assert_eq!(d["Limits"], "clock 8+0.08 (margin 100 ms)");
    assert!(d["Format"].starts_with("sprt: elo0 0, elo1 5"), "{d:?}");
    assert!(
        d["Statistics"].contains("SPRT: generalized likelihood ratio"),
        "{d:?}"
    );
}

#[tokio::test]
async fn a_datagen_run_says_each_opening_is_played_once() {
    let c = on_temporary_store();
    let datagen = "name = \"data\"\ngame = \"loa\"\nformat = \"datagen\"\n\
                   openings = { plies = 4, seed = 2 }\nlimits = { nodes = 10 }\n\n\
                   [datagen]\npositions = 30\n\n[[engine]]\nname = \"ab\"\nplayer = \"ab\"\n";
    let d = header(&c, datagen, "").await;
    assert!(d["Openings"].ends_with(", each played once"), "{d:?}");
    assert!(d["Openings"].starts_with("0 used, generated"), "{d:?}");
}
