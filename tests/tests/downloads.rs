//! A test's games downloaded over HTTP from the coordinator's dashboard server, after a
//! real worker played them with built-in players: PGN with cutechess's move comments read
//! back against the JSON records, JSON Lines, plain and gzip (asked for by the path or by
//! `Accept-Encoding`), fishtest's alias, filters, and unknown tests.

use std::io::{Read, Write};
use std::net::TcpStream;

use tokio::net::TcpListener;
use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::server::{ServerOptions, serve};
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_tests::tournaments::MatchFile;
use tourney_tests::wait::until_async;
use tourney_worker::{TokenInterceptor, WorkerOptions, connect};

/// A response: its status, its head (lower-case header names) and its body's bytes.
struct Got {
    status: u16,
    head: String,
    body: Vec<u8>,
}

impl Got {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("UTF-8")
    }

    /// The body, gunzipped.
    fn gunzipped(&self) -> String {
        let mut text = String::new();
        flate2::read::GzDecoder::new(&self.body[..])
            .read_to_string(&mut text)
            .expect("a gzip body");
        text
    }
}

/// `GET path` over HTTP/1.0 (a streamed body ends with the connection), with `headers`.
fn get(host: &str, path: &str, headers: &[(&str, &str)]) -> Got {
    let mut stream = TcpStream::connect(host).unwrap();
    let extra: String = (headers.iter())
        .map(|(n, v)| format!("{n}: {v}\r\n"))
        .collect();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host}\r\n{extra}\r\n").unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let at = (response.windows(4))
        .position(|w| w == b"\r\n\r\n")
        .expect("a head");
    let head = String::from_utf8_lossy(&response[..at]).into_owned();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    Got {
        status,
        head,
        body: response[at + 4..].to_vec(),
    }
}

/// The comments of a PGN game's movetext, in order.
fn comments(game: &str) -> Vec<String> {
    let movetext = game.split("\n\n").nth(1).unwrap_or_default();
    (movetext.split('{').skip(1))
        .map(|c| c.split_once('}').expect("a closed comment").0.to_string())
        .collect()
}

