//! Accounts: who a caller is ([`Principal`]), users' passwords (argon2id), personal API
//! tokens (kept as their SHA-256), what each role may do, and the events log that says
//! who did what. The gRPC service and the web pages both go through these methods.

use std::collections::BTreeMap;

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tourney_model::account::{self, ApiToken, Event, Role, Session, User};
use tourney_model::source::EngineFacts;
use tourney_store::AccountError;

use crate::state::Coordinator;
use crate::types::CoordinatorError;

/// Who is calling: a user (by its personal token or its login) or the operator (by an
/// admin token, with the admin role).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The user's name, or the operator token's name.
    pub name: String,
    /// What it may do.
    pub role: Role,
    /// The operator (an admin token) rather than a user.
    pub operator: bool,
}

impl Principal {
    /// The operator, by its admin token's name (`open` when the service checks none).
    pub fn operator(token_name: &str) -> Self {
        Principal {
            name: token_name.to_string(),
            role: Role::Admin,
            operator: true,
        }
    }

    /// Refuses unless the caller has at least `role`.
    ///
    /// # Errors
    /// [`CoordinatorError::Forbidden`], naming the role needed.
    pub fn require(&self, role: Role) -> Result<(), CoordinatorError> {
        if self.role >= role {
            Ok(())
        } else {
            Err(CoordinatorError::Forbidden(format!(
                "'{}' is a {}: this needs the {role} role",
                self.name, self.role
            )))
        }
    }

    /// Refuses unless the caller is `user` itself (whatever its role: a viewer keeps its
    /// own password and tokens) or an admin.
    fn require_self_or_admin(&self, user: &str) -> Result<(), CoordinatorError> {
        if (self.name == user && !self.operator) || self.role == Role::Admin {
            Ok(())
        } else {
            Err(CoordinatorError::Forbidden(format!(
                "'{}' may not manage user '{user}': only the user itself or an admin",
                self.name
            )))
        }
    }

    /// Refuses unless the caller may change a test that `author` submitted: its author
    /// (with the user role), or an approver or admin.
    ///
    /// # Errors
    /// [`CoordinatorError::Forbidden`].
    pub fn require_owner(&self, author: &str) -> Result<(), CoordinatorError> {
        if self.role >= Role::Approver || (self.role == Role::User && self.name == author) {
            Ok(())
        } else {
            Err(CoordinatorError::Forbidden(format!(
                "'{}' may not change a test of '{author}': only its author, an approver or an \
                 admin",
                self.name
            )))
        }
    }
}

/// How long a login to the web pages lasts.
pub const SESSION_MS: u64 = 12 * 3600 * 1000;

/// The largest priority, either way, a test may be given after submission.
pub const MAX_PRIORITY: u32 = 1_000_000;

/// The largest weight a test may be given after submission.
pub const MAX_WEIGHT: f64 = 1e6;

/// A tournament as submitted, for a clone ([`Coordinator::submission_of`]).
#[derive(Debug, Clone, Default)]
pub struct Submission {
    /// The file's name as submitted.
    pub file: String,
    /// Its text as submitted.
    pub text: String,
    /// Its opening suite in the order played (one position a line) when it names an
    /// openings file; else empty.
    pub openings: String,
    /// Its outside engines' programs by sha256, by engine name.
    pub artifacts: BTreeMap<String, String>,
    /// Its engines' commits and data files, by engine name.
    pub engines: BTreeMap<String, EngineFacts>,
}

/// What a change of a running test sets; each field left `None` stays as it is.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Modification {
    /// Its priority (higher first).
    pub priority: Option<i32>,
    /// Its weight: its share of the workers among tests of its priority.
    pub weight: Option<f64>,
    /// Its pair budget: the most pairs it may play.
    pub max_pairs: Option<u64>,
}

/// The longest note of a test, in characters.
pub const MAX_NOTE: usize = 2000;
/// The most links of a test.
pub const MAX_LINKS: usize = 10;
/// The longest link, in bytes.
pub const MAX_LINK: usize = 500;

/// What a personal token starts with (so that a leaked one is recognised by scanners).
pub const TOKEN_PREFIX: &str = "tourney_";

