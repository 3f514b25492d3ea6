//! `tourney submit`: a tournament file submitted to a coordinator, and with `--wait` its
//! verdict as the exit status (what a CI job calls).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use tourney_proto::v1 as pb;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;
use crate::support::status_json::status_json;

/// Submit a tournament file to a coordinator; prints the new tournament's id last.
///
/// The file, its player specs and its openings file are checked first; a program an
/// `[[engine]]` names by path is uploaded (unless the coordinator already has it) and must
/// lie beside or below the file.
///
/// With `--wait` it then follows the tournament until it ends or pauses, prints its summary
/// line (or with `--json` its status, as `status --json` prints it) and exits by its
/// verdict: 0 when an SPRT accepted H1, a grouped test accepted a take, or a tournament
/// without either finished; 1 when an SPRT accepted H0 or a grouped test none of its takes;
/// 2 for anything else (paused, with the reason; cancelled; an SPRT or grouped test that
/// reached its most pairs undecided; an error). This is what a CI job calls.
///
/// `--preset NAME` changes the file first by a preset its first engine's version
/// registered (`tourney version add --preset ltc=tc:60+0.6,elo0:0.5,elo1:2.5`), else by
/// the SPRT bounds `stc`, `ltc` or `nonreg`, as `tourney clone --preset` does.
///
/// Example: `tourney submit config/sprt-loa.toml`;
/// `tourney submit pr-1234.toml --wait || echo "not stronger"`.
#[derive(Args)]
pub(crate) struct SubmitArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// The tournament file.
    file: PathBuf,
    /// Follow the tournament to its end and exit by its verdict (0 H1 or finished, 1 H0, 2
    /// otherwise).
    #[arg(long)]
    wait: bool,
    /// With --wait: print the final status as JSON instead of the summary line.
    #[arg(long, requires = "wait")]
    json: bool,
    /// Change the file by a preset of its first engine's version (`tourney version add
    /// --preset`; else SPRT bounds `stc`, `ltc`, `nonreg`), as `tourney clone --preset`.
    #[arg(long, value_name = "NAME")]
    preset: Option<String>,
}

/// Submits the file, changed by `--preset` if given; its id.
fn send(admin: &mut BlockingAdmin, args: &SubmitArgs) -> Result<u64> {
    let Some(name) = &args.preset else {
        return admin.submit_file(&args.file, None);
    };
    let path = &args.file;
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {file}"))?;
    let changes = crate::commands::clone::preset_of(admin, &text, &file, name)?;
    let (text, notes) = tourney_model::tournament::followup::follow_up(&text, &file, &changes)
        .map_err(|e| anyhow::anyhow!("--preset {name}: {e}"))?;
    for note in notes {
        eprintln!("note: {note}");
    }
    admin.submit_file(path, Some(text))
}

/// Exit status of a tournament that ended without a verdict for its user: paused,
/// cancelled, undecided, or an error on the way.
const NO_VERDICT: u8 = 2;

pub(crate) fn run(args: &SubmitArgs) -> Result<ExitCode> {
    if !args.wait {
        let mut admin = BlockingAdmin::connect(&args.client)?;
        println!("{}", send(&mut admin, args)?);
        return Ok(ExitCode::SUCCESS);
    }
    // Waiting, an error is "no verdict" (2), never to be read as H0 accepted (1).
    match submit_and_wait(args) {
        Ok(status) => {
            if args.json {
                match status_json(&status) {
                    Ok(json) => println!("{json:#}"),
                    Err(e) => {
                        eprintln!("error: {e:#}");
                        return Ok(ExitCode::from(NO_VERDICT));
                    }
                }
            } else {
                say!("{}", status.summary_line());
                say_build_log(&status);
            }
            Ok(ExitCode::from(verdict(&status)))
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(ExitCode::from(NO_VERDICT))
        }
    }
}

/// Submits the file, prints its id, and returns its status once it has ended or paused.
fn submit_and_wait(args: &SubmitArgs) -> Result<pb::TournamentStatus> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let id = send(&mut admin, args)?;
    println!("{id}");
    let status = admin.watch_until(id, |s| has_stopped(&s.state))?;
    if status.state != "paused" {
        return Ok(status);
    }
    // Asked once more: a build log that paused it comes only with Status, to its author.
    Ok(admin.status(pb::StatusRequest { id }).unwrap_or(status))
}

/// Prints the build log that paused tournament `status`, when the caller may read it.
pub(crate) fn say_build_log(status: &pb::TournamentStatus) {
    if !status.paused_log.is_empty() {
        say!(
            "The end of its build's log:\n{}",
            status.paused_log.trim_end()
        );
    }
}

/// Whether a tournament in `state` is no longer played (it may resume from `paused`).
fn has_stopped(state: &str) -> bool {
    matches!(state, "finished" | "cancelled" | "paused")
}

/// The exit status a stopped tournament gives `submit --wait`.
fn verdict(status: &pb::TournamentStatus) -> u8 {
    let decision = status.sprt.as_ref().map(|s| s.decision.as_str());
    let takes = status.takes_verdict.as_str();
    match (status.state.as_str(), decision) {
        // A grouped test: a take accepted, none, or its budget ran out undecided.
        ("finished", None) if takes.starts_with("accepted") => 0,
        ("finished", None) if takes == "none accepted" => 1,
        ("finished", None) if !takes.is_empty() => NO_VERDICT,
        ("finished", Some("H1 accepted") | None) => 0,
        ("finished", Some("H0 accepted")) => 1,
        _ => NO_VERDICT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(state: &str, decision: Option<&str>) -> pb::TournamentStatus {
        pb::TournamentStatus {
            id: 4,
            name: "patch".into(),
            state: state.into(),
            sprt: decision.map(|d| pb::SprtState {
                decision: d.into(),
                llr: 2.95,
                lower_bound: -2.94,
                upper_bound: 2.94,
                elo0: 0.0,
                elo1: 5.0,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_exit_status_is_the_verdict() {
        assert_eq!(verdict(&status("finished", Some("H1 accepted"))), 0);
        assert_eq!(verdict(&status("finished", None)), 0);
        assert_eq!(verdict(&status("finished", Some("H0 accepted"))), 1);
        assert_eq!(verdict(&status("finished", Some("continue"))), 2);
        assert_eq!(verdict(&status("paused", None)), 2);
        assert_eq!(verdict(&status("cancelled", Some("H1 accepted"))), 2);
        // A grouped test.
        let takes = |state: &str, v: &str| pb::TournamentStatus {
            takes_verdict: v.into(),
            ..status(state, None)
        };
        assert_eq!(verdict(&takes("finished", "accepted take-b")), 0);
        assert_eq!(verdict(&takes("finished", "none accepted")), 1);
        assert_eq!(verdict(&takes("finished", "continue")), 2);
        assert_eq!(verdict(&takes("cancelled", "accepted take-b")), 2);
        assert!(
            takes("finished", "none accepted")
                .summary_line()
                .contains("finished, none accepted")
        );
    }

    #[test]
    fn the_summary_line_says_how_it_ended() {
        let line = status("finished", Some("H1 accepted")).summary_line();
        assert!(
            line.starts_with(
                "Tournament 4 (patch): finished, H1 accepted (LLR 2.95 in [-2.94, 2.94]"
            ),
            "{line}"
        );
        let mut paused = status("paused", None);
        paused.paused_reason = "engine unfit".into();
        assert!(paused.summary_line().contains("paused (engine unfit)"));
    }
}
