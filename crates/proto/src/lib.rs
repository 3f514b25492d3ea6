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

/// The most bytes an artifact (a program, a network) may have unless a coordinator or
/// worker is told otherwise (`--max-artifact-mib`): 4 GiB, room for the largest networks
/// engines of these games carry. Artifacts are streamed, never held whole in memory.
pub const DEFAULT_MAX_ARTIFACT_BYTES: u64 = 4 << 30;
/// The most bytes of an artifact one upload or fetch message carries.
pub const ARTIFACT_CHUNK: usize = 1 << 20;

/// The most a pair's games may take decompressed.
pub const MAX_GAMES_JSON: usize = 8 << 20;
/// The most a whole report's games may take decompressed: what one report can make the
/// coordinator hold in memory, whatever its compressed size on the wire. The coordinator
/// turns a report over it away whole (RESOURCE_EXHAUSTED, "send it in parts"); workers
/// send theirs in parts of at most [`REPORT_PART_JSON`].
pub const MAX_REPORT_JSON: usize = 64 << 20;
/// The metadata key of a RESOURCE_EXHAUSTED report refusal that says how long to wait
/// before sending the report again, in milliseconds (gRPC's retry pushback): 0 for a
/// report too large, to be sent again at once in smaller parts.
pub const RETRY_PUSHBACK: &str = "grpc-retry-pushback-ms";
/// The most a worker puts in one report, decompressed: well inside [`MAX_REPORT_JSON`].
pub const REPORT_PART_JSON: usize = MAX_REPORT_JSON / 4;

/// The delay a RESOURCE_EXHAUSTED answer asks for in its [`RETRY_PUSHBACK`] metadata;
/// `None` when it names none (or not as a whole number of milliseconds).
pub fn retry_pushback(status: &tonic::Status) -> Option<std::time::Duration> {
    (status.metadata().get(RETRY_PUSHBACK))
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .map(std::time::Duration::from_millis)
}

impl v1::PairResult {
    /// The size its games take decompressed, as its LZ4 block claims it (or the plain
    /// JSON's length): known before anything is allocated. `None`: not an LZ4 block.
    pub fn games_size(&self) -> Option<usize> {
        if self.games_lz4.is_empty() {
            return Some(self.games_json.len());
        }
        Some(lz4_flex::block::uncompressed_size(&self.games_lz4).ok()?.0)
    }
}

impl v1::TournamentStatus {
    /// One line for a log or a chat: the tournament, how it ended, its SPRT or its leader,
    /// its size (what `tourney submit --wait` prints and webhooks send).
    pub fn summary_line(&self) -> String {
        let mut line = format!("Tournament {} ({}): {}", self.id, self.name, self.state);
        if let Some(sprt) = &self.sprt {
            line += &format!(
                ", {} (LLR {:.2} in [{:.2}, {:.2}], elo0 {} elo1 {})",
                sprt.decision, sprt.llr, sprt.lower_bound, sprt.upper_bound, sprt.elo0, sprt.elo1
            );
        } else if !self.takes_verdict.is_empty() {
            line += &format!(", {}", self.takes_verdict);
        } else if let Some(leader) = self.standings.first().filter(|_| self.games > 0) {
            line += &format!(", leader {} {:+.0}", leader.name, leader.elo);
        }
        if !self.paused_reason.is_empty() {
            line += &format!(" ({})", self.paused_reason);
        }
        line + &format!(", {} pairs, {} games", self.pairs_done, self.games)
    }
}
