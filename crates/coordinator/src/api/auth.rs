//! Who may call: bearer tokens, each with a name, checked in constant time on every call
//! and replaceable while the server runs (an operator cuts one worker host off by removing
//! its line and sending SIGHUP).

use std::sync::{Arc, RwLock};

use prometheus::IntCounter;
use tonic::{Request, Status as GrpcStatus};

use crate::accounts::Principal;
use crate::fleet::same_secret;

/// The name of the token a call carried (`"open"` when the service checks none), put in
/// the request's extensions by [`Auth::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenName(pub String);

/// The longest token name.
pub const MAX_TOKEN_NAME: usize = 64;
/// The most tokens a file may hold.
pub const MAX_TOKENS: usize = 10_000;

/// A set of named tokens, shared by the server's interceptors and whoever reloads them.
#[derive(Debug, Clone, Default)]
pub struct Tokens(Arc<RwLock<Vec<(String, String)>>>);

/// What is wrong with a token file, with its line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct TokenFileError {
    /// The file.
    pub file: String,
    /// The line, from 1 (0: the file as a whole).
    pub line: usize,
    /// What is wrong (never the token itself).
    pub message: String,
}

impl Tokens {
    /// Tokens from `(name, token)` pairs.
    pub fn new(tokens: Vec<(String, String)>) -> Self {
        Tokens(Arc::new(RwLock::new(tokens)))
    }

    /// Reads a token file: one token alone (named `default`), or lines of `name token`;
    /// blank lines and `#` comments are skipped. Names are letters, digits, `.`, `_` and
    /// `-`, unique; tokens unique, printable, without spaces; at least one.
    ///
    /// # Errors
    /// The first line that is not right, or a file without a token; the message never
    /// contains a token.
    pub fn parse(text: &str, file: &str) -> Result<Vec<(String, String)>, TokenFileError> {
        let error = |line: usize, message: String| TokenFileError {
            file: file.to_string(),
            line,
            message,
        };
        let lines: Vec<(usize, Vec<&str>)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
            .filter(|(_, fields)| fields.first().is_some_and(|f| !f.starts_with('#')))
            .collect();
        let mut tokens: Vec<(String, String)> = Vec::with_capacity(lines.len());
        for (n, fields) in &lines {
            let (name, token) = match fields.as_slice() {
                [token] if lines.len() == 1 => ("default", *token),
                [_] => {
                    return Err(error(
                        *n,
                        "a file of several tokens needs `name token` on each line".into(),
                    ));
                }
                [name, token] => (*name, *token),
                _ => return Err(error(*n, "expected `name token`".into())),
            };
            let good_name = !name.is_empty()
                && name.len() <= MAX_TOKEN_NAME
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
            if !good_name {
                return Err(error(
                    *n,
                    format!(
                        "the token name must be 1 to {MAX_TOKEN_NAME} letters, digits, '.', '_' or '-'"
                    ),
                ));
            }
            if !token.chars().all(|c| c.is_ascii_graphic()) {
                return Err(error(
                    *n,
                    format!("token '{name}' has unprintable characters"),
                ));
            }
            if tokens.iter().any(|(other, _)| other == name) {
                return Err(error(*n, format!("token name '{name}' is used twice")));
            }
            if tokens
                .iter()
                .any(|(_, other)| same_secret(other.as_bytes(), token.as_bytes()))
            {
                return Err(error(*n, format!("token '{name}' repeats another's")));
            }
            tokens.push((name.to_string(), token.to_string()));
            if tokens.len() > MAX_TOKENS {
                return Err(error(*n, format!("more than {MAX_TOKENS} tokens")));
            }
        }
        if tokens.is_empty() {
            return Err(error(
                0,
                "no token in the file (an empty token is refused)".into(),
            ));
        }
        Ok(tokens)
    }

    /// Replaces the tokens (a reload); calls with a removed token are refused from now on.
    pub fn replace(&self, tokens: Vec<(String, String)>) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = tokens;
    }

    /// The names of the tokens.
    pub fn names(&self) -> Vec<String> {
        let tokens = self.0.read().unwrap_or_else(|e| e.into_inner());
        tokens.iter().map(|(name, _)| name.clone()).collect()
    }

    /// The name of the token equal to `given`: every token is compared, each in constant
    /// time, so the answer's timing says nothing of which one matched or how closely.
    pub fn name_of(&self, given: &str) -> Option<String> {
        let tokens = self.0.read().unwrap_or_else(|e| e.into_inner());
        let mut found = None;
        for (name, token) in tokens.iter() {
            if same_secret(token.as_bytes(), given.as_bytes()) && found.is_none() {
                found = Some(name);
            }
        }
        found.cloned()
    }
}

/// Finds the user whose personal token a call carries (see
/// [`crate::state::Coordinator::principal_of_token`]).
pub type PersonalTokens = Arc<dyn Fn(&str) -> Option<Principal> + Send + Sync>;

