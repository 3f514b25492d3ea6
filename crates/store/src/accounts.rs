//! Users, their personal API tokens (kept by the SHA-256 of the token, never the token)
//! and the events log, each bounded.

use tourney_model::account::{ApiToken, Event, MAX_EVENT_DETAIL, MAX_LABEL, Session, User, cut};

use crate::{Store, StoreError, read_u64};

/// The most users a store keeps.
pub const MAX_USERS: usize = 10_000;
/// The most personal tokens a user may have at once.
pub const MAX_TOKENS_PER_USER: usize = 20;
/// The most events kept: past this, the oldest go first.
pub const MAX_EVENTS: u64 = 100_000;
/// The most login sessions kept: past this, the ones that end first go first.
pub const MAX_SESSIONS: usize = 10_000;

/// Why an account change was refused.
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The change is not possible (a taken name, a bound reached, an unknown user).
    #[error("{0}")]
    Refused(String),
}

impl From<sled::Error> for AccountError {
    fn from(e: sled::Error) -> Self {
        AccountError::Store(e.into())
    }
}

impl From<serde_json::Error> for AccountError {
    fn from(e: serde_json::Error) -> Self {
        AccountError::Store(e.into())
    }
}

impl Store {
    /// Adds a user; a taken name, or more than [`MAX_USERS`], is refused.
    ///
    /// # Errors
    /// The refusal, or a store error.
    pub fn add_user(&self, user: &User) -> Result<(), AccountError> {
        let trees = self.t();
        if trees.users.len() >= MAX_USERS {
            return Err(AccountError::Refused(format!(
                "the store holds {MAX_USERS} users, the most it keeps"
            )));
        }
        let added = trees.users.compare_and_swap(
            user.name.as_bytes(),
            None as Option<&[u8]>,
            Some(serde_json::to_vec(user)?),
        )?;
        added.map_err(|_| AccountError::Refused(format!("user '{}' exists", user.name)))
    }

    /// Writes a user that exists (a new role or password).
    ///
    /// # Errors
    /// An unknown user, or a store error.
    pub fn update_user(&self, user: &User) -> Result<(), AccountError> {
        let trees = self.t();
        if !trees.users.contains_key(user.name.as_bytes())? {
            return Err(unknown(&user.name));
        }
        trees
            .users
            .insert(user.name.as_bytes(), serde_json::to_vec(user)?)?;
        Ok(())
    }

    /// The user named `name`.
    ///
    /// # Errors
    /// Store errors.
    pub fn user(&self, name: &str) -> Result<Option<User>, StoreError> {
        self.t()
            .users
            .get(name.as_bytes())?
            .map(|v| Ok(serde_json::from_slice(&v)?))
            .transpose()
    }

    /// Every user, by name.
    ///
    /// # Errors
    /// Store errors.
    pub fn users(&self) -> Result<Vec<User>, StoreError> {
        (self.t().users.iter().values())
            .map(|v| Ok(serde_json::from_slice(&v?)?))
            .collect()
    }

    /// Removes a user and every token of theirs.
    ///
    /// # Errors
    /// An unknown user, or a store error.
    pub fn remove_user(&self, name: &str) -> Result<(), AccountError> {
        let trees = self.t();
        if trees.users.remove(name.as_bytes())?.is_none() {
            return Err(unknown(name));
        }
        for kv in trees.sessions.iter() {
            let (key, value) = kv?;
            if serde_json::from_slice::<Session>(&value).is_ok_and(|s| s.user == name) {
                trees.sessions.remove(key)?;
            }
        }
        for (hash, token) in self.tokens_with_keys()? {
            if token.user == name {
                trees.user_tokens.remove(hash)?;
            }
        }
        Ok(())
    }

