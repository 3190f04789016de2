//! Every tool of `fluxfleet mcp` parses its arguments strictly, as an assistant meets it: an
//! argument a tool does not take is refused by name (with the one it most likely meant) and the
//! call does nothing — no proposal kept, nothing sent — and every schema says so with
//! `additionalProperties: false`. A write whose scope names no place is refused unless it says
//! `all`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::fluxfleet;
use common::mcp::call;
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// A valid call of each tool a `--propose` server has (history needs a bus: its arguments are
/// parsed by the same code, `src/mcp/strict.rs`).
fn valid_calls(cluster: &str, ring: &str) -> Vec<(&'static str, Value)> {
    let object = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system" });
    vec![
        ("fleet_summary", json!({})),
        ("list_clusters", json!({})),
        ("get_objects", json!({})),
        ("root_causes", json!({})),
        ("rollouts", json!({})),
        ("drift", json!({})),
        (
            "gate",
            json!({ "ring": ring, "revision": "main@sha1:0123456789ab" }),
        ),
        (
            "describe_object",
            json!({ "cluster": cluster, "kind": "ks", "namespace": "flux-system", "name": "apps" }),
        ),
        ("workloads", json!({ "kind": "ks", "name": "apps" })),
        (
            "trace",
            json!({ "kind": "deploy", "name": "apps", "namespace": "apps" }),
        ),
        ("tree", json!({ "kind": "ks", "name": "flux-system" })),
        ("suspend", object.clone()),
        ("resume", object.clone()),
        ("reconcile", object.clone()),
        ("halt_rollout", object),
        ("proposal_status", json!({ "id": "p-0000" })),
    ]
}

fn suspended(sim: &common::Sim) -> usize {
    let truth = sim.handle.truth();
    truth
        .iter()
        .flat_map(|c| &c.objects)
        .filter(|o| o.suspended)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_refuses_an_argument_it_does_not_take_by_name_and_does_nothing() {
    let sim = common::start_with(|c| c.clusters = 4).await;
    let dir = sim.dir.path();
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir, data.path(), "--propose").await;
    let truth = sim.handle.truth();
    let cluster = truth.iter().find(|c| !c.management).unwrap();
    let suspended_before = suspended(&sim);

    let tools = client.list_all_tools().await.unwrap();
    let calls = valid_calls(&cluster.name, &cluster.workspace);
    let mut names: Vec<&str> = tools.iter().map(|t| &*t.name).collect();
    let mut called: Vec<&str> = calls.iter().map(|(name, _)| *name).collect();
    names.sort();
    called.sort();
    assert_eq!(names, called, "every tool is called here");
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("additionalProperties"),
            Some(&Value::Bool(false)),
            "{}: {:?}",
            tool.name,
            tool.input_schema
        );
    }
    for (tool, valid) in &calls {
        let mut args = valid.clone();
        args["scope"] = json!("prod");
        let refused = call(&client, tool, args).await.unwrap_err();
        assert!(
            refused.contains("unknown argument `scope`") && refused.contains("nothing was done"),
            "{tool}: {refused}"
        );
    }

    // The call that widened a suspend to the whole fleet: refused, naming what was meant.
    let misspelled = json!({ "kind": "Kustomization", "name": "apps", "cluster": ["*-dev-*"],
        "why": "freeze dev" });
    let refused = call(&client, "suspend", misspelled).await.unwrap_err();
    assert!(
        refused.contains("unknown argument `cluster`; did you mean `clusters`?"),
        "{refused}"
    );
    let refused = call(
        &client,
        "get_objects",
        json!({ "namespaces": "flux-system" }),
    )
    .await
    .unwrap_err();
    assert!(refused.contains("did you mean `namespace`?"), "{refused}");

    // Nothing was proposed, nothing changed.
    let out = fluxfleet()
        .env("FLUXFLEET_DATA_DIR", data.path())
        .args(["proposals", "-o", "json"])
        .output()
        .await
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        listed,
        json!([]),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(suspended(&sim), suspended_before);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_scope_names_no_place_is_refused_unless_it_says_all() {
    let sim = common::start_with(|c| c.clusters = 3).await;
    let dir = sim.dir.path();
    let data = tempfile::tempdir().unwrap();
    let client = serve(dir, data.path(), "--write").await;

    for tool in ["suspend", "resume", "reconcile"] {
        let refused = call(&client, tool, json!({ "kind": "ks", "status": "failing" }))
            .await
            .unwrap_err();
        assert!(
            refused.contains(&format!(
                "the scope names no workspace, cluster, namespace or name, so it is the whole \
                 fleet: say all (--all, or all: true) to {tool} across it"
            )),
            "{tool}: {refused}"
        );
    }
    // Said: a dry run of every Kustomization in the fleet.
    let dry = call(&client, "reconcile", json!({ "kind": "ks", "all": true }))
        .await
        .unwrap();
    assert_eq!(dry["dryRun"], true);
    assert!(dry["count"].as_u64().unwrap() >= 3, "{dry}");
    client.cancel().await.unwrap();
}

/// `fluxfleet mcp FLAG` on the fleet, its data (journal, proposals) in `data`.
async fn serve(
    dir: &Path,
    data: &Path,
    flag: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data)
        .args(["mcp", flag, "--kubeconfig-dir"])
        .arg(dir.join("kubeconfigs"));
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}