/// argon2id with OWASP's first recommended parameters: 19 MiB, 2 passes, 1 lane.
fn hasher() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("valid argon2 parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// A password's hash, as a PHC string (argon2id, a fresh random salt).
///
/// # Errors
/// No randomness, or the hasher failed.
pub fn hash_password(password: &str) -> Result<String, CoordinatorError> {
    let salt = SaltString::encode_b64(&random_bytes::<16>()?)
        .map_err(|e| CoordinatorError::Invalid(format!("password salt: {e}")))?;
    hasher()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| CoordinatorError::Invalid(format!("password hash: {e}")))
}

/// Whether `password` is the one `hash` (a PHC string) was made from; false for an empty
/// or malformed hash.
pub fn password_matches(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|h| hasher().verify_password(password.as_bytes(), &h).is_ok())
}

/// A hash checked against when no user has the name given (its password is random).
const NO_USER_HASH: &str = "$argon2id$v=19$m=19456,t=2,p=1$bm8tc3VjaC11c2VyLXNhbHQ$Vx0pWmC6NRwUQ7I2eykRh3R9K4XzsxJ1tkZ4Vn2dCUU";

/// `N` bytes from the kernel's random source.
fn random_bytes<const N: usize>() -> Result<[u8; N], CoordinatorError> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut bytes))
        .map_err(|e| CoordinatorError::Exhausted(format!("no randomness: {e}")))?;
    Ok(bytes)
}

impl From<AccountError> for CoordinatorError {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::Store(e) => CoordinatorError::Store(e),
            AccountError::Refused(why) => CoordinatorError::Invalid(why),
        }
    }
}

impl Coordinator {
    /// The user whose personal token `token` is, with its role now; `None` for a token
    /// that is not one (or a user removed since).
    pub fn principal_of_token(&self, token: &str) -> Option<Principal> {
        if !token.starts_with(TOKEN_PREFIX) {
            return None;
        }
        let kept = self
            .store
            .token(&tourney_model::sha256_hex(token.as_bytes()))
            .ok()??;
        let user = self.store.user(&kept.user).ok()??;
        Some(Principal {
            name: user.name,
            role: user.role,
            operator: false,
        })
    }

    /// Who submitted tournament `id` (`None`: unknown, or submitted before accounts).
    pub fn author(&self, id: u64) -> Option<String> {
        let inner = self.lock();
        inner.tournaments.get(&id)?.record.author.clone()
    }

    /// Logs `name` in with `password`: a new session's cookie value and its CSRF token,
    /// or `None` for a wrong name or password (told apart by nothing, timing included: an
    /// unknown name costs a hash too). Slow on purpose (argon2id): call it off the async
    /// threads.
    ///
    /// # Errors
    /// No randomness, or a store error.
    pub fn login(
        &self,
        name: &str,
        password: &str,
    ) -> Result<Option<(String, String)>, CoordinatorError> {
        let user = self.store.user(name)?;
        let hash = user.as_ref().map_or("", |u| u.password_hash.as_str());
        let matches = if hash.is_empty() {
            // As long as a real check, so that the answer's time says nothing.
            let _ = password_matches(NO_USER_HASH, password);
            false
        } else {
            password_matches(hash, password)
        };
        let Some(user) = user.filter(|_| matches) else {
            return Ok(None);
        };
        let cookie = hex::encode(random_bytes::<32>()?);
        let csrf = hex::encode(random_bytes::<32>()?);
        let now = tourney_model::unix_ms_now();
        let session = Session {
            user: user.name.clone(),
            csrf: csrf.clone(),
            expires_ms: now + SESSION_MS,
        };
        self.store
            .put_session(&tourney_model::sha256_hex(cookie.as_bytes()), &session, now)?;
        Ok(Some((cookie, csrf)))
    }

    /// The user logged in by the session whose cookie value is `cookie`, with its role now
    /// and the session's CSRF token; `None` for no such session, an ended one, or a user
    /// removed since.
    pub fn session_principal(&self, cookie: &str) -> Option<(Principal, String)> {
        let hash = tourney_model::sha256_hex(cookie.as_bytes());
        let session = self.store.session(&hash).ok()??;
        if session.expires_ms <= tourney_model::unix_ms_now() {
            return None;
        }
        let user = self.store.user(&session.user).ok()??;
        let principal = Principal {
            name: user.name,
            role: user.role,
            operator: false,
        };
        Some((principal, session.csrf))
    }

