//! The dashboard's New test form as a user sees it, in a real headless Chromium against a
//! real `tourney coordinator` process: not what the DOM holds but what is rendered
//! (`getBoundingClientRect`, `getComputedStyle`, `elementFromPoint`). For every format the
//! form offers, only that format's fields are shown; every shown field has a visible label;
//! no two shown fields or texts overlap, none is covered by another element and none is cut
//! off at the side. The Form / TOML file tabs switch what is shown, the Amazons board size
//! is shown for Amazons alone, an openings file's fields replace the generated openings',
//! and each kind of engine shows its own labelled fields; all of it also in a narrow
//! window. Screenshots of each state are saved in `target/test-artifacts/form-*.png`.
//! A version line's preset, chosen in the form, fills its fields (clock, bounds, threads,
//! options, book) and the test submits with them.
//! (The test page's Stop confirmation is checked in `accounts.rs`.)

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::{Value, json};
use tourney_tests::process::{Reaped, output_with_stdin};
use tourney_tests::webdriver::Browser;

use crate::common::*;

/// The form's parts that come and go, by id: each is either rendered (a non-empty box,
/// visible) or not rendered at all.
const PARTS: &[&str] = &[
    "f-sprt",
    "f-spsa",
    "f-count",
    "f-pairs-label",
    "f-rounds-label",
    "f-seeds-label",
    "f-tiebreak-label",
    "f-size-label",
    "f-plies",
    "f-seed",
    "f-openings-file",
    "f-openings-format",
    "f-openings-order",
    "new-fields",
    "new-text",
    "new-toml",
];

/// Every format the form offers, and the format-dependent parts it shows (of `PARTS`'
/// first seven; the others are the same for every format).
const FORMATS: &[(&str, &[&str])] = &[
    ("sprt", &["f-sprt"]),
    ("match", &["f-count", "f-pairs-label"]),
    ("gauntlet", &["f-count", "f-rounds-label", "f-seeds-label"]),
    ("round-robin", &["f-count", "f-rounds-label"]),
    ("spsa", &["f-spsa"]),
    ("takes", &["f-sprt"]),
    (
        "knockout",
        &["f-count", "f-pairs-label", "f-tiebreak-label"],
    ),
    ("pyramid", &["f-count", "f-rounds-label"]),
    ("swiss", &["f-count", "f-pairs-label", "f-rounds-label"]),
];

/// What the page shows of the open New test dialog (given `parts`, the ids of `PARTS`), as
/// JSON: `shown` (each of the parts: rendered or not), `controls` (the rendered inputs,
/// selects, text areas and buttons, each with its label's text), and the problems: `unlabelled` (a rendered field without a
/// rendered label that has text, or an `aria-label`), `overlaps` (two rendered fields, or
/// a field and a text, or two texts whose boxes intersect), `covered` (a field that, scrolled
/// into view, is not what is at its centre) and `clipped` (a container wider than its box:
/// something cut off or scrolled sideways).
const LOOK: &str = r#"
const dialog = document.querySelector('#new-test');
const form = document.querySelector('#new-form');
const shown = (e) => {
  if (!e) return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'
    && e.checkVisibility();
};
const rows = () => [...document.querySelectorAll('#f-engines tbody tr')];
const name = (e) => e.id ? `#${e.id}`
  : e.dataset.field ? `engine ${rows().indexOf(e.closest('tr'))}'s ${e.dataset.field}`
  : `${e.tagName.toLowerCase()} "${(e.getAttribute('aria-label') ?? e.textContent).trim().slice(0, 30)}"`;
