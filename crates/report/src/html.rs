//! The report as one self-contained HTML page.

use std::fmt::Write as _;

use crate::charts::{elo_chart, llr_chart, pentanomial_chart};
use crate::format::{escape, percent, rating_text};
use crate::{OPENING_MIN_GAMES, Report};

impl Report {
    /// A self-contained HTML page (inline CSS and SVG, no scripts or network); `link` makes
    /// the address of another tournament it names (`None`: named unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = format!(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<style>\
             body{{font-family:sans-serif;margin:2em;color:#222}}table{{border-collapse:collapse;margin:1em 0}}\
             td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}th{{background:#f4f4f4}}\
             td.name{{text-align:left}}section{{margin-bottom:2em}}</style></head><body>\n<h1>{title}</h1>\n",
            title = escape(&self.title)
        );
        for note in &self.notes {
            let _ = writeln!(
                page,
                "<p class=\"note\" style=\"background:#fff3cd;padding:.5em;white-space:pre-wrap\"><strong>Note:</strong> {}</p>",
                escape(note)
            );
        }
        if !self.details.is_empty() {
            page += "<section id=\"details\"><h2>What was played</h2>\n<table>\n";
            for (label, value) in &self.details {
                let _ = writeln!(
                    page,
                    "<tr><th>{}</th><td class=\"name\">{}</td></tr>",
                    escape(label),
                    escape(value)
                );
            }
            page += "</table></section>\n";
        }
        if let Some(p) = &self.progress {
            let table = p.table();
            let _ = writeln!(
                page,
                "<section id=\"progress\"><h2>{}</h2>\n<table><tr>{}</tr>",
                escape(&table.title),
                (table.header.iter())
                    .map(|h| format!("<th>{h}</th>"))
                    .collect::<String>()
            );
            for row in &table.rows {
                let cells: String = (row.iter().enumerate())
                    .map(|(i, c)| match i {
                        1 => format!("<td class=\"name\">{}</td>", escape(c)),
                        _ => format!("<td>{}</td>", escape(c)),
                    })
                    .collect();
                let _ = writeln!(page, "<tr>{cells}</tr>");
            }
            page += "</table></section>\n";
        }
        if let Some(s) = &self.spsa {
            page += "<section id=\"spsa\"><h2>Tuning (SPSA)</h2>\n";
            page += &s.html(&link);
            page += "</section>\n";
        }
        page += "<section id=\"standings\"><h2>Standings</h2>\n<table><tr><th>Rank</th><th>Name</th><th>Elo</th><th>+</th><th>−</th><th>Games</th><th>Score</th><th>Draws</th><th>LOS</th></tr>\n";
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let _ = writeln!(
                page,
                "<tr><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rank + 1,
                escape(&p.name),
                escape(&rating_text(p.elo, p.bound)),
                p.plus,
                p.minus,
                p.games,
                percent(p.score),
                percent(p.draws),
                p.los_next.map_or(String::new(), percent)
            );
        }
        let _ = writeln!(page, "</table>\n<p>{}</p>", escape(&self.ratings.method));
        page += &self.standings_chart();
        page += "</section>\n";

        let c = &self.crosstable;
        page += "<section id=\"crosstable\"><h2>Cross-table</h2>\n<p>Wins-draws-losses of the row player.</p>\n<table><tr><th></th>";
        for name in &c.names {
            let _ = write!(page, "<th>{}</th>", escape(name));
        }
        page += "</tr>\n";
        for (i, name) in c.names.iter().enumerate() {
            let _ = write!(page, "<tr><td class=\"name\">{}</td>", escape(name));
            for (j, [w, d, l]) in c.cells[i].iter().enumerate() {
                if i == j {
                    page += "<td>—</td>";
                } else {
                    let _ = write!(page, "<td>{w}-{d}-{l}</td>");
                }
            }
            page += "</tr>\n";
        }
        page += "</table></section>\n";

        if let Some(s) = &self.sprt {
            let _ = writeln!(
                page,
                "<section id=\"sprt\"><h2>SPRT</h2>\n<p>{} bounds [{}, {}], α {}, β {}: {}</p>",
                s.sprt.model,
                s.sprt.elo0,
                s.sprt.elo1,
                s.sprt.alpha,
                s.sprt.beta,
                escape(&s.status_text())
            );
            let _ = writeln!(
                page,
                "<p id=\"sprt-estimate\">{}</p>",
                escape(&s.estimate_text())
            );
            page += &llr_chart(s);
            page += &elo_chart(s);
            page += &pentanomial_chart(&s.pentanomial);
            page += "</section>\n";
        }
        if !self.terminations.is_empty() {
            page += "<section id=\"terminations\"><h2>Terminations</h2>\n<table><tr><th>Reason</th><th>Games</th></tr>\n";
            for (reason, n) in &self.terminations {
                let _ = writeln!(
                    page,
                    "<tr><td class=\"name\">{}</td><td>{n}</td></tr>",
                    escape(reason)
                );
            }
            page += "</table>\n";
            if let Some(check) = &self.adjudication_check {
                let _ = writeln!(
                    page,
                    "<p id=\"adjudication-check\">Adjudication check: {}</p>",
                    escape(&check.text())
                );
            }
            page += "</section>\n";
        }
        if !self.engine_failures.is_empty() {
            page += "<section id=\"engine-failures\"><h2>Engine failures</h2>\n<table><tr><th>Engine</th><th>Reason</th><th>Games lost</th></tr>\n";
            for (engine, reason, n) in &self.engine_failures {
                let _ = writeln!(
                    page,
                    "<tr><td class=\"name\">{}</td><td class=\"name\">{}</td><td>{n}</td></tr>",
                    escape(engine),
                    escape(reason)
                );
            }
            page += "</table></section>\n";
        }
        if !self.latency.is_empty() {
            page += "<section id=\"latency\"><h2>Engine latency</h2>\n<p>The referee's time of a move less the engine's own report of its search.</p>\n<table><tr><th>Engine</th><th>Moves</th><th>Mean ms</th><th>Max ms</th></tr>\n";
            for l in &self.latency {
                let _ = writeln!(
                    page,
                    "<tr><td class=\"name\">{}</td><td>{}</td><td>{:.1}</td><td>{}</td></tr>",
                    escape(&l.engine),
                    l.moves,
                    l.mean_ms,
                    l.max_ms
                );
            }
            page += "</table></section>\n";
        }
        let w = &self.workers;
        if !w.workers.is_empty() {
            let _ = writeln!(
                page,
                "<section id=\"workers\"><h2>Workers</h2>\n<p>Homogeneity of their results: {}; {} suspect.</p>\n<table><tr><th>Worker</th><th>Pairs</th><th>Ptnml(0-2)</th><th>Residual</th><th>Time losses</th><th>Engine failures</th><th>Refused</th><th>Evidence</th></tr>",
                escape(&w.test_text()),
                w.suspects
            );
            for r in &w.workers {
                let mut evidence: Vec<String> = r.suspect.iter().map(|s| escape(s)).collect();
                if let Some(why) = &r.excluded {
                    evidence.insert(0, format!("<strong>excluded</strong> {}", escape(why)));
                }
                let style = if r.excluded.is_some() || !r.suspect.is_empty() {
                    " style=\"background:#fde2e1\""
                } else {
                    ""
                };
                let _ = writeln!(
                    page,
                    "<tr{style}><td class=\"name\">{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"name\">{}</td></tr>",
                    escape(&r.worker),
                    r.pairs,
                    r.pentanomial.map(|n| n.to_string()).join(", "),
                    r.residual,
                    r.time_losses,
                    r.engine_failures,
                    r.rejected,
                    evidence.join("<br>")
                );
            }
            page += "</table></section>\n";
        }
        if self.telling_openings().next().is_some() {
            let _ = writeln!(
                page,
                "<section id=\"openings\"><h2>Openings</h2>\n<p>White's score from each opening with {OPENING_MIN_GAMES} games or more, most lopsided first.</p>\n<table><tr><th>#</th><th>Position</th><th>Games</th><th>White's score</th></tr>"
            );
            for o in self.telling_openings().take(50) {
                let _ = writeln!(
                    page,
                    "<tr><td>{}</td><td class=\"name\">{}</td><td>{}</td><td>{}</td></tr>",
                    o.index,
                    escape(&o.position),
                    o.games,
                    percent(o.white_score())
                );
            }
            page += "</table></section>\n";
        }
        if let Some(t) = &self.timeline {
            page += "<section id=\"timeline\"><h2>Versions timeline</h2>\n";
            page += &t.body_html(&link);
            page += "</section>\n";
        }
        page += "</body></html>\n";
        page
    }
}
