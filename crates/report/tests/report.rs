//! Rendering: every section of a report appears in each format, with real SVG charts. The
//! games are the statistics crate's oracle tournament (`crates/stats/tests/data/`).

use tourney_report::{Crosstable, Report, SprtReport};
use tourney_stats::{BayesElo, GameTable, Sprt};

fn report() -> Report {
    let pgn = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../stats/tests/data/rr4_240.pgn"
    ))
    .unwrap();
    let table = GameTable::from_pgn(&pgn).unwrap();
    let ratings = BayesElo::default().rate(&table);
    let names: Vec<String> = ratings.players.iter().map(|p| p.name.clone()).collect();
    // A made-up SPRT history: pair results cycling through all five bins, biased upwards.
    let pairs: Vec<[u8; 2]> = (0..600)
        .map(|i| {
            [
                [1, 1],
                [2, 1],
                [0, 1],
                [2, 0],
                [2, 2],
                [1, 1],
                [1, 2],
                [0, 0],
                [0, 2],
                [1, 2],
            ][i % 10]
        })
        .collect();
    let sprt =
        SprtReport::from_pairs(Sprt::preset("stc").unwrap(), &pairs, pairs.len(), 50).unwrap();
    Report {
        title: "rr4 <test> & co".into(),
        notes: vec!["a <note>".into()],
        details: vec![
            ("Limits".into(), "tc 10+0.1".into()),
            ("Engine <a>".into(), "ab:depth=3".into()),
        ],
        crosstable: Crosstable::new(&table, &names),
        ratings,
        sprt: Some(sprt),
        terminations: vec![("connection".into(), 200), ("repetition".into(), 40)],
        openings: Report::most_lopsided(vec![
            tourney_report::OpeningResult {
                index: 0,
                position: "even".into(),
                games: 10,
                white_points: 5.0,
            },
            tourney_report::OpeningResult {
                index: 1,
                position: "white's".into(),
                games: 12,
                white_points: 10.5,
            },
            // Too few games to say anything: not listed.
            tourney_report::OpeningResult {
                index: 2,
                position: "two games".into(),
                games: 2,
                white_points: 0.0,
            },
        ]),
        engine_failures: vec![("Kilo".into(), "time-forfeit".into(), 3)],
        latency: tourney_report::EngineLatency::of(
            [
                ("Mike<".to_string(), vec![1, 2, 6]),
                ("Lima".to_string(), Vec::new()),
            ]
            .into(),
        ),
        workers: tourney_report::WorkersReport {
            g: 31.5,
            dof: 8,
            p: 1.1e-4,
            suspects: 1,
            workers: vec![tourney_report::WorkerResult {
                worker: "box<7>".into(),
                pairs: 40,
                games: 80,
                pentanomial: [1, 2, 3, 4, 30],
                residual: 5.25,
                time_losses: 0,
                engine_failures: 0,
                rejected: 2,
                suspect: vec!["results unlike the other workers'".into()],
                excluded: Some("since 2026-12-01 04:00:00 UTC: cheats".into()),
            }],
        },
        timeline: None,
        spsa: None,
        progress: None,
        adjudication_check: None,
    }
}

#[test]
fn html_report_has_every_section_and_chart() {
    let html = report().html(|_| None);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("rr4 &lt;test&gt; &amp; co"),
        "title is escaped"
    );
    for section in [
        "id=\"details\"",
        "<th>Engine &lt;a&gt;</th><td class=\"name\">ab:depth=3</td>",
        "id=\"sprt-estimate\">Elo ",
        "id=\"standings\"",
        "id=\"crosstable\"",
        "id=\"sprt\"",
        "id=\"terminations\"",
        "id=\"engine-failures\"",
        "<td class=\"name\">Mike&lt;</td><td>3</td><td>3.0</td><td>6</td>",
        "id=\"workers\"",
        "G = 31.5, 8 degrees of freedom, p = 1.10e-4; 1 suspect",
        "<td class=\"name\">box&lt;7&gt;</td><td>40</td><td>1, 2, 3, 4, 30</td><td>5.25</td>",
        "<strong>excluded</strong> since 2026-12-01 04:00:00 UTC: cheats",
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
    assert!(text.contains("Kilo: time-forfeit 3"), "{text}");
    // Latency: the mean and the largest of each engine that reported its time.
    assert!(
        text.contains("  Mike<: mean 3.0 ms, max 6 ms over 3 moves"),
        "{text}"
    );
    assert!(!text.contains("Lima: mean"), "no moves, no line: {text}");
    assert!(text.contains("Workers (G = 31.5, 8 degrees of freedom, p = 1.10e-4; 1 suspect)"));
    assert!(text.contains("excluded since 2026-12-01 04:00:00 UTC: cheats"));
    assert!(text.contains("suspect: results unlike the other workers'"));
    let csv = r.csv();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(lines[0].starts_with("rank,name,elo,plus,minus"));
    assert!(lines[1].starts_with("1,Kilo,46.10,"));
}

