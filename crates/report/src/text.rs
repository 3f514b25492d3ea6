//! The report as plain text and CSV.

use std::fmt::Write as _;

use tourney_stats::Bound;

use crate::format::{percent, rating_text};
use crate::{OPENING_MIN_GAMES, Report};

impl Report {
    /// The standings as a text table (BayesElo's columns plus LOS to the next player).
    pub fn standings_text(&self) -> String {
        let width = self
            .ratings
            .players
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = format!(
            "{:>4} {:<width$} {:>6} {:>5} {:>5} {:>6} {:>6} {:>6} {:>6}\n",
            "Rank", "Name", "Elo", "+", "-", "Games", "Score", "Draws", "LOS"
        );
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let los = p.los_next.map_or(String::new(), percent);
            let _ = writeln!(
                out,
                "{:>4} {:<width$} {:>6} {:>5.0} {:>5.0} {:>6} {:>6} {:>6} {:>6}",
                rank + 1,
                p.name,
                rating_text(p.elo, p.bound),
                p.plus,
                p.minus,
                p.games,
                percent(p.score),
                percent(p.draws),
                los
            );
        }
        out
    }

    /// The whole report as text.
    pub fn text(&self) -> String {
        let mut out = format!("{}\n\n", self.title);
        for note in &self.notes {
            let _ = writeln!(out, "Note: {note}\n");
        }
        if !self.details.is_empty() {
            let width = self
                .details
                .iter()
                .map(|(k, _)| k.chars().count())
                .max()
                .unwrap_or(0);
            for (label, value) in &self.details {
                let _ = writeln!(out, "{label:<width$}  {value}");
            }
            out.push('\n');
        }
        if let Some(s) = &self.spsa {
            out += &s.text();
            out.push('\n');
        }
        if let Some(p) = &self.progress {
            out += &p.text();
            out.push('\n');
        }
        out += &self.standings_text();
        let c = &self.crosstable;
        if c.names.len() > 1 {
            out += "\nCross-table (wins-draws-losses of the row player)\n";
            let width = c.names.iter().map(|n| n.len()).max().unwrap_or(4);
            let _ = write!(out, "{:width$}", "");
            for name in &c.names {
                let _ = write!(out, " {:>11}", name.chars().take(11).collect::<String>());
            }
            out.push('\n');
            for (i, name) in c.names.iter().enumerate() {
                let _ = write!(out, "{name:width$}");
                for (j, [w, d, l]) in c.cells[i].iter().enumerate() {
                    let cell = if i == j {
                        "-".to_string()
                    } else {
                        format!("{w}-{d}-{l}")
                    };
                    let _ = write!(out, " {cell:>11}");
                }
                out.push('\n');
            }
        }
        if let Some(s) = &self.sprt {
            let _ = writeln!(
                out,
                "\nSPRT {} [{}, {}]: {}\n  {}",
                s.sprt.model,
                s.sprt.elo0,
                s.sprt.elo1,
                s.status_text(),
                s.estimate_text()
            );
        }
        if !self.terminations.is_empty() {
            out += "\nTerminations\n";
            for (reason, n) in &self.terminations {
                let _ = writeln!(out, "  {reason}: {n}");
            }
        }
        if let Some(check) = &self.adjudication_check {
            let _ = writeln!(out, "\nAdjudication check: {}", check.text());
        }
        if !self.engine_failures.is_empty() {
            out += "\nEngine failures (games lost)\n";
            for (engine, termination, n) in &self.engine_failures {
                let _ = writeln!(out, "  {engine}: {termination} {n}");
            }
        }
        if !self.latency.is_empty() {
            out += "\nEngine latency (the referee's time of a move less the engine's own)\n";
            for l in &self.latency {
                let _ = writeln!(
                    out,
                    "  {}: mean {:.1} ms, max {} ms over {} moves",
                    l.engine, l.mean_ms, l.max_ms, l.moves
                );
            }
        }
        out += &self.workers_text();
        if self.telling_openings().next().is_some() {
            let _ = writeln!(
                out,
                "\nOpenings, most lopsided first (White's score; those with {OPENING_MIN_GAMES} games or more)"
            );
            for o in self.telling_openings().take(10) {
                let _ = writeln!(
                    out,
                    "  #{:<5} {:>6} of {:<4} games  {}",
                    o.index,
                    percent(o.white_score()),
                    o.games,
                    o.position
                );
            }
        }
        out
    }

    /// The workers' table as text (empty without workers).
    pub fn workers_text(&self) -> String {
        let w = &self.workers;
        if w.workers.is_empty() {
            return String::new();
        }
        let width = w
            .workers
            .iter()
            .map(|r| r.worker.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let mut out = format!(
            "\nWorkers ({}; {} suspect)\n  {:<width$} {:>6} {:>22} {:>8} {:>5} {:>8} {:>7}\n",
            w.test_text(),
            w.suspects,
            "Worker",
            "Pairs",
            "Ptnml(0-2)",
            "Residual",
            "Time",
            "Failures",
            "Refused"
        );
        for r in &w.workers {
            let ptnml = r.pentanomial.map(|n| n.to_string()).join(", ");
            let _ = writeln!(
                out,
                "  {:<width$} {:>6} {:>22} {:>8.2} {:>5} {:>8} {:>7}",
                r.worker, r.pairs, ptnml, r.residual, r.time_losses, r.engine_failures, r.rejected
            );
            if let Some(why) = &r.excluded {
                let _ = writeln!(out, "    excluded {why}");
            }
            for why in &r.suspect {
                let _ = writeln!(out, "    suspect: {why}");
            }
        }
        out
    }

    /// The standings as CSV with a header line.
    pub fn csv(&self) -> String {
        let mut out = String::from("rank,name,elo,plus,minus,games,score,draws,los_next,bound\n");
        for (rank, p) in self.ratings.players.iter().enumerate() {
            let name = if p.name.contains([',', '"']) {
                format!("\"{}\"", p.name.replace('"', "\"\""))
            } else {
                p.name.clone()
            };
            let bound = match p.bound {
                Some(Bound::AtLeast) => ">",
                Some(Bound::AtMost) => "<",
                None => "",
            };
            let _ = writeln!(
                out,
                "{},{name},{:.2},{:.2},{:.2},{},{:.4},{:.4},{},{bound}",
                rank + 1,
                p.elo,
                p.plus,
                p.minus,
                p.games,
                p.score,
                p.draws,
                p.los_next.map_or(String::new(), |l| format!("{l:.4}"))
            );
        }
        out
    }
}
