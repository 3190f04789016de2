//! What broke inside, on pods the real Kubernetes control plane made: Deployments, ReplicaSets
//! and a Job that kube-controller-manager v1.35.4 reconciled, pods kube-scheduler v1.35.4 placed
//! (or could not) and kwok v0.8.0 ran through its stages — an image that is not there, a crash
//! loop, an OOM kill, a readiness probe failing, a Job's pods failing, a node selector no node
//! matches, a namespace whose ResourceQuota allows no pod — with the Warning events they wrote
//! (`tests/fixtures/real-flux/workloads`, captured 2026-12-02 from the Kustomizations `shop` and
//! `capped` and the HelmRelease `hello-app`). Each read through the code that reads them from a
//! live cluster, and the verdict a person gets from `fluxfleet workloads`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;

use fluxfleet::fleet::workload::parse;
use fluxfleet::fleet::workload::verdict::Verdict;
use fluxfleet::fleet::workload::{Kind, Workload};
use serde_json::{Value, json};

use crate::real_flux::object as fixture;

/// The pods of `list` that `workload`'s selector matches (its `matchLabels`), as the API
/// server's label selector answers.
fn selected(list: &Value, workload: &Value) -> Value {
    let labels = workload
        .pointer("/spec/selector/matchLabels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let items: Vec<Value> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|pod| {
            !labels.is_empty()
                && labels
                    .iter()
                    .all(|(k, v)| pod.pointer(&format!("/metadata/labels/{k}")) == Some(v))
        })
        .cloned()
        .collect();
    json!({ "items": items })
}

/// Each workload a Kustomization names (its health check's message, then its inventory), read
/// from the namespace's fixtures as `fluxfleet workloads` reads them from the cluster.
fn workloads_of(kustomization: &str, namespace: &str) -> Vec<Workload> {
    let ks = fixture(kustomization);
    let objects = fixture(&format!("workloads/{namespace}-workloads.yaml"));
    let pods = fixture(&format!("workloads/{namespace}-pods.yaml"));
    let events = fixture(&format!("workloads/events-{namespace}.yaml"));
    parse::kustomization_workloads(&ks)
        .into_iter()
        .map(|id| {
            let value = objects["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["kind"] == id.kind.to_string() && o["metadata"]["name"] == id.name)
                .cloned()
                .unwrap_or_else(|| panic!("{id} in the fixtures"));
            let mut w = parse::workload(id.clone(), &value);
            let (found, total, cut) = parse::pods(&selected(&pods, &value));
            w.pods = found;
            w.pods_total = total;
            w.pods_cut = cut;
            let mut about: HashSet<String> =
                w.pods.iter().map(|p| format!("Pod/{}", p.name)).collect();
            about.insert(format!("{}/{}", id.kind, id.name));
            w.events = parse::events(&events, &about, &id.name);
            w
        })
        .collect()
}

fn headlines(workloads: &[Workload]) -> Vec<(String, String)> {
    workloads
        .iter()
        .map(|w| (w.id.to_string(), Verdict::of(w).headline()))
        .collect()
}

#[test]
fn each_pod_failure_is_named_with_its_reason() {
    let said = headlines(&workloads_of("kustomization-shop.yaml", "shop"));
    let expected = [
        // The one the health check named comes first.
        (
            "Deployment/shop/cart",
            "ImagePullBackOff: ghcr.io/example/cart:9.9.9: not found (no such tag or digest)",
        ),
        (
            "Deployment/shop/checkout",
            "CrashLoopBackOff (Error, exit 1)",
        ),
        (
            "Deployment/shop/payments",
            "readiness probe failing: Readiness probe failed: HTTP probe failed with statuscode: 503",
        ),
        // kube-scheduler's own words, without what preemption and resource claims then found.
        (
            "Deployment/shop/reports",
            "Pending, unschedulable: 0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
        ),
        (
            "Deployment/shop/search",
            "CrashLoopBackOff (OOMKilled, exit 137)",
        ),
        ("Deployment/shop/storefront", "healthy"),
        // The job controller's condition once its pods failed past the backoff limit.
        (
            "Job/shop/migrate",
            "Job failed, BackoffLimitExceeded: Job has reached the specified backoff limit",
        ),
    ];
    for (workload, headline) in expected {
        assert!(
            said.iter().any(|(w, h)| w == workload && h == headline),
            "{workload}: {headline:?} in {said:#?}"
        );
    }
    assert_eq!(said[0].0, "Deployment/shop/cart", "{said:#?}");
    assert_eq!(said.len(), expected.len(), "{said:#?}");
    // The deployment controller's verdict on each one that never became available.
    for w in workloads_of("kustomization-shop.yaml", "shop") {
        let stuck = Verdict::of(&w).rollout_stuck;
        let healthy = w.id.name == "storefront" || w.id.kind == Kind::Job;
        assert_eq!(stuck, !healthy, "{}", w.id);
    }
}

#[test]
fn pods_a_quota_forbids_are_named_from_the_replicasets_events() {
    let said = headlines(&workloads_of("kustomization-capped.yaml", "capped"));
    assert_eq!(said.len(), 1, "{said:?}");
    let (workload, headline) = &said[0];
    assert_eq!(workload, "Deployment/capped/batch");
    // The event recorder's "(combined from similar events): " is left out.
    assert!(
        headline.starts_with("pods not created, FailedCreate: Error creating: pods \"batch-")
            && headline.ends_with(
                "is forbidden: exceeded quota: no-pods, requested: pods=1, used: pods=0, limited: pods=0"
            ),
        "{headline}"
    );
}

#[test]
fn a_helm_release_that_timed_out_names_its_crashing_deployment() {
    let hr = fixture("helmrelease-hello-app.yaml");
    let message = hr["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    let named: Vec<String> = parse::named_in(&message)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(named, ["Deployment/default/default-hello-app-app"]);
    let objects = fixture("workloads/default-workloads.yaml");
    let pods = fixture("workloads/default-pods.yaml");
    let id = parse::named_in(&message).remove(0);
    let value = objects["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Deployment" && o["metadata"]["name"] == id.name)
        .cloned()
        .unwrap();
    let mut w = parse::workload(id, &value);
    w.pods = parse::pods(&selected(&pods, &value)).0;
    assert_eq!(
        Verdict::of(&w).headline(),
        "CrashLoopBackOff (Error, exit 1)"
    );
}
