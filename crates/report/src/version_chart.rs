//! Ratings against versions as SVG, shared by the version timeline and a rating pool's
//! page: one point per version in the order given (the oldest on the left), its 95 %
//! interval as an error bar, the anchor on the dashed zero line, the best highlighted,
//! each version labelled by its name and date, and the whole said again in the SVG's
//! `<title>` and `<desc>` for readers that cannot see it.

use plotters::coord::CoordTranslate;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::charts::svg;
use crate::format::escape;

/// One version on a chart of ratings by version.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionPoint {
    /// Its name.
    pub name: String,
    /// A second label line under the name, its date (empty: none).
    pub date: String,
    /// Its rating; `None` without games (labelled, not drawn).
    pub elo: Option<f64>,
    /// Upper half-width of the 95 % interval.
    pub plus: f64,
    /// Lower half-width of the 95 % interval.
    pub minus: f64,
}

/// The chart's size in pixels.
const WIDTH: u32 = 860;
const HEIGHT: u32 = 460;
/// Label sizes as plotters takes them (it writes `font-size` as a fifth smaller).
const NAME_SIZE: f64 = 15.0;
const DATE_SIZE: f64 = 13.0;
/// Longest name shown in full under the axis; longer ones end in "…".
const NAME_CHARS: usize = 16;
/// The accent colours: the dashboard's blue, and orange for the best.
const POINT: RGBColor = RGBColor(47, 111, 222);
const BEST: RGBColor = RGBColor(214, 96, 0);
const MUTED: RGBColor = RGBColor(96, 104, 122);

/// Where a rated version was drawn, in pixels of the SVG.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mark {
    /// Its index among the points.
    pub index: usize,
    /// The point.
    pub x: i32,
    pub y: i32,
    /// The error bar's ends: `y` of `elo + plus` and of `elo - minus`.
    pub top: i32,
    pub bottom: i32,
}

/// Where the chart put things: each rated version, and the zero line's `y`.
#[derive(Debug, Default)]
pub(crate) struct Geometry {
    pub marks: Vec<Mark>,
    pub zero: i32,
    /// The indices of the versions labelled under the axis.
    pub labelled: Vec<usize>,
}

/// The chart of `points` titled `title`, `anchor` rated 0 and `best` highlighted (indices
/// of `points`; see [`best_rated`]); an HTML figure with an inline SVG, or empty when no
/// version has a rating.
pub fn version_chart(
    title: &str,
    points: &[VersionPoint],
    anchor: Option<usize>,
    best: Option<usize>,
) -> String {
    draw(title, points, anchor, best).0
}

/// The best rated of `points`: the highest rating, the first of equals.
pub(crate) fn best_rated(points: &[VersionPoint]) -> Option<usize> {
    (points.iter().enumerate())
        .filter_map(|(i, p)| p.elo.map(|e| (i, e)))
        .fold(None, |best: Option<(usize, f64)>, (i, e)| match best {
            Some((_, b)) if b >= e => best,
            _ => Some((i, e)),
        })
        .map(|(i, _)| i)
}

/// `name` cut to [`NAME_CHARS`].
fn short(name: &str) -> String {
    if name.chars().count() <= NAME_CHARS {
        return name.to_string();
    }
    name.chars().take(NAME_CHARS - 1).chain(['…']).collect()
}

/// A rating as the text alternative says it: `+12 ± 8`, `−5 −9/+7`.
fn said(elo: f64, plus: f64, minus: f64) -> String {
    let elo = format!("{elo:+.0}").replace('-', "−");
    if (plus - minus).abs() < 0.5 {
        format!("{elo} ± {plus:.0}")
    } else {
        format!("{elo} −{minus:.0}/+{plus:.0}")
    }
}

/// The text alternative: a title, and every version with its rating in order.
fn description(
    title: &str,
    points: &[VersionPoint],
    anchor: Option<usize>,
    best: Option<usize>,
) -> (String, String) {
    let name = |i: Option<usize>| i.and_then(|i| points.get(i)).map(|p| p.name.as_str());
    let mut head = vec![format!("{} versions, oldest first", points.len())];
    head.extend(name(anchor).map(|a| format!("{a} rated 0")));
    head.extend(name(best).map(|b| format!("best {b}")));
    let rows: Vec<String> = (points.iter())
        .map(|p| {
            let date = if p.date.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.date)
            };
            let rating = p
                .elo
                .map_or("no games".into(), |e| said(e, p.plus, p.minus));
            format!("{}{date}: {rating}", p.name)
        })
        .collect();
    (
        format!("{title}: {}", head.join(", ")),
        format!("Elo with 95 % intervals: {}.", rows.join("; ")),
    )
}

