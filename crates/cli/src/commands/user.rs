//! `tourney user ...`, `tourney events` and `tourney whoami`: accounts on a coordinator.

use std::io::BufRead;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tourney_model::Utc;
use tourney_proto::v1 as pb;

use crate::support::client::status_error;
use crate::support::local::AdminTarget;

/// Manage the coordinator's users, their roles and personal tokens.
///
/// Roles, each allowed what the ones before it are: `viewer` (reads tournaments, reports,
/// exports, versions and events), `user` (submits tests, and stops or resumes its own;
/// uploads programs, registers versions), `approver` (changes the tests of others), `admin`
/// (manages users, workers and everything else). The operator's admin token acts as an
/// admin; a user's personal token, given as `--token` or `TOURNEY_TOKEN` like the admin
/// token, acts as that user, and what it does is recorded under the user's name
/// (`tourney events`). The first admin is made with the operator's token, or with `--data`
/// on a stopped coordinator's data directory. See docs/accounts.md.
///
/// Examples: `tourney user add ann --role user --password-stdin < pw.txt`; `tourney user
/// token ann --label laptop`; `tourney user set ann --role approver`.
#[derive(Args)]
pub(crate) struct UserArgs {
    #[command(subcommand)]
    action: UserAction,
}

#[derive(Subcommand)]
enum UserAction {
    /// Add a user (admin), with a password read from stdin or, without
    /// `--password-stdin`, none (the user works with tokens only).
    Add(AddArgs),
    /// List the users, their roles and how many tokens each has (admin).
    List(ClientOnly),
    /// Change a user's role (admin) or password (admin, or the user itself).
    Set(SetArgs),
    /// Remove a user and its tokens (admin); its tests keep its name.
    Remove(NameArgs),
    /// Make a personal API token (admin for anyone, a user for itself): printed once,
    /// kept by the coordinator only as its SHA-256.
    Token(TokenArgs),
    /// List a user's tokens by id and label, never the tokens (admin, or the user itself).
    Tokens(MaybeNameArgs),
    /// Revoke a token by its id (admin, or the user itself): refused from then on.
    Revoke(RevokeArgs),
}

#[derive(Args)]
struct ClientOnly {
    #[command(flatten)]
    client: AdminTarget,
}

#[derive(Args)]
struct AddArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// Its name: letters, digits, '.', '_' or '-', starting with a letter, at most 32.
    name: String,
    /// viewer, user, approver or admin.
    #[arg(long)]
    role: String,
    /// Read the password (10 to 256 characters) from the first line of stdin.
    #[arg(long)]
    password_stdin: bool,
}

#[derive(Args)]
struct SetArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The user.
    name: String,
    /// The new role: viewer, user, approver or admin.
    #[arg(long, required_unless_present = "password_stdin")]
    role: Option<String>,
    /// Read the new password from the first line of stdin.
    #[arg(long)]
    password_stdin: bool,
}

#[derive(Args)]
struct NameArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The user.
    name: String,
}

#[derive(Args)]
struct MaybeNameArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The user [default: the caller].
    name: Option<String>,
}

#[derive(Args)]
struct TokenArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The user [default: the caller].
    name: Option<String>,
    /// What it is for (`laptop`, `ci`).
    #[arg(long, default_value = "")]
    label: String,
}

#[derive(Args)]
struct RevokeArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The token's id (`tourney user tokens`).
    id: String,
    /// Whose [default: the caller].
    #[arg(long)]
    user: Option<String>,
}

/// The events log: who did what, and when.
///
/// Every action through the Admin service or the dashboard is recorded with its author:
/// tests submitted, cancelled, resumed, archived; workers excluded; versions added; users
/// and tokens made, changed, removed. The newest 100,000 are kept. Example: `tourney
/// events --limit 20`.
#[derive(Args)]
pub(crate) struct EventsArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// How many, newest first (at most 1,000).
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// Only events numbered below this one (to page back).
    #[arg(long, default_value_t = 0)]
    before: u64,
    /// JSON lines for scripts.
    #[arg(long)]
    json: bool,
}

/// Who the coordinator takes the token for: a user and its role, or the operator.
#[derive(Args)]
pub(crate) struct WhoAmIArgs {
    #[command(flatten)]
    client: AdminTarget,
}

pub(crate) fn user(args: &UserArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        match &args.action {
            UserAction::Add(a) => add(a).await,
            UserAction::List(l) => list(&l.client).await,
            UserAction::Set(s) => set(s).await,
            UserAction::Remove(r) => {
                let mut admin = r.client.admin().await?;
                admin
                    .remove_user(pb::RemoveUserRequest {
                        name: r.name.clone(),
                    })
                    .await
                    .map_err(status_error)?;
                eprintln!("removed user {}", r.name);
                Ok(())
            }
            UserAction::Token(t) => token(t).await,
            UserAction::Tokens(t) => tokens(t).await,
            UserAction::Revoke(r) => {
                let mut admin = r.client.admin().await?;
                admin
                    .revoke_token(pb::RevokeTokenRequest {
                        user: r.user.clone().unwrap_or_default(),
                        id: r.id.clone(),
                    })
                    .await
                    .map_err(status_error)?;
                eprintln!("revoked token {}", r.id);
                Ok(())
            }
        }
    })
}

