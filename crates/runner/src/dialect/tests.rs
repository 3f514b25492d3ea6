use super::*;
use crate::protocol::parse_command;
use tourney_rules::Loa;

fn go() -> Go {
    Go {
        wtime: Some(1000),
        btime: Some(900),
        winc: Some(10),
        binc: Some(20),
        ..Go::default()
    }
}

#[test]
fn ugi_speaks_of_the_first_mover_as_p1() {
    assert_eq!(first_mover(GameKind::Loa), Color::Black);
    assert_eq!(first_mover(GameKind::Amazons), Color::White);
    let loa = Dialect::Ugi(Spelling::UGI)
        .line(&Command::Go(go()), GameKind::Loa)
        .unwrap();
    assert_eq!(loa, "go p1time 900 p2time 1000 p1inc 20 p2inc 10");
    let amazons = Dialect::Ugi(Spelling::UGI)
        .line(&Command::Go(go()), GameKind::Amazons)
        .unwrap();
    assert_eq!(amazons, "go p1time 1000 p2time 900 p1inc 10 p2inc 20");
    // And back, as `tourney engine --protocol ugi` reads it.
    for game in [GameKind::Loa, GameKind::Amazons] {
        let line = Dialect::Ugi(Spelling::UGI)
            .line(&Command::Go(go()), game)
            .unwrap();
        let back = Dialect::Ugi(Spelling::UGI).incoming(&line, game).unwrap();
        assert_eq!(parse_command(&back), Some(Command::Go(go())), "{game}");
    }
    let newgame = Command::NewGame {
        game: "loa".into(),
        rules: vec![],
    };
    assert_eq!(
        Dialect::Ugi(Spelling::UGI)
            .line(&newgame, GameKind::Loa)
            .unwrap(),
        "uginewgame"
    );
    let position = Command::Position {
        start: Some("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b".into()),
        moves: vec!["b1-b3".into()],
    };
    let line = Dialect::Ugi(Spelling::UGI)
        .line(&position, GameKind::Loa)
        .unwrap();
    assert_eq!(
        line,
        "position fen 1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b moves b1-b3"
    );
    assert_eq!(
        parse_command(
            &Dialect::Ugi(Spelling::UGI)
                .incoming(&line, GameKind::Loa)
                .unwrap()
        ),
        Some(position)
    );
    assert_eq!(
        Dialect::Ugi(Spelling::UGI).incoming("query gameover", GameKind::Loa),
        None
    );
}

