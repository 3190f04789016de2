//! `fluxfleet get` and `fluxfleet inventory` as scripts run them: the binary against an
//! in-process simulated fleet, checking output, exit codes and the errors on bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::fluxfleet;

use common::truth::seen;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

async fn run(args: &[&str], dir: &Path) -> Output {
    fluxfleet()
        .args(args)
        .arg("--kubeconfig-dir")
        .arg(dir.join("kubeconfigs"))
        .output()
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The kinds `get` shows when none is named.
const DEFAULT_KINDS: [&str; 7] = [
    "GitRepository",
    "OCIRepository",
    "HelmRepository",
    "HelmChart",
    "Bucket",
    "Kustomization",
    "HelmRelease",
];

/// An object as a row: cluster, kind, namespace, name, status.
type Row = (String, String, String, String, String);

/// Every object of the default kinds on `clusters`, with the truth's health, sorted.
fn truth_rows<'a>(clusters: impl Iterator<Item = &'a fluxfleet_sim::TruthCluster>) -> Vec<Row> {
    let mut rows: Vec<Row> = clusters
        .flat_map(|c| {
            c.objects
                .iter()
                .filter(|o| DEFAULT_KINDS.contains(&o.kind.as_str()))
                .map(|o| {
                    (
                        c.name.clone(),
                        o.kind.clone(),
                        o.namespace.clone(),
                        o.name.clone(),
                        seen(o.health).key().to_string(),
                    )
                })
        })
        .collect();
    rows.sort();
    rows
}

/// The objects `get -o json` wrote, sorted.
fn shown_rows(doc: &Value) -> Vec<Row> {
    let mut rows: Vec<Row> = doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let s = |k: &str| o[k].as_str().unwrap().to_string();
            (
                s("cluster"),
                s("kind"),
                s("namespace"),
                s("name"),
                s("status"),
            )
        })
        .collect();
    rows.sort();
    rows
}

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

