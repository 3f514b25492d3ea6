//! Reporting finished results: a report's part cut from the results not yet
//! acknowledged, sent in the background, and the results of a report that failed kept to
//! send again.

use std::time::Duration;

use tokio::time::Instant;
use tourney_proto::v1 as pb;

use super::Worker;
use crate::desk::Outcome;

/// How long a report that failed waits before it is sent again.
const REPORT_RETRY: Duration = Duration::from_secs(1);

/// The smallest part a report is split into (a pair's games alone can take more: it goes
/// alone).
const MIN_PART_BYTES: usize = 256 << 10;

/// The most results one report carries, whatever their size.
pub(super) const MAX_PART_RESULTS: usize = 4096;

/// A report that failed: its status code, the wait the coordinator asked for, and the
/// results it carried (sent again).
pub(super) type FailedReport = (tonic::Code, Option<Duration>, Vec<Outcome>);

/// Takes the first results of `unreported` that fit in `bytes` decompressed (at least
/// one), at most [`MAX_PART_RESULTS`]: one report's part.
pub(super) fn take_part(unreported: &mut Vec<Outcome>, bytes: usize) -> Vec<Outcome> {
    let mut total = 0usize;
    let mut n = 0;
    for outcome in unreported.iter() {
        let size = match outcome {
            Outcome::Played(r) => r.games_size().unwrap_or(0),
            Outcome::Failed(f) => f.reason.len(),
            Outcome::Checked(_) => 0,
        };
        if n > 0 && (total.saturating_add(size) > bytes || n == MAX_PART_RESULTS) {
            break;
        }
        total = total.saturating_add(size);
        n += 1;
    }
    unreported.drain(..n).collect()
}

impl Worker {
    /// Takes the outcome of a report that ended while the loop did not wait for it (no
    /// session to wait with): a failed one's results are kept to send again.
    pub(super) async fn reap_report(&mut self) {
        if let Some(task) = self.report_task.take_if(|t| t.is_finished())
            && let Ok(Err(failed)) = task.await
        {
            self.report_failed(failed);
        }
    }

    /// Sends what is finished, in the background: a report waits for the coordinator's
    /// durable commit, and nothing else should wait with it. Reports go at most every
    /// the coordinator's report cadence, so fast games share RPCs and commits.
    pub(super) fn report(&mut self) {
        let Some(s) = &self.session else {
            return;
        };
        if self.report_task.is_some() || self.unreported.is_empty() {
            return;
        }
        self.next_report = Instant::now() + s.report_every;
        let batch = take_part(&mut self.unreported, self.part_bytes);
        let mut client = s.client.clone();
        let worker_id = s.worker_id.clone();
        let rejected = self.metrics.results_rejected.clone();
        let unreported = self.metrics.results_unreported.clone();
        self.report_task = Some(tokio::spawn(async move {
            let mut request = pb::ReportRequest {
                worker_id,
                ..Default::default()
            };
            for outcome in &batch {
                match outcome {
                    Outcome::Played(r) => request.results.push(r.clone()),
                    Outcome::Failed(f) => request.failures.push(f.clone()),
                    Outcome::Checked(c) => request.checks.push(c.clone()),
                }
            }
            match client.report(request).await {
                Ok(reply) => {
                    unreported.sub(batch.len() as i64);
                    let reply = reply.into_inner();
                    if reply.rejected > 0 {
                        // Not sent again: the coordinator said why in its log, and offers
                        // the pairs to other workers.
                        rejected.inc_by(u64::from(reply.rejected));
                        tracing::warn!(
                            rejected = reply.rejected,
                            accepted = reply.accepted,
                            "the coordinator refused reported results (its log says why)"
                        );
                    }
                    Ok(())
                }
                Err(e) => Err((e.code(), tourney_proto::retry_pushback(&e), batch)),
            }
        }));
    }

    /// A report that failed: its results are kept and sent again a little later (first,
    /// in order); one turned away whole for its size goes again in smaller parts. The
    /// session stays (a coordinator whose store fails answers, and takes the results once
    /// it recovers; a lost connection shows in the next heartbeat), unless the report was
    /// refused for it: a coordinator that restarted knows no earlier registration, so the
    /// worker registers again (which says whether the token itself is refused).
    pub(super) fn report_failed(&mut self, (code, pushback, batch): FailedReport) {
        if code == tonic::Code::Unauthenticated {
            self.metrics.reconnects.inc();
            self.session = None;
        }
        if code == tonic::Code::ResourceExhausted && pushback == Some(Duration::ZERO) {
            self.part_bytes = (self.part_bytes / 2).max(MIN_PART_BYTES);
        }
        tracing::warn!(%code, pairs = batch.len(), "report failed: sent again later");
        self.unreported.splice(0..0, batch);
        self.next_report = Instant::now() + pushback.unwrap_or(REPORT_RETRY);
    }
}