    /// Ends the session whose cookie value is `cookie`.
    ///
    /// # Errors
    /// A store error.
    pub fn logout(&self, cookie: &str) -> Result<(), CoordinatorError> {
        let hash = tourney_model::sha256_hex(cookie.as_bytes());
        Ok(self.store.remove_session(&hash)?)
    }

    /// Submits a tournament file for `by` (at least a user) as its author, recording it:
    /// a user's test waits for approval when the coordinator asks for it. See
    /// [`Coordinator::submit_with`].
    ///
    /// # Errors
    /// Not allowed, or as [`Coordinator::submit_with`].
    pub async fn submit_as(
        &self,
        by: &Principal,
        text: &str,
        file: &str,
        openings_text: &str,
        artifacts: BTreeMap<String, String>,
        facts: BTreeMap<String, EngineFacts>,
    ) -> Result<u64, CoordinatorError> {
        by.require(Role::User)?;
        let origin = crate::Origin {
            tuned_by: None,
            author: Some(by.name.clone()),
            pending: self.settings.approval && !by.operator && by.role == Role::User,
        };
        let id = self
            .submit_with(text, file, openings_text, artifacts, facts, origin)
            .await?;
        self.record_event(by, "submitted", &format!("tournament {id}"), file);
        Ok(id)
    }

