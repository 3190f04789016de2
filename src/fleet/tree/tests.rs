use std::collections::HashMap;

use serde_json::{Value, json};

use super::walk::{MAX_READS, grow};
use super::*;
use crate::fleet::trace::walk::Get;

/// A cluster in memory: objects by path, lists by path without the query.
#[derive(Default)]
struct Cluster {
    objects: HashMap<String, Value>,
    asked: Vec<String>,
}

impl Cluster {
    fn with(mut self, key: &ObjectKey, object: Value) -> Cluster {
        self.objects.insert(self.flux_path(key), object);
        self
    }

    fn listing(mut self, path: &str, items: Value) -> Cluster {
        self.objects.insert(path.into(), json!({ "items": items }));
        self
    }
}

impl Get for Cluster {
    async fn get(&mut self, path: &str) -> Result<Value, ReadError> {
        self.asked.push(path.to_string());
        let bare = path.split('?').next().unwrap_or(path);
        self.objects.get(bare).cloned().ok_or(ReadError::NotFound)
    }

    fn flux_path(&self, key: &ObjectKey) -> String {
        format!(
            "/apis/{}/v1/namespaces/{}/{}/{}",
            key.kind.group(),
            key.namespace,
            key.kind.plural(),
            key.name
        )
    }
}

fn key(kind: FluxKind, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey {
        kind,
        namespace: namespace.into(),
        name: name.into(),
    }
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn ks(ids: &[&str], ready: &str) -> Value {
    let entries: Vec<Value> = ids.iter().map(|id| json!({"id": id, "v": "v1"})).collect();
    json!({
        "metadata": {"generation": 1},
        "status": {
            "observedGeneration": 1,
            "conditions": [{"type": "Ready", "status": ready, "reason": "x", "message": ""}],
            "inventory": {"entries": entries},
        }
    })
}

fn found(grown: ClusterTree) -> Planted {
    match grown {
        ClusterTree::Found(p) => p,
        ClusterTree::Absent => panic!("absent"),
    }
}

fn real(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/real-flux/trace/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn inventory_ids_are_read_as_kustomize_controller_writes_them() {
    let e = Entry::parse("trace-check_web-config__ConfigMap").unwrap();
    assert_eq!(
        (e.namespace.as_str(), e.name.as_str(), e.group.as_str()),
        ("trace-check", "web-config", "")
    );
    assert_eq!(e.path(), "ConfigMap/trace-check/web-config");
    let ns = Entry::parse("_apps__Namespace").unwrap();
    assert_eq!(ns.path(), "Namespace/apps");
    // kustomize-controller writes a `:` in a name as `__`.
    let role = Entry::parse("_tree__reader_rbac.authorization.k8s.io_ClusterRole").unwrap();
    assert_eq!(role.path(), "ClusterRole/tree:reader");
    let flux = Entry::parse("trace-check_apps_kustomize.toolkit.fluxcd.io_Kustomization").unwrap();
    assert_eq!(
        flux.key(),
        Some(key(FluxKind::Kustomization, "trace-check", "apps"))
    );
    // A Kustomization of another group is not Flux's.
    assert_eq!(
        Entry::parse("a_b_example.com_Kustomization").unwrap().key(),
        None
    );
    for bad in [
        "",
        "a_b",
        "ns_a_b",
        "__g_",
        &format!("a_{}_g_K", "n".repeat(300)),
    ] {
        assert_eq!(Entry::parse(bad), None, "{bad}");
    }
}

#[tokio::test]
async fn a_tree_follows_the_real_kustomizations_inventories() {
    // kustomize-controller v1.9.4: parent applied apps, apps a ConfigMap and a Deployment.
    let parent = key(FluxKind::Kustomization, "trace-check", "parent");
    let apps = key(FluxKind::Kustomization, "trace-check", "apps");
    let mut cluster = Cluster::default()
        .with(&parent, real("kustomization-parent.json"))
        .with(&apps, real("kustomization-apps.json"));
    let root = found(grow(&mut cluster, &parent).await.unwrap());
    assert_eq!(root.health, Some(Health::Ready));
    let paths: Vec<String> = root.children[0]
        .children
        .iter()
        .map(|c| c.entry.path())
        .collect();
    assert_eq!(
        root.children[0].entry.path(),
        "Kustomization/trace-check/apps"
    );
    assert_eq!(root.children[0].health, Some(Health::Ready));
    assert_eq!(
        paths,
        [
            "ConfigMap/trace-check/web-config",
            "Deployment/trace-check/web"
        ]
    );
    // What the inventory names is taken as written: no GET of the ConfigMap or Deployment.
    assert_eq!(cluster.asked.len(), 2, "{:?}", cluster.asked);
    assert!(!cluster.asked.iter().any(|p| p.contains("secrets")));
}

#[tokio::test]
async fn a_release_s_objects_are_found_by_helm_controller_s_labels() {
    let root = key(FluxKind::Kustomization, "flux-system", "apps");
    let release = key(FluxKind::HelmRelease, "apps", "podinfo");
    let mut cluster = Cluster::default()
        .with(
            &root,
            ks(&["apps_podinfo_helm.toolkit.fluxcd.io_HelmRelease"], "True"),
        )
        .with(
            &release,
            json!({"metadata": {"name": "podinfo", "namespace": "apps"},
                   "spec": {"targetNamespace": "web"}, "status": {}}),
        )
        .listing(
            "/apis/apps/v1/namespaces/web/deployments",
            json!([{"metadata": {"name": "podinfo"}}]),
        )
        .listing(
            "/api/v1/namespaces/web/services",
            json!([{"metadata": {"name": "podinfo"}}, {"metadata": {}}]),
        );
    let tree = found(grow(&mut cluster, &root).await.unwrap());
    let under: Vec<String> = tree.children[0]
        .children
        .iter()
        .map(|c| c.entry.path())
        .collect();
    assert_eq!(under, ["Service/web/podinfo", "Deployment/web/podinfo"]);
    let listed = cluster
        .asked
        .iter()
        .find(|p| p.contains("deployments"))
        .unwrap();
    assert!(
        listed.contains(
            "labelSelector=helm.toolkit.fluxcd.io%2Fname%3Dpodinfo%2Chelm.toolkit.fluxcd.io%2Fnamespace%3Dapps"
        ),
        "{listed}"
    );
    assert!(!cluster.asked.iter().any(|p| p.contains("secrets")));
}

#[tokio::test]
async fn loops_missing_objects_and_self_application_are_said() {
    let root = key(FluxKind::Kustomization, "flux-system", "flux-system");
    let a = key(FluxKind::Kustomization, "flux-system", "a");
    let b = key(FluxKind::Kustomization, "flux-system", "b");
    let ids = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .map(|n| format!("flux-system_{n}_kustomize.toolkit.fluxcd.io_Kustomization"))
            .collect()
    };
    let (top, under_a, under_b) = (ids(&["a", "flux-system", "gone"]), ids(&["b"]), ids(&["a"]));
    let mut cluster = Cluster::default()
        .with(&root, ks(&refs(&top), "True"))
        .with(&a, ks(&refs(&under_a), "False"))
        .with(&b, ks(&refs(&under_b), "True"));
    let tree = found(grow(&mut cluster, &root).await.unwrap());
    let [a, gone] = &tree.children[..] else {
        panic!("{tree:?}")
    };
    assert_eq!(a.health, Some(Health::Failed));
    // b applies a again: a loop, not followed.
    assert_eq!(a.children[0].children[0].stop, Some(Stop::Loop));
    // A bootstrapped Kustomization in its own inventory: left out, as `flux tree` does.
    assert_eq!(gone.entry.path(), "Kustomization/flux-system/gone");
    assert!(gone.missing);
    // The cluster without the root.
    let absent = key(FluxKind::Kustomization, "flux-system", "none");
    assert_eq!(
        grow(&mut cluster, &absent).await.unwrap(),
        ClusterTree::Absent
    );
}

#[tokio::test]
async fn a_chain_of_kustomizations_stops_at_its_bounds() {
    let name = |i: usize| format!("k{i}");
    let mut cluster = Cluster::default();
    for i in 0..MAX_READS + 4 {
        let next = format!(
            "flux-system_{}_kustomize.toolkit.fluxcd.io_Kustomization",
            name(i + 1)
        );
        cluster = cluster.with(
            &key(FluxKind::Kustomization, "flux-system", &name(i)),
            ks(&[&next], "True"),
        );
    }
    let root = key(FluxKind::Kustomization, "flux-system", "k0");
    let mut node = &found(grow(&mut cluster, &root).await.unwrap());
    let mut depth = 0;
    while let Some(child) = node.children.first() {
        node = child;
        depth += 1;
    }
    assert_eq!(node.stop, Some(Stop::TooDeep));
    assert_eq!(depth, crate::fleet::trace::MAX_DEPTH + 1);
}

/// A node as the test sees it: depth, path, on, ready, without.
type Seen = (usize, String, usize, Option<usize>, Vec<String>);

fn planted(path: &str, health: Option<Health>, children: Vec<Planted>) -> Planted {
    let entry = Entry::parse(path).unwrap();
    Planted {
        health: health.or(entry.flux().map(|_| Health::Ready)),
        entry,
        missing: false,
        stop: None,
        children,
    }
}

#[test]
fn the_fleet_s_tree_names_the_clusters_that_lack_a_node() {
    let leaf = |id: &str| planted(id, None, Vec::new());
    let tree = |with_cm: bool, health: Health| {
        let mut under = vec![leaf("apps_web_apps_Deployment")];
        if with_cm {
            under.insert(0, leaf("apps_web-config__ConfigMap"));
        }
        let apps = planted(
            "flux-system_apps_kustomize.toolkit.fluxcd.io_Kustomization",
            Some(health),
            under,
        );
        ClusterTree::Found(planted(
            "flux-system_root_kustomize.toolkit.fluxcd.io_Kustomization",
            None,
            vec![apps],
        ))
    };
    let folded = fold(vec![
        ("one".into(), Ok(tree(true, Health::Ready))),
        ("two".into(), Ok(tree(false, Health::Failed))),
        ("three".into(), Ok(tree(true, Health::Ready))),
        ("four".into(), Ok(ClusterTree::Absent)),
        ("five".into(), Err(ReadError::NotFound)),
    ]);
    assert_eq!(folded.clusters, 5);
    assert_eq!(folded.found, ["one", "three", "two"]);
    assert_eq!(folded.absent, ["four"]);
    assert_eq!(folded.unread.len(), 1);
    assert!(folded.differs());
    let seen: Vec<Seen> = folded
        .nodes
        .iter()
        .map(|n| (n.depth, n.entry.path(), n.on, n.ready, n.without.clone()))
        .collect();
    let none = Vec::<String>::new;
    assert_eq!(
        seen,
        [
            (
                0,
                "Kustomization/flux-system/root".into(),
                3,
                Some(3),
                none()
            ),
            (
                1,
                "Kustomization/flux-system/apps".into(),
                3,
                Some(2),
                none()
            ),
            (
                2,
                "ConfigMap/apps/web-config".into(),
                2,
                None,
                vec!["two".into()]
            ),
            (2, "Deployment/apps/web".into(), 3, None, none()),
        ]
    );
    let same = fold(vec![("one".into(), Ok(tree(true, Health::Ready)))]);
    assert!(!same.differs());
}
