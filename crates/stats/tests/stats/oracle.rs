//! Loading oracle data and comparing numbers within its tolerances.

use serde_json::Value;
use std::path::PathBuf;

/// A JSON file of `tests/data/`.
pub(crate) fn load(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// A number of the oracle: JSON number, or the strings `inf`, `-inf`, `nan`.
pub(crate) fn number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) if s == "inf" => f64::INFINITY,
        Value::String(s) if s == "-inf" => f64::NEG_INFINITY,
        Value::String(s) if s == "nan" => f64::NAN,
        other => panic!("not a number: {other}"),
    }
}

/// Collects mismatches of `got` against `expected` under `|v - e| <= abs + rel |e|`
/// (NaN matches NaN, infinities match exactly).
pub(crate) struct Checker {
    pub(crate) failures: Vec<String>,
    pub(crate) checked: usize,
}

impl Checker {
    pub(crate) fn new() -> Self {
        Checker {
            failures: Vec::new(),
            checked: 0,
        }
    }

    pub(crate) fn num(&mut self, case: &Value, field: &str, got: f64, expected: &Value) {
        let e = number(expected);
        let tol = &case["tolerance"];
        let (abs, rel) = (tol["abs"].as_f64().unwrap(), tol["rel"].as_f64().unwrap());
        let ok = if e.is_nan() {
            got.is_nan()
        } else if e.is_infinite() {
            got == e
        } else {
            (got - e).abs() <= abs + rel * e.abs()
        };
        self.checked += 1;
        if !ok {
            self.failures
                .push(format!("{} {field}: got {got}, expected {e}", case["id"]));
        }
    }

    pub(crate) fn text(&mut self, case: &Value, field: &str, got: &str, expected: &Value) {
        self.checked += 1;
        if Some(got) != expected.as_str() {
            self.failures.push(format!(
                "{} {field}: got '{got}', expected {expected}",
                case["id"]
            ));
        }
    }

    pub(crate) fn finish(self, what: &str) {
        assert!(self.checked > 0, "{what}: nothing checked");
        assert!(
            self.failures.is_empty(),
            "{what}: {} of {} values differ:\n{}",
            self.failures.len(),
            self.checked,
            self.failures.join("\n")
        );
    }
}
