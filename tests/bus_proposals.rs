//! Proposals when the fleet is read from collectors: kept on the bus, so that a teammate reading
//! the same fleet from another machine lists and decides them, and a proposal acts once however
//! many approve it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::mcp::{assert_proposal_journaled, call, journal};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// `fluxfleet ARGS` as the person with data directory `data` runs it: exit code, stdout, stderr.
async fn as_person(data: &Path, args: &[&str]) -> (i32, String, String) {
    let out = common::fluxfleet()
        .env("FLUXFLEET_DATA_DIR", data)
        .env_remove("FLUXFLEET_NATS")
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_on_the_bus_is_decided_by_a_teammate_and_acts_once() {
    let _turn = common::bus::one_at_a_time().await;
    let fleet = common::bus::published().await;
    let (nats, sim) = (&fleet.nats, &fleet.sim);
    let kubeconfigs = sim.dir.path().join("kubeconfigs");
    let (alice, bob) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());

    // The assistant's server, on Alice's machine, reads the fleet from the bus.
    let mut cmd = common::bus::command(&kubeconfigs);
    cmd.env("FLUXFLEET_DATA_DIR", alice.path())
        .args(["mcp", "--propose", "--nats", &nats.url]);
    let assistant = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let proposed = call(
        &assistant,
        "suspend",
        json!({ "kind": "ks", "name": "apps", "namespace": "flux-system", "why": "flapping" }),
    )
    .await
    .unwrap();
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let count = proposed["count"].as_u64().unwrap();
    assert!(!alice.path().join("proposals").exists(), "kept on the bus");

    // Bob, on another machine, sees it on the bus — and not without it.
    let bus = ["--nats", nats.url.as_str(), "--bucket", "fleet"];
    let (code, out, err) = as_person(
        bob.path(),
        &[&["proposals", "-o", "json"][..], &bus].concat(),
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let listed: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["status"], "pending");
    let (_, out, _) = as_person(bob.path(), &["proposals", "-o", "json"]).await;
    assert_eq!(out.trim(), "[]", "beside Bob's journal there is none");

    // Bob approves: acted on once, journaled on his machine with both names.
    // PATCHes: each target also gets an Event recorded beside its patch.
    let patches = || sim.handle.stats()["patchTotal"].as_u64().unwrap();
    let before = patches();
    let kubeconfig_dir = kubeconfigs.to_str().unwrap();
    let mut approve = vec!["approve", id.as_str(), "--write", "--yes"];
    approve.extend(bus);
    approve.extend(["--kubeconfig-dir", kubeconfig_dir]);
    let (code, out, err) = as_person(bob.path(), &approve).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(patches() - before, count, "one patch a target");
    let lines = journal(bob.path());
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_proposal_journaled(&lines, &id);

    // Alice approves it too, a moment later: it is approved already, nothing more is sent.
    let (code, _, err) = as_person(alice.path(), &approve).await;
    assert_eq!(code, 1);
    assert!(err.contains("is approved"), "{err}");
    assert_eq!(patches() - before, count);

    // The assistant follows it to its outcomes.
    let status = call(&assistant, "proposal_status", json!({ "id": id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "approved", "{status}");
    assert_eq!(status["outcomes"].as_array().unwrap().len() as u64, count);
    assistant.cancel().await.unwrap();
}
