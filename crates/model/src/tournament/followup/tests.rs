use super::*;

const SPRT: &str = r#"# the patch at STC
name = "patch"
game = "loa"
format = "sprt"
sprt = { elo0 = 0.0, elo1 = 2.0, max_pairs = 1000 }
openings = { file = "book.txt", order = "random", offset = 5 }
limits = { tc = "10+0.1", nodes = 5000 }

[[engine]]
name = "new"
git = "https://example.com/e.git"
commit = "main"
build = "make"
binary = "e"
files = { "nn.bin" = "nets/nn.bin" }

[[engine]]
name = "old"
player = "ab"
"#;

#[test]
fn a_clone_without_changes_keeps_the_text() {
    let (text, notes) = follow_up(SPRT, "stc.toml", &Changes::default()).unwrap();
    assert_eq!(text, SPRT);
    assert!(notes.is_empty());
}

#[test]
fn a_reschedule_at_ltc_changes_the_clock_and_the_bounds() {
    let (elo0, elo1) = bound_preset("LTC").unwrap();
    let sha = "ab".repeat(32);
    let commit = "c0ffee".repeat(6) + "c0ff";
    let changes = Changes {
        name: Some("patch LTC".into()),
        tc: Some("60+0.6".into()),
        no_move_limits: true,
        elo0: Some(elo0),
        elo1: Some(elo1),
        pair_budget: Some(5000),
        priority: Some(2),
        weight: Some(1.5),
        openings_as_played: true,
        pins: BTreeMap::from([(
            "new".to_string(),
            EngineFacts {
                commit: Some(commit.clone()),
                files: BTreeMap::from([("nn.bin".to_string(), sha.clone())]),
                ..Default::default()
            },
        )]),
        ..Changes::default()
    };
    let (text, _) = follow_up(SPRT, "stc.toml", &changes).unwrap();
    let c = TournamentConfig::parse(&text, "ltc.toml").unwrap();
    assert_eq!(c.name, "patch LTC");
    assert_eq!(c.limits.tc.as_deref(), Some("60+0.6"));
    assert_eq!((c.limits.nodes, c.limits.movetime), (None, None));
    let sprt = c.sprt.unwrap();
    assert_eq!((sprt.elo0, sprt.elo1, sprt.max_pairs), (0.5, 2.5, 5000));
    assert_eq!((c.priority, c.weight), (2, 1.5));
    assert_eq!(
        c.openings.order,
        crate::tournament::OpeningsOrder::Sequential
    );
    assert_eq!(c.openings.offset, 0);
    let new = &c.engines[0];
    assert_eq!(new.files["nn.bin"], sha);
    assert_eq!(new.source().unwrap().commit, commit);
}

#[test]
fn a_change_the_format_has_no_place_for_is_refused() {
    let robin = "name = \"r\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 2\n\
                 limits = { nodes = 100 }\n\
                 [[engine]]\nname = \"a\"\nplayer = \"ab\"\n[[engine]]\nname = \"b\"\nplayer = \"random\"\n";
    let bounds = Changes {
        elo0: Some(0.0),
        ..Default::default()
    };
    let e = follow_up(robin, "r.toml", &bounds).unwrap_err();
    assert!(e.contains("round-robin has no sprt table"), "{e}");
    let pairs = Changes {
        pair_budget: Some(10),
        ..Default::default()
    };
    let e = follow_up(robin, "r.toml", &pairs).unwrap_err();
    assert!(e.contains("--max-pairs"), "{e}");
    // Bounds the SPRT refuses are named by their key.
    let wrong = Changes {
        elo0: Some(3.0),
        ..Default::default()
    };
    let e = follow_up(SPRT, "stc.toml", &wrong).unwrap_err();
    assert!(e.contains("sprt.elo1"), "{e}");
    assert!(bound_preset("vltc").unwrap_err().contains("ltc [0.5, 2.5]"));
}

