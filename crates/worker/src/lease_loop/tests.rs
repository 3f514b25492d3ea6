use super::report::{MAX_PART_RESULTS, take_part};
use super::*;

fn played(bytes: usize) -> Outcome {
    Outcome::Played(pb::PairResult {
        games_lz4: lz4_flex::compress_prepend_size(&vec![b' '; bytes]),
        ..Default::default()
    })
}

fn sizes(part: &[Outcome]) -> Vec<usize> {
    part.iter()
        .map(|o| match o {
            Outcome::Played(r) => r.games_size().unwrap_or(0),
            Outcome::Failed(_) | Outcome::Checked(_) => 0,
        })
        .collect()
}

#[test]
fn reports_go_in_parts_within_the_budget_in_order() {
    let mut unreported: Vec<Outcome> = [3, 4, 2, 9, 1].map(|k| played(k << 10)).into();
    let part = take_part(&mut unreported, 8 << 10);
    assert_eq!(sizes(&part), [3 << 10, 4 << 10]);
    // One result larger than a part still goes, alone.
    let part = take_part(&mut unreported, 2 << 10);
    assert_eq!(sizes(&part), [2 << 10]);
    let part = take_part(&mut unreported, 2 << 10);
    assert_eq!(sizes(&part), [9 << 10]);
    assert_eq!(sizes(&take_part(&mut unreported, 2 << 10)), [1 << 10]);
    assert!(take_part(&mut unreported, 2 << 10).is_empty());
    // Many small results: at most MAX_PART_RESULTS a report.
    let mut many: Vec<Outcome> = (0..MAX_PART_RESULTS + 5).map(|_| played(10)).collect();
    assert_eq!(take_part(&mut many, usize::MAX).len(), MAX_PART_RESULTS);
    assert_eq!(many.len(), 5);
}

/// A worker for a coordinator nobody serves (port 1 refuses at once).
fn unreachable() -> Worker {
    let options = WorkerOptions {
        choices: crate::Choices::default(),
        pinned: None,
        update: None,
        coordinator: "http://127.0.0.1:1".into(),
        token: None,
        name: "test".into(),
        concurrency: 1,
        cores: 1,
        tls_ca: None,
        cache_dir: std::env::temp_dir().join("tourney-lease-loop-test"),
        cache_bytes: 1 << 30,
        artifact_bytes: 1 << 30,
        build_timeout: Duration::from_secs(600),
        engine_policy: Default::default(),
        exit_when_idle: None,
    };
    Worker::new(options, WorkerMetrics::new(&prometheus::Registry::new()))
}

#[tokio::test(start_paused = true)]
async fn a_worker_that_cannot_connect_backs_off_doubling_to_ten_seconds() {
    let mut worker = unreachable();
    let never = std::future::pending::<()>();
    tokio::pin!(never);
    let mut waits = Vec::new();
    for _ in 0..9 {
        let before = Instant::now();
        assert!(!worker.keep_session(never.as_mut()).await.unwrap());
        waits.push(before.elapsed());
    }
    // Each wait jittered between half its backoff and all of it.
    let expected = [100, 200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000];
    for (wait, ms) in waits.iter().zip(expected) {
        let ms = Duration::from_millis(ms);
        assert!(
            *wait >= ms / 2 && *wait < ms + Duration::from_millis(50),
            "{waits:?}"
        );
    }
    assert!(!worker.stopping);
}

#[tokio::test(start_paused = true)]
async fn a_shutdown_during_the_backoff_stops_the_worker_at_once() {
    let started = Instant::now();
    let shutdown = tokio::time::sleep(Duration::from_millis(250));
    assert_eq!(unreachable().run(shutdown).await.unwrap(), Ended::Stopped);
    // The third attempt's wait (400 ms) is cut short by the shutdown at 250 ms.
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(300),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_worker_given_exit_when_idle_stops_once_no_work_came_for_that_long() {
    let started = Instant::now();
    let mut worker = unreachable();
    worker.options.exit_when_idle = Some(Duration::from_secs(3));
    let ended = worker.run(std::future::pending::<()>()).await.unwrap();
    assert_eq!(ended, Ended::Stopped);
    let took = started.elapsed();
    // Idle from the start; noticed at the end of the backoff wait under way then.
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(7),
        "{took:?}"
    );
}
