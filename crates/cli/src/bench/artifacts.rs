//! `tourney bench artifacts`: `--fetchers` simulated workers on one host fetch one
//! 16 MiB program from a coordinator over loopback HTTP (`/artifacts/<sha256>`), once
//! sharing the host cache (as workers given the same `--cache` do) and once each with a
//! cache of its own: the time until all have it, and the bytes the coordinator sent.

use std::time::Instant;

use anyhow::Result;
use tourney_coordinator::Settings;
use tourney_worker::Fetcher;

/// The program's size.
const PROGRAM_BYTES: usize = 16 << 20;

pub(super) fn artifacts(fetchers: usize) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let (url, stop, _server, coordinator) =
            super::cluster::local_coordinator(dir.path(), Settings::default()).await?;
        // Random bytes, as a compiled program is: nothing compresses on the way.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let program: Vec<u8> = (0..PROGRAM_BYTES)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let sha = coordinator.store().put_artifact(&program)?;
        println!(
            "{fetchers} workers on one host fetch one {} MiB program over HTTP",
            PROGRAM_BYTES >> 20
        );
        for shared in [true, false] {
            let caches = tempfile::tempdir()?;
            let sent_before = coordinator.metrics().artifact_bytes_sent.get();
            let started = Instant::now();
            let fetches: Vec<_> = (0..fetchers)
                .map(|i| {
                    let fetcher = Fetcher::new(&format!("{url}/artifacts/"), None);
                    let cache = match shared {
                        true => caches.path().to_path_buf(),
                        false => caches.path().join(i.to_string()),
                    };
                    let sha = sha.clone();
                    tokio::spawn(async move {
                        fetcher.fetch_into(&sha, &cache.join(&sha), "bench").await
                    })
                })
                .collect();
            for f in fetches {
                f.await??;
            }
            let took = started.elapsed().as_secs_f64();
            let sent = coordinator.metrics().artifact_bytes_sent.get() - sent_before;
            println!(
                "{:<22} {took:>7.2} s until all have it, coordinator sent {:>8.1} MiB",
                if shared {
                    "shared host cache"
                } else {
                    "a cache per worker"
                },
                sent as f64 / f64::from(1 << 20)
            );
        }
        let _ = stop.send(());
        Ok(())
    })
}
