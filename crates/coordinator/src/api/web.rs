//! The dashboard's logins and actions: a user logs in with its password (throttled: see
//! [`crate::api::throttle`]) and gets a session cookie (`HttpOnly`, `SameSite=Strict`, `Secure`
//! under TLS, with an expiry); every action is a `POST` that carries the session's CSRF
//! token in the `X-CSRF-Token` header and is checked against the user's role by the same
//! [`Coordinator`] methods as the Admin service.
//!
//! - `POST /api/v1/login` (`{"name", "password"}`), `POST /api/v1/logout`.
//! - `GET /api/v1/me`: who is logged in, its role and the CSRF token (401 when nobody).
//! - `POST /api/v1/tournaments/{id}/approve|cancel|resume`, and `.../modify` with
//!   `{"priority": N, "weight": W}` (either or both).
//! - `POST /api/v1/tournaments` (`{"file", "toml"}`): a tournament file submitted;
//!   `GET /api/v1/tournaments/{id}/file`: a test's file, to clone it (users and above).
//! - `POST /api/v1/tournaments/{id}/annotate` (`{"note", "links"}`): its note and links.
//! - `GET /api/v1/log?before=N&limit=N`: the events log (any logged-in user).
//! - `GET /api/v1/tournaments/{id}/build-log`: the end of the failed build's log that
//!   paused a test (its author, approvers and admins).
//! - `/api/v1/account/...`: the user's own tokens and password, and (admins) the users.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Request};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::accounts::{Principal, SESSION_MS};
use crate::api::dashboard::{client_address, query_pairs};
use crate::api::throttle::Throttle;
use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "tourney_session";
/// The header that carries a session's CSRF token.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// The largest login body read.
const MAX_LOGIN_BODY: usize = 4096;

/// The routes, to merge into the dashboard's. `secure`: the server speaks TLS, so the
/// cookie is `Secure`.
pub fn router(coordinator: Arc<Coordinator>, secure: bool) -> axum::Router {
    let throttle = Arc::new(Throttle::new());
    let c = || Arc::clone(&coordinator);
    let (login_c, logout_c, me_c, log_c) = (c(), c(), c(), c());
    let (act_c, submit_c, account_c, file_c) = (c(), c(), c(), c());
    let build_log_c = c();
    axum::Router::new()
        .route(
            "/api/v1/login",
            post(move |request: Request| login(login_c, Arc::clone(&throttle), secure, request)),
        )
        .route(
            "/api/v1/logout",
            post(move |headers: HeaderMap| logout(logout_c, secure, headers)),
        )
        .route(
            "/api/v1/me",
            get(move |headers: HeaderMap| async move {
                match me_c.session_principal(&cookie(&headers).unwrap_or_default()) {
                    Some((who, csrf)) => json(&serde_json::json!({
                        "name": who.name, "role": who.role, "csrf": csrf,
                    })),
                    None => refuse(StatusCode::UNAUTHORIZED, "not logged in"),
                }
            }),
        )
        .route(
            "/api/v1/log",
            get(move |headers: HeaderMap, request: Request| async move {
                if let Err(refused) = signed_in(&log_c, &headers, false) {
                    return refused;
                }
                let pairs = query_pairs(request.uri().query().unwrap_or_default());
                let number = |key: &str| {
                    (pairs.iter())
                        .find(|(k, _)| k == key)
                        .and_then(|(_, v)| v.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                let limit = if number("limit") == 0 {
                    100
                } else {
                    number("limit")
                };
                match log_c.events(number("before"), limit as usize) {
                    Ok(events) => json(&events),
                    Err(e) => failed(e),
                }
            }),
        )
        .route(
            "/api/v1/account/{*what}",
            axum::routing::any(move |Path(what): Path<String>, request: Request| {
                account(Arc::clone(&account_c), what, request)
            }),
        )
        .route(
            "/api/v1/tournaments/{id}/file",
            get(move |Path(id): Path<u64>, headers: HeaderMap| async move {
                let by = match signed_in(&file_c, &headers, false) {
                    Ok(by) => by,
                    Err(refused) => return refused,
                };
                if let Err(e) = by.require(tourney_model::account::Role::User) {
                    return failed(e);
                }
                match file_c.file_of(id) {
                    Some((file, toml)) => {
                        // Its settings as parsed, for the page's form (absent if it no
                        // longer parses, as after a change of the file's keys).
                        let config =
                            tourney_model::tournament::TournamentConfig::parse(&toml, &file)
                                .ok()
                                .and_then(|c| serde_json::to_value(c).ok());
                        json(&serde_json::json!({ "file": file, "toml": toml, "config": config }))
                    }
                    None => refuse(StatusCode::NOT_FOUND, &format!("no tournament {id}")),
                }
            }),
        )
        .route(
            "/api/v1/tournaments/{id}/build-log",
            get(move |Path(id): Path<u64>, headers: HeaderMap| async move {
                let who = match signed_in(&build_log_c, &headers, false) {
                    Ok(who) => who,
                    Err(refused) => return refused,
                };
                match build_log_c.paused_log(&who, id) {
                    Some(log) => {
                        ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], log).into_response()
                    }
                    None => refuse(
                        StatusCode::NOT_FOUND,
                        "no build log of this test that you may read (its author, approvers \
                         and admins may, while a failed build keeps it paused)",
                    ),
                }
            }),
        )
        .route(
            "/api/v1/tournaments",
            post(move |headers: HeaderMap, request: Request| {
                submit(Arc::clone(&submit_c), headers, request)
            }),
        )
        .route(
            "/api/v1/tournaments/{id}/{action}",
            post(
                move |Path((id, action)): Path<(u64, String)>, headers: HeaderMap, body: Bytes| {
                    act(Arc::clone(&act_c), id, action, headers, body)
                },
            ),
        )
}

