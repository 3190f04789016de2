//! `fluxfleet drift` and MCP's `drift` tool name the same copies as the simulator made differ.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use fluxfleet_sim::Scenario;

use super::{found_in, meant};

/// `fluxfleet drift` as a pipeline runs it (exit 8, the copies in its JSON) and MCP's `drift`
/// tool say what the simulator made differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_and_the_mcp_tool_name_the_same_copies() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 300;
        c.workspaces = 4;
        c.objects = 20;
        c.scenario = Scenario::Story;
        // The command and the server read their clock: the fleet's runs on it too.
        c.epoch = None;
    })
    .await;
    let truth = common::workloads(&sim);
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let meant = meant(&truth, &reachable);
    assert!(meant.len() >= 3, "{meant:?}");
    let dir = sim.dir.path();
    let out = common::fluxfleet()
        .args([
            "drift",
            "-o",
            "json",
            "--timeout",
            "60s",
            "--kubeconfig-dir",
        ])
        .arg(dir.join("kubeconfigs"))
        .output()
        .await
        .unwrap();
    // Drift found: 8, though some clusters of the story cannot be reached.
    assert_eq!(out.status.code(), Some(8), "{out:?}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = found_in(&doc);
    assert_eq!(said, meant);

    let client = common::mcp::connect(dir, &[]).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let (differ, mut first) =
            common::mcp::all_pages(&client, "drift", serde_json::json!({}), "differ").await;
        first["differ"] = serde_json::Value::Array(differ);
        let told = found_in(&first);
        if told == meant {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{told:?} != {meant:?}"
        );
        tokio::task::yield_now().await;
    }
    client.cancel().await.unwrap();
}
