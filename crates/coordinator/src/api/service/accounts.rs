//! The Admin service's account calls: users, personal tokens, the events log. Rights are
//! checked by the [`Coordinator`]'s methods, the same ones the web pages call.

use tonic::{Request, Response, Status as GrpcStatus};
use tourney_model::account::Role;
use tourney_proto::v1 as pb;

use crate::api::auth::principal;
use crate::state::Coordinator;

/// A role named in a request; INVALID_ARGUMENT naming the roles when it is none.
fn role(text: &str) -> Result<Role, GrpcStatus> {
    text.parse().map_err(GrpcStatus::invalid_argument)
}

/// A user named in a request, or the caller when it names none.
fn user_or_caller<T>(request: &Request<T>, user: &str) -> String {
    if user.is_empty() {
        principal(request).name
    } else {
        user.to_string()
    }
}

pub(super) fn add_user(
    coordinator: &Coordinator,
    request: Request<pb::AddUserRequest>,
) -> Result<Response<pb::AddUserResponse>, GrpcStatus> {
    let by = principal(&request);
    let r = request.into_inner();
    coordinator.add_user(&by, &r.name, role(&r.role)?, &r.password)?;
    Ok(Response::new(pb::AddUserResponse {}))
}

pub(super) fn list_users(
    coordinator: &Coordinator,
    request: &Request<pb::ListUsersRequest>,
) -> Result<Response<pb::ListUsersResponse>, GrpcStatus> {
    let users = (coordinator.users(&principal(request))?.into_iter())
        .map(|(u, tokens)| pb::User {
            has_password: !u.password_hash.is_empty(),
            name: u.name,
            role: u.role.to_string(),
            created_ms: u.created_ms,
            tokens: tokens as u32,
        })
        .collect();
    Ok(Response::new(pb::ListUsersResponse { users }))
}

pub(super) fn set_user(
    coordinator: &Coordinator,
    request: Request<pb::SetUserRequest>,
) -> Result<Response<pb::SetUserResponse>, GrpcStatus> {
    let by = principal(&request);
    let r = request.into_inner();
    let new_role = (!r.role.is_empty()).then(|| role(&r.role)).transpose()?;
    let password = (!r.password.is_empty()).then_some(r.password.as_str());
    if new_role.is_none() && password.is_none() {
        return Err(GrpcStatus::invalid_argument(
            "nothing to change: give a role or a password",
        ));
    }
    coordinator.set_user(&by, &r.name, new_role, password)?;
    Ok(Response::new(pb::SetUserResponse {}))
}

pub(super) fn create_token(
    coordinator: &Coordinator,
    request: Request<pb::CreateTokenRequest>,
) -> Result<Response<pb::CreateTokenResponse>, GrpcStatus> {
    let by = principal(&request);
    let user = user_or_caller(&request, &request.get_ref().user);
    let (token, id) = coordinator.create_token(&by, &user, &request.get_ref().label)?;
    Ok(Response::new(pb::CreateTokenResponse { token, id }))
}

pub(super) fn list_tokens(
    coordinator: &Coordinator,
    request: Request<pb::ListTokensRequest>,
) -> Result<Response<pb::ListTokensResponse>, GrpcStatus> {
    let user = user_or_caller(&request, &request.get_ref().user);
    let tokens = (coordinator.tokens(&principal(&request), &user)?.into_iter())
        .map(|t| pb::ApiToken {
            id: t.id,
            label: t.label,
            created_ms: t.created_ms,
        })
        .collect();
    Ok(Response::new(pb::ListTokensResponse { tokens }))
}

pub(super) fn revoke_token(
    coordinator: &Coordinator,
    request: Request<pb::RevokeTokenRequest>,
) -> Result<Response<pb::RevokeTokenResponse>, GrpcStatus> {
    let user = user_or_caller(&request, &request.get_ref().user);
    coordinator.revoke_token(&principal(&request), &user, &request.get_ref().id)?;
    Ok(Response::new(pb::RevokeTokenResponse {}))
}

pub(super) fn list_events(
    coordinator: &Coordinator,
    request: Request<pb::ListEventsRequest>,
) -> Result<Response<pb::ListEventsResponse>, GrpcStatus> {
    let r = request.into_inner();
    let limit = if r.limit == 0 { 100 } else { r.limit as usize };
    let events = (coordinator.events(r.before, limit)?.into_iter())
        .map(|e| pb::Event {
            seq: e.seq,
            at_ms: e.at_ms,
            who: e.who,
            action: e.action,
            subject: e.subject,
            detail: e.detail,
        })
        .collect();
    Ok(Response::new(pb::ListEventsResponse { events }))
}
