//! One request through every front door — `fluxfleet reconcile`, MCP `--write` (dry run, then
//! its token), MCP `--propose` then `fluxfleet approve`, the keys of a live TUI, MCP
//! `--propose` then the TUI's `:proposals` approval — gives the same targets, is journaled once
//! through each and leaves one Event a door on each target; and every door refuses with the
//! same words when the one door (`actions::admit`) refuses it (a scope naming no place, more
//! targets than `actions.max_targets` — the TUI's approval included — read-only). The keys'
//! refusals are the same variants (`tests/tui/actions.rs`); a halt's two doors and a writing
//! plugin's hand-off are driven in `tests/doors_halt_plugin.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::path::Path;

use common::doors::{Doors, Targets, targets_of};
use common::fluxfleet;
use common::mcp::{call, journal};
use fluxfleet::actions::Refused;
use fluxfleet::fleet::verbs::Verb;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_through_every_front_door_the_same_targets_and_the_same_refusals() {
    let sim = common::start_with(|c| c.clusters = 5).await;
    let names = sim.workload_clusters();
    let (a, b) = (names[0].clone(), names[1].clone());
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("fluxfleet.toml");
    std::fs::write(&config, "[actions]\nmax_targets = 10\n").unwrap();
    let data = scratch.path().join("data");
    let fleet = sim.dir.path().join("kubeconfigs");
    let doors = Doors {
        fleet: &fleet,
        data: &data,
        config: &config,
    };
    let expected: Targets = [&a, &b]
        .iter()
        .map(|c| {
            let ks = ("Kustomization", "flux-system", "apps");
            (c.to_string(), ks.0.into(), ks.1.into(), ks.2.into())
        })
        .collect();

    // The same request: reconcile Kustomization apps in flux-system on two clusters.
    let cli = [
        "reconcile",
        "ks",
        "apps",
        "-n",
        "flux-system",
        "--cluster",
        &a,
        "--cluster",
        &b,
        "--write",
        "--yes",
        "-o",
        "ndjson",
        "--timeout",
        "60s",
    ];
    let (out, lines) = doors.outcomes(&cli).await;
    assert_eq!(targets_of(&lines), expected, "the command's targets");
    assert!(lines.iter().all(|l| l["outcome"] == "done"), "{out}");

    let args = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                       "clusters": [a, b] });
    let writer = doors.mcp("--write").await;
    let dry = call(&writer, "reconcile", args.clone()).await.unwrap();
    assert_eq!(
        targets_of(dry["targets"].as_array().unwrap()),
        expected,
        "MCP --write's dry run"
    );
    let mut confirmed = args.clone();
    confirmed["token"] = dry["token"].clone();
    confirmed["count"] = dry["count"].clone();
    let done = call(&writer, "reconcile", confirmed).await.unwrap();
    assert_eq!(
        targets_of(done["results"].as_array().unwrap()),
        expected,
        "MCP --write's results: {done}"
    );
    assert_eq!(done["done"], 2, "{done}");

    let proposer = doors.mcp("--propose").await;
    let proposed = call(&proposer, "reconcile", args.clone()).await.unwrap();
    assert_eq!(
        targets_of(proposed["targets"].as_array().unwrap()),
        expected,
        "MCP --propose's proposal"
    );
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let approve = ["approve", &id, "--yes", "--write", "-o", "ndjson"];
    let (_, lines) = doors.outcomes(&approve).await;
    assert_eq!(targets_of(&lines), expected, "approve's targets");

    // The keys: the same object marked on the two clusters, reconciled, in a live TUI journaling
    // into the same data directory.
    keys(&sim, &[&a, &b], &data.join("audit.jsonl")).await;

    // The TUI's approval: another proposal of the same request, approved in `:proposals`.
    let proposed = call(&proposer, "reconcile", args.clone()).await.unwrap();
    let in_tui = proposed["proposal"].as_str().unwrap().to_string();
    let approval = Approval {
        id: &in_tui,
        max_targets: 10,
        sees: "reconcile 2 objects on 2 clusters",
        sends: true,
    };
    approve_in_tui(&sim, &data.join("audit.jsonl"), &approval).await;

    // The journal: each door's attempt once, with the same targets.
    let attempts: Vec<(Option<String>, Targets)> = journal(&data)
        .iter()
        .filter(|l| l["stage"] == "outcome")
        .map(|l| {
            let door = match (&l["tool"], &l["proposal"]) {
                (_, Value::Object(p)) => Some(format!("approve {}", p["id"])),
                (Value::String(tool), _) => Some(tool.clone()),
                _ => None,
            };
            (door, targets_of(l["targets"].as_array().unwrap()))
        })
        .collect();
    assert_eq!(attempts.len(), 5, "{attempts:?}");
    assert!(attempts.iter().all(|(_, t)| *t == expected), "{attempts:?}");
    // The command and the keys are fluxfleet's own (no tool); MCP names its client; approve
    // and the TUI's approval their proposal.
    let doors_seen: Vec<Option<String>> = attempts.iter().map(|(d, _)| d.clone()).collect();
    assert_eq!(
        doors_seen,
        [
            None,
            doors_seen[1].clone().filter(|t| t.starts_with("mcp:")),
            Some(format!("approve {:?}", id)),
            None,
            Some(format!("approve {in_tui:?}")),
        ],
        "one attempt a door: {attempts:?}"
    );
    let journaled = journal(&data).len();

    // The team sees each: one Event a door on each target, saying through what.
    for cluster in [&a, &b] {
        let client = common::client(&sim.handle.files.fleet, cluster).await;
        let events = kube::Api::<k8s_openapi::api::core::v1::Event>::namespaced(
            client,
            "flux-system",
        )
        .list(&kube::api::ListParams::default().fields(
            "involvedObject.kind=Kustomization,involvedObject.name=apps,reason=ReconcileRequested",
        ))
        .await
        .unwrap();
        let mut said: Vec<String> = events
            .items
            .into_iter()
            .filter_map(|e| e.message)
            .filter(|m| m.contains("with fluxfleet"))
            .collect();
        said.sort();
        assert_eq!(said.len(), 5, "{cluster}: {said:?}");
        let through_mcp = said.iter().filter(|m| m.contains(" through mcp:")).count();
        assert_eq!(through_mcp, 1, "{said:?}");
        for id in [&id, &in_tui] {
            let proposed = format!("proposal {id} from mcp:");
            assert_eq!(
                said.iter().filter(|m| m.contains(&proposed)).count(),
                1,
                "{said:?}"
            );
        }
    }

    // Refused by the one guardrail, in the same words through every door.
    let unscoped = Refused::Unscoped {
        verb: Verb::Reconcile,
    }
    .to_string();
    let (code, _, err) = doors.run(&["reconcile", "ks", "--write", "--yes"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&unscoped), "the command: {err}");
    // Said before any cluster is asked anything: even where there is no fleet to read.
    let out = fluxfleet()
        .args([
            "reconcile",
            "ks",
            "--write",
            "--yes",
            "--kubeconfig-dir",
            "/nonexistent",
        ])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&unscoped), "the command, no fleet: {err}");
    for (door, client) in [("--write", &writer), ("--propose", &proposer)] {
        let refused = call(client, "reconcile", json!({ "kind": "ks" }))
            .await
            .unwrap_err();
        assert!(refused.contains(&unscoped), "MCP {door}: {refused}");
    }

    // A proposal made under a wider limit, approved under a narrower one: refused on approval.
    let later = call(&proposer, "reconcile", args.clone()).await.unwrap();
    let later = later["proposal"].as_str().unwrap().to_string();
    std::fs::write(&config, "[actions]\nmax_targets = 1\n").unwrap();
    let too_many = Refused::TooMany { count: 2, max: 1 }.to_string();
    let (code, _, err) = doors.run(&cli).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&too_many), "the command: {err}");
    let (code, _, err) = doors.run(&["approve", &later, "--yes", "--write"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&too_many), "approve: {err}");
    // The TUI's approval under the same limit: refused in approve's words, before any
    // confirmation; the proposal stays pending.
    let refused_in_tui = format!("{too_many}; proposal {later} stays pending");
    let approval = Approval {
        id: &later,
        max_targets: 1,
        sees: &refused_in_tui,
        sends: false,
    };
    approve_in_tui(&sim, &data.join("audit.jsonl"), &approval).await;
    for flag in ["--write", "--propose"] {
        // Started again: the config is read once, when a server starts.
        let client = doors.mcp(flag).await;
        let refused = call(&client, "reconcile", args.clone()).await.unwrap_err();
        assert!(refused.contains(&too_many), "MCP {flag}: {refused}");
        client.cancel().await.unwrap();
    }

    // Read-only: the command and approve refuse alike (MCP without --write has no write tool).
    let read_only = Refused::ReadOnly {
        verb: Verb::Reconcile,
    }
    .to_string();
    std::fs::write(&config, "[actions]\nmax_targets = 10\n").unwrap();
    let (code, _, err) = doors.run(&cli[..cli.len() - 6]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&read_only), "the command: {err}");
    let (code, _, err) = doors.run(&["approve", &later, "--yes"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&read_only), "approve: {err}");

    assert_eq!(
        journal(&data).len(),
        journaled,
        "a refusal journals nothing"
    );
    writer.cancel().await.unwrap();
    proposer.cancel().await.unwrap();
}

