//! The files an outside engine's command line names after its program (a script:
//! `python3 engines/bot.py`, `java -jar bot.jar`), read from the directory the command is
//! written for (a tournament file's, or the working directory of `tourney version add`):
//! each is uploaded with the engine and placed at the same path in its working directory
//! on every worker. A script a known interpreter is given must be there.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};

/// `name`, a path relative to `base` (or an absolute one), if it stays under `base` (no
/// `..`, no link out of it): a tournament file names only files beside or below it.
pub(crate) fn confined(base: &Path, name: &str) -> Result<PathBuf> {
    let relative = Path::new(name);
    if !relative.components().all(|c| {
        matches!(
            c,
            Component::Normal(_) | Component::CurDir | Component::RootDir
        )
    }) {
        bail!("'{name}' must be a path under the tournament file's directory (no '..')");
    }
    let path = base.join(relative);
    let (real_base, real) = (
        std::fs::canonicalize(if base.as_os_str().is_empty() {
            Path::new(".")
        } else {
            base
        })?,
        std::fs::canonicalize(&path).with_context(|| format!("reading {}", path.display()))?,
    );
    if !real.starts_with(&real_base) {
        bail!("'{name}' leads out of the tournament file's directory");
    }
    Ok(path)
}

/// The files to upload with an outside engine run by `command`, written for the directory
/// `base` (`place` says which, in errors: "the tournament file's directory"), whose
/// `files` (name there → path or sha256) are placed already: each name in the engine's
/// working directory with its path here ([`command_files`]).
///
/// # Errors
/// The script a known interpreter is given is not a file under `base` ([`check_script`]).
pub(crate) fn engine_files(
    base: &Path,
    place: &str,
    command: &str,
    files: &BTreeMap<String, String>,
) -> Result<Vec<(String, PathBuf)>> {
    check_script(base, place, command, files)?;
    Ok(command_files(base, command, files)
        .into_iter()
        .map(|name| {
            let path = base.join(&name);
            (name, path)
        })
        .collect())
}

/// The files an outside engine's command line names after its program, beside or below
/// `base` (a script: `python3 engine.py`, `java -jar bot.jar`), as the command writes them
/// (`./` left out), to be uploaded with it and placed at the same path in its working
/// directory; those its `files` name already are left out, and at most
/// [`tourney_model::source::MAX_FILES`] are taken.
pub(crate) fn command_files(
    base: &Path,
    command: &str,
    files: &BTreeMap<String, String>,
) -> Vec<String> {
    let words = tourney_runner::split_command(command);
    let mut named = Vec::new();
    for word in words.iter().skip(1) {
        let Some(name) = placed_name(word) else {
            continue;
        };
        let inside = confined(base, word).is_ok_and(|p| p.is_file());
        if word.starts_with('-') || !inside || files.contains_key(&name) || named.contains(&name) {
            continue;
        }
        named.push(name);
    }
    named.truncate(tourney_model::source::MAX_FILES);
    named
}

/// The name a relative path `word` is placed at in an engine's directory (`./a/b` is
/// `a/b`); `None` for an absolute path or one with `..`.
fn placed_name(word: &str) -> Option<String> {
    let parts: Option<Vec<&str>> = Path::new(word)
        .components()
        .filter(|c| *c != Component::CurDir)
        .map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect();
    parts.filter(|p| !p.is_empty()).map(|p| p.join("/"))
}

/// The interpreters whose script is checked, by their program's file name: the options
/// that give the program in place of a script (`python3 -c ...`, `python3 -m pkg`), and
/// those followed by a value (`python3 -W ignore bot.py`).
struct Interpreter {
    inline: &'static [&'static str],
    valued: &'static [&'static str],
}