#[test]
fn an_sprt_stops_at_its_first_decision_and_its_estimate_counts_every_pair() {
    // Clear wins until H1 is accepted, then clear losses that would pull the LLR back.
    let wins = [[2, 1], [1, 1], [2, 2], [1, 2], [2, 0]];
    let pairs: Vec<[u8; 2]> = (0..400)
        .map(|i| if i < 200 { wins[i % 5] } else { [0, 0] })
        .collect();
    let sprt = Sprt {
        elo1: 50.0,
        ..Sprt::preset("stc").unwrap()
    };
    let s = SprtReport::from_pairs(sprt, &pairs, pairs.len(), 20).unwrap();
    assert_eq!(s.status.decision, tourney_stats::Decision::AcceptH1);
    let counted = s.sequential_pairs;
    assert!(counted < 200, "decided after {counted} pairs");
    let last = s.trajectory.last().unwrap();
    assert_eq!(last.pairs, counted);
    assert!(last.llr > s.status.upper_bound);
    // The estimate and the counts are those of every pair, as the standings count them;
    // the line says where the test decided.
    assert_eq!((s.pentanomial.pairs(), s.pentanomial.bins[0]), (400, 200));
    assert!(
        s.status_text().ends_with(&format!(
            "H1 accepted at pair {counted} ({} more finished after the decision)",
            400 - counted
        )),
        "{}",
        s.status_text()
    );
    // One pair fewer and it had not decided yet.
    let before = SprtReport::from_pairs(sprt, &pairs, counted as usize - 1, 20).unwrap();
    assert_eq!(before.status.decision, tourney_stats::Decision::Continue);
    assert!(
        before
            .status_text()
            .contains(&format!("the LLR counts the first {}", counted - 1)),
        "{}",
        before.status_text()
    );
}

#[test]
fn a_test_of_only_wins_gives_a_bound_not_a_number() {
    let sprt = Sprt::preset("stc").unwrap();
    let line = |pairs: &[[u8; 2]]| {
        SprtReport::from_pairs(sprt, pairs, pairs.len(), 10)
            .unwrap()
            .estimate_text()
    };
    // 0.05^(1/162) = 0.98168: 400·log10(0.98168/0.01832) = 691.7.
    let won = line(&[[2, 2]; 162]);
    assert!(
        won.starts_with("Elo difference >692 (95%; every pair won)"),
        "{won}"
    );
    assert!(!won.contains("1199"), "{won}");
    let lost = line(&[[0, 0]; 10]);
    // 0.05^(1/10) = 0.74113: 400·log10(0.74113/0.25887) = 182.7.
    assert!(
        lost.starts_with("Elo difference <-183 (95%; every pair lost)"),
        "{lost}"
    );
    // With three pairs the bound lies below 0 (0.05^(1/3) = 0.368: -94), still a floor.
    let few = line(&[[2, 2]; 3]);
    assert!(
        few.starts_with("Elo difference >-94 (95%; every pair won)"),
        "{few}"
    );
    let mixed = line(&[[2, 2], [2, 1]]);
    assert!(
        mixed.starts_with("Elo difference ") && mixed.contains('±'),
        "{mixed}"
    );
}

