//! Discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`),
//! built from what one cluster serves.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};

use super::resources::{Served, api_version};
use crate::facts::{FluxRelease, compare_versions};

/// The Kubernetes version the simulator claims to be.
pub fn version(flux: Option<FluxRelease>) -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "gitVersion": "v1.33.4",
        "gitCommit": "74cdb426e26cd4ba5e8d3be68a4b1ba6bd13a1f4",
        "gitTreeState": "clean",
        "buildDate": "2026-08-12T10:29:41Z",
        "goVersion": "go1.24.6",
        "compiler": "gc",
        "platform": "linux/amd64",
        // Not part of a real server's answer; harmless for clients and handy by hand.
        "fluxfleetSimFlux": flux.map(|r| r.name()),
    })
}

pub fn core_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    })
}

/// A workload kind every cluster serves, read-only, from `workloads.rs` (not the store): in
/// discovery as a real server has them, so that `kubectl get pods,deploy -A`, `kubectl logs`
/// and k9s work against the simulator.
struct Workload {
    group: &'static str,
    plural: &'static str,
    kind: &'static str,
    short_names: &'static [&'static str],
    /// Besides `status`: a pod's `log`.
    log: bool,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        group: "",
        plural: "pods",
        kind: "Pod",
        short_names: &["po"],
        log: true,
    },
    Workload {
        group: "apps",
        plural: "deployments",
        kind: "Deployment",
        short_names: &["deploy"],
        log: false,
    },
    Workload {
        group: "apps",
        plural: "replicasets",
        kind: "ReplicaSet",
        short_names: &["rs"],
        log: false,
    },
    Workload {
        group: "apps",
        plural: "statefulsets",
        kind: "StatefulSet",
        short_names: &["sts"],
        log: false,
    },
    Workload {
        group: "apps",
        plural: "daemonsets",
        kind: "DaemonSet",
        short_names: &["ds"],
        log: false,
    },
    Workload {
        group: "batch",
        plural: "jobs",
        kind: "Job",
        short_names: &[],
        log: false,
    },
    Workload {
        group: "batch",
        plural: "cronjobs",
        kind: "CronJob",
        short_names: &["cj"],
        log: false,
    },
];

const WORKLOAD_VERBS: &[&str] = &["get", "list", "watch"];

/// The workload kinds of `group` at `version` (all are `v1`).
fn workloads(group: &str, version: &str) -> impl Iterator<Item = &'static Workload> {
    let group = group.to_string();
    WORKLOADS
        .iter()
        .filter(move |w| w.group == group && version == "v1")
}

impl Workload {
    /// Its entry in an `APIResourceList`, then its subresources'.
    fn listed(&self) -> Vec<Value> {
        let mut entries = vec![json!({
            "name": self.plural,
            "singularName": self.kind.to_ascii_lowercase(),
            "namespaced": true,
            "kind": self.kind,
            "verbs": WORKLOAD_VERBS,
            "shortNames": self.short_names,
            "categories": ["all"],
        })];
        entries.push(json!({
            "name": format!("{}/status", self.plural),
            "singularName": "",
            "namespaced": true,
            "kind": self.kind,
            "verbs": ["get"],
        }));
        if self.log {
            entries.push(json!({
                "name": format!("{}/log", self.plural),
                "singularName": "",
                "namespaced": true,
                "kind": self.kind,
                "verbs": ["get"],
            }));
        }
        entries
    }

    /// Its entry in aggregated discovery.
    fn aggregated(&self, version: &str) -> Value {
        let kind = json!({"group": self.group, "version": version, "kind": self.kind});
        let mut subresources = vec![json!({
            "subresource": "status", "responseKind": kind, "verbs": ["get"],
        })];
        if self.log {
            subresources.push(json!({
                "subresource": "log",
                "responseKind": {"group": "", "version": "", "kind": "Pod"},
                "verbs": ["get"],
            }));
        }
        json!({
            "resource": self.plural,
            "responseKind": kind,
            "scope": "Namespaced",
            "singularResource": self.kind.to_ascii_lowercase(),
            "verbs": WORKLOAD_VERBS,
            "shortNames": self.short_names,
            "categories": ["all"],
            "subresources": subresources,
        })
    }
}

