//! `tourney bench store`: the store at the scale of a season. Writes `--pairs` pairs of
//! synthetic but valid LOA games (random playouts from the tournament's openings, about
//! 214 plies a game) through the store's commit path, then restarts a real coordinator
//! process on them and exports them: write rate, bytes per game, time until the restarted
//! coordinator serves, its memory, and the export rate.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::value::RawValue;
use tourney_ai::Rng;
use tourney_coordinator::{Coordinator, Settings};
use tourney_model::tournament::PairOutcome;
use tourney_model::{GameRecord, GameResult, MoveRecord, PlayerRecord, Termination};
use tourney_proto::v1 as pb;
use tourney_rules::{EndReason, Game, Loa, Position};
use tourney_store::{PairRecord, Store};

use crate::bench::harness::status_value;

/// Random players at one node a move: what the games are said to be.
const TOURNAMENT: &str = "name = \"bench-store\"\ngame = \"loa\"\nformat = \"match\"\n\
    pairs = PAIRS\nopenings = { plies = 4, seed = 1 }\nlimits = { nodes = 1 }\n\
    [[engine]]\nname = \"a\"\nplayer = \"random:seed=1\"\n\
    [[engine]]\nname = \"b\"\nplayer = \"random:seed=2\"\n";

/// Pairs per commit, as a coordinator's group commit takes them from a busy fleet.
const COMMIT_PAIRS: usize = 64;

/// A random game from `start`, as the referee records one.
fn random_game(start: &Loa, white: &str, black: &str, rng: &mut Rng) -> GameRecord {
    let mut game = Game::new(*start, Default::default());
    let mut moves = Vec::new();
    while game.outcome().is_none() {
        let Some(mv) = game.position().random_move(rng.next_u64()) else {
            break;
        };
        game.play(mv).expect("random moves are legal");
        moves.push(MoveRecord {
            mv: mv.to_string(),
            time_ms: 0,
            nodes: Some(1),
            depth: None,
            score: None,
            ..Default::default()
        });
    }
    let outcome = game.outcome().expect("a random LOA game ends");
    let player = |name: &str| PlayerRecord {
        name: name.into(),
        spec: format!("random:seed={}", if name == "a" { 1 } else { 2 }),
        ..Default::default()
    };
    GameRecord {
        game: tourney_rules::GameKind::Loa,
        rules: String::new(),
        start: start.to_string(),
        opening_plies: 0,
        time_control: "nodes=1".into(),
        white: player(white),
        black: player(black),
        moves,
        result: GameResult::of_winner(outcome.winner),
        termination: match outcome.reason {
            EndReason::Repetition => Termination::Repetition,
            _ => Termination::Connection,
        },
        detail: None,
        started_ms: Some(tourney_model::unix_ms_now()),
        meta: BTreeMap::new(),
    }
}