#[derive(Deserialize)]
struct Login {
    name: String,
    password: String,
}

async fn login(
    coordinator: Arc<Coordinator>,
    throttle: Arc<Throttle>,
    secure: bool,
    request: Request,
) -> Response {
    let address = client_address(&request);
    let body = match axum::body::to_bytes(request.into_body(), MAX_LOGIN_BODY).await {
        Ok(body) => body,
        Err(_) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the login is too long"),
    };
    let Ok(Login { name, password }) = serde_json::from_slice::<Login>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "expected {\"name\": ..., \"password\": ...}",
        );
    };
    // Counted as failed before the hash, and given back if it succeeds.
    let (attempt, hashing) = match throttle.reserve(&name, &address.to_string()) {
        Ok(reserved) => reserved,
        Err(wait) => {
            let mut response = refuse(
                StatusCode::TOO_MANY_REQUESTS,
                "too many logins: try again later",
            );
            if let Ok(value) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            return response;
        }
    };
    let checked = tokio::task::spawn_blocking(move || {
        let _hashing = hashing;
        let result = coordinator.login(&name, &password);
        // The hash's 19 MiB go back to the system now, not when this thread retires.
        crate::state::return_free_memory();
        (result, name)
    })
    .await;
    let Ok((result, name)) = checked else {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, "the login failed");
    };
    match result {
        Ok(Some((session, csrf))) => {
            throttle.succeeded(attempt);
            let mut response = json(&serde_json::json!({ "name": name, "csrf": csrf }));
            set_cookie(&mut response, &session, SESSION_MS / 1000, secure);
            response
        }
        Ok(None) => {
            tracing::info!(%address, "a login failed");
            refuse(StatusCode::UNAUTHORIZED, "wrong name or password")
        }
        Err(e) => failed(e),
    }
}

