//! Workers that can say no: leasing by a tournament's `[requires]`, labels and noisiness,
//! the eligible-worker counts `status` shows, and a worker's profile checked as it
//! registers.

use std::collections::BTreeMap;

use tourney_model::fleet::{ProfileClaim, WorkerProfile};

use super::*;

fn profile(cores: u32, labels: &[&str], only: &[&str], avoid_noisy: bool) -> WorkerProfile {
    ProfileClaim {
        cores,
        memory_mb: 8192,
        cpu_features: vec!["sse2".into()],
        os: "Linux 6.1".into(),
        labels: labels.iter().map(|l| l.to_string()).collect(),
        only: only.iter().map(|l| l.to_string()).collect(),
        avoid_noisy,
        gpus: Vec::new(),
    }
    .checked(1024)
    .unwrap()
}

async fn join(c: &Coordinator, name: &str, profile: WorkerProfile) -> String {
    let (id, _) = c.register(name, "0.1.0", 1, "").unwrap();
    c.set_profile(&id, profile);
    id
}

#[tokio::test]
async fn a_test_is_leased_only_to_workers_that_meet_it_and_says_when_none_can() {
    let dir = tempfile::tempdir().unwrap();
    let (c, plain) = coordinator(&dir, 60_000).await;
    let big = c
        .submit(
            &format!(
                "{}\n[requires]\ncores = 16\nlabels = [\"big-cache\"]\n",
                match_file()
            ),
            "big.toml",
            "",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    let small = join(&c, "small", profile(8, &["big-cache"], &[], false)).await;
    let status = c.status(big).unwrap();
    assert_eq!(status.eligibility.workers, 0);
    assert_eq!(
        status.eligibility.unmet.as_deref(),
        Some("needs 16 cores (has 8)")
    );
    let open = c.status(plain).unwrap();
    assert_eq!(
        (open.eligibility.workers, open.eligibility.unmet),
        (1, None)
    );
    // The small worker takes every pair of the open test and none of the big one.
    let (_, jobs) = c.lease(&small, 100).unwrap();
    assert!(jobs.iter().all(|j| j.tournament == plain), "{jobs:?}");
    assert!(c.lease(&small, 100).is_none(), "nothing left that it meets");

    // Without the label a 16-core worker cannot take it either; with it, it can.
    let unlabelled = join(&c, "unlabelled", profile(16, &[], &[], false)).await;
    assert!(c.lease(&unlabelled, 1).is_none());
    let unmet = c.status(big).unwrap().eligibility;
    assert_eq!(unmet.workers, 0);
    assert!(unmet.unmet.is_some());
    let fit = join(&c, "fit", profile(16, &["big-cache"], &[], false)).await;
    assert_eq!(c.status(big).unwrap().eligibility.workers, 1);
    let (_, jobs) = c.lease(&fit, 1).unwrap();
    assert_eq!(jobs[0].tournament, big);
}

#[tokio::test]
async fn only_and_avoid_noisy_turn_tests_down() {
    let dir = tempfile::tempdir().unwrap();
    let (c, plain) = coordinator(&dir, 60_000).await;
    let noisy = c
        .submit(
            &format!("labels = [\"smp\"]\nnoisy = true\n{}", match_file()),
            "noisy.toml",
            "",
            BTreeMap::new(),
        )
        .await
        .unwrap();
    let quiet = join(&c, "desktop", profile(4, &[], &[], true)).await;
    let only_smp = join(&c, "smp-box", profile(4, &[], &["smp"], false)).await;
    // The desktop avoids the noisy test; the smp box takes only tests labelled smp.
    let mut desktop = BTreeMap::new();
    while let Some((_, jobs)) = c.lease(&quiet, 100) {
        for j in jobs {
            *desktop.entry(j.tournament).or_insert(0) += 1;
        }
    }
    assert_eq!(desktop.keys().copied().collect::<Vec<_>>(), [plain]);
    let (_, jobs) = c.lease(&only_smp, 100).unwrap();
    assert!(jobs.iter().all(|j| j.tournament == noisy), "{jobs:?}");
    assert_eq!(c.status(noisy).unwrap().eligibility.workers, 1);
}

#[tokio::test]
async fn a_registration_in_one_call_checks_its_profile_and_notes_its_machine() {
    let c = on_temporary_store();
    let registration = |labels: &[&str]| crate::Registration {
        name: "box".into(),
        version: "0.1.0".into(),
        slots: 1,
        token: "t".into(),
        host: crate::fleet::HostFacts {
            cpu_model: "Ryzen 9".into(),
            cores: 16,
            ..Default::default()
        },
        profile: ProfileClaim {
            labels: labels.iter().map(|l| l.to_string()).collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    let refused = c.enroll(registration(&["Not A Label"])).await.unwrap_err();
    assert!(
        matches!(refused, crate::CoordinatorError::Invalid(_)),
        "{refused}"
    );
    assert!(c.machines().is_empty(), "nothing registered");
    let crate::Registered::Worker(welcome) = c.enroll(registration(&["fast"])).await.unwrap()
    else {
        panic!("not registered");
    };
    assert!(c.session_is(&welcome.worker_id, &welcome.session, "t"));
    assert_eq!(welcome.lease_ms, crate::Settings::default().lease_ms);
    assert!(welcome.release.is_none(), "it does not update itself");
    assert_eq!(c.machines()[0].facts.cpu_model, "Ryzen 9");
    let profile = c.lock().fleet.profile(&welcome.worker_id).unwrap();
    assert!(profile.labels.contains("fast"), "{:?}", profile.labels);
}