/// The interpreter `program` names (its file name: `python3`, `/usr/bin/python3.12`,
/// `pypy3`, `node`, `ruby`, `perl`, `bash`, `sh`); `java` is apart (its `-jar`).
fn interpreter(program: &str) -> Option<Interpreter> {
    let name = Path::new(program).file_name()?.to_str()?;
    let versioned = |stem: &str| {
        name.strip_prefix(stem)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    let (inline, valued): (&[&str], &[&str]) = if versioned("python") || versioned("pypy") {
        (&["-c", "-m"], &["-W", "-X", "-Q"])
    } else if name == "node" || name == "nodejs" {
        (
            &["-e", "--eval", "-p", "--print"],
            &["-r", "--require", "--import", "--loader"],
        )
    } else if versioned("ruby") {
        (&["-e"], &["-I", "-r"])
    } else if versioned("perl") {
        (&["-e", "-E"], &["-I", "-M"])
    } else if ["bash", "sh", "dash", "zsh", "ksh"].contains(&name) {
        (&["-c"], &["-o", "-O", "+o", "+O"])
    } else {
        return None;
    };
    Some(Interpreter { inline, valued })
}

/// The script a known interpreter is given in `command`: for `java`, the word after
/// `-jar`; for the interpreters of [`interpreter`], the first word after the program that
/// is not an option (nor an option's value; after `--`, the next word); `None` for other
/// programs, and where the program is given inline (`python3 -c ...`, `-m`, `node -e`).
pub(crate) fn script(command: &str) -> Option<String> {
    let words = tourney_runner::split_command(command);
    let (program, args) = words.split_first()?;
    let name = Path::new(program).file_name()?.to_str()?;
    if name == "java" {
        let jar = args.iter().position(|w| w == "-jar")?;
        return args.get(jar + 1).cloned();
    }
    let interpreter = interpreter(program)?;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if interpreter.inline.contains(&word.as_str()) {
            return None;
        }
        if word == "--" {
            return words.next().cloned();
        }
        if interpreter.valued.contains(&word.as_str()) {
            words.next();
            continue;
        }
        if !word.starts_with('-') && !word.starts_with('+') {
            return Some(word.clone());
        }
    }
    None
}

/// Refuses a command whose [`script`] is a relative path that is not a file under `base`
/// (`place` says which directory, in the error): nothing could be uploaded for it, and
/// every worker would fail to start the engine. A script given by an absolute path is one
/// on the workers' own disks, and one `files` places already is not read here.
///
/// # Errors
/// The script, where it was looked for, and why it cannot be used.
pub(crate) fn check_script(
    base: &Path,
    place: &str,
    command: &str,
    files: &BTreeMap<String, String>,
) -> Result<()> {
    let Some(word) = script(command) else {
        return Ok(());
    };
    if Path::new(&word).is_absolute() {
        return Ok(());
    }
    if placed_name(&word).is_some_and(|name| files.contains_key(&name)) {
        return Ok(());
    }
    let shown = if base.as_os_str().is_empty() {
        Path::new(".").join(&word)
    } else {
        base.join(&word)
    };
    let path = shown.display();
    match confined(base, &word) {
        Ok(p) if p.is_file() => Ok(()),
        Ok(_) => bail!("script '{word}' ({path}) is not a file"),
        Err(_) if !shown.exists() => {
            let hint = (similar_file(base, &word))
                .map(|near| format!("; did you mean '{near}'?"))
                .unwrap_or_default();
            bail!("script '{word}' not found: no file {path} (it is uploaded from {place}){hint}")
        }
        Err(_) => bail!(
            "script '{word}' ({path}) is outside {place}: only files beside or below it are \
             uploaded"
        ),
    }
}

/// The file beside where `word` (a relative path under `base`) was looked for whose name
/// is nearest to its name, within two edits (`random_lao.py` for `random_loa.py`), as
/// `word` would name it; `None` when there is none, or more than one as near.
fn similar_file(base: &Path, word: &str) -> Option<String> {
    let wanted = Path::new(word);
    let name = wanted.file_name()?.to_str()?;
    let folder = wanted.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = match folder {
        Some(folder) => confined(base, folder.to_str()?).ok()?,
        None => base.to_path_buf(),
    };
    let mut near: Vec<(usize, String)> = std::fs::read_dir(dir.join("."))
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let other = entry.file_name().into_string().ok()?;
            let edits = edit_distance(name, &other);
            (edits <= 2 && edits < name.chars().count() / 2 && entry.path().is_file())
                .then_some((edits, other))
        })
        .collect();
    near.sort();
    match near.as_slice() {
        [(a, only), rest @ ..] if rest.first().is_none_or(|(b, _)| b > a) => {
            Some(folder.map_or(only.clone(), |f| format!("{}/{only}", f.display())))
        }
        _ => None,
    }
}

