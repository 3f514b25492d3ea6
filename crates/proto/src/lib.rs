//! The coordinator's gRPC API, package `tourney.v1` (`proto/tourney/v1/tourney.proto`),
//! generated at build time without a system `protoc`, and [`convert`]: the conversions
//! between its messages and the model's types.

pub mod convert;

/// The generated messages, clients and servers.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod v1 {
    tonic::include_proto!("tourney.v1");

    /// The encoded descriptor set, for gRPC reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("tourney_descriptor");
}

/// The largest outside engine program (artifact) that can be uploaded, stored and fetched.
pub const MAX_ARTIFACT_BYTES: usize = 64 << 20;
/// The most bytes of an artifact one upload or fetch message carries.
pub const ARTIFACT_CHUNK: usize = 1 << 20;
