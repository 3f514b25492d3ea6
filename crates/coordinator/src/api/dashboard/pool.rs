//! A rating pool's chart on its page: each engine's rating against version, in the order
//! the engines joined the pool (the file's engines, then the versions added), each
//! labelled by its name and, for a registered version, the day it was registered; drawn by
//! tourney-report's [`version_chart`], as the version timeline is.

use tourney_model::Utc;
use tourney_model::tournament::Format;
use tourney_report::{VersionPoint, version_chart};

use crate::state::Coordinator;
use crate::types::Status;

/// The chart's title.
const TITLE: &str = "Ratings by version, 95% intervals";

/// Tournament `status`'s chart of ratings by version if it is a rating pool (an HTML
/// figure; empty before its first game), else `None`. The best highlighted is the pool's
/// best, as `tourney pool best` names it.
pub(super) fn pool_chart(c: &Coordinator, status: &Status) -> Option<String> {
    let config = &status.config;
    if config.format != Format::Pool {
        return None;
    }
    let registered = c.registered_ms(&config.versions());
    let points: Vec<VersionPoint> = (config.engines.iter().zip(registered))
        .map(|(engine, registered)| {
            let rating =
                (status.ratings.players.iter()).find(|p| p.name == engine.name && p.games > 0);
            VersionPoint {
                name: engine.name.clone(),
                date: registered.map_or_else(String::new, |ms| {
                    let (y, m, d) = Utc::from_unix_ms(ms).date;
                    format!("{y:04}-{m:02}-{d:02}")
                }),
                elo: rating.map(|r| r.elo),
                plus: rating.map_or(0.0, |r| r.plus),
                minus: rating.map_or(0.0, |r| r.minus),
            }
        })
        .collect();
    // The pool's best as `tourney pool best` names it.
    let best = (c.pool_best(status.id).ok().flatten())
        .and_then(|best| config.engines.iter().position(|e| e.name == best.name));
    Some(version_chart(
        TITLE,
        &points,
        Some(config.pool_anchor()),
        best,
    ))
}
