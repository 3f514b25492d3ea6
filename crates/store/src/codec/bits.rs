//! Readers and writers of bytes and bits, bounded: a damaged record is an error at every cut.

use crate::StoreError;

/// Reads bytes and varints, every read bounded by what is there.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Reader<'a> {
    pub(super) fn byte(&mut self) -> Result<u8, StoreError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| corrupt("a record"))?;
        self.at += 1;
        Ok(b)
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], StoreError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| corrupt("a record"))?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    pub(super) fn varint(&mut self) -> Result<u64, StoreError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(corrupt("a number"))
    }
}

/// Packs values of a few bits each, low bits first.
#[derive(Default)]
pub(super) struct BitWriter {
    pub(super) out: Vec<u8>,
    pub(super) acc: u64,
    pub(super) n: u32,
}

impl BitWriter {
    pub(super) fn put(&mut self, value: u64, bits: u32) {
        self.acc |= value << self.n;
        self.n += bits;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    pub(super) fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// Reads what a [`BitWriter`] packed.
pub(super) struct BitReader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    pub(super) acc: u64,
    pub(super) n: u32,
}

impl<'a> BitReader<'a> {
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        BitReader {
            bytes,
            at: 0,
            acc: 0,
            n: 0,
        }
    }

    pub(super) fn get(&mut self, bits: u32) -> Result<u64, StoreError> {
        while self.n < bits {
            let b = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| corrupt("a moves column"))?;
            self.acc |= u64::from(b) << self.n;
            self.at += 1;
            self.n += 8;
        }
        let v = self.acc & ((1u64 << bits) - 1);
        self.acc >>= bits;
        self.n -= bits;
        Ok(v)
    }
}

pub(super) fn corrupt(what: &str) -> StoreError {
    StoreError::Compression(format!("{what} is corrupt"))
}
