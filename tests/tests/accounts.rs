//! Accounts over the Admin service on a real server: users and roles made with the
//! operator's token, personal tokens that name their user, what each role may do, who
//! submitted a test, and the events log that says who did what.

use tonic::Code;
use tourney_coordinator::api::auth::Tokens;
use tourney_coordinator::api::server::ServerOptions;
use tourney_coordinator::{Coordinator, Settings};
use tourney_proto::v1 as pb;
use tourney_proto::v1::admin_client::AdminClient;
use tourney_store::Store;
use tourney_tests::http::request_with;
use tourney_tests::served;
use tourney_tests::tournaments::MatchFile;
use tourney_worker::{TokenInterceptor, connect};

type Admin = AdminClient<
    tonic::service::interceptor::InterceptedService<tonic::transport::Channel, TokenInterceptor>,
>;

const OPERATOR: &str = "operator-secret";

/// A coordinator served on loopback with one operator token; its address.
async fn start(dir: &tempfile::TempDir) -> String {
    start_with(dir, Settings::default()).await
}

/// [`start`] with `settings`.
async fn start_with(dir: &tempfile::TempDir, settings: Settings) -> String {
    let store = Store::open(dir.path()).unwrap();
    let coordinator = Coordinator::open(store, settings, &prometheus::Registry::new()).unwrap();
    let options = ServerOptions {
        admin_tokens: Some(Tokens::new(vec![("ops".into(), OPERATOR.into())])),
        ..ServerOptions::default()
    };
    format!("http://{}", served::on_loopback(coordinator, options).await)
}

async fn client(addr: &str, token: &str) -> Admin {
    AdminClient::with_interceptor(
        connect(addr, None).await.unwrap(),
        TokenInterceptor::new(Some(token)),
    )
}

async fn add_user(ops: &mut Admin, name: &str, role: &str) {
    ops.add_user(pb::AddUserRequest {
        name: name.into(),
        role: role.into(),
        password: format!("{name}-long-password"),
    })
    .await
    .unwrap();
}

