//! Artifacts over HTTP: `GET /artifacts/<sha256>` on a served coordinator, with the
//! caching headers an HTTP cache or CDN needs, conditional requests, and artifacts linked
//! to an external URL answered with a redirect there.

use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::server::ServerOptions;
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_tests::http::request_with;
use tourney_tests::served;
use tourney_worker::{TokenInterceptor, connect};

/// A served coordinator whose store holds `program`; its address (`127.0.0.1:PORT`).
async fn serving(program: &[u8], dir: &tempfile::TempDir) -> String {
    serving_with(program, dir, Settings::default()).await
}

/// [`serving`] with `settings`.
async fn serving_with(program: &[u8], dir: &tempfile::TempDir, settings: Settings) -> String {
    let store = Store::open(dir.path()).unwrap();
    store.put_artifact(program).unwrap();
    let coordinator = Coordinator::open(store, settings, &prometheus::Registry::new()).unwrap();
    let options = ServerOptions {
        worker_tokens: Some(Tokens::new(vec![("box1".into(), "w-secret".into())])),
        admin_tokens: Some(Tokens::new(vec![("default".into(), "a-secret".into())])),
        tls: None,
        insecure: false,
    };
    served::on_loopback(coordinator, options).await.to_string()
}

/// `GET path` with `headers`: the status, the head and the body.
async fn get(addr: &str, path: &str, headers: &[(&'static str, String)]) -> (u16, String, String) {
    let (addr, path, headers) = (addr.to_string(), path.to_string(), headers.to_vec());
    tokio::task::spawn_blocking(move || {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        request_with("GET", &addr, &path, &headers, None).unwrap()
    })
    .await
    .unwrap()
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

#[tokio::test]
async fn artifacts_are_served_by_hash_immutable_with_their_hash_as_etag() {
    let dir = tempfile::tempdir().unwrap();
    let program = b"#!/bin/sh\nexec my-engine\n";
    let sha = tourney_model::sha256_hex(program);
    let addr = serving(program, &dir).await;
    let path = format!("/artifacts/{sha}");
    let (status, head, body) = get(&addr, &path, &[]).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(body.as_bytes(), program);
    assert_eq!(header(&head, "etag"), Some(format!("\"{sha}\"").as_str()));
    assert_eq!(
        header(&head, "cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    // A cache that holds it asks again with its ETag: not modified, no body.
    let (status, head, body) = get(&addr, &path, &[("If-None-Match", format!("\"{sha}\""))]).await;
    assert_eq!((status, body.as_str()), (304, ""), "{head}");
    // A hash of nothing stored, and something that is not a hash.
    let (status, _, _) = get(&addr, &format!("/artifacts/{}", "0".repeat(64)), &[]).await;
    assert_eq!(status, 404);
    let (status, _, _) = get(&addr, "/artifacts/..%2Fetc%2Fpasswd", &[]).await;
    assert_eq!(status, 400);
    let (status, _, _) = get(&addr, &format!("/artifacts/{}", sha.to_uppercase()), &[]).await;
    assert_eq!(status, 400, "hashes are named in lowercase");
    // Counted as sent, for the operator's figures.
    let (_, _, metrics) = get(&addr, "/metrics", &[]).await;
    let sent = format!("tourney_artifact_bytes_sent_total {}", program.len());
    assert!(metrics.contains(&sent), "{metrics}");
}

#[tokio::test]
async fn a_big_artifact_is_streamed_whole_or_from_where_a_download_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let program: Vec<u8> = (0..3_000_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    let sha = tourney_model::sha256_hex(&program);
    let addr = serving(&program, &dir).await;
    let path = format!("/artifacts/{sha}");
    let text = |range: std::ops::Range<usize>| String::from_utf8(program[range].to_vec()).unwrap();
    let (status, head, body) = get(&addr, &path, &[]).await;
    assert_eq!(status, 200, "{head}");
    assert_eq!(body, text(0..3_000_000));
    assert_eq!(header(&head, "content-length"), Some("3000000"));
    assert_eq!(header(&head, "accept-ranges"), Some("bytes"));
    // The rest after what a broken download kept, and a part in the middle.
    let (status, head, body) = get(&addr, &path, &[("Range", "bytes=2999990-".into())]).await;
    assert_eq!(status, 206, "{head}");
    assert_eq!(body, text(2_999_990..3_000_000));
    assert_eq!(
        header(&head, "content-range"),
        Some("bytes 2999990-2999999/3000000")
    );
    let (status, _, body) = get(&addr, &path, &[("Range", "bytes=1048570-1048579".into())]).await;
    assert_eq!((status, body), (206, text(1_048_570..1_048_580)));
    // Nothing after the end: a download that had it all.
    let (status, head, _) = get(&addr, &path, &[("Range", "bytes=3000000-".into())]).await;
    assert_eq!(status, 416, "{head}");
    assert_eq!(header(&head, "content-range"), Some("bytes */3000000"));
    // Several ranges are not taken: the whole content comes.
    let (status, _, body) = get(&addr, &path, &[("Range", "bytes=0-1,5-6".into())]).await;
    assert_eq!((status, body.len()), (200, 3_000_000));
}

#[tokio::test]
async fn uploads_are_streamed_in_and_bounded_by_the_coordinators_setting() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        max_artifact_bytes: 3 << 20,
        ..Settings::default()
    };
    let addr = serving_with(b"unrelated", &dir, settings).await;
    let mut admin = AdminClient::with_interceptor(
        connect(&format!("http://{addr}"), None).await.unwrap(),
        TokenInterceptor::new(Some("a-secret")),
    );
    let pieces = |mib: usize| {
        let pieces: Vec<pb::UploadArtifactRequest> = (0..mib)
            .map(|i| pb::UploadArtifactRequest {
                content: vec![i as u8; 1 << 20],
            })
            .collect();
        tokio_stream::iter(pieces)
    };
    let whole: Vec<u8> = (0..3).flat_map(|i| vec![i as u8; 1 << 20]).collect();
    let sha = (admin.upload_artifact(pieces(3)).await)
        .unwrap()
        .into_inner()
        .sha256;
    assert_eq!(sha, tourney_model::sha256_hex(&whole));
    let (status, _, _) = get(&addr, &format!("/artifacts/{sha}"), &[]).await;
    assert_eq!(status, 200);
    let e = admin.upload_artifact(pieces(4)).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::ResourceExhausted);
    assert!(e.message().contains("at most 3 MiB"), "{}", e.message());
    let files: Vec<_> = std::fs::read_dir(dir.path().join("artifacts"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 2, "the refused upload left nothing: {files:?}");
}

#[tokio::test]
async fn a_linked_artifact_redirects_to_its_url_and_bad_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let addr = serving(b"unrelated", &dir).await;
    let mut admin = AdminClient::with_interceptor(
        connect(&format!("http://{addr}"), None).await.unwrap(),
        TokenInterceptor::new(Some("a-secret")),
    );
    let sha = tourney_model::sha256_hex(b"a big engine");
    let url = "https://objects.example/engines/big-1.0";
    admin
        .link_artifact(pb::LinkArtifactRequest {
            sha256: sha.clone(),
            url: url.into(),
        })
        .await
        .unwrap();
    let (status, head, _) = get(&addr, &format!("/artifacts/{sha}"), &[]).await;
    assert_eq!(status, 308, "{head}");
    assert_eq!(header(&head, "location"), Some(url));
    assert_eq!(
        header(&head, "cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let has = admin
        .has_artifact(pb::HasArtifactRequest {
            sha256: sha.clone(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        has.present,
        "a linked artifact counts as there for versions and tests"
    );
    for (sha, url, wrong) in [
        ("abc", url, "sha256"),
        (sha.as_str(), "ftp://objects.example/x", "url"),
        (sha.as_str(), "https://objects.example/a b", "url"),
        // Workers would GET these: the cloud's metadata and the fleet's own hosts.
        (
            sha.as_str(),
            "http://169.254.169.254/latest/meta-data/",
            "url",
        ),
        (sha.as_str(), &format!("http://{addr}/artifacts/x"), "url"),
        (sha.as_str(), "http://10.0.0.7:9000/nets/a.bin", "url"),
    ] {
        let e = admin
            .link_artifact(pb::LinkArtifactRequest {
                sha256: sha.into(),
                url: url.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument);
        assert!(e.message().starts_with(wrong), "{}", e.message());
    }
}
