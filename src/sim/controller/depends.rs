//! `dependsOn` as Flux's controllers read it: an object whose dependency is not ready fails with
//! DependencyNotReady when it next reconciles, and retries every dependency requeue interval;
//! once the dependency is ready again, the retry reconciles it and it recovers — and what
//! depends on it follows, one interval later.

use std::time::Duration;

use serde_json::Value;

use super::{Controller, Job, Key, ready};
use crate::facts::{FluxKind, Health};
use crate::flux::Failure;
use crate::flux::Intent;
use crate::resources::Res;
use crate::store::Store;

/// What `obj` (of `kind`, in `namespace`) depends on: `spec.dependsOn`, same kind.
fn dependencies(kind: FluxKind, namespace: &str, obj: &Value) -> Vec<Key> {
    obj.pointer("/spec/dependsOn")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| {
            let name = d.get("name")?.as_str()?;
            let ns = d
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or(namespace);
            Some((kind, ns.to_string(), name.to_string()))
        })
        .collect()
}

/// The objects of a cluster that depend on `key`.
fn dependants(store: &Store, key: &Key) -> Vec<Key> {
    store
        .all()
        .filter_map(|o| match o.res {
            Res::Flux(kind @ (FluxKind::Kustomization | FluxKind::HelmRelease))
                if kind == key.0 =>
            {
                let v = o.value();
                dependencies(kind, &o.namespace, &v)
                    .contains(key)
                    .then(|| (kind, o.namespace.clone(), o.name.clone()))
            }
            _ => None,
        })
        .collect()
}

impl Controller {
    /// kustomize-controller's `--requeue-dependency` (30s), scaled like the reconcile delay.
    fn requeue_dependency(&self) -> Duration {
        self.settings.reconcile_delay * 2
    }

    /// `key` turned ready or not: what depends on it looks again after the requeue interval.
    pub(super) fn readiness_changed(&mut self, cluster: usize, key: &Key) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let waiting = dependants(&c.store(), key);
        let requeue = self.requeue_dependency();
        for key in waiting {
            self.after(requeue, Job::Dependency { cluster, key });
        }
    }

    /// A dependant's retry: not ready while a dependency is not, recovering once all are.
    pub(super) fn recheck(&mut self, cluster: usize, key: Key) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let (blocked, waiting) = {
            let store = c.store();
            let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2) else {
                return;
            };
            if obj.suspended {
                return;
            }
            let blocked = dependencies(key.0, &key.1, &obj.value()).iter().any(|d| {
                store
                    .get(Res::Flux(d.0), &d.1, &d.2)
                    .is_some_and(|dep| !ready(dep.intent))
            });
            let waiting = obj
                .intent
                .is_some_and(|i| i.failure == Some(Failure::DependencyNotReady));
            (blocked, waiting)
        };
        match (blocked, waiting) {
            (true, false) => {
                let failed = Intent {
                    health: Health::Failed,
                    failure: Some(Failure::DependencyNotReady),
                };
                self.write(&c, &key, failed, None, None, true);
            }
            (false, true) => {
                // Its dependencies are ready: this retry reconciles it, to ready.
                {
                    let mut store = c.store();
                    if let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2).cloned() {
                        store.put(
                            Res::Flux(key.0),
                            obj.value(),
                            Some(Intent {
                                health: Health::Ready,
                                failure: None,
                            }),
                        );
                    }
                }
                self.start(cluster, key, None);
            }
            // Flux retries a waiting dependant every interval; here the retry that matters is
            // the one after a dependency turns ready, scheduled then (so a fleet that waits
            // still falls quiet).
            (true, true) | (false, false) => {}
        }
    }
}
