//! Workers' profiles (cores, memory, CPU features, labels, opt-outs), interned: workers
//! of one kind share one copy, so that a fleet of 50,000 identical pods keeps one set of
//! 150 CPU feature names, not 50,000. And which of them can take a tournament's pairs.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tourney_model::fleet::WorkerProfile;
use tourney_model::tournament::TournamentConfig;

/// The distinct profiles of the registered workers.
#[derive(Debug, Default)]
pub struct Profiles(HashSet<Arc<WorkerProfile>>);

impl Profiles {
    /// The shared copy of `profile`.
    pub fn intern(&mut self, profile: WorkerProfile) -> Arc<WorkerProfile> {
        if let Some(known) = self.0.get(&profile) {
            return Arc::clone(known);
        }
        let profile = Arc::new(profile);
        self.0.insert(Arc::clone(&profile));
        profile
    }

    /// Forgets the profiles no worker holds any more.
    pub fn prune(&mut self) {
        self.0.retain(|p| Arc::strong_count(p) > 1);
    }

    /// Distinct profiles kept.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// How many connected workers can take a tournament's pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Eligibility {
    /// Connected workers that meet what it requires.
    pub workers: u64,
    /// When none does but some are connected: why the most common kind of them cannot
    /// ("needs 16 cores (has 8)").
    pub unmet: Option<String>,
}

/// The eligibility of `config` among connected workers: each profile with how many
/// workers have it. Each distinct profile is judged once.
pub fn eligibility<'a>(
    config: &TournamentConfig,
    profiles: impl IntoIterator<Item = (&'a Arc<WorkerProfile>, u64)>,
) -> Eligibility {
    let mut kinds: HashMap<*const WorkerProfile, (u64, &WorkerProfile)> = HashMap::new();
    for (profile, count) in profiles {
        kinds.entry(Arc::as_ptr(profile)).or_insert((0, profile)).0 += count;
    }
    let mut result = Eligibility::default();
    let mut commonest: Option<(u64, String)> = None;
    for (count, profile) in kinds.into_values() {
        match config.unmet_by(profile) {
            None => result.workers += count,
            Some(why) => {
                let why = why.to_string();
                if commonest
                    .as_ref()
                    .is_none_or(|(n, w)| (count, &why) > (*n, w))
                {
                    commonest = Some((count, why));
                }
            }
        }
    }
    if result.workers == 0 {
        result.unmet = commonest.map(|(_, why)| why);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(cores: u32) -> WorkerProfile {
        WorkerProfile {
            cores,
            os: "linux".into(),
            ..WorkerProfile::default()
        }
    }

    fn config(requires: &str) -> TournamentConfig {
        let text = format!(
            "name = \"t\"\ngame = \"loa\"\nformat = \"round-robin\"\nrounds = 1\n\
             openings = {{ plies = 2 }}\nlimits = {{ nodes = 10 }}\n{requires}\n\
             [[engine]]\nname = \"a\"\nplayer = \"random\"\n\
             [[engine]]\nname = \"b\"\nplayer = \"random\"\n"
        );
        TournamentConfig::parse(&text, "t.toml").unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn identical_profiles_share_one_copy_until_no_worker_holds_it() {
        let mut profiles = Profiles::default();
        let a = profiles.intern(profile(8));
        let b = profiles.intern(profile(8));
        let c = profiles.intern(profile(4));
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(profiles.len(), 2);
        drop(c);
        profiles.prune();
        assert_eq!(profiles.len(), 1, "the 4-core profile had no worker left");
        drop((a, b));
        profiles.prune();
        assert!(profiles.is_empty());
    }

    #[test]
    fn eligible_workers_are_counted_and_the_commonest_reason_given_when_none_fits() {
        let mut profiles = Profiles::default();
        let workers: Vec<Arc<WorkerProfile>> = (0..5)
            .map(|i| profiles.intern(profile(if i < 3 { 8 } else { 4 })))
            .collect();
        let workers: Vec<(&Arc<WorkerProfile>, u64)> = workers.iter().map(|w| (w, 1)).collect();
        let open = eligibility(&config(""), workers.clone());
        assert_eq!(
            open,
            Eligibility {
                workers: 5,
                unmet: None
            }
        );
        let big = eligibility(&config("[requires]\ncores = 6"), workers.clone());
        assert_eq!(
            big,
            Eligibility {
                workers: 3,
                unmet: None
            }
        );
        let huge = eligibility(&config("[requires]\ncores = 16"), workers);
        assert_eq!(huge.workers, 0);
        assert_eq!(huge.unmet.as_deref(), Some("needs 16 cores (has 8)"));
        let none = eligibility(&config("[requires]\ncores = 16"), []);
        assert_eq!(
            none,
            Eligibility::default(),
            "no worker connected: no reason"
        );
    }
}
