//! The benchmarks' fleet of 60,000 objects: 2,000 clusters × 30 in 12 workspaces, the same
//! names on every cluster (as GitOps fleets are), built from the Flux samples; and the change
//! churn and rollouts send. Included by `benches/tui.rs` and `benches/alert.rs`.
#![allow(dead_code)]

use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterInfo, ClusterKey, Connection, FluxSummary, Index, Phase};
use jiff::Timestamp;
use serde_json::Value;

pub const CLUSTERS: usize = 2_000;
pub const OBJECTS: usize = 30;
pub const WORKSPACES: usize = 12;

pub fn sample(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Objects of every kind and health, as the fleet's clusters hold them.
const TEMPLATES: &[&str] = &[
    "gitrepository-ready.yaml",
    "kustomization-ready.yaml",
    "kustomization-ready.yaml",
    "helmrelease-ready.yaml",
    "helmrelease-ready.yaml",
    "helmrepository-ready.yaml",
    "ocirepository-ready.yaml",
    "helmchart-ready.yaml",
    "kustomization-health-check-failed.yaml",
    "helmrelease-install-failed-stalled.yaml",
    "gitrepository-auth-failed.yaml",
    "kustomization-suspended.yaml",
    "kustomization-dependency-not-ready.yaml",
    "imagepolicy-ready.yaml",
    "alert-v1beta3.yaml",
];

/// 60,000 objects; the same names on every cluster (as GitOps fleets are), a few failures that
/// differ per cluster so that triage has many groups as well as big ones.
pub fn fleet() -> Index {
    let templates: Vec<Value> = TEMPLATES.iter().map(|f| sample(f)).collect();
    let mut index = Index::new();
    let now: Timestamp = "2026-11-21T10:00:00Z".parse().unwrap();
    for c in 0..CLUSTERS {
        let name = format!("ws{:02}-cluster-{c:04}", c % WORKSPACES);
        let id = ClusterKey::new(name.as_str());
        index.add_cluster(ClusterInfo {
            server: format!("https://{name}.example.com:6443"),
            ..ClusterInfo::new(&name, &format!("workspace-{:02}", c % WORKSPACES))
        });
        let mut live = Connection::new(Phase::Live);
        live.protocol = Some("HTTP/2");
        index.apply(Event {
            cluster: id.clone(),
            at: now,
            change: Change::Connection(live),
        });
        for o in 0..OBJECTS {
            let mut object = templates[o % templates.len()].clone();
            object["metadata"]["name"] = Value::from(format!("app-{o:02}"));
            // A rollout under way: the first workspaces run a newer revision than the rest.
            if object["kind"] == "Kustomization" {
                let generation = 3 - (c % WORKSPACES) / 4;
                let revision = format!("main@sha1:{generation:040x}");
                object["status"]["lastAppliedRevision"] = Value::from(revision.clone());
                object["status"]["lastAttemptedRevision"] = Value::from(revision.clone());
                object["status"]["history"] = serde_json::json!([{
                    "firstReconciled": format!("2026-11-{:02}T10:00:00Z", 10 + generation),
                    "metadata": {"revision": revision},
                }]);
            }
            // Those waiting on a dependency wait on app-08, which fails: root-cause triage has
            // a root holding two objects back on every cluster.
            if o % templates.len() == 12 {
                object["spec"]["dependsOn"] = serde_json::json!([{"name": "app-08"}]);
            }
            if o % templates.len() == 8 && c % 50 == 0 {
                object["status"]["conditions"][0]["message"] =
                    Value::from(format!("health check failed on {name}: timeout"));
            }
            let summary = FluxSummary::from_object(&object).unwrap();
            index.apply(Event {
                cluster: id.clone(),
                at: now,
                change: Change::Applied(summary),
            });
        }
    }
    index
}

/// A Kustomization of cluster `c` moving to another revision: what churn and rollouts send.
pub fn change(c: usize, generation: usize) -> Event {
    let mut object = sample("kustomization-ready.yaml");
    object["metadata"]["name"] = Value::from("app-01");
    let revision = format!("main@sha1:{generation:040x}");
    object["status"]["lastAppliedRevision"] = Value::from(revision.clone());
    object["status"]["lastAttemptedRevision"] = Value::from(revision.clone());
    object["status"]["history"] = serde_json::json!([{
        "firstReconciled": "2026-11-21T09:00:00Z",
        "metadata": {"revision": revision},
    }]);
    Event {
        cluster: ClusterKey::new(format!("ws{:02}-cluster-{c:04}", c % WORKSPACES)),
        at: "2026-11-21T10:00:00Z".parse().unwrap(),
        change: Change::Applied(FluxSummary::from_object(&object).unwrap()),
    }
}
