//! Small pieces of formatting every rendering shares: ratings with their bound marks,
//! percentages, HTML escaping and links.

use tourney_stats::Bound;

/// A rating with its bound mark: `>386` for a perfect score.
pub(crate) fn rating_text(elo: f64, bound: Option<Bound>) -> String {
    match bound {
        Some(Bound::AtLeast) => format!(">{elo:.0}"),
        Some(Bound::AtMost) => format!("<{elo:.0}"),
        None => format!("{elo:.0}"),
    }
}

pub(crate) fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// `text` (plain HTML) linked to `url`, or alone without one.
pub(crate) fn anchor(url: Option<String>, text: &str) -> String {
    match url {
        Some(url) => format!("<a href=\"{}\">{text}</a>", escape(&url)),
        None => text.to_string(),
    }
}

pub(crate) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