/// A comment read back as cutechess writes it: the score (centi-units, or `M` plies
/// kept as text), the depth and the time in milliseconds.
fn parse_comment(comment: &str) -> (Option<String>, Option<u32>, f64) {
    let (eval, time) = match comment.rsplit_once(' ') {
        Some((eval, time)) => (Some(eval), time),
        None => (None, comment),
    };
    let ms = time.strip_suffix('s').unwrap().parse::<f64>().unwrap() * 1000.0;
    let Some(eval) = eval else {
        return (None, None, ms);
    };
    let (score, depth) = match eval.split_once('/') {
        Some((score, depth)) => (score, Some(depth.parse().unwrap())),
        None => (eval, None),
    };
    (Some(score.to_string()), depth, ms)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tests_games_download_as_pgn_with_comments_and_as_jsonl_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let coordinator = Coordinator::open(
        Store::open(dir.path()).unwrap(),
        Settings {
            lease_ms: 5_000,
            heartbeat_ms: 500,
            ..Settings::default()
        },
        &prometheus::Registry::new(),
    )
    .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let host = listener.local_addr().unwrap().to_string();
    let addr = format!("http://{host}");
    let options = ServerOptions {
        worker_tokens: Some(Tokens::new(vec![("box1".into(), "w-secret".into())])),
        admin_tokens: Some(Tokens::new(vec![("default".into(), "a-secret".into())])),
        tls: None,
        insecure: false,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(serve(coordinator, listener, options, async {
        let _ = stopped.await;
    }));
    let mut admin = AdminClient::with_interceptor(
        connect(&addr, None).await.unwrap(),
        TokenInterceptor::new(Some("a-secret")),
    );
    // Alpha-beta on both sides: every move it chooses has a score and a depth.
    let config = MatchFile {
        name: "downloads",
        pairs: 3,
        openings: "{ plies = 2, seed = 5 }",
        limits: "{ depth = 2 }",
        adjudication: Some("{ max_plies = 60 }"),
        engines: [("deep", "ab:depth=2"), ("shallow", "ab:depth=1")],
        ..Default::default()
    }
    .toml();
    let id = (admin.submit(pb::SubmitRequest {
        config,
        file: "downloads.toml".into(),
        ..Default::default()
    }))
    .await
    .unwrap()
    .into_inner()
    .id;
    let (stop_worker, stopped_worker) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(tourney_worker::run(
        WorkerOptions {
            choices: Default::default(),
            pinned: None,
            update: None,
            coordinator: addr.clone(),
            token: Some("w-secret".into()),
            name: "downloads".into(),
            concurrency: 2,
            cores: 4,
            tls_ca: None,
            cache_dir: std::env::temp_dir().join("tourney-test-cache"),
            cache_bytes: 1 << 30,
            artifact_bytes: 1 << 30,
            build_timeout: std::time::Duration::from_secs(600),
            engine_policy: Default::default(),
            exit_when_idle: None,
        },
        tourney_worker::WorkerMetrics::new(&prometheus::Registry::new()),
        async {
            let _ = stopped_worker.await;
        },
    ));
    until_async(60, "the test to finish", || {
        let mut admin = admin.clone();
        async move {
            let status = (admin.status(pb::StatusRequest { id }).await)
                .unwrap()
                .into_inner();
            match status.state.as_str() {
                "finished" => Ok(()),
                state => Err(format!("{state} after {} pairs", status.pairs_done)),
            }
        }
    })
    .await;
    let _ = stop_worker.send(());
    let _ = worker.await;

    tokio::task::spawn_blocking(move || {
        let base = format!("/api/v1/tournaments/{id}");
        // PGN, plain: six games, the roster's tags, a comment after every move.
        let pgn = get(&host, &format!("{base}/games.pgn"), &[]);
        assert_eq!(pgn.status, 200, "{}", pgn.head);
        assert_eq!(
            pgn.header("content-disposition"),
            Some(format!("attachment; filename=\"tournament-{id}.pgn\"").as_str())
        );
        assert!(pgn.header("content-type").unwrap().contains("pgn"));
        assert_eq!(pgn.header("content-encoding"), None);
        let text = pgn.text();
        let games: Vec<&str> = text.split("[Event ").skip(1).collect();
        assert_eq!(games.len(), 6, "{text}");
        // JSON Lines, plain: the same games in the same order, the records to check against.
        let jsonl = get(&host, &format!("{base}/games.jsonl"), &[]);
        assert_eq!(jsonl.status, 200);
        assert_eq!(
            jsonl.header("content-disposition"),
            Some(format!("attachment; filename=\"tournament-{id}.jsonl\"").as_str())
        );
        let records: Vec<serde_json::Value> = (jsonl.text().lines())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 6);
        // The PGN `tourney export --format pgn` writes of the same lines.
        let exported: String = (jsonl.text().lines())
            .map(|l| {
                tourney_coordinator::record_of_export_line(l)
                    .unwrap()
                    .to_pgn()
            })
            .collect();
        assert!(text == exported, "{text}\n\n{exported}");
        let mut scored = 0;
        for (game, record) in games.iter().zip(&records) {
            assert_eq!(record["tournament"], id);
            for tag in [
                "Site \"",
                "Date \"",
                "Round \"",
                "White \"",
                "Black \"",
                "Result \"",
            ] {
                assert!(game.contains(&format!("\n[{tag}")), "{tag} in {game}");
            }
            let white = record["white"].as_str().unwrap();
            assert!(game.contains(&format!("[White \"{white}\"]")), "{game}");
            let moves = record["moves"].as_array().unwrap();
            let comments = comments(game);
            assert_eq!(comments.len(), moves.len(), "a comment per move: {game}");
            // The opening's moves, when the record has them, are `{book}`.
            let book = record["opening_plies"].as_u64().unwrap_or(0) as usize;
            for (i, (comment, m)) in comments.iter().zip(moves).enumerate() {
                if i < book {
                    assert_eq!(comment, "book");
                    continue;
                }
                let (score, depth, ms) = parse_comment(comment);
                let time_ms = m["time_ms"].as_u64().unwrap() as f64;
                assert!(
                    (ms - time_ms).abs() <= time_ms * 0.05 + 1.0,
                    "{comment} vs {m}"
                );
                assert_eq!(
                    depth.map(u64::from),
                    m["depth"].as_u64(),
                    "{comment} vs {m}"
                );
                let Some(score) = score else {
                    assert!(m.get("score").is_none(), "{comment} vs {m}");
                    continue;
                };
                scored += 1;
                let reported = m["score"].as_str().unwrap();
                match reported.split_once(' ').unwrap() {
                    ("cp", cp) => {
                        let units: f64 = score.parse().unwrap();
                        let cp: f64 = cp.parse().unwrap();
                        assert!((units * 100.0 - cp).abs() < 0.5, "{comment} vs {m}");
                        assert_eq!(score.starts_with('+'), cp > 0.0, "{comment}");
                    }
                    ("win", _) => assert!(score.starts_with("+M"), "{comment}"),
                    ("loss", _) => assert!(score.starts_with("-M"), "{comment}"),
                    other => panic!("{other:?}"),
                }
            }
        }
        assert!(
            scored > 20,
            "the players' scores are in the comments: {text}"
        );

        // The same files compressed: by the path, by Accept-Encoding, and fishtest's name.
        let gz = get(&host, &format!("{base}/games.pgn.gz"), &[]);
        assert_eq!(gz.header("content-type"), Some("application/gzip"));
        assert_eq!(
            gz.header("content-disposition"),
            Some(format!("attachment; filename=\"tournament-{id}.pgn.gz\"").as_str())
        );
        assert_eq!(gz.gunzipped(), text);
        let encoded = get(
            &host,
            &format!("{base}/games.pgn"),
            &[("Accept-Encoding", "br, gzip")],
        );
        assert_eq!(encoded.header("content-encoding"), Some("gzip"));
        assert_eq!(encoded.gunzipped(), text);
        assert!(encoded.body.len() < text.len() / 2, "compressed");
        let fishtest = get(&host, &format!("/api/run_pgns/{id}.pgn.gz"), &[]);
        assert_eq!(fishtest.status, 200);
        assert_eq!(fishtest.gunzipped(), text);
        let jsonl_gz = get(&host, &format!("{base}/games.jsonl.gz"), &[]);
        assert_eq!(jsonl_gz.gunzipped(), jsonl.text());
        let jsonl_encoded = get(
            &host,
            &format!("{base}/games.jsonl"),
            &[("Accept-Encoding", "gzip")],
        );
        assert_eq!(jsonl_encoded.gunzipped(), jsonl.text());

        // Filtered as `tourney export` filters: one pair, one engine.
        let one_pair = get(
            &host,
            &format!("{base}/games.jsonl?from_pair=1&to_pair=1"),
            &[],
        );
        let lines: Vec<String> = one_pair.text().lines().map(str::to_string).collect();
        assert_eq!(lines.len(), 2);
        assert!(lines.iter().all(|l| l.contains("\"pair\":1")), "{lines:?}");
        let nobody = get(&host, &format!("{base}/games.pgn?engine=nobody"), &[]);
        assert_eq!((nobody.status, nobody.body.len()), (200, 0));

        // Unknown tests and names.
        for path in [
            "/api/v1/tournaments/999/games.pgn".to_string(),
            "/api/v1/tournaments/999/games.jsonl.gz".to_string(),
            "/api/run_pgns/999.pgn.gz".to_string(),
            format!("/api/run_pgns/{id}.zip"),
        ] {
            assert_eq!(get(&host, &path, &[]).status, 404, "{path}");
        }
    })
    .await
    .unwrap();
    let _ = stop.send(());
}
