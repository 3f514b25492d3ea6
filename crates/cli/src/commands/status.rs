//! `tourney status`: tournaments with their state, progress and standings.

use std::process::ExitCode;

use anyhow::Result;
use clap::Args;
use tourney_proto::v1 as pb;
use tourney_report::FormatProgress;

use crate::support::admin::BlockingAdmin;
use crate::support::local::AdminTarget;
use crate::support::status_json::status_json;

/// Show tournaments with their standings (`--json` for scripts).
///
/// Without an id, the most recent tournaments, newest first (`--limit 0`: all, fetched a
/// page at a time), with state, progress and standings: Elo with its bound mark (`>` or `<`
/// for a 100 % or 0 % score), +/−, games, score, draws and LOS to the next; a player
/// without games is listed last as "no games yet".
///
/// `--json` prints each tournament's status as the coordinator's status view: the keys of
/// a tournament on the dashboard (`/api/v1/overview`'s `tournaments`), among them `id`,
/// `name`, `game`, `format`, `state`, `created_ms` (when it was submitted, Unix ms),
/// `author`, `priority`, `weight`, `max_pairs`,
/// `pairs_done`, `pairs_planned` (null while an SPRT is open), `pairs_leased` (pairs out
/// now), `games`, `openings` (and `openings_note`), `pairs_excluded`, `suspect_workers`,
/// `eligible_workers` (and `unrunnable`), `paused_reason`, a data generation run's
/// `positions` and `positions_wanted`, `sprt` (LLR, bounds, decision and settings),
/// `leader`, with `standings` and, for a format that pairs by results (grouped tests,
/// knockout, Swiss, gated pools), `progress`; `share` is the part of the fleet's core-time
/// it has now (0 to 1, beside `share_target` and the measured `pairs_per_hour`; the dashboard
/// has the three under `share`), the SPRT's `llr`, `lower_bound`, `upper_bound` and
/// `decision` are also at the top, and `paused_log` is there for those who may read it.
#[derive(Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    client: AdminTarget,
    /// A tournament id (default: the most recent ones, newest first).
    id: Option<u64>,
    /// Without an id: at most this many tournaments (0: all).
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// JSON output.
    #[arg(long)]
    json: bool,
}

