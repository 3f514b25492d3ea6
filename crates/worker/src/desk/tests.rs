use super::*;

fn engine(name: &str) -> tourney_model::job::Engine {
    tourney_model::job::Engine {
        name: name.into(),
        kind: tourney_model::job::EngineKind::BuiltIn("random".into()),
        limits: None,
    }
}

/// A queued LOA pair of two random players, by one node a move.
pub(crate) fn queued(lease: u64, pair: u64) -> Queued {
    Queued {
        lease,
        leased: [engine("a"), engine("b")],
        job: PairJob {
            tournament: 1,
            pair,
            settings: tourney_model::job::GameSettings {
                tournament_name: "t".into(),
                game: tourney_model::GameKind::Loa,
                rules: String::new(),
                time_control: tourney_model::TimeControl::Infinite,
                nodes: Some(1),
                depth: None,
                movetime_ms: None,
                max_plies: None,
                adjudicate: false,
                margin_ms: 100,
                engine_limits: Default::default(),
                engine_logs: Default::default(),
                engine_openings: false,
                scale_by_speed: false,
                score_rules: Default::default(),
            },
            first: engine("a"),
            second: engine("b"),
            opening: "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b".into(),
            opening_index: 0,
            second_opening: None,
            seed: 1,
            ticket: String::new(),
            gpus: Default::default(),
        },
        cancelled: Arc::default(),
    }
}

fn builds() -> BuildCache {
    BuildCache::new(
        std::env::temp_dir().join("tourney-desk-test"),
        1 << 20,
        Duration::from_secs(1),
        EnginePolicy::default(),
    )
}

fn finished(taken: &Taken) -> Option<Finished> {
    Some(Finished {
        lease: taken.queued.lease,
        outcome: None,
        checks: Vec::new(),
        took: Duration::from_millis(1),
        cores: taken.queued.job.cores() as usize,
        units: taken.units.clone(),
        gpus: taken.gpus.clone(),
    })
}

#[test]
fn a_game_thread_wakes_the_async_side_only_when_it_has_something_to_do() {
    // Two slots, nothing learnt yet: one pair queued per slot, so the low-water mark
    // is 2 held.
    let desk = Desk::new(2, 2, EnginePolicy::default(), builds(), None);
    for pair in 0..6 {
        desk.push(queued(1, pair));
    }
    desk.state().threads = 1;
    let (first, wake) = desk.next(None);
    let first = first.expect("a pair is queued");
    assert!(!wake, "6 held, low water 2");
    assert_eq!((desk.held(), desk.queued()), (6, 5));
    // The first result on an empty desk: a report will be due.
    let (second, wake) = desk.next(finished(&first));
    let second = second.expect("queued");
    assert!(wake);
    // More results pile up without waking anyone.
    let (third, wake) = desk.next(finished(&second));
    let third = third.expect("queued");
    assert!(!wake, "results wait for the report");
    assert_eq!(desk.take_finished().len(), 2);
    let (fourth, wake) = desk.next(finished(&third));
    assert!(wake, "the first result after a report");
    let (fifth, wake) = desk.next(finished(&fourth.expect("queued")));
    let fifth = fifth.expect("queued");
    assert!(wake, "3 held, then 2: at the low-water mark");
    assert_eq!(desk.held(), 2);
    let (sixth, _) = desk.next(finished(&fifth));
    let (none, wake) = desk.next(finished(&sixth.expect("the last one")));
    assert!(none.is_none() && wake, "the thread ends and says so");
    assert_eq!((desk.threads(), desk.held()), (0, 0));
    assert!(desk.has_finished());
}

#[test]
fn the_lease_depth_is_learnt_from_each_played_pair_as_it_finishes() {
    let desk = Desk::new(1, 1, EnginePolicy::default(), builds(), None);
    desk.push(queued(1, 0));
    desk.state().threads = 1;
    assert_eq!(desk.wanted(), 1, "one queued per slot before any pair");
    let (first, _) = desk.next(None);
    let first = first.expect("queued");
    // A 10 ms pair, played: 100 ms of work is 10 pairs per slot, before any report.
    let played = Finished {
        lease: first.queued.lease,
        outcome: Some(Outcome::Played(pb::PairResult::default())),
        checks: Vec::new(),
        took: Duration::from_millis(10),
        cores: 1,
        units: Vec::new(),
        gpus: Vec::new(),
    };
    let (none, _) = desk.next(Some(played));
    assert!(none.is_none());
    assert_eq!(desk.wanted(), 11);
}

#[test]
fn unqueue_removes_one_lease_or_all() {
    let desk = Desk::new(1, 1, EnginePolicy::default(), builds(), None);
    for (lease, pair) in [(1, 0), (2, 1), (1, 2), (3, 3)] {
        desk.push(queued(lease, pair));
    }
    assert_eq!(desk.unqueue(Some(1)), vec![1, 1]);
    assert_eq!(desk.queued(), 2);
    let mut rest = desk.unqueue(None);
    rest.sort_unstable();
    assert_eq!(rest, vec![2, 3]);
    assert_eq!(desk.held(), 0);
}

/// A queued pair of two outside engines of `threads` threads each.
fn smp(pair: u64, threads: u32) -> Queued {
    let mut q = queued(1, pair);
    for engine in [&mut q.job.first, &mut q.job.second] {
        engine.kind = tourney_model::job::EngineKind::Outside {
            command: "./e".into(),
            artifact_sha256: None,
            options: Vec::new(),
            source: None,
            files: Vec::new(),
            bench: None,
            reference_nps: None,
            protocol: String::new(),
            threads,
        };
    }
    q
}

