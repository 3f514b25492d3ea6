//! A tournament's status view: the dashboard's lists, the gRPC message and its
//! `view_json` show the same facts.

use tourney_proto::v1 as pb;

use super::*;

#[tokio::test]
async fn the_dashboard_and_the_grpc_status_show_one_view() {
    let dir = tempfile::tempdir().unwrap();
    let (c, id) = coordinator(&dir, 60_000).await;
    let worker = c.register("w", "test", 4, "t").unwrap().0;
    lease_and_win(&c, &worker, 2).await;
    c.lease(&worker, 1).unwrap();
    let status = c.status(id).unwrap();
    let grpc = pb::TournamentStatus::from(&status);
    let view: serde_json::Value = serde_json::from_str(&grpc.view_json).unwrap();
    assert_eq!(
        (view["id"].as_u64(), view["state"].as_str()),
        (Some(id), Some("running"))
    );
    assert_eq!(
        (view["pairs_done"].as_u64(), view["pairs_leased"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!((grpc.pairs_done, grpc.pairs_leased), (2, 1));
    assert_eq!(
        view["standings"].as_array().unwrap().len(),
        grpc.standings.len()
    );
    assert_eq!(view["leader"]["name"], grpc.standings[0].name);
    assert_eq!(view["share"]["now"], grpc.share);
    // A list shows the view but for its standings and progress.
    // Both read from their text, as a client reads them.
    let overview = serde_json::to_string(&crate::api::dashboard::overview_of(&c)).unwrap();
    let overview: serde_json::Value = serde_json::from_str(&overview).unwrap();
    let mut listed = view.clone();
    listed.as_object_mut().unwrap().remove("standings");
    assert_eq!(overview["tournaments"][0], listed);
}
