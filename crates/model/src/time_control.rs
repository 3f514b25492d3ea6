//! Time controls in the notation engine testers know: `40/60+0.5`, `10+0.1`, `inf`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How much time each side has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimeControl {
    /// No clock (`inf`): moves are bounded by per-move limits only.
    Infinite,
    /// A clock: `base` for `moves` moves (then `base` again), or for the whole game, plus
    /// `increment` after every move.
    Clock {
        /// Moves per period (`None`: the whole game).
        moves: Option<u32>,
        /// Time per period.
        base: Duration,
        /// Added after each move.
        increment: Duration,
    },
}

/// A time control that does not parse: what is wrong, quoting the text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TimeControlError {
    /// A time that is not a number.
    #[error("{what} '{text}' is not a number of seconds")]
    NotSeconds {
        /// `base time` or `increment`.
        what: &'static str,
        /// The text given.
        text: String,
    },
    /// A negative or infinite time.
    #[error("{what} '{text}' must be zero or more seconds")]
    Negative {
        /// `base time` or `increment`.
        what: &'static str,
        /// The text given.
        text: String,
    },
    /// Moves per period that are not a whole number, or zero.
    #[error("moves per period '{moves}' in '{text}' must be a whole number, at least 1")]
    Moves {
        /// The moves given.
        moves: String,
        /// The whole time control.
        text: String,
    },
    /// No base time and no increment.
    #[error("time control '{0}' gives no time")]
    NoTime(String),
}

fn seconds(text: &str, what: &'static str) -> Result<Duration, TimeControlError> {
    let value: f64 = text.parse().map_err(|_| TimeControlError::NotSeconds {
        what,
        text: text.to_string(),
    })?;
    if !(value >= 0.0 && value.is_finite()) {
        return Err(TimeControlError::Negative {
            what,
            text: text.to_string(),
        });
    }
    Ok(Duration::from_secs_f64(value))
}

impl FromStr for TimeControl {
    type Err = TimeControlError;

    /// Parses `inf`, `base[+inc]` or `moves/base[+inc]`, in seconds (`40/60+0.5`).
    fn from_str(text: &str) -> Result<Self, TimeControlError> {
        let text = text.trim();
        if matches!(text, "inf" | "infinite" | "tc=inf") {
            return Ok(TimeControl::Infinite);
        }
        let (moves, rest) = match text.split_once('/') {
            Some((m, rest)) => {
                let moves = m.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                    TimeControlError::Moves {
                        moves: m.to_string(),
                        text: text.to_string(),
                    }
                })?;
                (Some(moves), rest)
            }
            None => (None, text),
        };
        let (base, increment) = match rest.split_once('+') {
            Some((b, i)) => (seconds(b, "base time")?, seconds(i, "increment")?),
            None => (seconds(rest, "base time")?, Duration::ZERO),
        };
        if base.is_zero() && increment.is_zero() {
            return Err(TimeControlError::NoTime(text.to_string()));
        }
        Ok(TimeControl::Clock {
            moves,
            base,
            increment,
        })
    }
}

impl fmt::Display for TimeControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Infinite => f.write_str("inf"),
            TimeControl::Clock {
                moves,
                base,
                increment,
            } => {
                if let Some(m) = moves {
                    write!(f, "{m}/")?;
                }
                write!(f, "{}", base.as_secs_f64())?;
                if !increment.is_zero() {
                    write!(f, "+{}", increment.as_secs_f64())?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_forms_and_prints_them_back() {
        let tc: TimeControl = "40/60+0.5".parse().unwrap();
        assert_eq!(
            tc,
            TimeControl::Clock {
                moves: Some(40),
                base: Duration::from_secs(60),
                increment: Duration::from_millis(500)
            }
        );
        assert_eq!(tc.to_string(), "40/60+0.5");
        assert_eq!(
            "10+0.1".parse::<TimeControl>().unwrap().to_string(),
            "10+0.1"
        );
        assert_eq!("inf".parse::<TimeControl>().unwrap(), TimeControl::Infinite);
        assert_eq!(
            "tc=inf".parse::<TimeControl>().unwrap(),
            TimeControl::Infinite
        );
        assert_eq!("5".parse::<TimeControl>().unwrap().to_string(), "5");
    }

    #[test]
    fn bad_time_controls_say_what_is_wrong() {
        assert!(
            "x/60"
                .parse::<TimeControl>()
                .unwrap_err()
                .to_string()
                .contains("moves per period 'x'")
        );
        assert!(
            "60+y"
                .parse::<TimeControl>()
                .unwrap_err()
                .to_string()
                .contains("increment 'y'")
        );
        assert!(
            "0/60"
                .parse::<TimeControl>()
                .unwrap_err()
                .to_string()
                .contains("at least 1")
        );
        assert!(
            "0+0"
                .parse::<TimeControl>()
                .unwrap_err()
                .to_string()
                .contains("gives no time")
        );
        assert!("-5".parse::<TimeControl>().is_err());
    }
}
