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
        next.is_some() && bytes >= crate::views::exports::EXPORT_PAGE_BYTES,
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

/// Every piece of a download, in order.
fn pieces(c: &Coordinator, mut download: crate::Download) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    while let Some(piece) = download.next_piece(c).unwrap() {
        pieces.push(piece);
    }
    pieces
}

#[tokio::test]
async fn a_download_comes_a_page_at_a_time_as_pgn_or_jsonl_plain_or_gzip() {
    use std::io::Read;
    let c = on_temporary_store();
    let id = c
        .submit(&a_file(2500), "big.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 256, "t").unwrap().0;
    for _ in 0..10 {
        lease_and_win(&c, &worker, 250).await;
    }
    let all = crate::ExportFilter::default();
    let download = |format, gzip| crate::Download::new(id, all.clone(), format, gzip);
    // JSON Lines: the export's lines, in pieces of about its page.
    let jsonl = pieces(&c, download(crate::GamesFormat::Jsonl, false));
    assert!(jsonl.len() > 1, "more than one page");
    assert!(
        (jsonl.iter()).all(|p| p.len() < crate::views::exports::EXPORT_PAGE_BYTES * 3 / 2),
        "pieces of about a page"
    );
    let text = String::from_utf8(jsonl.concat()).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), exported(&c, id, &all));
    // PGN: a game per line, with its worker as Site and its comments.
    let pgn = String::from_utf8(pieces(&c, download(crate::GamesFormat::Pgn, false)).concat());
    let pgn = pgn.unwrap();
    assert_eq!(pgn.matches("[Event ").count(), 5000);
    let each: String = (exported(&c, id, &all).iter())
        .map(|line| crate::record_of_export_line(line).unwrap().to_pgn())
        .collect();
    assert!(pgn == each, "the PGN `tourney export` writes");
    assert_eq!(pgn.matches("[Site \"w#").count(), 5000, "{}", &pgn[..600]);
    // Gzip: the same bytes, one stream across the pieces.
    for (format, plain) in [
        (crate::GamesFormat::Jsonl, &text),
        (crate::GamesFormat::Pgn, &pgn),
    ] {
        let gz = pieces(&c, download(format, true)).concat();
        let mut unzipped = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut unzipped)
            .unwrap();
        assert_eq!(&unzipped, plain);
        assert!(
            gz.len() < plain.len() / 4,
            "{} of {}",
            gz.len(),
            plain.len()
        );
    }
    // A tournament with no games: an empty file, and an empty gzip stream.
    let empty = c
        .submit(&a_file(2), "empty.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let none = crate::Download::new(empty, all.clone(), crate::GamesFormat::Pgn, false);
    assert_eq!(pieces(&c, none).concat(), b"");
    let none = crate::Download::new(empty, all.clone(), crate::GamesFormat::Pgn, true);
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(&pieces(&c, none).concat()[..])
        .read_to_string(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, "");
    // Archived games are in the archive's files, and the download says so.
    assert!(c.cancel(empty).await.unwrap());
    assert_eq!(c.archive(empty, 0).await.unwrap(), Some(0));
    let archived = crate::Download::new(empty, all, crate::GamesFormat::Jsonl, false);
    let refused = pieces_or_error(&c, archived);
    assert!(refused.contains("archived"), "{refused}");
}

/// The error a download ends with.
fn pieces_or_error(c: &Coordinator, mut download: crate::Download) -> String {
    loop {
        match download.next_piece(c) {
            Ok(Some(_)) => continue,
            Ok(None) => return "no error".into(),
            Err(e) => return e.to_string(),
        }
    }
}
