//! Versions added to a running rating pool: stored with it, rated from the pair they
//! joined at, again after a restart; refused with the reason where they cannot join.

use std::collections::BTreeMap;

use tourney_model::account::Role;
use tourney_model::version::EngineVersion;

use crate::accounts::Principal;
use crate::tests::*;
use crate::types::CoordinatorError;

/// A pool of versions `v0` and `v1`, authored by `ann`, with a budget of 200 pairs.
const POOL: &str = "name = \"nightly\"\ngame = \"loa\"\nformat = \"pool\"\n\
                    openings = { plies = 2 }\nlimits = { nodes = 1, tc = \"10+0.1\" }\n\
                    [pool]\nmax_pairs = 200\n\
                    [[engine]]\nversion = \"v0\"\n[[engine]]\nversion = \"v1\"\n";

fn ann() -> Principal {
    Principal {
        name: "ann".into(),
        role: Role::User,
        operator: false,
    }
}

/// Leases and plays `rounds` leases of 4 pairs on `worker`, the engine with the higher
/// version number winning both games (one pair in three split).
async fn play(c: &Coordinator, worker: &str, rounds: usize) {
    for _ in 0..rounds {
        let (lease, jobs) = c.lease(worker, 4).unwrap();
        let results = (jobs.iter())
            .map(|job| {
                let (a, b) = (job.first.name.as_str(), job.second.name.as_str());
                let stronger = a.max(b);
                let winners = if job.pair % 3 == 0 {
                    [a, b]
                } else {
                    [stronger, stronger]
                };
                pair_won_by(c, worker, job, lease, winners, ["crash", "crash"])
            })
            .collect();
        c.report(worker, results).await.unwrap();
    }
}

#[tokio::test]
async fn a_version_added_to_a_running_pool_is_rated_and_kept_through_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (id, ratings) = {
        let c = Coordinator::open(
            Store::open(dir.path()).unwrap(),
            Settings::default(),
            &Registry::new(),
        )
        .unwrap();
        for i in 0..4 {
            let version = EngineVersion {
                name: format!("v{i}"),
                player: Some(format!("random:seed={i}")),
                ..Default::default()
            };
            c.add_version(version, false).unwrap();
        }
        let amazons = EngineVersion {
            name: "amazons-only".into(),
            player: Some("mcts:territory=5".into()),
            ..Default::default()
        };
        c.add_version(amazons, false).unwrap();
        let gtp = EngineVersion {
            name: "gtp-1".into(),
            command: Some("python3 x.py".into()),
            protocol: Some("gtp".into()),
            ..Default::default()
        };
        c.add_version(gtp, false).unwrap();
        // Named in an LOA file, it is refused at its `version` key, as `protocol = "gtp"`.
        let gtp_file = POOL.replace("version = \"v1\"", "version = \"gtp-1\"");
        let e = (c.submit(&gtp_file, "pool.toml", "", BTreeMap::new()).await).unwrap_err();
        assert_eq!(
            e.to_string(),
            "pool.toml:11: engine[1].version: version 'gtp-1' speaks gtp, which is for \
             Amazons; this tournament plays loa"
        );
        let operator = Principal::operator("ops");
        let id = (c.submit_as(
            &ann(),
            POOL,
            "pool.toml",
            "",
            BTreeMap::new(),
            BTreeMap::new(),
        ))
        .await
        .unwrap();
        c.approve(&operator, id).await.unwrap();
        let worker = c.register("w", "test", 8, "t").unwrap().0;
        play(&c, &worker, 5).await;
        // Changed before versions join: the joins keep the change.
        let change = crate::tournaments::actions::Modification {
            priority: Some(3),
            pair_budget: Some(300),
            ..Default::default()
        };
        assert!(c.modify_as(&operator, id, change).await.unwrap());
        // Found by its name; joins at the next pair; rated once it has played.
        assert_eq!(c.find_pool("nightly").unwrap(), id);
        assert_eq!(c.find_pool(&id.to_string()).unwrap(), id);
        assert_eq!(c.add_to_pool(&ann(), id, "v2").await.unwrap(), 20);
        play(&c, &worker, 10).await;
        assert_eq!(c.add_to_pool(&operator, id, "v3").await.unwrap(), 60);
        play(&c, &worker, 15).await;
        let status = c.status(id).unwrap();
        let names: Vec<&str> = (status.config.engines.iter())
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, ["v0", "v1", "v2", "v3"]);
        let best = c.pool_best(id).unwrap().unwrap();
        assert_eq!(best.name, "v3", "{:?}", status.ratings);
        // What cannot join, and why.
        let refused = |e: CoordinatorError| e.to_string();
        let bob = Principal {
            name: "bob".into(),
            ..ann()
        };
        for (by, version, why) in [
            (&bob, "v0", "approver"),
            (&ann(), "v9", "no version 'v9'"),
            (&ann(), "v2", "already an engine"),
            (&ann(), "amazons-only", "amazons-only"),
            (&ann(), "gtp-1", "'gtp-1' speaks gtp, which is for Amazons"),
        ] {
            let e = refused(c.add_to_pool(by, id, version).await.unwrap_err());
            assert!(e.contains(why), "{version}: {e}");
        }
        assert!(c.find_pool("weekly").is_err());
        let ratings = c.status(id).unwrap().ratings;
        // A match is no pool.
        let other = c
            .submit(&match_file(), "m.toml", "", BTreeMap::new())
            .await
            .unwrap();
        let e = refused(c.add_to_pool(&operator, other, "v2").await.unwrap_err());
        assert!(e.contains("rating pools"), "{e}");
        (id, ratings)
    };
    // A restart reads the members back, each from its pair: the same standings.
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    let status = c.status(id).unwrap();
    assert_eq!(status.config.engines.len(), 4);
    assert_eq!(status.ratings.players, ratings.players);
    assert_eq!(
        (status.config.priority, status.config.pair_budget()),
        (3, 300)
    );
    assert!(c.cancel(id).await.unwrap());
    let e = c.add_to_pool(&ann(), id, "v0").await.unwrap_err();
    assert!(e.to_string().contains("ended"), "{e}");
}

