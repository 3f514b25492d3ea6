use std::net::TcpListener;
use std::path::Path;

use tourney_tests::http::Receiver;

use super::*;

#[test]
fn hmac_matches_rfc_4231() {
    assert_eq!(
        hex::encode(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    // A key longer than a block is hashed first (RFC 4231, test case 6).
    assert_eq!(
        hex::encode(hmac_sha256(
            &[0xaa; 131],
            b"Test Using Larger Than Block-Size Key - Hash Key First"
        )),
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    );
}

#[test]
fn the_settings_name_what_is_wrong() {
    let ok = NotifySettings::parse(
        "dashboard = \"http://d\"\n[[webhook]]\nurl = \"https://hooks.example/x?y=1\"\nevents = [\"sprt\"]\n",
        "hooks.toml",
        Path::new("."),
    )
    .unwrap();
    assert_eq!(ok.webhooks[0].retries, 5);
    assert_eq!(
        Target::parse("https://hooks.example/x?y=1").unwrap(),
        Target {
            tls: true,
            host: "hooks.example".into(),
            port: 443,
            authority: "hooks.example".into(),
            path: "/x?y=1".into()
        }
    );
    assert_eq!(Target::parse("http://127.0.0.1:9/").unwrap().port, 9);
    let wrong = |text: &str| NotifySettings::parse(text, "hooks.toml", Path::new(".")).unwrap_err();
    assert!(wrong("[[webhook]]\nurl = \"ftp://x\"\n").contains("webhook[0].url"));
    assert!(wrong("[[webhook]]\nurl = \"http://x\"\nevents = [\"lunch\"]\n").contains("lunch"));
    assert!(
        wrong("[[webhook]]\nurl = \"http://x\"\nsecret_file = \"/nonexistent\"\n")
            .contains("secret_file")
    );
    assert!(wrong("[[webhook]]\nurl = \"http://x\"\nurl2 = 1\n").contains("url2"));
    // The example the docs point at.
    let example = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../config/webhooks.toml"
    ));
    let example = NotifySettings::read(example).unwrap();
    assert_eq!(example.webhooks[0].events.as_ref().unwrap().len(), 4);
}

fn settings(port: u16, retries: u32) -> NotifySettings {
    NotifySettings {
        dashboard: String::new(),
        queue: 100,
        webhooks: vec![Webhook {
            url: format!("http://127.0.0.1:{port}/hook"),
            secret: Some("s3cret".into()),
            secret_file: None,
            events: Some(vec![EventKind::Sprt, EventKind::Paused]),
            retries,
            retry_ms: 50,
            timeout_ms: 2000,
        }],
    }
}

async fn until(what: impl Fn() -> bool) {
    for _ in 0..400 {
        if what() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("not reached in 10 s");
}

fn count(registry: &Registry, result: &str) -> u64 {
    registry
        .gather()
        .iter()
        .filter(|f| f.name() == "tourney_webhook_deliveries_total")
        .flat_map(|f| f.get_metric().iter())
        .filter(|m| m.get_label().iter().any(|l| l.value() == result))
        .map(|m| m.get_counter().get_value() as u64)
        .sum()
}

#[tokio::test]
async fn a_delivery_is_signed_and_retried_until_the_receiver_takes_it() {
    let receiver = Receiver::start(TcpListener::bind("127.0.0.1:0").unwrap(), &[500, 503, 200]);
    let registry = Registry::new();
    let notifier = Notifier::start(&settings(receiver.port, 5), &registry);
    let body = serde_json::json!({"event": "sprt", "verdict": "H1"});
    notifier.send(EventKind::Sprt, &body);
    // An event the webhook does not want is not sent.
    notifier.send(EventKind::Finished, &body);
    until(|| count(&registry, "delivered") == 1).await;
    let seen = receiver.taken();
    assert_eq!(seen.len(), 3, "two failures, then delivered");
    let sent = &seen[2];
    assert_eq!(sent.body, body.to_string().as_bytes());
    assert!(
        sent.head.starts_with("POST /hook HTTP/1.1"),
        "{}",
        sent.head
    );
    assert_eq!(sent.header("x-tourney-event"), Some("sprt"));
    let expected = signature("s3cret", &sent.body);
    assert_eq!(
        sent.header("x-tourney-signature-256"),
        Some(expected.as_str())
    );
    // Every attempt is the same delivery.
    assert_eq!(
        seen[0].header("x-tourney-delivery"),
        sent.header("x-tourney-delivery")
    );
    assert_eq!(count(&registry, "failed"), 0);
}

#[tokio::test]
async fn a_receiver_that_is_down_gets_it_when_it_comes_back_or_it_fails_counted() {
    // A port nobody listens on (for now).
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let registry = Registry::new();
    let notifier = Notifier::start(&settings(port, 6), &registry);
    notifier.send(EventKind::Paused, &serde_json::json!({"event": "paused"}));
    // Retries at 50, 100, 200, 400 ms...: the receiver starts after the first few.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(count(&registry, "delivered"), 0);
    let receiver = Receiver::start(TcpListener::bind(("127.0.0.1", port)).unwrap(), &[200]);
    until(|| count(&registry, "delivered") == 1).await;
    assert_eq!(receiver.taken().len(), 1);

    // Down for good: out of retries, counted as failed; nothing blocks meanwhile.
    let gone = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let registry = Registry::new();
    let notifier = Notifier::start(&settings(gone, 2), &registry);
    let started = std::time::Instant::now();
    notifier.send(EventKind::Paused, &serde_json::json!({}));
    assert!(
        started.elapsed() < Duration::from_millis(50),
        "send does not wait"
    );
    until(|| count(&registry, "failed") == 1).await;
}

#[tokio::test]
async fn a_full_queue_drops_and_counts_instead_of_waiting() {
    // A receiver that takes connections and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let mut s = settings(port, 0);
    s.queue = 2;
    s.webhooks[0].timeout_ms = 5_000;
    let registry = Registry::new();
    let notifier = Notifier::start(&s, &registry);
    let started = std::time::Instant::now();
    for _ in 0..40 {
        notifier.send(EventKind::Sprt, &serde_json::json!({}));
    }
    assert!(started.elapsed() < Duration::from_millis(200));
    // At most IN_FLIGHT under way and 2 waiting (one more may sit with the dispatcher),
    // and at least the 2 the queue holds were taken.
    until(|| count(&registry, "dropped") >= (40 - IN_FLIGHT - 3) as u64).await;
    assert!(count(&registry, "dropped") <= 38);
}
