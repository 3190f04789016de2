//! `fluxfleet trace` on the simulator's story fleet: every copy of the `apps` Deployment traced
//! to the Kustomizations that applied it, folded by chain, and the copies that break the
//! pattern — applied by another Kustomization, by hand, or at another revision — named exactly
//! as `/sim/truth` says them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::{BTreeMap, BTreeSet};

use fluxfleet_sim::{Scenario, TruthCluster};
use serde_json::Value;

/// A chain as (applier, revision) from the Deployment up; empty: by hand.
type Appliers = Vec<(String, Option<String>)>;

/// The chain the simulator says each cluster's copy has.
fn truth_chains(truth: &[TruthCluster]) -> BTreeMap<String, Appliers> {
    let mut out = BTreeMap::new();
    for cluster in truth.iter().filter(|c| !c.management) {
        let ks = |name: &str| {
            cluster.objects.iter().find(|o| {
                o.kind == "Kustomization" && o.namespace == "flux-system" && o.name == name
            })
        };
        let Some(apps) = ks("apps") else { continue };
        let workload = apps.workload.as_ref().expect("apps deploys a workload");
        let root = (
            "Kustomization flux-system/flux-system".to_string(),
            ks("flux-system").unwrap().applied.clone(),
        );
        let chain = match workload.applied_by.as_deref() {
            None => Vec::new(),
            Some("Kustomization flux-system/apps") => vec![
                (
                    "Kustomization flux-system/apps".to_string(),
                    apps.applied.clone(),
                ),
                root,
            ],
            Some(other) => {
                assert_eq!(other, "Kustomization flux-system/flux-system");
                vec![root]
            }
        };
        out.insert(cluster.name.clone(), chain);
    }
    out
}

