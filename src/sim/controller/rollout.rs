//! Change without anyone asking: churn (objects fail and recover) and rollouts (new source
//! revisions reach the fleet one workspace at a time).

use std::sync::Arc;

use serde_json::Value;

use super::{Controller, Job, Key};
use crate::facts::{FluxKind, Health};
use crate::flux::Failure;
use crate::flux::Intent;
use crate::resources::Res;
use crate::revisions::{source_of, source_revision};
use crate::scenario::FLAKE;
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

/// The story's churn: the share of its events that are a flake (a ready object failing for
/// [`FLAKE`]); the others are reconciles that change nothing.
const FLAKE_CHANCE: f64 = 0.02;

/// Picks per churn event before giving up; about `1 / (2 s)` are needed at equilibrium.
const PICKS_PER_CHANGE: usize = 32;

impl Controller {
    /// One failure or recovery somewhere in the fleet. An object picked at random recovers if
    /// it is failing, and a healthy one fails only with the odds that hold the failing share at
    /// [`FAILING_SHARE`]: failures never outpace recoveries, however long the fleet runs.
    pub(super) fn churn_once(&mut self) {
        if self.world.story.is_some() {
            self.story_churn();
            return;
        }
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

    /// The story's churn, which keeps its shape: mostly a reconcile that finds nothing new
    /// (the status written again, as controllers do every interval), now and then a flake — a
    /// ready object fails and is ready again [`FLAKE`] later.
    fn story_churn(&mut self) {
        let workloads: Vec<Arc<Cluster>> = self.world.workloads().cloned().collect();
        if workloads.is_empty() {
            return;
        }
        let c = workloads[self.rng.below(workloads.len())].clone();
        let picked = {
            let store = c.store();
            let ready: Vec<(Key, Intent)> = store
                .all()
                .filter_map(|o| match (o.res, o.intent) {
                    (Res::Flux(k), Some(i))
                        if !k.is_static()
                            && !o.suspended
                            && i.health == Health::Ready
                            && !self.stopped(c.index, k) =>
                    {
                        Some(((k, o.namespace.clone(), o.name.clone()), i))
                    }
                    _ => None,
                })
                .collect();
            (!ready.is_empty()).then(|| ready[self.rng.below(ready.len())].clone())
        };
        let Some((key, intent)) = picked else { return };
        if self.rng.chance(FLAKE_CHANCE) {
            let failure = *self.rng.pick(Failure::for_kind(key.0).0);
            let failed = Intent {
                health: Health::Failed,
                failure: Some(failure),
            };
            self.write(&c, &key, failed, None, None, true);
            self.after(
                FLAKE,
                Job::Recover {
                    cluster: c.index,
                    key,
                },
            );
        } else {
            self.write(&c, &key, intent, None, None, false);
        }
    }

    /// A flake ends: the object is ready again, unless something else changed it meanwhile.
    pub(super) fn recover(&mut self, cluster: usize, key: Key) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let flaked = c
            .store()
            .get(Res::Flux(key.0), &key.1, &key.2)
            .and_then(|o| o.intent)
            .is_some_and(|i| i.health == Health::Failed);
        if flaked {
            let ready = Intent {
                health: Health::Ready,
                failure: None,
            };
            self.write(&c, &key, ready, None, None, true);
        }
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
                        Res::Flux(k) if !o.suspended && !self.stopped(c.index, k) => {
                            source_of(k, &o.value())
                                .filter(|s| keys.contains(s))
                                .map(|_| (k, o.namespace.clone(), o.name.clone()))
                        }
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
    use crate::controller::{Controller, Job, Settings};
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
            outages: Default::default(),
            resyncing: false,
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

    /// The demo's fleet (500 clusters in 8 workspaces, the story), populated.
    fn story(clusters: usize) -> Arc<World> {
        let config = crate::Config {
            clusters,
            workspaces: 8,
            objects: 30,
            seed: 1,
            scenario: crate::Scenario::Story,
            ..crate::Config::default()
        };
        let (world, workspaces) = crate::build_world(&config);
        let clock = Clock::new(Some(1_700_000_000));
        let world = Arc::new(world.with_clock(clock.clone()));
        populate_all(&world, 1, 30, &clock, &vec![2; workspaces]);
        world
    }

    /// What the story's shape is made of: the share of workload clusters whose every object is
    /// ready (or suspended on purpose), and the share of objects failing.
    fn shape(world: &World) -> (f64, f64) {
        let (mut ready_clusters, mut clusters, mut failing, mut objects) = (0, 0, 0, 0);
        for c in world.workloads() {
            clusters += 1;
            let mut all_ready = true;
            for o in c.store().all() {
                let (Res::Flux(k), Some(intent)) = (o.res, o.intent) else {
                    continue;
                };
                if k.is_static() {
                    continue;
                }
                objects += 1;
                failing += usize::from(intent.health.is_failing());
                all_ready &= intent.health == Health::Ready || o.suspended;
            }
            ready_clusters += usize::from(all_ready);
        }
        (
            ready_clusters as f64 / clusters as f64,
            failing as f64 / objects as f64,
        )
    }

    #[test]
    fn the_story_is_a_mostly_ready_fleet_with_its_trouble_concentrated() {
        let world = story(500);
        let (ready, failing) = shape(&world);
        eprintln!(
            "{:.1} % of clusters ready, {:.2} % of objects failing",
            ready * 100.0,
            failing * 100.0
        );
        assert!(ready >= 0.90, "{ready}");
        assert!((0.01..=0.03).contains(&failing), "{failing}");
    }

    /// An hour of the demo's churn (5 changes a second), in simulated time: flakes come and go,
    /// and the story's shape holds throughout.
    #[tokio::test(start_paused = true)]
    async fn the_story_keeps_its_shape_for_an_hour_of_churn() {
        let world = story(500);
        let mut ctl = Controller {
            world: world.clone(),
            clock: world.clock.clone(),
            settings: Settings {
                seed: 1,
                churn: 5.0,
                reconcile_delay: Duration::from_secs(2),
                rollout_interval: Duration::from_secs(60),
                rollout_step: Duration::from_secs(10),
                report_every: Duration::from_secs(600),
            },
            rng: Rng::fork(1, "test"),
            timers: BTreeMap::new(),
            seq: 0,
            rings: vec![2; 8],
            latest: 2,
            outages: Default::default(),
            resyncing: false,
        };
        ctl.schedule_start();
        let start = shape(&world);
        let mut moved = false;
        for second in 1..=3_600 {
            for _ in 0..5 {
                ctl.churn_once();
            }
            tokio::time::advance(Duration::from_secs(1)).await;
            ctl.run_due(tokio::time::Instant::now());
            if second % 60 == 0 {
                let (ready, failing) = shape(&world);
                moved |= failing != start.1;
                // The outage's clusters are not ready all along: 1.2 % of them.
                assert!(
                    ready >= 0.88 && (0.01..=0.03).contains(&failing),
                    "after {second} s: {:.1} % of clusters ready, {:.2} % of objects failing \
                     (at start {:.1} %, {:.2} %)",
                    ready * 100.0,
                    failing * 100.0,
                    start.0 * 100.0,
                    start.1 * 100.0
                );
            }
        }
        assert!(moved, "flakes came and went");
        // No rollout started on its own: the bad revision is where the story put it.
        assert!(
            !ctl.timers
                .values()
                .any(|j| matches!(j, Job::NewRelease | Job::Ring { .. })),
            "the story rolls nothing out by itself"
        );
    }
}