#[test]
fn games_start_only_while_their_costliest_sides_threads_fit_in_the_cores() {
    // 16 cores, 16 slots: games of two 4-thread engines take 4 cores each (the
    // engines take turns).
    let desk = Desk::new(16, 16, EnginePolicy::default(), builds(), None);
    for pair in 0..5 {
        desk.push(smp(pair, 4));
    }
    assert_eq!(desk.state().fitting(), 4, "four such games fit");
    let mut state = desk.state();
    let playing: Vec<Taken> = std::iter::from_fn(|| state.take_fitting()).collect();
    assert_eq!(playing.len(), 4);
    assert_eq!((state.busy, state.queue.len()), (16, 1));
    state.threads = 4;
    drop(state);
    // One ends: its cores go to the next pair; no other thread finds any free.
    let (fifth, _) = desk.next(finished(&playing[0]));
    assert!(fifth.is_some());
    assert_eq!(desk.cores_busy(), (16, 16));
    // Pairs of 1-thread engines: sixteen fit in 16 cores, one a core, as cutechess and
    // fastchess play them.
    let small = Desk::new(16, 16, EnginePolicy::default(), builds(), None);
    for pair in 0..20 {
        small.push(smp(pair, 1));
    }
    let mut state = small.state();
    let started = std::iter::from_fn(|| state.take_fitting()).count();
    assert_eq!((started, state.busy, state.peak), (16, 16, 16));
    assert_eq!(state.fitting(), 16);
    // A 2-core worker with two slots plays two games of two outside engines at once.
    let two = Desk::new(2, 2, EnginePolicy::default(), builds(), None);
    for pair in 0..3 {
        two.push(smp(pair, 1));
    }
    let mut state = two.state();
    assert_eq!(std::iter::from_fn(|| state.take_fitting()).count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn game_threads_never_keep_more_cores_than_the_worker_offers() {
    // Built-in pairs take one core each: 3 cores and 8 slots play 3 at once at most.
    let desk = Arc::new(Desk::new(8, 3, EnginePolicy::default(), builds(), None));
    for pair in 0..24 {
        desk.push(queued(1, pair));
    }
    let metrics = WorkerMetrics::new(&prometheus::Registry::new());
    desk.start_threads(&metrics);
    assert_eq!(desk.threads(), 3, "as many threads as pairs fit");
    while desk.held() > 0 {
        desk.start_threads(&metrics);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (busy, peak) = desk.cores_busy();
    assert_eq!((busy, peak), (0, 3));
    assert_eq!(desk.take_finished().len(), 24);
}

#[test]
fn a_game_needing_a_gpu_waits_for_one_of_its_own_and_its_engines_see_it() {
    let gpus = crate::gpus::parse("2").unwrap().unwrap();
    let desk = Desk::new(8, 8, EnginePolicy::default(), builds(), None).with_gpus(gpus, 1);
    for pair in 0..3 {
        let mut q = smp(pair, 1);
        q.job.gpus.count = 1;
        desk.push(q);
    }
    desk.push(smp(3, 1));
    let mut state = desk.state();
    assert_eq!(state.fitting(), 8, "the last pair queued needs no GPU");
    let playing: Vec<Taken> = std::iter::from_fn(|| state.take_fitting()).collect();
    assert_eq!(playing.len(), 2, "two GPUs, one game each; the third waits");
    let cuda = |t: &Taken| {
        t.gpu_env
            .iter()
            .find(|(k, _)| k == "CUDA_VISIBLE_DEVICES")
            .cloned()
    };
    assert_eq!(cuda(&playing[0]).unwrap().1, "0");
    assert_eq!(cuda(&playing[1]).unwrap().1, "1");
    state.threads = 2;
    drop(state);
    let (third, _) = desk.next(finished(&playing[1]));
    let third = third.expect("its GPU came free");
    assert_eq!(cuda(&third).unwrap().1, "1");
    let (fourth, _) = desk.next(finished(&playing[0]));
    assert!(fourth.expect("no GPU needed").gpu_env.is_empty());
}

#[test]
fn pinned_games_get_cpus_of_their_own_and_give_them_back() {
    // Four physical cores of two SMT siblings each; a game of two 2-thread engines
    // keeps two of them, both engines pinned there.
    let unit = |core: usize| Unit {
        cpus: vec![core, core + 4],
        class: 1024,
    };
    let units: Vec<Unit> = (0..4).map(unit).collect();
    let desk = Desk::new(8, 16, EnginePolicy::default(), builds(), Some(units));
    for pair in 0..3 {
        desk.push(smp(pair, 2));
    }
    let mut state = desk.state();
    assert_eq!(state.cores, 4, "the cores are at most the units");
    let playing: Vec<Taken> = std::iter::from_fn(|| state.take_fitting()).collect();
    assert_eq!(
        playing.len(),
        2,
        "two games of two 2-thread engines fit in 4 cores"
    );
    assert_eq!(playing[0].cpus, [0, 1, 4, 5]);
    assert_eq!(
        playing[1].cpus,
        [2, 3, 6, 7],
        "no CPU shared with the other game"
    );
    state.threads = 2;
    drop(state);
    let (third, _) = desk.next(finished(&playing[1]));
    assert_eq!(third.expect("its cores came free").cpus, [2, 3, 6, 7]);
}
