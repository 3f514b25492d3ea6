//! The compact encoding read back exactly: every notation shape and optional field,
//! moves that do not fit kept as JSON, and a damaged record an error at every cut.

use serde_json::json;

use super::*;

fn record(games: Value) -> PairRecord {
    PairRecord {
        tournament: 7,
        outcome: PairOutcome {
            pair: 3,
            first: 0,
            second: 1,
            half_points: [2, 1],
            white: [1, 0],
        },
        games: serde_json::value::to_raw_value(&games).unwrap(),
        worker: "box-1#2".into(),
        token: "lab".into(),
    }
}

fn game(moves: Value) -> Value {
    json!({
        "game": "loa", "rules": "", "start": "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
        "opening_plies": 0, "time_control": "movetime=100",
        "white": {"name": "a", "spec": "ab"}, "black": {"name": "b", "spec": "mcts"},
        "moves": moves, "result": "1-0", "termination": "connection", "started_ms": 17
    })
}

/// Encodes and decodes `record`; asserts that its games read back equal, and returns
/// the stored bytes.
fn round_trip(record: &PairRecord) -> Vec<u8> {
    let (bytes, digest) = encode(record).unwrap();
    let back = decode(&bytes).unwrap();
    let value = |r: &PairRecord| serde_json::from_str::<Value>(r.games.get()).unwrap();
    assert_eq!(value(&back), value(record));
    assert_eq!(
        (back.tournament, back.outcome, &back.worker, &back.token),
        (
            record.tournament,
            record.outcome,
            &record.worker,
            &record.token
        )
    );
    assert_eq!(PairDigest::decode(&digest.encode()).unwrap(), digest);
    bytes
}

#[test]
fn every_notation_shape_and_optional_field_reads_back_exactly() {
    let moves = json!([
        {"move": "b1-b3", "time_ms": 12, "nodes": 840, "depth": 3, "score": "cp 35"},
        {"move": "h2xf4", "time_ms": 0},
        {"move": "pass", "time_ms": 1, "nodes": 0},
        {"move": "d1-d7/g7", "time_ms": 300000, "score": "win 7"},
        {"move": "j10xa1/j1", "time_ms": 5, "depth": 40},
        {"move": "z26-a1", "time_ms": u64::MAX, "nodes": u64::MAX},
    ]);
    let r = record(json!([game(moves.clone()), game(json!([]))]));
    let bytes = round_trip(&r);
    assert_eq!(bytes[0], COLUMNAR_TAG);
    // Records written by the referee (keys in MoveRecord's order) come back byte for
    // byte.
    let games: Vec<Map<String, Value>> =
        serde_json::from_str(decode(&bytes).unwrap().games.get()).unwrap();
    assert_eq!(
        serde_json::to_string(&games[0]["moves"]).unwrap(),
        serde_json::to_string(&moves).unwrap()
    );
}

#[test]
fn moves_that_do_not_fit_the_columns_are_kept_as_json() {
    for odd in [
        json!([{"move": "e7-e8=Q", "time_ms": 1}]),
        json!([{"move": "a01-a2", "time_ms": 1}]),
        json!([{"move": "a27-a2", "time_ms": 1}]),
        json!([{"move": "a1-", "time_ms": 1}]),
        json!([{"move": "a1-b2-c3", "time_ms": 1}]),
        json!([{"move": "a1/b2", "time_ms": 1}]),
        json!([{"move": "b1-b3", "time_ms": 1, "nodes": null}]),
        json!([{"move": "b1-b3", "time_ms": -1}]),
        json!([{"move": "b1-b3", "time_ms": 1, "comment": "new field"}]),
        json!([{"move": "b1-b3"}]),
        json!(["b1-b3"]),
        json!("not an array"),
    ] {
        let r = record(json!([game(odd.clone()), {"moves": []}, {}]));
        round_trip(&r);
    }
}

