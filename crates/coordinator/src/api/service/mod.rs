//! The gRPC adapters: thin translations between `tourney.v1` messages and the
//! [`Coordinator`], with token checks. Errors become `Status` here and nowhere else.

mod accounts;
mod admin;
mod convert;
mod reports;
mod versions;
mod worker;

pub use admin::AdminService;
pub use reports::MAX_LINK_TEMPLATE;
pub use worker::{SESSION_HEADER, WorkerService};

use tonic::Status as GrpcStatus;

use crate::types::CoordinatorError;

/// The one place where coordinator errors become gRPC statuses: a bad tournament file is
/// INVALID_ARGUMENT with its message; a failed store or commit is logged here and answered
/// INTERNAL (or UNAVAILABLE while stopping) without the details.
impl From<CoordinatorError> for GrpcStatus {
    fn from(e: CoordinatorError) -> Self {
        match e {
            CoordinatorError::Invalid(message) => GrpcStatus::invalid_argument(message),
            CoordinatorError::Exhausted(message) => GrpcStatus::resource_exhausted(message),
            CoordinatorError::Forbidden(message) => GrpcStatus::permission_denied(message),
            CoordinatorError::NotFound(message) => GrpcStatus::not_found(message),
            CoordinatorError::Closed => GrpcStatus::unavailable("the coordinator is stopping"),
            CoordinatorError::Unavailable(why) => {
                GrpcStatus::unavailable(format!("the store is unavailable: {why}"))
            }
            other => {
                tracing::error!(error = %other, "request failed");
                GrpcStatus::internal("the store failed")
            }
        }
    }
}

pub use tourney_proto::{MAX_GAMES_JSON, MAX_REPORT_JSON, RETRY_PUSHBACK};

/// A pair result's games JSON, plain or decompressed (`None`: the compressed form is
/// corrupt, more than [`MAX_GAMES_JSON`], or not UTF-8). The size a compressed block claims
/// is checked before anything is allocated.
pub fn games_json(plain: String, lz4: &[u8]) -> Option<String> {
    if lz4.is_empty() {
        return (plain.len() <= MAX_GAMES_JSON).then_some(plain);
    }
    let (size, block) = lz4_flex::block::uncompressed_size(lz4).ok()?;
    if size > MAX_GAMES_JSON {
        return None;
    }
    String::from_utf8(lz4_flex::block::decompress(block, size).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_proto::v1 as pb;

    #[test]
    fn games_arrive_plain_or_compressed_and_corrupt_or_oversized_ones_are_refused() {
        let json = r#"[{"game":"loa"},{"game":"loa"}]"#;
        let read = |plain: &str, lz4: &[u8]| games_json(plain.into(), lz4);
        assert_eq!(read(json, &[]).as_deref(), Some(json));
        let lz4 = lz4_flex::compress_prepend_size(json.as_bytes());
        assert_eq!(read("", &lz4).as_deref(), Some(json));
        // A truncated block, and a block that claims 4 GiB uncompressed.
        assert_eq!(read("", &lz4[..lz4.len() - 3]), None);
        let mut bomb = lz4.clone();
        bomb[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(read("", &bomb), None);
        assert_eq!(read("", &[1, 0]), None, "no size");
        let not_utf8 = lz4_flex::compress_prepend_size(&[0xff, 0xfe]);
        assert_eq!(read("", &not_utf8), None);
    }

    #[test]
    fn a_reports_size_is_known_before_anything_is_inflated() {
        // 7 MiB of spaces: about 30 KiB on the wire.
        let block = lz4_flex::compress_prepend_size(&vec![b' '; 7 << 20]);
        assert!(block.len() < 64 << 10);
        let result = |lz4: Vec<u8>, plain: &str| pb::PairResult {
            games_lz4: lz4,
            games_json: plain.into(),
            ..Default::default()
        };
        assert_eq!(result(block.clone(), "").games_size(), Some(7 << 20));
        assert_eq!(result(Vec::new(), "[1,2]").games_size(), Some(5));
        assert_eq!(result(vec![1, 0], "").games_size(), None, "no size");
        // A pair's games over the per-pair bound are refused.
        let big = lz4_flex::compress_prepend_size(&vec![b' '; MAX_GAMES_JSON + 1]);
        assert_eq!(games_json(String::new(), &big), None);
        assert_eq!(games_json(" ".repeat(MAX_GAMES_JSON + 1), &[]), None);
    }
}
