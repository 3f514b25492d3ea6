//! `confine`'s own checks.

use super::*;

#[test]
fn only_words_written_as_paths_that_exist_are_made_absolute() {
    // Tests run in the crate's directory, which holds `src/` and `Cargo.toml`.
    let here = std::env::current_dir().unwrap();
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
