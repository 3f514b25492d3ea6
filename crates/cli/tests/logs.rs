//! Log lines as they reach stderr: plain where it is a pipe or a file, coloured on a
//! terminal unless `NO_COLOR` is set.

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Command, Stdio};

/// `tourney status --data DIR` of an empty directory, with every debug line logged: it
/// serves the directory on loopback and asks it, which logs the connection.
fn logging(stderr: Stdio, no_color: Option<&str>) -> std::process::Child {
    let data = tempfile::tempdir().unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
    command
        .args(["status", "--data"])
        .arg(data.path())
        .env("RUST_LOG", "debug")
        .env_remove("NO_COLOR")
        .env_remove("TOURNEY_LOG_FORMAT")
        .stdout(Stdio::null())
        .stderr(stderr);
    if let Some(value) = no_color {
        command.env("NO_COLOR", value);
    }
    let child = command.spawn().unwrap();
    // The directory must outlive the command: kept until the test process ends.
    std::mem::forget(data);
    child
}

fn assert_logged(text: &str) {
    assert!(text.contains("DEBUG"), "no log line: {text}");
}

#[test]
fn logs_to_a_pipe_or_a_file_have_no_colour_codes() {
    let piped = logging(Stdio::piped(), None).wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&piped.stderr);
    assert_logged(&text);
    assert!(!text.contains("\x1b["), "colour codes in a pipe: {text:?}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let file = std::fs::File::create(&path).unwrap();
    assert!(logging(file.into(), None).wait().unwrap().success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert_logged(&text);
    assert!(!text.contains("\x1b["), "colour codes in a file: {text:?}");
}

/// A pseudo-terminal: its master side, and its slave side for the child's stderr.
fn terminal() -> (std::fs::File, std::fs::File) {
    // SAFETY: plain calls on a descriptor this function opens and owns.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let name = std::ffi::CStr::from_ptr(name.as_ptr()).to_str().unwrap();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(name)
            .unwrap();
        (std::fs::File::from(OwnedFd::from_raw_fd(master)), slave)
    }
}

/// What the command logs to a terminal.
fn on_a_terminal(no_color: Option<&str>) -> String {
    let (mut master, slave) = terminal();
    let mut child = logging(slave.into(), no_color);
    // Read while it writes (a terminal holds only a few KiB); the read ends (EIO) once
    // no one holds the slave side.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = master.read(&mut buf) {
            out.extend_from_slice(&buf[..n]);
        }
        out
    });
    child.wait().unwrap();
    String::from_utf8_lossy(&reader.join().unwrap()).into_owned()
}

#[test]
fn logs_to_a_terminal_are_coloured_unless_no_color_is_set() {
    let coloured = on_a_terminal(None);
    assert_logged(&coloured);
    assert!(coloured.contains("\x1b["), "{coloured:?}");
    let empty = on_a_terminal(Some(""));
    assert!(
        empty.contains("\x1b["),
        "an empty NO_COLOR is unset: {empty:?}"
    );
    let plain = on_a_terminal(Some("1"));
    assert_logged(&plain);
    assert!(!plain.contains("\x1b["), "NO_COLOR=1: {plain:?}");
}
