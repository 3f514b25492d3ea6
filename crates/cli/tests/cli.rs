//! The `tourney` binary as users run it: `perft`, `legal` and their errors.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn tourney(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tourney"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tourney starts");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Output) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

#[test]
fn perft_prints_the_count_on_the_last_line_and_the_rate_on_stderr() {
    let out = tourney(&["perft", "loa", "3"], "");
    assert!(out.status.success());
    assert_eq!(stdout(&out).lines().last(), Some("44952"));
    assert!(stderr(&out).contains("leaves/s"), "{}", stderr(&out));
}

#[test]
fn perft_from_a_position_with_divide() {
    let position = "1bb1bw2/w6w/w2b2b1/w7/w1b4w/w3w3/2w3ww/2bb1bb1 b";
    let out = tourney(
        &["perft", "loa", "2", "--position", position, "--divide"],
        "",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"929"));
    assert_eq!(lines.len(), 26, "25 moves and the total");
    let sum: u64 = lines[..25]
        .iter()
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, 929);
    let out = tourney(&["perft", "amazons", "1"], "");
    assert_eq!(stdout(&out).trim(), "2176");
}

#[test]
fn perft_rejects_a_bad_position_with_its_column() {
    let out = tourney(
        &[
            "perft",
            "loa",
            "1",
            "--position",
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbq1 b",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unexpected 'q'") && stderr(&out).contains("column 40"),
        "{}",
        stderr(&out)
    );
    let out = tourney(&["perft", "chess", "1"], "");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown game 'chess'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn legal_prints_sorted_moves_separated_by_single_spaces() {
    let out = tourney(
        &[
            "legal",
            "loa",
            "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b",
        ],
        "",
    );
    assert!(out.status.success());
    let text = stdout(&out);
    let moves: Vec<&str> = text.trim_end_matches('\n').split(' ').collect();
    assert_eq!(moves.len(), 36);
    let mut sorted = moves.clone();
    sorted.sort();
    assert_eq!(moves, sorted);
    assert!(moves.contains(&"b1-b3"));
}

#[test]
fn legal_answers_each_stdin_line_with_pass_and_finished_games() {
    let input = "8/8/2b5/bb6/w1bb4/3b4/b1w1b3/1bb5 w\n\
                 8/8/8/8/8/8/bb5w/7w b\n\
                 3b2b3/10/10/b8b/10/10/w8w/10/10/3w2w3 w\n";
    let loa = tourney(
        &["legal", "loa"],
        &input.lines().take(2).collect::<Vec<_>>().join("\n"),
    );
    assert!(loa.status.success(), "{}", stderr(&loa));
    assert_eq!(stdout(&loa), "pass\n\n");
    let amazons = tourney(&["legal", "amazons"], input.lines().nth(2).unwrap());
    assert_eq!(stdout(&amazons).trim_end().split(' ').count(), 2176);
}

#[test]
fn legal_stops_at_a_malformed_line_after_answering_the_earlier_ones() {
    let input = "1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n1bbbbbb1/w6w/w6w b\n1bbbbbb1/w6w/w6w/w6w/w6w/w6w/w6w/1bbbbbb1 b\n";
    let out = tourney(&["legal", "loa"], input);
    assert!(!out.status.success());
    assert_eq!(stdout(&out).lines().count(), 1);
    let err = stderr(&out);
    assert!(
        err.contains("stdin line 2") && err.contains("board ends early"),
        "{err}"
    );
}
