//! `docs/cli.md`, rendered from the command line's own help: the one source of the
//! command reference is the doc comments of the clap definition, so `--help` and the
//! documentation never disagree. A test compares the file with its rendering;
//! `TOURNEY_BLESS=1` writes it again.

use std::fmt::Write;

use clap::{Arg, Command};

/// Where the rendering goes, relative to this crate.
const PAGE: &str = "../../docs/cli.md";

/// The page for `root`, the whole command line.
fn render(root: &mut Command) -> String {
    root.build();
    let mut page = String::from(
        "# Command line\n\n<!-- Generated from the command line's help (the doc comments in \
         crates/cli); do not edit. After changing them, run `TOURNEY_BLESS=1 cargo test -p \
         tourney --bin tourney cli_docs` to write this page again. -->\n\n",
    );
    page.push_str(&long_text(root));
    page.push('\n');
    // In the groups of `tourney --help`, each with its table.
    let mut sections = String::new();
    for (group, names) in crate::help::GROUPS {
        let _ = write!(
            page,
            "\n**{group}**\n\n| command | what it does |\n|---|---|\n"
        );
        for name in *names {
            let command = (root.find_subcommand(name))
                .unwrap_or_else(|| panic!("help::GROUPS names `{name}`, no command"));
            section(command, &mut page, &mut sections);
        }
    }
    page.push_str("\nOptions of every command:\n\n");
    for arg in root.get_arguments().filter(|a| a.is_global_set()) {
        argument(arg, &mut page);
    }
    page.push_str(&sections);
    page
}

/// Appends `command`'s row to `index` and its section (then its subcommands') to
/// `sections`.
fn section(command: &Command, index: &mut String, sections: &mut String) {
    if command.is_hide_set() || command.get_name() == "help" {
        return;
    }
    let name = command.get_bin_name().unwrap_or(command.get_name());
    let anchor = name.replace(' ', "-");
    let about = command
        .get_about()
        .map(ToString::to_string)
        .unwrap_or_default();
    let _ = writeln!(
        index,
        "| [`{name}`](#{anchor}) | {} |",
        about.replace('|', "\\|")
    );
    let _ = write!(sections, "\n## `{name}`\n\n{}\n\n", long_text(command));
    let usage = command.clone().render_usage().to_string();
    let _ = writeln!(sections, "```text\n{}\n```\n", usage.trim_end());
    for arg in command.get_arguments() {
        if !arg.is_global_set() && !arg.is_hide_set() && !is_builtin(arg) {
            argument(arg, sections);
        }
    }
    for sub in command.get_subcommands() {
        section(sub, index, sections);
    }
}

/// The long help of `command`, or its short one.
fn long_text(command: &Command) -> String {
    command
        .get_long_about()
        .or(command.get_about())
        .map(|t| t.to_string().trim().to_string())
        .unwrap_or_default()
}

/// `--help` and `--version`, which every command has.
fn is_builtin(arg: &Arg) -> bool {
    matches!(arg.get_id().as_str(), "help" | "version")
}

/// One list item: how the argument is written, its help, values, default and variable.
fn argument(arg: &Arg, out: &mut String) {
    let value = arg
        .get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    let takes_value = arg.get_action().takes_values();
    let written = match (arg.get_short(), arg.get_long()) {
        (_, None) => value,
        (short, Some(long)) => {
            let short = short.map(|s| format!("-{s}, ")).unwrap_or_default();
            if takes_value {
                format!("{short}--{long} {value}")
            } else {
                format!("{short}--{long}")
            }
        }
    };
    let help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string().trim().replace('\n', " "))
        .unwrap_or_default();
    let help = if help.ends_with(['.', ':', '!', '?']) || help.is_empty() {
        help
    } else {
        help + "."
    };
    let _ = write!(out, "- `{written}`: {help}");
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| match v.get_help() {
            Some(help) => format!("`{}` ({help})", v.get_name()),
            None => format!("`{}`", v.get_name()),
        })
        .collect();
    if takes_value && !values.is_empty() {
        let _ = write!(out, " Values: {}.", values.join(", "));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    if takes_value && !defaults.is_empty() {
        let _ = write!(out, " Default: `{}`.", defaults.join(" "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(out, " Environment: `{}`.", env.to_string_lossy());
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_reference_is_the_help_text() {
        let rendered = render(&mut crate::Cli::command());
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE);
        if std::env::var_os("TOURNEY_BLESS").is_some() {
            std::fs::write(&path, &rendered).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            written == rendered,
            "docs/cli.md is not the command line's help: run `TOURNEY_BLESS=1 cargo test -p \
             tourney --bin tourney cli_docs` and commit it"
        );
        for command in ["tourney run", "tourney version add", "tourney stats sprt"] {
            assert!(rendered.contains(&format!("## `{command}`")), "{command}");
        }
    }
}
