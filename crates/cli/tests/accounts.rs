//! Accounts through the command line, against a real `tourney coordinator` process: the
//! operator makes a user and its personal token, the user's commands run with that token
//! and are recorded under its name, a stopped coordinator's data directory takes the
//! first admin, and an approver logs in to the dashboard in Chromium and approves a test.

mod common;

use std::process::Command;

use common::*;

use tourney_tests::process::{Reaped, output_with_stdin};
use tourney_tests::tournaments::MatchFile;
use tourney_tests::webdriver::Browser;

/// `tourney <args>` against the coordinator on `port` with `token`, `stdin` given.
fn run_with(port: u16, token: &str, args: &[&str], stdin: &str) -> std::process::Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
    command
        .args(args)
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", token);
    output_with_stdin(&mut command, stdin)
}

fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn a_personal_token_acts_as_its_user_and_the_events_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let added = run_with(
        port,
        "admin-secret",
        &["user", "add", "ann", "--role", "user", "--password-stdin"],
        "ann's long password\n",
    );
    assert!(added.status.success(), "{}", said(&added));
    let made = run_with(
        port,
        "admin-secret",
        &["user", "token", "ann", "--label", "ci"],
        "",
    );
    assert!(made.status.success(), "{}", said(&made));
    let token = String::from_utf8(made.stdout).unwrap().trim().to_string();
    assert!(token.starts_with("tourney_"), "{token}");

    let me = run_with(port, &token, &["whoami"], "");
    assert_eq!(
        String::from_utf8_lossy(&me.stdout).trim(),
        "ann (user, a user)"
    );
    let file = dir.path().join("t.toml");
    let config = MatchFile {
        name: "by-ann",
        pairs: 2,
        ..Default::default()
    };
    std::fs::write(&file, config.toml()).unwrap();
    let submitted = run_with(port, &token, &["submit", file.to_str().unwrap()], "");
    assert!(submitted.status.success(), "{}", said(&submitted));
    let id = String::from_utf8_lossy(&submitted.stdout)
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_string();
    // A user may not manage users; the refusal says which role would.
    let refused = run_with(port, &token, &["user", "list"], "");
    assert!(!refused.status.success());
    assert!(
        said(&refused).contains("needs the admin role"),
        "{}",
        said(&refused)
    );

    let events = run_with(port, &token, &["events", "--json"], "");
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&events.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let by = |who: &str, action: &str| {
        lines
            .iter()
            .any(|e| e["who"] == who && e["action"] == action)
    };
    assert!(by("ann", "submitted"), "{lines:?}");
    assert!(
        by("default", "user-added") && by("default", "token-created"),
        "{lines:?}"
    );
    let status = run_with(port, &token, &["status", &id, "--json"], "");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["author"], "ann");
    let listed = as_admin(port, &["user", "list"]);
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("ann ") && l.contains(" user ") && l.contains("yes")),
        "{listed}"
    );
}

