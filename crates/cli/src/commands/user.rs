//! `tourney user ...`: the accounts on a coordinator.

use std::io::BufRead;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use tourney_model::Utc;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
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

pub(crate) fn run(args: &UserArgs) -> Result<ExitCode> {
    match &args.action {
        UserAction::Add(a) => add(a)?,
        UserAction::List(l) => list(&l.client)?,
        UserAction::Set(s) => set(s)?,
        UserAction::Remove(r) => {
            let mut admin = BlockingAdmin::connect(&r.client)?;
            admin.remove_user(pb::RemoveUserRequest {
                name: r.name.clone(),
            })?;
            eprintln!("removed user {}", r.name);
        }
        UserAction::Token(t) => token(t)?,
        UserAction::Tokens(t) => tokens(t)?,
        UserAction::Revoke(r) => {
            let mut admin = BlockingAdmin::connect(&r.client)?;
            admin.revoke_token(pb::RevokeTokenRequest {
                user: r.user.clone().unwrap_or_default(),
                id: r.id.clone(),
            })?;
            eprintln!("revoked token {}", r.id);
        }
    }
    Ok(ExitCode::SUCCESS)
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

fn add(args: &AddArgs) -> Result<()> {
    let password = password_from_stdin(args.password_stdin)?;
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.add_user(pb::AddUserRequest {
        name: args.name.clone(),
        role: args.role.clone(),
        password,
    })?;
    eprintln!("added user {} ({})", args.name, args.role);
    Ok(())
}

fn set(args: &SetArgs) -> Result<()> {
    let password = password_from_stdin(args.password_stdin)?;
    let mut admin = BlockingAdmin::connect(&args.client)?;
    admin.set_user(pb::SetUserRequest {
        name: args.name.clone(),
        role: args.role.clone().unwrap_or_default(),
        password,
    })?;
    eprintln!("changed user {}", args.name);
    Ok(())
}

fn list(client: &AdminTarget) -> Result<()> {
    let mut admin = BlockingAdmin::connect(client)?;
    let users = admin.list_users(pb::ListUsersRequest {})?.users;
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

fn token(args: &TokenArgs) -> Result<()> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let made = admin.create_token(pb::CreateTokenRequest {
        user: args.name.clone().unwrap_or_default(),
        label: args.label.clone(),
    })?;
    eprintln!(
        "token {} made; it is shown this once (keep it in a file for --token-file):",
        made.id
    );
    println!("{}", made.token);
    Ok(())
}

fn tokens(args: &MaybeNameArgs) -> Result<()> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let tokens = admin
        .list_tokens(pb::ListTokensRequest {
            user: args.name.clone().unwrap_or_default(),
        })?
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
