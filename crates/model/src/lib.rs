//! The shared vocabulary of tourney: game records, why games end, time controls, and
//! tournament files.
//!
//! Pure data with serde, used by the referee, the store, the coordinator and the reports.

#![deny(missing_docs)]

pub mod account;
pub mod adjudication;
pub mod check;
pub mod fleet;
pub mod gpu;
pub mod job;
pub mod opening;
mod record;
pub mod release;
mod seed;
pub mod source;
pub mod spsa;
mod time_control;
pub mod tournament;
mod utc;
pub mod version;

pub use record::{
    GameRecord, GameResult, GameSummary, MAX_PV_MOVE_CHARS, MAX_PV_MOVES, MAX_STDERR_LINE_CHARS,
    MAX_STDERR_LINES, MAX_TRANSCRIPT_BYTES, MAX_TRANSCRIPT_LINE_CHARS, MAX_TRANSCRIPT_LINES,
    MetaValue, MoveCost, MoveRecord, Notation, PlayerName, PlayerRecord, SummaryMeta, Termination,
    fingerprint,
};
pub use time_control::{TimeControl, TimeControlError};
pub use tourney_rules::GameKind;

/// serde for a [`GameKind`] as its name (`loa`, `amazons`): an unknown game is an error
/// where the text comes in.
pub mod game_kind {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};
    use tourney_rules::GameKind;

    /// Writes the game's name.
    pub fn serialize<S: Serializer>(kind: &GameKind, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(kind.name())
    }

    /// Reads a game's name.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<GameKind, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(D::Error::custom)
    }
}
pub use utc::{Utc, hms, unix_ms_now};

/// `text` safe to print on a terminal: the control characters a terminal acts on
/// (escape sequences, carriage returns, backspaces, bells: every control character but
/// newline and tab) written out as `\x1b` (or `\u{9b}` past ASCII). Names, notes, stderr
/// and transcripts come from engines and other people: printed raw, they could rewrite the
/// screen or fake a line.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !unsafe_char(c) => out.push(c),
            c if c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The sha256 of `bytes` as lowercase hex: how engine programs (artifacts) are named,
/// stored by the coordinator and checked by the workers that fetch them.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}

/// Feeds all that `reader` gives into `hasher` a piece at a time (never whole in memory);
/// the number of bytes read.
///
/// # Errors
/// Reading failed.
pub fn hash_reader(
    hasher: &mut sha2::Sha256,
    mut reader: impl std::io::Read,
) -> std::io::Result<u64> {
    use sha2::Digest;
    let mut piece = vec![0u8; 1 << 20];
    let mut length = 0u64;
    loop {
        match reader.read(&mut piece) {
            Ok(0) => return Ok(length),
            Ok(n) => {
                hasher.update(&piece[..n]);
                length += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The sha256 (lowercase hex) of all that `reader` gives, read in pieces.
///
/// # Errors
/// Reading failed.
pub fn sha256_of_reader(reader: impl std::io::Read) -> std::io::Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    hash_reader(&mut hasher, reader)?;
    Ok(hex(&hasher.finalize()))
}

/// An error with its causes, each after a colon (`error sending request: connection
/// refused`): what a client library's error says only in its sources.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// `bytes` as lowercase hex (a digest as artifacts are named).
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reader_hashes_as_its_bytes_do() {
        let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 253) as u8).collect();
        assert_eq!(
            super::sha256_of_reader(&bytes[..]).unwrap(),
            super::sha256_hex(&bytes)
        );
        assert_eq!(
            super::sha256_of_reader(&b""[..]).unwrap(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn printable_text_has_no_control_character_but_newline_and_tab() {
        assert_eq!(super::printable("a\tb\nc"), "a\tb\nc");
        assert!(matches!(
            super::printable("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            super::printable("\u{1b}[2J\rfake\u{7}\u{9b}31m"),
            "\\x1b[2J\\x0dfake\\x07\\u{9b}31m"
        );
    }

    #[test]
    fn sha256_hex_is_the_standard_digest() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            super::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