async fn logout(coordinator: Arc<Coordinator>, secure: bool, headers: HeaderMap) -> Response {
    if let Err(refused) = signed_in(&coordinator, &headers, true) {
        return refused;
    }
    let cookie = cookie(&headers).unwrap_or_default();
    if let Err(e) = coordinator.logout(&cookie) {
        return failed(e);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    set_cookie(&mut response, "", 0, secure);
    response
}

/// A tournament file submitted from the page.
#[derive(Deserialize)]
struct Submission {
    /// The file's name, as the CLI would give it (shown in errors).
    #[serde(default)]
    file: String,
    /// The file's text.
    toml: String,
    /// The text of the openings file the tournament names (`openings.file`), if any.
    #[serde(default)]
    openings: String,
}

/// The largest submission taken from the page: the tournament file and its openings.
pub const MAX_SUBMISSION: usize = 1 << 20;

/// A tournament file pasted or uploaded on the page, submitted by the logged-in user: the
/// same checks and messages as `tourney submit`.
async fn submit(coordinator: Arc<Coordinator>, headers: HeaderMap, request: Request) -> Response {
    let by = match signed_in(&coordinator, &headers, true) {
        Ok(by) => by,
        Err(refused) => return refused,
    };
    let Ok(body) = axum::body::to_bytes(request.into_body(), MAX_SUBMISSION).await else {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the file and its openings are larger than 1 MiB",
        );
    };
    let Ok(Submission {
        file,
        toml,
        openings,
    }) = serde_json::from_slice::<Submission>(&body)
    else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "expected {\"file\": NAME, \"toml\": TEXT, \"openings\": TEXT}",
        );
    };
    let file = if file.is_empty() {
        "pasted.toml".to_string()
    } else {
        file
    };
    let submitted = coordinator
        .submit_as(
            &by,
            &toml,
            &file,
            &openings,
            Default::default(),
            Default::default(),
        )
        .await;
    match submitted {
        Ok(id) => {
            let state = coordinator.state(id).map(|s| s.name());
            json(&serde_json::json!({ "id": id, "state": state }))
        }
        Err(e) => failed(e),
    }
}

/// What an account request may carry (each route reads what it needs).
#[derive(Deserialize, Default)]
#[serde(default)]
struct AccountForm {
    name: String,
    role: String,
    password: String,
    label: String,
    message: String,
    version: String,
}

/// The largest account request read.
const MAX_ACCOUNT_BODY: usize = 4096;

/// Users and tokens from the page, as the `tourney user` commands do them:
///
/// - `GET tokens`, `POST tokens` (`{"label"}`: the new token, shown once),
///   `POST tokens/{id}/revoke`: the logged-in user's own tokens;
/// - `POST password` (`{"password"}`): its own password;
/// - `GET users`, `POST users` (`{"name", "role", "password"}`), `POST users/{name}/role`
///   (`{"role"}`), `POST users/{name}/remove`, `POST machines/{host}/block`
///   (`{"message"}`), `POST machines/{host}/unblock`, `POST min-worker-version`
///   (`{"version"}`): admins only.
async fn account(coordinator: Arc<Coordinator>, what: String, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let changes = parts.method == axum::http::Method::POST;
    let by = match signed_in(&coordinator, &parts.headers, changes) {
        Ok(by) => by,
        Err(refused) => return refused,
    };
    let Ok(body) = axum::body::to_bytes(body, MAX_ACCOUNT_BODY).await else {
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, "the request is too long");
    };
    let form: AccountForm = if body.is_empty() {
        AccountForm::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(form) => form,
            Err(e) => return refuse(StatusCode::BAD_REQUEST, &format!("the request: {e}")),
        }
    };
    // Hashing a password takes a moment: off the async threads.
    let call = tokio::task::spawn_blocking({
        let what = what.clone();
        move || account_call(&coordinator, &by, changes, &what, &form)
    })
    .await;
    let Ok(result) = call else {
        return refuse(StatusCode::INTERNAL_SERVER_ERROR, "the request failed");
    };
    match result {
        Ok(value) => json(&value),
        Err(CoordinatorError::Invalid(why)) if why.starts_with("no account route") => {
            refuse(StatusCode::NOT_FOUND, &why)
        }
        Err(e) => failed(e),
    }
}

