//! Listing and exporting: tournaments by pages, exports filtered, in pages, of
//! acknowledged pairs only.

use std::collections::BTreeMap;

use super::*;

#[tokio::test]
async fn a_thousand_tournaments_are_listed_by_pages_and_the_overview_shows_the_recent_ones() {
    let c = on_temporary_store();
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    for _ in 0..1000 {
        c.submit(&match_file(), "m.toml", "", BTreeMap::new())
            .await
            .unwrap();
        lease_and_win(&c, &worker, 4).await;
    }
    // Pages of 300, newest first, cover every tournament once.
    let mut seen = Vec::new();
    let mut after = None;
    loop {
        let (page, next) = c.page(after, 300);
        assert!(page.len() <= 300);
        seen.extend(page.iter().map(|s| s.id));
        match next {
            Some(id) => after = Some(id),
            None => break,
        }
    }
    assert_eq!(seen, (1..=1000).rev().collect::<Vec<u64>>());
    let overview = serde_json::to_value(crate::api::dashboard::overview_of(&c)).unwrap();
    let listed = overview["tournaments"].as_array().unwrap();
    assert_eq!(listed.len(), crate::api::dashboard::TOURNAMENTS_LISTED);
    assert_eq!(listed[0]["id"], 1000);
    assert_eq!(overview["tournaments_total"], 1000);
}

#[tokio::test]
async fn exports_keep_the_pairs_engine_and_times_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    lease_and_win(&c, &worker, 4).await;
    let count = |filter: crate::ExportFilter| exported(&c, id, &filter).len();
    assert_eq!(count(Default::default()), 8);
    let pairs = |from, to| crate::ExportFilter {
        pairs: Some((from, to)),
        ..Default::default()
    };
    assert_eq!(count(pairs(1, 2)), 4);
    assert_eq!(count(pairs(3, u64::MAX)), 2);
    assert_eq!(count(pairs(9, 20)), 0);
    let lines = exported(&c, id, &pairs(2, 2));
    assert!(lines.iter().all(|l| l.contains(r#""pair":2"#)), "{lines:?}");
    let engine = |name: &str| crate::ExportFilter {
        engine: Some(name.into()),
        ..Default::default()
    };
    assert_eq!((count(engine("a")), count(engine("nobody"))), (8, 0));
    // These records carry no start time: a time filter keeps none of them.
    let since = crate::ExportFilter {
        since_ms: Some(0),
        ..Default::default()
    };
    assert_eq!(count(since), 0);
}

#[tokio::test]
async fn an_export_holds_only_acknowledged_pairs() {
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(10), "ack.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 2, "t").unwrap().0;
    lease_and_win(&c, &worker, 2).await;
    // A batch on its way to disk is readable in the store before it is acknowledged (and
    // counted): as pairs 2 and 3, copies of pair 0 written past the scheduler.
    let stored = c.store().pair(id, 0).unwrap().unwrap();
    let unacknowledged: Vec<_> = [2, 3]
        .map(|pair| {
            let mut record = stored.clone();
            record.outcome.pair = pair;
            record
        })
        .into();
    c.store().commit_pairs(&unacknowledged).await.unwrap();
    let lines = exported(&c, id, &crate::ExportFilter::default());
    assert_eq!(pairs_of(&lines), [0, 0, 1, 1]);
    assert_eq!(c.status(id).unwrap().pairs_done, 2);
}

#[tokio::test]
async fn an_export_comes_in_pages_of_about_a_mebibyte_in_pair_order() {
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(5000), "odd.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 256, "t").unwrap().0;
    for _ in 0..10 {
        lease_and_win(&c, &worker, 500).await;
    }
    let all = crate::ExportFilter::default();
    let (first, next) = c.export_page(id, &all, 0).unwrap();
    let bytes: usize = first.iter().map(String::len).sum();
    assert!(
        next.is_some() && bytes >= crate::views::EXPORT_PAGE_BYTES,
        "{bytes} bytes, then {next:?}"
    );
    let lines = exported(&c, id, &all);
    let pairs = pairs_of(&lines);
    assert_eq!(pairs.len(), 10_000);
    assert!(pairs.windows(2).all(|w| w[0] <= w[1]), "pair order");
    assert_eq!(pairs.iter().filter(|&&p| p == 4999).count(), 2);
    let tail = crate::ExportFilter {
        pairs: Some((1400, 1449)),
        ..Default::default()
    };
    assert_eq!(exported(&c, id, &tail).len(), 100);
}
