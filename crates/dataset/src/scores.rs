//! Whether a game's scores can be the training target they are taken for: a worker could
//! report any. Each `cp` score must be within [`MAX_CP`], and the two sides must not both
//! claim to be winning, move after move: a position's score and the next one's, seen by the
//! other side, are about each other's negation. A search's horizon makes a few such pairs
//! (a tactic found one ply late); more than [`MAX_CONTRADICTIONS`] of a game's adjacent
//! pairs (and at least three) is not a search but a made-up or broken score.

use tourney_model::GameRecord;

/// The largest `cp` score an engine may report: beyond it, `win N` / `loss N` say it.
pub const MAX_CP: i64 = 30_000;

/// How far both sides may claim an advantage at once (centi-units, each).
pub const CLAIM_CP: i64 = 400;

/// The share of a game's adjacent scored pairs that may contradict each other.
pub const MAX_CONTRADICTIONS: f64 = 0.2;

/// A score as a number from its mover's side: `cp N`, and `win` / `loss` beyond every
/// `cp`; `None` for no score.
fn value(text: &str) -> Result<Option<i64>, String> {
    let mut words = text.split_whitespace();
    match (words.next(), words.next().map(str::parse::<i64>)) {
        (Some("cp"), Some(Ok(cp))) if cp.abs() <= MAX_CP => Ok(Some(cp)),
        (Some("cp"), Some(Ok(cp))) => Err(format!(
            "score 'cp {cp}' is beyond ±{MAX_CP} (a forced result is 'win N' or 'loss N')"
        )),
        (Some("win"), Some(Ok(_))) => Ok(Some(MAX_CP + 1)),
        (Some("loss"), Some(Ok(_))) => Ok(Some(-MAX_CP - 1)),
        _ => Ok(None),
    }
}

/// Checks `game`'s scores (see the module): why they cannot be taken, if they cannot.
///
/// # Errors
/// A score out of range (naming its move), or sides that contradict each other too often.
pub fn check_scores(game: &GameRecord) -> Result<(), String> {
    let mut scores = Vec::with_capacity(game.moves.len());
    for (ply, played) in game.moves.iter().enumerate() {
        let score = match played.score.as_deref() {
            Some(text) => {
                value(text).map_err(|e| format!("move {} ({}): {e}", ply + 1, played.mv))?
            }
            None => None,
        };
        scores.push(score);
    }
    let (mut pairs, mut contradictions) = (0u32, 0u32);
    for pair in scores.windows(2) {
        if let [Some(mine), Some(theirs)] = *pair {
            pairs += 1;
            let both_winning = mine >= CLAIM_CP && theirs >= CLAIM_CP;
            let both_losing = mine <= -CLAIM_CP && theirs <= -CLAIM_CP;
            contradictions += u32::from(both_winning || both_losing);
        }
    }
    if contradictions >= 3 && f64::from(contradictions) > MAX_CONTRADICTIONS * f64::from(pairs) {
        return Err(format!(
            "the two sides' scores contradict each other in {contradictions} of {pairs} \
             consecutive moves (both claim {CLAIM_CP} or more, or both lose as much)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::MoveRecord;

    fn game(scores: &[&str]) -> GameRecord {
        let moves: Vec<MoveRecord> = scores
            .iter()
            .enumerate()
            .map(|(i, s)| MoveRecord {
                mv: format!("m{i}"),
                score: (!s.is_empty()).then(|| s.to_string()),
                ..MoveRecord::default()
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "game": "loa",
            "start": "s",
            "time_control": "nodes=1",
            "white": {"name": "a", "spec": "ab"},
            "black": {"name": "b", "spec": "ab"},
            "moves": moves,
            "result": "0-1",
            "termination": "connection",
        }))
        .unwrap()
    }

    #[test]
    fn a_real_search_s_scores_pass() {
        // Small advantages swapping sign, a tactic seen a ply late, a forced end.
        let seen = [
            "cp 20", "cp -15", "cp 35", "cp 450", "cp 420", "cp -600", "cp 900", "win 3", "loss 2",
            "win 1",
        ];
        assert_eq!(check_scores(&game(&seen)), Ok(()));
        assert_eq!(check_scores(&game(&["", "cp 5", ""])), Ok(()));
    }

    #[test]
    fn made_up_or_out_of_range_scores_are_refused() {
        let both_winning = vec!["cp 900"; 38];
        let e = check_scores(&game(&both_winning)).unwrap_err();
        assert!(e.contains("37 of 37"), "{e}");
        let e = check_scores(&game(&["cp 10", "cp 999999"])).unwrap_err();
        assert!(
            e.starts_with("move 2 (m1): score 'cp 999999' is beyond"),
            "{e}"
        );
        let both_winning_forced = vec!["win 5"; 10];
        assert!(check_scores(&game(&both_winning_forced)).is_err());
    }
}