// The rendered pieces of text under `root`, outside fields (a field's own text is the field).
const texts = (root) => {
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n; (n = walker.nextNode());) {
    const parent = n.parentElement;
    if (!n.textContent.trim() || parent.closest('select, textarea, button, datalist')) continue;
    // A closed <details>' content is laid out but not rendered.
    if (!parent.checkVisibility({ contentVisibilityAuto: true, visibilityProperty: true })) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width > 0 && r.height > 0) out.push({ what: `text "${n.textContent.trim().slice(0, 30)}"`, rect: r });
    }
  }
  return out;
};
const labelOf = (c) => {
  if (c.tagName === 'BUTTON') return (c.getAttribute('aria-label') ?? c.textContent).trim();
  const aria = (c.getAttribute('aria-label') ?? '').trim();
  if (aria) return aria;
  const label = [...(c.labels ?? [])].find((l) => shown(l) && texts(l).length);
  return label ? texts(label).map((t) => t.what.slice(6, -1)).join(' ') : '';
};
const controls = [...form.querySelectorAll('input, select, textarea, button')].filter(shown);
const unlabelled = controls.filter((c) => !labelOf(c)).map(name);
const boxes = [...controls.map((c) => ({ what: name(c), rect: c.getBoundingClientRect() })), ...texts(form)];
const overlaps = [];
for (let i = 0; i < boxes.length; i++) {
  for (let j = i + 1; j < boxes.length; j++) {
    const [a, b] = [boxes[i].rect, boxes[j].rect];
    const across = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const down = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    if (across > 1 && down > 1) overlaps.push(`${boxes[i].what} and ${boxes[j].what}`);
  }
}
const covered = [];
for (const c of controls) {
  c.scrollIntoView({ block: 'center', inline: 'center' });
  const r = c.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!hit || !(hit === c || c.contains(hit))) covered.push(`${name(c)} under ${hit ? name(hit) : 'nothing'}`);
}
for (const e of [dialog, form, document.querySelector('#new-fields')]) e.scrollTop = 0;
// A scrolling box wider inside than out, or a box past the dialog's right edge.
const edge = dialog.getBoundingClientRect().right;
const clipped = [dialog, form, ...form.querySelectorAll('div, fieldset, table, label')]
  .filter(shown)
  .filter((e) => (getComputedStyle(e).overflowX === 'visible'
    ? e.getBoundingClientRect().right > edge + 1 : e.scrollWidth > e.clientWidth + 1))
  .map((e) => `${name(e)} (${e.scrollWidth} wide in ${e.clientWidth})`);
return {
  shown: Object.fromEntries(parts.map((id) => [id, shown(document.getElementById(id))])),
  controls: controls.map((c) => `${name(c)}: ${labelOf(c)}`),
  unlabelled, overlaps, covered, clipped,
  preview: document.querySelector('#new-preview').textContent,
  note: document.querySelector('#f-engines-note').textContent,
};
"#;

/// What the page shows (see [`LOOK`]); the screenshot `form-<name>.png` saved first, so
/// that a failure leaves the picture of it.
///
/// # Panics
/// Something is unlabelled, overlaps, is covered or cut off.
fn look(browser: &Browser, name: &str) -> Value {
    let parts = serde_json::to_string(PARTS).unwrap();
    let state = browser.eval(&format!("const parts = {parts};\n{LOOK}"));
    browser.save_screenshot(env!("CARGO_TARGET_TMPDIR"), &format!("form-{name}.png"));
    let mut problems = Vec::new();
    for key in ["unlabelled", "overlaps", "covered", "clipped"] {
        if state[key] != json!([]) {
            problems.push(format!("{key}: {}", state[key]));
        }
    }
    assert!(
        problems.is_empty(),
        "{name}: {}\nfields: {}",
        problems.join("\n"),
        state["controls"]
    );
    state
}

/// The parts of `PARTS` that `state` says are rendered.
fn shown(state: &Value) -> BTreeSet<String> {
    state["shown"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, v)| **v == json!(true))
        .map(|(k, _)| k.clone())
        .collect()
}

/// Picks `value` in the select `selector` as a user's choice does (a `change` event).
fn pick(browser: &Browser, selector: &str, value: &str) {
    let script = format!(
        "const e = document.querySelector({}); e.value = {}; \
         if (e.value !== {1}) return false; \
         e.dispatchEvent(new Event('change', {{ bubbles: true }})); return true;",
        json!(selector),
        json!(value)
    );
    assert_eq!(browser.eval(&script), json!(true), "{value} in {selector}");
}