#[test]
fn a_registered_preset_reads_as_changes() {
    let ltc = preset_changes("tc:60+0.6, elo0:0.5,elo1:2.5,max_pairs:40000").unwrap();
    assert_eq!(ltc.tc.as_deref(), Some("60+0.6"));
    assert_eq!(
        (ltc.elo0, ltc.elo1, ltc.pair_budget),
        (Some(0.5), Some(2.5), Some(40000))
    );
    for (bad, says) in [
        ("tc:60+x", "'tc:60+x'"),
        ("bookk:x.epd", "no key 'bookk'"),
        ("elo0", "expected KEY:VALUE"),
        ("", "at least one"),
    ] {
        let e = preset_changes(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_preset_sets_limits_threads_book_and_options() {
    let sha = "AB".repeat(32);
    let spec = format!(
        "nodes:20000,depth:9,movetime:150,threads:4,book:{sha},book_format:moves,\
         book_order:random,option.Hash:64,option.UCI_Chess960:false"
    );
    let c = preset_changes(&spec).unwrap();
    assert_eq!(
        (c.nodes, c.depth, c.movetime),
        (Some(20000), Some(9), Some(150))
    );
    assert_eq!(c.threads, Some(4));
    assert_eq!(c.book.as_deref(), Some("ab".repeat(32).as_str()));
    assert_eq!(c.book_format, Some(super::super::OpeningsFormat::Moves));
    assert_eq!(c.book_order, Some(crate::tournament::OpeningsOrder::Random));
    assert_eq!(c.options["Hash"], "64");
    assert_eq!(c.options["UCI_Chess960"], "false");
    let long = format!("option.X:{}", "v".repeat(MAX_PRESET_CHARS));
    let many: Vec<String> = (0..=MAX_PRESET_OPTIONS)
        .map(|i| format!("option.O{i}:1"))
        .collect();
    for (bad, says) in [
        ("nodes:0", "'nodes:0': must be 1 or more"),
        ("depth:-3", "'depth:-3'"),
        ("movetime:fast", "'movetime:fast'"),
        ("threads:100000", "'threads:100000': must be 1 to"),
        ("book:book.epd", "'book:book.epd': expected the sha256"),
        (
            "book_format:fen",
            "'book_format:fen': expected positions, moves or pgn",
        ),
        ("book_order:backwards", "expected sequential or random"),
        ("book_format:moves", "give book too"),
        ("option.:64", "an option's name and value"),
        ("option.Hash:", "an option's name and value"),
        ("option.A=B:1", "no '='"),
        ("tc:10+0.1,tc:60+0.6", "'tc' is given twice"),
        (long.as_str(), "at most 2000 characters"),
        (many.join(",").as_str(), "at most 64 options"),
    ] {
        let e = preset_changes(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_preset_s_book_options_and_limits_change_the_file() {
    let mut changes = preset_changes(&format!(
        "movetime:200,threads:2,book:{},book_format:pgn,option.Hash:64",
        "cd".repeat(32)
    ))
    .unwrap();
    changes.players.insert("base".into());
    let text = SPRT.replace("player = \"ab\"", "version = \"base\"")
        + "\n[[engine]]\nname = \"third\"\nversion = \"mine-2\"\n\n\
           [[engine]]\nname = \"fourth\"\nplayer = \"random\"\n";
    let text = text
        .replace("format = \"sprt\"", "format = \"gauntlet\"\nrounds = 1")
        .replace("sprt = { elo0 = 0.0, elo1 = 2.0, max_pairs = 1000 }\n", "");
    let (text, _) = follow_up(&text, "g.toml", &changes).unwrap();
    let c = TournamentConfig::parse(&text, "g.toml").unwrap();
    assert_eq!((c.limits.movetime, c.limits.nodes), (Some(200), Some(5000)));
    assert_eq!(c.threads, Some(2));
    let o = &c.openings;
    assert_eq!(o.file.as_deref(), Some("cd".repeat(32).as_str()));
    assert_eq!(o.format, Some(super::super::OpeningsFormat::Pgn));
    assert_eq!((o.seed, o.offset, o.plies), (1, 0, None));
    let hash = |i: usize| c.engines[i].options.get("Hash").and_then(|v| v.as_str());
    // The source and the outside version get it; a built-in version or player not.
    assert_eq!(
        (hash(0), hash(1), hash(2), hash(3)),
        (Some("64"), None, Some("64"), None)
    );
    // A flag is over the preset; the preset fills the rest.
    let flags = Changes {
        movetime: Some(300),
        ..Changes::default()
    }
    .over(changes.clone());
    assert_eq!((flags.movetime, flags.threads), (Some(300), Some(2)));
    assert_eq!(flags.options, changes.options);
}
