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

/// What a tournament's summary line tells, whoever holds the status (a
/// [`v1::TournamentStatus`], the coordinator's status view): one function writes it for all.
#[derive(Debug, Clone, Copy)]
pub struct Summary<'a> {
    /// The tournament's number,
    pub id: u64,
    /// name
    pub name: &'a str,
    /// and state.
    pub state: &'a str,
    /// Its SPRT.
    pub sprt: Option<&'a v1::SprtState>,
    /// A grouped test's verdict (empty for none).
    pub verdict: &'a str,
    /// The leader's name and Elo, once a game is played.
    pub leader: Option<(&'a str, f64)>,
    /// Why it is paused (empty unless it is).
    pub paused_reason: &'a str,
    /// Completed pairs.
    pub pairs: u64,
    /// Completed games.
    pub games: u64,
}

impl Summary<'_> {
    /// One line for a log or a chat: the tournament, how it ended, its SPRT or its leader,
    /// its size (what `tourney submit --wait` prints and webhooks send).
    pub fn line(&self) -> String {
        let mut line = format!("Tournament {} ({}): {}", self.id, self.name, self.state);
        if let Some(sprt) = self.sprt {
            line += &format!(
                ", {} (LLR {:.2} in [{:.2}, {:.2}], elo0 {} elo1 {})",
                sprt.decision, sprt.llr, sprt.lower_bound, sprt.upper_bound, sprt.elo0, sprt.elo1
            );
        } else if !self.verdict.is_empty() {
            line += &format!(", {}", self.verdict);
        } else if let Some((name, elo)) = self.leader {
            line += &format!(", leader {name} {elo:+.0}");
        }
        if !self.paused_reason.is_empty() {
            line += &format!(" ({})", self.paused_reason);
        }
        line + &format!(", {} pairs, {} games", self.pairs, self.games)
    }
}

impl v1::TournamentStatus {
    /// Its [`Summary::line`].
    pub fn summary_line(&self) -> String {
        Summary {
            id: self.id,
            name: &self.name,
            state: &self.state,
            sprt: self.sprt.as_ref(),
            verdict: &self.takes_verdict,
            leader: (self.standings.first())
                .filter(|_| self.games > 0)
                .map(|p| (p.name.as_str(), p.elo)),
            paused_reason: &self.paused_reason,
            pairs: self.pairs_done,
            games: self.games,
        }
        .line()
    }
}