#[test]
fn uci_writes_moves_without_separators_and_reads_them_back() {
    let position = Command::Position {
        start: None,
        moves: vec!["b1-b3".into(), "a2xc2".into()],
    };
    assert_eq!(
        Dialect::Uci(Spelling::UCI)
            .line(&position, GameKind::Loa)
            .unwrap(),
        "position startpos moves b1b3 a2c2"
    );
    assert_eq!(
        Dialect::Uci(Spelling::UCI)
            .line(&Command::Ugi, GameKind::Loa)
            .unwrap(),
        "uci"
    );
    assert_eq!(Dialect::Uci(Spelling::UCI).message("uciok"), Message::UgiOk);
    assert_eq!(
        Dialect::Uci(Spelling::UCI).line(&Command::Bench { game: None }, GameKind::Loa),
        None
    );
    assert_eq!(
        Dialect::Uci(Spelling::UCI).outgoing("bestmove b1-b3"),
        "bestmove b1b3"
    );
    assert_eq!(
        Dialect::Uci(Spelling::UCI).outgoing("bestmove none"),
        "bestmove (none)"
    );
    assert_eq!(Dialect::Uci(Spelling::UCI).outgoing("ugiok"), "uciok");
    let start = Loa::start();
    assert_eq!(canonical_move("b1b3"), "b1-b3");
    assert_eq!(canonical_move("b1-b3"), "b1-b3");
    assert_eq!(
        canonical_move("b1b8"),
        "b1-b8",
        "not legal, but spelled: the referee says it is not legal"
    );
    assert_eq!(compact_move("d1-d7/g7"), "d1d7g7");
    let amazons = tourney_rules::Amazons::start();
    let first = amazons.legal_moves()[0].to_string();
    assert_eq!(canonical_move(&compact_move(&first)), first);
    assert_eq!(squares_of("d1d10g7"), ["d1", "d10", "g7"]);
    assert!(squares_of("d1-d7").is_empty() && squares_of("1d").is_empty());
    assert!(is_compact("b1b3") && is_compact("d1d10g7"));
    assert!(!is_compact("b1-b3") && !is_compact("pass") && !is_compact("none"));
    // Every legal move's compact form reads back as the move.
    for mv in start.legal_moves() {
        let named = canonical_move(&compact_move(&mv.to_string()));
        assert_eq!(start.parse_move(&named), Ok(mv), "{named}");
    }
    assert_eq!("uci".parse::<Dialect>(), Ok(Dialect::Uci(Spelling::UCI)));
    // The names a tournament file may give are the dialects the runner speaks.
    assert_eq!(
        Dialect::ALL.map(Dialect::name),
        tourney_model::source::PROTOCOLS
    );
    assert!(
        "gtp2"
            .parse::<Dialect>()
            .unwrap_err()
            .contains("unknown protocol")
    );
    assert_eq!(
        "gtp:first=white".parse::<Dialect>(),
        Ok(Dialect::Gtp {
            first: Color::White
        })
    );
    assert_eq!(
        "gtp:first=white".parse::<Dialect>().unwrap().to_string(),
        "gtp:first=white"
    );
    assert!("gtp:first=red".parse::<Dialect>().is_err());
    assert!("uci:first=white".parse::<Dialect>().is_err());
    // Tourney's own passes through untouched.
    let go = Command::Go(go());
    assert_eq!(
        Dialect::Tourney.line(&go, GameKind::Loa).unwrap(),
        go.to_string()
    );
}

#[test]
fn a_spelling_writes_positions_and_moves_in_the_programs_letters() {
    // LOABot: upper case is Black, lower case White, and its `w` means Black to move.
    let loabot: Dialect = "uci:pieces=Ll,turn=wb".parse().unwrap();
    let position = Command::Position {
        start: Some("1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b".into()),
        moves: vec!["b1xb3".into()],
    };
    assert_eq!(
        loabot.line(&position, GameKind::Loa).unwrap(),
        "position fen 1LLLLLL1/l6l/l6l/l6l/l6l/l6l/l6l/1LLLLLL1 w moves b1b3"
    );
    assert_eq!(loabot.to_string(), "uci:pieces=Ll,turn=wb");
    assert_eq!(loabot.to_string().parse::<Dialect>(), Ok(loabot));
    // An Amazons program that writes tourney's moves, and its arrows as `a`.
    let amazons: Dialect = "uci:moves=separated,pieces=BWa".parse().unwrap();
    let position = Command::Position {
        start: Some("3b2b3/10/10/b8b/10/10/w8w/10/x9/3w2w3 w".into()),
        moves: vec!["d1-d7/g7".into()],
    };
    assert_eq!(
        amazons.line(&position, GameKind::Amazons).unwrap(),
        "position fen 3B2B3/10/10/B8B/10/10/W8W/10/a9/3W2W3 w moves d1-d7/g7"
    );
    assert_eq!(amazons.to_string(), "uci:pieces=BWa,moves=separated");
    // The default spellings say nothing, and read every move either way.
    assert_eq!("uci".parse::<Dialect>(), Ok(Dialect::Uci(Spelling::UCI)));
    assert_eq!(Dialect::Ugi(Spelling::UGI).to_string(), "ugi");
    assert_eq!(
        "ugi:moves=compact".parse::<Dialect>().unwrap().spelling(),
        Some(Spelling {
            compact: true,
            ..Spelling::UGI
        })
    );
    for bad in [
        "uci:pieces=L",
        "uci:turn=w",
        "uci:pieces=L1",
        "uci:moves=dashes",
        "uci:x=1",
    ] {
        let e = bad.parse::<Dialect>().unwrap_err();
        assert!(e.contains(bad), "{bad}: {e}");
    }
    assert!(
        "codingame:pieces=Ll"
            .parse::<Dialect>()
            .unwrap_err()
            .contains("takes no options")
    );
}
