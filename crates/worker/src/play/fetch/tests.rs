use super::*;

#[tokio::test]
async fn workers_sharing_a_host_cache_fetch_an_artifact_once() {
    let program: &'static [u8] = b"#!/bin/sh\necho shared\n";
    let sha = tourney_model::sha256_hex(program);
    let (addr, served) = crate::download::tests::server(program);
    let cache = tempfile::tempdir().unwrap();
    let path = cache.path().join(&sha);
    let fetches: Vec<_> = (0..8)
        .map(|_| {
            let fetcher = Fetcher::new(&format!("http://{addr}/artifacts"), None);
            let (sha, path) = (sha.clone(), path.clone());
            tokio::spawn(async move { fetcher.fetch_into(&sha, &path, "e").await })
        })
        .collect();
    for f in fetches {
        f.await.unwrap().unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), program);
    assert_eq!(
        served.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "one fetch a host"
    );
}

#[test]
fn a_cached_program_is_used_only_while_it_is_the_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let program = b"#!/bin/sh\necho engine\n";
    let sha = tourney_model::sha256_hex(program);
    let path = dir.path().join(&sha);
    std::fs::write(&path, program).unwrap();
    assert!(is_program(&path, &sha), "read and hashed");
    assert!(is_program(&path, &sha), "known by its stamp");
    // Rewritten in place (as an engine of the worker's user could): not used.
    std::fs::write(&path, b"#!/bin/sh\necho poisoned\n").unwrap();
    assert!(!is_program(&path, &sha));
    assert!(!is_program(&dir.path().join("missing"), &sha));
}
