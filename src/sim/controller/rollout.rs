//! Change without anyone asking: churn (objects fail and recover) and rollouts (new source
//! revisions reach the fleet one workspace at a time).

use std::sync::Arc;

use serde_json::Value;

use super::{Controller, Job, Key};
use crate::facts::{FluxKind, Health};
use crate::flux::Failure;
use crate::flux::Intent;
use crate::populate::{source_of, source_revision};
use crate::resources::Res;
use crate::store::Object;
use crate::world::Cluster;

/// The sources whose revisions a rollout moves: the bootstrap repository and the Helm charts.
const SOURCES_ROLLED: [FluxKind; 2] = [FluxKind::GitRepository, FluxKind::HelmChart];

/// The share of churning objects (not stalled, not suspended) that fail at equilibrium. A
/// healthy object picked by churn fails with odds `s / (1 - s)` and a failing one recovers, so
/// the flows balance where `s` of them fail — near what a fleet starts with.
pub const FAILING_SHARE: f64 = 0.08;

/// The share of the objects a rollout reaches that fail on the new revision.
pub const STUCK_SHARE: f64 = 0.03;

/// Picks per churn event before giving up; about `1 / (2 s)` are needed at equilibrium.
const PICKS_PER_CHANGE: usize = 32;

impl Controller {
    /// One failure or recovery somewhere in the fleet. An object picked at random recovers if
    /// it is failing, and a healthy one fails only with the odds that hold the failing share at
    /// [`FAILING_SHARE`]: failures never outpace recoveries, however long the fleet runs.
    pub(super) fn churn_once(&mut self) {
        for _ in 0..PICKS_PER_CHANGE {
            if self.churn_pick() {
                return;
            }
        }
    }

    /// Picks one object; true when it changed.
    fn churn_pick(&mut self) -> bool {
        let n = self.world.clusters.len();
        if n == 0 {
            return false;
        }
        let c = self.world.clusters[self.rng.below(n)].clone();
        let candidate = {
            let store = c.store();
            let churnable = |o: &&Arc<Object>| {
                matches!(o.res, Res::Flux(k) if !k.is_static())
                    && !o.suspended
                    && o.intent.is_some_and(|i| {
                        i.health != Health::Stalled && i.health != Health::NotApplicable
                    })
            };
            let count = store.all().filter(churnable).count();
            if count == 0 {
                return false;
            }
            let pick = self.rng.below(count);
            match store.all().filter(churnable).nth(pick) {
                Some(o) => o.clone(),
                None => return false,
            }
        };
        let Res::Flux(kind) = candidate.res else {
            return false;
        };
        let next = match candidate.intent.map(|i| i.health) {
            Some(Health::Ready) => {
                if !self.rng.chance(FAILING_SHARE / (1.0 - FAILING_SHARE)) {
                    return false;
                }
                Intent {
                    health: Health::Failed,
                    failure: Some(*self.rng.pick(Failure::for_kind(kind).0)),
                }
            }
            _ => Intent {
                health: Health::Ready,
                failure: None,
            },
        };
        let key = (kind, candidate.namespace.clone(), candidate.name.clone());
        self.write(&c, &key, next, None, None, true);
        true
    }