/// Checks `authorization: Bearer <token>` against a service's tokens (if it has any) and,
/// for the Admin service, users' personal tokens, counting refusals; tells the service
/// which token it was ([`TokenName`]) and who is calling ([`Principal`]).
#[derive(Clone)]
pub struct Auth {
    tokens: Option<Tokens>,
    personal: Option<PersonalTokens>,
    /// Counts calls refused for a missing or wrong token.
    failures: IntCounter,
}

impl Auth {
    /// Requires one of `tokens` (`None`: no check).
    pub fn new(tokens: Option<Tokens>, failures: IntCounter) -> Self {
        Auth {
            tokens,
            personal: None,
            failures,
        }
    }

    /// Also takes users' personal tokens, found by `personal`.
    pub fn with_personal_tokens(mut self, personal: PersonalTokens) -> Self {
        self.personal = Some(personal);
        self
    }

    /// The interceptor function for tonic.
    #[allow(clippy::result_large_err)] // tonic's interceptor signature
    pub fn check(&self, mut request: Request<()>) -> Result<Request<()>, GrpcStatus> {
        let given = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let operator = match &self.tokens {
            None => Some("open".to_string()),
            Some(tokens) => given.and_then(|given| tokens.name_of(given)),
        };
        // A user's own token names the user even where the service checks no token.
        let user = (self.personal.as_ref())
            .zip(given)
            .and_then(|(personal, given)| personal(given));
        let principal = match (user, operator) {
            (Some(user), _) => user,
            (None, Some(name)) => Principal::operator(&name),
            (None, None) => {
                self.failures.inc();
                return Err(GrpcStatus::unauthenticated("missing or wrong token"));
            }
        };
        request
            .extensions_mut()
            .insert(TokenName(principal.name.clone()));
        request.extensions_mut().insert(principal);
        Ok(request)
    }
}

/// The name of the token `request` carried (set by [`Auth::check`]).
pub fn token_name<T>(request: &Request<T>) -> String {
    request
        .extensions()
        .get::<TokenName>()
        .map_or_else(|| "open".to_string(), |t| t.0.clone())
}

/// Who made `request` (set by [`Auth::check`]; the open operator when nothing checked it).
pub fn principal<T>(request: &Request<T>) -> Principal {
    request
        .extensions()
        .get::<Principal>()
        .cloned()
        .unwrap_or_else(|| Principal::operator("open"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_token_is_named_default_and_named_lines_keep_their_names() {
        assert_eq!(
            Tokens::parse("  s3cret-token \n", "w").unwrap(),
            [("default".to_string(), "s3cret-token".to_string())]
        );
        let text = "# hosts\nbox1 aaaaaaaaaaaa\n\nbox2   bbbbbbbbbbbb  \n";
        let tokens = Tokens::new(Tokens::parse(text, "w").unwrap());
        assert_eq!(tokens.names(), ["box1", "box2"]);
        assert_eq!(tokens.name_of("bbbbbbbbbbbb").as_deref(), Some("box2"));
        assert_eq!(tokens.name_of("bbbbbbbbbbb"), None);
        assert_eq!(tokens.name_of(""), None);
        // A reload cuts a host off and keeps the others.
        tokens.replace(Tokens::parse("box2 bbbbbbbbbbbb\n", "w").unwrap());
        assert_eq!(tokens.name_of("aaaaaaaaaaaa"), None);
        assert_eq!(tokens.name_of("bbbbbbbbbbbb").as_deref(), Some("box2"));
    }

    #[test]
    fn bad_token_files_are_refused_with_the_line_and_never_the_token() {
        for (text, line, says) in [
            ("", 0, "no token in the file"),
            ("  \n# only a comment\n", 0, "no token"),
            ("a\nb\n", 1, "needs `name token`"),
            ("x y z\n", 1, "expected `name token`"),
            ("bad/name tok3n\n", 1, "token name must be"),
            ("a tok3n\na tok4n\n", 2, "used twice"),
            ("a tok3n\nb tok3n\n", 2, "repeats another's"),
        ] {
            let e = Tokens::parse(text, "tokens.txt").unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(says), "{text:?}: {e}");
            assert!(!e.to_string().contains("tok3n"), "{e}");
        }
    }

    #[test]
    fn calls_carry_the_name_of_their_token_or_are_refused() {
        let failures = IntCounter::new("f", "f").unwrap();
        let auth = Auth::new(
            Some(Tokens::new(vec![("box1".into(), "t0ken".into())])),
            failures.clone(),
        );
        let call = |bearer: Option<&str>| {
            let mut r = Request::new(());
            if let Some(b) = bearer {
                r.metadata_mut().insert("authorization", b.parse().unwrap());
            }
            auth.check(r).map(|r| token_name(&r))
        };
        assert_eq!(call(Some("Bearer t0ken")).unwrap(), "box1");
        for bad in [None, Some("Bearer "), Some("Bearer t0ke"), Some("t0ken")] {
            assert_eq!(call(bad).unwrap_err().code(), tonic::Code::Unauthenticated);
        }
        assert_eq!(failures.get(), 4);
        let open = Auth::new(None, failures);
        assert_eq!(token_name(&open.check(Request::new(())).unwrap()), "open");
    }
}
