//! The headers that keep the dashboard's pages from being framed, sniffed or made to run
//! what they did not ship: on every answer of the dashboard, its API and `/artifacts/`.

use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The Content-Security-Policy of the dashboard's pages and answers: its own scripts and
/// style sheet only (nothing inline), its charts as `data:` images, its downloads as
/// `blob:` links, and no framing.
pub const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; \
     frame-ancestors 'none'";

/// The policy of a report page (`/timeline`), whose style sheet is inline and which runs
/// no script.
pub(crate) const REPORT_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Adds the headers every answer of the dashboard carries: [`PAGE_POLICY`] (unless the
/// answer has a policy of its own), no MIME sniffing, no framing, and no referrer to
/// other sites.
pub fn with_safety_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers
        .entry(header::CONTENT_SECURITY_POLICY)
        .or_insert(HeaderValue::from_static(PAGE_POLICY));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}
