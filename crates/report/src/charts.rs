//! SVG charts drawn with plotters: ratings, the LLR and Elo trajectories, the
//! pentanomial histogram.

use plotters::prelude::*;
use tourney_stats::Pentanomial;

use crate::format::escape;
use crate::{Report, SprtPoint, SprtReport};

/// Draws into an SVG of the given size; on a drawing error the chart is left out with a
/// note rather than failing the report.
pub(crate) fn svg(
    width: u32,
    height: u32,
    draw: impl for<'a> FnOnce(
        &DrawingArea<SVGBackend<'a>, plotters::coord::Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>,
) -> String {
    let mut buf = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        let drawn = root
            .fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|()| draw(&root).map_err(|e| e.to_string()));
        drawn.and_then(|()| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => format!("<figure>{buf}</figure>\n"),
        Err(e) => format!("<p>(chart unavailable: {})</p>\n", escape(&e)),
    }
}

pub(crate) fn x_range(points: &[SprtPoint]) -> std::ops::Range<f64> {
    0.0..points.last().map_or(1.0, |p| p.pairs as f64).max(1.0)
}

/// The LLR over the pairs with the decision bounds, as SVG.
pub fn llr_chart(s: &SprtReport) -> String {
    let points = &s.trajectory;
    let (lower, upper) = (s.status.lower_bound, s.status.upper_bound);
    let lo = points.iter().map(|p| p.llr).fold(lower, f64::min) - 0.2;
    let hi = points.iter().map(|p| p.llr).fold(upper, f64::max) + 0.2;
    let xs = x_range(points);
    svg(640, 320, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("LLR", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(xs.clone(), lo..hi)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("{x:.0}"))
            .label_style(("sans-serif", 14))
            .x_desc("pairs")
            .y_desc("LLR")
            .draw()?;
        for bound in [lower, upper] {
            chart.draw_series(LineSeries::new(
                vec![(xs.start, bound), (xs.end, bound)],
                RED.stroke_width(1),
            ))?;
        }
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.pairs as f64, p.llr)),
            BLUE.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// The Elo estimate and its interval over the pairs, as SVG.
pub fn elo_chart(s: &SprtReport) -> String {
    let points: Vec<&SprtPoint> = s
        .trajectory
        .iter()
        .filter(|p| p.elo_lower.is_finite() && p.elo_upper.is_finite())
        .collect();
    let lo = points
        .iter()
        .map(|p| p.elo_lower)
        .fold(f64::INFINITY, f64::min);
    let hi = points
        .iter()
        .map(|p| p.elo_upper)
        .fold(f64::NEG_INFINITY, f64::max);
    if points.is_empty() || lo >= hi {
        return String::new();
    }
    let xs = x_range(&s.trajectory);
    svg(640, 320, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption("Elo estimate with 95% interval", ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(xs, lo..hi)?;
        chart
            .configure_mesh()
            .x_label_formatter(&|x| format!("{x:.0}"))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 14))
            .x_desc("pairs")
            .y_desc("Elo")
            .draw()?;
        let band: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.pairs as f64, p.elo_upper))
            .chain(points.iter().rev().map(|p| (p.pairs as f64, p.elo_lower)))
            .collect();
        chart.draw_series(std::iter::once(Polygon::new(band, BLUE.mix(0.15))))?;
        chart.draw_series(LineSeries::new(
            points.iter().map(|p| (p.pairs as f64, p.elo)),
            BLUE.stroke_width(2),
        ))?;
        Ok(())
    })
}

/// Pair-result counts (0 to 2 points in half-point bins), as SVG.
pub fn pentanomial_chart(p: &Pentanomial) -> String {
    let top = p.bins.iter().copied().max().unwrap_or(0).max(1) as f64 * 1.1;
    const LABELS: [&str; 5] = ["0", "½", "1", "1½", "2"];
    svg(640, 280, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                "Pentanomial: pairs by points of the tested engine",
                ("sans-serif", 16),
            )
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5f64..4.5f64, 0f64..top)?;
        chart
            .configure_mesh()
            .x_labels(5)
            .x_label_formatter(&|x: &f64| {
                LABELS
                    .get(x.round() as usize)
                    .map_or(String::new(), |s| s.to_string())
            })
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 14))
            .y_desc("pairs")
            .draw()?;
        chart.draw_series(p.bins.iter().enumerate().map(|(k, &n)| {
            Rectangle::new(
                [(k as f64 - 0.35, 0.0), (k as f64 + 0.35, n as f64)],
                BLUE.mix(0.6).filled(),
            )
        }))?;
        Ok(())
    })
}

impl Report {
    /// Rating intervals, best player on top, as SVG (empty without players).
    pub fn standings_chart(&self) -> String {
        let players = &self.ratings.players;
        // Before the first game the intervals span the whole scale (±1319): no chart.
        if players.iter().all(|p| p.games == 0) {
            return String::new();
        }
        let lo = players
            .iter()
            .map(|p| p.elo - p.minus)
            .fold(f64::INFINITY, f64::min);
        let hi = players
            .iter()
            .map(|p| p.elo + p.plus)
            .fold(f64::NEG_INFINITY, f64::max);
        let pad = ((hi - lo) * 0.05).max(1.0);
        let n = players.len();
        // Sized for reading: rows of 44 px, names at 15 px in a column as wide as the
        // longest name.
        let longest = players
            .iter()
            .map(|p| p.name.chars().count())
            .max()
            .unwrap_or(4);
        let name_width = (longest as u32 * 9 + 20).clamp(80, 260);
        svg(860, 110 + 44 * n as u32, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption("Ratings with 95% intervals", ("sans-serif", 20))
                .margin(14)
                .x_label_area_size(44)
                .y_label_area_size(name_width)
                .build_cartesian_2d(lo - pad..hi + pad, -0.5..n as f64 - 0.5)?;
            let label = |y: &f64| {
                let i = n as i64 - 1 - y.round() as i64;
                players
                    .get(i as usize)
                    .map_or(String::new(), |p| p.name.clone())
            };
            chart
                .configure_mesh()
                .y_labels(n)
                .y_label_formatter(&label)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", 15))
                .axis_desc_style(("sans-serif", 15))
                .x_desc("Elo")
                .draw()?;
            for (i, p) in players.iter().enumerate() {
                let y = (n - 1 - i) as f64;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(p.elo - p.minus, y), (p.elo + p.plus, y)],
                    BLUE.stroke_width(2),
                )))?;
                chart.draw_series(std::iter::once(Circle::new((p.elo, y), 4, BLUE.filled())))?;
            }
            Ok(())
        })
    }
}