/// Reconciles Kustomization flux-system/apps on `clusters` from the keys of a live TUI in write
/// mode: each cluster's row found and marked, `R`, confirmed, followed until handled.
async fn keys(sim: &common::Sim, clusters: &[&String], journal: &Path) {
    use crossterm::event::KeyCode;
    let (config, inventory) = common::tui::fleet(sim);
    let all = inventory.clusters.len();
    let write = Some(fluxfleet::config::Mode::Write);
    let (mut person, app, _) = common::tui::session(config, inventory, write, Some(journal.into()));
    let n = clusters.len();
    let drive = async {
        let live = format!("clusters {all}/{all} live");
        person
            .sees("every cluster live", |s| s.contains(&live))
            .await;
        for cluster in clusters {
            person.command(&format!("cluster {cluster}"));
            person.press(KeyCode::Char('/'));
            person.type_text("Kustomization flux-system/apps");
            person.press(KeyCode::Enter);
            person.press(KeyCode::Char(' '));
        }
        person.press(KeyCode::Char('R'));
        let asks = format!("reconcile {n} objects on {n} clusters");
        person.sees("the confirmation", |s| s.contains(&asks)).await;
        person.press(KeyCode::Char('y'));
        let handled = format!("{n} handled");
        person
            .sees("every reconcile handled", |s| s.contains(&handled))
            .await;
        person.press(KeyCode::Esc);
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
}

/// A proposal approved in a live TUI's `:proposals` (the newest first, so `id` is the first
/// row), under `max_targets`: what the person sees after `a`, then `y` when it asked to
/// confirm, followed until handled.
struct Approval<'a> {
    id: &'a str,
    max_targets: usize,
    sees: &'a str,
    /// It asks to confirm, and is sent once confirmed.
    sends: bool,
}

async fn approve_in_tui(sim: &common::Sim, journal: &Path, approval: &Approval<'_>) {
    use crossterm::event::KeyCode;
    let (mut config, inventory) = common::tui::fleet(sim);
    config.actions.max_targets = approval.max_targets;
    let all = inventory.clusters.len();
    let write = Some(fluxfleet::config::Mode::Write);
    let (mut person, app, _) = common::tui::session(config, inventory, write, Some(journal.into()));
    let drive = async {
        let live = format!("clusters {all}/{all} live");
        person
            .sees("every cluster live", |s| s.contains(&live))
            .await;
        person.command("proposals");
        person
            .sees("the proposal", |s| s.contains(approval.id))
            .await;
        person.press(KeyCode::Char('a'));
        person
            .sees(approval.sees, |s| s.contains(approval.sees))
            .await;
        if approval.sends {
            person.press(KeyCode::Char('y'));
            person
                .sees("every reconcile handled", |s| s.contains("2 handled"))
                .await;
            person.press(KeyCode::Esc);
        }
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
}
