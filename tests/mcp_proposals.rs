//! `fluxfleet mcp --propose` as an assistant drives it (the SDK's client over stdio) and a person
//! decides from the CLI: a proposal sends nothing; approved, it acts exactly once and the journal
//! names proposer and approver; a fleet changed since is refused on approval, saying what
//! changed; a rejected or expired proposal never acts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::fluxfleet;
use common::mcp::{call, journal};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::json;

/// `fluxfleet mcp --propose` on the fleet, keeping its proposals in `data`.
async fn proposing(dir: &Path, data: &Path, extra: &[&str]) -> RunningService<RoleClient, ()> {
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data)
        .args(["mcp", "--propose"])
        .args(extra)
        .arg("--kubeconfig-dir")
        .arg(dir.join("kubeconfigs"));
    ().serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap()
}

/// `fluxfleet ARGS` as a person runs it, with the same data directory (and the fleet's
/// kubeconfigs, for a command that reads the fleet): exit code, stdout, stderr.
async fn run(fleet: Option<&Path>, data: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data).args(args);
    if let Some(dir) = fleet {
        cmd.arg("--kubeconfig-dir").arg(dir.join("kubeconfigs"));
    }
    let out = cmd.output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn suspended_on(sim: &common::Sim, name: &str) -> usize {
    sim.handle
        .truth()
        .iter()
        .flat_map(|c| &c.objects)
        .filter(|o| o.kind == "Kustomization" && o.name == name && o.suspended)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_acts_once_when_a_person_approves_it_and_never_otherwise() {
    let sim = common::start().await;
    let dir = sim.dir.path();
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let before = mutating();
    let patches = || sim.handle.stats()["patchTotal"].as_u64().unwrap();
    let patched = patches();

    let client = proposing(dir, data, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    for wanted in ["proposal_status", "reconcile", "resume", "suspend"] {
        assert!(names.contains(&wanted), "{names:?}");
    }
    let suspend = tools.iter().find(|t| t.name == "suspend").unwrap();
    assert!(
        suspend
            .description
            .as_deref()
            .unwrap()
            .starts_with("Propose"),
        "{suspend:?}"
    );

    // The proposal: targets and exact patches kept, nothing sent, nothing journaled.
    let scope = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                        "reason": "freeze", "why": "apps flaps on every cluster" });
    let proposed = call(&client, "suspend", scope.clone()).await.unwrap();
    let id = proposed["proposal"].as_str().unwrap().to_string();
    assert_eq!(proposed["status"], "pending", "{proposed}");
    assert_eq!(proposed["count"], 6, "{proposed}");
    let targets = proposed["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 6);
    assert!(
        targets
            .iter()
            .all(|t| t["would"].as_str().unwrap().contains("\"suspend\":true")),
        "{targets:?}"
    );
    // A token has no place here (a person approves): not an argument of suspend in this mode.
    let mut with_token = scope.clone();
    with_token["token"] = json!("x");
    with_token["count"] = json!(6);
    let refused = call(&client, "suspend", with_token).await.unwrap_err();
    assert!(refused.contains("unknown argument `token`"), "{refused}");
    assert_eq!(mutating(), before, "a proposal sends nothing");
    assert!(journal(data).is_empty());
    let status = call(&client, "proposal_status", json!({ "id": id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "pending", "{status}");

    // Another proposal, a reconcile, that will wait while the suspend is approved.
    let proposed = call(
        &client,
        "reconcile",
        json!({ "kind": "ks", "name": "apps" }),
    )
    .await
    .unwrap();
    let changed_id = proposed["proposal"].as_str().unwrap().to_string();

    // The person's list shows it, with who asked and why.
    let (code, out, _) = run(None, data, &["proposals"]).await;
    assert_eq!(code, 0);
    assert!(
        out.contains(&id) && out.contains("pending") && out.contains("apps flaps"),
        "{out}"
    );
    let (_, out, _) = run(None, data, &["proposals", &id]).await;
    assert!(
        out.contains("\"suspend\":true") && out.contains("freeze"),
        "{out}"
    );

    // Approving needs write mode: refused, still pending, nothing sent.
    let (code, _, err) = run(Some(dir), data, &["approve", &id, "--yes"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("read-only") && err.contains("stays pending"),
        "{err}"
    );
    assert_eq!(mutating(), before);

    // Approved: acts once, journaled with proposer and approver.
    let (code, out, err) = run(Some(dir), data, &["approve", &id, "--write", "--yes"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(suspended_on(&sim, "apps"), 6);
    let sent = mutating();
    assert_eq!(patches() - patched, 6, "one patch a target");
    assert_eq!(sent - before, 12, "and one Event a target");
    let lines = journal(data);
    assert_eq!(lines.len(), 2, "intent and outcome: {lines:?}");
    common::mcp::assert_proposal_journaled(&lines, &id);
    assert_eq!(lines[0]["token"], lines[1]["token"]);
    let status = call(&client, "proposal_status", json!({ "id": id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "approved", "{status}");
    assert_eq!(status["acted"], true);
    let outcomes = status["outcomes"].as_array().unwrap();
    assert_eq!(outcomes.len(), 6);
    assert!(
        outcomes.iter().all(|o| o["outcome"] == "done"),
        "{outcomes:?}"
    );
    // Approving again does nothing.
    let (code, _, err) = run(Some(dir), data, &["approve", &id, "--write", "--yes"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("is approved"), "{err}");
    assert_eq!(mutating(), sent);

    // Proposed before the suspend was approved, a reconcile is now refused on every target (a
    // suspended object does not reconcile): approval says what changed and sends nothing.
    let sent = mutating();
    let (code, _, err) = run(
        Some(dir),
        data,
        &["approve", &changed_id, "--write", "--yes"],
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("the fleet changed since proposal") && err.contains("would now refused"),
        "{err}"
    );
    assert_eq!(mutating(), sent, "nothing was sent");
    let status = call(&client, "proposal_status", json!({ "id": changed_id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "refused", "{status}");
    assert!(status["decision"]["changed"][0].is_string(), "{status}");

    // Rejected: the reason reaches the assistant, and it can no longer be approved.
    let proposed = call(&client, "resume", json!({ "kind": "ks", "name": "apps" }))
        .await
        .unwrap();
    let rejected_id = proposed["proposal"].as_str().unwrap().to_string();
    let (code, _, err) = run(
        None,
        data,
        &["reject", &rejected_id, "--reason", "not during the freeze"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let status = call(&client, "proposal_status", json!({ "id": rejected_id }))
        .await
        .unwrap();
    assert_eq!(status["status"], "rejected", "{status}");
    assert_eq!(status["decision"]["reason"], "not during the freeze");
    let (code, _, err) = run(
        Some(dir),
        data,
        &["approve", &rejected_id, "--write", "--yes"],
    )
    .await;
    assert_eq!(code, 1);
    assert!(err.contains("is rejected"), "{err}");
    assert_eq!(mutating(), sent);
    client.cancel().await.unwrap();

    // Expired before anyone decided: it never acts.
    let client = proposing(dir, data, &["--proposal-expiry", "0s"]).await;
    let proposed = call(&client, "resume", json!({ "kind": "ks", "name": "apps" }))
        .await
        .unwrap();
    let expired_id = proposed["proposal"].as_str().unwrap().to_string();
    let (code, _, err) = run(
        Some(dir),
        data,
        &["approve", &expired_id, "--write", "--yes"],
    )
    .await;
    assert_eq!(code, 1);
    assert!(err.contains("is expired"), "{err}");
    let (code, _, err) = run(None, data, &["reject", &expired_id, "--reason", "late"]).await;
    assert_eq!(code, 1);
    assert!(err.contains("has expired"), "{err}");
    assert_eq!(mutating(), sent, "nothing was sent");
    client.cancel().await.unwrap();
    assert_eq!(
        journal(data).len(),
        2,
        "the approved proposal's intent and outcome only"
    );
}

/// A halt proposed by an assistant targets what the TUI's halt would (the copies the newest
/// revision has not reached), acts only once a person approves, and its undoing resumes exactly
/// those.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposed_halt_suspends_where_the_newest_revision_has_not_arrived() {
    use std::collections::BTreeSet;
    let sim = common::start().await;
    let dir = sim.dir.path();
    let data = tempfile::tempdir().unwrap();
    let data = data.path();
    let thing = ("Kustomization", "flux-system", "flux-system");
    let client = proposing(dir, data, &[]).await;
    let halt = json!({ "kind": "ks", "namespace": "flux-system", "name": "flux-system",
                       "why": "the new revision breaks the apps" });
    let proposed = call(&client, "halt_rollout", halt.clone()).await.unwrap();
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let targets = proposed["targets"].as_array().unwrap();
    let would = targets[0]["would"].as_str().unwrap();
    assert!(
        would.contains("\"suspend\":true") && would.contains("halted rollout of "),
        "{would}"
    );
    let newest = would
        .split("halted rollout of ")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let behind: BTreeSet<String> = common::copies_of(&sim, thing)
        .into_iter()
        .filter(|(_, _, o)| o.applied.as_deref() != Some(newest.as_str()) && !o.suspended)
        .map(|(c, _, _)| c)
        .collect();
    let proposed_on: BTreeSet<String> = targets
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    assert!(!behind.is_empty());
    assert_eq!(proposed_on, behind);
    assert!(
        common::copies_of(&sim, thing)
            .iter()
            .all(|(_, _, o)| !o.suspended),
        "nothing sent before approval"
    );

    let (code, out, err) = run(Some(dir), data, &["approve", &id, "--write", "--yes"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let suspended: BTreeSet<String> = common::copies_of(&sim, thing)
        .into_iter()
        .filter(|(_, _, o)| o.suspended)
        .map(|(c, _, _)| c)
        .collect();
    assert_eq!(suspended, behind);

    // Its undoing: exactly those resumed.
    let mut resume = halt;
    resume["resume"] = json!(true);
    let proposed = call(&client, "halt_rollout", resume).await.unwrap();
    assert_eq!(proposed["count"].as_u64(), Some(behind.len() as u64));
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let (code, out, err) = run(Some(dir), data, &["approve", &id, "--write", "--yes"]).await;
    // 7: resumed, some not ready when their controllers reconciled them.
    assert!(
        code == 0 || (code == 7 && err.contains("not ready when handled")),
        "{code}: {out}\n{err}"
    );
    assert!(
        common::copies_of(&sim, thing)
            .iter()
            .all(|(_, _, o)| !o.suspended),
        "the halt undone"
    );
    client.cancel().await.unwrap();
}
