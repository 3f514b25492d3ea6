//! A coordinator's answers as the commands take them: the reply, or its refusal as the
//! error users see.

use std::sync::{Mutex, PoisonError};

use anyhow::Result;

/// Where the token this process's Admin client sends came from (`--token-file FILE`,
/// `--token`, `TOURNEY_TOKEN`, `TOURNEY_ADMIN_TOKEN`), `Some(None)` when none was given:
/// set as the client connects, said when the coordinator refuses the token.
static TOKEN_GIVEN: Mutex<Option<Option<String>>> = Mutex::new(None);

/// Notes where the Admin client's token came from (`None`: no token), for
/// [`status_error`].
pub(crate) fn token_given(from: Option<String>) {
    *TOKEN_GIVEN.lock().unwrap_or_else(PoisonError::into_inner) = Some(from);
}

/// The error of a token refused, naming where it came from (`given`, as
/// [`token_given`] notes it), or that none was given.
fn token_refused(given: Option<Option<String>>) -> anyhow::Error {
    const HOW: &str = "--token, --token-file or TOURNEY_TOKEN";
    match given {
        Some(Some(from)) => anyhow::anyhow!(
            "the coordinator refused the token from {from} (wrong, revoked or another \
             coordinator's?): give a valid one with {HOW}"
        ),
        Some(None) => {
            anyhow::anyhow!("no token was given and the coordinator needs one: set {HOW}")
        }
        None => anyhow::anyhow!("the coordinator refused the token (set {HOW})"),
    }
}

/// A coordinator's refusal as users see it: its message, or for a token refused, which
/// token it was and how to give one.
pub(crate) fn status_error(e: tonic::Status) -> anyhow::Error {
    match e.code() {
        tonic::Code::Unauthenticated => token_refused(
            TOKEN_GIVEN
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
        ),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_token_is_named_by_where_it_came_from() {
        let said = |given: Option<Option<&str>>| {
            token_refused(given.map(|g| g.map(str::to_string))).to_string()
        };
        let file = said(Some(Some("--token-file bad.tok")));
        assert!(
            file.starts_with("the coordinator refused the token from --token-file bad.tok"),
            "{file}"
        );
        for from in ["--token", "TOURNEY_TOKEN", "TOURNEY_ADMIN_TOKEN"] {
            let text = said(Some(Some(from)));
            assert!(text.contains(&format!("the token from {from} ")), "{text}");
        }
        assert_eq!(
            said(Some(None)),
            "no token was given and the coordinator needs one: set --token, --token-file or \
             TOURNEY_TOKEN"
        );
    }
}
