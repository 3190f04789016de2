//! Which Flux kinds a cluster serves, and at which version — chosen per kind, not per group: a
//! group's preferred version can lack a kind (notification v1 has Receiver but not Alert; old
//! source groups prefer v1 while HelmRepository is still v1beta2). FACTS §1.1.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

use futures::future::join_all;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList;
use serde::Deserialize;

use crate::k8s::wire::api::{self, Http, Reason, Trouble};

use crate::fleet::{FluxKind, ServedKind, SharedText, compare_versions};

/// What a cluster serves that fluxfleet reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Discovered {
    /// The wanted Flux kinds it serves, each at its best version: the list every cluster that
    /// serves the same shares.
    pub served: Arc<[ServedKind]>,
    /// The Flux Operator's group (`fluxcd.controlplane.io/v1`, FluxReport and FluxInstance) is
    /// served.
    pub operator: bool,
    /// The HTTP version the server answered with.
    pub protocol: http::Version,
}

/// The Flux Operator's API group; it has served only `v1` since v0.10 (FACTS §1).
pub const OPERATOR_GROUP: &str = "fluxcd.controlplane.io";

/// Aggregated discovery first (one answer with every group's resources, Kubernetes 1.30+), else
/// the plain group list; kubectl asks the same way.
const ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                      application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,\
                      application/json";

/// `/apis` as either answer: an `APIGroupDiscoveryList` (its `items`) or an `APIGroupList`
/// (its `groups`).
#[derive(Deserialize)]
struct Apis {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    groups: Vec<Group>,
    #[serde(default)]
    items: Vec<DiscoveredGroup>,
}

#[derive(Deserialize)]
struct Group {
    name: String,
    #[serde(default)]
    versions: Vec<GroupVersion>,
}

#[derive(Deserialize)]
struct GroupVersion {
    version: String,
}

#[derive(Deserialize)]
struct DiscoveredGroup {
    metadata: Named,
    #[serde(default)]
    versions: Vec<DiscoveredVersion>,
}

