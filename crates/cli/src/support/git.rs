//! Resolving what a developer calls a commit (a branch, a tag, a hash or its prefix) to
//! the full commit hash, as `tourney version add --git` and `tourney submit` store it.

use std::process::{Command, Stdio};

use anyhow::{Result, bail};
use tourney_model::source::is_commit_hash;

/// Runs git with `args`; its stdout, or an error with the end of its stderr.
fn git(args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => bail!("git: {e} (is git installed?)"),
    };
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        let said = said.trim();
        bail!("{}", &said[said.len().saturating_sub(2000)..]);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The full hash of the commit `rev` names in the repository at `url`: a branch, a tag
/// (an annotated tag's commit), `HEAD`, or a commit hash or a prefix of one.
///
/// # Errors
/// The repository cannot be reached, or has no such commit; the message says which.
pub(crate) fn resolve_commit(url: &str, rev: &str) -> Result<String> {
    if url.starts_with('-') || rev.starts_with('-') {
        bail!("'{url}' at '{rev}': neither may start with '-'");
    }
    let refs = git(&["ls-remote", url])
        .map_err(|e| anyhow::anyhow!("the repository {url} cannot be fetched: {e}"))?;
    let wanted = [
        rev.to_string(),
        format!("refs/heads/{rev}"),
        format!("refs/tags/{rev}^{{}}"),
        format!("refs/tags/{rev}"),
    ];
    for name in &wanted {
        let found = refs.lines().find_map(|line| {
            let (hash, reference) = line.split_once('\t')?;
            (reference == name).then(|| hash.to_string())
        });
        if let Some(hash) = found {
            return Ok(hash);
        }
    }
    let hex = rev.len() >= 4 && rev.bytes().all(|b| b.is_ascii_hexdigit());
    if !hex {
        bail!("{url} has no branch or tag '{rev}'");
    }
    // A hash: fetched into a scratch repository to see that it is a commit there.
    let scratch = tempfile::tempdir()?;
    let dir = scratch.path().display().to_string();
    git(&["init", "-q", &dir])?;
    let shallow =
        is_commit_hash(rev) && git(&["-C", &dir, "fetch", "-q", "--depth", "1", url, rev]).is_ok();
    if !shallow {
        git(&[
            "-C",
            &dir,
            "fetch",
            "-q",
            "--tags",
            url,
            "+refs/heads/*:refs/remotes/r/*",
        ])
        .map_err(|e| anyhow::anyhow!("fetching {url}: {e}"))?;
    }
    match git(&[
        "-C",
        &dir,
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ]) {
        Ok(hash) => Ok(hash.trim().to_string()),
        Err(_) => bail!("{url} has no commit {rev}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tourney_tests::git::sh;

    #[test]
    fn branches_tags_and_hashes_resolve_to_the_commit() {
        let repo = tempfile::tempdir().unwrap();
        let dir = repo.path();
        sh(
            dir,
            "git init -q -b main . && echo 1 > f && git add f && git commit -q -m one",
        );
        let first = sh(dir, "git rev-parse HEAD");
        sh(
            dir,
            "git tag -a v1 -m v1 && echo 2 > f && git commit -q -am two",
        );
        let second = sh(dir, "git rev-parse HEAD");
        let url = format!("file://{}", dir.display());
        assert_eq!(resolve_commit(&url, "main").unwrap(), second);
        assert_eq!(resolve_commit(&url, "HEAD").unwrap(), second);
        assert_eq!(
            resolve_commit(&url, "v1").unwrap(),
            first,
            "the tag's commit"
        );
        assert_eq!(resolve_commit(&url, &first).unwrap(), first);
        assert_eq!(resolve_commit(&url, &first[..10]).unwrap(), first);
        let missing = resolve_commit(&url, "0123456789abcdef0123456789abcdef01234567");
        assert!(missing.unwrap_err().to_string().contains("has no commit"));
        let branch = resolve_commit(&url, "no-such-branch")
            .unwrap_err()
            .to_string();
        assert!(
            branch.contains("no branch or tag 'no-such-branch'"),
            "{branch}"
        );
        let gone = resolve_commit("file:///nonexistent/repo", "main").unwrap_err();
        assert!(gone.to_string().contains("cannot be fetched"), "{gone}");
    }
}