#[test]
fn the_first_admin_is_made_on_a_stopped_coordinators_data() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let out = tourney()
        .args(["user", "add", "root-ann", "--role", "admin", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", said(&out));
    let token = tourney()
        .args(["user", "token", "root-ann", "--data"])
        .arg(&data)
        .output()
        .unwrap();
    let token = String::from_utf8(token.stdout).unwrap().trim().to_string();
    let (coordinator, port) = start_coordinator(0, &data);
    let _coordinator = Reaped(coordinator);
    let me = run_with(port, &token, &["whoami"], "");
    assert_eq!(
        String::from_utf8_lossy(&me.stdout).trim(),
        "root-ann (admin, a user)"
    );
    let added = run_with(
        port,
        &token,
        &["user", "add", "bob", "--role", "viewer"],
        "",
    );
    assert!(added.status.success(), "{}", said(&added));
}

#[test]
fn an_admin_makes_users_a_user_submits_and_an_approver_approves_on_the_dashboard() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    // The first admin, by the operator; it makes the others on the page.
    let args = ["user", "add", "ada", "--role", "admin", "--password-stdin"];
    let added = run_with(port, "admin-secret", &args, "ada's long password\n");
    assert!(added.status.success(), "{}", said(&added));
    // Two versions of one line: the test is an SPRT of the patch against its base.
    for args in [
        &["version", "add", "base", "--player", "ab"][..],
        &[
            "version",
            "add",
            "patch",
            "--player",
            "ab:concentration=12",
            "--parent",
            "base",
        ],
    ] {
        let added = run_with(port, "admin-secret", args, "");
        assert!(added.status.success(), "{}", said(&added));
    }
    let browser = Browser::start(1280, 1400);
    browser.goto(&format!("http://127.0.0.1:{port}/"));
    browser.log_in("ada", "ada's long password");
    browser.wait_for(
        10,
        "the account button",
        "return !document.querySelector('#me-open').hidden;",
    );
    browser.click("#me-open");
    browser.wait_for(
        10,
        "the users",
        "return !document.querySelector('#users-admin').hidden;",
    );
    for (name, role) in [("ann", "user"), ("apu", "approver")] {
        let password = serde_json::to_string(&format!("{name}'s long password")).unwrap();
        browser.eval(&format!(
            "document.querySelector('#user-name').value = '{name}'; \
             document.querySelector('#user-role').value = '{role}'; \
             document.querySelector('#user-password').value = {password}; return true;"
        ));
        browser.click("#user-form button");
        browser.wait_for(
            10,
            "the new user in the list",
            &format!(
                "return [...document.querySelectorAll('#users tbody tr')] \
                   .some((r) => r.textContent.startsWith('{name}'));"
            ),
        );
    }
    browser.click("#logout");
    browser.wait_for(
        10,
        "ada logged out",
        "return !document.querySelector('#login-open').hidden;",
    );
    let made = run_with(port, "admin-secret", &["user", "token", "ann"], "");
    let token = String::from_utf8(made.stdout).unwrap().trim().to_string();

    // Ann logs in and submits the test from the page; it waits for approval.
    browser.log_in("ann", "ann's long password");
    browser.wait_for(
        10,
        "the new-test button",
        "return !document.querySelector('#new-open').hidden;",
    );
    browser.click("#new-open");
    // The form: an SPRT (STC bounds, which two so close never settle: it is still
    // running when it is stopped) of two versions picked from the registered ones.
    browser.wait_for(
        10,
        "the versions offered",
        "return document.querySelectorAll('#f-versions option').length === 2;",
    );
    browser.eval(
        "const set = (e, v) => { e.value = v; e.dispatchEvent(new Event('input', { bubbles: true })); }; \
         set(document.querySelector('#f-name'), 'needs-approval'); \
         const rows = document.querySelectorAll('#f-engines tbody tr'); \
         set(rows[0].querySelector('[data-field=version]'), 'patch'); \
         set(rows[1].querySelector('[data-field=version]'), 'base'); \
         set(document.querySelector('#f-elo1'), '-5'); return true;",
    );
    let preview = browser.eval("return document.querySelector('#new-preview').textContent;");
    let preview = preview.as_str().unwrap();
    for line in [
        "format = \"sprt\"",
        "version = \"patch\"",
        "version = \"base\"",
        "sprt = { elo0 = 0, elo1 = -5,",
    ] {
        assert!(preview.contains(line), "{line} in {preview}");
    }
    assert_eq!(
        browser.eval(
            "return document.querySelector('#new-download').href.startsWith('blob:') \
                    && document.querySelector('#new-download').download;"
        ),
        "needs-approval.toml"
    );
    // A wrong bound is refused as `tourney submit` refuses it, beside its field.
    browser.click("#new-submit");
    let beside = browser.wait_for(
        10,
        "the error beside elo1",
        "const e = document.querySelector('#f-elo1 + .field-error'); return e ? e.textContent : null;",
    );
    assert!(
        beside.as_str().unwrap().contains("must be above elo0"),
        "{beside}"
    );
    browser.eval(
        "const p = document.querySelector('#f-preset'); p.value = '0,2'; \
         p.dispatchEvent(new Event('change', { bubbles: true })); return true;",
    );
    browser.click("#new-submit");
    browser.wait_for(
        20,
        "the pending test",
        "return document.querySelector('#detail-progress .state')?.textContent === 'pending' \
                && location.hash;",
    );
    let id = browser
        .eval("return location.hash.replace('#t=', '');")
        .as_str()
        .unwrap()
        .to_string();
    // Ann may not approve her own.
    assert_eq!(
        browser.eval("return document.querySelector('#action-approve').hidden;"),
        true
    );
    browser.click("#logout");
    browser.wait_for(
        10,
        "logged out",
        "return !document.querySelector('#login-open').hidden;",
    );
    // Nobody is logged in: no actions, a login button.
    let anonymous = browser.eval(
        "return [document.querySelector('#actions').hidden, \
                 document.querySelector('#login-open').hidden];",
    );
    assert_eq!(anonymous, serde_json::json!([true, false]));
    browser.log_in("apu", "wrong password");
    let error = browser.wait_for(
        10,
        "the login's refusal",
        "return document.querySelector('#login-error').textContent || null;",
    );
    assert_eq!(error, "wrong name or password");
    browser.eval("document.querySelector('#login').close(); return true;");
    browser.log_in("apu", "apu's long password");
    browser.wait_for(
        10,
        "apu logged in",
        "return document.querySelector('#account-name').textContent === 'apu (approver)';",
    );
    // The session cookie is not readable by scripts.
    assert_eq!(browser.eval("return document.cookie;"), "");
    browser.wait_for(
        10,
        "the approve button",
        "return !document.querySelector('#action-approve').hidden;",
    );
    browser.click("#action-approve");
    browser.wait_for(
        10,
        "the approval",
        "return document.querySelector('#action-result').textContent === 'approved';",
    );
    browser.wait_for(
        20,
        "the test no longer pending",
        "const s = document.querySelector('#detail-progress .state')?.textContent; \
         return s && s !== 'pending';",
    );
    browser.click("#logout");
    browser.wait_for(
        10,
        "apu logged out",
        "return !document.querySelector('#login-open').hidden;",
    );

    // A real worker plays it; the machines page shows the worker's host.
    let worker = worker_command(port, "browser-box")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _worker = Reaped(worker);
    wait_for(port, &id, "a first pair", |s| {
        s["pairs_done"].as_u64().unwrap() >= 1
    });
    browser.click("#machines-open");
    let machine = browser.wait_for(
        20,
        "the worker's host",
        "const row = [...document.querySelectorAll('#machines tbody tr')] \
           .find((r) => r.textContent.startsWith('browser-box')); \
         return row ? row.textContent : null;",
    );
    assert!(
        machine
            .as_str()
            .unwrap()
            .contains(env!("CARGO_PKG_VERSION")),
        "{machine}"
    );
    // Its speed on the built-in benchmark, measured once as it started.
    let speed = browser.eval(
        "const row = [...document.querySelectorAll('#machines tbody tr')] \
           .find((r) => r.textContent.startsWith('browser-box')); \
         return row.children[9].textContent;",
    );
    assert_ne!(speed, "–", "a measured speed");

    // Ann raises its priority, then stops it.
    browser.log_in("ann", "ann's long password");
    browser.wait_for(
        10,
        "ann's actions",
        "return !document.querySelector('#actions').hidden \
                && !document.querySelector('#action-cancel').hidden;",
    );
    browser.eval(
        "for (const [id, v] of [['#share-priority', '7'], ['#share-budget', '150000']]) { \
           const e = document.querySelector(id); e.value = v; \
           e.dispatchEvent(new Event('input', { bubbles: true })); } return true;",
    );
    browser.click("#action-modify");
    browser.wait_for(
        10,
        "the change",
        "return document.querySelector('#action-result').textContent === 'modified';",
    );
    let status = run_with(port, &token, &["status", &id, "--json"], "");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["priority"], 7);
    assert_eq!(status["max_pairs"], 150_000, "{status}");
    // Stop asks first: "Keep it running" stops nothing, "Stop it" stops it, and the
    // stopped test can be resumed.
    browser.click("#action-cancel");
    browser.wait_for(
        5,
        "the question",
        "const q = document.querySelector('#cancel-confirm');
         return !q.hidden && q.getBoundingClientRect().height > 0;",
    );
    browser.click("#action-cancel-no");
    browser.wait_for(
        5,
        "the question gone",
        "return document.querySelector('#cancel-confirm').hidden;",
    );
    let status = run_with(port, &token, &["status", &id, "--json"], "");
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_ne!(status["state"], "cancelled", "{status}");
    browser.click("#action-cancel");
    browser.click("#action-cancel-yes");
    browser.wait_for(
        20,
        "the test stopped, with Resume offered",
        "return document.querySelector('#detail-progress .state')?.textContent === 'cancelled'
             && !document.querySelector('#action-resume').hidden;",
    );

    // Search finds it among her own, and by its state and date.
    browser.click("#search-mine");
    browser.wait_for(
        10,
        "ann's own tests",
        "const rows = document.querySelectorAll('#tournaments tbody tr'); \
         return document.querySelector('#search-author').value === 'ann' && rows.length === 1;",
    );
    browser.eval(
        "document.querySelector('#search-state').value = 'cancelled'; \
         document.querySelector('#search-since').value = new Date().toISOString().slice(0, 10); \
         return true;",
    );
    browser.click("#search-form button[type=submit]");
    browser.wait_for(
        10,
        "the search's one result",
        "const rows = document.querySelectorAll('#tournaments tbody tr'); \
         return !document.querySelector('#search-clear').hidden && rows.length === 1 \
                && rows[0].textContent.includes('needs-approval');",
    );

    // The verdicts list: none accepted here, said so.
    browser.click("#verdicts-open");
    browser.wait_for(
        10,
        "the verdicts list",
        "return !document.querySelector('#verdicts').hidden \
                && document.querySelector('#verdict-lines').textContent.includes('No test');",
    );

    // The events log names each step's author.
    browser.click("#log-open");
    let log = browser.wait_for(
        10,
        "the events log",
        "const rows = [...document.querySelectorAll('#log tbody tr')].map((r) => r.textContent); \
         return rows.some((r) => r.includes('cancelled')) ? rows : null;",
    );
    let rows: Vec<String> = serde_json::from_value(log).unwrap();
    for (who, action) in [
        ("ada", "user-added"),
        ("ann", "submitted"),
        ("apu", "approved"),
        ("ann", "modified"),
        ("ann", "cancelled"),
    ] {
        assert!(
            rows.iter().any(|r| r.contains(who) && r.contains(action)),
            "{who} {action}: {rows:?}"
        );
    }
    assert!(
        rows.iter()
            .any(|r| r.contains("priority 7") && r.contains("pair budget 150000")),
        "{rows:?}"
    );

    // The stopped test is deleted from the lists; its page and games stay.
    browser.click("#action-delete");
    browser.wait_for(
        20,
        "the test gone from the list",
        "return ![...document.querySelectorAll('#tournaments tbody tr')] \
           .some((r) => r.textContent.includes('needs-approval'));",
    );
    let status = run_with(port, &token, &["status", &id, "--json"], "");
    assert!(status.status.success(), "{}", said(&status));
    browser.click("#logout");
    browser.wait_for(
        10,
        "logged out",
        "return !document.querySelector('#login-open').hidden \
                && (document.querySelector('#actions').hidden \
                    || document.querySelector('#detail').hidden);",
    );
}

