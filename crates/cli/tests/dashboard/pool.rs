//! A rating pool on the live dashboard and `/metrics`, end to end: six registered
//! versions played by a worker, the pool's page charting each version's rating with its
//! interval in Chromium (a screenshot is saved under `target/test-artifacts/`), the chart
//! redrawn as pairs arrive, and the ratings on `/metrics` while the pool runs and not
//! once it is cancelled.

use serde_json::Value;
use tourney_tests::http::get;
use tourney_tests::process::Reaped;
use tourney_tests::wait;
use tourney_tests::webdriver::Browser;

use crate::common::*;

/// The versions, oldest first, and what each plays.
const VERSIONS: [(&str, &str); 6] = [
    ("ab-v1", "ab:depth=1"),
    ("ab-v2", "random"),
    ("ab-v3-connectedness", "ab:depth=2"),
    ("ab-v4", "ab:depth=1,connectedness=80"),
    ("ab-v5", "ab:depth=2,connectedness=80"),
    ("mcts-nightly", "random:seed=7"),
];

/// What the chart's image says of itself: its text alternative, and from its SVG each
/// point (`x`, `y`, and its error bar's ends, `null` without one) left to right.
const CHART: &str = r#"const img = document.querySelector('#chart-pool img');
    if (!img || !img.complete || img.naturalWidth === 0) return null;
    const src = img.getAttribute('src');
    const svg = new DOMParser().parseFromString(decodeURIComponent(src.slice(src.indexOf(',') + 1)), 'image/svg+xml');
    const points = [...svg.querySelectorAll('circle')].map((c) => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))])
      .concat([...svg.querySelectorAll('rect[width="10"]')].map((r) => [Number(r.getAttribute('x')) + 5, Number(r.getAttribute('y')) + 5]))
      .sort((a, b) => a[0] - b[0]);
    const bars = [...svg.querySelectorAll('polyline')].map((l) => l.getAttribute('points').trim().split(' ').map((p) => p.split(',').map(Number)))
      .filter((p) => p.length === 2 && p[0][0] === p[1][0] && p[0][1] !== p[1][1]);
    return { alt: img.getAttribute('alt'), src,
      points: points.map(([x, y]) => {
        const bar = bars.find((b) => b[0][0] === x);
        return { x, y, bar: bar ? [Math.min(bar[0][1], bar[1][1]), Math.max(bar[0][1], bar[1][1])] : null };
      }) };"#;

#[test]
fn a_pools_page_charts_each_versions_rating_and_metrics_export_them_while_it_runs() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    for (name, player) in VERSIONS {
        admin(port, &["version", "add", name, "--player", player]);
    }
    let mut text = "name = \"nightly pool\"\ngame = \"loa\"\nformat = \"pool\"\n\
                    openings = { plies = 2, seed = 5 }\nlimits = { nodes = 50 }\n\
                    adjudication = { max_plies = 60 }\npool = { max_pairs = 2000 }\n"
        .to_string();
    for (name, _) in VERSIONS {
        text += &format!("[[engine]]\nversion = \"{name}\"\n");
    }
    let file = dir.path().join("pool.toml");
    std::fs::write(&file, text).unwrap();
    let id = submit(port, &file);
    let _worker = Reaped(start_worker(port, "pool-worker"));
    wait_for(port, &id, "every version to play", |s| {
        let standings = s["standings"].as_array().unwrap();
        s["pairs_done"].as_u64().unwrap() >= 24
            && standings.iter().all(|p| p["games"].as_u64() > Some(0))
    });

    let browser = Browser::start(1280, 1000);
    browser.goto(&format!("http://127.0.0.1:{port}/#t={id}"));
    let first = browser.wait_for(30, "the pool's chart", CHART);
    browser.eval("document.querySelector('#chart-pool').scrollIntoView(); return true;");
    browser.save_screenshot(env!("CARGO_TARGET_TMPDIR"), "pool-chart.png");
    // One point per version, in the file's order (left to right), each but the anchor
    // with its error bar around it; the anchor's interval is 0.
    let points = first["points"].as_array().unwrap();
    assert_eq!(points.len(), VERSIONS.len(), "{first}");
    for (i, p) in points.iter().enumerate() {
        let y = p["y"].as_f64().unwrap();
        match p["bar"].as_array() {
            Some(bar) => {
                let (top, bottom) = (bar[0].as_f64().unwrap(), bar[1].as_f64().unwrap());
                assert!(i > 0 && top < y && y < bottom, "{p}");
            }
            None => assert_eq!(i, 0, "only the anchor has no bar: {p}"),
        }
    }
    // The text alternative names every version in order with its date and rating.
    let alt = first["alt"].as_str().unwrap();
    assert!(
        alt.starts_with(
            "Ratings by version, 95% intervals: 6 versions, oldest first, ab-v1 rated 0, best "
        ),
        "{alt}"
    );
    let at: Vec<usize> = (VERSIONS.iter())
        .map(|(name, _)| {
            alt.find(&format!(" {name} (20"))
                .unwrap_or_else(|| panic!("{name}: {alt}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{alt}");

    // Every version's rating and interval on /metrics, the anchor's 0 (their values are
    // the standings', tests/pool_ratings.rs in the coordinator).
    let host = format!("127.0.0.1:{port}");
    let (_, metrics) = get(&host, "/metrics").unwrap();
    let value = |series: &str, name: &str| -> f64 {
        let line = format!("{series}{{engine=\"{name}\",tournament=\"{id}\"}} ");
        (metrics.lines())
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("{line} in {metrics}"))
            .parse()
            .unwrap()
    };
    for (name, _) in VERSIONS {
        let (elo, interval) = (
            value("tourney_pool_rating_elo", name),
            value("tourney_pool_rating_interval_elo", name),
        );
        assert!(
            elo.is_finite() && interval.is_finite(),
            "{name}: {elo} {interval}"
        );
    }
    assert_eq!(value("tourney_pool_rating_elo", "ab-v1"), 0.0);
    assert_eq!(value("tourney_pool_rating_interval_elo", "ab-v1"), 0.0);
    assert!(metrics.contains(&format!("tourney_pool_engines{{tournament=\"{id}\"}} 6")));

    // The chart follows the pairs as they arrive.
    let src = first["src"].as_str().unwrap().to_string();
    browser.wait_for(
        60,
        "the chart to be drawn again",
        &format!("const img = document.querySelector('#chart-pool img'); return img && img.getAttribute('src') !== {};", Value::from(src)),
    );

    admin(port, &["cancel", &id]);
    wait::until(10, "the pool's series to leave /metrics", || {
        let (_, metrics) = get(&host, "/metrics").map_err(|e| e.to_string())?;
        match metrics.contains("tourney_pool_rating") {
            true => Err(metrics),
            false => Ok(()),
        }
    });
}