fn status_line(s: &pb::TournamentStatus) -> String {
    let ended = matches!(s.state.as_str(), "finished" | "cancelled");
    // A pool without `max_pairs` plays until it is cancelled: no bound to show.
    let unbounded = s.max_pairs == 0 || s.max_pairs >= tourney_model::tournament::MAX_PAIRS;
    // An open SPRT's length is a bound (its budget); an ended one's is what it played.
    let pairs = match s.pairs_planned {
        Some(planned) => format!("{}/{planned} pairs", s.pairs_done),
        None if ended || unbounded => format!("{} pairs", s.pairs_done),
        None => format!("{} of at most {} pairs", s.pairs_done, s.max_pairs),
    };
    let mut out = format!(
        "#{} {} ({}, {}): {}, {pairs}, {} games",
        s.id, s.name, s.game, s.format, s.state, s.games
    );
    if let Some(d) = &s.data {
        out += &format!(", {} of {} positions", d.positions, d.target);
    }
    if !s.author.is_empty() {
        out += &format!(", by {}", s.author);
    }
    if s.priority != 0 || s.weight != 1.0 {
        out += &format!(", priority {} weight {}", s.priority, s.weight);
    }
    if s.share_target > 0.0 {
        out += &format!(
            ", {:.0}% of the fleet's core-time (target {:.0}%)",
            100.0 * s.share,
            100.0 * s.share_target
        );
        // Its planned pairs left, or an open SPRT's budget left (it may end sooner).
        let (left, ends) = match s.pairs_planned {
            Some(planned) => (planned, "ends in about"),
            None => (s.max_pairs, "ends within"),
        };
        let left = left.saturating_sub(s.pairs_done);
        if left > 0 && s.pairs_per_hour > 0.0 && !ended && !unbounded {
            let minutes = (left as f64 / s.pairs_per_hour * 60.0).round() as u64;
            out += &format!(
                ", {ends} {}h{:02}m at this rate",
                minutes / 60,
                minutes % 60
            );
        }
    }
    if !s.unrunnable.is_empty() {
        out += &format!(
            " (no connected worker can run it: {}; see `requires` in docs/tournaments.md)",
            s.unrunnable
        );
    } else if s.eligible_workers > 0 {
        out += &format!(", {} eligible workers", s.eligible_workers);
    }
    if !s.paused_reason.is_empty() {
        out += &format!(
            " ({}; fix it, then `tourney resume {}`)",
            s.paused_reason, s.id
        );
    }
    if !s.openings_note.is_empty() {
        out += &format!(" (note: {})", s.openings_note);
    }
    if s.pairs_excluded > 0 {
        out += &format!(", {} pairs excluded", s.pairs_excluded);
    }
    if s.suspect_workers > 0 {
        out += &format!(
            ", {} suspect workers (see `tourney report {}`)",
            s.suspect_workers, s.id
        );
    }
    if let Some(sprt) = &s.sprt {
        out += &format!(
            ", LLR {:.2} [{:.2}, {:.2}] {}",
            sprt.llr,
            sprt.lower_bound,
            sprt.upper_bound,
            verdict(&s.state, &sprt.decision)
        );
    }
    if let Ok(progress) = serde_json::from_str::<FormatProgress>(&s.progress_json) {
        out += &format!("\n  {}", progress.text().trim_end().replace('\n', "\n  "));
    }
    // A pool's ratings are relative to its anchor: the one rated 0 with no interval.
    let anchor = (s.standings.iter()).find(|p| p.elo == 0.0 && p.plus == 0.0 && p.minus == 0.0);
    if let Some(anchor) = anchor.filter(|_| s.format == "pool") {
        out += &format!("\n  ratings relative to {} (95 % intervals)", anchor.name);
    }
    for (rank, p) in s.standings.iter().enumerate() {
        if p.games == 0 {
            out += &format!("\n  {:>2}. {:<20} no games yet", rank + 1, p.name);
            continue;
        }
        out += &format!(
            "\n  {:>2}. {:<20} {:>6} +{:.0}/-{:.0}  {} games  {:.1}%  draws {:.1}%",
            rank + 1,
            p.name,
            format!("{}{:.0}", p.bound, p.elo),
            p.plus,
            p.minus,
            p.games,
            p.score * 100.0,
            p.draws * 100.0
        );
        if let Some(los) = p.los_next {
            out += &format!("  LOS {:.1}%", los * 100.0);
        }
    }
    out
}

/// An SPRT's verdict as said to a person: its decision, or for one that ended without
/// one ("continue"), how it ended.
fn verdict<'a>(state: &str, decision: &'a str) -> &'a str {
    match (state, decision) {
        ("cancelled", "continue") => "cancelled before a decision",
        ("finished", "continue") => "undecided at its most pairs",
        _ => decision,
    }
}

