//! The management cluster: one Cluster API `Cluster` per workload cluster, in its workspace's
//! namespace, with its `<name>-kubeconfig` Secret (FACTS §4.2). Stored as v1beta2, also served as
//! v1beta1 through a conversion like CAPI's webhook.

use base64::Engine;
use serde_json::{Value, json};

use super::clock::Clock;
use super::kubeconfig;
use super::populate::{self, uuid};
use super::resources::Res;
use super::rng::Rng;
use super::world::{Cluster, World};
use std::collections::BTreeMap;
use std::sync::Arc;

fn cond(kind: &str, ok: bool, reason_ok: &str, reason_bad: &str, time: &str) -> Value {
    json!({"type": kind, "status": if ok { "True" } else { "False" }, "reason": if ok { reason_ok } else { reason_bad },
           "message": if ok { "" } else { "Remote connection probe failed" }, "observedGeneration": 2, "lastTransitionTime": time})
}

/// A provisioned v1beta2 Cluster. `reachable` decides Available and RemoteConnectionProbe.
pub fn cluster(
    rng: &mut Rng,
    clock: &Clock,
    name: &str,
    namespace: &str,
    labels: &Value,
    reachable: bool,
) -> Value {
    let created = clock.before_start(86400 * (30 + rng.below(300) as i64));
    let mut all_labels = labels.clone();
    all_labels["cluster.x-k8s.io/cluster-name"] = json!(name);
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, "generation": 2, "uid": uuid(rng),
                     "creationTimestamp": created, "labels": all_labels, "finalizers": ["cluster.cluster.x-k8s.io"]},
        "spec": {
            "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            "controlPlaneEndpoint": {"host": format!("{name}-apiserver.example.net"), "port": 6443},
            "controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane", "name": format!("{name}-control-plane")},
            "infrastructureRef": {"apiGroup": "infrastructure.cluster.x-k8s.io", "kind": "AWSCluster", "name": name},
        },
        "status": {
            "observedGeneration": 2, "phase": "Provisioned",
            "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
            "controlPlane": {"desiredReplicas": 3, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "upToDateReplicas": 3},
            "workers": {"desiredReplicas": 6, "replicas": 6, "readyReplicas": 6, "availableReplicas": 6, "upToDateReplicas": 6},
            "conditions": [
                cond("Available", reachable, "Available", "NotAvailable", &created),
                cond("InfrastructureReady", true, "Ready", "NotReady", &created),
                cond("ControlPlaneInitialized", true, "Initialized", "NotInitialized", &created),
                cond("RemoteConnectionProbe", reachable, "ProbeSucceeded", "ProbeFailed", &created),
                cond("Paused", false, "", "NotPaused", &created),
                cond("Deleting", false, "", "NotDeleting", &created),
            ],
            "deprecated": {"v1beta1": {"conditions": [
                {"type": "Ready", "status": if reachable { "True" } else { "False" }, "lastTransitionTime": created},
                {"type": "ControlPlaneReady", "status": "True", "lastTransitionTime": created},
                {"type": "InfrastructureReady", "status": "True", "lastTransitionTime": created},
            ]}},
        },
    })
}

/// The kubeconfig Secret CAPI writes for a cluster.
pub fn kubeconfig_secret(
    rng: &mut Rng,
    clock: &Clock,
    name: &str,
    namespace: &str,
    kubeconfig: &str,
) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Secret", "type": "cluster.x-k8s.io/secret",
        "metadata": {"name": format!("{name}-kubeconfig"), "namespace": namespace, "uid": uuid(rng),
                     "creationTimestamp": clock.before_start(86400 * 30),
                     "labels": {"cluster.x-k8s.io/cluster-name": name},
                     "ownerReferences": [{"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
                                          "name": format!("{name}-control-plane"), "uid": uuid(rng), "controller": true, "blockOwnerDeletion": true}]},
        "data": {"value": base64::engine::general_purpose::STANDARD.encode(kubeconfig)},
    })
}

