//! `tourney bench artifacts`: a `--mib` MiB file (random bytes, as a compiled program or a
//! network is) is uploaded to a coordinator process the way `submit` uploads one (hashed,
//! then streamed), and `--fetchers` simulated workers on one host fetch it over loopback
//! HTTP (`/artifacts/<sha256>`), once sharing the host cache (as workers given the same
//! `--cache` do) and once each with a cache of its own: the time until all have it, the
//! bytes the coordinator sent, and the peak resident memory of the coordinator and of this
//! process (which holds every simulated worker).

use std::io::Write;
use std::time::Instant;

use anyhow::Result;
use tourney_worker::{Fetcher, TokenInterceptor, connect};

use crate::bench::harness::{coordinator_process, metric, status_value};

/// The most bytes the run with a cache per worker may write (it is skipped past it).
const PER_WORKER_BYTES: u64 = 4 << 30;

pub(crate) fn artifacts(fetchers: usize, mib: u64) -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let dir = tempfile::tempdir()?;
        let (mut coordinator, port) = coordinator_process(&dir.path().join("data"), &[])?;
        let measured = measure(port, dir.path(), fetchers, mib, coordinator.id()).await;
        let _ = coordinator.kill();
        let _ = coordinator.wait();
        measured
    })
}

async fn measure(
    port: u16,
    dir: &std::path::Path,
    fetchers: usize,
    mib: u64,
    pid: u32,
) -> Result<()> {
    let url = &format!("http://127.0.0.1:{port}");
    let sent_bytes = || metric(port, "tourney_artifact_bytes_sent_total");
    // Written a piece at a time: nothing here holds the whole file either.
    let file = dir.join("network.bin");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut piece = vec![0u8; 1 << 20];
    for _ in 0..mib {
        for byte in &mut piece {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = state as u8;
        }
        out.write_all(&piece)?;
    }
    out.flush()?;
    drop(out);
    println!("one {mib} MiB file, uploaded, then fetched by {fetchers} workers on one host");
    let mut admin = tourney_proto::v1::admin_client::AdminClient::with_interceptor(
        connect(url, None).await?,
        TokenInterceptor::new(None),
    );
    let started = Instant::now();
    let sha = crate::support::client::upload(&mut admin, &file).await?;
    println!(
        "{:<22} {:>7.2} s, coordinator peak {:>6.1} MiB resident",
        "upload (submit's path)",
        started.elapsed().as_secs_f64(),
        status_value(pid, "VmHWM:")
    );
    for shared in [true, false] {
        if !shared && mib << 20 > PER_WORKER_BYTES / fetchers.max(1) as u64 {
            println!(
                "{:<22} skipped: more than 4 GiB on disk in all",
                "a cache per worker"
            );
            continue;
        }
        let caches = tempfile::tempdir()?;
        let sent_before = sent_bytes();
        let started = Instant::now();
        let fetches: Vec<_> = (0..fetchers)
            .map(|i| {
                let fetcher = Fetcher::new(&format!("{url}/artifacts/"), None);
                let cache = match shared {
                    true => caches.path().to_path_buf(),
                    false => caches.path().join(i.to_string()),
                };
                let sha = sha.clone();
                tokio::spawn(
                    async move { fetcher.fetch_into(&sha, &cache.join(&sha), "bench").await },
                )
            })
            .collect();
        for f in fetches {
            f.await??;
        }
        let took = started.elapsed().as_secs_f64();
        let sent = sent_bytes() - sent_before;
        println!(
            "{:<22} {took:>7.2} s until all have it, coordinator sent {:>8.1} MiB",
            if shared {
                "shared host cache"
            } else {
                "a cache per worker"
            },
            sent / f64::from(1 << 20)
        );
    }
    println!(
        "peak resident memory: coordinator {:.1} MiB, the {fetchers} workers together {:.1} MiB",
        status_value(pid, "VmHWM:"),
        status_value(std::process::id(), "VmHWM:")
    );
    Ok(())
}