#[tokio::test]
async fn a_gated_pool_promotes_the_stronger_version_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let gated = POOL.replace(
        "[pool]\n",
        "[pool]\ngate = { sprt = { elo0 = 0, elo1 = 100, model = \"logistic\" } }\n",
    );
    let gate_events = |c: &Coordinator| -> Vec<String> {
        let mut events: Vec<String> = (c.events(0, 1000).unwrap().into_iter())
            .filter(|e| e.action == "pool-gate")
            .map(|e| e.detail)
            .collect();
        events.reverse();
        events
    };
    let id = {
        let c = Coordinator::open(
            Store::open(dir.path()).unwrap(),
            Settings::default(),
            &Registry::new(),
        )
        .unwrap();
        // Higher names win: "a-weak" loses to every v.
        for (i, name) in ["v0", "v1", "a-weak", "v3"].iter().enumerate() {
            let version = EngineVersion {
                name: name.to_string(),
                player: Some(format!("random:seed={i}")),
                ..Default::default()
            };
            c.add_version(version, false).unwrap();
        }
        let operator = Principal::operator("ops");
        let id = c
            .submit_as(
                &operator,
                &gated,
                "pool.toml",
                "",
                BTreeMap::new(),
                BTreeMap::new(),
            )
            .await
            .unwrap();
        let worker = c.register("w", "test", 8, "t").unwrap().0;
        // Before any gate decides, the anchor is the best.
        assert_eq!(c.pool_best(id).unwrap().unwrap().name, "v0");
        play(&c, &worker, 10).await;
        assert_eq!(c.pool_best(id).unwrap().unwrap().name, "v1");
        c.add_to_pool(&operator, id, "a-weak").await.unwrap();
        play(&c, &worker, 10).await;
        c.add_to_pool(&operator, id, "v3").await.unwrap();
        play(&c, &worker, 10).await;
        assert_eq!(c.pool_best(id).unwrap().unwrap().name, "v3");
        let events = gate_events(&c);
        assert_eq!(events.len(), 3, "{events:?}");
        assert!(events[0].starts_with("v1 promoted, the pool's best over v0"));
        assert!(events[1].starts_with("a-weak refused: not better than v1"));
        assert!(events[2].starts_with("v3 promoted, the pool's best over v1"));
        // Status and report show the gates.
        let table = c.status(id).unwrap().progress.unwrap().table();
        assert!(table.title.starts_with("Gated pool: best v3"), "{table:?}");
        assert_eq!(table.rows.len(), 3);
        id
    };
    // A restart decides the same gates again, and tells nobody again.
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    assert_eq!(c.pool_best(id).unwrap().unwrap().name, "v3");
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    play(&c, &worker, 2).await;
    assert_eq!(gate_events(&c).len(), 3);
}