/// A Kommander workspace for the namespace `ws`, displayed with a capital (FACTS §4.3).
pub fn kommander_workspace(ws: &str) -> Value {
    let display: String = ws
        .chars()
        .enumerate()
        .map(|(i, c)| if i == 0 { c.to_ascii_uppercase() } else { c })
        .collect();
    json!({
        "apiVersion": "workspaces.kommander.mesosphere.io/v1alpha1", "kind": "Workspace",
        "metadata": {"name": format!("{ws}-workspace"),
                     "annotations": {"kommander.mesosphere.io/display-name": format!("{display} workspace")}},
        "spec": {"namespaceName": ws},
    })
}

/// A joined KommanderCluster referring to the CAPI kubeconfig Secret.
pub fn kommander_cluster(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "kommander.mesosphere.io/v1beta1", "kind": "KommanderCluster",
        "metadata": {"name": name, "namespace": namespace,
                     "annotations": {"kommander.mesosphere.io/display-name": name}},
        "spec": {"kubeconfigRef": {"name": format!("{name}-kubeconfig")},
                 "clusterRef": {"capiCluster": {"name": name}}},
        "status": {"phase": "Joined", "kubernetesVersion": "v1.33.4"},
    })
}

/// The management cluster holding the Cluster API cluster `name`.
fn holder<'w>(world: &'w World, name: &str) -> Option<&'w Arc<Cluster>> {
    let managements = world.clusters.iter().filter(|c| c.management);
    let mut holders = managements.filter(|m| {
        m.store()
            .all()
            .any(|o| o.res == Res::CapiCluster && o.name == name)
    });
    holders.next()
}