/// The Levenshtein distance between `a` and `b`, in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_s_files_inside_the_tournament_s_directory_are_uploaded_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("project");
        std::fs::create_dir_all(base.join("engines")).unwrap();
        for file in ["engines/bot.py", "net.bin"] {
            std::fs::write(base.join(file), "x").unwrap();
        }
        std::fs::write(dir.path().join("outside.py"), "x").unwrap();
        let none = BTreeMap::new();
        assert_eq!(
            command_files(
                &base,
                "python3 ./engines/bot.py --weights net.bin -v",
                &none
            ),
            ["engines/bot.py", "net.bin"]
        );
        // Not a file in the directory: a flag, a missing file, a directory, a path out.
        assert!(
            command_files(
                &base,
                "python3 -v missing.py engines ../outside.py /etc/hostname",
                &none
            )
            .is_empty()
        );
        // A file the engine's `files` place already is not sent twice.
        let named = BTreeMap::from([("net.bin".to_string(), "net.bin".to_string())]);
        assert_eq!(
            command_files(&base, "java -jar net.bin engines/bot.py", &named),
            ["engines/bot.py"]
        );
    }

    #[test]
    fn the_script_of_a_known_interpreter_is_its_first_word_that_is_no_option() {
        let cases = [
            (
                "python3 engines/bot.py --protocol ugi",
                Some("engines/bot.py"),
            ),
            ("/usr/bin/python3.12 -u -W ignore bot.py", Some("bot.py")),
            ("pypy3 -O -- -odd.py", Some("-odd.py")),
            ("python3 -m engine --uci", None),
            ("python -c 'print(1)'", None),
            ("node --require ./hook.js bot.js", Some("bot.js")),
            ("node -e 'x'", None),
            ("ruby -I lib bot.rb", Some("bot.rb")),
            ("perl -w bot.pl", Some("bot.pl")),
            ("bash -o pipefail run.sh loa", Some("run.sh")),
            ("sh -c 'exec ./e'", None),
            ("java -Xmx1g -jar bot.jar --uci", Some("bot.jar")),
            ("java -cp . Bot", None),
            ("./engine engines/bot.py", None),
            ("pythonic bot.py", None),
            ("python3", None),
        ];
        for (command, expected) in cases {
            assert_eq!(script(command).as_deref(), expected, "{command}");
        }
    }

    #[test]
    fn a_missing_or_outside_script_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().join("project");
        std::fs::create_dir_all(base.join("engines")).unwrap();
        std::fs::write(base.join("engines/random_loa.py"), "x").unwrap();
        std::fs::write(dir.path().join("outside.py"), "x").unwrap();
        let place = "the tournament file's directory";
        let none = BTreeMap::new();
        let check = |command: &str| check_script(&base, place, command, &none);
        check("python3 engines/random_loa.py --protocol ugi").unwrap();
        check("python3 ./engines/random_loa.py").unwrap();
        check("python3 /opt/engines/bot.py").unwrap();
        check("./engine missing.py").unwrap();
        let typo = check("python3 engines/random_lao.py --protocol ugi").unwrap_err();
        let missing = base.join("engines/random_lao.py");
        assert_eq!(
            typo.to_string(),
            format!(
                "script 'engines/random_lao.py' not found: no file {} (it is uploaded from \
                 {place}); did you mean 'engines/random_loa.py'?",
                missing.display()
            )
        );
        // No guess where nothing is near, or two files are as near.
        let far = check("python3 engines/minimax.py").unwrap_err().to_string();
        assert!(
            far.ends_with(&format!("(it is uploaded from {place})")),
            "{far}"
        );
        std::fs::write(base.join("engines/random_lob.py"), "x").unwrap();
        let two = check("python3 engines/random_lox.py")
            .unwrap_err()
            .to_string();
        assert!(!two.contains("did you mean"), "{two}");
        assert_eq!(edit_distance("gtp_amazon.py", "gtp_amazons.py"), 1);
        let out = check("python3 ../outside.py").unwrap_err().to_string();
        assert!(
            out.contains("is outside the tournament file's directory"),
            "{out}"
        );
        let folder = check("java -jar engines").unwrap_err().to_string();
        assert!(folder.contains("is not a file"), "{folder}");
        // A script its `files` place (uploaded before, named by its sha256) is not read.
        let placed = BTreeMap::from([("engines/gone.py".to_string(), "a".repeat(64))]);
        check_script(&base, place, "python3 engines/gone.py", &placed).unwrap();
        // engine_files gives what is uploaded, from where.
        let files = engine_files(&base, place, "python3 ./engines/random_loa.py", &none);
        assert_eq!(
            files.unwrap(),
            [(
                "engines/random_loa.py".to_string(),
                base.join("engines/random_loa.py")
            )]
        );
    }
}
