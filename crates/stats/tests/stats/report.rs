//! Rendering: every section of a report appears in each format, with real SVG charts.

use tourney_stats::report::{Crosstable, Report, SprtReport};
use tourney_stats::{BayesElo, GameTable, Sprt};

fn report() -> Report {
    let pgn = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/rr4_240.pgn"
    ))
    .unwrap();
    let table = GameTable::from_pgn(&pgn).unwrap();
    let ratings = BayesElo::default().rate(&table);
    let names: Vec<String> = ratings.players.iter().map(|p| p.name.clone()).collect();
    // A made-up SPRT history: pair results cycling through all five bins, biased upwards.
    let pairs: Vec<usize> = (0..600)
        .map(|i| [2, 3, 1, 2, 4, 2, 3, 0, 2, 3][i % 10])
        .collect();
    let sprt = SprtReport::from_pairs(Sprt::preset("stc").unwrap(), &pairs, 50).unwrap();
    Report {
        title: "rr4 <test> & co".into(),
        crosstable: Crosstable::new(&table, &names),
        ratings,
        sprt: Some(sprt),
        terminations: vec![("connection".into(), 200), ("repetition".into(), 40)],
    }
}

#[test]
fn html_report_has_every_section_and_chart() {
    let html = report().html();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("rr4 &lt;test&gt; &amp; co"),
        "title is escaped"
    );
    for section in [
        "id=\"standings\"",
        "id=\"crosstable\"",
        "id=\"sprt\"",
        "id=\"terminations\"",
    ] {
        assert!(html.contains(section), "missing {section}");
    }
    // Standings, LLR, Elo and pentanomial charts.
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("Kilo") && html.contains("14-14-12"));
    assert!(!html.contains("<script"), "no scripts, no network");
}

#[test]
fn sprt_trajectory_follows_the_pairs() {
    let r = report();
    let s = r.sprt.as_ref().unwrap();
    assert_eq!(s.pentanomial.pairs(), 600);
    assert_eq!(s.trajectory.last().unwrap().pairs, 600);
    assert!((s.trajectory.last().unwrap().llr - s.status.llr).abs() < 1e-12);
    assert!(s.trajectory.windows(2).all(|w| w[0].pairs < w[1].pairs));
    assert!(s.trajectory.len() >= 50);
}

#[test]
fn text_and_csv_list_every_player() {
    let r = report();
    let text = r.text();
    for name in ["Kilo", "Mike", "Lima", "November"] {
        assert!(text.contains(name));
    }
    assert!(text.contains("SPRT normalized [0, 2]") && text.contains("connection: 200"));
    let csv = r.csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("rank,name,elo,plus,minus"));
    assert!(lines[1].starts_with("1,Kilo,46.10,"));
}
