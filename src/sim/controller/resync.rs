//! Kustomizations reconciled at their interval while churn runs: each finds nothing new and
//! its history counts one more run — except on the story's stale cluster, whose
//! kustomize-controller stopped; the story's flapping release goes the other way each time.

use super::{Controller, Job, Key};
use crate::facts::{FluxKind, Health};
use crate::flux::{Failure, Intent};
use crate::resources::Res;

/// How often the catalog's Kustomizations reconcile (`spec.interval: 10m0s`).
const RESYNC: std::time::Duration = std::time::Duration::from_secs(600);

impl Controller {
    /// Each cluster's Kustomizations reconciled every [`RESYNC`], the clusters spread over it as
    /// controllers started at different times are. Once; they go on while churn does.
    pub(super) fn schedule_resyncs(&mut self) {
        if std::mem::replace(&mut self.resyncing, true) {
            return;
        }
        for c in self.world.clone().clusters.iter() {
            let first = RESYNC.mul_f64((c.index % 97 + 1) as f64 / 97.0 / 2.0);
            self.after(first, Job::Resync { cluster: c.index });
        }
    }

    /// Kustomization `spec.interval` (the catalog's): each one on `cluster` runs again and finds
    /// nothing new — its history counts one more run — unless it is under way, suspended, or
    /// its controller stopped (the story's stale cluster). The story's flapping release goes
    /// the other way each time it comes round.
    pub(super) fn resync(&mut self, cluster: usize) {
        if self.settings.churn <= 0.0 {
            self.resyncing = false;
            return;
        }
        self.after(RESYNC, Job::Resync { cluster });
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let flapping = self.world.story.as_ref().and_then(|cast| {
            let (kind, ns, name) = crate::scenario::FLAPPING;
            cast.flapping
                .contains(&cluster)
                .then(|| (kind, ns.to_string(), name.to_string()))
        });
        let due: Vec<(Key, Intent)> = c
            .store()
            .all()
            .filter_map(|o| match (o.res, o.intent) {
                (Res::Flux(k), Some(i))
                    if k == FluxKind::Kustomization
                        && !o.suspended
                        && i.health != Health::Progressing
                        && !self.stopped(cluster, k) =>
                {
                    Some(((k, o.namespace.clone(), o.name.clone()), i))
                }
                _ => None,
            })
            .collect();
        for (key, intent) in due {
            self.write(&c, &key, intent, None, None, false);
        }
        if let Some(key) = flapping {
            let failing = c
                .store()
                .get(Res::Flux(key.0), &key.1, &key.2)
                .and_then(|o| o.intent)
                .is_some_and(|i| i.health == Health::Failed);
            let next = match failing {
                true => Intent {
                    health: Health::Ready,
                    failure: None,
                },
                false => Intent {
                    health: Health::Failed,
                    failure: Some(Failure::UpgradeRolledBack),
                },
            };
            self.write(&c, &key, next, None, None, true);
        }
    }

    /// Whether `kind`'s controller on `cluster` has stopped (the story's stale cluster: its
    /// kustomize-controller reconciles nothing).
    pub(super) fn stopped(&self, cluster: usize, kind: FluxKind) -> bool {
        kind == FluxKind::Kustomization
            && self
                .world
                .story
                .as_ref()
                .is_some_and(|cast| cast.stale.contains(&cluster))
    }
}
