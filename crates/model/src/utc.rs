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

    /// Unix milliseconds of `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM[:SS]` (UTC;
    /// a space may stand for the `T`, a trailing `Z` is allowed); `None` when it is not one.
    pub fn parse_unix_ms(text: &str) -> Option<u64> {
        let text = text.trim().trim_end_matches('Z');
        let (date, time) = text.split_once(['T', ' ']).unwrap_or((text, "00:00"));
        let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
        let (y, m, day) = (d.next()??, d.next()??, d.next()??);
        let mut t = time.split(':').map(|p| p.parse::<i64>().ok());
        let (hh, mm) = (t.next()??, t.next()??);
        let ss = t.next().flatten().unwrap_or(0);
        let valid = (1970..=9999).contains(&y)
            && (1..=12).contains(&m)
            && (1..=31).contains(&day)
            && (0..24).contains(&hh)
            && (0..60).contains(&mm)
            && (0..60).contains(&ss);
        if !valid {
            return None;
        }
        // Howard Hinnant's days_from_civil.
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + day - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        let days = era * 146_097 + doe - 719_468;
        let seconds = days * 86_400 + hh * 3600 + mm * 60 + ss;
        let unix_ms = u64::try_from(seconds).ok()? * 1000;
        // A day past the month's end (2026-02-30) does not come back the same.
        (Utc::from_unix_ms(unix_ms).date.2 == day as u32).then_some(unix_ms)
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

    #[test]
    fn calendar_text_parses_back_to_the_same_moment() {
        for ms in [0, 86_400_000, 951_782_400_000, 1_796_100_314_000] {
            let t = Utc::from_unix_ms(ms);
            let (y, m, d) = t.date;
            let (hh, mm, ss) = t.time;
            let text = format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z");
            assert_eq!(Utc::parse_unix_ms(&text), Some(ms), "{text}");
        }
        assert_eq!(Utc::parse_unix_ms("2000-02-29"), Some(951_782_400_000));
        assert_eq!(Utc::parse_unix_ms("1970-01-02 00:00"), Some(86_400_000));
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30",
            "2026-1",
            "yesterday",
            "2026-01-01T25:00",
        ] {
            assert_eq!(Utc::parse_unix_ms(bad), None, "{bad}");
        }
    }
}