#[tokio::test]
async fn inventory_reports_broken_sources_and_still_lists_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("payments")).unwrap();
    std::fs::write(
        d.join("payments/good.yaml"),
        "clusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1:6443\n\
         users:\n- name: u\n  user:\n    token: very-secret-token\n\
         contexts:\n- name: pay-1\n  context:\n    cluster: c\n    user: u\n",
    )
    .unwrap();
    std::fs::write(d.join("broken.yaml"), "clusters: [ {").unwrap();
    let out = fluxfleet()
        .args(["inventory", "-o", "json", "--kubeconfig-dir"])
        .arg(d)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["clusters"][0]["cluster"], "pay-1");
    assert_eq!(doc["clusters"][0]["workspace"], "payments");
    assert_eq!(doc["clusters"][0]["server"], "https://10.0.0.1:6443");
    let problem = doc["problems"][0]["source"].as_str().unwrap();
    assert!(problem.ends_with("broken.yaml"));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("broken.yaml: not a valid kubeconfig"),
        "{stderr}"
    );
    assert!(!text(&out.stdout).contains("very-secret-token"));

    let out = fluxfleet()
        .args(["get", "--kubeconfig", "/nonexistent/kubeconfig"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("/nonexistent/kubeconfig: file not found"));
    let out = fluxfleet()
        .args(["get", "deployments"])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("\"deployments\" is not a Flux kind"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_answering_garbage_is_named_and_the_others_are_unaffected() {
    // Something that speaks HTTP but is not a Kubernetes API server.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = socket.read(&mut buf).await {
                    if n == 0 {
                        return;
                    }
                    let body = "<html>It works!</html>";
                    let reply = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if socket.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let sim = common::start_with(|c| c.clusters = 2).await;
    let odd = sim.dir.path().join("kubeconfigs/odd/web.yaml");
    std::fs::create_dir_all(odd.parent().unwrap()).unwrap();
    std::fs::write(
        &odd,
        format!(
            "clusters:\n- name: web\n  cluster:\n    server: http://127.0.0.1:{port}\n\
             contexts:\n- name: webserver\n  context:\n    cluster: web\n"
        ),
    )
    .unwrap();
    let out = run(&["get", "-o", "json", "--timeout", "20s"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clusters = doc["clusters"].as_array().unwrap();
    let web = clusters
        .iter()
        .find(|c| c["cluster"] == "webserver")
        .unwrap();
    assert_eq!(web["state"], "server-error");
    assert!(
        web["error"]
            .as_str()
            .unwrap()
            .contains("not from a Kubernetes API server"),
        "{web}"
    );
    assert_eq!(clusters.iter().filter(|c| c["state"] == "live").count(), 2);
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollout_prints_the_spread_and_one_object_s_matrix_and_refuses_what_it_cannot_show() {
    let sim = common::start_with(|c| c.clusters = 6).await;
    let dir = sim.dir.path();
    let out = run(&["rollout", "ks"], dir).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    assert!(header.starts_with("KIND"), "{table}");
    assert!(
        header.contains("NEWEST") && header.contains("STUCK"),
        "{table}"
    );
    // Kustomizations only, one row each, on the clusters that have them.
    assert!(
        lines.clone().all(|l| l.starts_with("Kustomization")),
        "{table}"
    );
    let row = lines
        .find(|l| l.contains(" flux-system   flux-system "))
        .unwrap();
    assert!(row.contains("/6"), "{row}");

    // One object: the rings (workspaces), then every cluster.
    let out = run(&["rollout", "ks", "flux-system", "-o", "json"], dir).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["rollout"]["name"], "flux-system");
    assert_eq!(doc["clusters"].as_array().unwrap().len(), 6);
    let rings: Vec<&str> = doc["rings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    let mut workspaces: Vec<String> = sim
        .handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .map(|c| c.workspace)
        .collect();
    workspaces.sort();
    workspaces.dedup();
    assert_eq!(rings, workspaces);

    // What it cannot show, said plainly.
    let out = run(&["rollout", "alert"], dir).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no revisions to roll out"));
    let out = run(&["rollout", "ks", "nope"], dir).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no Kustomization \"nope\""),
        "{}",
        text(&out.stderr)
    );
    let out = run(&["rollout", "-o", "yaml"], dir).await;
    assert_eq!(out.status.code(), Some(2));
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_causes_explain_every_failing_object_by_what_holds_it_back() {
    let sim = common::start_with(|c| c.clusters = 24).await;
    let dir = sim.dir.path();
    let out = run(
        &["get", "--status", "failing", "--root-causes", "-o", "json"],
        dir,
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let causes = doc["rootCauses"].as_array().unwrap();
    // Every failing object of the truth is a root cause on its cluster, or held back by one;
    // and nothing is both.
    let mut explained = std::collections::BTreeMap::new();
    for cause in causes {
        let root = format!(
            "{}/{}/{}",
            cause["kind"].as_str().unwrap(),
            cause["namespace"].as_str().unwrap(),
            cause["name"].as_str().unwrap()
        );
        for copy in cause["clusters"].as_array().unwrap() {
            let cluster = copy["cluster"].as_str().unwrap().to_string();
            let blocks = copy["blocks"].as_array().unwrap();
            assert!(
                blocks.iter().all(|b| b.as_str() != Some(root.as_str())),
                "{root} holds itself back on {cluster}"
            );
            explained.insert((cluster.clone(), root.clone()), "root");
            for b in blocks {
                explained.insert((cluster.clone(), b.as_str().unwrap().to_string()), "held");
            }
        }
        // A root cause waits for nothing: never a dependency that is not ready.
        assert_ne!(cause["reason"], "DependencyNotReady", "{cause}");
    }
    let mut failing = 0;
    for c in sim.handle.truth().into_iter().filter(|c| !c.management) {
        for o in c.objects.iter().filter(|o| o.health.is_failing()) {
            failing += 1;
            let key = (
                c.name.clone(),
                format!("{}/{}/{}", o.kind, o.namespace, o.name),
            );
            assert!(explained.contains_key(&key), "{key:?} is not explained");
        }
    }
    assert!(failing > 0, "the simulated fleet has failures");
    // The simulated fleet's dependency chains: some roots hold others back.
    assert!(
        causes
            .iter()
            .any(|c| c["blocks"]["most"].as_u64() > Some(0)),
        "{doc}"
    );

    let out = run(&["get", "--status", "failing", "--root-causes"], dir).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.starts_with("KIND"), "{table}");
    assert!(table.lines().next().unwrap().contains("BLOCKS"), "{table}");
    assert_eq!(table.lines().count(), causes.len() + 1, "{table}");
    let out = run(&["get", "--root-causes", "-o", "ndjson"], dir).await;
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    sim.handle.shutdown().await;
}

/// A one-shot read lets each cluster's connection go once its kinds are listed: holding 2,000
/// connections (their TLS state and buffers) until the last cluster answers was a third of
/// `get`'s memory. A cluster still listing keeps its own; a watching session keeps every one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_read_closes_each_connection_once_its_cluster_is_listed() {
    let sim = common::start_with(|c| c.clusters = 5).await;
    let inventory = common::fleet_of(&sim);
    let open = |sim: &common::Sim| -> u64 {
        let stats = sim.handle.stats();
        let clusters = stats["clusters"].as_object().unwrap();
        clusters
            .values()
            .map(|c| c["connections"].as_u64().unwrap())
            .sum()
    };
    let mut engine = common::engine_settings();
    engine.list_only = true;
    let mut listed = fluxfleet::session::Session::kube(&inventory, &engine);
    assert!(listed.settle(Duration::from_secs(20)).await);
    let live = |s: &fluxfleet::session::Session| {
        let clusters = s.index.clusters();
        clusters
            .iter()
            .filter(|c| c.connection.phase == fluxfleet::fleet::Phase::Live)
            .count()
    };
    assert_eq!(live(&listed), inventory.clusters.len());
    // The server sees each connection end (it learns of it a moment after the client lets go);
    // the clusters stay shown live, as listed.
    common::until(&mut listed, Duration::from_secs(10), |_| {
        let n = open(&sim);
        (n > 0).then(|| format!("{n} connections still open after every cluster was listed"))
    })
    .await;
    assert_eq!(live(&listed), inventory.clusters.len());
    drop(listed);
    let mut watching = fluxfleet::session::Session::kube(&inventory, &common::engine_settings());
    assert!(watching.settle(Duration::from_secs(20)).await);
    common::until(&mut watching, Duration::from_secs(10), |_| {
        let n = open(&sim);
        (n != inventory.clusters.len() as u64).then(|| {
            format!(
                "{n} connections open for {} watched clusters",
                inventory.clusters.len()
            )
        })
    })
    .await;
    sim.handle.shutdown().await;
}

/// 60 contexts on servers that throttle as API Priority and Fairness does: two seats each, every
/// request held a while, the rest answered 429 with `Retry-After: 1`. A one-shot `get` still
/// reads every object exactly: it asks again when the server says, instead of backing off ever
/// further until the timeout (a real kube-apiserver v1.26 once left 6 of 60 contexts syncing
/// that way after 120 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_read_of_throttling_servers_finishes_exact() {
    let sim = common::start_with(|c| {
        c.clusters = 60;
        c.workspaces = 3;
        c.objects = 12;
        c.faults = fluxfleet_sim::faults::Spec::parse("throttle=100%:2,slow=100%:20ms").unwrap();
    })
    .await;
    let out = run(&["get", "-o", "json", "--timeout", "5m"], sim.dir.path()).await;
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = sim.handle.stats();
    let throttled: u64 = stats["clusters"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c["throttled"].as_u64().unwrap())
        .sum();
    eprintln!("the servers turned {throttled} requests away");
    assert!(throttled > 100, "the servers throttled: {throttled}");
    let truth = sim.handle.truth();
    let fleet: Vec<_> = truth.iter().filter(|c| !c.management).collect();
    let clusters = doc["clusters"].as_array().unwrap();
    assert_eq!(clusters.len(), fleet.len());
    for c in clusters {
        assert_eq!(c["state"], "live", "{c}");
    }
    // Every object of the default kinds, once, with the truth's health.
    assert_eq!(shown_rows(&doc), truth_rows(fleet.into_iter()));
    sim.handle.shutdown().await;
}

/// A kubeconfig that says `insecure-skip-tls-verify` is read as kubectl reads it, and without a
/// word on stderr: kube's "Server cert bypassed" warning, once a connection, is not passed on (a
/// real kube-apiserver with its self-signed certificate printed it on every `get`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_insecure_kubeconfig_is_read_without_a_warning_a_connection() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let file = walk(&sim.dir.path().join("kubeconfigs"))
        .into_iter()
        .next()
        .unwrap();
    let config: Value = serde_saphyr::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let (cluster, user) = (&config["clusters"][0], &config["users"][0]["user"]);
    let insecure = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    \
         insecure-skip-tls-verify: true\n    tls-server-name: {}\nusers:\n- name: u\n  user:\n    \
         token: {}\ncontexts:\n- name: insecure\n  context: {{cluster: c, user: u}}\n\
         current-context: insecure\n",
        cluster["cluster"]["server"].as_str().unwrap(),
        cluster["cluster"]["tls-server-name"].as_str().unwrap(),
        user["token"].as_str().unwrap(),
    );
    let path = sim.dir.path().join("insecure.yaml");
    std::fs::write(&path, insecure).unwrap();
    let out = fluxfleet()
        .args(["get", "-o", "json", "--timeout", "20s", "--kubeconfig"])
        .arg(&path)
        .env_remove("FLUXFLEET_LOG")
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["clusters"][0]["state"], "live", "{doc}");
    assert!(!doc["objects"].as_array().unwrap().is_empty());
    assert_eq!(text(&out.stderr), "", "nothing said on stderr");
    sim.handle.shutdown().await;
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}
