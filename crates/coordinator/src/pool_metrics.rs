//! A rating pool's ratings on `/metrics`, bounded: at most [`POOLS_EXPORTED`] pools (the
//! newest that have not ended) and [`POOL_ENGINES_EXPORTED`] engines of each, every other
//! series removed at the next scrape.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use prometheus::{GaugeVec, IntGaugeVec};

/// The most rating pools whose ratings are exported: the newest of those that have not
/// ended.
pub const POOLS_EXPORTED: usize = 8;

/// The most engines of one pool whose ratings are exported: of those with games, the
/// best-rated half and the newest half (the last to join).
pub const POOL_ENGINES_EXPORTED: usize = 32;

/// One engine of a rating pool, as its standings rate it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolEngine<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its rating relative to the pool's anchor.
    pub elo: f64,
    /// The half-width of its 95 % interval.
    pub interval: f64,
    /// Its games.
    pub games: u64,
}

/// The pool gauges, and which series of them are exported now.
pub(crate) struct PoolGauges {
    /// `tourney_pool_rating_elo{tournament,engine}`.
    elo: GaugeVec,
    /// `tourney_pool_rating_interval_elo{tournament,engine}`.
    interval: GaugeVec,
    /// `tourney_pool_engines{tournament}`.
    engines: IntGaugeVec,
    /// The engines exported, by tournament, to remove those that leave the export.
    exported: Mutex<HashMap<String, BTreeSet<String>>>,
}

/// Which of a pool's `engines` (in the order they joined) are exported: of those with
/// games, the [`POOL_ENGINES_EXPORTED`]` / 2` newest and as many best-rated, in order.
fn exported_engines<'e, 'a>(engines: &'e [PoolEngine<'a>]) -> Vec<&'e PoolEngine<'a>> {
    let half = POOL_ENGINES_EXPORTED / 2;
    let played: Vec<usize> = (0..engines.len())
        .filter(|&i| engines[i].games > 0)
        .collect();
    let mut best = played.clone();
    best.sort_by(|&a, &b| engines[b].elo.total_cmp(&engines[a].elo).then(a.cmp(&b)));
    let kept: BTreeSet<usize> = (played.iter().rev().take(half))
        .chain(best.iter().take(half))
        .copied()
        .collect();
    kept.into_iter().map(|i| &engines[i]).collect()
}

impl PoolGauges {
    /// The gauges, registered by the caller: ratings, intervals and engine counts.
    pub(crate) fn new(elo: GaugeVec, interval: GaugeVec, engines: IntGaugeVec) -> Self {
        PoolGauges {
            elo,
            interval,
            engines,
            exported: Mutex::default(),
        }
    }

    /// Sets the gauges of the newest [`POOLS_EXPORTED`] of `pools` (each a tournament's
    /// number and its engines in the order they joined) and removes every other series.
    pub(crate) fn set(&self, mut pools: Vec<(u64, &[PoolEngine<'_>])>) {
        pools.sort_by_key(|&(id, _)| std::cmp::Reverse(id));
        pools.truncate(POOLS_EXPORTED);
        let mut exported = self
            .exported
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut now: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (id, engines) in pools {
            let id = id.to_string();
            self.engines
                .with_label_values(&[&id])
                .set(engines.len() as i64);
            let names = now.entry(id.clone()).or_default();
            for engine in exported_engines(engines) {
                let labels = [id.as_str(), engine.name];
                self.elo.with_label_values(&labels).set(engine.elo);
                self.interval
                    .with_label_values(&labels)
                    .set(engine.interval);
                names.insert(engine.name.to_string());
            }
        }
        for (id, names) in exported.iter() {
            let kept = now.get(id);
            if kept.is_none() {
                let _ = self.engines.remove_label_values(&[id]);
            }
            for name in (names.iter()).filter(|n| kept.is_none_or(|k| !k.contains(*n))) {
                let _ = self.elo.remove_label_values(&[id, name]);
                let _ = self.interval.remove_label_values(&[id, name]);
            }
        }
        *exported = now;
    }
}
