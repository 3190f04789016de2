//! Reconciling one object: a change that asks for it (a new requestedAt, a spec change) starts a
//! reconcile; it passes through Progressing and finishes, after the reconcile delay, in the
//! object's intended health, recording what it handled (FACTS §2.3, §2.5).

use serde_json::{Value, json};

use super::{Controller, Job, Key};
use crate::facts::{FluxKind, Health, annotations};
use crate::flux::Failure;
use crate::flux::Intent;
use crate::resources::Res;

/// What an object asks of its controller: an unhandled `reconcile.fluxcd.io/requestedAt` (its
/// token), and whether its generation is ahead of what the status observed (a spec change).
struct Request {
    unhandled: Option<String>,
    spec_changed: bool,
}

fn request_of(v: &Value) -> Request {
    let text = |path: &str| v.pointer(path).and_then(Value::as_str);
    let requested = annotations::get(v, annotations::REQUESTED_AT);
    let generation = v.pointer("/metadata/generation").and_then(Value::as_i64);
    let observed = v
        .pointer("/status/observedGeneration")
        .and_then(Value::as_i64);
    Request {
        unhandled: requested
            .filter(|r| Some(*r) != text("/status/lastHandledReconcileAt"))
            .map(str::to_string),
        spec_changed: generation > observed,
    }
}

impl Controller {
    /// A changed object: schedule a reconcile if it asks for one (a new requestedAt, or a
    /// generation not yet observed) and is not suspended.
    pub(super) fn changed(&mut self, cluster: usize, key: Key) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let store = c.store();
        let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2) else {
            return;
        };
        if obj.suspended || key.0.is_static() {
            return;
        }
        let request = request_of(&obj.value());
        let wants = request.unhandled.is_some() || request.spec_changed;
        drop(store);
        if wants {
            self.after(
                self.settings.reconcile_delay / 2,
                Job::Start {
                    cluster,
                    key,
                    fail: None,
                },
            );
        }
    }

    pub(super) fn start(&mut self, cluster: usize, key: Key, fail: Option<Failure>) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let target = {
            let store = c.store();
            let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2) else {
                return;
            };
            if obj.suspended {
                return;
            }
            obj.intent.unwrap_or(Intent {
                health: Health::Ready,
                failure: None,
            })
        };
        // What the reconcile will end in; a Progressing object was already on its way to Ready.
        let target = if let Some(f) = fail {
            Intent {
                health: Health::Failed,
                failure: Some(f),
            }
        } else if target.health == Health::Progressing {
            Intent {
                health: Health::Ready,
                failure: None,
            }
        } else {
            target
        };
        self.write(
            &c,
            &key,
            Intent {
                health: Health::Progressing,
                failure: None,
            },
            None,
            None,
            false,
        );
        self.after(
            self.settings.reconcile_delay - self.settings.reconcile_delay / 2,
            Job::Finish {
                cluster,
                key,
                target,
            },
        );
    }

    pub(super) fn finish(&mut self, cluster: usize, key: Key, mut target: Intent) {
        let Some(c) = self.cluster(cluster) else {
            return;
        };
        let (handled, force, reset, spec_changed) = {
            let store = c.store();
            let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2) else {
                return;
            };
            if obj.suspended {
                return;
            }
            let v = obj.value();
            let ann = |k: &str| annotations::get(&v, k).map(str::to_string);
            let stat = |k: &str| {
                v.pointer(&format!("/status/{k}"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            let request = request_of(&v);
            let requested = ann(annotations::REQUESTED_AT);
            // FACTS §2.5: only when forceAt/resetAt equal requestedAt and were not handled yet.
            let pending = |k: &str, status_key: &str| {
                ann(k).filter(|a| {
                    Some(a) == requested.as_ref() && Some(a) != stat(status_key).as_ref()
                })
            };
            let hr = key.0 == FluxKind::HelmRelease;
            (
                request.unhandled,
                pending(annotations::FORCE_AT, "lastHandledForceAt").filter(|_| hr),
                pending(annotations::RESET_AT, "lastHandledResetAt").filter(|_| hr),
                request.spec_changed,
            )
        };
        if reset.is_some() && target.health == Health::Stalled {
            target = Intent {
                health: Health::Failed,
                failure: Some(Failure::InstallFailed),
            };
        }
        if force.is_some() || (spec_changed && target.health == Health::Stalled) {
            target = Intent {
                health: Health::Ready,
                failure: None,
            };
        }
        self.write(&c, &key, target, handled, None, true);
        if force.is_some() || reset.is_some() {
            let mut store = c.store();
            if let Some(obj) = store.get(Res::Flux(key.0), &key.1, &key.2).cloned() {
                let mut v = obj.value();
                if let Some(f) = force {
                    v["status"]["lastHandledForceAt"] = json!(f);
                    let version = v
                        .pointer("/status/history/0/version")
                        .and_then(Value::as_i64)
                        .unwrap_or(1);
                    v["status"]["history"][0]["version"] = json!(version + 1);
                }
                if let Some(r) = reset {
                    v["status"]["lastHandledResetAt"] = json!(r);
                    for counter in ["failures", "installFailures", "upgradeFailures"] {
                        if let Some(m) = v["status"].as_object_mut() {
                            m.remove(counter);
                        }
                    }
                }
                let rv = store.put(Res::Flux(key.0), v, obj.intent).rv;
                drop(store);
                c.notify(rv);
            }
        }
    }
}
