//! Engine versions: used by name, never changed once played, rated on one timeline.

use std::collections::BTreeMap;

use tourney_model::tournament::State;
use tourney_tests::tournaments::MatchFile;

use super::*;
use crate::state::Coordinator;

/// A version of a built-in player.
fn version(
    name: &str,
    player: &str,
    parent: Option<&str>,
) -> tourney_model::version::EngineVersion {
    tourney_model::version::EngineVersion {
        name: name.into(),
        player: Some(player.into()),
        parent: parent.map(str::to_string),
        ..Default::default()
    }
}

/// Submits a match of `pairs` pairs between versions `a` and `b` and plays it to the end,
/// `b` winning every game; its id.
async fn versions_match(c: &Coordinator, a: &str, b: &str, pairs: u64) -> u64 {
    let file = MatchFile {
        name: "versions",
        pairs,
        limits: "{ nodes = 1 }",
        engines: [(a, &format!("version:{a}")), (b, &format!("version:{b}"))],
        ..Default::default()
    };
    let id = c
        .submit(&file.toml(), "versions.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, pairs as usize).unwrap();
    let results = jobs
        .iter()
        .map(|j| pair_won_by(c, &worker, j, lease, [b, b], ["crash", "crash"]))
        .collect();
    c.report(&worker, results).await.unwrap();
    assert_eq!(c.status(id).unwrap().state, State::Finished);
    id
}

#[tokio::test]
async fn versions_are_used_by_name_never_changed_once_played_and_rated_on_one_timeline() {
    let c = on_temporary_store();
    c.add_version(version("v1", "random:seed=1", None), false)
        .unwrap();
    c.add_version(version("v2", "random:seed=2", Some("v1")), false)
        .unwrap();
    c.add_version(version("v3", "random:seed=3", Some("v2")), false)
        .unwrap();
    let refused = |v, replace| c.add_version(v, replace).unwrap_err().to_string();
    assert!(refused(version("v4", "random", Some("v0")), false).contains("no parent version 'v0'"));
    assert!(refused(version("v4", "nosuch:depth=1", None), false).contains("player nosuch"));
    assert!(refused(version("v1", "random", None), false).contains("exists already"));
    let unknown = MatchFile {
        engines: [("a", "version:v1"), ("b", "version:v9")],
        ..Default::default()
    }
    .toml();
    let e = c
        .submit(&unknown, "unknown.toml", "", BTreeMap::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("engine[1].version: no version 'v9'"), "{e}");

    let first = versions_match(&c, "v1", "v2", 6).await;
    let second = versions_match(&c, "v2", "v3", 6).await;
    assert!(refused(version("v1", "random:seed=9", None), true).contains("has played"));
    c.add_version(version("v4", "random", None), false).unwrap();
    c.add_version(version("v4", "random:seed=4", None), true)
        .unwrap();
    // Named by a test that has played nothing yet: not "has played", but how to go on.
    let waiting = MatchFile {
        name: "waiting",
        engines: [("a", "version:v4"), ("b", "random")],
        ..Default::default()
    };
    let id = (c
        .submit(&waiting.toml(), "w.toml", "", BTreeMap::new())
        .await)
        .unwrap();
    let why = refused(version("v4", "random:seed=5", None), true);
    assert!(
        why.contains(&format!("tournament {id} names it (no pair played yet)"))
            && why.contains("--parent v4")
            && !why.contains("has played"),
        "{why}"
    );
    assert!(c.cancel(id).await.unwrap());

    let timeline = c.timeline(None).unwrap();
    assert_eq!(timeline.anchor.as_deref(), Some("v1"));
    assert_eq!(timeline.games, 24);
    let rows: Vec<(&str, Option<f64>, Vec<u64>)> = timeline
        .entries
        .iter()
        .map(|e| {
            (
                e.version.name.as_str(),
                e.rating.as_ref().map(|r| r.elo),
                e.tournaments.clone(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[0].0, rows[0].1), ("v1", Some(0.0)));
    let (v2, v3) = (rows[1].1.unwrap(), rows[2].1.unwrap());
    assert!(
        0.0 < v2 && v2 < v3,
        "each version beat its parent: {rows:?}"
    );
    assert_eq!(rows[0].2, [first]);
    assert_eq!(rows[1].2, [first, second]);
    assert_eq!(rows[2].2, [second]);
    assert_eq!((rows[3].0, rows[3].1), ("v4", None), "no games yet");
    let at_v3 = c.timeline(Some("v3")).unwrap();
    let elo = |t: &crate::Timeline, name: &str| {
        t.entries
            .iter()
            .find(|e| e.version.name == name)
            .unwrap()
            .rating
            .as_ref()
            .unwrap()
            .elo
    };
    assert_eq!(elo(&at_v3, "v3"), 0.0);
    assert!((elo(&at_v3, "v1") - (-v3)).abs() < 1e-6);
    assert!(
        c.timeline(Some("v4"))
            .unwrap_err()
            .to_string()
            .contains("anchor 'v4'")
    );
    // A tournament between versions shows them all in its HTML report.
    let (_, report) = c.report_with_timeline(second).unwrap();
    assert_eq!(
        c.report_of(second).unwrap().1.timeline,
        None,
        "the live view does without"
    );
    let html = report.html(|id| Some(format!("report-{id}.html")));
    assert!(html.contains("<section id=\"timeline\">"), "{html}");
    assert!(html.contains(&format!("<a href=\"report-{first}.html\">#{first}</a>")));

    // Listed oldest first.
    let versions = c.versions();
    assert_eq!(
        versions.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(),
        ["v1", "v2", "v3", "v4"]
    );
}