/// The chart and where it put things.
pub(crate) fn draw(
    title: &str,
    points: &[VersionPoint],
    anchor: Option<usize>,
    best: Option<usize>,
) -> (String, Geometry) {
    let rated: Vec<(usize, &VersionPoint, f64)> = (points.iter().enumerate())
        .filter_map(|(i, p)| p.elo.map(|e| (i, p, e)))
        .collect();
    if rated.is_empty() {
        return (String::new(), Geometry::default());
    }
    let lo = (rated.iter())
        .map(|(_, p, e)| e - p.minus)
        .fold(0.0, f64::min);
    let hi = (rated.iter())
        .map(|(_, p, e)| e + p.plus)
        .fold(0.0, f64::max);
    let pad = ((hi - lo) * 0.08).max(5.0);
    let n = points.len();
    let dated = points.iter().any(|p| !p.date.is_empty());
    let mut geometry = Geometry::default();
    let figure = svg(WIDTH, HEIGHT, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(if dated { 66 } else { 50 })
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, lo - pad..hi + pad)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&|y| format!("{y:.0}"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .y_desc("Elo")
            .draw()?;
        let coord = chart.as_coord_spec().clone();
        let at = move |x: f64, y: f64| coord.translate(&(x, y));
        // The anchor's level, dashed across.
        let zero = [(-0.5, 0.0), (n as f64 - 0.5, 0.0)];
        chart.draw_series(std::iter::once(DashedPathElement::new(
            zero,
            6,
            4,
            MUTED.stroke_width(1),
        )))?;
        geometry.zero = at(0.0, 0.0).1;
        chart.draw_series(LineSeries::new(
            rated.iter().map(|(i, _, e)| (*i as f64, *e)),
            POINT.mix(0.35),
        ))?;
        for &(i, p, elo) in &rated {
            let x = i as f64;
            let color = if Some(i) == best { BEST } else { POINT };
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, elo - p.minus), (x, elo + p.plus)],
                color.stroke_width(2),
            )))?;
            let whisker = |y: f64| {
                EmptyElement::at((x, y))
                    + PathElement::new([(-5, 0), (5, 0)], color.stroke_width(2))
            };
            chart.draw_series([whisker(elo - p.minus), whisker(elo + p.plus)])?;
            if Some(i) == anchor {
                chart.draw_series(std::iter::once(
                    EmptyElement::at((x, elo)) + Rectangle::new([(-5, -5), (5, 5)], color.filled()),
                ))?;
            } else {
                let radius = if Some(i) == best { 6 } else { 4 };
                chart.draw_series(std::iter::once(Circle::new(
                    (x, elo),
                    radius,
                    color.filled(),
                )))?;
            }
            let (px, py) = at(x, elo);
            geometry.marks.push(Mark {
                index: i,
                x: px,
                y: py,
                top: at(x, elo + p.plus).1,
                bottom: at(x, elo - p.minus).1,
            });
        }
        // Names (and dates) under the axis, as many as fit side by side.
        let slot = f64::from(at(1.0, 0.0).0 - at(0.0, 0.0).0).max(1.0);
        let widest = (points.iter())
            .map(|p| short(&p.name).chars().count().max(p.date.chars().count()))
            .max()
            .unwrap_or(1);
        let step = ((widest as f64 * NAME_SIZE * 0.46 + 8.0) / slot)
            .ceil()
            .max(1.0) as usize;
        let below = at(0.0, lo - pad).1 + 6;
        let half = (widest as f64 * NAME_SIZE * 0.23) as i32;
        let fits = |x: i32| x + half <= i32::try_from(WIDTH).unwrap_or(i32::MAX);
        for (i, p) in points.iter().enumerate().filter(|(i, _)| i % step == 0) {
            let x = at(i as f64, 0.0).0;
            if !fits(x) {
                continue;
            }
            let (color, weight) = if Some(i) == best {
                (BEST, FontStyle::Bold)
            } else {
                (BLACK, FontStyle::Normal)
            };
            let top = Pos::new(HPos::Center, VPos::Top);
            let name = ("sans-serif", NAME_SIZE, weight).into_font().color(&color);
            root.draw(&Text::new(short(&p.name), (x, below), name.pos(top)))?;
            if !p.date.is_empty() {
                let date = ("sans-serif", DATE_SIZE).into_font().color(&MUTED);
                root.draw(&Text::new(p.date.clone(), (x, below + 17), date.pos(top)))?;
            }
            geometry.labelled.push(i);
        }
        // The legend, under the labels.
        let mut legend = vec!["bars: 95% intervals".to_string()];
        let name = |i: Option<usize>| i.and_then(|i| points.get(i)).map(|p| p.name.as_str());
        legend.extend(name(anchor).map(|a| format!("■ {a}: the anchor, rated 0 (dashed)")));
        legend.extend(name(best).map(|b| format!("orange: the best, {b}")));
        let style = ("sans-serif", DATE_SIZE).into_font().color(&MUTED);
        let left = at(-0.5, 0.0).0;
        let line = i32::try_from(HEIGHT).unwrap_or(i32::MAX) - 22;
        root.draw(&Text::new(legend.join("   ·   "), (left, line), style))?;
        Ok(())
    });
    let (title, desc) = description(title, points, anchor, best);
    (described(&figure, &title, &desc), geometry)
}