#[test]
fn the_bayeselo_model_gets_the_game_counts_it_needs() {
    let sprt = Sprt {
        model: tourney_stats::EloModel::BayesElo,
        ..Sprt::preset("stc").unwrap()
    };
    let pairs = [[2, 1], [1, 1], [0, 2], [1, 2]];
    let s = SprtReport::from_pairs(sprt, &pairs, pairs.len(), 10).unwrap();
    let mut counts = tourney_stats::SprtCounts::default();
    for p in pairs {
        counts.add(p);
    }
    assert_eq!(
        (
            counts.trinomial.wins,
            counts.trinomial.draws,
            counts.trinomial.losses
        ),
        (3, 4, 1)
    );
    assert_eq!(counts.pentanomial.bins, [0, 0, 2, 2, 0]);
    assert_eq!(s.status, sprt.status(&counts.input()).unwrap());
}

#[test]
fn the_sprt_line_gives_elo_nelo_los_and_the_pentanomial_counts() {
    let r = report();
    let s = r.sprt.as_ref().unwrap();
    let line = s.estimate_text();
    let summary = tourney_stats::Summary::pentanomial(s.pentanomial);
    assert!(
        line.starts_with(&format!(
            "Elo difference {:.2} ± {:.2} (95%), nElo {:.2}",
            summary.elo, summary.elo_error, summary.nelo
        )),
        "{line}"
    );
    assert!(
        line.contains(&format!("LOS {:.1}%", summary.los * 100.0)),
        "{line}"
    );
    assert!(
        line.contains(&format!("Ptnml(0-2) {}", s.pentanomial)),
        "{line}"
    );
    assert!(line.ends_with("600 pairs (1200 games)"), "{line}");
    let text = r.text();
    assert!(text.contains(&line), "{text}");
    assert!(
        text.starts_with(
            "rr4 <test> & co\n\nNote: a <note>\n\nLimits      tc 10+0.1\nEngine <a>  ab:depth=3\n\n"
        ),
        "{text}"
    );
    assert!(
        r.html(|_| None)
            .contains("<strong>Note:</strong> a &lt;note&gt;</p>")
    );
    // Openings, most lopsided first.
    let openings = text.split("Openings, most lopsided first").nth(1).unwrap();
    let lines: Vec<&str> = openings.lines().skip(1).take(2).collect();
    assert!(
        lines[0].contains("#1") && lines[0].contains("87.5%") && lines[0].ends_with("white's"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("#0") && lines[1].contains("50.0%"),
        "{lines:?}"
    );
    assert!(!text.contains("two games"), "{text}");
    assert!(r.html(|_| None).contains("id=\"openings\""));
}

#[test]
fn a_timeline_shows_every_version_oldest_first_with_its_interval_and_tournaments() {
    use tourney_report::{TimelineReport, TimelineRow};
    let row = |name: &str, parent: &str, elo: Option<f64>, tournaments: Vec<u64>| TimelineRow {
        name: name.into(),
        parent: parent.into(),
        plays: format!("ab:{name}"),
        elo,
        plus: 12.5,
        minus: 11.0,
        games: if elo.is_some() { 40 } else { 0 },
        score: 0.5,
        tournaments,
    };
    let report = TimelineReport {
        anchor: "v1".into(),
        games: 60,
        rows: vec![
            row("v1", "", Some(0.0), vec![3]),
            row("v2", "v1", Some(35.2), vec![3, 7]),
            row("v3<x>", "v2", None, vec![]),
        ],
    };
    let text = report.text();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "60 games between versions; v1 at 0");
    assert!(lines[3].starts_with("v2") && lines[3].contains("35.2") && lines[3].ends_with("#3 #7"));
    assert!(lines[4].contains("no games"), "{text}");
    let html = report.html(|id| Some(format!("/#t={id}")));
    assert!(html.contains("<a href=\"/#t=7\">#7</a>"), "{html}");
    // Where a tournament has no address (a stopped coordinator's data without its report
    // file), it is named without a link.
    let plain = report.html(|id| (id == 7).then(|| "report-7.html".to_string()));
    assert!(
        plain.contains("<a href=\"report-7.html\">#7</a>"),
        "{plain}"
    );
    assert!(
        plain.contains("#3 <a href=\"report-7.html\">#7</a>") && !plain.contains("/#t="),
        "{plain}"
    );
    assert!(
        html.contains("v3&lt;x&gt;") && !html.contains("v3<x>"),
        "escaped"
    );
    assert!(html.contains("<svg"), "a chart when versions are rated");
    let unrated = TimelineReport {
        anchor: String::new(),
        games: 0,
        rows: vec![row("v1", "", None, vec![])],
    };
    assert!(unrated.chart().is_empty());
    assert!(
        unrated
            .text()
            .starts_with("0 games between versions; nothing at 0")
    );
}

