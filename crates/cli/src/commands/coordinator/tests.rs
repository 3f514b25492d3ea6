use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    coordinator: CoordinatorArgs,
}

fn setup(args: &[&str]) -> Result<CoordinatorSetup> {
    let cli = Cli::try_parse_from(std::iter::once("coordinator").chain(args.iter().copied()))?;
    cli.coordinator.setup()
}

#[test]
fn defaults_without_a_file() {
    let s = setup(&[]).unwrap();
    assert_eq!((s.listen, s.insecure), (None, false));
    assert_eq!(s.data, PathBuf::from("tourney-data"));
    assert_eq!((s.lease_seconds, s.tls), (30, None));
}

#[test]
fn the_example_file_is_read_with_paths_relative_to_it_and_flags_win() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/coordinator.toml");
    let s = setup(&["--config", file]).unwrap();
    let dir = Path::new(file).parent().unwrap();
    assert_eq!(s.data, dir.join("../tourney-coordinator-data"));
    assert_eq!(s.lease_seconds, 30);
    let s = setup(&["--config", file, "--lease-seconds", "5", "--data", "d"]).unwrap();
    assert_eq!((s.lease_seconds, s.data), (5, PathBuf::from("d")));
    assert_eq!(s.bounds, (256, 512, 1000));
    assert_eq!(s.max_live_tournaments, 100);
    let s = setup(&["--max-slots", "8", "--registrations-per-token", "3"]).unwrap();
    assert_eq!(s.bounds, (8, 512, 3));
    let s = setup(&["--max-live-tournaments", "5"]).unwrap();
    assert_eq!(s.max_live_tournaments, 5);
}

#[test]
fn beyond_loopback_needs_both_tokens_or_insecure() {
    let any: SocketAddr = "0.0.0.0:7070".parse().unwrap();
    let local: SocketAddr = "127.0.0.1:9000".parse().unwrap();
    assert_eq!(listen_address(None, true, false).unwrap(), any);
    assert_eq!(
        listen_address(None, false, false).unwrap(),
        "127.0.0.1:7070".parse().unwrap(),
        "without tokens the default is loopback"
    );
    assert_eq!(listen_address(Some(local), false, false).unwrap(), local);
    let e = listen_address(Some(any), false, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("without both a worker and an admin token"),
        "{e}"
    );
    assert_eq!(listen_address(Some(any), false, true).unwrap(), any);
    let v6: SocketAddr = "[::]:7070".parse().unwrap();
    assert!(listen_address(Some(v6), false, false).is_err());
}

#[test]
fn an_empty_token_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("worker-token");
    std::fs::write(&path, "\n").unwrap();
    let e = TokenSource::File(path.clone()).read().unwrap_err();
    assert!(format!("{e:#}").contains("no token in the file"), "{e:#}");
    std::fs::write(&path, "box1 0123456789abcdef\nbox2 fedcba9876543210\n").unwrap();
    let tokens = TokenSource::File(path).read().unwrap();
    assert_eq!(tokens.len(), 2);
}

#[test]
fn bad_files_name_the_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.toml");
    std::fs::write(&path, "listen = \"0.0.0.0:1\"\nlease_secs = 3\n").unwrap();
    let e = setup(&["--config", path.to_str().unwrap()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("c.toml:2") && e.contains("lease_secs"), "{e}");
    std::fs::write(&path, "tls_cert = \"c.pem\"\n").unwrap();
    let e = setup(&["--config", path.to_str().unwrap()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("tls_key is not"), "{e}");
    std::fs::write(&path, "listen = \"nowhere\"\n").unwrap();
    let e = setup(&["--config", path.to_str().unwrap()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("c.toml:1"), "{e}");
}