/// With `from_stdin`, the first line of stdin without its newline (a password); else
/// empty (no password).
fn password_from_stdin(from_stdin: bool) -> Result<String> {
    if !from_stdin {
        return Ok(String::new());
    }
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .context("reading the password from stdin")?;
    let password = line.trim_end_matches(['\n', '\r']).to_string();
    anyhow::ensure!(
        !password.is_empty(),
        "--password-stdin: stdin has no password"
    );
    Ok(password)
}

async fn add(args: &AddArgs) -> Result<()> {
    let password = password_from_stdin(args.password_stdin)?;
    let mut admin = args.client.admin().await?;
    admin
        .add_user(pb::AddUserRequest {
            name: args.name.clone(),
            role: args.role.clone(),
            password,
        })
        .await
        .map_err(status_error)?;
    eprintln!("added user {} ({})", args.name, args.role);
    Ok(())
}

async fn set(args: &SetArgs) -> Result<()> {
    let password = password_from_stdin(args.password_stdin)?;
    let mut admin = args.client.admin().await?;
    admin
        .set_user(pb::SetUserRequest {
            name: args.name.clone(),
            role: args.role.clone().unwrap_or_default(),
            password,
        })
        .await
        .map_err(status_error)?;
    eprintln!("changed user {}", args.name);
    Ok(())
}

async fn list(client: &AdminTarget) -> Result<()> {
    let mut admin = client.admin().await?;
    let users = admin
        .list_users(pb::ListUsersRequest {})
        .await
        .map_err(status_error)?
        .into_inner()
        .users;
    println!(
        "{:<32} {:<9} {:>6} {:<8} created",
        "user", "role", "tokens", "password"
    );
    for u in users {
        println!(
            "{:<32} {:<9} {:>6} {:<8} {}",
            u.name,
            u.role,
            u.tokens,
            if u.has_password { "yes" } else { "no" },
            Utc::from_unix_ms(u.created_ms)
        );
    }
    Ok(())
}

async fn token(args: &TokenArgs) -> Result<()> {
    let mut admin = args.client.admin().await?;
    let made = admin
        .create_token(pb::CreateTokenRequest {
            user: args.name.clone().unwrap_or_default(),
            label: args.label.clone(),
        })
        .await
        .map_err(status_error)?
        .into_inner();
    eprintln!(
        "token {} made; it is shown this once (keep it in a file for --token-file):",
        made.id
    );
    println!("{}", made.token);
    Ok(())
}

async fn tokens(args: &MaybeNameArgs) -> Result<()> {
    let mut admin = args.client.admin().await?;
    let tokens = admin
        .list_tokens(pb::ListTokensRequest {
            user: args.name.clone().unwrap_or_default(),
        })
        .await
        .map_err(status_error)?
        .into_inner()
        .tokens;
    println!("{:<8} {:<24} created", "id", "label");
    for t in tokens {
        println!(
            "{:<8} {:<24} {}",
            t.id,
            t.label,
            Utc::from_unix_ms(t.created_ms)
        );
    }
    Ok(())
}

pub(crate) fn events(args: &EventsArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let events = admin
            .list_events(pb::ListEventsRequest {
                before: args.before,
                limit: args.limit,
            })
            .await
            .map_err(status_error)?
            .into_inner()
            .events;
        for e in events {
            if args.json {
                let line = serde_json::json!({
                    "seq": e.seq, "at_ms": e.at_ms, "who": e.who, "action": e.action,
                    "subject": e.subject, "detail": e.detail,
                });
                println!("{line}");
            } else {
                println!(
                    "{:>6} {} {:<16} {:<18} {:<20} {}",
                    e.seq,
                    Utc::from_unix_ms(e.at_ms),
                    e.who,
                    e.action,
                    e.subject,
                    e.detail
                );
            }
        }
        Ok(())
    })
}

pub(crate) fn whoami(args: &WhoAmIArgs) -> Result<()> {
    tokio::runtime::Runtime::new()?.block_on(async {
        let mut admin = args.client.admin().await?;
        let me = admin
            .who_am_i(pb::WhoAmIRequest {})
            .await
            .map_err(status_error)?
            .into_inner();
        let what = if me.operator {
            "the operator's token"
        } else {
            "a user"
        };
        println!("{} ({}, {what})", me.name, me.role);
        Ok(())
    })
}