    /// Keeps a personal token by `hash` (the SHA-256 of the token, hex) for a user that
    /// exists and has fewer than [`MAX_TOKENS_PER_USER`].
    ///
    /// # Errors
    /// The refusal, or a store error.
    pub fn add_token(&self, hash: &str, token: &ApiToken) -> Result<(), AccountError> {
        if self.user(&token.user)?.is_none() {
            return Err(unknown(&token.user));
        }
        let theirs = self.tokens_of(&token.user)?.len();
        if theirs >= MAX_TOKENS_PER_USER {
            return Err(AccountError::Refused(format!(
                "user '{}' has {MAX_TOKENS_PER_USER} tokens, the most one may have: revoke one",
                token.user
            )));
        }
        let token = ApiToken {
            label: cut(&token.label, MAX_LABEL),
            ..token.clone()
        };
        self.t()
            .user_tokens
            .insert(hash.as_bytes(), serde_json::to_vec(&token)?)?;
        Ok(())
    }

    /// The token kept by `hash`, if any.
    ///
    /// # Errors
    /// Store errors.
    pub fn token(&self, hash: &str) -> Result<Option<ApiToken>, StoreError> {
        self.t()
            .user_tokens
            .get(hash.as_bytes())?
            .map(|v| Ok(serde_json::from_slice(&v)?))
            .transpose()
    }

    /// A user's tokens, oldest first.
    ///
    /// # Errors
    /// Store errors.
    pub fn tokens_of(&self, user: &str) -> Result<Vec<ApiToken>, StoreError> {
        let mut tokens: Vec<ApiToken> = (self.tokens_with_keys()?.into_iter())
            .map(|(_, t)| t)
            .filter(|t| t.user == user)
            .collect();
        tokens.sort_by_key(|t| t.created_ms);
        Ok(tokens)
    }

    /// Revokes a user's token by its id.
    ///
    /// # Errors
    /// No such token of theirs, or a store error.
    pub fn revoke_token(&self, user: &str, id: &str) -> Result<(), AccountError> {
        let found =
            (self.tokens_with_keys()?.into_iter()).find(|(_, t)| t.user == user && t.id == id);
        let Some((hash, _)) = found else {
            return Err(AccountError::Refused(format!(
                "user '{user}' has no token '{id}'"
            )));
        };
        self.t().user_tokens.remove(hash)?;
        Ok(())
    }

    fn tokens_with_keys(&self) -> Result<Vec<(sled::IVec, ApiToken)>, StoreError> {
        (self.t().user_tokens.iter())
            .map(|kv| {
                let (k, v) = kv?;
                Ok((k, serde_json::from_slice(&v)?))
            })
            .collect()
    }

    /// Keeps a login session by `hash` (the SHA-256 of its cookie's value, hex), first
    /// dropping the sessions that have ended by `now_ms` and, past [`MAX_SESSIONS`], the
    /// ones that end first.
    ///
    /// # Errors
    /// Store errors.
    pub fn put_session(
        &self,
        hash: &str,
        session: &Session,
        now_ms: u64,
    ) -> Result<(), StoreError> {
        self.keep_session(hash, session, now_ms, MAX_SESSIONS)
    }

    /// [`Store::put_session`] with at most `most` sessions.
    fn keep_session(
        &self,
        hash: &str,
        session: &Session,
        now_ms: u64,
        most: usize,
    ) -> Result<(), StoreError> {
        let trees = self.t();
        let mut kept: Vec<(sled::IVec, u64)> = Vec::new();
        for kv in trees.sessions.iter() {
            let (key, value) = kv?;
            let ends = serde_json::from_slice::<Session>(&value).map_or(0, |s| s.expires_ms);
            if ends <= now_ms {
                trees.sessions.remove(&key)?;
            } else {
                kept.push((key, ends));
            }
        }
        if kept.len() >= most {
            kept.sort_by_key(|&(_, ends)| ends);
            for (key, _) in &kept[..=kept.len() - most] {
                trees.sessions.remove(key)?;
            }
        }
        trees
            .sessions
            .insert(hash.as_bytes(), serde_json::to_vec(session)?)?;
        Ok(())
    }

    /// The session kept by `hash`, if any (ended or not: the caller checks).
    ///
    /// # Errors
    /// Store errors.
    pub fn session(&self, hash: &str) -> Result<Option<Session>, StoreError> {
        self.t()
            .sessions
            .get(hash.as_bytes())?
            .map(|v| Ok(serde_json::from_slice(&v)?))
            .transpose()
    }

