//! Change without anyone asking: churn (objects fail and recover) and rollouts (new source
//! revisions reach the fleet one workspace at a time).

use std::sync::Arc;

use serde_json::Value;

use super::{Controller, Job, Key};
use crate::fleet::{FluxKind, Health};
use crate::sim::flux::Failure;
use crate::sim::populate::{source_of, source_revision};
use crate::sim::resources::Res;
use crate::sim::store::Intent;
use crate::sim::world::Cluster;

/// The sources whose revisions a rollout moves: the bootstrap repository and the Helm charts.
const SOURCES_ROLLED: [FluxKind; 2] = [FluxKind::GitRepository, FluxKind::HelmChart];

impl Controller {
    /// One random failure or recovery somewhere in the fleet.
    pub(super) fn churn_once(&mut self) {
        let n = self.world.clusters.len();
        if n == 0 {
            return;
        }
        let c = self.world.clusters[self.rng.below(n)].clone();
        let candidate = {
            let store = c.store();
            let flux: Vec<_> = store
                .all()
                .filter(|o| {
                    matches!(o.res, Res::Flux(_))
                        && !o.suspended
                        && o.intent.is_some_and(|i| {
                            i.health != Health::Stalled && i.health != Health::NotApplicable
                        })
                })
                .cloned()
                .collect();
            if flux.is_empty() {
                return;
            }
            flux[self.rng.below(flux.len())].clone()
        };
        let Res::Flux(kind) = candidate.res else {
            return;
        };
        if kind.is_static() {
            return;
        }
        let next = match candidate.intent.map(|i| i.health) {
            Some(Health::Ready) => Intent {
                health: Health::Failed,
                failure: Some(*self.rng.pick(Failure::for_kind(kind).0)),
            },
            _ => Intent {
                health: Health::Ready,
                failure: None,
            },
        };
        let key = (kind, candidate.namespace.clone(), candidate.name.clone());
        self.write(&c, &key, next, None, None, true);
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
                self.after(
                    delay,
                    Job::Start {
                        cluster: c.index,
                        key,
                    },
                );
            }
        }
    }
}