/// `fluxfleet trace ARGS -o json` on the simulated fleet: its exit code, JSON and stderr.
async fn trace(sim: &common::Sim, args: &[&str]) -> (Option<i32>, Value, String) {
    let out = common::fluxfleet()
        .arg("trace")
        .args(args)
        .args(["-o", "json", "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let traced = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    (out.status.code(), traced, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_names_exactly_the_copies_whose_chain_differs() {
    let sim = common::start_with(|c| {
        c.clusters = 22;
        c.workspaces = 3;
        c.scenario = Scenario::Story;
    })
    .await;
    let truth = sim.handle.truth();
    let expected = truth_chains(&truth);
    let by_hand: Vec<&String> = expected
        .iter()
        .filter(|(_, c)| c.is_empty())
        .map(|(n, _)| n)
        .collect();
    assert!(!by_hand.is_empty(), "the story has a copy applied by hand");

    let (code, traced, stderr) = trace(&sim, &["deploy", "apps", "-n", "apps"]).await;
    assert_eq!(traced["kind"], "Deployment");
    // The story's clusters that are down are named as not read, with why; the others traced.
    let unread: BTreeSet<String> = traced["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["cluster"].as_str().unwrap().to_string())
        .collect();
    // The story's two unreachable clusters, and only they.
    let down = unread.clone();
    assert!(down.len() <= 2, "{stderr}");
    for u in traced["unread"].as_array().unwrap() {
        assert_eq!(u["error"]["reason"], "unreachable", "{u}");
    }
    // Some not read: 4 before 9, as the lowest code wins.
    let expected_code = if down.is_empty() { 9 } else { 4 };
    assert_eq!(code, Some(expected_code), "{stderr}");
    let mut expected = expected;
    expected.retain(|cluster, _| !down.contains(cluster));

    // Each shape's clusters are exactly those the truth gives one chain.
    let mut truth_groups: BTreeMap<Vec<(String, Option<String>)>, BTreeSet<String>> =
        BTreeMap::new();
    for (cluster, chain) in &expected {
        truth_groups
            .entry(chain.clone())
            .or_default()
            .insert(cluster.clone());
    }
    let shapes = traced["shapes"].as_array().unwrap();
    let found: Vec<(Appliers, BTreeSet<String>)> = shapes
        .iter()
        .map(|s| {
            let chain = s["shape"]["appliers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        format!(
                            "{} {}/{}",
                            a["kind"].as_str().unwrap(),
                            a["namespace"].as_str().unwrap(),
                            a["name"].as_str().unwrap()
                        ),
                        a["revision"].as_str().map(str::to_string),
                    )
                })
                .collect();
            let clusters = s["clusters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_string())
                .collect();
            (chain, clusters)
        })
        .collect();
    let found_groups: BTreeMap<_, _> = found.iter().cloned().collect();
    assert_eq!(found_groups, truth_groups);
    // The majority first; a copy by hand said as such.
    let most = truth_groups.values().map(BTreeSet::len).max().unwrap();
    assert_eq!(found[0].1.len(), most);
    let unmanaged = shapes
        .iter()
        .find(|s| s["shape"]["appliers"] == serde_json::json!([]))
        .unwrap();
    assert!(
        unmanaged["says"]
            .as_str()
            .unwrap()
            .ends_with("not managed by Flux")
    );
    // Every copy's own chain: the Deployment itself, found where the truth has it.
    for shape in shapes {
        for copy in shape["copies"].as_array().unwrap() {
            assert_eq!(copy["objects"][0]["name"], "apps");
        }
    }

    // Summarized, with room to open one cluster at a time: each is reached over a connection
    // of its own for the trace, and answers the same chains (opening them would close all but
    // the last again before it was read).
    let config = sim.dir.path().join("one-warm.toml");
    std::fs::write(&config, "[engine]\nwarm_clusters = 1\n").unwrap();
    let summarized = common::fluxfleet()
        .env("FLUXFLEET_CONFIG", &config)
        .args(["trace", "deploy", "apps", "-n", "apps", "-o", "json"])
        .args(["--watch-mode", "summary", "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    let summarized: Value = serde_json::from_slice(&summarized.stdout).unwrap();
    let clusters_of = |traced: &Value| -> Vec<Value> {
        traced["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["clusters"].clone())
            .collect()
    };
    assert_eq!(clusters_of(&summarized), clusters_of(&traced));
    let unread_of = |traced: &Value| -> Vec<Value> {
        let unread = traced["unread"].as_array().unwrap();
        unread.iter().map(|u| u["cluster"].clone()).collect()
    };
    assert_eq!(unread_of(&summarized), unread_of(&traced));

    // The MCP tool answers the same shapes, a page at a time.
    let client = common::mcp::connect(sim.dir.path(), &[]).await;
    let asked =
        serde_json::json!({ "kind": "deploy", "name": "apps", "namespace": "apps", "limit": 1 });
    let mut through_mcp = Vec::new();
    let mut args = asked.clone();
    loop {
        let page = common::mcp::call(&client, "trace", args.clone())
            .await
            .unwrap();
        assert_eq!(page["diverges"], true);
        through_mcp.extend(
            page["shapes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["clusters"].clone()),
        );
        match page["page"]["nextCursor"].as_str() {
            Some(next) => args["cursor"] = next.into(),
            None => break,
        }
    }
    client.cancel().await.unwrap();
    let through_cli: Vec<Value> = shapes.iter().map(|s| s["clusters"].clone()).collect();
    assert_eq!(through_mcp, through_cli);

    // The TUI: `w` on a cluster's apps Kustomization reads its Deployment, `T` traces that
    // on every cluster — the same chains, the same first clusters.
    let (config, inventory) = common::tui::fleet(&sim);
    let all = inventory.clusters.len();
    let (mut person, app, _) = common::tui::session(config, inventory, None, None);
    let on = expected
        .iter()
        .find(|(_, c)| c.len() == 2)
        .unwrap()
        .0
        .clone();
    let chains = shapes.len();
    let firsts: Vec<String> = shapes
        .iter()
        .map(|s| s["clusters"][0].as_str().unwrap().to_string())
        .collect();
    let found_on: usize = shapes
        .iter()
        .map(|s| s["clusters"].as_array().unwrap().len())
        .sum();
    let drive = async {
        person
            .sees("every cluster answered", |s| {
                s.contains(&format!("/{all} live"))
            })
            .await;
        person.command(&format!("cluster {on}"));
        person.press(crossterm::event::KeyCode::Char('/'));
        person.type_text("Kustomization flux-system/apps");
        person.press(crossterm::event::KeyCode::Enter);
        let one = format!("Flux objects on {on} (1)");
        person.sees(&one, |s| s.contains(&one)).await;
        person.press(crossterm::event::KeyCode::Enter);
        person
            .sees("its detail", |s| s.contains("press e for the events"))
            .await;
        person.press(crossterm::event::KeyCode::Char('w'));
        person
            .sees("its workloads", |s| {
                s.contains("workloads · what broke inside")
            })
            .await;
        person.press(crossterm::event::KeyCode::Char('T'));
        let header = format!("on {found_on} of {all} clusters — {chains} chains");
        let screen = person.sees(&header, |s| s.contains(&header)).await;
        assert!(
            screen.contains("where Deployment apps/apps comes from"),
            "{screen}"
        );
        for first in &firsts {
            assert!(screen.contains(first.as_str()), "{first}: {screen}");
        }
        person.press(crossterm::event::KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();

    // A pod of it leads up through its owners to the same Kustomization.
    let cluster = expected.iter().find(|(_, c)| c.len() == 2).unwrap().0;
    let client = common::client(&sim.handle.files.fleet, cluster).await;
    let pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::namespaced(client, "apps")
        .list(&kube::api::ListParams::default().labels("app.kubernetes.io/name=apps"))
        .await
        .unwrap();
    let pod = pods.items[0].metadata.name.clone().unwrap();
    let (code, traced, stderr) =
        trace(&sim, &["pod", &pod, "-n", "apps", "--cluster", cluster]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let shape = &traced["shapes"][0]["shape"];
    assert_eq!(shape["owners"], serde_json::json!(["Pod", "ReplicaSet"]));
    assert_eq!(shape["applied"]["kind"], "Deployment");
    assert_eq!(shape["appliers"][0]["name"], "apps");
}