/// The account request `what` (see [`account`]) of `by`.
fn account_call(
    c: &Coordinator,
    by: &Principal,
    changes: bool,
    what: &str,
    form: &AccountForm,
) -> Result<serde_json::Value, CoordinatorError> {
    let role = |text: &str| {
        text.parse::<tourney_model::account::Role>()
            .map_err(CoordinatorError::Invalid)
    };
    let path: Vec<&str> = what.split('/').collect();
    match (changes, path.as_slice()) {
        (false, ["tokens"]) => c.tokens(by, &by.name).map(|t| serde_json::json!(t)),
        (true, ["tokens"]) => c
            .create_token(by, &by.name, &form.label)
            .map(|(token, id)| serde_json::json!({ "token": token, "id": id })),
        (true, ["tokens", id, "revoke"]) => c
            .revoke_token(by, &by.name, id)
            .map(|()| serde_json::json!({ "done": "revoked" })),
        (true, ["password"]) => c
            .set_user(by, &by.name, None, Some(&form.password))
            .map(|()| serde_json::json!({ "done": "changed" })),
        (false, ["users"]) => c.users(by).map(|users| {
            let users: Vec<_> = (users.into_iter())
                .map(|(u, tokens)| {
                    serde_json::json!({
                        "name": u.name, "role": u.role, "created_ms": u.created_ms,
                        "has_password": !u.password_hash.is_empty(), "tokens": tokens,
                    })
                })
                .collect();
            serde_json::json!(users)
        }),
        (true, ["users"]) => role(&form.role)
            .and_then(|r| c.add_user(by, &form.name, r, &form.password))
            .map(|()| serde_json::json!({ "done": "added" })),
        (true, ["users", name, "role"]) => role(&form.role)
            .and_then(|r| c.set_user(by, name, Some(r), None))
            .map(|()| serde_json::json!({ "done": "changed" })),
        (true, ["users", name, "remove"]) => c
            .remove_user(by, name)
            .map(|()| serde_json::json!({ "done": "removed" })),
        (true, ["machines", host, "block"]) => c
            .block_host(by, host, &form.message)
            .map(|()| serde_json::json!({ "done": "blocked" })),
        (true, ["machines", host, "unblock"]) => c
            .block_host(by, host, "")
            .map(|()| serde_json::json!({ "done": "unblocked" })),
        (true, ["min-worker-version"]) => c
            .set_min_worker_version(by, &form.version)
            .map(|()| serde_json::json!({ "done": "set" })),
        _ => Err(CoordinatorError::Invalid(format!(
            "no account route '{what}'"
        ))),
    }
}

/// A test's note and links (`annotate`).
#[derive(Deserialize)]
struct Annotation {
    #[serde(default)]
    note: String,
    #[serde(default)]
    links: Vec<String>,
}

/// What `modify` changes: any of them.
#[derive(Deserialize)]
struct Changes {
    priority: Option<i32>,
    weight: Option<f64>,
    #[serde(alias = "max_pairs")]
    pair_budget: Option<u64>,
}

