use super::transcript::{TRANSCRIPT_BYTES, line_cut};
use super::*;

#[test]
fn threads_go_as_the_threads_option_only_to_an_engine_that_declares_it() {
    let declared = |lines: &[&str]| -> Vec<Message> {
        lines
            .iter()
            .map(|l| crate::protocol::parse_message(l))
            .collect()
    };
    let smp = declared(&[
        "id name e",
        "option name Hash type spin default 16 min 1 max 1024",
        "option name threads type spin default 1 min 1 max 64",
    ]);
    let mut config = EngineConfig::new("./e");
    assert_eq!(config.threads_option(&smp), None, "no threads given");
    config.threads = Some(8);
    assert_eq!(
        config.threads_option(&smp),
        Some(("Threads".into(), "8".into()))
    );
    let single = declared(&["option name ThreadsPerCore type spin default 1"]);
    assert_eq!(config.threads_option(&single), None, "not its Threads");
    config.options.push(("THREADS".into(), "2".into()));
    assert_eq!(config.threads_option(&smp), None, "the file's option wins");
}

#[test]
fn a_transcript_keeps_its_first_and_last_lines_within_its_bound() {
    let mut t = Transcript::default();
    let origin = t.origin;
    for i in 0..100_000u64 {
        let at = origin + Duration::from_micros(i * 10);
        let direction = if i % 2 == 0 {
            Direction::Sent
        } else {
            Direction::Received
        };
        t.note_at(at, direction, format!("info nodes {i}"));
    }
    let stderr = [(origin + Duration::from_micros(999_985), "oops".to_string())];
    let lines = t.lines(&stderr);
    let bytes: usize = lines.iter().map(String::len).sum();
    assert!(bytes <= TRANSCRIPT_BYTES, "{bytes} bytes");
    assert_eq!(lines[0], "0.000 > info nodes 0");
    assert_eq!(lines[1], "0.000 < info nodes 1");
    assert_eq!(lines.last().unwrap(), "1.000 < info nodes 99999");
    let gap = lines
        .iter()
        .position(|l| l.contains("lines left out"))
        .unwrap();
    let kept = lines.len() - 2; // the gap and the stderr line
    assert_eq!(lines[gap], format!("… {} lines left out …", 100_000 - kept));
    assert!(
        lines.contains(&"1.000 ! oops".to_string()),
        "{:?}",
        &lines[lines.len() - 3..]
    );
    // Long lines are cut, their length said.
    let mut long = "x".repeat(5000);
    assert_eq!(
        line_cut(&mut long),
        format!("{} … (5000 bytes)", "x".repeat(1024))
    );
    let mut short = "go movetime 100".to_string();
    assert_eq!(line_cut(&mut short), "go movetime 100");
}

#[test]
fn command_lines_split_like_a_shell() {
    assert_eq!(
        split_command("python3 my_engine.py --fast"),
        ["python3", "my_engine.py", "--fast"]
    );
    assert_eq!(
        split_command("  ./e  'a b' \"c d\" ''"),
        ["./e", "a b", "c d", ""]
    );
    assert!(split_command("   ").is_empty());
}

#[test]
fn a_program_on_no_path_directory_is_said_not_found_on_path() {
    use std::os::unix::fs::PermissionsExt;
    // A PATH directory holding a file of that name that cannot be run: spawning would say
    // "Permission denied", which hides that the program is not there.
    let dir = tempfile::tempdir().unwrap();
    let decoy = dir.path().join("pyhton3");
    std::fs::write(&decoy, "not a program").unwrap();
    std::fs::set_permissions(&decoy, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut config = EngineConfig::new("pyhton3 random_loa.py --protocol ugi");
    config.policy.allow_root = true;
    config.policy.env = vec![("PATH".into(), dir.path().display().to_string())];
    let err = process::EngineProcess::spawn(&config)
        .err()
        .expect("not started");
    let text = err.to_string();
    assert!(
        text.starts_with(
            "cannot start 'pyhton3 random_loa.py --protocol ugi': 'pyhton3' not found on PATH"
        ),
        "{text}"
    );
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    // Once it is there (executable), it starts.
    std::fs::write(&decoy, "#!/bin/sh\nexit 0\n").unwrap();
    std::fs::set_permissions(&decoy, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = process::EngineProcess::spawn(&config);
    assert!(
        started.is_ok(),
        "{:?}",
        started.err().map(|e| e.to_string())
    );
}

#[test]
fn a_file_given_by_a_relative_path_is_placed_where_the_engine_reads_it() {
    // Tests run in the crate's directory: `Cargo.toml` is a relative path from here (as a
    // worker's cache is under a relative `--data`), not from the engine's directory.
    let mut config = EngineConfig::new("/bin/true");
    config.policy.allow_root = true;
    config.files = vec![("lib/Cargo.toml".into(), "Cargo.toml".into())];
    let engine = process::EngineProcess::spawn(&config).unwrap_or_else(|e| panic!("{e}"));
    let placed = engine._dir.path().join("lib/Cargo.toml");
    let read = std::fs::read_to_string(&placed).expect("the placed file reads");
    assert_eq!(read, std::fs::read_to_string("Cargo.toml").unwrap());
}
