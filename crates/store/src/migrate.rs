//! Migration of stores written by earlier versions (schema 1 and 2): every pair record
//! written again in the compact encoding with its digest, a batch at a time.

use crate::codec::decode as decode_pair;
use crate::{StoreError, Trees, codec, read_u64, write_pairs};

/// Pair records written again per batch while migrating.
pub(crate) const MIGRATION_BATCH: usize = 1000;

/// Writes every pair record not yet in the compact encoding, or without its digest, again
/// (schema 1 and 2 stores); returns how many. A record that does not decode is left as it
/// is, for `verify` to name.
pub(crate) fn migrate(trees: &Trees) -> Result<u64, StoreError> {
    use std::ops::Bound;
    let mut migrated = 0;
    let mut after: Option<sled::IVec> = None;
    loop {
        let range = match &after {
            Some(key) => trees
                .pairs
                .range::<sled::IVec, _>((Bound::Excluded(key.clone()), Bound::Unbounded)),
            None => trees.pairs.iter(),
        };
        let chunk: Vec<(sled::IVec, sled::IVec)> =
            range.take(MIGRATION_BATCH).collect::<Result<_, _>>()?;
        let Some((last, _)) = chunk.last() else {
            break;
        };
        after = Some(last.clone());
        let (mut pairs, mut digests) = (sled::Batch::default(), sled::Batch::default());
        let mut added = std::collections::BTreeMap::new();
        for (key, value) in &chunk {
            let compact = value.first() == Some(&codec::COLUMNAR_TAG);
            if compact && trees.digests.contains_key(key)? {
                continue;
            }
            let Ok((bytes, digest)) = decode_pair(value).and_then(|r| codec::encode(&r)) else {
                continue;
            };
            *added.entry(read_u64(&key[..8.min(key.len())])).or_default() += 1;
            pairs.insert(key, bytes);
            digests.insert(key, digest.encode());
            migrated += 1;
        }
        write_pairs(trees, pairs, digests, &added)?;
    }
    trees.db.flush()?;
    Ok(migrated)
}
