//! The tuning section of an SPSA run: each parameter's values, the tuned spec, and one
//! trajectory chart per parameter.

use std::fmt::Write as _;

use plotters::prelude::*;
use serde::Serialize;

use crate::charts::svg;
use crate::format::{anchor, escape};

/// A tuning run (SPSA) as far as its completed pairs take it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaReport {
    /// Completed pairs folded in (the prefix without gaps).
    pub pairs: u64,
    /// Pairs the run plays.
    pub planned: u64,
    /// Each parameter now.
    pub params: Vec<SpsaParamRow>,
    /// The values after every so many pairs, from the start (at most a few hundred
    /// points).
    pub trajectory: Vec<SpsaPoint>,
    /// The tuned values as the engine takes them: a built-in player's spec, or an outside
    /// engine's options (`name=value ...`).
    pub result: String,
    /// The start values, the same way.
    pub start: String,
    /// The verification SPRT's bounds (elo0, elo1), when the run has one.
    pub verify: Option<(f64, f64)>,
    /// The verification SPRT's tournament, once submitted.
    pub verification: Option<u64>,
}

/// One tuned parameter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaParamRow {
    /// Its name.
    pub name: String,
    /// Where it started.
    pub start: f64,
    /// Its least value.
    pub min: f64,
    /// Its greatest value.
    pub max: f64,
    /// Its value now.
    pub value: f64,
    /// The perturbation of the next pair.
    pub c_k: f64,
    /// The learning rate of the next pair.
    pub r_k: f64,
}

/// The parameters after `pairs` pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpsaPoint {
    /// Pairs folded in.
    pub pairs: u64,
    /// Each parameter's value, in the order of [`SpsaReport::params`].
    pub values: Vec<f64>,
}

impl SpsaReport {
    /// The section as text.
    pub fn text(&self) -> String {
        let mut out = format!(
            "SPSA: {} of {} pairs folded in\n  {:<20} {:>9} {:>9} {:>9} {:>9} {:>8} {:>9}\n",
            self.pairs, self.planned, "parameter", "start", "now", "min", "max", "c_k", "r_k"
        );
        for p in &self.params {
            let _ = writeln!(
                out,
                "  {:<20} {:>9.2} {:>9.2} {:>9} {:>9} {:>8.2} {:>9.5}",
                p.name, p.start, p.value, p.min, p.max, p.c_k, p.r_k
            );
        }
        let _ = writeln!(out, "  Tuned: {}\n  Start: {}", self.result, self.start);
        match (self.verify, self.verification) {
            (_, Some(id)) => {
                let _ = writeln!(out, "  Verification SPRT: tournament #{id}");
            }
            (Some((elo0, elo1)), None) => {
                let _ = writeln!(
                    out,
                    "  Verification SPRT [{elo0}, {elo1}] of tuned against start: submitted when the run ends"
                );
            }
            (None, None) => {}
        }
        out
    }

    /// The section as HTML: the table, the result, the link to the verification and one
    /// trajectory chart per parameter; `link` makes a tournament's address (`None`: the
    /// tournament named unlinked).
    pub fn html(&self, link: impl Fn(u64) -> Option<String>) -> String {
        let mut page = format!(
            "<p>{} of {} pairs folded in.</p>\n<table><tr><th>Parameter</th><th>Start</th><th>Now</th><th>Min</th><th>Max</th><th>c<sub>k</sub></th><th>r<sub>k</sub></th></tr>\n",
            self.pairs, self.planned
        );
        for p in &self.params {
            let _ = writeln!(
                page,
                "<tr><td class=\"name\">{}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.5}</td></tr>",
                escape(&p.name),
                p.start,
                p.value,
                p.min,
                p.max,
                p.c_k,
                p.r_k
            );
        }
        let _ = writeln!(
            page,
            "</table>\n<p>Tuned: <code>{}</code><br>Start: <code>{}</code></p>",
            escape(&self.result),
            escape(&self.start)
        );
        match (self.verify, self.verification) {
            (_, Some(id)) => {
                let tournament = anchor(link(id), &format!("tournament #{id}"));
                let _ = writeln!(page, "<p>Verification SPRT: {tournament}</p>");
            }
            (Some((elo0, elo1)), None) => {
                let _ = writeln!(
                    page,
                    "<p>Verification SPRT [{elo0}, {elo1}] of tuned against start: submitted when the run ends.</p>"
                );
            }
            (None, None) => {}
        }
        page += &self.charts().concat();
        page
    }

    /// Each parameter's value over the pairs, within its range (the start value marked), as
    /// SVG.
    pub fn charts(&self) -> Vec<String> {
        (self.params.iter().enumerate())
            .map(|(i, p)| self.chart(i, p))
            .collect()
    }

    /// Parameter `i`'s value over the pairs, as SVG.
    fn chart(&self, i: usize, p: &SpsaParamRow) -> String {
        let xs = 0.0..(self.trajectory.last().map_or(1, |t| t.pairs) as f64).max(1.0);
        let pad = (p.max - p.min) * 0.02;
        svg(640, 260, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption(&p.name, ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(30)
                .y_label_area_size(50)
                .build_cartesian_2d(xs.clone(), p.min - pad..p.max + pad)?;
            chart
                .configure_mesh()
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", 14))
                .x_desc("pairs")
                .draw()?;
            chart.draw_series(LineSeries::new(
                vec![(xs.start, p.start), (xs.end, p.start)],
                RED.stroke_width(1),
            ))?;
            chart.draw_series(LineSeries::new(
                (self.trajectory.iter()).filter_map(|t| Some((t.pairs as f64, *t.values.get(i)?))),
                BLUE.stroke_width(2),
            ))?;
            Ok(())
        })
    }
}
