//! `fluxfleet tree`'s walk replayed on what the real controllers wrote
//! (`tests/fixtures/real-flux/tree/`: kustomize-controller v1.9.4 and helm-controller v1.6.3 on
//! kube-apiserver v1.35.4 — a Kustomization applying two Kustomizations, HelmReleases and a
//! HelmRepository) beside what `flux tree ks` v2.9.4 printed at the same moment: the same nodes
//! at the same depths in the same order, but where `flux tree` lists what a failed release's
//! manifest names and the API server never created (fluxfleet finds a release's objects on the
//! cluster, by helm-controller's labels; `flux tree` reads Helm's storage Secret, which
//! fluxfleet never reads).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use std::collections::BTreeMap;

use fluxfleet::fleet::read::ReadError;
use fluxfleet::fleet::trace::walk::Get;
use fluxfleet::fleet::tree::walk::grow;
use fluxfleet::fleet::tree::{ClusterTree, fold};
use fluxfleet::fleet::{FluxKind, ObjectKey};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real-flux/tree");

/// One moment of the cluster: the objects as they were, by (plural, namespace, name).
struct Moment {
    objects: BTreeMap<(String, String, String), Value>,
    asked: Vec<String>,
}

fn plural(kind: &str) -> &'static str {
    match kind {
        "Kustomization" => "kustomizations",
        "HelmRelease" => "helmreleases",
        "HelmRepository" => "helmrepositories",
        "ConfigMap" => "configmaps",
        "Service" => "services",
        "Deployment" => "deployments",
        "ServiceAccount" => "serviceaccounts",
        "Namespace" => "namespaces",
        "CustomResourceDefinition" => "customresourcedefinitions",
        other => panic!("no fixture of kind {other}"),
    }
}

impl Moment {
    fn of(files: &[&str]) -> Moment {
        let mut objects = BTreeMap::new();
        for file in files {
            let text = std::fs::read_to_string(format!("{DIR}/{file}")).unwrap();
            let object: Value = serde_json::from_str(&text).unwrap();
            let field = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
            let key = (
                plural(field("/kind")).to_string(),
                field("/metadata/namespace").to_string(),
                field("/metadata/name").to_string(),
            );
            objects.insert(key, object);
        }
        Moment {
            objects,
            asked: Vec::new(),
        }
    }
}

impl Get for Moment {
    async fn get(&mut self, path: &str) -> Result<Value, ReadError> {
        self.asked.push(path.to_string());
        assert!(!path.contains("/secrets"), "asked for a Secret: {path}");
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let parts: Vec<&str> = path.split('/').collect();
        if let Some(selector) = query
            .split('&')
            .find_map(|q| q.strip_prefix("labelSelector="))
        {
            // A list by labels: `[..., "namespaces", ns, plural]` or a cluster-scoped plural.
            let (namespace, plural) = match parts[..] {
                [.., "namespaces", ns, plural] => (ns, plural),
                [.., plural] => ("", plural),
                _ => panic!("{path}"),
            };
            let selector = selector.replace("%2F", "/").replace("%3D", "=");
            let wanted: Vec<(&str, &str)> = selector
                .split("%2C")
                .map(|kv| kv.split_once('=').unwrap())
                .collect();
            let items: Vec<Value> = self
                .objects
                .iter()
                .filter(|((p, ns, _), _)| p == plural && ns == namespace)
                .filter(|(_, o)| {
                    wanted
                        .iter()
                        .all(|(k, v)| o["metadata"]["labels"][k].as_str() == Some(v))
                })
                .map(|(_, o)| o.clone())
                .collect();
            return Ok(serde_json::json!({ "items": items }));
        }
        let [.., "namespaces", namespace, plural, name] = parts[..] else {
            panic!("a walk asked {path}");
        };
        let key = (plural.to_string(), namespace.to_string(), name.to_string());
        self.objects.get(&key).cloned().ok_or(ReadError::NotFound)
    }

    fn flux_path(&self, key: &ObjectKey) -> String {
        let version = match key.kind {
            FluxKind::HelmRelease => "v2",
            _ => "v1",
        };
        format!(
            "/apis/{}/{version}/namespaces/{}/{}/{}",
            key.kind.group(),
            key.namespace,
            key.kind.plural(),
            key.name
        )
    }
}