/// The management cluster holding `from` gets a new Cluster API cluster `to`: a copy of
/// `from`'s Cluster and kubeconfig Secret (so it reaches the same simulated API server).
pub fn copy_cluster(world: &World, from: &str, to: &str) -> bool {
    let Some(m) = holder(world, from) else {
        return false;
    };
    let rv = {
        let mut store = m.store();
        let found = store
            .all()
            .find(|o| o.res == Res::CapiCluster && o.name == from)
            .map(|o| (o.namespace.clone(), o.value()));
        let Some((ns, mut cluster)) = found else {
            return false;
        };
        let Some(secret) = store.get(Res::Secret, &ns, &format!("{from}-kubeconfig")) else {
            return false;
        };
        let mut secret = secret.value();
        cluster["metadata"]["name"] = serde_json::json!(to);
        cluster["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = serde_json::json!(to);
        secret["metadata"]["name"] = serde_json::json!(format!("{to}-kubeconfig"));
        secret["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = serde_json::json!(to);
        store.put(Res::CapiCluster, cluster, None);
        store.put(Res::Secret, secret, None);
        store.resource_version()
    };
    m.changed.send_modify(|v| *v = rv);
    true
}

/// The management cluster holding `name` forgets it and its Secret.
pub fn remove_cluster(world: &World, name: &str) -> bool {
    let Some(m) = holder(world, name) else {
        return false;
    };
    let rv = {
        let mut store = m.store();
        let ns = store
            .all()
            .find(|o| o.res == Res::CapiCluster && o.name == name)
            .map(|o| o.namespace.clone());
        let Some(ns) = ns else {
            return false;
        };
        store.delete(&(Res::CapiCluster, ns.clone(), name.to_string()));
        store.delete(&(Res::Secret, ns, format!("{name}-kubeconfig")));
        store.resource_version()
    };
    m.changed.send_modify(|v| *v = rv);
    true
}

/// Converts a stored v1beta2 Cluster to v1beta1, as CAPI's conversion webhook does for the fields
/// a client reads (phase, readiness booleans, paused, references, v1beta1 conditions).
pub fn to_v1beta1(mut v: Value) -> Value {
    v["apiVersion"] = json!("cluster.x-k8s.io/v1beta1");
    let status = v.get("status").cloned().unwrap_or(json!({}));
    let init = |k: &str| {
        status
            .pointer(&format!("/initialization/{k}"))
            .cloned()
            .unwrap_or(json!(false))
    };
    let mut s = json!({
        "phase": status.get("phase").cloned().unwrap_or(Value::Null),
        "infrastructureReady": init("infrastructureProvisioned"),
        "controlPlaneReady": init("controlPlaneInitialized"),
        "observedGeneration": status.get("observedGeneration").cloned().unwrap_or(Value::Null),
    });
    if let Some(c) = status.pointer("/deprecated/v1beta1/conditions") {
        s["conditions"] = c.clone();
    }
    s["v1beta2"] = json!({"conditions": status.get("conditions").cloned().unwrap_or(json!([]))});
    v["status"] = s;
    for r in ["controlPlaneRef", "infrastructureRef"] {
        if let Some(obj) = v.pointer_mut(&format!("/spec/{r}")) {
            let group = obj
                .get("apiGroup")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if let Some(m) = obj.as_object_mut() {
                m.remove("apiGroup");
                m.insert("apiVersion".into(), json!(format!("{group}/v1beta2")));
            }
        }
    }
    if v.pointer("/spec/paused").is_none() {
        v["spec"]["paused"] = json!(false);
    }
    v
}

/// The management cluster: a namespace per workspace, a CAPI Cluster and kubeconfig Secret per
/// workload cluster, and its own small Flux setup.
pub fn populate_management(
    world: &World,
    seed: u64,
    objects: usize,
    clock: &Clock,
    urls: &[String],
    ca: &str,
    kommander: bool,
) {
    let managements: Vec<&Arc<Cluster>> = world.clusters.iter().filter(|c| c.management).collect();
    let Some(top) = managements.last().copied() else {
        return;
    };
    let mut rng = Rng::fork(seed, "management");
    for m in &managements {
        populate::populate(m, (seed, None), clock, objects.min(8), 2, 2);
    }
    // Who holds which Cluster: with one management cluster, every workload cluster; nested, the
    // top one holds the even ones and the second management cluster, which holds the odd ones
    // and (a cycle) the top one.
    let mut holdings: Vec<(&Arc<Cluster>, &Arc<Cluster>)> = Vec::new();
    for c in world.workloads() {
        let holder = match managements.as_slice() {
            [mid, _] if c.index % 2 == 1 => *mid,
            _ => top,
        };
        holdings.push((holder, c));
    }
    if let [mid, top] = managements.as_slice() {
        holdings.push((top, mid));
        holdings.push((mid, top));
    }
    for m in &managements {
        let mut store = m.store();
        populate::add_namespaces(
            &mut store,
            clock,
            world
                .workspaces
                .iter()
                .map(String::as_str)
                .chain(["management"]),
        );
        for (_, c) in holdings.iter().filter(|(holder, _)| Arc::ptr_eq(holder, m)) {
            let labels = json!(c.labels.iter().collect::<BTreeMap<_, _>>());
            let cluster = cluster(
                &mut rng,
                clock,
                &c.name,
                &c.workspace,
                &labels,
                !c.faults().unreachable,
            );
            store.put(Res::CapiCluster, cluster, None);
            let entry = kubeconfig::Entry {
                name: &c.name,
                server: &urls[c.index],
                token: &c.admin_token,
                role: "admin",
            };
            let secret = kubeconfig_secret(
                &mut rng,
                clock,
                &c.name,
                &c.workspace,
                &kubeconfig::render(&[entry], ca),
            );
            store.put(Res::Secret, secret, None);
            if kommander {
                store.put(
                    Res::KommanderCluster,
                    kommander_cluster(&c.name, &c.workspace),
                    None,
                );
            }
        }
        if kommander {
            for ws in &world.workspaces {
                store.put(Res::KommanderWorkspace, kommander_workspace(ws), None);
            }
        }
        let rv = store.resource_version();
        drop(store);
        m.notify(rv);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1beta1_view_has_phase_and_ready_booleans() {
        let clock = Clock::new(Some(1_790_000_000));
        let c = cluster(
            &mut Rng::fork(1, ""),
            &clock,
            "prod-1",
            "payments",
            &json!({"env": "prod"}),
            false,
        );
        assert_eq!(c["status"]["conditions"][3]["status"], "False");
        let old = to_v1beta1(c);
        assert_eq!(old["apiVersion"], "cluster.x-k8s.io/v1beta1");
        assert_eq!(old["status"]["phase"], "Provisioned");
        assert_eq!(old["status"]["controlPlaneReady"], true);
        assert_eq!(old["status"]["conditions"][0]["status"], "False");
        assert_eq!(
            old["spec"]["controlPlaneRef"]["apiVersion"],
            "controlplane.cluster.x-k8s.io/v1beta2"
        );
        assert_eq!(
            old["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"],
            "prod-1"
        );
    }
}
