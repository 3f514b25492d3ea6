//! The Admin service's exports: a tournament's games streamed page by page, and its
//! report rendered.

use std::sync::Arc;

use tokio_stream::wrappers::ReceiverStream;
use tonic::Status as GrpcStatus;
use tourney_proto::v1 as pb;

use crate::api::dashboard::{TOURNAMENT_PAGE, tournament_link};
use crate::state::Coordinator;

/// The longest address template a report request may give for its links.
pub const MAX_LINK_TEMPLATE: usize = 1024;

/// A tournament's games, read page by page on a blocking thread, at most a few pages
/// ahead of the client.
pub(super) fn export(
    coordinator: &Arc<Coordinator>,
    r: pb::ExportRequest,
) -> Result<ReceiverStream<Result<pb::ExportChunk, GrpcStatus>>, GrpcStatus> {
    let id = r.id;
    if coordinator.status(id).is_none() {
        return Err(GrpcStatus::not_found(format!("no tournament {id}")));
    }
    let filter = crate::ExportFilter {
        pairs: (r.from_pair.is_some() || r.to_pair.is_some())
            .then(|| (r.from_pair.unwrap_or(0), r.to_pair.unwrap_or(u64::MAX))),
        engine: (!r.engine.is_empty()).then_some(r.engine),
        since_ms: r.since_ms,
    };
    let (pages, stream) = tokio::sync::mpsc::channel(4);
    let c = Arc::clone(coordinator);
    tokio::task::spawn_blocking(move || {
        let mut from = 0;
        loop {
            let (chunk, next) = match c.export_page(id, &filter, from) {
                Ok((lines, next)) => (Ok(pb::ExportChunk { lines }), next),
                Err(e) => (Err(GrpcStatus::from(e)), None),
            };
            let more = next.is_some() && chunk.is_ok();
            // A page the filters emptied is not sent, unless it is the last.
            let skip = more && chunk.as_ref().is_ok_and(|c| c.lines.is_empty());
            if !skip && pages.blocking_send(chunk).is_err() {
                return;
            }
            if !more {
                return;
            }
            from = next.unwrap_or_default();
        }
    });
    Ok(ReceiverStream::new(stream))
}

/// A tournament's report rendered as text, JSON, CSV or HTML (its links by the
/// request's template, or the dashboard's pages).
pub(super) fn get_report(
    coordinator: &Coordinator,
    request: pb::GetReportRequest,
) -> Result<pb::GetReportResponse, GrpcStatus> {
    let pb::GetReportRequest {
        id,
        format,
        tournament_link: link_template,
    } = request;
    if !matches!(format.as_str(), "text" | "json" | "csv" | "html") {
        return Err(GrpcStatus::invalid_argument(format!(
            "format '{format}': expected text, json, csv or html"
        )));
    }
    if link_template.len() > MAX_LINK_TEMPLATE
        || !(link_template.is_empty() || link_template.contains("{id}"))
    {
        return Err(GrpcStatus::invalid_argument(format!(
            "tournament_link: expected an address with {{id}} in it, of at most \
             {MAX_LINK_TEMPLATE} bytes (got {} bytes)",
            link_template.len()
        )));
    }
    let (_, report) = coordinator
        .report_with_timeline(id)
        .ok_or_else(|| GrpcStatus::not_found(format!("no tournament {id}")))?;
    let content = match format.as_str() {
        "text" => report.text(),
        "csv" => report.csv(),
        "html" => {
            let template = match link_template.as_str() {
                "" => TOURNAMENT_PAGE,
                given => given,
            };
            report.html(|t| Some(tournament_link(template, t)))
        }
        _ => {
            serde_json::to_string_pretty(&report)
                .map_err(|e| GrpcStatus::internal(e.to_string()))?
                + "\n"
        }
    };
    Ok(pb::GetReportResponse { content })
}
