//! What a tournament's results say about the workers that played them. Per worker host:
//! its pair results by pairing, how its games ended, which engines failed in them, and its
//! refused reports. From these: fishtest's homogeneity test of the workers' pair results
//! (a worker whose results differ from the rest's stands out by its residual), its rates of
//! time losses, engine failures and refused reports against the rest's, and so which
//! workers look suspect, and why. An operator may exclude a worker's results
//! ([`crate::Coordinator::exclude_worker`]); every figure is then made without them.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use tourney_model::Termination;
use tourney_model::adjudication::PlayedOn;
use tourney_model::tournament::PairOutcome;
use tourney_report::{WorkerResult, WorkersReport};
use tourney_stats::homogeneity;
use tourney_store::WorkerExclusion;

use crate::pair_map::PairMap;
use crate::scheduler::host;

/// A worker is suspect when its largest residual is above this while the test rejects
/// homogeneity at [`HOMOGENEITY_P`] (fishtest marks residuals above 2.7 and 3).
pub const RESIDUAL_SUSPECT: f64 = 3.0;
/// The homogeneity test's p-value below which residuals mark workers suspect.
pub const HOMOGENEITY_P: f64 = 0.01;
/// A rate (time losses, engine failures, refused reports) marks a worker suspect when it
/// is this many standard deviations above the other workers' median rate and counts at
/// least [`RATE_EVENTS`] events.
pub const RATE_Z: f64 = 3.0;
/// The fewest events for a rate to mark a worker suspect.
pub const RATE_EVENTS: u64 = 3;
/// The most worker hosts tallied per tournament. Hosts that played pairs are always
/// tallied (there are at most as many as pairs); past this many, a host that only had
/// reports refused is counted in the metric and the log only.
pub const MAX_HOSTS: usize = 4096;
/// The most workers a report lists (suspect and excluded ones first).
pub const WORKERS_SHOWN: usize = 200;

/// The most exclusion decisions a tournament records.
pub const MAX_EXCLUSIONS: usize = 1000;
/// The longest reason for an exclusion decision, in characters.
pub const MAX_REASON_CHARS: usize = 500;

/// A rate of a host: events and chances.
type Rate = fn(&HostTally) -> (u64, u64);

/// The hosts' pair results (pentanomial bins) in one pairing.
type Stratum = Vec<(usize, [u64; 5])>;

/// One host's share of a tournament.
#[derive(Debug, Default, Serialize, Deserialize)]
struct HostTally {
    name: String,
    pairs: u64,
    /// Pair results of the pairing's first engine (pentanomial bins), by pairing.
    #[serde(with = "as_list")]
    by_pairing: BTreeMap<(usize, usize), [u64; 5]>,
    /// Its games by how they ended, indexed like [`Termination::ALL`].
    terminations: [u64; Termination::ALL.len()],
    /// Games an engine lost by failing (time, crash, illegal move, silence), by engine
    /// index and termination.
    #[serde(with = "as_list")]
    failures: BTreeMap<(usize, Termination), u64>,
    /// Reports refused.
    rejected: u64,
    /// Adjudicated games played on to their end: how many ended as adjudicated, and how
    /// many otherwise.
    #[serde(default)]
    played_on: [u64; 2],
}

impl HostTally {
    fn games(&self) -> u64 {
        self.terminations.iter().sum()
    }

    fn count_of(&self, t: Termination) -> u64 {
        self.terminations[t as usize]
    }

    fn engine_failures(&self) -> u64 {
        [
            Termination::Crash,
            Termination::IllegalMove,
            Termination::Unresponsive,
        ]
        .into_iter()
        .map(|t| self.count_of(t))
        .sum()
    }
}

/// A tournament's results by the worker host that played them.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct WorkerBook {
    hosts: Vec<HostTally>,
    /// Each host's place in `hosts` (rebuilt when read back).
    #[serde(skip)]
    index: HashMap<String, u32>,
    /// The host that played each pair, by pair index: its place in `hosts` plus one (0
    /// where none has).
    pair_host: PairMap<u32>,
}

/// A map written as a list of its entries (JSON keys are strings only).
mod as_list {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub(super) fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub(super) fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

impl WorkerBook {
    /// A book read back (from a summary): its index made again.
    pub(crate) fn reindexed(mut self) -> WorkerBook {
        self.index = (self.hosts.iter().enumerate())
            .map(|(i, t)| (t.name.clone(), i as u32))
            .collect();
        self
    }

    fn host_index(&mut self, worker: &str, must: bool) -> Option<usize> {
        let name = host(worker);
        if let Some(&i) = self.index.get(name) {
            return Some(i as usize);
        }
        if !must && self.hosts.len() >= MAX_HOSTS {
            return None;
        }
        let i = self.hosts.len();
        self.hosts.push(HostTally {
            name: name.to_string(),
            ..HostTally::default()
        });
        self.index.insert(name.to_string(), i as u32);
        Some(i)
    }

