//! Accounts: who a caller is ([`Principal`]), users' passwords (argon2id), personal API
//! tokens (kept as their SHA-256), what each role may do, and the events log that says
//! who did what. The gRPC service and the web pages both go through these methods.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use tourney_model::account::{self, ApiToken, Event, Role, Session, User};
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
