//! `fluxfleet mcp` as an assistant drives it: the MCP SDK's own client starts the binary over
//! stdio against a simulated fleet, lists the tools and calls them page by page; every answer is
//! compared with what `get -o json`, `get --root-causes -o json` and `rollout -o json` print for
//! the same scope. The write tools are tested in `mcp_writes.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use common::mcp::{all_pages, call, connect, json_of};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_as_the_commands_do_for_the_same_scope_a_page_at_a_time() {
    let sim = common::start_with(|c| c.clusters = 8).await;
    let dir = sim.dir.path();
    // `--read-only`, as assistants' configs say it: the default, said out loud.
    let client = connect(dir, &["--read-only"]).await;

    // The tools, with their schemas; nothing that writes.
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "describe_object",
            "drift",
            "fleet_summary",
            "gate",
            "get_objects",
            "list_clusters",
            "rollouts",
            "root_causes",
            "trace",
            "tree",
            "workloads"
        ]
    );
    for t in &tools {
        assert_eq!(t.input_schema["type"], "object", "{}", t.name);
        assert!(t.description.as_ref().is_some_and(|d| d.len() > 40));
        assert_eq!(
            t.annotations.as_ref().and_then(|a| a.read_only_hint),
            Some(true),
            "{}",
            t.name
        );
    }
    let objects = tools.iter().find(|t| t.name == "get_objects").unwrap();
    for field in [
        "workspace",
        "clusters",
        "kind",
        "namespace",
        "name",
        "status",
        "cursor",
        "limit",
    ] {
        assert!(
            objects.input_schema["properties"].get(field).is_some(),
            "get_objects takes {field}: {:?}",
            objects.input_schema
        );
    }

    // Objects: every page together is what `get` prints, for the fleet and for a scope.
    let get = json_of(dir, &["get"]).await;
    let (objects, first) = all_pages(&client, "get_objects", json!({}), "objects").await;
    assert!(objects.len() > 100);
    assert_eq!(objects, get["objects"].as_array().unwrap().clone());
    assert_eq!(first["clustersNotComplete"], 0);
    let workspace = get["objects"][0]["workspace"].as_str().unwrap().to_string();
    let scoped = json_of(
        dir,
        &[
            "get",
            "ks",
            "--status",
            "failing",
            "--workspace",
            &workspace,
        ],
    )
    .await;
    let scope = json!({ "kind": "ks", "status": "failing", "workspace": workspace });
    let (objects, _) = all_pages(&client, "get_objects", scope, "objects").await;
    assert!(!objects.is_empty());
    assert_eq!(objects, scoped["objects"].as_array().unwrap().clone());
    // One cluster by its name, others by a glob ending in `?`.
    let (a, b) = (
        get["clusters"][1]["cluster"].as_str().unwrap(),
        get["clusters"][4]["cluster"].as_str().unwrap(),
    );
    let glob = format!("{}?", &b[..b.len() - 1]);
    let globbed = json_of(dir, &["get", "--cluster", a, "--cluster", &glob]).await;
    let scope = json!({ "clusters": [a, glob] });
    let (objects, _) = all_pages(&client, "get_objects", scope, "objects").await;
    assert_eq!(objects, globbed["objects"].as_array().unwrap().clone());
    let on: std::collections::BTreeSet<&str> = objects
        .iter()
        .map(|o| o["cluster"].as_str().unwrap())
        .collect();
    assert!(on.contains(a) && on.contains(b) && on.len() < 8, "{on:?}");

    // Root causes, and the summary, as `get` says them.
    let roots = json_of(dir, &["get", "--root-causes"]).await;
    let (causes, _) = all_pages(&client, "root_causes", json!({}), "rootCauses").await;
    assert!(!causes.is_empty());
    assert_eq!(causes, roots["rootCauses"].as_array().unwrap().clone());
    let summary = json_of(dir, &["get", "--summary"]).await;
    let answer = call(&client, "fleet_summary", json!({})).await.unwrap();
    assert_eq!(answer["fleet"]["objects"], summary["fleet"]["objects"]);
    assert_eq!(answer["fleet"]["clusters"], summary["fleet"]["clusters"]);
    assert_eq!(answer["workspaces"].as_array().unwrap().len(), 2);
    let (clusters, _) = all_pages(&client, "list_clusters", json!({}), "clusters").await;
    let brief = |c: &Value| {
        json!([
            c["cluster"],
            c["workspace"],
            c["state"],
            c["objects"],
            c["report"]["version"]
        ])
    };
    assert_eq!(
        clusters.iter().map(brief).collect::<Vec<_>>(),
        summary["clusters"]
            .as_array()
            .unwrap()
            .iter()
            .map(brief)
            .collect::<Vec<_>>()
    );
    let (live, _) = all_pages(
        &client,
        "list_clusters",
        json!({ "state": "live" }),
        "clusters",
    )
    .await;
    assert_eq!(live.len(), 8);
    let (none, _) = all_pages(
        &client,
        "list_clusters",
        json!({ "state": "unreachable" }),
        "clusters",
    )
    .await;
    assert!(none.is_empty());

    // Rollouts: the rows, then one thing's matrix.
    let rollout = json_of(dir, &["rollout"]).await;
    let (rows, _) = all_pages(&client, "rollouts", json!({}), "rollouts").await;
    assert_eq!(rows, rollout["rollouts"].as_array().unwrap().clone());
    let row = &rows[0];
    let (kind, name) = (row["kind"].as_str().unwrap(), row["name"].as_str().unwrap());
    let matrix = json_of(dir, &["rollout", kind, name]).await;
    let args = json!({ "kind": kind, "name": name });
    let (places, first) = all_pages(&client, "rollouts", args, "clusters").await;
    assert_eq!(places, matrix["clusters"].as_array().unwrap().clone());
    assert_eq!(first["rings"], matrix["rings"]);
    assert_eq!(first["rollout"], matrix["rollout"]);

    // One object: its state, its events and its YAML, with managedFields left out.
    let object = &get["objects"][0];
    let args = json!({
        "cluster": object["cluster"], "kind": object["kind"],
        "namespace": object["namespace"], "name": object["name"],
    });
    let detail = call(&client, "describe_object", args).await.unwrap();
    assert_eq!(&detail["object"], object);
    let yaml = detail["yaml"].as_str().unwrap();
    assert!(
        yaml.contains(&format!("kind: {}", object["kind"].as_str().unwrap())),
        "{yaml}"
    );
    assert!(!yaml.contains("managedFields"));
    assert!(detail["events"].is_array(), "{detail}");
    // A Kustomization's last runs, as its controller records them in status.history.
    let ks = get["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "Kustomization" && o["status"] == "ready")
        .unwrap();
    let args = json!({
        "cluster": ks["cluster"], "kind": "Kustomization",
        "namespace": ks["namespace"], "name": ks["name"],
    });
    let detail = call(&client, "describe_object", args).await.unwrap();
    let history = &detail["history"];
    assert_eq!(history["recorded"], "yes", "{history}");
    let newest = &history["runs"][0];
    assert!(
        newest["digest"].as_str().unwrap().starts_with("sha256:"),
        "{history}"
    );
    assert_eq!(newest["status"], "ReconciliationSucceeded", "{history}");
    assert_eq!(newest["revision"], ks["revision"], "{history}");

    // Bad arguments are refused by name.
    let secret = json!({ "cluster": object["cluster"], "kind": "Secret", "namespace": "flux-system", "name": "x" });
    let refused = call(&client, "describe_object", secret).await.unwrap_err();
    assert!(refused.contains("not a Flux kind"), "{refused}");
    let refused = call(&client, "get_objects", json!({ "cursor": "abc" }))
        .await
        .unwrap_err();
    assert!(refused.contains("cursor"), "{refused}");
    let refused = call(&client, "get_objects", json!({ "status": "sad" }))
        .await
        .unwrap_err();
    assert!(refused.contains("unknown status"), "{refused}");
    let refused = call(
        &client,
        "describe_object",
        json!({ "cluster": "nowhere", "kind": "ks", "namespace": "a", "name": "b" }),
    )
    .await
    .unwrap_err();
    assert!(refused.contains("no cluster named"), "{refused}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_about_ten_thousand_clusters_stay_bounded_and_say_where_they_were_cut() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 10_000;
        c.workspaces = 10;
        c.objects = 3;
        c.operator = 1.0;
    })
    .await;
    // The summary tier: no socket held per cluster, each counted by its FluxReport.
    let client = connect(
        sim.dir.path(),
        &["--watch-mode", "summary", "--timeout", "300s"],
    )
    .await;
    let size = |v: &Value| serde_json::to_vec(v).unwrap().len();

    let summary = call(&client, "fleet_summary", json!({})).await.unwrap();
    assert_eq!(summary["fleet"]["clusters"], 10_000, "{}", summary["fleet"]);
    assert!(size(&summary) < 64 * 1024);
    // Asked for as many as allowed, a page stops at its byte budget and says where to go on,
    // and the next one goes on from there.
    let most = call(&client, "list_clusters", json!({ "limit": 1000 }))
        .await
        .unwrap();
    assert_eq!(most["page"]["total"], 10_000);
    let returned = most["page"]["returned"].as_u64().unwrap();
    assert!((10..1000).contains(&returned), "{}", most["page"]);
    assert!(size(&most) < 80 * 1024, "{} bytes", size(&most));
    assert_eq!(most["page"]["nextCursor"], returned.to_string());
    let cursor = returned.to_string();
    let next = call(
        &client,
        "list_clusters",
        json!({ "limit": 1000, "cursor": cursor }),
    )
    .await
    .unwrap();
    let place = |c: &Value| (c["workspace"].to_string(), c["cluster"].to_string());
    let last = place(most["clusters"].as_array().unwrap().last().unwrap());
    assert!(
        place(&next["clusters"][0]) > last,
        "{:?} after {last:?}",
        place(&next["clusters"][0])
    );
    let objects = call(&client, "get_objects", json!({ "limit": 1000 }))
        .await
        .unwrap();
    // Counted by their reports, as asked: seen as completely as the summary tier sees.
    assert_eq!(objects["clustersNotComplete"], 0);
    assert!(size(&objects) < 80 * 1024, "{} bytes", size(&objects));
    assert!(
        objects["page"]["total"].as_u64().unwrap() > 1000,
        "{}",
        objects["page"]
    );
    let causes = call(&client, "root_causes", json!({})).await.unwrap();
    assert!(size(&causes) < 80 * 1024, "{} bytes", size(&causes));
    assert!(!causes["rootCauses"].as_array().unwrap().is_empty());
    // The widest cause is on thousands of clusters: fifty of them are shown, the rest counted.
    let widest = &causes["rootCauses"][0];
    assert_eq!(causes["page"]["cut"], true, "{}", causes["page"]);
    assert_eq!(widest["clusters"].as_array().unwrap().len(), 50);
    assert!(
        widest["clustersOmitted"].as_u64().unwrap() > 50,
        "{}",
        widest["clustersOmitted"]
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_bus_the_history_tool_answers_as_get_since_does() {
    let fleet = common::bus::published().await;
    let (nats, sim, inventory) = (&fleet.nats, &fleet.sim, &fleet.inventory);
    let within = std::time::Duration::from_secs(30);
    let kubeconfigs = sim.dir.path().join("kubeconfigs");

    let mut cmd = common::bus::command(&kubeconfigs);
    cmd.args(["mcp", "--nats", &nats.url]);
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "history"));
    let cluster = inventory.clusters[2].name.clone();
    // Equal once the bus is still (the collector's first changes may still be arriving).
    common::bus::until("history as get --since says it", within, || async {
        let out = common::bus::command(&kubeconfigs)
            .args(["get", "--nats", &nats.url, "--since", "1h", "-o", "json"])
            .args(["--cluster", &cluster])
            .output()
            .await
            .unwrap();
        let get: Value = match serde_json::from_slice(&out.stdout) {
            Ok(get) => get,
            Err(e) => return Some(format!("get --since: {e}")),
        };
        let args = json!({ "since": "1h", "clusters": [cluster] });
        let (changes, _) = all_pages(&client, "history", args, "changes").await;
        let wrong = changes.is_empty() || changes != get.as_array().cloned().unwrap_or_default();
        wrong.then(|| format!("{} changes, get said {}", changes.len(), get))
    })
    .await;
    let args = json!({ "since": "1h", "clusters": [cluster] });
    let (changes, _) = all_pages(&client, "history", args, "changes").await;
    assert!(changes.iter().all(|c| c["cluster"] == cluster.as_str()));
    assert!(
        changes.iter().any(|c| c["what"] == "connection"),
        "{changes:?}"
    );
    let refused = call(&client, "history", json!({ "since": "soon" }))
        .await
        .unwrap_err();
    assert!(refused.contains("soon"), "{refused}");
    client.cancel().await.unwrap();
    fleet.collector.stop.cancel();
    let _ = fleet.collector.task.await;
}
