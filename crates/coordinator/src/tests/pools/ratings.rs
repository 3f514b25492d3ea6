//! A rating pool's ratings on `/metrics`: the standings' values while the pool runs, gone
//! once it ends, and within their bound however many pools and engines there are.

use std::collections::{BTreeMap, BTreeSet};

use prometheus::Registry;

use crate::metrics::{CoordinatorMetrics, TournamentGauges};
use crate::pool_metrics::{POOL_ENGINES_EXPORTED, POOLS_EXPORTED, PoolEngine};
use crate::tests::*;

/// A pool of `n` random players `v0`, `v1`, … at one node a move, `v1` its anchor.
fn pool_file(n: usize) -> String {
    let mut text = "name = \"pool\"\ngame = \"loa\"\nformat = \"pool\"\n\
                    openings = { plies = 2 }\nlimits = { nodes = 1, tc = \"10+0.1\" }\n\
                    [pool]\nanchor = \"v1\"\nmax_pairs = 500\n"
        .to_string();
    for i in 0..n {
        text += &format!("[[engine]]\nname = \"v{i}\"\nplayer = \"random:seed={i}\"\n");
    }
    text
}

/// The series `name{...}` of `text` by their labels (`engine`, `tournament`): their values.
fn series(text: &str, name: &str) -> BTreeMap<(String, String), f64> {
    let label = |labels: &str, key: &str| {
        let from = labels.find(&format!("{key}=\""))? + key.len() + 2;
        Some(labels[from..].split('"').next()?.to_string())
    };
    (text.lines())
        .filter_map(|line| {
            let rest = line.strip_prefix(name)?.strip_prefix('{')?;
            let (labels, value) = rest.split_once("} ")?;
            let key = (label(labels, "tournament")?, label(labels, "engine")?);
            Some((key, value.parse().ok()?))
        })
        .collect()
}

#[tokio::test]
async fn a_running_pools_ratings_are_its_standings_and_leave_when_it_is_cancelled() {
    let c = on_temporary_store();
    let id = c
        .submit(&pool_file(5), "pool.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    // The higher number is the stronger engine; one pair in three splits.
    for _ in 0..8 {
        let (lease, jobs) = c.lease(&worker, 8).unwrap();
        let results = (jobs.iter())
            .map(|job| {
                let (a, b) = (job.first.name.as_str(), job.second.name.as_str());
                let stronger = if a > b { a } else { b };
                let winners = if job.pair % 3 == 0 {
                    [a, b]
                } else {
                    [stronger, stronger]
                };
                pair_won_by(&c, &worker, job, lease, winners, ["crash", "crash"])
            })
            .collect();
        c.report(&worker, results).await.unwrap();
    }
    let status = c.status(id).unwrap();
    assert!(status.pairs_done >= 40, "{}", status.pairs_done);
    let text = c.metrics_text();
    let (elo, interval) = (
        series(&text, "tourney_pool_rating_elo"),
        series(&text, "tourney_pool_rating_interval_elo"),
    );
    let t = id.to_string();
    assert!(text.contains(&format!("tourney_pool_engines{{tournament=\"{t}\"}} 5")));
    assert_eq!(elo.len(), 5, "{text}");
    for p in &status.ratings.players {
        let key = (t.clone(), p.name.clone());
        assert!((elo[&key] - p.elo).abs() < 1e-9, "{}: {}", p.name, p.elo);
        assert!(
            (interval[&key] - p.plus).abs() < 1e-9,
            "{}: {}",
            p.name,
            p.plus
        );
    }
    let anchor = (t.clone(), "v1".to_string());
    assert_eq!((elo[&anchor], interval[&anchor]), (0.0, 0.0));
    assert!(elo[&(t.clone(), "v4".into())] > elo[&(t.clone(), "v0".into())]);
    // Not also, unbounded, as every engine's `tourney_elo_estimate`.
    assert!(series(&text, "tourney_elo_estimate").is_empty(), "{text}");

    assert!(c.cancel(id).await.unwrap());
    let text = c.metrics_text();
    assert!(!text.contains("tourney_pool_rating"), "{text}");
    assert!(!text.contains("tourney_pool_engines{"), "{text}");
}

#[test]
fn however_many_pools_and_engines_the_pool_series_stay_within_their_bound() {
    let metrics = CoordinatorMetrics::new(&Registry::new());
    let names: Vec<String> = (0..256).map(|i| format!("e{i:03}")).collect();
    // 20 pools of 256 engines, the most a pool has, each rated by its number (the newest
    // best), all with games but the last.
    let engines: Vec<PoolEngine<'_>> = (names.iter().enumerate())
        .map(|(i, name)| PoolEngine {
            name,
            elo: (i % 100) as f64,
            interval: 10.0,
            games: u64::from(i < 255),
        })
        .collect();
    let gauges = |live: &dyn Fn(u64) -> bool| -> Vec<TournamentGauges<'_>> {
        (1..=20)
            .map(|id| TournamentGauges {
                id,
                info: ["pool", "loa", "pool"],
                state: if live(id) { "running" } else { "finished" },
                pending: None,
                leased: 0,
                done: 1,
                excluded: 0,
                suspects: 0,
                llr: None,
                share: None,
                elo: Vec::new(),
                pool: live(id).then(|| engines.clone()),
            })
            .collect()
    };
    let exported = |metrics: &CoordinatorMetrics| {
        let text = metrics.encode();
        let elo = series(&text, "tourney_pool_rating_elo");
        let interval = series(&text, "tourney_pool_rating_interval_elo");
        assert_eq!(
            elo.keys().collect::<Vec<_>>(),
            interval.keys().collect::<Vec<_>>()
        );
        let mut by_pool: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
        for (pool, engine) in elo.into_keys() {
            by_pool
                .entry(pool.parse().unwrap())
                .or_default()
                .insert(engine);
        }
        let counted = text
            .lines()
            .filter(|l| l.starts_with("tourney_pool_engines{"));
        assert_eq!(counted.count(), by_pool.len());
        by_pool
    };

    metrics.set_gauges(&[], &gauges(&|_| true));
    let by_pool = exported(&metrics);
    assert_eq!(
        by_pool.keys().copied().collect::<Vec<_>>(),
        (13..=20).collect::<Vec<_>>(),
        "the newest {POOLS_EXPORTED}"
    );
    // Of each, the 16 newest engines with games (e239 to e254) and the 16 best-rated (99
    // and down: e099, e199, e098, e198, …, e092, e192), no more.
    let mut wanted: BTreeSet<String> = (239..255).map(|i| format!("e{i:03}")).collect();
    for i in 92..100 {
        wanted.extend([format!("e{i:03}"), format!("e{:03}", i + 100)]);
    }
    for engines in by_pool.values() {
        assert_eq!(engines, &wanted);
        assert_eq!(engines.len(), POOL_ENGINES_EXPORTED);
    }

    // Pools that end leave at the next scrape; older live ones take their places.
    metrics.set_gauges(&[], &gauges(&|id| id % 2 == 1));
    let by_pool = exported(&metrics);
    assert_eq!(
        by_pool.keys().copied().collect::<Vec<_>>(),
        [5, 7, 9, 11, 13, 15, 17, 19]
    );
    metrics.set_gauges(&[], &gauges(&|_| false));
    assert!(exported(&metrics).is_empty());
    assert!(!metrics.encode().contains("tourney_pool_"));
}
