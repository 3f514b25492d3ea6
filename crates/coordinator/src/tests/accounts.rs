//! Tests changed by people: a priority, weight or pair budget changed after submission, a
//! test deleted from the lists, and a test waiting for approval, each kept across a
//! restart.

use std::collections::BTreeMap;

use prometheus::Registry;
use tourney_model::account::Role;
use tourney_model::tournament::State;

use super::{coordinator, match_file, reopen};
use crate::accounts::Principal;
use crate::state::Coordinator;
use crate::tournaments::actions::Modification;
use crate::types::Settings;

/// A change of priority and/or weight.
fn share(priority: Option<i32>, weight: Option<f64>) -> Modification {
    Modification {
        priority,
        weight,
        pair_budget: None,
    }
}

fn as_(name: &str, role: Role) -> Principal {
    Principal {
        name: name.into(),
        role,
        operator: false,
    }
}

#[tokio::test]
async fn a_changed_share_and_a_pending_test_outlive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (operator, ann) = (Principal::operator("ops"), as_("ann", Role::User));
    let pending = {
        let (c, id) = coordinator(&dir, 60_000).await;
        let bob = as_("bob", Role::User);
        assert!(
            c.modify_as(&bob, id, share(Some(5), None)).await.is_err(),
            "not bob's"
        );
        let too_big = c
            .modify_as(&operator, id, share(Some(2_000_000), None))
            .await;
        assert!(too_big.unwrap_err().to_string().contains("priority"));
        for weight in [0.0, -1.0, f64::NAN, 1e7] {
            let refused = c.modify_as(&operator, id, share(None, Some(weight))).await;
            assert!(refused.is_err(), "weight {weight}");
        }
        assert!(
            c.modify_as(&operator, id, share(Some(-3), Some(2.5)))
                .await
                .unwrap()
        );
        let status = c.status(id).unwrap();
        assert_eq!((status.config.priority, status.config.weight), (-3, 2.5));
        let origin = crate::Origin {
            tuned_by: None,
            author: Some("ann".into()),
            pending: true,
        };
        let text = match_file();
        let pending = c
            .submit_with(
                &text,
                "p.toml",
                "",
                BTreeMap::new(),
                BTreeMap::new(),
                origin,
            )
            .await
            .unwrap();
        assert_eq!(c.state(pending), Some(State::Pending));
        assert!(
            c.modify_as(&ann, pending, share(None, Some(4.0)))
                .await
                .unwrap()
        );
        pending
    };
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    let first = c.ids()[0];
    let status = c.status(first).unwrap();
    assert_eq!((status.config.priority, status.config.weight), (-3, 2.5));
    assert_eq!(c.state(pending), Some(State::Pending), "still waiting");
    assert_eq!(c.status(pending).unwrap().config.weight, 4.0);
    assert!(
        c.approve(&as_("ann", Role::Approver), pending)
            .await
            .is_err(),
        "its author"
    );
    assert!(
        c.approve(&as_("apu", Role::Approver), pending)
            .await
            .unwrap()
    );
    assert_eq!(c.state(pending), Some(State::Queued));
    let events = c.events(0, 10).unwrap();
    let did = |who: &str, action: &str| events.iter().any(|e| e.who == who && e.action == action);
    assert!(did("ops", "modified") && did("ann", "modified") && did("apu", "approved"));
    assert!(
        events.iter().any(|e| e.detail == "priority -3, weight 2.5"),
        "{events:?}"
    );
    // An ended test's share does not change.
    assert!(c.cancel_as(&operator, first).await.unwrap());
    assert!(
        !c.modify_as(&operator, first, share(Some(1), None))
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_pair_budget_changes_within_bounds_and_a_deleted_test_leaves_the_lists() {
    let dir = tempfile::tempdir().unwrap();
    let operator = Principal::operator("ops");
    let budget = |pairs| Modification {
        pair_budget: Some(pairs),
        ..Default::default()
    };
    let id = {
        let (c, id) = coordinator(&dir, 60_000).await;
        // Its first pairs are handed out: the budget may not go below them.
        let worker = c.register("w", "test", 1, "t").unwrap().0;
        assert_eq!(c.lease(&worker, 2).unwrap().1.len(), 2);
        let refused = c.modify_as(&operator, id, budget(1)).await.unwrap_err();
        assert!(
            refused.to_string().contains("at least that many"),
            "{refused}"
        );
        assert!(c.modify_as(&operator, id, budget(0)).await.is_err());
        assert!(c.modify_as(&operator, id, budget(40)).await.unwrap());
        assert_eq!(c.status(id).unwrap().config.pair_budget(), 40);
        // A round robin's length is its rounds.
        let rr = match_file().replace("format = \"match\"", "format = \"round-robin\"\nrounds = 2");
        let rr = rr.replace("pairs = ", "# pairs = ");
        let round_robin = c.submit(&rr, "rr.toml", "", BTreeMap::new()).await.unwrap();
        let why = c
            .modify_as(&operator, round_robin, budget(9))
            .await
            .unwrap_err();
        assert!(why.to_string().contains("round-robin"), "{why}");
        // Only an ended test leaves the lists.
        assert!(c.hide_as(&operator, id, true).await.is_err(), "still live");
        assert!(c.cancel_as(&operator, id).await.unwrap());
        assert!(
            c.hide_as(&as_("bob", Role::User), id, true).await.is_err(),
            "not bob's"
        );
        assert!(c.hide_as(&operator, id, true).await.unwrap());
        id
    };
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(c.status(id).unwrap().config.pair_budget(), 40, "kept");
    let listed = |c: &Coordinator| c.page(None, 50).0.iter().any(|s| s.id == id);
    let found = |c: &Coordinator| {
        let search = crate::Search {
            q: "late".into(),
            ..Default::default()
        };
        c.search(&search, None, 50).0.iter().any(|s| s.id == id)
    };
    assert!(!listed(&c) && !found(&c), "deleted from the lists");
    assert!(c.status(id).is_some(), "its page stays");
    assert!(c.hide_as(&operator, id, false).await.unwrap());
    assert!(listed(&c) && found(&c), "restored");
    let events = c.events(0, 20).unwrap();
    for action in ["deleted", "restored"] {
        assert!(
            events.iter().any(|e| e.action == action),
            "{action}: {events:?}"
        );
    }
    assert!(
        events.iter().any(|e| e.detail == "pair budget 40"),
        "{events:?}"
    );
}

#[tokio::test]
async fn tests_are_found_by_name_author_engine_state_and_paged() {
    let dir = tempfile::tempdir().unwrap();
    let (c, first) = coordinator(&dir, 60_000).await;
    let mut ids = vec![first];
    for (who, name) in [
        ("ann", "Fast LMR"),
        ("bob", "slow eval"),
        ("ann", "lmr again"),
    ] {
        let text = match_file().replacen("name = \"late\"", &format!("name = \"{name}\""), 1);
        let by = as_(who, Role::Approver);
        let id = c
            .submit_as(&by, &text, "t.toml", "", BTreeMap::new(), BTreeMap::new())
            .await
            .unwrap();
        ids.push(id);
    }
    assert!(
        c.cancel_as(&Principal::operator("ops"), ids[2])
            .await
            .unwrap()
    );
    let found = |search: crate::Search| -> Vec<u64> {
        c.search(&search, None, 10).0.iter().map(|s| s.id).collect()
    };
    let by_name = crate::Search {
        q: "LMR".into(),
        ..Default::default()
    };
    assert_eq!(found(by_name), [ids[3], ids[1]], "any case, newest first");
    let by_author = crate::Search {
        author: "ann".into(),
        ..Default::default()
    };
    assert_eq!(found(by_author), [ids[3], ids[1]]);
    let cancelled = crate::Search {
        state: "cancelled".into(),
        ..Default::default()
    };
    assert_eq!(found(cancelled), [ids[2]]);
    let by_engine = crate::Search {
        engine: "b".into(),
        ..Default::default()
    };
    assert_eq!(found(by_engine).len(), 4);
    let nothing = crate::Search {
        verdict: "H1".into(),
        ..Default::default()
    };
    assert!(found(nothing).is_empty(), "no SPRT decided");
    let now = tourney_model::unix_ms_now();
    let dates = |since_ms, until_ms| crate::Search {
        since_ms,
        until_ms,
        ..Default::default()
    };
    assert_eq!(found(dates(now - 60_000, now + 60_000)).len(), 4);
    assert!(
        found(dates(now + 60_000, 0)).is_empty(),
        "none submitted later"
    );
    assert!(
        found(dates(0, now - 60_000)).is_empty(),
        "none submitted earlier"
    );
    // Pages of two: the next page starts after the last of this one.
    let all = crate::Search::default();
    let (page, next) = c.search(&all, None, 2);
    assert_eq!(
        page.iter().map(|s| s.id).collect::<Vec<_>>(),
        [ids[3], ids[2]]
    );
    let (rest, last) = c.search(&all, next, 2);
    assert_eq!(
        rest.iter().map(|s| s.id).collect::<Vec<_>>(),
        [ids[1], ids[0]]
    );
    assert_eq!(last, None);
}

#[tokio::test]
async fn a_cancelled_test_is_resumed_by_its_author_waiting_again_if_never_approved() {
    let c = super::on_temporary_store();
    let (ann, apu) = (as_("ann", Role::User), as_("apu", Role::Approver));
    let origin = crate::Origin {
        tuned_by: None,
        author: Some("ann".into()),
        pending: true,
    };
    let id = c
        .submit_with(
            &match_file(),
            "p.toml",
            "",
            BTreeMap::new(),
            BTreeMap::new(),
            origin,
        )
        .await
        .unwrap();
    assert!(c.cancel_as(&ann, id).await.unwrap());
    assert!(
        c.resume_as(&as_("bob", Role::User), id).await.is_err(),
        "not bob's"
    );
    assert!(c.resume_as(&ann, id).await.unwrap());
    assert_eq!(
        c.state(id),
        Some(State::Pending),
        "resuming is not approving"
    );
    // A pending test has not started: its report says when it was submitted.
    let details: BTreeMap<String, String> =
        c.report_of(id).unwrap().1.details.into_iter().collect();
    assert!(!details.contains_key("Started"), "{details:?}");
    assert_eq!(details["ETA"], "once approved, after the first pairs");
    assert!(c.approve(&apu, id).await.unwrap());
    assert!(c.cancel_as(&ann, id).await.unwrap());
    assert!(c.resume_as(&ann, id).await.unwrap());
    assert_eq!(c.state(id), Some(State::Queued), "approved once");
    // Deleted from the lists, it is restored before it is resumed.
    assert!(c.cancel_as(&ann, id).await.unwrap());
    assert!(c.hide_as(&ann, id, true).await.unwrap());
    let refused = c.resume_as(&ann, id).await.unwrap_err().to_string();
    assert!(refused.contains("restore it first"), "{refused}");
    assert!(c.hide_as(&ann, id, false).await.unwrap());
    assert!(c.resume_as(&apu, id).await.unwrap());
    let events = c.events(0, 20).unwrap();
    let resumed = (events.iter()).filter(|e| e.action == "resumed").count();
    assert_eq!(resumed, 3, "{events:?}");
}
