//! tourney's own releases: versions compared, as `tourney --version` prints them, and the
//! platform a program runs on. Workers that update themselves and the coordinator that
//! offers them a release share these.

/// `a` is an older version than `b` (dotted numbers compared as numbers; text after a
/// `-` or `+` is ignored).
pub fn older(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        let core = v.split(['-', '+']).next().unwrap_or_default();
        core.split('.').map(|p| p.parse().unwrap_or(0)).collect()
    };
    parts(a) < parts(b)
}

/// The version a `tourney --version` output names (`tourney 0.2.0` → `0.2.0`).
pub fn program_version(output: &str) -> Option<String> {
    let line = output.lines().next()?.trim();
    let version = line.strip_prefix("tourney ")?.trim();
    let numbers = version.split(['-', '+']).next().unwrap_or_default();
    let dotted = !numbers.is_empty()
        && numbers
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (dotted && version.len() <= 64 && !version.contains(char::is_whitespace))
        .then(|| version.to_string())
}

/// The version the program at `path` says it is (`PROGRAM --version`, given at most
/// `timeout`; killed past it).
///
/// # Errors
/// It does not start, does not answer in time, or prints no `tourney X.Y.Z`.
pub fn version_of(path: &std::path::Path, timeout: std::time::Duration) -> Result<String, String> {
    use std::io::Read;
    let mut child = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("running it: {e}"))?;
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`--version` did not answer within {timeout:?}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let mut out = String::new();
    (child.stdout.take().expect("piped"))
        .take(4096)
        .read_to_string(&mut out)
        .map_err(|e| e.to_string())?;
    program_version(&out).ok_or_else(|| {
        format!(
            "`--version` ended {status} and printed {:?}, not `tourney X.Y.Z`",
            out.trim()
        )
    })
}

/// The platform this program runs on, as releases name it (`x86_64-linux`).
pub fn this_platform() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_as_numbers() {
        assert!(older("0.1.9", "0.1.10"));
        assert!(older("0.1.0", "0.2.0") && !older("0.2.0", "0.2.0"));
        assert!(!older("1.0.0", "0.9.9"));
        assert!(older("0.2.0-dev", "0.2.1") && !older("0.2.1+x", "0.2.1"));
    }

    #[test]
    fn a_programs_version_is_read_from_its_first_line() {
        assert_eq!(program_version("tourney 0.2.0\n").as_deref(), Some("0.2.0"));
        assert_eq!(
            program_version("tourney 1.0.0-rc1").as_deref(),
            Some("1.0.0-rc1")
        );
        assert_eq!(program_version("cutechess 0.2.0"), None);
        assert_eq!(program_version("tourney x.y"), None);
        assert_eq!(program_version(""), None);
    }
}