/// A personal token of `user`, made by the operator.
async fn token_of(ops: &mut Admin, user: &str) -> String {
    let made = ops
        .create_token(pb::CreateTokenRequest {
            user: user.into(),
            label: "test".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(made.token.starts_with("tourney_") && made.token.len() > 40);
    made.token
}

fn match_file() -> pb::SubmitRequest {
    pb::SubmitRequest {
        config: MatchFile {
            name: "accounts",
            pairs: 2,
            ..Default::default()
        }
        .toml(),
        file: "accounts.toml".into(),
        ..Default::default()
    }
}

async fn report_text(client: &mut Admin, id: u64) -> String {
    let asked = pb::GetReportRequest {
        id,
        format: "text".into(),
        ..Default::default()
    };
    client.get_report(asked).await.unwrap().into_inner().content
}

fn code<T: std::fmt::Debug>(result: Result<T, tonic::Status>) -> Code {
    result.map_or_else(|e| e.code(), |_| Code::Ok)
}

#[tokio::test]
async fn roles_decide_what_each_caller_may_do_and_events_say_who_did_it() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let mut ops = client(&addr, OPERATOR).await;
    let me = ops
        .who_am_i(pb::WhoAmIRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (me.name.as_str(), me.role.as_str(), me.operator),
        ("ops", "admin", true)
    );
    for (name, role) in [("ann", "user"), ("bob", "user"), ("vera", "viewer")] {
        add_user(&mut ops, name, role).await;
    }
    add_user(&mut ops, "apu", "approver").await;
    let refused = ops
        .add_user(pb::AddUserRequest {
            name: "<b>x</b>".into(),
            role: "user".into(),
            password: String::new(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::InvalidArgument);
    assert!(refused.message().contains("user name"), "{refused:?}");
    let short = ops
        .add_user(pb::AddUserRequest {
            name: "sam".into(),
            role: "user".into(),
            password: "short".into(),
        })
        .await
        .unwrap_err();
    assert!(short.message().contains("password is"), "{short:?}");

    let mut ann = client(&addr, &token_of(&mut ops, "ann").await).await;
    let mut bob = client(&addr, &token_of(&mut ops, "bob").await).await;
    let mut vera = client(&addr, &token_of(&mut ops, "vera").await).await;
    let mut apu = client(&addr, &token_of(&mut ops, "apu").await).await;
    let who = ann
        .who_am_i(pb::WhoAmIRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (who.name.as_str(), who.role.as_str(), who.operator),
        ("ann", "user", false)
    );

    // A viewer reads but does not submit; a user submits and the test is theirs.
    assert_eq!(
        code(vera.submit(match_file()).await),
        Code::PermissionDenied
    );
    let id = ann.submit(match_file()).await.unwrap().into_inner().id;
    let status = vera
        .status(pb::StatusRequest { id })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(status.author, "ann");

    // Another user may not stop it, nor a viewer; an approver may change it.
    assert_eq!(
        code(bob.cancel(pb::CancelRequest { id }).await),
        Code::PermissionDenied
    );
    assert_eq!(
        code(vera.cancel(pb::CancelRequest { id }).await),
        Code::PermissionDenied
    );
    let denied = bob.cancel(pb::CancelRequest { id }).await.unwrap_err();
    assert!(denied.message().contains("only its author"), "{denied:?}");
    assert_eq!(code(apu.cancel(pb::CancelRequest { id }).await), Code::Ok);
    let second = ann.submit(match_file()).await.unwrap().into_inner().id;
    assert_eq!(
        code(ann.cancel(pb::CancelRequest { id: second }).await),
        Code::Ok
    );

    // Managing users is an admin's; a user manages its own tokens and password only.
    assert_eq!(
        code(ann.list_users(pb::ListUsersRequest {}).await),
        Code::PermissionDenied
    );
    assert_eq!(
        code(
            ann.create_token(pb::CreateTokenRequest {
                user: "bob".into(),
                label: String::new(),
            })
            .await
        ),
        Code::PermissionDenied
    );
    let own = ann
        .create_token(pb::CreateTokenRequest {
            user: String::new(),
            label: "laptop".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let listed = ann
        .list_tokens(pb::ListTokensRequest::default())
        .await
        .unwrap()
        .into_inner()
        .tokens;
    assert_eq!(listed.len(), 2);
    assert!(listed.iter().any(|t| t.id == own.id && t.label == "laptop"));
    assert!(
        !format!("{listed:?}").contains(&own.token),
        "a token is shown once"
    );
    assert_eq!(
        code(
            ann.set_user(pb::SetUserRequest {
                name: "ann".into(),
                role: "admin".into(),
                password: String::new(),
            })
            .await
        ),
        Code::PermissionDenied,
        "nobody raises their own role"
    );
    ann.set_user(pb::SetUserRequest {
        name: "ann".into(),
        role: String::new(),
        password: "a-new-long-password".into(),
    })
    .await
    .unwrap();

    // A revoked token, and the tokens of a removed user, are refused from then on.
    let mut laptop = client(&addr, &own.token).await;
    assert_eq!(code(laptop.who_am_i(pb::WhoAmIRequest {}).await), Code::Ok);
    ann.revoke_token(pb::RevokeTokenRequest {
        user: String::new(),
        id: own.id.clone(),
    })
    .await
    .unwrap();
    assert_eq!(
        code(laptop.who_am_i(pb::WhoAmIRequest {}).await),
        Code::Unauthenticated
    );
    ops.remove_user(pb::RemoveUserRequest { name: "bob".into() })
        .await
        .unwrap();
    assert_eq!(
        code(bob.list(pb::ListRequest::default()).await),
        Code::Unauthenticated
    );
    let users = ops
        .list_users(pb::ListUsersRequest {})
        .await
        .unwrap()
        .into_inner()
        .users;
    let names: Vec<&str> = users.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["ann", "apu", "vera"]);
    assert!(users.iter().all(|u| u.has_password));

    // The events log: each step, newest first, with who did it.
    let events = vera
        .list_events(pb::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events;
    let said: Vec<(String, String, String)> = events
        .iter()
        .map(|e| (e.who.clone(), e.action.clone(), e.subject.clone()))
        .collect();
    let has = |who: &str, action: &str, subject: &str| {
        said.contains(&(who.into(), action.into(), subject.into()))
    };
    assert!(
        has("ann", "submitted", &format!("tournament {id}")),
        "{said:?}"
    );
    assert!(
        has("apu", "cancelled", &format!("tournament {id}")),
        "{said:?}"
    );
    assert!(has("ann", "cancelled", &format!("tournament {second}")));
    assert!(has("ops", "user-added", "user vera"));
    assert!(has("ann", "token-revoked", "user ann"));
    assert!(has("ann", "password-changed", "user ann"));
    assert!(has("ops", "user-removed", "user bob"));
    assert_eq!(
        said[0],
        ("ops".into(), "user-removed".into(), "user bob".into())
    );
    assert!(events.windows(2).all(|w| w[0].seq > w[1].seq));
    let older = vera
        .list_events(pb::ListEventsRequest {
            before: events[1].seq,
            limit: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .events;
    assert_eq!(older.len(), 1);
    assert_eq!(older[0].seq, events[2].seq);
}

#[tokio::test]
async fn a_users_test_waits_for_an_approver_other_than_its_author() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let mut ops = client(&addr, OPERATOR).await;
    for (name, role) in [("ann", "user"), ("bob", "user"), ("apu", "approver")] {
        add_user(&mut ops, name, role).await;
    }
    add_user(&mut ops, "ada", "admin").await;
    let mut ann = client(&addr, &token_of(&mut ops, "ann").await).await;
    let mut bob = client(&addr, &token_of(&mut ops, "bob").await).await;
    let mut apu = client(&addr, &token_of(&mut ops, "apu").await).await;
    let mut ada = client(&addr, &token_of(&mut ops, "ada").await).await;
    let id = ann.submit(match_file()).await.unwrap().into_inner().id;
    let state = |s: pb::TournamentStatus| s.state;
    let status = ann
        .status(pb::StatusRequest { id })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(state(status), "pending");
    let report = report_text(&mut ann, id).await;
    assert!(report.contains("Waiting for approval"), "{report}");

    // Neither its author nor another user approves it; an approver does, once.
    let approve = pb::ApproveRequest { id };
    assert_eq!(code(ann.approve(approve).await), Code::PermissionDenied);
    assert_eq!(code(bob.approve(approve).await), Code::PermissionDenied);
    apu.approve(approve).await.unwrap();
    let status = ann
        .status(pb::StatusRequest { id })
        .await
        .unwrap()
        .into_inner();
    assert_ne!(status.state, "pending");
    assert_eq!(code(apu.approve(approve).await), Code::FailedPrecondition);
    let report = report_text(&mut ann, id).await;
    assert!(report.contains("ann, approved by apu"), "{report}");

    // An approver's own test, an admin's and the operator's start at once.
    for who in [&mut apu, &mut ada, &mut ops] {
        let own = who.submit(match_file()).await.unwrap().into_inner().id;
        let status = who
            .status(pb::StatusRequest { id: own })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(status.state, "queued");
    }
    let events = ops
        .list_events(pb::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner()
        .events;
    assert!(events.iter().any(|e| e.who == "apu"
        && e.action == "approved"
        && e.subject == format!("tournament {id}")));
}

/// A logged-in browser: its session cookie and CSRF token.
struct Browser {
    host: String,
    cookie: String,
    csrf: String,
}

impl Browser {
    /// Logs `name` in with the password [`add_user`] gave it.
    fn login(host: &str, name: &str) -> Browser {
        let body = format!(r#"{{"name": "{name}", "password": "{name}-long-password"}}"#);
        let (code, head, answer) =
            request_with("POST", host, "/api/v1/login", &[], Some(&body)).unwrap();
        assert_eq!(code, 200, "{answer}");
        let set = head
            .lines()
            .find_map(|l| l.strip_prefix("set-cookie: "))
            .expect("a session cookie");
        for flag in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
            assert!(set.contains(flag), "{set}");
        }
        assert!(!set.contains("Secure"), "no TLS here: {set}");
        let cookie = set.split(';').next().unwrap().to_string();
        let csrf = serde_json::from_str::<serde_json::Value>(&answer).unwrap()["csrf"]
            .as_str()
            .unwrap()
            .to_string();
        Browser {
            host: host.to_string(),
            cookie,
            csrf,
        }
    }

    /// `POST path` with the session and its CSRF token; the status code.
    fn post(&self, path: &str) -> u16 {
        self.post_json(path, "")
    }

    /// `POST path` with `body`, the session and its CSRF token; the status code.
    fn post_json(&self, path: &str, body: &str) -> u16 {
        let headers = [
            ("Cookie", self.cookie.as_str()),
            ("X-CSRF-Token", self.csrf.as_str()),
        ];
        request_with("POST", &self.host, path, &headers, Some(body))
            .unwrap()
            .0
    }

    fn get(&self, path: &str) -> (u16, String) {
        let (code, _, body) =
            request_with("GET", &self.host, path, &[("Cookie", &self.cookie)], None).unwrap();
        (code, body)
    }
}

#[tokio::test]
async fn the_dashboards_logins_and_actions_check_sessions_csrf_and_roles() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let host = addr.trim_start_matches("http://").to_string();
    let mut ops = client(&addr, OPERATOR).await;
    for (name, role) in [("ann", "user"), ("bob", "user"), ("vera", "viewer")] {
        add_user(&mut ops, name, role).await;
    }
    add_user(&mut ops, "apu", "approver").await;
    add_user(&mut ops, "ada", "admin").await;
    let mut ann_api = client(&addr, &token_of(&mut ops, "ann").await).await;
    let id = ann_api.submit(match_file()).await.unwrap().into_inner().id;

    let host_ = host.clone();
    let (ann, bob, vera, apu, ada) = tokio::task::spawn_blocking(move || {
        let l = |n: &str| Browser::login(&host_, n);
        (l("ann"), l("bob"), l("vera"), l("apu"), l("ada"))
    })
    .await
    .unwrap();
    let check = move || {
        // Anonymous: nothing but the login.
        let anonymous =
            |method: &str, path: &str| request_with(method, &host, path, &[], None).unwrap().0;
        assert_eq!(anonymous("GET", "/api/v1/me"), 401);
        assert_eq!(anonymous("GET", "/api/v1/log"), 401);
        assert_eq!(
            anonymous("POST", &format!("/api/v1/tournaments/{id}/approve")),
            401
        );
        assert_eq!(anonymous("POST", "/api/v1/logout"), 401);

        // Who each is.
        let (code, me) = vera.get("/api/v1/me");
        assert_eq!(code, 200);
        assert!(
            me.contains(r#""name":"vera""#) && me.contains(r#""role":"viewer""#),
            "{me}"
        );

        // Approval: not a viewer, not its author, not another user; an approver, once.
        let approve = format!("/api/v1/tournaments/{id}/approve");
        assert_eq!(vera.post(&approve), 403);
        assert_eq!(ann.post(&approve), 403);
        assert_eq!(bob.post(&approve), 403);
        // Without the CSRF token, or with another session's, nothing is done.
        let bare = [("Cookie", apu.cookie.as_str())];
        assert_eq!(
            request_with("POST", &host, &approve, &bare, None)
                .unwrap()
                .0,
            403
        );
        let crossed = [
            ("Cookie", apu.cookie.as_str()),
            ("X-CSRF-Token", ann.csrf.as_str()),
        ];
        assert_eq!(
            request_with("POST", &host, &approve, &crossed, None)
                .unwrap()
                .0,
            403
        );
        assert_eq!(apu.post(&approve), 200);
        assert_eq!(apu.post(&approve), 409, "not pending any more");

        // A tournament file from the page: a viewer may not; a user's waits for approval;
        // a bad file is refused with the TOML path's message.
        let file =
            |toml: &str| serde_json::json!({ "file": "mine.toml", "toml": toml }).to_string();
        let good = file(&match_file().config);
        assert_eq!(vera.post_json("/api/v1/tournaments", &good), 403);
        let bare = [("Cookie", bob.cookie.as_str())];
        let unsigned = request_with("POST", &host, "/api/v1/tournaments", &bare, Some(&good));
        assert_eq!(unsigned.unwrap().0, 403, "no CSRF token");
        let headers = [
            ("Cookie", bob.cookie.as_str()),
            ("X-CSRF-Token", bob.csrf.as_str()),
        ];
        let (code, _, made) =
            request_with("POST", &host, "/api/v1/tournaments", &headers, Some(&good)).unwrap();
        assert_eq!(code, 200, "{made}");
        let made: serde_json::Value = serde_json::from_str(&made).unwrap();
        assert_eq!(made["state"], "pending");
        let bad = file("name = \"x\"\ngame = \"chess\"\n");
        let (code, _, said) =
            request_with("POST", &host, "/api/v1/tournaments", &headers, Some(&bad)).unwrap();
        assert_eq!(code, 400);
        assert!(
            said.contains("mine.toml:2") && said.contains("game"),
            "{said}"
        );

        // Its share of the workers: its author and an approver, not another user.
        let modify = format!("/api/v1/tournaments/{id}/modify");
        assert_eq!(bob.post_json(&modify, r#"{"priority": 5}"#), 403);
        assert_eq!(vera.post_json(&modify, r#"{"priority": 5}"#), 403);
        assert_eq!(
            ann.post_json(&modify, r#"{"priority": 5, "weight": 2}"#),
            200
        );
        assert_eq!(apu.post_json(&modify, r#"{"weight": 3}"#), 200);
        assert_eq!(ann.post_json(&modify, r#"{"weight": -1}"#), 400);
        assert_eq!(ann.post_json(&modify, "nonsense"), 400);
        let (_, shown) = vera.get(&format!("/api/v1/tournaments/{id}"));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(
            (shown["priority"].as_i64(), shown["weight"].as_f64()),
            (Some(5), Some(3.0))
        );

        // Cancel: not another user, not a viewer; its author may.
        let cancel = format!("/api/v1/tournaments/{id}/cancel");
        assert_eq!(bob.post(&cancel), 403);
        assert_eq!(vera.post(&cancel), 403);
        assert_eq!(ann.post(&cancel), 200);
        assert_eq!(ada.post(&cancel), 409, "already cancelled");
        assert_eq!(ada.post("/api/v1/tournaments/999/cancel"), 404);
        assert_eq!(ada.post(&format!("/api/v1/tournaments/{id}/explode")), 404);

        // The log, to any logged-in user, names who did each step.
        let (code, log) = vera.get("/api/v1/log?limit=5");
        assert_eq!(code, 200);
        let log: Vec<serde_json::Value> = serde_json::from_str(&log).unwrap();
        assert!(log.len() <= 5);
        let did =
            |who: &str, action: &str| log.iter().any(|e| e["who"] == who && e["action"] == action);
        assert!(did("apu", "approved") && did("ann", "cancelled"), "{log:?}");
        assert!(did("apu", "modified"), "{log:?}");

        // Own tokens and password; the users are an admin's.
        let (code, made) = {
            let headers = [
                ("Cookie", ann.cookie.as_str()),
                ("X-CSRF-Token", ann.csrf.as_str()),
            ];
            let body = r#"{"label": "<b>ci</b>"}"#;
            let (code, _, made) = request_with(
                "POST",
                &host,
                "/api/v1/account/tokens",
                &headers,
                Some(body),
            )
            .unwrap();
            (
                code,
                serde_json::from_str::<serde_json::Value>(&made).unwrap(),
            )
        };
        assert_eq!(code, 200);
        let token = made["token"].as_str().unwrap();
        let (code, listed) = ann.get("/api/v1/account/tokens");
        assert_eq!(code, 200);
        assert!(!listed.contains(token), "a token is shown once");
        assert!(
            listed.contains("<b>ci</b>"),
            "kept as given, escaped where shown: {listed}"
        );
        let revoke = format!(
            "/api/v1/account/tokens/{}/revoke",
            made["id"].as_str().unwrap()
        );
        assert_eq!(bob.post(&revoke), 400, "not bob's token");
        assert_eq!(ann.post(&revoke), 200);
        assert_eq!(
            vera.get("/api/v1/account/tokens").0,
            200,
            "a viewer keeps its own"
        );
        assert_eq!(ann.get("/api/v1/account/users").0, 403);
        assert_eq!(apu.get("/api/v1/account/users").0, 403);
        let (code, users) = ada.get("/api/v1/account/users");
        assert_eq!(code, 200);
        assert!(users.contains(r#""name":"vera""#), "{users}");
        let add = |body: &str| ada.post_json("/api/v1/account/users", body);
        assert_eq!(
            add(r#"{"name": "<i>x", "role": "user", "password": ""}"#),
            400
        );
        assert_eq!(
            add(r#"{"name": "sam", "role": "root", "password": ""}"#),
            400
        );
        assert_eq!(
            add(r#"{"name": "sam", "role": "user", "password": "sam's password"}"#),
            200
        );
        assert_eq!(
            ann.post_json(
                "/api/v1/account/users",
                r#"{"name": "eve", "role": "admin"}"#
            ),
            403
        );
        assert_eq!(
            ann.post_json("/api/v1/account/users/ann/role", r#"{"role": "admin"}"#),
            403
        );
        assert_eq!(
            ada.post_json("/api/v1/account/users/sam/role", r#"{"role": "approver"}"#),
            200
        );
        assert_eq!(ada.post("/api/v1/account/users/sam/remove"), 200);
        assert_eq!(ada.post("/api/v1/account/explode"), 404);
        assert_eq!(
            ann.post_json("/api/v1/account/password", r#"{"password": "short"}"#),
            400
        );
        assert_eq!(
            ann.post_json(
                "/api/v1/account/password",
                r#"{"password": "ann-new-long-password"}"#
            ),
            200
        );
        let relogin = r#"{"name": "ann", "password": "ann-new-long-password"}"#;
        assert_eq!(
            request_with("POST", &host, "/api/v1/login", &[], Some(relogin))
                .unwrap()
                .0,
            200
        );

        // Logging out ends the session.
        assert_eq!(bob.post("/api/v1/logout"), 204);
        assert_eq!(bob.get("/api/v1/me").0, 401);
    };
    tokio::task::spawn_blocking(check).await.unwrap();
}

#[tokio::test]
async fn failed_logins_are_throttled_per_user_and_bodies_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let host = addr.trim_start_matches("http://").to_string();
    let mut ops = client(&addr, OPERATOR).await;
    add_user(&mut ops, "ann", "user").await;
    tokio::task::spawn_blocking(move || {
        let try_login = |name: &str, password: &str| {
            let body = format!(r#"{{"name": "{name}", "password": "{password}"}}"#);
            request_with("POST", &host, "/api/v1/login", &[], Some(&body)).unwrap()
        };
        // Guesses at once are reserved before their hash: exactly five are checked,
        // however many come together; the rest wait.
        let codes: Vec<u16> = std::thread::scope(|scope| {
            let guesses: Vec<_> = (0..48)
                .map(|_| scope.spawn(|| try_login("ann", "a wrong password").0))
                .collect();
            guesses.into_iter().map(|g| g.join().unwrap()).collect()
        });
        assert_eq!(codes.iter().filter(|&&c| c == 401).count(), 5, "{codes:?}");
        assert!(codes.iter().all(|&c| c == 401 || c == 429), "{codes:?}");
        // Now even the right password waits, and says how long.
        let (code, head, _) = try_login("ann", "ann-long-password");
        assert_eq!(code, 429);
        let retry: u64 = head
            .lines()
            .find_map(|l| l.strip_prefix("retry-after: "))
            .unwrap()
            .parse()
            .unwrap();
        assert!((1..=900).contains(&retry), "{retry}");
        // An unknown name is refused like a wrong password.
        assert_eq!(try_login("nobody", "whatever-password").0, 401);
        // Every answer carries the page's safety headers.
        let (_, head, _) = request_with("GET", &host, "/", &[], None).unwrap();
        let policy = head
            .lines()
            .find_map(|l| l.strip_prefix("content-security-policy: "))
            .unwrap_or_else(|| panic!("{head}"));
        assert!(
            policy.contains("script-src 'self'") && !policy.contains("unsafe"),
            "{policy}"
        );
        assert!(head.contains("x-frame-options: DENY"), "{head}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
        let huge = format!(r#"{{"name": "ann", "password": "{}"}}"#, "x".repeat(10_000));
        let code = request_with("POST", &host, "/api/v1/login", &[], Some(&huge))
            .unwrap()
            .0;
        assert_eq!(code, 413);
        let code = request_with("POST", &host, "/api/v1/login", &[], Some("not json"))
            .unwrap()
            .0;
        assert_eq!(code, 400);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_login_only_dashboard_shows_its_data_to_logged_in_users_alone() {
    let dir = tempfile::tempdir().unwrap();
    let settings = Settings {
        dashboard_login: true,
        ..Settings::default()
    };
    let addr = start_with(&dir, settings).await;
    let host = addr.trim_start_matches("http://").to_string();
    let mut ops = client(&addr, OPERATOR).await;
    add_user(&mut ops, "vera", "viewer").await;
    let id = ops.submit(match_file()).await.unwrap().into_inner().id;
    tokio::task::spawn_blocking(move || {
        let anonymous = |path: &str| request_with("GET", &host, path, &[], None).unwrap().0;
        // The page and its login are public; the data is not.
        assert_eq!(anonymous("/"), 200);
        assert_eq!(anonymous("/dashboard/app.js"), 200);
        for path in [
            "/api/v1/overview".to_string(),
            "/api/v1/events".to_string(),
            format!("/api/v1/tournaments/{id}"),
            format!("/api/v1/tournaments/{id}/pairs/0"),
            format!("/api/v1/tournaments/{id}/games.pgn"),
            format!("/api/v1/tournaments/{id}/games.jsonl.gz"),
            format!("/api/run_pgns/{id}.pgn.gz"),
            "/api/v1/timeline".to_string(),
            "/timeline".to_string(),
        ] {
            assert_eq!(anonymous(&path), 401, "{path}");
        }
        let vera = Browser::login(&host, "vera");
        assert_eq!(vera.get("/api/v1/overview").0, 200);
        assert_eq!(vera.get(&format!("/api/v1/tournaments/{id}")).0, 200);
        assert_eq!(vera.get(&format!("/api/run_pgns/{id}.pgn.gz")).0, 200);
    })
    .await
    .unwrap();
}

/// Registers a worker named `name` at `version`, telling `cpu` as its CPU model.
async fn register(
    addr: &str,
    name: &str,
    version: &str,
    cpu: &str,
) -> Result<String, tonic::Status> {
    let channel = connect(addr, None).await.unwrap();
    let mut worker = tourney_proto::v1::worker_client::WorkerClient::new(channel);
    let request = pb::RegisterRequest {
        name: name.into(),
        slots: 2,
        version: version.into(),
        games: vec!["loa".into()],
        host: Some(pb::HostFacts {
            cpu_model: cpu.into(),
            cores: 4,
            memory_mb: 8192,
            os: "linux 6.1".into(),
            speed_nps: 2_500_000,
            ..Default::default()
        }),
        ..Default::default()
    };
    worker
        .register(request)
        .await
        .map(|r| r.into_inner().worker_id)
}

#[tokio::test]
async fn machines_are_listed_and_an_admin_blocks_hosts_and_old_workers() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let mut ops = client(&addr, OPERATOR).await;
    add_user(&mut ops, "ann", "user").await;
    add_user(&mut ops, "ada", "admin").await;
    let mut ann = client(&addr, &token_of(&mut ops, "ann").await).await;
    let version = env!("CARGO_PKG_VERSION");
    let hostile = format!("<img src=x onerror=alert(1)>\u{7}{}", "z".repeat(300));
    register(&addr, "box1", version, &hostile).await.unwrap();
    register(&addr, "box2", version, "Test CPU").await.unwrap();
    let listed = ann
        .list_machines(pb::ListMachinesRequest {})
        .await
        .unwrap()
        .into_inner();
    let hosts: Vec<&str> = listed.machines.iter().map(|m| m.host.as_str()).collect();
    assert_eq!(hosts, ["box1", "box2"]);
    let facts = listed.machines[0].facts.clone().unwrap();
    assert_eq!(facts.cpu_model.chars().count(), 128, "bounded");
    assert!(!facts.cpu_model.contains('\u{7}'), "no control characters");
    assert_eq!((facts.cores, facts.memory_mb), (4, 8192));
    assert_eq!(facts.speed_nps, 2_500_000, "its speed, as it said");

    // Blocking is an admin's; a blocked host's workers are told why.
    let block = |message: &str| pb::BlockHostRequest {
        host: "box1".into(),
        message: message.into(),
    };
    assert_eq!(
        code(ann.block_host(block("no")).await),
        Code::PermissionDenied
    );
    ops.block_host(block("its disk is failing")).await.unwrap();
    let refused = register(&addr, "box1", version, "x").await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied);
    assert!(
        refused.message().contains("its disk is failing"),
        "{refused:?}"
    );
    let machines = ann
        .list_machines(pb::ListMachinesRequest {})
        .await
        .unwrap()
        .into_inner();
    let box1 = machines.machines.iter().find(|m| m.host == "box1").unwrap();
    assert_eq!(
        (box1.registrations, box1.blocked.as_str()),
        (0, "its disk is failing")
    );
    ops.block_host(block("")).await.unwrap();
    register(&addr, "box1", version, "x").await.unwrap();

    // Old workers are told to upgrade.
    let set = |version: &str| pb::SetMinWorkerVersionRequest {
        version: version.into(),
    };
    assert_eq!(
        code(ops.set_min_worker_version(set("latest")).await),
        Code::InvalidArgument
    );
    ops.set_min_worker_version(set("99.0.0")).await.unwrap();
    let old = register(&addr, "box3", version, "x").await.unwrap_err();
    assert!(old.message().contains("upgrade"), "{old:?}");
    ops.set_min_worker_version(set("")).await.unwrap();
    register(&addr, "box3", version, "x").await.unwrap();

    // The page's routes: the list is public; blocking is an admin's, with its session.
    let host = addr.trim_start_matches("http://").to_string();
    tokio::task::spawn_blocking(move || {
        let (code, _, body) = request_with("GET", &host, "/api/v1/machines", &[], None).unwrap();
        assert_eq!(code, 200);
        assert!(body.contains(r#""host":"box2""#), "{body}");
        let block = "/api/v1/account/machines/box2/block";
        assert_eq!(
            request_with("POST", &host, block, &[], None).unwrap().0,
            401
        );
        let ann = Browser::login(&host, "ann");
        assert_eq!(ann.post_json(block, r#"{"message": "no"}"#), 403);
        let ada = Browser::login(&host, "ada");
        assert_eq!(
            ada.post_json(block, r#"{"message": "moved to another rack"}"#),
            200
        );
        let (_, body) = ada.get("/api/v1/machines");
        assert!(body.contains("moved to another rack"), "{body}");
        assert_eq!(ada.post("/api/v1/account/machines/box2/unblock"), 200);
        let min = "/api/v1/account/min-worker-version";
        assert_eq!(ann.post_json(min, r#"{"version": "0.1.0"}"#), 403);
        assert_eq!(ada.post_json(min, r#"{"version": "0.1.0"}"#), 200);
    })
    .await
    .unwrap();
    let events = ops
        .list_events(pb::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner();
    let actions: Vec<&str> = events.events.iter().map(|e| e.action.as_str()).collect();
    for action in ["host-blocked", "host-unblocked", "min-worker-version"] {
        assert!(actions.contains(&action), "{actions:?}");
    }
}

#[tokio::test]
async fn notes_and_names_with_markup_come_back_escaped_and_tests_can_be_cloned() {
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let mut ops = client(&addr, OPERATOR).await;
    for (name, role) in [("ann", "user"), ("bob", "user"), ("vera", "viewer")] {
        add_user(&mut ops, name, role).await;
    }
    let mut ann = client(&addr, &token_of(&mut ops, "ann").await).await;
    let mut bob = client(&addr, &token_of(&mut ops, "bob").await).await;
    let hostile = "<script>alert(1)</script>";
    let mut request = match_file();
    request.config =
        request
            .config
            .replacen("name = \"accounts\"", &format!("name = \"{hostile}\""), 1);
    let id = ann.submit(request).await.unwrap().into_inner().id;
    let annotate = |note: &str, links: &[&str]| pb::AnnotateRequest {
        id,
        note: note.into(),
        links: links.iter().map(|l| l.to_string()).collect(),
    };
    assert_eq!(
        code(bob.annotate(annotate("mine", &[])).await),
        Code::PermissionDenied
    );
    let refused = ann
        .annotate(annotate("x", &["javascript:alert(1)"]))
        .await
        .unwrap_err();
    assert!(refused.message().contains("https://"), "{refused:?}");
    let long = "n".repeat(2001);
    assert_eq!(
        code(ann.annotate(annotate(&long, &[])).await),
        Code::InvalidArgument
    );
    let link = "https://example.com/pull/1?a=<b>";
    ann.annotate(annotate(&format!("note {hostile}"), &[link]))
        .await
        .unwrap();

    // The report: escaped in HTML, as given in text.
    let html = ann
        .get_report(pb::GetReportRequest {
            id,
            format: "html".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .content;
    assert!(!html.contains(hostile), "raw markup in the HTML report");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(html.contains("a=&lt;b&gt;"));
    let text = report_text(&mut ann, id).await;
    assert!(
        text.contains(&format!("note {hostile}")) && text.contains(link),
        "{text}"
    );

    // The page's JSON carries it as data (the page writes it as text, never as HTML), and
    // the export is JSON too.
    let host = addr.trim_start_matches("http://").to_string();
    let (page, file) = tokio::task::spawn_blocking(move || {
        let (_, page) =
            tourney_tests::http::get(&host, &format!("/api/v1/tournaments/{id}")).unwrap();
        let path = format!("/api/v1/tournaments/{id}/file");
        assert_eq!(request_with("GET", &host, &path, &[], None).unwrap().0, 401);
        assert_eq!(Browser::login(&host, "vera").get(&path).0, 403);
        let (code, file) = Browser::login(&host, "bob").get(&path);
        assert_eq!(code, 200);
        (page, file)
    })
    .await
    .unwrap();
    let page: serde_json::Value = serde_json::from_str(&page).unwrap();
    assert_eq!(page["name"], hostile);
    let file: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(file["file"], "accounts.toml");
    assert!(file["toml"].as_str().unwrap().contains(hostile));
    let events = ops
        .list_events(pb::ListEventsRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(
        events
            .events
            .iter()
            .any(|e| e.action == "annotated" && e.who == "ann")
    );
}

/// What a persona may do with a route: let through (whatever the answer then: 200, or a
/// 400/404/409 about the request itself), or refused with this code.
#[derive(Clone, Copy, Debug, PartialEq)]
enum May {
    Yes,
    No(u16),
}

#[tokio::test]
async fn every_dashboard_route_lets_in_exactly_the_roles_it_names_and_wants_a_csrf_token() {
    use May::{No, Yes};
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&dir).await;
    let host = addr.trim_start_matches("http://").to_string();
    let mut ops = client(&addr, OPERATOR).await;
    for (name, role) in [
        ("vera", "viewer"),
        ("ann", "user"),
        ("bob", "user"),
        ("apu", "approver"),
        ("ada", "admin"),
    ] {
        add_user(&mut ops, name, role).await;
    }
    // Ann's test, waiting for approval: the subject of every tournament route.
    let mut ann_api = client(&addr, &token_of(&mut ops, "ann").await).await;
    let id = ann_api.submit(match_file()).await.unwrap().into_inner().id;

    let check = move || {
        let personas: Vec<Option<Browser>> = std::iter::once(None)
            .chain(
                ["vera", "ann", "bob", "apu", "ada"]
                    .iter()
                    .map(|n| Some(Browser::login(&host, n))),
            )
            .collect();
        let names = [
            "anonymous",
            "viewer",
            "user (its author)",
            "another user",
            "approver",
            "admin",
        ];
        let t = |action: &str| format!("/api/v1/tournaments/{id}{action}");
        let (all, logged_in) = ([Yes; 6], [No(401), Yes, Yes, Yes, Yes, Yes]);
        let admin_only = [No(401), No(403), No(403), No(403), No(403), Yes];
        let users_up = [No(401), No(403), Yes, Yes, Yes, Yes];
        let owner_up = [No(401), No(403), Yes, No(403), Yes, Yes];
        let approvers = [No(401), No(403), No(403), No(403), Yes, Yes];
        // In this order: approve before the owner's changes, cancel before deletion.
        let routes: Vec<(&str, String, &str, [May; 6])> = vec![
            ("GET", "/".into(), "", all),
            ("GET", "/dashboard/form.js".into(), "", all),
            ("GET", "/api/v1/overview".into(), "", all),
            ("GET", "/api/v1/search?q=acc".into(), "", all),
            ("GET", "/api/v1/versions".into(), "", all),
            ("GET", "/api/v1/verdicts".into(), "", all),
            ("GET", "/api/v1/machines".into(), "", all),
            ("GET", t(""), "", all),
            ("GET", t("/games.pgn"), "", all),
            ("GET", t("/games.jsonl.gz"), "", all),
            ("GET", format!("/api/run_pgns/{id}.pgn.gz"), "", all),
            ("GET", "/api/v1/me".into(), "", logged_in),
            ("GET", "/api/v1/log".into(), "", logged_in),
            ("GET", "/api/v1/account/tokens".into(), "", logged_in),
            ("GET", "/api/v1/account/users".into(), "", admin_only),
            ("GET", t("/file"), "", users_up),
            (
                "POST",
                "/api/v1/tournaments".into(),
                r#"{"file": "x.toml", "toml": "name = 1"}"#,
                users_up,
            ),
            ("POST", t("/approve"), "", approvers),
            ("POST", t("/modify"), r#"{"priority": 1}"#, owner_up),
            (
                "POST",
                t("/annotate"),
                r#"{"note": "n", "links": []}"#,
                owner_up,
            ),
            ("POST", t("/resume"), "", owner_up),
            ("POST", t("/cancel"), "", owner_up),
            ("POST", t("/delete"), "", owner_up),
            ("POST", t("/restore"), "", owner_up),
            (
                "POST",
                "/api/v1/account/tokens".into(),
                r#"{"label": "m"}"#,
                logged_in,
            ),
            (
                "POST",
                "/api/v1/account/tokens/00000000/revoke".into(),
                "",
                logged_in,
            ),
            (
                "POST",
                "/api/v1/account/password".into(),
                r#"{"password": "short"}"#,
                logged_in,
            ),
            (
                "POST",
                "/api/v1/account/users".into(),
                r#"{"name": "<x>", "role": "user"}"#,
                admin_only,
            ),
            (
                "POST",
                "/api/v1/account/users/nobody/role".into(),
                r#"{"role": "user"}"#,
                admin_only,
            ),
            (
                "POST",
                "/api/v1/account/users/nobody/remove".into(),
                "",
                admin_only,
            ),
            (
                "POST",
                "/api/v1/account/machines/no-host/block".into(),
                r#"{"message": "m"}"#,
                admin_only,
            ),
            (
                "POST",
                "/api/v1/account/machines/no-host/unblock".into(),
                "",
                admin_only,
            ),
            (
                "POST",
                "/api/v1/account/min-worker-version".into(),
                r#"{"version": ""}"#,
                admin_only,
            ),
        ];
        for (method, path, body, rights) in &routes {
            for ((persona, name), may) in personas.iter().zip(names).zip(rights) {
                if *method == "POST" {
                    // Without its session's CSRF token, nobody gets through.
                    if let Some(p) = persona {
                        let bare = [("Cookie", p.cookie.as_str())];
                        let code = request_with("POST", &host, path, &bare, Some(body))
                            .unwrap()
                            .0;
                        assert!(
                            code == 403 || *may != Yes && code == 401,
                            "{method} {path} as {name} without a CSRF token: {code}"
                        );
                    }
                }
                let code = match (persona, *method) {
                    (None, _) => {
                        request_with(method, &host, path, &[], Some(body))
                            .unwrap()
                            .0
                    }
                    (Some(p), "GET") => p.get(path).0,
                    (Some(p), _) => p.post_json(path, body),
                };
                match may {
                    Yes => assert!(
                        ![401, 403].contains(&code) && code < 500,
                        "{method} {path} as {name}: {code}, not let through"
                    ),
                    No(refused) => {
                        assert_eq!(code, *refused, "{method} {path} as {name}");
                    }
                }
            }
        }
        // What was let through did what it says: approved, cancelled, restored.
        let (_, shown) = personas[1].as_ref().unwrap().get(&t(""));
        let shown: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(shown["state"], "cancelled", "{shown}");
        let (_, overview) = personas[1].as_ref().unwrap().get("/api/v1/overview");
        assert!(overview.contains("\"accounts\""), "back in the lists");
    };
    tokio::task::spawn_blocking(check).await.unwrap();
}