/// `flux tree`'s lines as (depth, `Kind/namespace/name`): four characters a level.
fn printed(file: &str) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(format!("{DIR}/{file}")).unwrap();
    text.lines()
        .take_while(|l| !l.is_empty())
        .map(|line| {
            let at = line
                .char_indices()
                .find(|(_, c)| c.is_ascii_alphabetic())
                .map(|(i, _)| i)
                .unwrap();
            let depth = line[..at].chars().count() / 4;
            (depth, line[at..].to_string())
        })
        .collect()
}

/// The tree fluxfleet grows at `moment`, as (depth, path).
async fn grown(moment: &mut Moment) -> Vec<(usize, String)> {
    let root = ObjectKey::new(FluxKind::Kustomization, "tree-check", "parent");
    let answer = grow(moment, &root).await;
    assert!(matches!(answer, Ok(ClusterTree::Found(_))), "{answer:?}");
    let tree = fold(vec![("real".into(), answer)]);
    tree.nodes
        .iter()
        .map(|n| (n.depth, n.entry.path()))
        .collect()
}

#[tokio::test]
async fn a_tree_is_what_flux_tree_printed_of_the_same_moment() {
    let mut moment = Moment::of(&[
        "kustomization-parent.json",
        "kustomization-apps.json",
        "kustomization-infra.json",
        "helmrelease-podinfo.json",
        "helmrepository-charts.json",
        "configmap-tree-check-tree-check-podinfo-config.json",
        "service-tree-check-tree-check-podinfo.json",
        "deployment-tree-check-tree-check-podinfo.json",
    ]);
    assert_eq!(grown(&mut moment).await, printed("flux-tree-parent.txt"));
    // The inventories are taken as written: no object they name is read, but the Flux ones.
    assert!(
        moment
            .asked
            .iter()
            .all(|p| p.contains("toolkit.fluxcd.io") || p.contains("labelSelector=")),
        "{:?}",
        moment.asked
    );
}

/// The four-release moment: `broken`'s install failed at a ConfigMap the API server refused
/// (`Bad_Name_broken`), `elsewhere` installs into another namespace, `withcrd` installs a CRD
/// from its chart's crds/.
fn four_releases() -> Moment {
    Moment::of(&[
        "kustomization-parent-final.json",
        "kustomization-apps-final.json",
        "helmrelease-broken-final.json",
        "helmrelease-elsewhere.json",
        "helmrelease-podinfo-final.json",
        "helmrelease-withcrd.json",
        "helmrepository-charts-final.json",
        "configmap-tree-check-broken-ok.json",
        "configmap-tree-target-tree-target-elsewhere-config.json",
        "service-tree-target-tree-target-elsewhere.json",
        "deployment-tree-target-tree-target-elsewhere.json",
        "configmap-tree-check-tree-check-podinfo-config-final.json",
        "service-tree-check-tree-check-podinfo-final.json",
        "deployment-tree-check-tree-check-podinfo-final.json",
        "configmap-tree-check-withcrd-settings.json",
        "customresourcedefinition-cluster-widgets.tree.example.com.json",
    ])
}

#[tokio::test]
async fn a_release_s_objects_are_its_inventory_as_flux_tree_reads_its_manifest() {
    // helm-controller v1.6.3 keeps the manifest's objects in the release's inventory, the one
    // the API server refused too: the same lines as flux tree, and no list.
    let mut moment = four_releases();
    assert_eq!(
        grown(&mut moment).await,
        printed("flux-tree-parent-final.txt")
    );
    assert!(!moment.asked.iter().any(|p| p.contains("labelSelector")));
}

#[tokio::test]
async fn without_an_inventory_a_release_is_what_the_cluster_holds() {
    // An older helm-controller keeps no inventory: the objects are found by its labels, the
    // refused one not among them.
    let mut moment = four_releases();
    for ((plural, _, _), object) in moment.objects.iter_mut() {
        if plural == "helmreleases" {
            object["status"]
                .as_object_mut()
                .unwrap()
                .remove("inventory");
        }
    }
    let mut flux = printed("flux-tree-parent-final.txt");
    let never_created = (2, "ConfigMap/tree-check/Bad_Name_broken".to_string());
    assert!(flux.contains(&never_created));
    flux.retain(|line| *line != never_created);
    assert_eq!(grown(&mut moment).await, flux);
}