/// Groups (other than core) in first-seen order, each with its versions sorted kube-aware; the
/// workloads' groups (`apps`, `batch`) last.
fn groups(served: &[Served]) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
    for w in WORKLOADS.iter().filter(|w| !w.group.is_empty()) {
        if !out.iter().any(|(g, _)| *g == w.group) {
            out.push((w.group, vec!["v1"]));
        }
    }
    let workload_groups = out.len();
    for s in served.iter().filter(|s| !s.res.group().is_empty()) {
        let group = s.res.group();
        let idx = match out.iter().position(|(g, _)| *g == group) {
            Some(i) => i,
            None => {
                out.push((group, Vec::new()));
                out.len() - 1
            }
        };
        for v in &s.versions {
            if !out[idx].1.contains(&v.version) {
                out[idx].1.push(v.version);
            }
        }
    }
    for (_, versions) in &mut out {
        versions.sort_by(|a, b| compare_versions(a, b));
    }
    out.rotate_left(workload_groups);
    out
}

fn group_value(group: &str, versions: &[&str]) -> Value {
    let list: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": api_version(group, v), "version": v}))
        .collect();
    // Like the apiextensions discovery controller: the first version after kube-aware sorting.
    let preferred = list.first().cloned().unwrap_or(Value::Null);
    json!({"name": group, "versions": list, "preferredVersion": preferred})
}

