//! SPSA tuning runs: parameters moved by the results, a bounded trajectory, the
//! verification SPRT, games played at the values leased.

use std::collections::BTreeMap;

use prometheus::Registry;
use tourney_model::tournament::State;
use tourney_store::Store;

use super::*;
use crate::state::Coordinator;
use crate::types::Reported;
use crate::types::Settings;

/// A tuning run of `concentration` (start 20 in 0..60) over `pairs` pairs of `ab:depth=1`,
/// verified by an SPRT.
fn tuning_file(pairs: u64) -> String {
    format!(
        r#"name = "tune"
game = "loa"
format = "spsa"
openings = {{ plies = 2, seed = 1 }}
limits = {{ nodes = 1 }}

[spsa]
pairs = {pairs}
verify = {{ elo0 = 0, elo1 = 10, max_pairs = 50 }}

[[spsa.param]]
name = "concentration"
start = 20
min = 0
max = 60
c_end = 4
r_end = 0.05

[[engine]]
name = "t"
player = "ab:depth=1"
"#
    )
}

#[tokio::test]
async fn a_long_tuning_run_keeps_a_bounded_evenly_spaced_trajectory_of_the_values_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let pairs = 1_000;
    let id = c
        .submit(&tuning_file(pairs), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    // The latest values of every report along the way.
    let mut seen = Vec::new();
    while c.status(id).unwrap().state != State::Finished {
        let (lease, jobs) = c.lease(&worker, 64).unwrap();
        let results = jobs
            .iter()
            .map(|j| {
                let winner = [&j.first, &j.second][(j.pair % 3 == 0) as usize];
                let w = winner.name.as_str();
                pair_won_by(&c, &worker, j, lease, [w, w], ["crash", "crash"])
            })
            .collect();
        c.report(&worker, results).await.unwrap();
        let spsa = c.report_of(id).unwrap().1.spsa.unwrap();
        let last = spsa.trajectory.last().unwrap();
        assert_eq!(last.pairs, spsa.pairs);
        seen.push((last.pairs, last.values.clone()));
    }
    let spsa = c.report_of(id).unwrap().1.spsa.unwrap();
    let points = &spsa.trajectory;
    let bound = crate::types::TRAJECTORY_POINTS;
    assert!(
        (bound..=2 * bound + 1).contains(&points.len()),
        "{} points",
        points.len()
    );
    assert_eq!((points[0].pairs, &points[0].values[..]), (0, &[20.0][..]));
    assert_eq!(points.last().unwrap().pairs, pairs);
    let stride = points[1].pairs;
    for (i, p) in points[..points.len() - 1].iter().enumerate() {
        assert_eq!(p.pairs, i as u64 * stride, "evenly spaced");
    }
    // A point kept is the values the run had then, as its report said at the time.
    let mut matched = 0;
    for (at, values) in &seen {
        if let Some(p) = points.iter().find(|p| p.pairs == *at) {
            assert_eq!(&p.values, values, "after {at} pairs");
            matched += 1;
        }
    }
    assert!(matched >= 3, "{matched} reports on the trajectory");
}

/// The `concentration` a job's engine plays with.
fn concentration(engine: &tourney_model::job::Engine) -> i64 {
    let tourney_model::job::EngineKind::BuiltIn(spec) = &engine.kind else {
        panic!("a built-in player");
    };
    let value = spec
        .split("concentration=")
        .nth(1)
        .expect("the tuned weight");
    value.split(',').next().unwrap().parse().unwrap()
}