pub(crate) fn run(args: &StatusArgs) -> Result<ExitCode> {
    let mut admin = BlockingAdmin::connect(&args.client)?;
    let list = match args.id {
        Some(id) => vec![admin.status(pb::StatusRequest { id })?],
        None => {
            let wanted = if args.limit == 0 {
                usize::MAX
            } else {
                args.limit
            };
            let mut all = Vec::new();
            let mut page_token = String::new();
            while all.len() < wanted {
                let page = admin.list(pb::ListRequest {
                    page_size: (wanted - all.len()).min(1000) as u32,
                    page_token,
                })?;
                all.extend(page.tournaments);
                if page.next_page_token.is_empty() {
                    break;
                }
                page_token = page.next_page_token;
            }
            all
        }
    };
    if args.json {
        let json: Vec<serde_json::Value> = list.iter().map(status_json).collect::<Result<_>>()?;
        let out = if args.id.is_some() {
            serde_json::to_string_pretty(&json[0])?
        } else {
            serde_json::to_string_pretty(&json)?
        };
        println!("{out}");
    } else {
        for s in &list {
            say!("{}", status_line(s));
            crate::commands::submit::say_build_log(s);
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_show_bounds_and_players_without_games() {
        let standing = |name: &str, elo: f64, games: u64, bound: &str| pb::Standing {
            name: name.into(),
            elo,
            plus: 50.0,
            minus: 60.0,
            games,
            score: 1.0,
            draws: 0.0,
            los_next: (games > 0).then_some(0.99),
            bound: bound.into(),
        };
        let status = pb::TournamentStatus {
            id: 3,
            name: "t".into(),
            state: "running".into(),
            standings: vec![
                standing("perfect", 400.0, 6, ">"),
                standing("later", 64.0, 0, ""),
            ],
            ..Default::default()
        };
        let text = status_line(&status);
        assert!(
            text.contains("perfect") && text.contains(">400") && text.contains("LOS 99.0%"),
            "{text}"
        );
        assert!(
            text.contains("2. later                no games yet"),
            "{text}"
        );
        assert!(!text.contains("+50/-60  0 games"), "{text}");
        // A pool says what its ratings are relative to: the engine rated 0 with no interval.
        let mut anchor = standing("anchor", 0.0, 6, "");
        (anchor.plus, anchor.minus) = (0.0, 0.0);
        let pool = pb::TournamentStatus {
            format: "pool".into(),
            standings: vec![standing("v2", 30.0, 6, ""), anchor],
            ..status
        };
        let text = status_line(&pool);
        assert!(
            text.contains("ratings relative to anchor (95 % intervals)"),
            "{text}"
        );
    }

    #[test]
    fn a_cancelled_sprt_says_it_was_cancelled_not_continue() {
        let sprt = |state: &str| pb::TournamentStatus {
            state: state.into(),
            sprt: Some(pb::SprtState {
                decision: "continue".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let cancelled = status_line(&sprt("cancelled"));
        assert!(
            cancelled.ends_with("cancelled before a decision") && !cancelled.contains("continue"),
            "{cancelled}"
        );
        let finished = status_line(&sprt("finished"));
        assert!(
            finished.ends_with("undecided at its most pairs"),
            "{finished}"
        );
        assert!(status_line(&sprt("running")).ends_with("continue"));
    }

    #[test]
    fn an_open_sprt_shows_its_budget_and_when_it_ends_at_the_latest() {
        let sprt = |state: &str| pb::TournamentStatus {
            state: state.into(),
            format: "sprt".into(),
            pairs_done: 1000,
            max_pairs: 4000,
            share: 0.5,
            share_target: 0.5,
            pairs_per_hour: 1500.0,
            ..Default::default()
        };
        let running = status_line(&sprt("running"));
        assert!(
            running.contains("1000 of at most 4000 pairs")
                && running.contains("ends within 2h00m at this rate"),
            "{running}"
        );
        let finished = status_line(&sprt("finished"));
        assert!(
            finished.contains(": finished, 1000 pairs,") && !finished.contains("ends"),
            "{finished}"
        );
        // A pool without a budget plays until cancelled: no bound, no end.
        let pool = pb::TournamentStatus {
            format: "pool".into(),
            max_pairs: tourney_model::tournament::MAX_PAIRS,
            ..sprt("running")
        };
        let pool = status_line(&pool);
        assert!(
            pool.contains("running, 1000 pairs,") && !pool.contains("ends"),
            "{pool}"
        );
        // A planned length: the pairs left at the rate.
        let planned = pb::TournamentStatus {
            format: "match".into(),
            pairs_planned: Some(1750),
            ..sprt("running")
        };
        let planned = status_line(&planned);
        assert!(
            planned.contains("1000/1750 pairs") && planned.contains("ends in about 0h30m"),
            "{planned}"
        );
    }
}
