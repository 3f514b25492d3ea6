//! A coordinator's answers as the commands take them: the reply, or its refusal as the
//! error users see.

use anyhow::Result;

/// A coordinator's refusal as users see it: its message, or for a token refused, how to
/// give one.
pub(crate) fn status_error(e: tonic::Status) -> anyhow::Error {
    match e.code() {
        tonic::Code::Unauthenticated => {
            anyhow::anyhow!("the coordinator refused the token (set --token or TOURNEY_TOKEN)")
        }
        _ => anyhow::anyhow!("{}", e.message()),
    }
}

/// The reply of an Admin call, or its refusal as the error users see.
pub(crate) async fn reply<T>(
    call: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T> {
    call.await
        .map(tonic::Response::into_inner)
        .map_err(status_error)
}