/// A new user `name` with `role`, made by the admin, and its personal token.
fn user_with_token(port: u16, name: &str, role: &str) -> String {
    let password = format!("{name}'s long password\n");
    let args = ["user", "add", name, "--role", role, "--password-stdin"];
    let added = run_with(port, "admin-secret", &args, &password);
    assert!(added.status.success(), "{}", said(&added));
    let made = run_with(port, "admin-secret", &["user", "token", name], "");
    assert!(made.status.success(), "{}", said(&made));
    String::from_utf8(made.stdout).unwrap().trim().to_string()
}

#[test]
fn a_pending_test_is_cancelled_by_its_author_or_an_approver_and_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let ann = user_with_token(port, "ann", "user");
    let bob = user_with_token(port, "bob", "user");
    let apu = user_with_token(port, "apu", "approver");
    let file = dir.path().join("t.toml");
    let config = MatchFile {
        name: "waits",
        pairs: 2,
        ..Default::default()
    };
    std::fs::write(&file, config.toml()).unwrap();
    let submit = || {
        let out = run_with(port, &ann, &["submit", file.to_str().unwrap()], "");
        assert!(out.status.success(), "{}", said(&out));
        let id = String::from_utf8_lossy(&out.stdout)
            .lines()
            .last()
            .unwrap()
            .trim()
            .to_string();
        assert_eq!(status(port, &id)["state"], "pending");
        id
    };
    let (first, second) = (submit(), submit());
    // Another user may not cancel it; its author may, and an approver may.
    let refused = run_with(port, &bob, &["cancel", &first], "");
    assert!(!refused.status.success(), "{}", said(&refused));
    assert_eq!(status(port, &first)["state"], "pending");
    for (token, id) in [(&ann, &first), (&apu, &second)] {
        let out = run_with(port, token, &["cancel", id], "");
        assert!(out.status.success(), "{}", said(&out));
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "cancelled");
        assert_eq!(status(port, id)["state"], "cancelled");
    }
    // Once ended, the refusal names every state that can be cancelled, pending with them.
    let again = run_with(port, &ann, &["cancel", &first], "");
    assert!(!again.status.success());
    assert!(
        said(&again).contains(&format!(
            "tournament {first} is cancelled: only a queued, running, paused or pending \
             tournament can be cancelled"
        )),
        "{}",
        said(&again)
    );
}

