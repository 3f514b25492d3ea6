//! A worker's report taken whole: each pair result checked ([`Coordinator::check_reported`])
//! or refused ([`Coordinator::refused`]), its failures and engine checks noted, and the
//! fresh pairs committed ([`Coordinator::report`]). The Worker service reads the report off
//! the wire (its size claims, the shared budget, the games decompressed) and hands it here
//! as a [`Report`].

use std::sync::Arc;

use crate::scheduler::{LeaseId, ReportAck, TournamentId};
use crate::state::Coordinator;
use crate::types::{CoordinatorError, EngineCheck, Finished, Refusal, Reported, Unplayable};

/// The most engine checks one report may carry (more are ignored).
const MAX_CHECKS: usize = 64;

/// A worker's report, read off the wire: what it finished, what it could not play, and
/// what it measured of engines.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The pairs it finished.
    pub results: Vec<ReportedResult>,
    /// The pairs it could not play.
    pub failures: Vec<Failure>,
    /// What it measured of the engines it plays (at most 64 are taken).
    pub checks: Vec<EngineCheck>,
}

/// A finished pair as a report carries it, not yet checked.
#[derive(Debug, Clone)]
pub struct ReportedResult {
    /// The tournament.
    pub tournament: TournamentId,
    /// The pair.
    pub pair: u64,
    /// The lease it was played under.
    pub lease: LeaseId,
    /// Half-points of the pairing's first engine in each game, as the worker says (two,
    /// or the result is refused).
    pub half_points: Vec<u32>,
    /// Both games' records, a JSON array (`None`: they could not be read off the wire
    /// within [`tourney_proto::MAX_GAMES_JSON`], and the result is refused).
    pub games_json: Option<String>,
    /// The ticket of the pair's job.
    pub ticket: String,
}

/// A pair a worker could not play, as a report carries it.
#[derive(Debug, Clone, Default)]
pub struct Failure {
    /// The tournament.
    pub tournament: TournamentId,
    /// The pair.
    pub pair: u64,
    /// The lease it was handed out under.
    pub lease: LeaseId,
    /// The engine at fault (empty: the pair as a whole).
    pub engine: String,
    /// No worker can play it (its build failed).
    pub engine_fault: bool,
    /// Why, briefly.
    pub reason: String,
    /// The end of a failed build's output.
    pub log: String,
}

impl Coordinator {
    /// Takes `worker`'s `report`: each pair result checked (a repeat acknowledged as one),
    /// each refused one noted ([`Coordinator::refused`]); failures of pairs it holds noted
    /// ([`Coordinator::engine_failed`]), others ignored; checks of engines it plays noted;
    /// then the checked pairs committed and recorded ([`Coordinator::report`]).
    ///
    /// # Errors
    /// The store failed (nothing was acknowledged), or the coordinator is stopping.
    pub async fn take_report(
        self: &Arc<Self>,
        worker: &str,
        report: Report,
    ) -> Result<ReportAck, CoordinatorError> {
        let Report {
            results,
            failures,
            checks,
        } = report;
        // Replaying the games (and searching a datagen sample again) is work for a
        // blocking thread, not for the runtime's.
        let (finished, malformed, repeated) = {
            let (c, worker) = (Arc::clone(self), worker.to_string());
            match tokio::task::spawn_blocking(move || c.check_results(&worker, results)).await {
                Ok(checked) => checked,
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(_) => return Err(CoordinatorError::Closed),
            }
        };
        for failure in &failures {
            // A failure pauses only what the reporting registration holds: one of a lease
            // it no longer holds (lost in a restart, expired) is past, and ignored.
            if !self.holds(worker, failure.lease, failure.tournament, failure.pair) {
                tracing::info!(
                    %worker,
                    tournament = failure.tournament,
                    pair = failure.pair,
                    reason = %failure.reason,
                    "failure of a pair no longer held: ignored"
                );
                continue;
            }
            let unplayable = Unplayable {
                engine: &failure.engine,
                engine_fault: failure.engine_fault,
                reason: &failure.reason,
                log: &failure.log,
            };
            (self.engine_failed(worker, failure.tournament, failure.pair, unplayable)).await?;
        }
        // Checks of engines the worker plays in a tournament it holds pairs of.
        for check in checks.into_iter().take(MAX_CHECKS) {
            if self.plays_in(worker, check.tournament) {
                self.engine_checked(worker, check).await?;
            }
        }
        let ack = self.report(worker, finished).await?;
        Ok(ReportAck {
            accepted: ack.accepted,
            duplicates: ack.duplicates + repeated,
            rejected: ack.rejected + malformed,
        })
    }

    /// Checks a report's pair results ([`Coordinator::check_reported`]), noting each
    /// refused one: the pairs to commit, how many were refused and how many were repeats.
    fn check_results(
        &self,
        worker: &str,
        results: Vec<ReportedResult>,
    ) -> (Vec<Finished>, u32, u32) {
        let mut finished = Vec::with_capacity(results.len());
        let (mut malformed, mut repeated) = (0, 0);
        for result in results {
            // A repeat (its acknowledgement was lost, say) is acknowledged as one, unchecked.
            if self.is_done(result.tournament, result.pair) {
                repeated += 1;
                continue;
            }
            let checked = match (result.games_json, result.half_points.as_slice()) {
                (Some(games_json), &[h0, h1]) => self.check_reported(
                    worker,
                    Reported {
                        tournament: result.tournament,
                        pair: result.pair,
                        lease: result.lease,
                        half_points: [h0, h1],
                        games_json,
                        ticket: result.ticket,
                    },
                ),
                _ => Err(Refusal::Records(format!(
                    "not decodable within {} MiB a pair, or not two half-points",
                    tourney_proto::MAX_GAMES_JSON >> 20,
                ))),
            };
            match checked {
                Ok(pair) => finished.push(pair),
                Err(refusal) => {
                    malformed += 1;
                    self.refused(
                        worker,
                        result.tournament,
                        result.pair,
                        result.lease,
                        &refusal,
                    );
                }
            }
        }
        (finished, malformed, repeated)
    }
}