/// A tournament action of the logged-in user (`modify` takes [`Changes`] as its body).
async fn act(
    coordinator: Arc<Coordinator>,
    id: u64,
    action: String,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let by = match signed_in(&coordinator, &headers, true) {
        Ok(by) => by,
        Err(refused) => return refused,
    };
    if coordinator.state(id).is_none() {
        return refuse(StatusCode::NOT_FOUND, &format!("no tournament {id}"));
    }
    let (done, past) = match action.as_str() {
        "approve" => (coordinator.approve(&by, id).await, "approved"),
        "cancel" => (coordinator.cancel_as(&by, id).await, "cancelled"),
        "resume" => (coordinator.resume_as(&by, id).await, "resumed"),
        "modify" => {
            let Ok(c) = serde_json::from_slice::<Changes>(&body) else {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "expected {\"priority\": N, \"weight\": W, \"pair_budget\": N} (any of them)",
                );
            };
            let change = crate::tournaments::actions::Modification {
                priority: c.priority,
                weight: c.weight,
                pair_budget: c.pair_budget,
            };
            (coordinator.modify_as(&by, id, change).await, "modified")
        }
        "delete" => (coordinator.hide_as(&by, id, true).await, "deleted"),
        "restore" => (coordinator.hide_as(&by, id, false).await, "restored"),
        "annotate" => {
            let Ok(a) = serde_json::from_slice::<Annotation>(&body) else {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    "expected {\"note\": TEXT, \"links\": [URL, ...]}",
                );
            };
            (
                coordinator.annotate_as(&by, id, &a.note, &a.links).await,
                "annotated",
            )
        }
        _ => return refuse(StatusCode::NOT_FOUND, "no such action"),
    };
    match done {
        Ok(true) => json(&serde_json::json!({ "done": past })),
        Ok(false) => refuse(
            StatusCode::CONFLICT,
            &format!("tournament {id} cannot be {past} in its state"),
        ),
        Err(e) => failed(e),
    }
}

/// The logged-in user of a request; with `changes`, its CSRF token must be in the
/// [`CSRF_HEADER`] header too. A refusal otherwise: 401 (nobody logged in), 403 (no or a
/// wrong CSRF token).
#[allow(clippy::result_large_err)]
fn signed_in(
    coordinator: &Coordinator,
    headers: &HeaderMap,
    changes: bool,
) -> Result<Principal, Response> {
    let Some((who, csrf)) = cookie(headers).and_then(|c| coordinator.session_principal(&c)) else {
        return Err(refuse(StatusCode::UNAUTHORIZED, "not logged in"));
    };
    let sent = headers.get(CSRF_HEADER).and_then(|v| v.to_str().ok());
    let same = sent.is_some_and(|s| crate::fleet::same_secret(s.as_bytes(), csrf.as_bytes()));
    if changes && !same {
        return Err(refuse(StatusCode::FORBIDDEN, "missing or wrong CSRF token"));
    }
    Ok(who)
}

/// Whether a request comes from a logged-in user (any role): what the dashboard's data
/// asks for when the coordinator runs with the dashboard login-only.
pub fn signed_in_reader(coordinator: &Coordinator, headers: &HeaderMap) -> bool {
    cookie(headers).is_some_and(|c| coordinator.session_principal(&c).is_some())
}

/// The session cookie's value, if the request has one.
fn cookie(headers: &HeaderMap) -> Option<String> {
    (headers.get_all(header::COOKIE).iter())
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == SESSION_COOKIE).then(|| value.to_string())
        })
}

fn set_cookie(response: &mut Response, value: &str, max_age_s: u64, secure: bool) {
    let secure = if secure { "; Secure" } else { "" };
    let text = format!(
        "{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_s}{secure}"
    );
    if let Ok(value) = HeaderValue::from_str(&text) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
}

fn json<T: serde::Serialize>(value: &T) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        Bytes::from(serde_json::to_vec(value).unwrap_or_default()),
    )
        .into_response()
}

fn refuse(status: StatusCode, why: &str) -> Response {
    let body = serde_json::json!({ "error": why });
    (status, json(&body)).into_response()
}

/// A coordinator error as an answer: refusals say why, failures only that they failed.
fn failed(e: CoordinatorError) -> Response {
    match e {
        CoordinatorError::Forbidden(why) => refuse(StatusCode::FORBIDDEN, &why),
        CoordinatorError::NotFound(why) => refuse(StatusCode::NOT_FOUND, &why),
        CoordinatorError::Invalid(why) => refuse(StatusCode::BAD_REQUEST, &why),
        CoordinatorError::Exhausted(why) => refuse(StatusCode::TOO_MANY_REQUESTS, &why),
        other => {
            tracing::error!(error = %other, "a dashboard action failed");
            refuse(StatusCode::INTERNAL_SERVER_ERROR, "the coordinator failed")
        }
    }
}