    /// Cancels tournament `id` for `by` (its author, an approver or an admin), recording
    /// it. Returns whether it could be cancelled.
    ///
    /// # Errors
    /// Not allowed, or the store failed.
    pub async fn cancel_as(&self, by: &Principal, id: u64) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let cancelled = self.cancel(id).await?;
        if cancelled {
            self.record_event(by, "cancelled", &format!("tournament {id}"), "");
        }
        Ok(cancelled)
    }

    /// Resumes paused or cancelled tournament `id` for `by` (its author, an approver or an
    /// admin), recording it. A user's cancelled test that was never approved waits for an
    /// approver again. Returns whether it was paused or cancelled.
    ///
    /// # Errors
    /// Not allowed, one that cannot be resumed ([`Coordinator::resume`]), or the store
    /// failed.
    pub async fn resume_as(&self, by: &Principal, id: u64) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let unapproved =
            (self.lock().tournaments.get(&id)).is_some_and(|e| e.record.approved_by.is_none());
        let pending = self.settings.approval && !by.operator && by.role == Role::User && unapproved;
        let resumed = self.resume_with(id, pending).await?;
        if resumed {
            self.record_event(by, "resumed", &format!("tournament {id}"), "");
        }
        Ok(resumed)
    }

    /// Changes tournament `id`'s priority, weight and/or pair budget for `by` (its author,
    /// an approver or an admin), recording it. Returns whether it had not ended.
    ///
    /// # Errors
    /// Not allowed, a value out of bounds (priority within ±[`MAX_PRIORITY`], weight above
    /// 0 and at most [`MAX_WEIGHT`], a budget below the pairs handed out or of a format
    /// without one), or the store failed.
    pub async fn modify_as(
        &self,
        by: &Principal,
        id: u64,
        change: Modification,
    ) -> Result<bool, CoordinatorError> {
        let Modification {
            priority,
            weight,
            max_pairs,
        } = change;
        by.require_owner(&self.author(id).unwrap_or_default())?;
        if priority.is_some_and(|p| p.unsigned_abs() > MAX_PRIORITY) {
            return Err(CoordinatorError::Invalid(format!(
                "priority: from -{MAX_PRIORITY} to {MAX_PRIORITY}"
            )));
        }
        if weight.is_some_and(|w| !(w > 0.0 && w <= MAX_WEIGHT)) {
            return Err(CoordinatorError::Invalid(format!(
                "weight: above 0 and at most {MAX_WEIGHT}"
            )));
        }
        let record = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get(&id) else {
                return Ok(false);
            };
            let mut config = (*entry.config).clone();
            config.priority = priority.unwrap_or(config.priority);
            config.weight = weight.unwrap_or(config.weight);
            if let Some(pairs) = max_pairs {
                config
                    .set_pair_budget(pairs)
                    .map_err(CoordinatorError::Invalid)?;
                match inner.scheduler.set_pair_budget(id, pairs) {
                    Ok(true) => {}
                    Ok(false) => return Ok(false),
                    Err(why) => return Err(CoordinatorError::Invalid(why)),
                }
            }
            if !inner
                .scheduler
                .set_share(id, config.priority, config.weight)
            {
                return Ok(false);
            }
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            (entry.record.priority, entry.record.weight) =
                (Some(config.priority), Some(config.weight));
            if max_pairs.is_some() {
                entry.record.max_pairs = max_pairs;
            }
            entry.config = std::sync::Arc::new(config);
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        let detail = [
            priority.map(|p| format!("priority {p}")),
            weight.map(|w| format!("weight {w}")),
            max_pairs.map(|n| format!("pair budget {n}")),
        ];
        let detail: Vec<String> = detail.into_iter().flatten().collect();
        self.record_event(
            by,
            "modified",
            &format!("tournament {id}"),
            &detail.join(", "),
        );
        Ok(true)
    }

    /// Deletes tournament `id` from the lists (the overview's, searches) for `by` (its
    /// author, an approver or an admin), or brings it back: its games, figures and page
    /// stay. Returns whether it exists.
    ///
    /// # Errors
    /// Not allowed, a test that has not ended (stop it first), or the store failed.
    pub async fn hide_as(
        &self,
        by: &Principal,
        id: u64,
        hidden: bool,
    ) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        let record = {
            let mut inner = self.lock();
            let ended = (inner.scheduler.tournament(id)).is_some_and(|t| t.state.has_ended());
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            if hidden && !ended {
                return Err(CoordinatorError::Invalid(format!(
                    "tournament {id} has not ended: stop it before deleting it from the lists"
                )));
            }
            entry.record.hidden = hidden;
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        let action = if hidden { "deleted" } else { "restored" };
        self.record_event(by, action, &format!("tournament {id}"), "");
        Ok(true)
    }

    /// Sets tournament `id`'s note and links for `by` (its author, an approver or an
    /// admin), recording it. Returns whether the tournament exists.
    ///
    /// # Errors
    /// Not allowed, a note longer than [`MAX_NOTE`] characters, more than [`MAX_LINKS`]
    /// links, a link that is not an `http(s)://` address of at most [`MAX_LINK`]
    /// characters, or the store failed.
    pub async fn annotate_as(
        &self,
        by: &Principal,
        id: u64,
        note: &str,
        links: &[String],
    ) -> Result<bool, CoordinatorError> {
        by.require_owner(&self.author(id).unwrap_or_default())?;
        if note.chars().count() > MAX_NOTE {
            return Err(CoordinatorError::Invalid(format!(
                "a note is at most {MAX_NOTE} characters"
            )));
        }
        if links.len() > MAX_LINKS {
            return Err(CoordinatorError::Invalid(format!(
                "at most {MAX_LINKS} links"
            )));
        }
        if let Some(bad) = links.iter().find(|l| {
            !(l.starts_with("https://") || l.starts_with("http://"))
                || l.len() > MAX_LINK
                || l.chars().any(|c| c.is_whitespace() || c.is_control())
        }) {
            return Err(CoordinatorError::Invalid(format!(
                "link '{}': an http:// or https:// address of at most {MAX_LINK} characters",
                account::cut(bad, 80)
            )));
        }
        let record = {
            let mut inner = self.lock();
            let Some(entry) = inner.tournaments.get_mut(&id) else {
                return Ok(false);
            };
            entry.record.note = note.to_string();
            entry.record.links = links.to_vec();
            inner.record(id)
        };
        self.save(record).await?;
        self.changed();
        self.record_event(by, "annotated", &format!("tournament {id}"), note);
        Ok(true)
    }

    /// Tournament `id`'s file as submitted, with its name, for a logged-in user to clone.
    pub fn file_of(&self, id: u64) -> Option<(String, String)> {
        let inner = self.lock();
        let record = &inner.tournaments.get(&id)?.record;
        Some((record.file.clone(), record.config_text.clone()))
    }

    /// What tournament `id` was submitted with, to submit it again changed (`tourney
    /// clone`, Admin/GetFile): what [`Coordinator::file_of`] gives, the sha256 of its
    /// programs, its engines' commits and files, and, when it names an openings file, its
    /// suite as its pairs took it (one position a line), so that a clone needs none of the
    /// original files.
    pub fn submission_of(&self, id: u64) -> Option<Submission> {
        let inner = self.lock();
        let entry = inner.tournaments.get(&id)?;
        let record = &entry.record;
        let mut openings = String::new();
        if entry.config.openings.file.is_some() {
            for line in (0..entry.openings.len()).filter_map(|i| entry.openings.get(i)) {
                openings.push_str(line);
                openings.push('\n');
            }
        }
        Some(Submission {
            file: record.file.clone(),
            text: record.config_text.clone(),
            openings,
            artifacts: record.artifacts.clone(),
            engines: record.engines.clone(),
        })
    }

    /// Adds a user (admin only), with a password or, when it is empty, none.
    ///
    /// # Errors
    /// Not an admin, a malformed or taken name, a password of the wrong length, a store
    /// error.
    pub fn add_user(
        &self,
        by: &Principal,
        name: &str,
        role: Role,
        password: &str,
    ) -> Result<(), CoordinatorError> {
        by.require(Role::Admin)?;
        account::check_user_name(name).map_err(CoordinatorError::Invalid)?;
        let password_hash = if password.is_empty() {
            String::new()
        } else {
            account::check_password(password).map_err(CoordinatorError::Invalid)?;
            hash_password(password)?
        };
        self.store.add_user(&User {
            name: name.to_string(),
            role,
            password_hash,
            created_ms: tourney_model::unix_ms_now(),
        })?;
        self.record_event(by, "user-added", &format!("user {name}"), role.name());
        Ok(())
    }

    /// Changes a user's role (admin only) and/or password (admin, or the user itself).
    ///
    /// # Errors
    /// Not allowed, an unknown user, a password of the wrong length, a store error.
    pub fn set_user(
        &self,
        by: &Principal,
        name: &str,
        role: Option<Role>,
        password: Option<&str>,
    ) -> Result<(), CoordinatorError> {
        if role.is_some() {
            by.require(Role::Admin)?;
        } else {
            by.require_self_or_admin(name)?;
        }
        let mut user = self
            .store
            .user(name)?
            .ok_or_else(|| CoordinatorError::Invalid(format!("no user '{name}'")))?;
        if let Some(password) = password {
            account::check_password(password).map_err(CoordinatorError::Invalid)?;
            user.password_hash = hash_password(password)?;
        }
        if let Some(role) = role {
            user.role = role;
        }
        self.store.update_user(&user)?;
        let subject = format!("user {name}");
        if let Some(role) = role {
            self.record_event(by, "role-changed", &subject, role.name());
        }
        if password.is_some() {
            self.record_event(by, "password-changed", &subject, "");
        }
        Ok(())
    }

    /// Removes a user and its tokens (admin only); its tests keep its name.
    ///
    /// # Errors
    /// Not an admin, an unknown user, a store error.
    pub fn remove_user(&self, by: &Principal, name: &str) -> Result<(), CoordinatorError> {
        by.require(Role::Admin)?;
        self.store.remove_user(name)?;
        self.record_event(by, "user-removed", &format!("user {name}"), "");
        Ok(())
    }

    /// Every user, by name, with its count of tokens (admin only).
    ///
    /// # Errors
    /// Not an admin, a store error.
    pub fn users(&self, by: &Principal) -> Result<Vec<(User, usize)>, CoordinatorError> {
        by.require(Role::Admin)?;
        let users = self.store.users()?;
        users
            .into_iter()
            .map(|u| {
                let tokens = self.store.tokens_of(&u.name)?.len();
                Ok((u, tokens))
            })
            .collect()
    }

    /// Makes a personal token for `user` (admin, or the user itself): the token, shown
    /// once, and its id. Only its SHA-256 is kept.
    ///
    /// # Errors
    /// Not allowed, an unknown user, too many tokens, no randomness, a store error.
    pub fn create_token(
        &self,
        by: &Principal,
        user: &str,
        label: &str,
    ) -> Result<(String, String), CoordinatorError> {
        by.require_self_or_admin(user)?;
        let secret = hex::encode(random_bytes::<24>()?);
        let token = format!("{TOKEN_PREFIX}{secret}");
        let hash = tourney_model::sha256_hex(token.as_bytes());
        let id = hash[..8].to_string();
        self.store.add_token(
            &hash,
            &ApiToken {
                id: id.clone(),
                user: user.to_string(),
                label: label.to_string(),
                created_ms: tourney_model::unix_ms_now(),
            },
        )?;
        self.record_event(by, "token-created", &format!("user {user}"), &id);
        Ok((token, id))
    }

    /// A user's tokens, without the tokens (admin, or the user itself).
    ///
    /// # Errors
    /// Not allowed, a store error.
    pub fn tokens(&self, by: &Principal, user: &str) -> Result<Vec<ApiToken>, CoordinatorError> {
        by.require_self_or_admin(user)?;
        Ok(self.store.tokens_of(user)?)
    }

    /// Revokes one of `user`'s tokens by its id (admin, or the user itself).
    ///
    /// # Errors
    /// Not allowed, no such token, a store error.
    pub fn revoke_token(
        &self,
        by: &Principal,
        user: &str,
        id: &str,
    ) -> Result<(), CoordinatorError> {
        by.require_self_or_admin(user)?;
        self.store.revoke_token(user, id)?;
        self.record_event(by, "token-revoked", &format!("user {user}"), id);
        Ok(())
    }

    /// Notes that `by` did `action` to `subject` in the events log. A failure to note it
    /// is logged, not returned: the action itself has happened.
    pub fn record_event(&self, by: &Principal, action: &str, subject: &str, detail: &str) {
        let event = Event {
            seq: 0,
            at_ms: tourney_model::unix_ms_now(),
            who: by.name.clone(),
            action: action.to_string(),
            subject: subject.to_string(),
            detail: detail.to_string(),
        };
        if let Err(error) = self.store.add_event(&event) {
            tracing::warn!(%error, action, subject, "the event was not recorded");
        }
    }

    /// Up to `limit` events (at most 1,000) numbered below `before` (0: from the newest),
    /// newest first.
    ///
    /// # Errors
    /// A store error.
    pub fn events(&self, before: u64, limit: usize) -> Result<Vec<Event>, CoordinatorError> {
        Ok(self.store.events(before, limit.clamp(1, 1000))?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hashed_with_argon2id_and_a_fresh_salt() {
        let hash = hash_password("correct horse").unwrap();
        assert!(
            hash.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{hash}"
        );
        assert!(!hash.contains("correct horse"));
        assert_ne!(hash, hash_password("correct horse").unwrap(), "salted");
        assert!(password_matches(&hash, "correct horse"));
        assert!(!password_matches(&hash, "correct horsE"));
        assert!(!password_matches("", "correct horse"));
        assert!(!password_matches("$argon2id$garbage", "correct horse"));
        // An unknown name is checked against a real hash, as long to check as any.
        assert!(PasswordHash::new(NO_USER_HASH).is_ok());
    }

    #[test]
    fn each_role_may_do_what_the_ones_below_it_may() {
        let as_ = |name: &str, role: Role| Principal {
            name: name.into(),
            role,
            operator: false,
        };
        let (vera, ann) = (as_("vera", Role::Viewer), as_("ann", Role::User));
        let (apu, ada) = (as_("apu", Role::Approver), as_("ada", Role::Admin));
        assert!(vera.require(Role::User).is_err() && ann.require(Role::User).is_ok());
        assert!(ann.require(Role::Approver).is_err() && apu.require(Role::Approver).is_ok());
        assert!(apu.require(Role::Admin).is_err() && ada.require(Role::Admin).is_ok());
        assert!(ann.require_owner("ann").is_ok() && ann.require_owner("bob").is_err());
        assert!(
            vera.require_owner("vera").is_err(),
            "a viewer changes nothing"
        );
        assert!(apu.require_owner("bob").is_ok() && ada.require_owner("").is_ok());
        assert!(ann.require_self_or_admin("ann").is_ok());
        assert!(ann.require_self_or_admin("bob").is_err());
        assert!(vera.require_self_or_admin("vera").is_ok());
        assert!(vera.require_self_or_admin("ann").is_err());
        assert!(
            Principal::operator("ops")
                .require_self_or_admin("bob")
                .is_ok()
        );
    }
}
