//! `confine`'s own checks.

use super::*;

#[test]
fn only_words_written_as_paths_that_exist_are_made_absolute() {
    // Tests run in the crate's directory, which holds `src/` and `Cargo.toml`.
    let here = std::env::current_dir().unwrap();
    let engine_dir = tempfile::tempdir().unwrap();
    let absolute = |word| absolute(word, engine_dir.path(), true);
    assert_eq!(
        absolute("src/lib.rs"),
        here.join("src/lib.rs").into_os_string()
    );
    assert_eq!(
        absolute("Cargo.toml"),
        here.join("Cargo.toml").into_os_string()
    );
    // A bare word is an argument even where a directory has that name (`--game loa`
    // started beside a `loa/` directory).
    assert_eq!(absolute("src"), OsString::from("src"));
    assert_eq!(absolute("missing.py"), OsString::from("missing.py"));
    assert_eq!(absolute("-src/lib.rs"), OsString::from("-src/lib.rs"));
}

#[test]
fn a_file_placed_in_the_engines_directory_is_the_one_a_relative_path_names() {
    // The working directory holds `src/lib.rs`; so does the engine's (an uploaded file
    // placed there): the engine's own is meant, whoever asks.
    let engine_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(engine_dir.path().join("src")).unwrap();
    std::fs::write(engine_dir.path().join("src/lib.rs"), "uploaded").unwrap();
    for from_cwd in [true, false] {
        let word = absolute("src/lib.rs", engine_dir.path(), from_cwd);
        assert_eq!(word, OsString::from("src/lib.rs"), "from_cwd {from_cwd}");
    }
    // A worker's job never reaches into the worker's directory, even for what its own
    // directory lacks.
    let word = absolute("Cargo.toml", engine_dir.path(), false);
    assert_eq!(word, OsString::from("Cargo.toml"));
}

#[test]
fn a_sealed_copy_is_what_was_checked_and_cannot_be_written() {
    use std::io::Write;
    use std::os::fd::AsRawFd;
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("engine");
    std::fs::write(&program, b"#!/bin/sh\necho hi\n").unwrap();
    let sha = tourney_model::sha256_hex(b"#!/bin/sh\necho hi\n");
    let copy = sealed_copy(&program, &sha).unwrap();
    let through = format!("/proc/self/fd/{}", copy.as_raw_fd());
    assert_eq!(std::fs::read(&through).unwrap(), b"#!/bin/sh\necho hi\n");
    // Sealed: nobody writes it, whoever opens it.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&through);
    let wrote = writer.as_mut().map(|w| w.write_all(b"evil"));
    assert!(!matches!(wrote, Ok(Ok(()))), "the copy took a write");
    let e = sealed_copy(&program, &"0".repeat(64)).unwrap_err();
    assert!(e.contains("changed since it was checked"), "{e}");
}