    /// Counts a pair `worker` played, with how each of its games ended (and, for an
    /// adjudicated game played on, how that went).
    pub(crate) fn count(
        &mut self,
        worker: &str,
        outcome: &PairOutcome,
        games: &[(Termination, PlayedOn)],
    ) {
        let Some(h) = self.host_index(worker, true) else {
            return;
        };
        self.pair_host.set(outcome.pair, h as u32 + 1);
        let tally = &mut self.hosts[h];
        tally.pairs += 1;
        let bin = usize::from(outcome.half_points[0] + outcome.half_points[1]).min(4);
        tally
            .by_pairing
            .entry((outcome.first, outcome.second))
            .or_default()[bin] += 1;
        for (g, &(termination, played_on)) in games.iter().enumerate().take(2) {
            tally.terminations[termination as usize] += 1;
            match played_on {
                PlayedOn::No => {}
                PlayedOn::Agreed => tally.played_on[0] += 1,
                PlayedOn::Overturned => tally.played_on[1] += 1,
            }
            if termination.is_failure() {
                let white = outcome.white[g];
                let black = if white == outcome.first {
                    outcome.second
                } else {
                    outcome.first
                };
                let failed = match outcome.white_half_points(g) {
                    0 => Some(white),
                    2 => Some(black),
                    _ => None,
                };
                if let Some(engine) = failed {
                    *tally.failures.entry((engine, termination)).or_default() += 1;
                }
            }
        }
    }

    /// Counts a refused report from `worker`; how many it has had in the tournament.
    pub(crate) fn rejected(&mut self, worker: &str) -> u64 {
        match self.host_index(worker, false) {
            Some(h) => {
                self.hosts[h].rejected += 1;
                self.hosts[h].rejected
            }
            None => 0,
        }
    }

    /// The pairs `host` played.
    pub(crate) fn pairs_of(&self, host: &str) -> Vec<u64> {
        let Some(&h) = self.index.get(host) else {
            return Vec::new();
        };
        self.pair_host
            .iter()
            .filter(|&(_, host)| host == h + 1)
            .map(|(p, _)| p)
            .collect()
    }

    /// Whether `host` played or reported anything in the tournament.
    pub(crate) fn knows(&self, host: &str) -> bool {
        self.index.contains_key(host)
    }