#[tokio::test]
async fn a_tuning_run_moves_its_parameters_by_the_results_and_then_verifies_them() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let c = Coordinator::open(store, Settings::default(), &Registry::new()).unwrap();
    let bad = tuning_file(40).replace("\"concentration\"", "\"speed\"");
    let e = c.submit(&bad, "tune.toml", "", BTreeMap::new()).await;
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("spsa.param[0].name") && e.contains("unknown key 'speed'"),
        "{e}"
    );

    let id = c
        .submit(&tuning_file(40), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 8, "t").unwrap().0;
    let mut played = Vec::new();
    // A few pairs at a time, so later pairs are played around the moved values.
    while c.status(id).unwrap().state != State::Finished {
        let (lease, jobs) = c.lease(&worker, 5).unwrap();
        let results = jobs
            .iter()
            .map(|j| {
                let (first, second) = (concentration(&j.first), concentration(&j.second));
                played.push((j.pair, first, second));
                // The side with the higher concentration wins both games.
                let winner = if first > second { &j.first } else { &j.second };
                let w = winner.name.as_str();
                pair_won_by(&c, &worker, j, lease, [w, w], ["crash", "crash"])
            })
            .collect();
        c.report(&worker, results).await.unwrap();
    }
    assert_eq!(played.len(), 40);
    let first_jobs = &played[..5];
    for &(pair, plus, minus) in first_jobs {
        // The first lease: both sides around the start, moved opposite ways.
        assert!(
            (plus + minus - 40).abs() <= 1,
            "pair {pair}: {plus} {minus}"
        );
        assert!(plus != minus, "pair {pair} is perturbed");
    }
    let (_, report) = c.report_of(id).unwrap();
    let spsa = report.spsa.clone().expect("a tuning section");
    assert_eq!((spsa.pairs, spsa.planned), (40, 40));
    let tuned = spsa.params[0].value;
    assert!(
        tuned > 25.0,
        "the parameter moved towards the winners: {tuned}"
    );
    assert!(spsa.trajectory.len() >= 2);
    assert_eq!(spsa.trajectory[0].values, [20.0]);
    assert_eq!(spsa.trajectory.last().unwrap().values, [tuned]);
    let rounded = tourney_model::spsa::played(tuned);
    assert_eq!(spsa.result, format!("ab:depth=1,concentration={rounded}"));
    assert_eq!(spsa.start, "ab:depth=1,concentration=20");
    assert!(
        report
            .text()
            .contains(&format!("Tuned: ab:depth=1,concentration={rounded}"))
    );
    let html = report.html(|id| Some(format!("/#t={id}")));
    assert!(html.contains("<section id=\"spsa\">"));

    // The verification SPRT: tuned against start, linked both ways.
    let vid = spsa.verification.expect("a verification SPRT");
    assert!(
        html.contains(&format!(
            "Verification SPRT: <a href=\"/#t={vid}\">tournament #{vid}</a>"
        )),
        "{html}"
    );
    let unlinked = report.html(|_| None);
    assert!(unlinked.contains(&format!("Verification SPRT: tournament #{vid}</p>")));
    let v = c.status(vid).unwrap();
    assert_eq!(v.config.format, tourney_model::tournament::Format::Sprt);
    let engines: Vec<(&str, &str)> = (v.config.engines.iter())
        .map(|e| (e.name.as_str(), e.player.as_deref().unwrap()))
        .collect();
    let tuned_spec = format!("ab:depth=1,concentration={rounded}");
    assert_eq!(
        engines,
        [
            ("t-tuned", tuned_spec.as_str()),
            ("t-start", "ab:depth=1,concentration=20")
        ]
    );
    assert_eq!(v.config.sprt.as_ref().unwrap().elo1, 10.0);
    assert_eq!(
        v.openings,
        c.status(id).unwrap().openings,
        "the run's openings"
    );
    let records = c.store.tournaments().unwrap();
    let of = |id| records.iter().find(|r| r.id == id).unwrap();
    assert_eq!(
        (of(id).verification, of(vid).tuned_by),
        (Some(vid), Some(id))
    );

    // A restart folds the same values again and submits no second verification.
    drop(c);
    let c = Coordinator::open(reopen(&dir).await, Settings::default(), &Registry::new()).unwrap();
    c.restarted().await;
    let again = c.report_of(id).unwrap().1.spsa.unwrap();
    assert_eq!(again.params[0].value, tuned);
    assert_eq!(again.verification, Some(vid));
    assert_eq!(c.store.tournaments().unwrap().len(), 2);
}

#[tokio::test]
async fn a_tuning_runs_games_must_be_played_at_the_values_leased() {
    let c = on_temporary_store();
    let id = c
        .submit(&tuning_file(10), "tune.toml", "", BTreeMap::new())
        .await
        .unwrap();
    let worker = c.register("w", "test", 1, "t").unwrap().0;
    let (lease, jobs) = c.lease(&worker, 1).unwrap();
    let job = &jobs[0];
    let specs = [&job.first, &job.second].map(|e| e.identity().spec);
    assert!(
        specs.iter().all(|s| s.contains("concentration=")),
        "{specs:?}"
    );
    let (w, first) = (job.first.name.as_str(), job.first.name.clone());
    let json = pair_json(job, [w, w], ["crash", "crash"]);
    let reported = |games_json: String| Reported {
        tournament: id,
        pair: job.pair,
        lease,
        half_points: [2, 2],
        games_json,
        ticket: job.ticket.clone(),
    };
    // Played at other values than the perturbation leased: refused, not folded in.
    let leased = &specs[0];
    let other = json.replace(leased.as_str(), "ab:depth=1,concentration=59");
    assert_ne!(other, json, "{leased}");
    assert_eq!(
        c.check_reported(&worker, reported(other)).unwrap_err(),
        crate::types::Refusal::Ticket
    );
    assert!(c.check_reported(&worker, reported(json)).is_ok(), "{first}");
}
