//! The audit journal: no write is sent without its intent recorded first.

use crate::common;

use serde_json::Value;
use tokio::process::Command;

use super::fluxfleet;

/// The journal records the intent before anything is sent: with the journal unwritable nothing
/// is sent, and an interrupted reconcile leaves its intent behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_write_without_its_audit_record() {
    let sim =
        common::start_with(|c| c.reconcile_delay = std::time::Duration::from_secs(3600)).await;
    let fleet = sim.dir.path().join("kubeconfigs").display().to_string();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    // A data directory that cannot be created, even by root: its parent is a file.
    let blocker = scratch.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let unwritable = blocker.join("fluxfleet");
    let before = mutating();
    let args = [
        "suspend",
        "kustomization",
        "--all",
        "--write",
        "--yes",
        "--kubeconfig-dir",
        &fleet,
    ];
    let out = fluxfleet(&args, &[("FLUXFLEET_DATA_DIR", &unwritable)]).await;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot write the audit journal"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("not sent"));
    assert_eq!(mutating(), before, "nothing was sent");

    // A reconcile the controller will not handle for an hour, interrupted once it has sent.
    let data = scratch.path().join("data");
    let cluster = sim.handle.cluster_names()[0].clone();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fluxfleet"))
        .env("FLUXFLEET_CONFIG", "/nonexistent/fluxfleet.toml")
        .env("FLUXFLEET_DATA_DIR", &data)
        .env("HOME", "/nonexistent-home")
        .env_remove("KUBECONFIG")
        .args([
            "reconcile",
            "gitrepository",
            "--write",
            "--yes",
            "--timeout",
            "10m",
        ])
        .args(["--cluster", &cluster, "--kubeconfig-dir", &fleet])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let sent = before;
    common::eventually("the reconcile request reaches the cluster", || {
        let now = mutating();
        async move { now > sent }
    })
    .await;
    child.kill().await.unwrap();
    let journal = std::fs::read_to_string(data.join("audit.jsonl")).unwrap();
    let lines: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "the intent alone: {journal}");
    assert_eq!(lines[0]["stage"], "intent");
    assert_eq!(lines[0]["action"], "reconcile");
    assert_eq!(lines[0]["targets"][0]["cluster"], cluster.as_str());
    assert_eq!(lines[0]["targets"][0]["outcome"], "intended");
    sim.handle.shutdown().await;
}