/// Every format's form, its tabs, board sizes, openings and engine kinds, at `width`.
fn every_state(browser: &Browser, width: u32) {
    let at = |name: &str| format!("{width}-{name}");
    pick(browser, "#f-game", "loa");
    pick(browser, "#f-openings-kind", "generated");
    let offered = browser
        .eval("return [...document.querySelectorAll('#f-format option')].map((o) => o.value);");
    let expected: Vec<&str> = FORMATS.iter().map(|(f, _)| *f).collect();
    assert_eq!(offered, json!(expected), "the formats offered");
    let always: BTreeSet<String> = ["f-plies", "f-seed", "new-fields"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (format, parts) in FORMATS {
        pick(browser, "#f-format", format);
        let state = look(browser, &at(format));
        let mut want = always.clone();
        want.extend(parts.iter().map(|s| s.to_string()));
        assert_eq!(shown(&state), want, "{format}: {}", state["controls"]);
        let preview = state["preview"].as_str().unwrap();
        assert!(
            preview.contains(&format!("format = \"{format}\"")),
            "{preview}"
        );
        assert_ne!(state["note"], "", "{format}: what the engines are");
    }

    // The board size is Amazons' alone.
    pick(browser, "#f-format", "sprt");
    pick(browser, "#f-game", "amazons");
    let state = look(browser, &at("amazons"));
    assert!(shown(&state).contains("f-size-label"), "{}", state["shown"]);
    pick(browser, "#f-game", "loa");
    assert!(!shown(&look(browser, &at("loa"))).contains("f-size-label"));

    // Openings from a file: its fields instead of the plies (the seed orders a random file).
    pick(browser, "#f-openings-kind", "file");
    let state = look(browser, &at("openings-file"));
    for (part, wanted) in [
        ("f-plies", false),
        ("f-seed", true),
        ("f-openings-file", true),
        ("f-openings-format", true),
        ("f-openings-order", true),
    ] {
        assert_eq!(
            shown(&state).contains(part),
            wanted,
            "{part}: {}",
            state["shown"]
        );
    }
    pick(browser, "#f-openings-kind", "generated");

    // Each kind of engine shows its own fields, labelled.
    for (kind, fields) in [
        ("player", &["Player spec"][..]),
        (
            "source",
            &[
                "Repository",
                "Commit (full hash)",
                "Build command",
                "Program path",
                "Bench nodes (optional)",
            ][..],
        ),
        ("version", &["Version"][..]),
    ] {
        pick(
            browser,
            "#f-engines tbody tr:first-child [data-field=kind]",
            kind,
        );
        let state = look(browser, &at(&format!("engine-{kind}")));
        let first: Vec<String> = state["controls"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c.as_str()?.strip_prefix("engine 0's ").map(String::from))
            .collect();
        for label in fields {
            assert!(
                first.iter().any(|c| c.ends_with(&format!(": {label}"))),
                "{kind}: {label} in {first:?}"
            );
        }
        let others = [
            "version", "player", "git", "commit", "build", "binary", "bench",
        ];
        let rendered: Vec<&str> = first.iter().map(|c| c.split(':').next().unwrap()).collect();
        for field in others {
            let own = match kind {
                "source" => ["git", "commit", "build", "binary", "bench"].contains(&field),
                _ => field == kind,
            };
            assert_eq!(
                rendered.contains(&field),
                own,
                "{kind}: {field} in {first:?}"
            );
        }
    }

    // The tabs: the TOML file's fields instead of the form's, and back.
    browser.click("#new-mode-toml");
    let state = look(browser, &at("toml"));
    let tabs = browser.eval(
        "return ['#new-mode-form', '#new-mode-toml'] \
           .map((id) => document.querySelector(id).getAttribute('aria-selected'));",
    );
    assert_eq!(tabs, json!(["false", "true"]));
    let on = shown(&state);
    assert!(
        on.contains("new-text") && on.contains("new-toml") && !on.contains("new-fields"),
        "{}",
        state["shown"]
    );
    assert!(
        !on.iter().any(|part| part.starts_with("f-")),
        "no form field under the TOML tab: {}",
        state["shown"]
    );
    browser.click("#new-mode-form");
    let state = look(browser, &at("form-again"));
    let on = shown(&state);
    assert!(
        on.contains("new-fields") && !on.contains("new-text") && on.contains("f-sprt"),
        "{}",
        state["shown"]
    );
}

/// A browser signed in as user `ada` (added here) on the dashboard of the coordinator on
/// `port`, its New test form open with its two engine rows; tall enough that the whole
/// form is on a screenshot.
fn open_form(port: u16) -> Browser {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tourney"));
    command
        .args(["user", "add", "ada", "--role", "user", "--password-stdin"])
        .args(["--coordinator", &format!("http://127.0.0.1:{port}")])
        .env("TOURNEY_TOKEN", "admin-secret");
    let added = output_with_stdin(&mut command, "ada's long password\n");
    assert!(
        added.status.success(),
        "{}",
        String::from_utf8_lossy(&added.stderr)
    );
    let browser = Browser::start(1280, 2400);
    browser.goto(&format!("http://127.0.0.1:{port}/"));
    browser.log_in("ada", "ada's long password");
    browser.wait_for(
        10,
        "the new-test button",
        "return !document.querySelector('#new-open').hidden;",
    );
    browser.click("#new-open");
    browser.wait_for(
        10,
        "the form",
        "return document.querySelector('#new-test').open \
                && document.querySelectorAll('#f-engines tbody tr').length === 2;",
    );
    browser
}

#[test]
fn the_new_test_form_shows_each_formats_fields_labelled_and_apart() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let browser = open_form(port);
    every_state(&browser, 1280);
    // A narrow window (a phone's) wraps the form; still nothing overlaps or is cut off.
    browser.set_window_size(420, 2400);
    every_state(&browser, 420);
}