pub fn group_list(served: &[Served]) -> Value {
    let groups: Vec<Value> = groups(served)
        .iter()
        .map(|(g, vs)| group_value(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

pub fn group(served: &[Served], name: &str) -> Option<Value> {
    let (g, vs) = groups(served).into_iter().find(|(g, _)| *g == name)?;
    let mut v = group_value(g, &vs);
    v["kind"] = json!("APIGroup");
    v["apiVersion"] = json!("v1");
    Some(v)
}

/// The `APIResourceList` of one group-version, or None when nothing is served there.
pub fn resource_list(served: &[Served], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for s in served
        .iter()
        .filter(|s| s.res.group() == group && s.serves(version))
    {
        let r = s.res;
        resources.push(json!({
            "name": r.plural(),
            "singularName": r.singular(),
            "namespaced": r.namespaced(),
            "kind": r.kind(),
            "verbs": r.verbs(),
            "shortNames": r.short_names(),
            "categories": r.categories(),
        }));
        if r.has_status() {
            resources.push(json!({
                "name": format!("{}/status", r.plural()),
                "singularName": "",
                "namespaced": r.namespaced(),
                "kind": r.kind(),
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    resources.extend(workloads(group, version).flat_map(Workload::listed));
    if resources.is_empty() {
        return None;
    }
    for r in &mut resources {
        for key in ["shortNames", "categories"] {
            if r[key].as_array().is_some_and(Vec::is_empty)
                && let Some(map) = r.as_object_mut()
            {
                map.remove(key);
            }
        }
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": api_version(group, version),
        "resources": resources,
    }))
}

/// The media type of aggregated discovery (`apidiscovery.k8s.io/v2`, GA in Kubernetes 1.30):
/// every group, version and resource in one answer to `GET /apis`.
pub const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether a request's `Accept` asks for [`AGGREGATED`] (as kubectl and client-go do, with the
/// plain `application/json` after it as their fallback).
pub fn wants_aggregated(accept: Option<&str>) -> bool {
    accept.is_some_and(|accept| {
        accept.split(',').any(|t| {
            let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
            t.contains("g=apidiscovery.k8s.io")
                && t.contains("v=v2;")
                && t.ends_with("as=APIGroupDiscoveryList")
        })
    })
}

/// [`aggregated`] as sent, built once per kind of cluster: it depends only on what the cluster
/// serves, which its Flux release and roles decide (an API server keeps it cached too).
pub fn aggregated_bytes(
    served: &[Served],
    flux: Option<FluxRelease>,
    management: bool,
    operator: bool,
) -> bytes::Bytes {
    type Kinds = HashMap<(Option<FluxRelease>, bool, bool), bytes::Bytes>;
    static BUILT: Mutex<Option<Kinds>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    built
        .get_or_insert_with(HashMap::new)
        .entry((flux, management, operator))
        .or_insert_with(|| bytes::Bytes::from(aggregated(served).to_string()))
        .clone()
}

/// The `APIGroupDiscoveryList` of every group (other than core): versions in preference order,
/// each with its resources and their status subresources.
pub fn aggregated(served: &[Served]) -> Value {
    let items: Vec<Value> = groups(served)
        .iter()
        .map(|(group, versions)| aggregated_group(served, group, versions))
        .collect();
    discovery_list(items)
}

/// The core group's `APIGroupDiscoveryList` (`GET /api` asking for aggregated discovery).
pub fn aggregated_core(served: &[Served]) -> Value {
    discovery_list(vec![aggregated_group(served, "", &["v1"])])
}

fn discovery_list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// One group's entry: each version with its resources and their subresources.
fn aggregated_group(served: &[Served], group: &str, versions: &[&str]) -> Value {
    let versions: Vec<Value> = versions
        .iter()
        .map(|version| {
            let resources: Vec<Value> = served
                .iter()
                .filter(|s| s.res.group() == group && s.serves(version))
                .map(|s| {
                    let r = s.res;
                    let kind = json!({"group": group, "version": version, "kind": r.kind()});
                    let mut resource = json!({
                        "resource": r.plural(),
                        "responseKind": kind,
                        "scope": if r.namespaced() { "Namespaced" } else { "Cluster" },
                        "singularResource": r.singular(),
                        "verbs": r.verbs(),
                        "shortNames": r.short_names(),
                        "categories": r.categories(),
                    });
                    if r.has_status() {
                        resource["subresources"] = json!([{
                            "subresource": "status",
                            "responseKind": kind,
                            "verbs": ["get", "patch", "update"],
                        }]);
                    }
                    resource
                })
                .chain(workloads(group, version).map(|w| w.aggregated(version)))
                .collect();
            json!({"version": version, "resources": resources, "freshness": "Current"})
        })
        .collect();
    json!({"metadata": {"name": group}, "versions": versions})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::served_resources;

    #[test]
    fn notification_group_prefers_v1_although_alerts_are_v1beta3_only() {
        let served = served_resources(Some(FluxRelease::LATEST), false, false);
        let g = group(&served, "notification.toolkit.fluxcd.io").unwrap();
        assert_eq!(g["preferredVersion"]["version"], "v1");
        let v1 = resource_list(&served, "notification.toolkit.fluxcd.io", "v1").unwrap();
        let names: Vec<&str> = v1["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert_eq!(names, ["receivers", "receivers/status"]);
        let b3 = resource_list(&served, "notification.toolkit.fluxcd.io", "v1beta3").unwrap();
        assert_eq!(b3["resources"][0]["name"], "alerts");
        assert!(b3["resources"][0].get("shortNames").is_none());
    }

    #[test]
    fn flux_2_0_serves_helmrelease_v2beta1_only() {
        let served = served_resources(Some(FluxRelease(0)), false, false);
        assert!(resource_list(&served, "helm.toolkit.fluxcd.io", "v2").is_none());
        let hr = resource_list(&served, "helm.toolkit.fluxcd.io", "v2beta1").unwrap();
        assert_eq!(hr["resources"][0]["shortNames"], json!(["hr"]));
    }

    #[test]
    fn no_flux_means_no_flux_groups() {
        let served = served_resources(None, false, true);
        let list = group_list(&served);
        let groups: Vec<&str> = list["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        // The workloads' groups only.
        assert_eq!(groups, ["apps", "batch"]);
        assert!(resource_list(&served, "", "v1").is_some());
    }

    #[test]
    fn aggregated_discovery_is_served_to_who_asks_for_v2_and_lists_what_is_served() {
        let kubectl = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                       application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                       application/json";
        assert!(wants_aggregated(Some(kubectl)));
        assert!(!wants_aggregated(Some("application/json")));
        assert!(!wants_aggregated(Some(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        )));
        assert!(!wants_aggregated(None));
        let served = served_resources(Some(FluxRelease(0)), false, false);
        let doc = aggregated(&served);
        let helm = doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["metadata"]["name"] == "helm.toolkit.fluxcd.io")
            .unwrap();
        assert_eq!(helm["versions"][0]["version"], "v2beta1");
        let release = &helm["versions"][0]["resources"][0];
        assert_eq!(release["responseKind"]["kind"], "HelmRelease");
        assert_eq!(release["subresources"][0]["subresource"], "status");
    }
}
