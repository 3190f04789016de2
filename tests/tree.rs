//! `fluxfleet tree` on the simulator's story fleet: the flux-system Kustomization's tree on every
//! cluster, folded — each node on exactly the clusters whose inventories (read here with a
//! Kubernetes client, one cluster at a time) name it, the nodes some clusters lack named with
//! those clusters — and a HelmRelease's tree from the objects labelled with it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use fluxfleet_sim::Scenario;
use serde_json::Value;

/// `fluxfleet tree ARGS -o json` on the simulated fleet: its exit code and JSON.
async fn tree(sim: &common::Sim, args: &[&str]) -> (Option<i32>, Value) {
    let out = common::fluxfleet()
        .arg("tree")
        .args(args)
        .args(["-o", "json", "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let grown = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code(), grown)
}

async fn get(client: &kube::Client, path: &str) -> Option<Value> {
    let request = http::Request::get(path).body(Vec::new()).unwrap();
    client.request::<Value>(request).await.ok()
}

/// `Kind/namespace/name` of an inventory id, and the Flux path to read when it is a
/// Kustomization or HelmRelease.
fn entry(id: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = id.split('_').collect();
    let [ns, name, group, kind] = parts[..] else {
        panic!("{id}")
    };
    let path = match ns.is_empty() {
        true => format!("{kind}/{name}"),
        false => format!("{kind}/{ns}/{name}"),
    };
    let follow = match (group, kind) {
        ("kustomize.toolkit.fluxcd.io", "Kustomization") => Some(format!(
            "/apis/{group}/v1/namespaces/{ns}/kustomizations/{name}"
        )),
        ("helm.toolkit.fluxcd.io", "HelmRelease") => Some(format!(
            "/apis/{group}/v2/namespaces/{ns}/helmreleases/{name}"
        )),
        _ => None,
    };
    (path, follow)
}

/// Every node of one cluster's tree as the path from the root, read with a client.
async fn read_tree(client: &kube::Client, root: &str, object: Value) -> BTreeSet<Vec<String>> {
    let mut out = BTreeSet::new();
    let mut stack = vec![(vec![root.to_string()], object)];
    out.insert(vec![root.to_string()]);
    while let Some((at, object)) = stack.pop() {
        let kind = object["kind"].as_str().unwrap().to_string();
        let ids: Vec<String> = if kind == "HelmRelease" {
            let (ns, name) = (
                object["metadata"]["namespace"].as_str().unwrap(),
                object["metadata"]["name"].as_str().unwrap(),
            );
            let target = object["spec"]["targetNamespace"].as_str().unwrap_or(ns);
            let selector = format!(
                "helm.toolkit.fluxcd.io%2Fname%3D{name}%2Chelm.toolkit.fluxcd.io%2Fnamespace%3D{ns}"
            );
            let path =
                format!("/apis/apps/v1/namespaces/{target}/deployments?labelSelector={selector}");
            let list = get(client, &path).await.unwrap();
            list["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    format!(
                        "{target}_{}_apps_Deployment",
                        d["metadata"]["name"].as_str().unwrap()
                    )
                })
                .collect()
        } else {
            object["status"]["inventory"]["entries"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|e| e["id"].as_str().unwrap().to_string())
                .collect()
        };
        for id in ids {
            let (path, follow) = entry(&id);
            // A bootstrapped Kustomization applies itself: left out, as `flux tree` does.
            if at.last() == Some(&path) {
                continue;
            }
            let mut below = at.clone();
            below.push(path.clone());
            out.insert(below.clone());
            if let Some(follow) = follow
                && let Some(object) = get(client, &follow).await
            {
                stack.push((below, object));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_is_on_exactly_the_clusters_whose_inventories_name_it() {
    let sim = common::start_with(|c| {
        c.clusters = 22;
        c.workspaces = 3;
        c.scenario = Scenario::Story;
    })
    .await;
    let (code, grown) = tree(&sim, &["ks", "flux-system"]).await;
    let found: Vec<String> = grown["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["cluster"].as_str().unwrap().to_string())
        .collect();
    let unread: BTreeSet<String> = found.into_iter().collect();
    assert!(unread.len() <= 2, "{grown}");
    // Some not read: 4 before 9.
    assert_eq!(code, Some(if unread.is_empty() { 9 } else { 4 }));

    // Each cluster's tree, read here.
    let root = "Kustomization/flux-system/flux-system";
    let mut on: BTreeMap<Vec<String>, BTreeSet<String>> = BTreeMap::new();
    let mut read = 0;
    for cluster in sim.workload_clusters() {
        if unread.contains(&cluster) {
            continue;
        }
        let client = common::client(&sim.handle.files.fleet, &cluster).await;
        let path = "/apis/kustomize.toolkit.fluxcd.io/v1/namespaces/flux-system/kustomizations/flux-system";
        let object = get(&client, path).await.unwrap();
        for node in read_tree(&client, root, object).await {
            on.entry(node).or_default().insert(cluster.clone());
        }
        read += 1;
    }
    assert_eq!(grown["found"], read);

    // The fleet's tree: every node, on the clusters whose trees have it, the parent first.
    let nodes = grown["nodes"].as_array().unwrap();
    let mut at: Vec<String> = Vec::new();
    let mut seen = BTreeMap::new();
    for node in nodes {
        let depth = node["depth"].as_u64().unwrap() as usize;
        at.truncate(depth);
        let (kind, ns, name) = (
            node["kind"].as_str().unwrap(),
            node["namespace"].as_str().unwrap(),
            node["name"].as_str().unwrap(),
        );
        at.push(match ns.is_empty() {
            true => format!("{kind}/{name}"),
            false => format!("{kind}/{ns}/{name}"),
        });
        let clusters = &on[&at];
        assert_eq!(node["on"], clusters.len(), "{at:?}");
        // The clusters that have its parent and not it, by name.
        if depth > 0 {
            let parent = &on[&at[..depth]];
            let without: BTreeSet<String> = parent.difference(clusters).cloned().collect();
            let said: BTreeSet<String> = node["without"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            assert_eq!(said, without, "{at:?}");
        }
        seen.insert(at.clone(), ());
    }
    assert_eq!(
        seen.len(),
        on.len(),
        "every node of every cluster is in the tree"
    );
    // The story's substituted clusters have an internal Ingress the others do not.
    assert_eq!(grown["differs"], true);
    let ingress = nodes
        .iter()
        .find(|n| n["kind"] == "Ingress")
        .expect("an Ingress on some clusters");
    assert!(ingress["on"].as_u64().unwrap() < read as u64);

    // The MCP tool answers the same nodes, a page at a time.
    let client = common::mcp::connect(sim.dir.path(), &[]).await;
    let mut args = serde_json::json!({ "kind": "ks", "name": "flux-system", "limit": 7 });
    let mut through_mcp = Vec::new();
    loop {
        let page = common::mcp::call(&client, "tree", args.clone())
            .await
            .unwrap();
        assert_eq!(page["differs"], true);
        assert_eq!(page["found"], read);
        through_mcp.extend(page["nodes"].as_array().unwrap().iter().cloned());
        match page["page"]["nextCursor"].as_str() {
            Some(next) => args["cursor"] = next.into(),
            None => break,
        }
    }
    let bad = common::mcp::call(
        &client,
        "tree",
        serde_json::json!({"kind": "deploy", "name": "x"}),
    )
    .await
    .unwrap_err();
    assert!(
        bad.to_string()
            .contains("Kustomization (ks) or a HelmRelease (hr)"),
        "{bad}"
    );
    client.cancel().await.unwrap();
    assert_eq!(&through_mcp, nodes);

    // On no cluster read: exit 1, as `flux tree` exits when it finds nothing.
    let one = on.values().next().unwrap().iter().next().unwrap().clone();
    let (code, nowhere) = tree(&sim, &["ks", "nosuch", "--cluster", &one]).await;
    assert_eq!(
        (code, &nowhere["absent"]),
        (Some(1), &serde_json::json!([one]))
    );

    // A HelmRelease's tree: its Deployment, found by helm-controller's labels.
    let (_, podinfo) = tree(&sim, &["hr", "podinfo", "-n", "apps"]).await;
    let under: Vec<&str> = podinfo["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["kind"].as_str().unwrap())
        .collect();
    assert_eq!(under, ["HelmRelease", "Deployment"], "{podinfo}");
    sim.handle.shutdown().await;
}