/// `figure` with `title` and `desc` as the first children of its SVG.
fn described(figure: &str, title: &str, desc: &str) -> String {
    let Some(start) = figure.find("<svg") else {
        return figure.to_string();
    };
    let Some(end) = figure[start..].find('>').map(|e| start + e + 1) else {
        return figure.to_string();
    };
    format!(
        "{}<title>{}</title><desc>{}</desc>{}",
        &figure[..end],
        escape(title),
        escape(desc),
        &figure[end..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(name: &str, elo: Option<f64>, interval: f64) -> VersionPoint {
        VersionPoint {
            name: name.into(),
            date: "2026-12-01".into(),
            elo,
            plus: interval,
            minus: interval,
        }
    }

    #[test]
    fn points_stand_in_order_with_their_intervals_and_the_anchor_on_the_zero_line() {
        let points = [
            point("v1", Some(0.0), 0.0),
            point("v2", Some(35.0), 20.0),
            point("v3", None, 0.0),
            point("v4", Some(-40.0), 25.0),
            point("v5", Some(120.0), 30.0),
        ];
        let (svg, g) = draw("Pool", &points, Some(0), best_rated(&points));
        // One mark per rated version, left to right in the given order.
        let order: Vec<usize> = g.marks.iter().map(|m| m.index).collect();
        assert_eq!(order, [0, 1, 3, 4]);
        assert!(g.marks.windows(2).all(|w| w[0].x < w[1].x), "{g:?}");
        // The anchor sits on the zero line, with no interval.
        let anchor = g.marks[0];
        assert_eq!(
            (anchor.y, anchor.top, anchor.bottom),
            (g.zero, g.zero, g.zero)
        );
        // Up is better; each bar spans its interval symmetrically around its point.
        let scale = f64::from(g.zero - g.marks[3].y) / 120.0;
        for (m, p) in g.marks.iter().map(|m| (m, &points[m.index])) {
            let (elo, half) = (p.elo.unwrap(), p.plus);
            assert!(
                (f64::from(g.zero - m.y) - elo * scale).abs() <= 1.5,
                "{m:?}"
            );
            assert!((f64::from(m.bottom - m.top) - 2.0 * half * scale).abs() <= 1.5);
            assert!(
                (f64::from(m.y - m.top) - half * scale).abs() <= 1.0,
                "{m:?}"
            );
        }
        // Every point is in the SVG: the anchor a square, the others circles, the best
        // (v5) larger and orange.
        let circle = |m: &Mark, r: u32| format!("<circle cx=\"{}\" cy=\"{}\" r=\"{r}\"", m.x, m.y);
        assert!(svg.contains(&circle(&g.marks[1], 4)), "{svg}");
        assert!(svg.contains(&circle(&g.marks[2], 4)));
        assert!(svg.contains(&circle(&g.marks[3], 6)));
        assert!(svg.contains(&format!("x=\"{}\" y=\"{}\"", anchor.x - 5, anchor.y - 5)));
        assert!(svg.contains("fill=\"#D66000\""), "the best in orange");
        // Every version is labelled (five fit), and said in the text alternative.
        assert_eq!(g.labelled, [0, 1, 2, 3, 4]);
        assert!(svg.contains("<title>Pool: 5 versions, oldest first, v1 rated 0, best v5</title>"));
        assert!(svg.contains("v2 (2026-12-01): +35 ± 20; v3 (2026-12-01): no games;"));
        assert!(svg.contains("v4 (2026-12-01): −40 ± 25"));
    }

    #[test]
    fn a_crowded_axis_labels_every_few_versions_and_nothing_rated_draws_nothing() {
        let points: Vec<VersionPoint> = (0..64)
            .map(|i| point(&format!("engine-{i:03}"), Some(i as f64), 10.0))
            .collect();
        let (_, g) = draw("Pool", &points, Some(0), best_rated(&points));
        assert_eq!(g.marks.len(), 64);
        let step = g.labelled[1];
        assert!(step > 1 && g.labelled.len() < 64, "{:?}", g.labelled);
        assert!(g.labelled.windows(2).all(|w| w[1] - w[0] == step));
        let unrated = [point("a", None, 0.0)];
        assert_eq!(draw("Pool", &unrated, None, None).0, "");
    }
}