    /// A workspace reaches a new rollout generation: its sources get new revisions, and their
    /// consumers reconcile shortly after.
    pub(super) fn ring(&mut self, workspace: usize, generation: usize) {
        if let Some(r) = self.rings.get_mut(workspace) {
            *r = generation;
        }
        let Some(ws) = self.world.workspaces.get(workspace).cloned() else {
            return;
        };
        let clusters: Vec<Arc<Cluster>> = self
            .world
            .clusters
            .iter()
            .filter(|c| c.workspace == ws && !c.management)
            .cloned()
            .collect();
        for c in clusters {
            let (sources, consumers) = {
                let store = c.store();
                let sources: Vec<(Key, Value)> = store
                    .all()
                    .filter_map(|o| match o.res {
                        Res::Flux(k)
                            if SOURCES_ROLLED.contains(&k)
                                && !o.suspended
                                && o.intent.is_some_and(|i| i.health == Health::Ready) =>
                        {
                            let v = o.value();
                            let rolled = k != FluxKind::GitRepository || o.name == "flux-system";
                            rolled.then(|| ((k, o.namespace.clone(), o.name.clone()), v))
                        }
                        _ => None,
                    })
                    .collect();
                let keys: Vec<Key> = sources.iter().map(|(k, _)| k.clone()).collect();
                let consumers: Vec<Key> = store
                    .all()
                    .filter_map(|o| match o.res {
                        Res::Flux(k) if !o.suspended => source_of(k, &o.value())
                            .filter(|s| keys.contains(s))
                            .map(|_| (k, o.namespace.clone(), o.name.clone())),
                        _ => None,
                    })
                    .collect();
                (sources, consumers)
            };
            for (key, v) in sources {
                let rev = source_revision(self.settings.seed, key.0, &v, generation);
                let intent = Intent {
                    health: Health::Ready,
                    failure: None,
                };
                self.write(&c, &key, intent, None, Some(rev), true);
            }
            for key in consumers {
                let delay = self.settings.reconcile_delay / 2;
                // A few clusters fail on the new revision and stay there (stuck) until churn or
                // someone fixes them.
                let fail = self.rng.chance(STUCK_SHARE).then_some(match key.0 {
                    FluxKind::HelmRelease => Failure::UpgradeRolledBack,
                    _ => Failure::HealthCheck,
                });
                self.after(
                    delay,
                    Job::Start {
                        cluster: c.index,
                        key,
                        fail,
                    },
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;
    use std::time::Duration;

    use super::FAILING_SHARE;
    use crate::clock::Clock;
    use crate::controller::{Controller, Settings};
    use crate::facts::Health;
    use crate::faults::Faults;
    use crate::populate::populate_all;
    use crate::resources::Res;
    use crate::rng::Rng;
    use crate::store::Limits;
    use crate::world::{Cluster, World};

    fn fleet(clusters: usize) -> Arc<World> {
        let limits = Limits {
            history: 100,
            history_age: Duration::from_secs(60),
            events: 10,
        };
        let all = (0..clusters)
            .map(|i| {
                Arc::new(Cluster::new(
                    i,
                    format!("c-{i}"),
                    "ws".into(),
                    BTreeMap::new(),
                    false,
                    ("a".into(), "v".into()),
                    Faults::default(),
                    limits,
                    false,
                ))
            })
            .collect();
        let world = Arc::new(World::new(all, vec!["ws".into()]));
        populate_all(&world, 7, 30, &Clock::new(Some(1_700_000_000)), &[1]);
        world
    }

    /// Failed objects among those churn may change (not stalled, not suspended).
    fn failing_share(world: &World) -> f64 {
        let (mut failed, mut churnable) = (0usize, 0usize);
        for c in world.clusters.iter() {
            for o in c.store().all() {
                let Some(intent) = o.intent else { continue };
                if !matches!(o.res, Res::Flux(k) if !k.is_static())
                    || o.suspended
                    || matches!(intent.health, Health::Stalled | Health::NotApplicable)
                {
                    continue;
                }
                churnable += 1;
                failed += usize::from(intent.health == Health::Failed);
            }
        }
        failed as f64 / churnable.max(1) as f64
    }

    #[test]
    fn churn_settles_near_its_failing_share_however_long_it_runs() {
        let world = fleet(20);
        let mut ctl = Controller {
            world: world.clone(),
            clock: Clock::new(Some(1_700_000_000)),
            settings: Settings {
                seed: 7,
                churn: 5.0,
                reconcile_delay: Duration::from_secs(2),
                rollout_interval: Duration::from_secs(120),
                rollout_step: Duration::from_secs(15),
                report_every: Duration::from_secs(600),
            },
            rng: Rng::fork(7, "test"),
            timers: BTreeMap::new(),
            seq: 0,
            rings: vec![1],
            latest: 1,
        };
        // Hours of the demo's churn (5 a second) in fast-forward; the share is sampled at
        // every stage, since a decaying fleet passes through the band on its way up.
        for stage in 0..6 {
            for _ in 0..3_000 {
                ctl.churn_once();
            }
            let share = failing_share(&world);
            assert!(
                (FAILING_SHARE * 0.5..FAILING_SHARE * 1.6).contains(&share),
                "after {} changes {:.1} % of churning objects fail",
                (stage + 1) * 3_000,
                share * 100.0
            );
        }
    }
}
