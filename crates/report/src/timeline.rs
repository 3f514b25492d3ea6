//! The timeline of engine versions: each version's rating with its interval and the
//! tournaments that measured it, as text and HTML with its chart.

use std::fmt::Write as _;

use serde::Serialize;

use crate::format::{anchor, escape, percent};
use crate::version_chart::{VersionPoint, best_rated, version_chart};

/// One engine version on a regression timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// The version.
    pub name: String,
    /// The version it was made from (empty: none).
    pub parent: String,
    /// What it plays as (a spec, or a command with its options).
    pub plays: String,
    /// Its joint rating, absent without games against another version.
    pub elo: Option<f64>,
    /// Upper half-width of the 95 % interval.
    pub plus: f64,
    /// Lower half-width of the 95 % interval.
    pub minus: f64,
    /// Games against other versions.
    pub games: u64,
    /// Points per game (0 to 1).
    pub score: f64,
    /// The tournaments that measured it.
    pub tournaments: Vec<u64>,
}

/// Every engine version on one scale, oldest first: the regression timeline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineReport {
    /// The version rated 0 (empty: none).
    pub anchor: String,
    /// Games between versions counted.
    pub games: u64,
    /// The versions, oldest first.
    pub rows: Vec<TimelineRow>,
}

impl TimelineReport {
    /// A plain-text table.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{} games between versions; {} at 0\n{:<24} {:<24} {:>8} {:>13} {:>7} {:>6}  tournaments\n",
            self.games,
            if self.anchor.is_empty() {
                "nothing"
            } else {
                &self.anchor
            },
            "version",
            "parent",
            "Elo",
            "95 %",
            "games",
            "score"
        );
        for r in &self.rows {
            let (elo, interval) = match r.elo {
                Some(elo) => (
                    format!("{elo:.1}"),
                    format!("-{:.1}/+{:.1}", r.minus, r.plus),
                ),
                None => ("-".into(), "no games".into()),
            };
            let ids: Vec<String> = r.tournaments.iter().map(|i| format!("#{i}")).collect();
            let _ = writeln!(
                out,
                "{:<24} {:<24} {elo:>8} {interval:>13} {:>7} {:>5.1}%  {}",
                r.name,
                r.parent,
                r.games,
                r.score * 100.0,
                ids.join(" ")
            );
        }
        out
    }

    /// A self-contained HTML page: the chart of Elo by version with its intervals, and the
    /// table, each tournament linked by `link` (its URL; `None`: shown unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Engine versions: timeline</title>\n<style>\
             body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}\
             td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}th{background:#f4f4f4}\
             td.name{text-align:left}</style></head><body>\n<h1>Engine versions: timeline</h1>\n",
        );
        page += &self.body_html(link);
        page += "</body></html>\n";
        page
    }

    /// What the page shows, without the page: a line saying what was rated, the chart and
    /// the table (each tournament linked by `link`).
    pub fn body_html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let anchor = if self.anchor.is_empty() {
            "nothing"
        } else {
            &self.anchor
        };
        format!(
            "<p>{} games between versions of all tournaments, rated jointly (BayesElo); {} at 0.</p>\n{}{}",
            self.games,
            escape(anchor),
            self.chart(),
            self.table_html(link)
        )
    }

    /// The versions as an HTML table, each tournament linked by `link` (its URL; `None`:
    /// shown unlinked).
    pub fn table_html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut table = String::from(
            "<table id=\"versions\"><tr><th>Version</th><th>Parent</th><th>Elo</th><th>95 %</th><th>Games</th><th>Score</th><th>Measured by</th><th>Plays</th></tr>\n",
        );
        for r in &self.rows {
            let links: Vec<String> = r
                .tournaments
                .iter()
                .map(|&id| anchor(link(id), &format!("#{id}")))
                .collect();
            let (elo, interval) = match r.elo {
                Some(elo) => (
                    format!("{elo:.1}"),
                    format!("−{:.1} / +{:.1}", r.minus, r.plus),
                ),
                None => ("–".into(), "no games".into()),
            };
            let _ = writeln!(
                table,
                "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{elo}</td><td>{interval}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
                escape(&r.name),
                escape(&r.parent),
                r.games,
                percent(r.score),
                links.join(" "),
                escape(&r.plays)
            );
        }
        table + "</table>\n"
    }

    /// Elo by version (oldest on the left) with 95 % intervals, as SVG (empty when no
    /// version has games).
    pub fn chart(&self) -> String {
        let points: Vec<VersionPoint> = (self.rows.iter())
            .map(|r| VersionPoint {
                name: r.name.clone(),
                date: String::new(),
                elo: r.elo,
                plus: r.plus,
                minus: r.minus,
            })
            .collect();
        let anchor = self.rows.iter().position(|r| r.name == self.anchor);
        let best = best_rated(&points);
        version_chart("Elo by version, 95% intervals", &points, anchor, best)
    }
}
