//! `tourney --help` with its commands in groups, everyday ones first in each.
//!
//! clap lists subcommands in one flat "Commands:" list and has no groups of them, so the
//! root command's help template lists them itself from [`GROUPS`]; `tourney help`,
//! `tourney --help` and `tourney -h` all print it, and docs/cli.md follows the same
//! groups. A command left out of [`GROUPS`] is missing from the help: a test fails.

use std::fmt::Write as _;

use clap::CommandFactory;

/// The groups of commands, in the help's order, each with its commands in theirs.
pub(crate) const GROUPS: &[(&str, &[&str])] = &[
    ("Play and run", &["run", "play", "replay"]),
    (
        "Cluster",
        &[
            "coordinator",
            "worker",
            "machines",
            "user",
            "whoami",
            "events",
            "health",
            "link",
            "store",
        ],
    ),
    (
        "Tests",
        &[
            "submit", "status", "report", "clone", "cancel", "resume", "approve", "modify", "note",
            "export", "exclude", "archive", "version", "timeline", "pool",
        ],
    ),
    (
        "Data and tuning",
        &["data", "tune", "openings", "ratings", "stats"],
    ),
    (
        "Engines and tools",
        &["check-engine", "engine", "bench", "perft", "legal"],
    ),
];

/// The command line's definition with the grouped help: what `main` parses with.
pub(crate) fn command() -> clap::Command {
    let cmd = crate::Cli::command();
    let template = template(&cmd);
    cmd.help_template(template)
}

/// clap's default template with the grouped command list where it lists "Commands:".
fn template(cmd: &clap::Command) -> String {
    let styles = cmd.get_styles();
    let (header, literal) = (styles.get_header(), styles.get_literal());
    let width = GROUPS
        .iter()
        .flat_map(|(_, names)| names.iter())
        .map(|name| name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::from("{before-help}{about-with-newline}\n{usage-heading} {usage}\n");
    for (group, names) in GROUPS {
        let _ = write!(out, "\n{header}{group}:{header:#}\n");
        for name in *names {
            let about = cmd
                .find_subcommand(name)
                .and_then(|sub| sub.get_about())
                .map(ToString::to_string)
                .unwrap_or_default();
            // The template's `{` starts a placeholder: none is expected in a summary, and a
            // test checks every summary comes out whole.
            let pad = " ".repeat(width - name.len());
            let _ = writeln!(out, "  {literal}{name}{literal:#}{pad}  {about}");
        }
    }
    out.push_str("\n{options-heading}\n{options}{after-help}");
    out.replace("{options-heading}", &format!("{header}Options:{header:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The commands the help must list: every visible subcommand but clap's own `help`.
    fn commands() -> Vec<String> {
        crate::Cli::command()
            .get_subcommands()
            .filter(|c| !c.is_hide_set() && c.get_name() != "help")
            .map(|c| c.get_name().to_string())
            .collect()
    }

    /// The help printed for `args`, as clap prints it (without colour).
    fn printed(args: &[&str]) -> String {
        let err = command()
            .try_get_matches_from(args)
            .err()
            .unwrap_or_else(|| panic!("{args:?} printed no help"));
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{args:?}");
        err.render().to_string()
    }

    /// Checks `help`: the groups in order, each command once, under its group, with its
    /// summary whole.
    fn check(help: &str, what: &str) {
        let lines: Vec<&str> = help.lines().collect();
        let headings: Vec<usize> = (GROUPS.iter())
            .map(|(group, _)| {
                let heading = format!("{group}:");
                let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == heading).collect();
                assert_eq!(at.len(), 1, "{what}: heading {heading:?} in\n{help}");
                at[0]
            })
            .collect();
        assert!(
            headings.windows(2).all(|w| w[0] < w[1]),
            "{what}: groups out of order in\n{help}"
        );
        let root = crate::Cli::command();
        for name in commands() {
            let group = GROUPS
                .iter()
                .position(|(_, names)| names.contains(&name.as_str()))
                .unwrap_or_else(|| panic!("`{name}` is in no group of help::GROUPS"));
            let at: Vec<usize> = (0..lines.len())
                .filter(|&i| lines[i].trim_start().split(' ').next() == Some(name.as_str()))
                .filter(|&i| lines[i].starts_with("  "))
                .collect();
            assert_eq!(at.len(), 1, "{what}: `{name}` listed {} times", at.len());
            let end = headings.get(group + 1).copied().unwrap_or(lines.len());
            assert!(
                (headings[group]..end).contains(&at[0]),
                "{what}: `{name}` not under {:?}",
                GROUPS[group].0
            );
            let about = root.find_subcommand(&name).unwrap().get_about();
            let about = about.map(ToString::to_string).unwrap_or_default();
            assert!(!about.is_empty(), "`{name}` has no summary");
            assert!(
                lines[at[0]].ends_with(&format!("  {about}")),
                "{what}: `{name}`'s summary cut: {:?}",
                lines[at[0]]
            );
        }
        assert!(help.contains("Usage: tourney"), "{what}: {help}");
        assert!(help.contains("Options:\n"), "{what}: {help}");
        assert!(help.contains("--log-format"), "{what}: {help}");
    }

    #[test]
    fn every_command_is_in_exactly_one_group() {
        let listed: Vec<&str> = GROUPS.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        let mut unique = listed.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), listed.len(), "a command in two groups");
        let mut commands = commands();
        commands.sort_unstable();
        assert_eq!(unique, commands, "help::GROUPS and the commands differ");
    }

    #[test]
    fn the_help_lists_the_groups_in_order_and_every_command_once() {
        for args in [
            &["tourney", "--help"][..],
            &["tourney", "-h"],
            &["tourney", "help"],
        ] {
            check(&printed(args), &args.join(" "));
        }
        // The everyday commands lead their groups.
        let help = printed(&["tourney", "--help"]);
        let order: Vec<&str> = (help.lines())
            .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| !w.starts_with('-'))
            .collect();
        assert_eq!(order[..4], ["run", "play", "replay", "coordinator"]);
        let tests = order.iter().position(|&c| c == "submit").unwrap();
        assert_eq!(order[tests..tests + 3], ["submit", "status", "report"]);
        // The long help keeps the long description; the short one does not.
        assert!(help.contains("The admin commands"));
        assert!(!printed(&["tourney", "-h"]).contains("The admin commands"));
        // A subcommand's own help is clap's as before.
        let run = printed(&["tourney", "run", "--help"]);
        assert!(!run.contains("Play and run:"), "{run}");
    }
}