#[test]
fn a_grouped_tests_takes_a_bracket_and_swiss_standings_show_in_text_html_and_json() {
    use tourney_report::{FormatProgress, MatchProgress, SwissLine, TakeProgress};
    let take = |name: &str, llr: f64, state: &str, dropped: Option<&str>| TakeProgress {
        name: name.into(),
        llr,
        state: state.into(),
        dropped: dropped.map(Into::into),
        decided_after: dropped.map(|_| 120),
        pairs: 60,
        played: 70,
        share: 0.5,
    };
    let mut r = report();
    r.progress = Some(FormatProgress::Takes {
        verdict: "continue".into(),
        bounds: [-2.97, 4.33],
        takes: vec![
            take("take-<a>", 1.5, "alive", None),
            take("take-b", -3.0, "dropped", Some("below the lower bound")),
        ],
    });
    let text = r.text();
    assert!(
        text.contains("Grouped test: continue (each take's bounds [-2.97, 4.33])"),
        "{text}"
    );
    let line = text.lines().find(|l| l.contains("take-b")).unwrap();
    for cell in [
        "-3.00",
        "60",
        "70",
        "50%",
        "dropped",
        "below the lower bound",
        "120 pairs",
    ] {
        assert!(line.contains(cell), "{cell} in {line}");
    }
    let html = r.html(|_| None);
    assert!(html.contains("<section id=\"progress\">"), "{html}");
    assert!(html.contains("take-&lt;a&gt;") && !html.contains("take-<a>"));
    // The JSON round trip the status takes (proto `progress_json`).
    let json = serde_json::to_string(&r.progress).unwrap();
    assert!(json.contains("\"format\":\"takes\""), "{json}");
    let back: Option<FormatProgress> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r.progress);

    let knockout = FormatProgress::Knockout {
        rounds: vec![vec![MatchProgress {
            players: [Some("a".into()), Some("b".into())],
            points: [2.0, 2.0],
            pairs: 2,
            winner: Some("a".into()),
            by_seed: true,
            llr: None,
            by_sprt: false,
        }]],
        champion: Some("a".into()),
    };
    let text = knockout.text();
    assert!(text.starts_with("Knockout: won by a\n"), "{text}");
    assert!(
        text.contains("a - b") && text.contains("a (by seed)"),
        "{text}"
    );
    let swiss = FormatProgress::Swiss {
        round: 3,
        rounds: 5,
        stuck: true,
        standings: vec![SwissLine {
            name: "a".into(),
            points: 5.5,
            buchholz: 9.0,
            sonneborn_berger: 7.25,
            byes: 1,
        }],
    };
    let text = swiss.text();
    assert!(text.contains("Swiss: round 3 of 5 (ended early"), "{text}");
    assert!(text.contains("1     a     5.5"), "{text}");
}

#[test]
fn no_standings_chart_before_the_first_game() {
    let mut r = report();
    assert!(r.standings_chart().contains("<svg"));
    for p in &mut r.ratings.players {
        p.games = 0;
        (p.plus, p.minus) = (1319.0, 1319.0);
    }
    assert_eq!(
        r.standings_chart(),
        "",
        "no ±1319 bars for a test that has not started"
    );
}

#[test]
fn the_workers_test_says_why_it_has_nothing_to_compare() {
    let worker = |name: &str| tourney_report::WorkerResult {
        worker: name.into(),
        pairs: 10,
        games: 20,
        pentanomial: [0, 0, 0, 0, 10],
        residual: 0.0,
        time_losses: 0,
        engine_failures: 0,
        rejected: 0,
        suspect: Vec::new(),
        excluded: None,
    };
    let mut w = tourney_report::WorkersReport {
        g: 0.0,
        dof: 0,
        p: 1.0,
        suspects: 0,
        workers: vec![worker("a")],
    };
    assert_eq!(
        w.test_text(),
        "nothing to compare yet (one worker's results count)"
    );
    // Two workers played the pairing, every pair won: not "fewer than two workers".
    w.workers.push(worker("b"));
    let text = w.test_text();
    assert!(
        text.contains("every pair scored the same") && !text.contains("fewer than two"),
        "{text}"
    );
}
