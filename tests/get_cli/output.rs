//! What `get` prints: JSON equal to the simulator's truth with exit codes that say what
//! happened, a table like `flux get`'s with the summary rolled up, and `--watch`'s NDJSON.

use crate::common;

use common::fluxfleet;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

use super::{run, shown_rows, text, truth_rows};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_matches_the_truth_and_exit_codes_say_what_happened() {
    let sim = common::start_with(|c| {
        c.clusters = 6;
        c.faults = fluxfleet_sim::faults::Spec::parse("unreachable=1%").unwrap();
    })
    .await;
    let out = run(&["get", "-o", "json", "--timeout", "20s"], sim.dir.path()).await;
    // One cluster is unreachable: the output is complete for the rest, and the exit code says 4.
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let truth = sim.handle.truth();
    let unreachable = truth
        .iter()
        .find(|c| c.faults.iter().any(|f| f == "unreachable"))
        .unwrap();
    let clusters = doc["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), 6);
    let down = clusters
        .iter()
        .find(|c| c["cluster"] == unreachable.name.as_str())
        .unwrap();
    assert_eq!(down["state"], "unreachable");
    assert!(down["error"].as_str().unwrap().contains("refused"));
    // Printed once: every kind listed, none watched (a watch opened only to be dropped is work
    // for every API server of the fleet).
    let stats = sim.handle.stats();
    for c in truth
        .iter()
        .filter(|c| !c.management && c.name != unreachable.name)
    {
        let asked = &stats["clusters"][&c.name];
        assert!(asked["list"].as_u64().unwrap() > 0, "{}: {asked}", c.name);
        assert_eq!(asked["watch"], 0, "{}: {asked}", c.name);
    }
    // Every reachable cluster running the Flux Operator carries its report; the others none.
    for c in truth
        .iter()
        .filter(|c| !c.management && c.name != unreachable.name)
    {
        let shown = clusters
            .iter()
            .find(|s| s["cluster"] == c.name.as_str())
            .unwrap();
        let report = &shown["report"];
        assert_eq!(report.is_object(), c.operator, "{}: {report}", c.name);
        if c.operator {
            assert!(report["version"].as_str().unwrap().starts_with("v2."));
            assert_eq!(report["components"].as_array().unwrap().len(), 4);
            assert!(report["reconcilers"].as_array().unwrap().len() > 1);
            assert_eq!(report["instance"]["name"], "flux");
        }
    }
    assert!(
        truth.iter().any(|c| c.operator),
        "the simulator runs the operator somewhere"
    );
    assert!(
        text(&out.stderr).contains(&unreachable.name),
        "listed, not silently missing"
    );
    // Every object of the default kinds on the reachable clusters, with the truth's health.
    let expected = truth_rows(
        truth
            .iter()
            .filter(|c| !c.management && c.name != unreachable.name),
    );
    assert_eq!(shown_rows(&doc), expected);

    // Only the reachable clusters, and the fleet has failing objects: --fail-on says 5.
    let cluster_globs: Vec<String> = truth
        .iter()
        .filter(|c| !c.management && c.name != unreachable.name)
        .map(|c| c.name.clone())
        .collect();
    let mut args = vec!["get", "--fail-on", "failing", "-o", "ndjson"];
    for g in &cluster_globs {
        args.extend(["--cluster", g.as_str()]);
    }
    let out = run(&args, sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    for line in text(&out.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["type"], "object");
    }
    // A selection without failures exits 0.
    args.truncate(5);
    args.extend(["--status", "ready", "ks"]);
    for g in &cluster_globs {
        args.extend(["--cluster", g.as_str()]);
    }
    let out = run(&args, sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines = text(&out.stdout);
    assert!(!lines.is_empty());
    for line in lines.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            (v["kind"].as_str(), v["status"].as_str()),
            (Some("Kustomization"), Some("ready"))
        );
    }
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_looks_like_flux_get_and_the_summary_rolls_up() {
    let sim = common::start_with(|c| c.clusters = 4).await;
    let out = run(&["get", "hr"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        [
            "WORKSPACE",
            "CLUSTER",
            "NAMESPACE",
            "NAME",
            "REVISION",
            "SUSPENDED",
            "READY",
            "MESSAGE"
        ]
    );
    let releases: usize = sim
        .handle
        .truth()
        .iter()
        .filter(|c| !c.management)
        .map(|c| c.objects.iter().filter(|o| o.kind == "HelmRelease").count())
        .sum();
    assert_eq!(table.lines().count(), releases + 1);

    let out = run(&["get", "--summary", "-o", "json"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fleet_total = doc["fleet"]["objects"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum::<u64>();
    let per_workspace: u64 = doc["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|w| w["objects"].as_object().unwrap().values())
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(fleet_total > 0);
    assert_eq!(fleet_total, per_workspace);
    assert_eq!(doc["fleet"]["states"]["live"], 4);

    // The same summary as tables: per workspace, its clusters and objects by health, adding up
    // to what the JSON counts; then one row per cluster.
    let out = run(&["get", "--summary"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let tables = text(&out.stdout);
    let (workspaces, clusters) = tables.split_once("\n\n").expect("two tables");
    let header: Vec<&str> = workspaces
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "WORKSPACE",
            "CLUSTERS",
            "LIVE",
            "NOT-LIVE",
            "OBJECTS",
            "READY",
            "RUNNING",
            "FAILING",
            "SUSPENDED",
            "PROGRESSING",
            "OTHER"
        ]
    );
    let mut objects = 0;
    for row in workspaces.lines().skip(1) {
        let n: Vec<u64> = row
            .split_whitespace()
            .skip(1)
            .map(|c| c.parse().unwrap())
            .collect();
        assert_eq!(n[0], n[1] + n[2], "clusters live and not: {row}");
        assert_eq!(n[3], n[4..].iter().sum::<u64>(), "objects by health: {row}");
        objects += n[3];
    }
    assert_eq!(objects, fleet_total);
    let mut rows = clusters.lines();
    assert!(rows.next().unwrap().starts_with("WORKSPACE"));
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len(), 4, "{clusters}");
    assert!(
        rows.iter()
            .all(|r| r.split_whitespace().nth(2) == Some("live")),
        "{clusters}"
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_changes_as_ndjson() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let (cluster, client) = common::first_cluster(&sim).await;
    let mut child = fluxfleet()
        .args([
            "get",
            "ks",
            "--watch",
            "--cluster",
            &cluster,
            "--kubeconfig-dir",
        ])
        .arg(sim.dir.path().join("kubeconfigs"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // The first output is the table; the stream starts after it.
    let first = lines.next_line().await.unwrap().unwrap();
    assert!(first.starts_with("WORKSPACE"));
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(client, "flux-system", &common::kustomizations());
    let name = api.list(&Default::default()).await.unwrap().items[0]
        .metadata
        .name
        .clone()
        .unwrap();
    let patch = serde_json::json!({"spec": {"suspend": true}});
    api.patch(
        &name,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await
    .unwrap();
    let change = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.starts_with('{') {
                let v: Value = serde_json::from_str(&line).unwrap();
                if v["name"] == name.as_str() && v["suspended"] == true {
                    return v;
                }
            }
        }
        panic!("the stream ended");
    })
    .await
    .expect("the change is streamed");
    assert_eq!(change["event"], "MODIFIED");
    assert_eq!(change["status"], "suspended");
    assert_eq!(change["cluster"], cluster.as_str());
    let watches = &sim.handle.stats()["clusters"][&cluster]["watch"];
    assert!(watches.as_u64().unwrap() > 0, "--watch watches: {watches}");
    child.kill().await.unwrap();
    sim.handle.shutdown().await;
}
