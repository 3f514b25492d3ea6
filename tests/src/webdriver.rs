//! A small W3C WebDriver client for browser tests: starts `chromedriver`, opens a headless
//! Chromium session, runs scripts, clicks and takes screenshots.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::http::{free_port, request};

/// The WebDriver key of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// Where Debian installs Chromium and its driver (packages `chromium`, `chromium-driver`).
pub const CHROMIUM: &str = "/usr/bin/chromium";
/// See [`CHROMIUM`].
pub const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// A headless Chromium session driven through chromedriver; both end when it is dropped.
pub struct Browser {
    driver: Child,
    address: String,
    session: String,
}

/// Whether Chromium and chromedriver are installed.
pub fn available() -> bool {
    Path::new(CHROMIUM).exists() && Path::new(CHROMEDRIVER).exists()
}

impl Browser {
    /// Starts chromedriver on a free port and opens a headless session with a fresh
    /// profile, a `width`×`height` window and background networking off (the test
    /// machines have no network).
    ///
    /// # Panics
    /// chromedriver did not start or refused the session.
    pub fn start(width: u32, height: u32) -> Browser {
        let port = free_port();
        let driver = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let address = format!("127.0.0.1:{port}");
        let until = Instant::now() + Duration::from_secs(20);
        while request("GET", &address, "/status", None).is_err() {
            assert!(Instant::now() < until, "chromedriver did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = std::env::temp_dir().join(format!("tourney-chromium-{port}"));
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    format!("--user-data-dir={}", profile.display()),
                    format!("--window-size={width},{height}"),
                ],
            },
        }}});
        let mut browser = Browser {
            driver,
            address,
            session: String::new(),
        };
        let created = browser.call("POST", "/session", Some(capabilities));
        browser.session = created["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {created}"))
            .to_string();
        browser
    }

    /// One WebDriver command; its `value`.
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.try_call(method, path, body)
            .unwrap_or_else(|error| panic!("WebDriver {method} {path}: {error}"))
    }

    /// One WebDriver command: its `value`, or the error the driver answered.
    fn try_call(&self, method: &str, path: &str, body: Option<Value>) -> Result<Value, Value> {
        let body = body.map(|b| b.to_string());
        let (code, text) = request(method, &self.address, path, body.as_deref())
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        let reply: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}: {text}"));
        if code == 200 {
            Ok(reply["value"].clone())
        } else {
            Err(reply["value"].clone())
        }
    }

    fn session_call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    /// Loads `url`.
    pub fn goto(&self, url: &str) {
        self.session_call("POST", "/url", Some(json!({ "url": url })));
    }

    /// Runs `script` (a function body; `return` gives the result) in the page.
    pub fn eval(&self, script: &str) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
    }

    /// Fills in and sends the dashboard's login form as `name` with `password`.
    pub fn log_in(&self, name: &str, password: &str) {
        self.click("#login-open");
        self.eval(&format!(
            "document.querySelector('#login-name').value = {}; \
             document.querySelector('#login-password').value = {}; return true;",
            json!(name),
            json!(password)
        ));
        self.click("#login-submit");
    }

    /// Evaluates `script` every 100 ms until it returns something other than `null` or
    /// `false`; that value.
    ///
    /// # Panics
    /// It did not within `seconds`; the message names `what`.
    pub fn wait_for(&self, seconds: u64, what: &str, script: &str) -> Value {
        let until = Instant::now() + Duration::from_secs(seconds);
        loop {
            let value = self.eval(script);
            if !(value.is_null() || value == Value::Bool(false)) {
                return value;
            }
            assert!(Instant::now() < until, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Clicks the first element matching the CSS `selector`, as a user would. A page
    /// that re-renders can replace the element between finding and clicking it; then it
    /// is found again.
    pub fn click(&self, selector: &str) {
        for _ in 0..20 {
            let found = self.session_call(
                "POST",
                "/element",
                Some(json!({ "using": "css selector", "value": selector })),
            );
            let id = found[ELEMENT]
                .as_str()
                .unwrap_or_else(|| panic!("no element {selector}: {found}"))
                .to_string();
            let path = format!("/session/{}/element/{id}/click", self.session);
            match self.try_call("POST", &path, Some(json!({}))) {
                Ok(_) => return,
                Err(e) if e["error"] == "stale element reference" => continue,
                Err(e) => panic!("clicking {selector}: {e}"),
            }
        }
        panic!("{selector} went stale 20 times in a row");
    }

    /// A PNG screenshot of the window.
    pub fn screenshot(&self) -> Vec<u8> {
        let encoded = self.session_call("GET", "/screenshot", None);
        decode_base64(encoded.as_str().expect("a base64 screenshot"))
    }

    /// Saves a [`screenshot`](Self::screenshot) as `target/test-artifacts/<name>`, the
    /// directory CI keeps, and says where; its path. `target_tmpdir` is the test's
    /// `env!("CARGO_TARGET_TMPDIR")` (`target/tmp`), which only tests are given.
    pub fn save_screenshot(&self, target_tmpdir: &str, name: &str) -> PathBuf {
        let png = self.screenshot();
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        let dir = Path::new(target_tmpdir)
            .parent()
            .expect("the target directory")
            .join("test-artifacts");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, png).unwrap();
        eprintln!("screenshot: {}", path.display());
        path
    }

    /// Resizes the window to `width`×`height` CSS pixels.
    pub fn set_window_size(&self, width: u32, height: u32) {
        self.session_call(
            "POST",
            "/window/rect",
            Some(json!({ "width": width, "height": height })),
        );
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let path = format!("/session/{}", self.session);
            let _ = request("DELETE", &self.address, &path, None);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Standard base64 (with padding) to bytes.
fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {:?}", c as char),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| !c.is_ascii_whitespace() && *c != b'=')
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &d)| n | (u32::from(d) << (18 - 6 * i)));
        out.extend_from_slice(&n.to_be_bytes()[1..chunk.len()]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::decode_base64;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(decode_base64("TWFu"), b"Man");
        assert_eq!(decode_base64("TWE="), b"Ma");
        assert_eq!(decode_base64("TQ=="), b"M");
        assert_eq!(decode_base64("iVBORw0KGgo="), b"\x89PNG\r\n\x1a\n");
    }
}
