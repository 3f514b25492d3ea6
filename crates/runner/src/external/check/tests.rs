use super::*;
use tourney_rules::{Amazons, Position};

#[test]
fn the_fixed_positions_are_what_they_say() {
    for text in [LOA_PASS, LOA_BLACK_PASS] {
        let pass: Loa = text.parse().unwrap();
        assert_eq!(
            pass.legal_moves(),
            vec![tourney_rules::loa::Move::Pass],
            "{text}"
        );
    }
    assert!(from::<Loa>(LOA_OVER).outcome().is_some());
    assert!(from::<Amazons>(AMAZONS_OVER).outcome().is_some());
    let trip = loa_round_trip();
    assert_eq!(trip.len(), 4, "{trip:?}");
    let mut game = Game::new(Loa::start(), Default::default());
    for mv in &trip {
        game.play_text(mv).unwrap();
    }
    assert_eq!(*game.position(), Loa::start());
    assert_eq!(
        option_default("option name Hash type spin default 16 min 1 max 1024"),
        Some(("Hash".into(), "16".into()))
    );
    assert_eq!(
        option_default("option name Style type combo default Normal var Solid var Normal"),
        Some(("Style".into(), "Normal".into()))
    );
    assert_eq!(option_default("option name Clear type button"), None);
}