/// Bytes of the files under `dir`.
fn size_of(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => size_of(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

pub(crate) fn store(pairs: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("tourney-bench-store-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let runtime = tokio::runtime::Runtime::new()?;
    let (id, written, write_s) = runtime.block_on(async {
        let store = Store::open_data_dir(&dir, tourney_store::DEFAULT_CACHE_MB)?;
        let c = Coordinator::open(
            store.clone(),
            Settings::default(),
            &prometheus::Registry::new(),
        )?;
        let text = TOURNAMENT.replace("PAIRS", &pairs.to_string());
        let id = c
            .submit(&text, "bench-store.toml", "", BTreeMap::new())
            .await?;
        let openings = store.openings(id)?;
        let config = tourney_model::tournament::TournamentConfig::parse(&text, "bench-store.toml")?;
        let mut rng = Rng::new(1);
        let started = Instant::now();
        let mut written = 0u64;
        for chunk in (0..pairs as u64).collect::<Vec<_>>().chunks(COMMIT_PAIRS) {
            let mut batch = Vec::with_capacity(chunk.len());
            for &pair in chunk {
                let (first, second, round) = config
                    .pairing(pair)
                    .context("the bench's tournament pairs by its file")?;
                let opening = (openings.get((round % openings.len().max(1) as u64) as usize))
                    .context("the tournament has openings")?;
                let start: Loa = opening.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
                let names = |i: usize| config.engines[i].name.as_str();
                // Game 0: the first engine has the side that moves second (as the referee
                // seats it); game 1 the other way round.
                let (w0, w1) = if start.turn() == tourney_rules::Color::Black {
                    (first, second)
                } else {
                    (second, first)
                };
                let games = [
                    random_game(
                        &start,
                        names(w0),
                        names(if w0 == first { second } else { first }),
                        &mut rng,
                    ),
                    random_game(
                        &start,
                        names(w1),
                        names(if w1 == first { second } else { first }),
                        &mut rng,
                    ),
                ];
                let white = [w0, w1];
                let half_points = [0, 1].map(|g| {
                    let first_plays = if white[g] == first {
                        tourney_rules::Color::White
                    } else {
                        tourney_rules::Color::Black
                    };
                    games[g].result.half_points(first_plays)
                });
                batch.push(PairRecord {
                    tournament: id,
                    outcome: PairOutcome {
                        pair,
                        first,
                        second,
                        half_points,
                        white,
                    },
                    games: RawValue::from_string(serde_json::to_string(&games)?)?,
                    worker: "bench#1".into(),
                    token: "bench".into(),
                });
            }
            store.commit_pairs(&batch).await?;
            written += 2 * batch.len() as u64;
        }
        Ok::<_, anyhow::Error>((id, written, started.elapsed().as_secs_f64()))
    })?;
    drop(runtime);
    let bytes = size_of(&dir);
    println!(
        "store of {pairs} pairs ({written} random LOA games, synthetic and valid):\n  \
         written {:.0} games/s in commits of {COMMIT_PAIRS} pairs; {:.0} bytes a game on disk ({:.1} MiB in all)",
        written as f64 / write_s,
        bytes as f64 / written as f64,
        bytes as f64 / (1 << 20) as f64
    );
    // A coordinator process started on it: until it serves, and its memory. The first
    // reads the pairs' digests (the tournament ended without a coordinator to see it) and
    // writes its summary; the next reads the summary, as after any restart.
    let restart = || -> Result<(std::process::Child, u16, f64, f64)> {
        let started = Instant::now();
        let (child, port) = crate::bench::harness::coordinator_process(&dir, &[])?;
        let serving = started.elapsed().as_secs_f64();
        std::thread::sleep(Duration::from_millis(200));
        let rss = status_value(child.id(), "VmRSS:");
        Ok((child, port, serving, rss))
    };
    let (mut first, _, first_serving, first_rss) = restart()?;
    let _ = first.kill();
    let _ = first.wait();
    let (mut child, port, serving, rss) = restart()?;
    let export = tokio::runtime::Runtime::new()?.block_on(async {
        let channel = tonic::transport::Endpoint::new(format!("http://127.0.0.1:{port}"))?
            .connect()
            .await?;
        let mut admin = pb::admin_client::AdminClient::new(channel);
        let started = Instant::now();
        let mut stream = admin
            .export(pb::ExportRequest {
                id,
                ..Default::default()
            })
            .await?
            .into_inner();
        let mut games = 0u64;
        while let Some(chunk) = stream.message().await? {
            games += chunk.lines.len() as u64;
        }
        Ok::<_, anyhow::Error>((games, started.elapsed().as_secs_f64()))
    });
    let rss_after = status_value(child.id(), "VmRSS:");
    // The same games from the dashboard's server: PGN and JSON Lines, gzip files.
    let downloads = ["games.pgn.gz", "games.jsonl.gz"].map(|file| (file, download(port, id, file)));
    let rss_downloaded = status_value(child.id(), "VmRSS:");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let (exported, export_s) = export?;
    println!(
        "  first start (reads every pair's digest, writes the summary): serving after {first_serving:.2} s, {first_rss:.0} MiB resident\n  \
         restarted coordinator (reads the summary): serving after {serving:.2} s, {rss:.0} MiB resident ({rss_after:.0} MiB after the export)\n  \
         export: {exported} games in {export_s:.2} s = {:.0} games/s",
        exported as f64 / export_s
    );
    for (file, downloaded) in downloads {
        let (games, bytes, seconds) = downloaded?;
        println!(
            "  download of {file} over HTTP: {games} games, {:.1} MiB, in {seconds:.2} s = {:.0} games/s",
            bytes as f64 / (1 << 20) as f64,
            games as f64 / seconds
        );
    }
    println!("  {rss_downloaded:.0} MiB resident after the downloads");
    Ok(())
}

/// `GET /api/v1/tournaments/{id}/{file}` (a gzip file) from the coordinator on `port`: the
/// games in it, its bytes, and the seconds until the last byte came.
fn download(port: u16, id: u64, file: &str) -> Result<(u64, usize, f64)> {
    use std::io::{Read, Write};
    let started = Instant::now();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    write!(
        stream,
        "GET /api/v1/tournaments/{id}/{file} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let seconds = started.elapsed().as_secs_f64();
    let at = (response.windows(4))
        .position(|w| w == b"\r\n\r\n")
        .context("an HTTP answer")?;
    anyhow::ensure!(
        response.starts_with(b"HTTP/1.0 200") || response.starts_with(b"HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&response[..at])
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(&response[at + 4..]).read_to_string(&mut text)?;
    let games = match file.starts_with("games.pgn") {
        true => text.matches("[Event ").count(),
        false => text.lines().count(),
    };
    Ok((games as u64, response.len() - at - 4, seconds))
}