#[test]
fn a_line_s_preset_fills_the_form_in_one_choice() {
    if !chromium() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (coordinator, port) = start_coordinator(0, &dir.path().join("data"));
    let _coordinator = Reaped(coordinator);
    let book = dir.path().join("book.txt");
    std::fs::write(&book, "b1-b3\nc1-c3\nd1-d3\n").unwrap();
    admin(port, &["version", "add", "base", "--player", "random"]);
    let ltc = format!(
        "ltc=tc:60+0.6,elo0:0.5,elo1:2.5,threads:2,option.Hash:64,book:{},book_format:moves,\
         book_order:random",
        book.display()
    );
    add_program_version(
        port,
        "patch",
        &[
            "--parent",
            "base",
            "--preset",
            &ltc,
            "--preset",
            "quick=nodes:500",
        ],
    );
    let sha = preset_book(port, "patch");
    let browser = open_form(port);
    browser.eval(
        "const rows = document.querySelectorAll('#f-engines tbody tr'); \
         ['patch', 'base'].forEach((v, i) => { \
           const input = rows[i].querySelector('[data-field=version]'); input.value = v; \
           input.dispatchEvent(new Event('input', { bubbles: true })); }); return true;",
    );
    let offered = browser.wait_for(
        10,
        "the line's presets offered",
        "return document.querySelector('#f-line-preset-label').hidden ? null \
           : [...document.querySelectorAll('#f-line-preset option')].map((o) => o.value);",
    );
    assert_eq!(offered, json!(["", "ltc", "quick"]));
    pick(&browser, "#f-line-preset", "ltc");
    let fields = browser.eval(
        "return Object.fromEntries(['#f-tc', '#f-elo0', '#f-elo1', '#f-preset', '#f-threads', \
           '#f-options', '#f-openings-kind', '#f-openings-format', '#f-openings-order', \
           '#f-nodes', '#f-depth', '#f-movetime'] \
           .map((id) => [id, document.querySelector(id).value]));",
    );
    // Its clock is the test's time: the form's default nodes a move are gone.
    assert_eq!(
        fields,
        json!({
            "#f-tc": "60+0.6", "#f-nodes": "", "#f-depth": "", "#f-movetime": "",
            "#f-elo0": "0.5", "#f-elo1": "2.5", "#f-preset": "0.5,2.5",
            "#f-threads": "2", "#f-options": "Hash=64", "#f-openings-kind": "file",
            "#f-openings-format": "moves", "#f-openings-order": "random",
        })
    );
    let state = look(&browser, "line-preset");
    let preview = state["preview"].as_str().unwrap();
    assert!(
        preview.contains(&format!("file = \"{sha}\""))
            && preview.contains("threads = 2")
            && !preview.contains("nodes ="),
        "{preview}"
    );
    // The outside patch gets the option; the built-in base takes none.
    assert_eq!(
        preview.matches("options = { \"Hash\" = \"64\" }").count(),
        1,
        "{preview}"
    );
    let spec = browser.eval("return document.querySelector('#f-line-preset-spec').textContent;");
    assert!(spec.as_str().unwrap().starts_with("tc:60+0.6"), "{spec}");

    browser.click("#new-submit");
    let sent = browser.wait_for(
        30,
        "the test submitted",
        "const error = document.querySelector('#new-error').textContent; \
         return !document.querySelector('#new-test').open || error ? error || location.hash : null;",
    );
    let id = sent
        .as_str()
        .unwrap()
        .strip_prefix("#t=")
        .unwrap_or_else(|| panic!("{sent}"));
    let status = status(port, id);
    assert_eq!(status["openings"], 3, "the book's openings: {status}");
}
