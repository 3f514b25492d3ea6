//! The people of a coordinator: users with a role, their personal API tokens, and the
//! events that say who did what. Plain data; the coordinator hashes and checks secrets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a user may do; each role may do everything of the ones before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Reads: tournaments, reports, exports, versions, events.
    Viewer,
    /// Creates tests and modifies, stops and resumes its own; uploads programs and
    /// registers versions.
    User,
    /// Approves and modifies the tests of others.
    Approver,
    /// Manages users, workers and everything else.
    Admin,
}

impl Role {
    /// Every role, least first.
    pub const ALL: [Role; 4] = [Role::Viewer, Role::User, Role::Approver, Role::Admin];

    /// Its name: `viewer`, `user`, `approver` or `admin`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::User => "user",
            Role::Approver => "approver",
            Role::Admin => "admin",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Role {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == text)
            .ok_or_else(|| format!("unknown role '{text}': viewer, user, approver or admin"))
    }
}

/// The longest user name.
pub const MAX_USER_NAME: usize = 32;

/// Checks a user name: 1 to [`MAX_USER_NAME`] letters, digits, `.`, `_` or `-`, starting
/// with a letter (so that it is safe in a URL, a log line and a page).
///
/// # Errors
/// What is wrong with it.
pub fn check_user_name(name: &str) -> Result<(), String> {
    let starts = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    let rest = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if starts && rest && name.len() <= MAX_USER_NAME {
        Ok(())
    } else {
        Err(format!(
            "a user name is 1 to {MAX_USER_NAME} letters, digits, '.', '_' or '-', \
             starting with a letter"
        ))
    }
}

/// The shortest password accepted.
pub const MIN_PASSWORD: usize = 10;
/// The longest password accepted (hashing costs memory, not length, but input is bounded).
pub const MAX_PASSWORD: usize = 256;

/// Checks a new password's length.
///
/// # Errors
/// What is wrong with it (never the password).
pub fn check_password(password: &str) -> Result<(), String> {
    let n = password.chars().count();
    if (MIN_PASSWORD..=MAX_PASSWORD).contains(&n) {
        Ok(())
    } else {
        Err(format!(
            "a password is {MIN_PASSWORD} to {MAX_PASSWORD} characters"
        ))
    }
}

/// A user as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct User {
    /// Its name (see [`check_user_name`]).
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// Its password's hash, as a PHC string (argon2id); empty: it cannot log in with a
    /// password (it has tokens only).
    pub password_hash: String,
    /// When it was made, Unix milliseconds.
    pub created_ms: u64,
}

/// A personal API token as stored: the token itself is never kept, only its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiToken {
    /// A short public id to name it by (to revoke it): the first 8 hex digits of its hash.
    pub id: String,
    /// Whose it is.
    pub user: String,
    /// What its owner called it (`laptop`, `ci`).
    pub label: String,
    /// When it was made, Unix milliseconds.
    pub created_ms: u64,
}

/// A login session of the web pages as stored: kept by the SHA-256 of its cookie's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Whose it is.
    pub user: String,
    /// The token every form of the session sends back (CSRF protection).
    pub csrf: String,
    /// When it ends, Unix milliseconds.
    pub expires_ms: u64,
}

/// The longest token label, event subject or event detail kept, in characters.
pub const MAX_LABEL: usize = 64;
/// The longest event detail kept, in characters (longer ones are cut).
pub const MAX_EVENT_DETAIL: usize = 500;

/// Something somebody did, as the events page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Its number (increasing, never reused).
    pub seq: u64,
    /// When, Unix milliseconds.
    pub at_ms: u64,
    /// Who: a user's name, or an operator token's name.
    pub who: String,
    /// What, one word: `submitted`, `cancelled`, `user-added`, ...
    pub action: String,
    /// What it was done to: `tournament 12`, `user ann`.
    pub subject: String,
    /// More, free text (a reason, a role).
    pub detail: String,
}

/// `text` cut to at most `max` characters.
pub fn cut(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_order_and_read_by_name() {
        assert!(Role::Viewer < Role::User && Role::User < Role::Approver);
        assert!(Role::Approver < Role::Admin);
        for role in Role::ALL {
            assert_eq!(role.name().parse::<Role>(), Ok(role));
        }
        assert!("root".parse::<Role>().unwrap_err().contains("viewer, user"));
    }

    #[test]
    fn user_names_and_passwords_are_checked() {
        for good in ["ann", "b.o-b_2", &"x".repeat(MAX_USER_NAME)] {
            assert!(check_user_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "2ann",
            "ann smith",
            "<b>",
            "a/b",
            &"x".repeat(MAX_USER_NAME + 1),
        ] {
            assert!(check_user_name(bad).is_err(), "{bad}");
        }
        assert!(check_password("short").is_err());
        assert!(check_password("long enough").is_ok());
        assert!(check_password(&"p".repeat(MAX_PASSWORD + 1)).is_err());
        assert_eq!(cut("ééé", 2), "éé");
    }
}