    /// Games by how they ended, over the hosts not `excluded`.
    pub(crate) fn terminations(&self, excluded: &dyn Fn(&str) -> bool) -> Vec<(Termination, u64)> {
        let mut sums = [0u64; Termination::ALL.len()];
        for tally in self.hosts.iter().filter(|t| !excluded(&t.name)) {
            for (sum, n) in sums.iter_mut().zip(tally.terminations) {
                *sum += n;
            }
        }
        Termination::ALL
            .into_iter()
            .zip(sums)
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Adjudicated games played on to their end over the hosts not `excluded`: how many
    /// ended as adjudicated, and how many otherwise.
    pub(crate) fn played_on(&self, excluded: &dyn Fn(&str) -> bool) -> [u64; 2] {
        (self.hosts.iter().filter(|t| !excluded(&t.name)))
            .fold([0, 0], |[a, o], t| [a + t.played_on[0], o + t.played_on[1]])
    }

    /// Games each engine lost by failing, by termination, over the hosts not `excluded`.
    pub(crate) fn engine_failures(
        &self,
        excluded: &dyn Fn(&str) -> bool,
    ) -> BTreeMap<(usize, Termination), u64> {
        let mut sums = BTreeMap::new();
        for tally in self.hosts.iter().filter(|t| !excluded(&t.name)) {
            for (key, n) in &tally.failures {
                *sums.entry(*key).or_default() += n;
            }
        }
        sums
    }

    /// The homogeneity test over the hosts not excluded, each host's figures, and what
    /// makes a host suspect; an excluded host is compared with the hosts that count.
    pub(crate) fn assess(&self, exclusions: &BTreeMap<&str, &WorkerExclusion>) -> WorkersReport {
        let excluded = |h: &HostTally| exclusions.contains_key(h.name.as_str());
        let counted: Vec<usize> = (0..self.hosts.len())
            .filter(|&h| !excluded(&self.hosts[h]))
            .collect();
        let test = self.homogeneity(&counted);
        let mut residuals = test.residuals.clone();
        for h in (0..self.hosts.len()).filter(|&h| excluded(&self.hosts[h])) {
            let mut with = counted.clone();
            with.push(h);
            residuals[h] = self.homogeneity(&with).residuals[h];
        }
        // A rate is compared with the median of the other workers' (each smoothed by
        // Laplace's rule, so that none is 0): one odd worker does not move the baseline.
        // Each rate's counted values are sorted once; the median without one worker is
        // read from them (a fleet of thousands of hosts made this quadratic).
        let rates: [(&str, Rate); 3] = [
            ("time losses", |t| {
                (t.count_of(Termination::TimeForfeit), t.games())
            }),
            ("engine failures", |t| (t.engine_failures(), t.games())),
            ("refused reports", |t| (t.rejected, t.rejected + t.pairs)),
        ];
        let smoothed = |h: usize, of: Rate| {
            let (k, n) = of(&self.hosts[h]);
            (k as f64 + 1.0) / (n as f64 + 2.0)
        };
        let sorted: Vec<Vec<f64>> = (rates.iter())
            .map(|&(_, of)| {
                let mut values: Vec<f64> = counted.iter().map(|&h| smoothed(h, of)).collect();
                values.sort_by(f64::total_cmp);
                values
            })
            .collect();
        let others_rate = |h: usize, rate: usize| {
            let all = &sorted[rate];
            if excluded(&self.hosts[h]) {
                return all.get(all.len() / 2).copied();
            }
            median_without(all, smoothed(h, rates[rate].1))
        };
        let mut workers: Vec<WorkerResult> = self
            .hosts
            .iter()
            .enumerate()
            .map(|(h, tally)| {
                let mut pentanomial = [0u64; 5];
                for bins in tally.by_pairing.values() {
                    for (sum, n) in pentanomial.iter_mut().zip(bins) {
                        *sum += n;
                    }
                }
                let mut suspect = Vec::new();
                if test.p < HOMOGENEITY_P && residuals[h] > RESIDUAL_SUSPECT {
                    suspect.push(format!(
                        "results unlike the other workers' (residual {:.1}, p = {:.1e})",
                        residuals[h], test.p
                    ));
                }
                for (rate, &(what, of)) in rates.iter().enumerate() {
                    let (k, n) = of(tally);
                    let Some(p0) = others_rate(h, rate) else {
                        continue;
                    };
                    let z = (k as f64 - n as f64 * p0) / (n as f64 * p0 * (1.0 - p0)).sqrt();
                    if k >= RATE_EVENTS && z > RATE_Z {
                        suspect.push(format!(
                            "{what}: {k} of {n} ({:.1}%; the other workers' median {:.1}%)",
                            100.0 * k as f64 / n as f64,
                            100.0 * p0
                        ));
                    }
                }
                WorkerResult {
                    worker: tally.name.clone(),
                    pairs: tally.pairs,
                    games: tally.games(),
                    pentanomial,
                    residual: residuals[h],
                    time_losses: tally.count_of(Termination::TimeForfeit),
                    engine_failures: tally.engine_failures(),
                    rejected: tally.rejected,
                    suspect,
                    excluded: exclusions.get(tally.name.as_str()).map(|e| {
                        format!(
                            "since {}: {}",
                            tourney_model::Utc::from_unix_ms(e.at_ms),
                            e.reason
                        )
                    }),
                }
            })
            .collect();
        workers.sort_by(|a, b| {
            let flagged = |w: &WorkerResult| w.excluded.is_some() || !w.suspect.is_empty();
            flagged(b)
                .cmp(&flagged(a))
                .then(b.residual.total_cmp(&a.residual))
                .then(a.worker.cmp(&b.worker))
        });
        let suspects = workers
            .iter()
            .filter(|w| w.excluded.is_none() && !w.suspect.is_empty())
            .count() as u64;
        workers.truncate(WORKERS_SHOWN);
        WorkersReport {
            g: test.g,
            dof: test.dof,
            p: test.p,
            suspects,
            workers,
        }
    }

    /// The homogeneity test of `hosts`, stratified by pairing.
    fn homogeneity(&self, hosts: &[usize]) -> tourney_stats::Homogeneity {
        let mut strata: BTreeMap<(usize, usize), Stratum> = BTreeMap::new();
        for &h in hosts {
            for (pairing, bins) in &self.hosts[h].by_pairing {
                strata.entry(*pairing).or_default().push((h, *bins));
            }
        }
        let strata: Vec<_> = strata.into_values().collect();
        homogeneity(self.hosts.len(), &strata)
    }
}

/// The median (the upper one of an even count) of `all`, sorted, without one copy of
/// `mine` (one of its values): `None` when nothing is left.
fn median_without(all: &[f64], mine: f64) -> Option<f64> {
    let first = all.partition_point(|&v| v.total_cmp(&mine).is_lt());
    let others = all.len().checked_sub(1).filter(|&n| n > 0)?;
    let m = others / 2;
    all.get(if m < first { m } else { m + 1 }).copied()
}

#[cfg(test)]
mod tests {
    use super::median_without;

    #[test]
    fn the_median_of_the_others_is_the_median_without_the_worker() {
        // The sorted-once median against the plain one, for every worker of odd fleets.
        let values = [0.3, 0.1, 0.1, 0.7, 0.5, 0.1, 0.9, 0.3];
        for n in 1..=values.len() {
            let mut all: Vec<f64> = values[..n].to_vec();
            all.sort_by(f64::total_cmp);
            for h in 0..n {
                let mut others: Vec<f64> = (0..n).filter(|&o| o != h).map(|o| values[o]).collect();
                others.sort_by(f64::total_cmp);
                let naive = others.get(others.len() / 2).copied();
                assert_eq!(median_without(&all, values[h]), naive, "n {n}, h {h}");
            }
        }
    }
}