#[test]
fn a_long_loa_game_takes_a_few_hundred_bytes() {
    // 214 plies over the whole board, as random players play them.
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let moves: Vec<Value> = (0..214)
        .map(|_| {
            let sq = |f: u64, r: u64| format!("{}{}", char::from(b'a' + f as u8), r + 1);
            let sep = if next(3) == 0 { "x" } else { "-" };
            json!({"move": format!("{}{sep}{}", sq(next(8), next(8)), sq(next(8), next(8))),
                   "time_ms": next(3), "nodes": 1})
        })
        .collect();
    let r = record(json!([game(json!(moves.clone())), game(json!(moves))]));
    let json_len = r.games.get().len();
    let bytes = round_trip(&r);
    assert!(
        bytes.len() < 2 * 600,
        "{} bytes for two games ({json_len} bytes of JSON)",
        bytes.len()
    );
}

#[test]
fn a_damaged_record_is_an_error_never_a_panic() {
    let moves = json!([{"move": "b1-b3", "time_ms": 12, "score": "cp 1"},
                       {"move": "d1-d7/g7", "time_ms": 3, "nodes": 9}]);
    let r = record(json!([game(moves)]));
    let (bytes, digest) = encode(&r).unwrap();
    let payload =
        lz4_flex::block::decompress_size_prepended_with_dict(&bytes[1..], DICTIONARY).unwrap();
    let pack = |payload: &[u8]| {
        let mut damaged = vec![COLUMNAR_TAG];
        damaged.extend_from_slice(&lz4_flex::block::compress_prepend_size_with_dict(
            payload, DICTIONARY,
        ));
        damaged
    };
    assert!(decode(&pack(&payload)).is_ok());
    for cut in 0..payload.len() {
        let damaged = pack(&payload[..cut]);
        assert!(decode(&damaged).is_err(), "cut at {cut}");
    }
    for flip in 0..payload.len() {
        let mut changed = payload.clone();
        changed[flip] ^= 0xa5;
        let _ = decode(&pack(&changed));
    }
    let d = digest.encode();
    for cut in 0..d.len() {
        assert!(
            PairDigest::decode(&d[..cut]).is_err(),
            "digest cut at {cut}"
        );
    }
}

#[test]
fn a_digest_has_the_outcome_the_worker_and_each_games_ending_and_fingerprint() {
    let moves = json!([{"move": "b1-b3", "time_ms": 12}]);
    let mut lost = game(moves.clone());
    lost["termination"] = json!("time-forfeit");
    let r = record(json!([game(moves.clone()), lost]));
    let (_, digest) = encode(&r).unwrap();
    let print = tourney_model::fingerprint(
        "a",
        "b",
        "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
        ["b1-b3"].into_iter(),
    );
    assert_eq!(
        digest.games,
        [
            (Termination::Connection, print, PlayedOn::No),
            (Termination::TimeForfeit, print, PlayedOn::No)
        ]
    );
    // An adjudicated game played on keeps how it ended against the adjudication.
    let mut judged = game(moves.clone());
    judged["termination"] = json!("adjudication");
    judged["result"] = json!("1-0");
    judged["meta"] = json!({"played_on": "1/2-1/2"});
    let mut agreed = judged.clone();
    agreed["meta"] = json!({"played_on": "1-0"});
    let (_, judged) = encode(&record(json!([judged, agreed]))).unwrap();
    let checks: Vec<PlayedOn> = judged.games.iter().map(|g| g.2).collect();
    assert_eq!(checks, [PlayedOn::Overturned, PlayedOn::Agreed]);
    assert_eq!(PairDigest::decode(&judged.encode()).unwrap(), judged);
    assert_eq!(
        (digest.outcome, digest.worker.as_str()),
        (r.outcome, "box-1#2")
    );
    let mut old = digest.clone();
    old.outcome.white = PairOutcome::COLOURS_UNKNOWN;
    assert_eq!(PairDigest::decode(&old.encode()).unwrap(), old);
}
