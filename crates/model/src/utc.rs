//! Unix times as UTC calendar text, without a time-zone database: PGN's `Date` and `Time`
//! tags and the reports' "started" lines.

use std::fmt;

/// A moment in UTC, from Unix milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utc {
    /// Year, month (1–12), day (1–31).
    pub date: (i64, u32, u32),
    /// Hour, minute, second.
    pub time: (u32, u32, u32),
}

impl Utc {
    /// The calendar date and time of `unix_ms` milliseconds after 1970-01-01 00:00 UTC.
    pub fn from_unix_ms(unix_ms: u64) -> Utc {
        let seconds = unix_ms / 1000;
        let (days, of_day) = ((seconds / 86_400) as i64, (seconds % 86_400) as u32);
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Utc {
            date: (year, month, day),
            time: (of_day / 3600, of_day / 60 % 60, of_day % 60),
        }
    }

    /// The current time.
    pub fn now() -> Utc {
        Utc::from_unix_ms(unix_ms_now())
    }

    /// `YYYY.MM.DD`, PGN's date.
    pub fn pgn_date(&self) -> String {
        let (y, m, d) = self.date;
        format!("{y:04}.{m:02}.{d:02}")
    }

    /// `HH:MM:SS`.
    pub fn clock(&self) -> String {
        let (h, m, s) = self.time;
        format!("{h:02}:{m:02}:{s:02}")
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC`.
impl fmt::Display for Utc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.date;
        write!(f, "{y:04}-{m:02}-{d:02} {} UTC", self.clock())
    }
}

/// A span of `ms` milliseconds as `h:mm:ss`.
pub fn hms(ms: u64) -> String {
    let s = ms / 1000;
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Milliseconds since the Unix epoch now (0 if the clock is before it).
pub fn unix_ms_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates_and_times() {
        assert_eq!(Utc::from_unix_ms(0).to_string(), "1970-01-01 00:00:00 UTC");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.
        let t = Utc::from_unix_ms(951_827_696_000);
        assert_eq!(
            (t.pgn_date(), t.clock()),
            ("2000.02.29".into(), "12:34:56".into())
        );
        assert_eq!(
            Utc::from_unix_ms(1_796_089_411_999).to_string(),
            "2026-12-01 01:43:31 UTC"
        );
        assert_eq!(
            Utc::from_unix_ms(4_107_542_400_000).pgn_date(),
            "2100.03.01"
        );
        assert_eq!(hms(3_725_999), "1:02:05");
    }
}
