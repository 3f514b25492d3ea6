//! Data files: a 16-byte header, then records of [`RECORD_BYTES`] each.
//!
//! | bytes | field |
//! |---|---|
//! | 0..8 | `TRNYDATA` |
//! | 8..10 | the format's version, 1 (u16, little-endian) |
//! | 10..12 | the record size, 40 (u16) |
//! | 12..16 | 0 |
//!
//! A file ends at a record's end; a shorter tail is an error, never read as a record.

use std::fmt;
use std::io::{self, Read, Write};

use crate::record::{RECORD_BYTES, Record, RecordError};

/// The header's size in bytes.
pub const HEADER_BYTES: usize = 16;

const MAGIC: &[u8; 8] = b"TRNYDATA";
const VERSION: u16 = 1;

/// The header of a data file.
pub fn header() -> [u8; HEADER_BYTES] {
    let mut out = [0; HEADER_BYTES];
    out[0..8].copy_from_slice(MAGIC);
    out[8..10].copy_from_slice(&VERSION.to_le_bytes());
    out[10..12].copy_from_slice(&(RECORD_BYTES as u16).to_le_bytes());
    out
}

/// Writes the header of a data file.
///
/// # Errors
/// The writer's.
pub fn write_header(out: &mut impl Write) -> io::Result<()> {
    out.write_all(&header())
}

/// What is wrong with a data file, and where.
#[derive(Debug)]
pub enum FileError {
    /// Reading failed.
    Io(io::Error),
    /// Not a data file of this version.
    Header(String),
    /// The file ends inside a record.
    Truncated {
        /// The record (counted from 0).
        record: u64,
        /// Its bytes present.
        bytes: usize,
    },
    /// A record that is not valid.
    Record {
        /// The record (counted from 0).
        record: u64,
        /// Its field at fault.
        error: RecordError,
    },
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Io(e) => write!(f, "{e}"),
            FileError::Header(why) => write!(f, "not a tourney data file: {why}"),
            FileError::Truncated { record, bytes } => write!(
                f,
                "record {record}: the file ends after {bytes} of its {RECORD_BYTES} bytes"
            ),
            FileError::Record { record, error } => write!(f, "record {record}: {error}"),
        }
    }
}

impl std::error::Error for FileError {}

/// Checks a data file's header.
///
/// # Errors
/// The header is not a version-1 data file's.
pub fn check_header(bytes: &[u8; HEADER_BYTES]) -> Result<(), FileError> {
    if &bytes[0..8] != MAGIC {
        return Err(FileError::Header("it does not start with TRNYDATA".into()));
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    let size = u16::from_le_bytes([bytes[10], bytes[11]]);
    if version != VERSION || usize::from(size) != RECORD_BYTES {
        return Err(FileError::Header(format!(
            "version {version} with {size}-byte records (this build reads version {VERSION}, {RECORD_BYTES} bytes)"
        )));
    }
    Ok(())
}

/// Fills `buf` as far as the reader goes; the bytes read.
fn fill(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads a data file (header, then records), calling `each` with every record in order;
/// the records read.
///
/// # Errors
/// The header, a truncated or invalid record (by number), or reading; `each`'s own error
/// stops the reading and is returned as [`FileError::Io`].
pub fn read_records(
    mut input: impl Read,
    mut each: impl FnMut(Record) -> io::Result<()>,
) -> Result<u64, FileError> {
    let mut head = [0; HEADER_BYTES];
    let got = fill(&mut input, &mut head).map_err(FileError::Io)?;
    if got < HEADER_BYTES {
        return Err(FileError::Header(format!(
            "{got} bytes, shorter than the {HEADER_BYTES}-byte header"
        )));
    }
    check_header(&head)?;
    let mut buf = [0; RECORD_BYTES];
    let mut record = 0;
    loop {
        match fill(&mut input, &mut buf).map_err(FileError::Io)? {
            0 => return Ok(record),
            RECORD_BYTES => {}
            bytes => return Err(FileError::Truncated { record, bytes }),
        }
        let decoded = Record::decode(&buf).map_err(|error| FileError::Record { record, error })?;
        each(decoded).map_err(FileError::Io)?;
        record += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::MoverResult;
    use tourney_rules::{Loa, Position};

    fn file_of(records: &[Record]) -> Vec<u8> {
        let mut out = Vec::new();
        write_header(&mut out).unwrap();
        for r in records {
            out.extend_from_slice(&r.encode());
        }
        out
    }

    #[test]
    fn a_file_reads_back_its_records_in_order() {
        let records: Vec<Record> = (0..5)
            .map(|i| Record::of(&Loa::start(), MoverResult::Win, i, i as u16, i as u64))
            .collect();
        let bytes = file_of(&records);
        assert_eq!(bytes.len(), HEADER_BYTES + 5 * RECORD_BYTES);
        let mut back = Vec::new();
        let n = read_records(&bytes[..], |r| {
            back.push(r);
            Ok(())
        })
        .unwrap();
        assert_eq!((n, back), (5, records));
    }

    #[test]
    fn bad_files_say_where() {
        let record = Record::of(&Loa::start(), MoverResult::Draw, 0, 0, 0);
        let bytes = file_of(&[record, record]);
        let err = read_records(&bytes[..bytes.len() - 3], |_| Ok(())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "record 1: the file ends after 37 of its 40 bytes"
        );
        let mut bad = bytes.clone();
        bad[HEADER_BYTES + RECORD_BYTES + 27] = 9;
        let err = read_records(&bad[..], |_| Ok(())).unwrap_err();
        assert_eq!(err.to_string(), "record 1: result: 9 is not 0, 1 or 2");
        let mut other = bytes.clone();
        other[8] = 2;
        assert!(matches!(
            read_records(&other[..], |_| Ok(())),
            Err(FileError::Header(_))
        ));
        assert!(matches!(
            read_records(&b"TRNY"[..], |_| Ok(())),
            Err(FileError::Header(_))
        ));
    }
}
