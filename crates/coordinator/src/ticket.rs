//! Lease tickets: the coordinator's seal on each pair it leases (HMAC-SHA256 under a key
//! kept in the store), over what the pair's records must say: its tournament and pair,
//! the worker's host and token, and both engines as the records name them (a tuning run's
//! values included). A worker sends the ticket back with the result. A result whose records
//! name other engines does not match; a result of a lease the coordinator no longer knows
//! (it restarted, or the worker registered again) is believed on a matching ticket.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use tourney_model::job::Identity;

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
pub(crate) fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// What a ticket seals: a pair, who it was leased to, and its two engines (the first
/// engine of the pairing, then the second) as their records name them.
pub(crate) struct Sealed<'a> {
    /// The tournament.
    pub tournament: u64,
    /// The pair.
    pub pair: u64,
    /// The worker's host (its name without the registration's suffix).
    pub host: &'a str,
    /// The name of the worker token it registered with.
    pub token: &'a str,
    /// Both engines as the records name them.
    pub engines: [&'a Identity; 2],
}

impl Sealed<'_> {
    /// The ticket of this pair under `key`, as hex.
    pub(crate) fn ticket(&self, key: &[u8; 32]) -> String {
        let mut message = Vec::with_capacity(256);
        let mut field = |bytes: &[u8]| {
            message.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            message.extend_from_slice(bytes);
        };
        field(&self.tournament.to_le_bytes());
        field(&self.pair.to_le_bytes());
        field(self.host.as_bytes());
        field(self.token.as_bytes());
        for engine in self.engines {
            field(engine.name.as_bytes());
            field(engine.spec.as_bytes());
            field(engine.artifact.as_deref().unwrap_or_default().as_bytes());
            for (name, value) in &engine.options {
                field(name.as_bytes());
                field(value.as_bytes());
            }
            field(b"end");
        }
        hex::encode(hmac_sha256(key, &message))
    }

    /// Whether `ticket` is this pair's ticket under `key` (in time independent of where
    /// they differ).
    pub(crate) fn matches(&self, key: &[u8; 32], ticket: &str) -> bool {
        crate::fleet::same_secret(self.ticket(key).as_bytes(), ticket.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_model::job::{Engine, EngineKind};

    #[test]
    fn hmac_is_rfc_4231s() {
        // RFC 4231, test cases 1 and 2.
        assert_eq!(
            hex::encode(hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_ticket_seals_the_pair_the_host_and_each_engine_as_leased() {
        let key = [7u8; 32];
        let engine = |name: &str, spec: &str| {
            Engine {
                name: name.into(),
                kind: EngineKind::BuiltIn(spec.into()),
                limits: None,
            }
            .identity()
        };
        let (a, b) = (
            engine("a", "ab:connectedness=8"),
            engine("b", "ab:connectedness=32"),
        );
        let sealed = |pair, host, engines| Sealed {
            tournament: 3,
            pair,
            host,
            token: "open",
            engines,
        };
        let ticket = sealed(5, "w1", [&a, &b]).ticket(&key);
        assert!(sealed(5, "w1", [&a, &b]).matches(&key, &ticket));
        let played_at = engine("a", "ab:connectedness=150");
        for (what, other) in [
            ("another pair", sealed(6, "w1", [&a, &b])),
            ("another host", sealed(5, "w2", [&a, &b])),
            ("seats swapped", sealed(5, "w1", [&b, &a])),
            ("other values", sealed(5, "w1", [&played_at, &b])),
        ] {
            assert!(!other.matches(&key, &ticket), "{what}");
        }
        assert!(
            !sealed(5, "w1", [&a, &b]).matches(&[8u8; 32], &ticket),
            "another key"
        );
        let outside = Engine {
            name: "x".into(),
            kind: EngineKind::Outside {
                command: "./x --fast".into(),
                artifact_sha256: Some("ab".repeat(32)),
                options: vec![("Hash".into(), "16".into())],
                source: None,
                files: Vec::new(),
                bench: None,
                reference_nps: None,
                protocol: String::new(),
                threads: 1,
            },
            limits: None,
        }
        .identity();
        let mut other_option = outside.clone();
        other_option.options.insert("Hash".into(), "64".into());
        let ticket = sealed(5, "w1", [&outside, &b]).ticket(&key);
        assert!(!sealed(5, "w1", [&other_option, &b]).matches(&key, &ticket));
    }
}