    /// Ends the session kept by `hash`.
    ///
    /// # Errors
    /// Store errors.
    pub fn remove_session(&self, hash: &str) -> Result<(), StoreError> {
        self.t().sessions.remove(hash.as_bytes())?;
        Ok(())
    }

    /// A coordinator setting kept in the store under `name` (`None`: never set).
    ///
    /// # Errors
    /// Store errors.
    pub fn setting<T: serde::de::DeserializeOwned>(
        &self,
        name: &str,
    ) -> Result<Option<T>, StoreError> {
        self.t()
            .meta
            .get(format!("setting/{name}"))?
            .map(|v| Ok(serde_json::from_slice(&v)?))
            .transpose()
    }

    /// Keeps a coordinator setting under `name`.
    ///
    /// # Errors
    /// Store errors.
    pub fn put_setting<T: serde::Serialize>(
        &self,
        name: &str,
        value: &T,
    ) -> Result<(), StoreError> {
        self.t()
            .meta
            .insert(format!("setting/{name}"), serde_json::to_vec(value)?)?;
        Ok(())
    }

    /// Appends an event (its `seq` and a detail longer than [`MAX_EVENT_DETAIL`] are set
    /// here), dropping the oldest past [`MAX_EVENTS`]; returns its number.
    ///
    /// # Errors
    /// Store errors.
    pub fn add_event(&self, event: &Event) -> Result<u64, StoreError> {
        let trees = self.t();
        let seq = trees.meta.update_and_fetch("next_event", |old| {
            Some((old.map_or(0, read_u64) + 1).to_be_bytes().to_vec())
        })?;
        let seq = seq.map_or(1, |v| read_u64(&v));
        let event = Event {
            seq,
            who: cut(&event.who, MAX_LABEL),
            action: cut(&event.action, MAX_LABEL),
            subject: cut(&event.subject, MAX_LABEL),
            detail: cut(&event.detail, MAX_EVENT_DETAIL),
            ..event.clone()
        };
        trees
            .events
            .insert(seq.to_be_bytes(), serde_json::to_vec(&event)?)?;
        // Numbers are consecutive: what is older than the last MAX_EVENTS goes (one event,
        // or none, each time).
        if let Some(oldest_kept) = seq.checked_sub(MAX_EVENTS - 1) {
            for key in trees.events.range(..oldest_kept.to_be_bytes()).keys() {
                trees.events.remove(key?)?;
            }
        }
        Ok(seq)
    }

    /// Up to `limit` events before number `before` (0: the newest), newest first.
    ///
    /// # Errors
    /// Store errors.
    pub fn events(&self, before: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        let trees = self.t();
        let end = if before == 0 { u64::MAX } else { before };
        (trees.events.range(..end.to_be_bytes()).rev().take(limit))
            .map(|kv| Ok(serde_json::from_slice(&kv?.1)?))
            .collect()
    }
}

fn unknown(name: &str) -> AccountError {
    AccountError::Refused(format!("no user '{name}'"))
}

#[cfg(test)]
mod tests {
    use tourney_model::account::Role;

    use super::*;

    fn user(name: &str) -> User {
        User {
            name: name.into(),
            role: Role::User,
            password_hash: String::new(),
            created_ms: 1,
        }
    }

    fn token(user: &str, id: &str, at: u64) -> ApiToken {
        ApiToken {
            id: id.into(),
            user: user.into(),
            label: "x".repeat(200),
            created_ms: at,
        }
    }

