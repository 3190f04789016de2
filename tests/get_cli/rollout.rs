//! `fluxfleet rollout`: the spread of revisions, one object's matrix, and what it cannot show.

use crate::common;

use serde_json::Value;

use super::{run, text};

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
