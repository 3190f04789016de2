//! The Flux Operator on a simulated cluster: its `FluxInstance` (named `flux`, in flux-system)
//! and the `FluxReport` it writes every `fluxcd.controlplane.io/reconcileEvery` from what is
//! really on the cluster.
//!
//! The stats follow the operator (flux-operator v0.58's reporter, checked on it): per kind,
//! `suspended` counts suspended objects, `failing` the others whose Ready condition is False
//! (stalled included) except those waiting on a dependency (reason `DependencyNotReady`), and
//! `running` every object that is not suspended — so a kind's objects are `running +
//! suspended`, failing ones among the running.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::clock::Clock;
use super::resources::Res;
use super::world::Cluster;
use crate::facts::{FluxKind, FluxRelease};

pub const NAMESPACE: &str = "flux-system";
pub const NAME: &str = "flux";

/// Whether workload cluster `i` runs the operator: `share` of every hundred clusters, spread
/// over the workspaces.
pub fn runs_on(i: usize, share: f64) -> bool {
    let per_hundred = (share * 100.0).round() as usize;
    (i * 37) % 100 < per_hundred
}

/// The patch release a cluster runs: most the newest, one in five the one before.
fn patch(cluster: &Cluster, release: FluxRelease) -> u8 {
    match (release == FluxRelease::LATEST, cluster.index % 5) {
        (true, 0) => 3,
        (true, _) => 4,
        (false, _) => 2,
    }
}

/// `v2.9.4`: the distribution version the cluster runs.
pub fn distribution(cluster: &Cluster) -> Option<String> {
    let release = cluster.flux?;
    Some(format!("{}.{}", release.name(), patch(cluster, release)))
}

fn components(cluster: &Cluster, release: FluxRelease) -> Vec<(&'static str, String)> {
    let p = patch(cluster, release);
    let minor = release.0;
    vec![
        ("source-controller", format!("v1.{minor}.{p}")),
        ("kustomize-controller", format!("v1.{minor}.{p}")),
        (
            "helm-controller",
            format!("v1.{}.{p}", minor.saturating_sub(3)),
        ),
        ("notification-controller", format!("v1.{minor}.{p}")),
    ]
}

fn digest(text: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    format!("{:016x}", h.finish()).repeat(4)
}

/// The cluster's FluxInstance.
pub fn instance(cluster: &Cluster, clock: &Clock, every: Duration) -> Option<Value> {
    let release = cluster.flux?;
    let version = distribution(cluster)?;
    let revision = format!("{version}@sha256:{}", digest(&version));
    Some(json!({
        "apiVersion": "fluxcd.controlplane.io/v1",
        "kind": "FluxInstance",
        "metadata": {
            "name": NAME, "namespace": NAMESPACE, "generation": 1,
            "creationTimestamp": clock.before_start(30 * 86_400),
            "annotations": {
                "fluxcd.controlplane.io/reconcile": "enabled",
                "fluxcd.controlplane.io/reconcileEvery": format!("{}s", every.as_secs().max(1)),
            },
        },
        "spec": {
            "distribution": {"version": format!("2.{}.x", release.0), "registry": "ghcr.io/fluxcd"},
            "components": components(cluster, release).iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            "sync": {"kind": "GitRepository", "url": "https://github.com/example-org/fleet-infra",
                     "ref": "refs/heads/main", "path": format!("clusters/{}", cluster.name)},
        },
        "status": {
            "lastAppliedRevision": revision, "lastAttemptedRevision": revision,
            "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                            "message": "Reconciliation finished in 8s", "observedGeneration": 1,
                            "lastTransitionTime": clock.before_start(86_400)}],
        },
    }))
}

/// Per kind: running, failing, suspended.
fn stats(cluster: &Cluster) -> BTreeMap<FluxKind, (u64, u64, u64)> {
    let store = cluster.store();
    let mut out = BTreeMap::new();
    for o in store.all() {
        let Res::Flux(kind) = o.res else { continue };
        let (running, failing, suspended) = out.entry(kind).or_insert((0, 0, 0));
        if o.suspended {
            *suspended += 1;
        } else {
            *running += 1;
            *failing += u64::from(crate::facts::is_failing(&o.value()));
        }
    }
    out
}

/// The report the operator writes now.
pub fn report(cluster: &Cluster, clock: &Clock) -> Option<Value> {
    let release = cluster.flux?;
    let version = distribution(cluster)?;
    let reconcilers: Vec<Value> = stats(cluster)
        .into_iter()
        .map(|(kind, (running, failing, suspended))| {
            let served = cluster.served.iter().find(|s| s.res == Res::Flux(kind));
            json!({
                "apiVersion": served.map(|s| s.api_version()).unwrap_or_default(),
                "kind": kind.as_str(),
                "stats": {"running": running, "failing": failing, "suspended": suspended},
            })
        })
        .collect();
    let sync = {
        let store = cluster.store();
        store
            .get(Res::Flux(FluxKind::Kustomization), NAMESPACE, "flux-system")
            .map(|ks| {
                let v = ks.value();
                let ready = crate::facts::is_ready(&v);
                let revision = v
                    .pointer("/status/lastAppliedRevision")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                json!({"id": "kustomization/flux-system", "ready": ready,
                       "path": format!("clusters/{}", cluster.name),
                       "source": "https://github.com/example-org/fleet-infra",
                       "status": format!("Applied revision: {revision}")})
            })
    };
    let components: Vec<Value> = components(cluster, release)
        .into_iter()
        .map(|(name, tag)| {
            json!({"name": name, "image": format!("ghcr.io/fluxcd/{name}:{tag}@sha256:{}", digest(&tag)),
                   "ready": true, "status": "Current Deployment is available. Replicas: 1"})
        })
        .collect();
    let mut spec = json!({
        "cluster": {"platform": "linux/amd64", "serverVersion": "v1.33.4", "nodes": 3 + cluster.index % 10},
        "distribution": {"entitlement": "Issued by controlplane", "managedBy": "flux-operator",
                         "status": "Installed", "version": version},
        "operator": {"apiVersion": "fluxcd.controlplane.io/v1", "platform": "linux/amd64", "version": "v0.58.1"},
        "components": components,
        "reconcilers": reconcilers,
    });
    if let Some(sync) = sync {
        spec["sync"] = sync;
    }
    Some(json!({
        "apiVersion": "fluxcd.controlplane.io/v1",
        "kind": "FluxReport",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "generation": 1,
                     "creationTimestamp": clock.before_start(30 * 86_400)},
        "spec": spec,
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                   "message": "Reporting finished in 183ms", "observedGeneration": 1,
                   "lastTransitionTime": clock.now()}]},
    }))
}

/// Writes the cluster's report again, as the operator does every `reconcileEvery`.
pub fn refresh(cluster: &Cluster, clock: &Clock) {
    if !cluster.operator {
        return;
    }
    let Some(report) = report(cluster, clock) else {
        return;
    };
    let rv = {
        let mut store = cluster.store();
        store.put(Res::FluxReport, report, None);
        store.resource_version()
    };
    cluster.notify(rv);
}

/// Installs the operator's objects on a cluster that has it.
pub fn install(cluster: &Cluster, clock: &Clock, every: Duration) {
    if !cluster.operator {
        return;
    }
    if let Some(instance) = instance(cluster, clock, every) {
        cluster.store().put(Res::FluxInstance, instance, None);
    }
    refresh(cluster, clock);
}