    #[test]
    fn users_are_unique_and_take_their_tokens_with_them() {
        let store = Store::temporary().unwrap();
        store.add_user(&user("ann")).unwrap();
        let again = store.add_user(&user("ann")).unwrap_err();
        assert!(again.to_string().contains("exists"), "{again}");
        let mut ann = store.user("ann").unwrap().unwrap();
        ann.role = Role::Approver;
        store.update_user(&ann).unwrap();
        assert_eq!(store.users().unwrap(), [ann]);
        assert!(store.update_user(&user("bob")).is_err());

        store.add_token("h1", &token("ann", "a1", 2)).unwrap();
        store.add_token("h2", &token("ann", "a2", 3)).unwrap();
        assert!(store.add_token("h3", &token("bob", "b1", 3)).is_err());
        let kept = store.token("h1").unwrap().unwrap();
        assert_eq!((kept.user.as_str(), kept.label.len()), ("ann", MAX_LABEL));
        assert_eq!(store.tokens_of("ann").unwrap().len(), 2);
        assert!(store.revoke_token("ann", "b1").is_err());
        store.revoke_token("ann", "a1").unwrap();
        assert!(store.token("h1").unwrap().is_none());
        store.remove_user("ann").unwrap();
        assert!(
            store.token("h2").unwrap().is_none(),
            "tokens go with their user"
        );
        assert!(store.remove_user("ann").is_err());
    }

    #[test]
    fn a_user_has_a_bounded_number_of_tokens() {
        let store = Store::temporary().unwrap();
        store.add_user(&user("ann")).unwrap();
        for i in 0..MAX_TOKENS_PER_USER {
            store
                .add_token(&format!("h{i}"), &token("ann", &i.to_string(), i as u64))
                .unwrap();
        }
        let over = store.add_token("last", &token("ann", "z", 99)).unwrap_err();
        assert!(over.to_string().contains("revoke one"), "{over}");
    }

    #[test]
    fn events_are_numbered_paged_newest_first_and_bounded() {
        let store = Store::temporary().unwrap();
        let event = |i: u64| Event {
            seq: 0,
            at_ms: i,
            who: "ann".into(),
            action: "submitted".into(),
            subject: format!("tournament {i}"),
            detail: "d".repeat(MAX_EVENT_DETAIL + 10),
        };
        let n = MAX_EVENTS + 5;
        for i in 1..=n {
            assert_eq!(store.add_event(&event(i)).unwrap(), i);
        }
        assert_eq!(store.t().events.len() as u64, MAX_EVENTS, "the oldest went");
        let newest = store.events(0, 3).unwrap();
        assert_eq!(
            newest.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [n, n - 1, n - 2]
        );
        assert_eq!(newest[0].detail.len(), MAX_EVENT_DETAIL);
        let next = store.events(newest[2].seq, 2).unwrap();
        assert_eq!(next[0].seq, n - 3);
        // Events 1 to 5 are gone: 6 is the oldest.
        assert!(store.events(6, 10).unwrap().is_empty());
        let oldest = store.events(8, 10).unwrap();
        assert_eq!(oldest.iter().map(|e| e.seq).collect::<Vec<_>>(), [7, 6]);
    }

    #[test]
    fn sessions_end_expire_and_are_bounded() {
        let store = Store::temporary().unwrap();
        store.add_user(&user("ann")).unwrap();
        let session = |user: &str, ends: u64| Session {
            user: user.into(),
            csrf: "c".into(),
            expires_ms: ends,
        };
        store
            .keep_session("s1", &session("ann", 100), 0, 3)
            .unwrap();
        store
            .keep_session("s2", &session("bob", 300), 0, 3)
            .unwrap();
        store
            .keep_session("s3", &session("ann", 200), 0, 3)
            .unwrap();
        // A fourth: the one that ends first goes.
        store
            .keep_session("s4", &session("bob", 400), 0, 3)
            .unwrap();
        assert!(store.session("s1").unwrap().is_none());
        assert_eq!(store.session("s3").unwrap().unwrap().user, "ann");
        // Ended ones go at the next login.
        store
            .keep_session("s5", &session("bob", 500), 350, 3)
            .unwrap();
        assert!(store.session("s2").unwrap().is_none() && store.session("s3").unwrap().is_none());
        store.remove_session("s4").unwrap();
        assert!(store.session("s4").unwrap().is_none());
        store
            .keep_session("s6", &session("ann", 600), 350, 3)
            .unwrap();
        store.remove_user("ann").unwrap();
        assert!(
            store.session("s6").unwrap().is_none(),
            "a removed user's sessions end"
        );
        assert!(store.session("s5").unwrap().is_some());
    }
}