#[derive(Deserialize)]
struct Named {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct DiscoveredVersion {
    version: String,
    #[serde(default)]
    resources: Vec<DiscoveredResource>,
}

#[derive(Deserialize)]
struct DiscoveredResource {
    #[serde(rename = "responseKind")]
    response_kind: Option<ResponseKind>,
}

#[derive(Deserialize)]
struct ResponseKind {
    #[serde(default)]
    kind: String,
}

/// Asks the server which Flux kinds it serves at which versions: with aggregated discovery in
/// one request; from an older server, the group list and then the resource list of every
/// version of every Flux group that holds a wanted kind.
pub async fn discover(http: &Http, wanted: &[FluxKind]) -> Result<Discovered, Trouble> {
    let (apis, protocol) = api::get_json_accepting::<Apis>(http, "/apis", Some(ACCEPT)).await?;
    let groups: BTreeSet<&str> = wanted.iter().map(|k| k.group()).collect();
    let mut resources: Vec<(String, String, String)> = Vec::new();
    let operator = if apis.kind == "APIGroupDiscoveryList" {
        for group in apis
            .items
            .iter()
            .filter(|g| groups.contains(g.metadata.name.as_str()))
        {
            for version in &group.versions {
                for kind in version
                    .resources
                    .iter()
                    .filter_map(|r| r.response_kind.as_ref())
                {
                    resources.push((
                        group.metadata.name.clone(),
                        version.version.clone(),
                        kind.kind.clone(),
                    ));
                }
            }
        }
        apis.items.iter().any(|g| {
            g.metadata.name == OPERATOR_GROUP && g.versions.iter().any(|v| v.version == "v1")
        })
    } else {
        resources = legacy(http, &apis.groups, &groups).await?;
        apis.groups
            .iter()
            .any(|g| g.name == OPERATOR_GROUP && g.versions.iter().any(|v| v.version == "v1"))
    };
    let found: Vec<(&str, &str, &str)> = resources
        .iter()
        .map(|(g, v, k)| (g.as_str(), v.as_str(), k.as_str()))
        .collect();
    Ok(Discovered {
        served: ServedKind::shared(choose(&found, wanted)),
        operator,
        protocol,
    })
}

/// The kinds of every version of `wanted` groups, one resource list each.
async fn legacy(
    http: &Http,
    listed: &[Group],
    wanted: &BTreeSet<&str>,
) -> Result<Vec<(String, String, String)>, Trouble> {
    let versions: Vec<(&str, &str)> = listed
        .iter()
        .filter(|g| wanted.contains(g.name.as_str()))
        .flat_map(|g| {
            g.versions
                .iter()
                .map(move |v| (g.name.as_str(), v.version.as_str()))
        })
        .collect();
    let lists = join_all(versions.iter().map(|(group, version)| async move {
        let path = format!("/apis/{group}/{version}");
        (
            group,
            version,
            api::get_json::<APIResourceList>(http, &path).await,
        )
    }))
    .await;
    let mut resources = Vec::new();
    for (group, version, result) in lists {
        match result {
            Ok((list, _)) => {
                for r in list.resources.into_iter().filter(|r| !r.name.contains('/')) {
                    resources.push((group.to_string(), version.to_string(), r.kind));
                }
            }
            // A version listed in /apis but gone by now (a CRD being updated): skip it.
            Err(trouble) if trouble.reason() == Some(Reason::NotFound) => {}
            Err(trouble) => return Err(trouble),
        }
    }
    Ok(resources)
}

/// For each wanted kind, the most preferred version that serves it (kube-aware order).
pub fn choose(found: &[(&str, &str, &str)], wanted: &[FluxKind]) -> Vec<ServedKind> {
    wanted
        .iter()
        .filter_map(|kind| {
            found
                .iter()
                .filter(|(g, _, k)| *g == kind.group() && *k == kind.as_str())
                .map(|(_, v, _)| *v)
                .min_by(|a, b| match compare_versions(a, b) {
                    Ordering::Equal => a.cmp(b),
                    o => o,
                })
                .map(|version| ServedKind {
                    kind: *kind,
                    version: SharedText::read(version),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::FluxRelease;

    /// What a cluster on `release` lists, per FACTS §1.1.
    fn listing(release: FluxRelease) -> Vec<(&'static str, &'static str, &'static str)> {
        FluxKind::ALL
            .iter()
            .flat_map(|k| {
                k.served_versions(release)
                    .iter()
                    .map(move |v| (k.group(), v.version, k.as_str()))
            })
            .collect()
    }

    #[test]
    fn each_kind_gets_its_own_best_version_on_every_release() {
        let wanted = FluxKind::ALL;
        let old = choose(&listing(FluxRelease(0)), &wanted);
        let version = |served: &[ServedKind], kind| {
            served
                .iter()
                .find(|s| s.kind == kind)
                .map(|s| s.version.to_string())
        };
        assert_eq!(
            version(&old, FluxKind::HelmRelease).as_deref(),
            Some("v2beta1")
        );
        assert_eq!(
            version(&old, FluxKind::HelmRepository).as_deref(),
            Some("v1beta2")
        );
        assert_eq!(
            version(&old, FluxKind::GitRepository).as_deref(),
            Some("v1")
        );
        assert_eq!(version(&old, FluxKind::ExternalArtifact), None);
        let new = choose(&listing(FluxRelease::LATEST), &wanted);
        assert_eq!(version(&new, FluxKind::Alert).as_deref(), Some("v1beta3"));
        assert_eq!(version(&new, FluxKind::Receiver).as_deref(), Some("v1"));
        assert_eq!(version(&new, FluxKind::HelmRelease).as_deref(), Some("v2"));
    }

    #[test]
    fn only_wanted_kinds_in_the_requested_order() {
        let wanted = [FluxKind::HelmRelease, FluxKind::Kustomization];
        let served = choose(&listing(FluxRelease::LATEST), &wanted);
        let kinds: Vec<_> = served.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, wanted);
        assert!(choose(&[], &wanted).is_empty());
    }
}
