//! Git repositories made by tests: a shell command run in a work tree with a fixed author,
//! so that tests commit without a user's git configuration.

use std::path::Path;
use std::process::Command;

/// Runs `script` with `sh -c` in `dir`, as author and committer `dev`; its trimmed stdout.
///
/// # Panics
/// The script fails (the panic shows its stderr).
pub fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "dev")
        .env("GIT_AUTHOR_EMAIL", "dev@example.org")
        .env("GIT_COMMITTER_NAME", "dev")
        .env("GIT_COMMITTER_EMAIL", "dev@example.org")
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{script}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