#[test]
fn a_refused_token_is_named_by_where_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let bad = dir.path().join("bad.tok");
    std::fs::write(&bad, "wrongtoken\n").unwrap();
    let bad = bad.to_str().unwrap();
    // `tourney whoami` with only the `--flags` and `(variable, value)`s given.
    let whoami = |flags: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
        command
            .args([
                "whoami",
                "--coordinator",
                &format!("http://127.0.0.1:{port}"),
            ])
            .args(flags)
            .env_remove("TOURNEY_TOKEN")
            .env_remove("TOURNEY_ADMIN_TOKEN")
            .envs(env.iter().copied());
        let out = command.output().unwrap();
        assert!(!out.status.success(), "{}", said(&out));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (flags, env, from) in [
        (
            &["--token", "wrongtoken"][..],
            &[][..],
            "--token".to_string(),
        ),
        (
            &[],
            &[("TOURNEY_TOKEN", "wrongtoken")],
            "TOURNEY_TOKEN".into(),
        ),
        (&["--token-file", bad], &[], format!("--token-file {bad}")),
        (
            &[],
            &[("TOURNEY_ADMIN_TOKEN", "wrongtoken")],
            "TOURNEY_ADMIN_TOKEN".into(),
        ),
    ] {
        let err = whoami(flags, env);
        assert!(
            err.contains(&format!("the coordinator refused the token from {from} ")),
            "{from}: {err}"
        );
    }
    let none = whoami(&[], &[]);
    assert!(
        none.contains(
            "no token was given and the coordinator needs one: set --token, --token-file or \
             TOURNEY_TOKEN"
        ),
        "{none}"
    );
    let good = as_admin(port, &["whoami"]);
    assert!(good.status.success(), "{}", said(&good));
}
