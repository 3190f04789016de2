//! Discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/<group>[/<version>]`),
//! built from what one cluster serves.

use serde_json::{Value, json};

use super::resources::{Served, api_version};
use crate::fleet::{FluxRelease, compare_versions};

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

/// Groups (other than core) in first-seen order, each with its versions sorted kube-aware.
fn groups(served: &[Served]) -> Vec<(&'static str, Vec<&'static str>)> {
    let mut out: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources::served_resources;

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
        assert_eq!(list["groups"].as_array().unwrap().len(), 0);
        assert!(resource_list(&served, "", "v1").is_some());
    }
}
