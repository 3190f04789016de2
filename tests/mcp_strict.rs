//! Every tool of `fluxfleet mcp` parses its arguments strictly, as an assistant meets it: an
//! argument a tool does not take is refused by name (with the one it most likely meant) and the
//! call does nothing — no proposal kept, nothing sent — and every schema says so with
//! `additionalProperties: false`; each tool advertises, in each mode, exactly what it reads there.
//! A write whose scope names no place is refused unless it says `all`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeMap;
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
    assert_eq!(proposals(data.path()).await, json!([]));
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

/// What each tool takes in each mode: exactly what it reads there. `suspend`, `resume` and
/// `reconcile` take a dry run's `token` and `count` with `--write`, `why` with `--propose`, and
/// only suspend a `reason`, only reconcile `with_source`.
fn takes(mode: &str) -> BTreeMap<&'static str, Vec<&'static str>> {
    const SCOPE: [&str; 5] = ["workspace", "clusters", "kind", "namespace", "name"];
    const PAGING: [&str; 2] = ["cursor", "limit"];
    let with = |more: &[&'static str], sets: &[&[&'static str]]| {
        let mut all: Vec<&'static str> = more.to_vec();
        sets.iter().for_each(|set| all.extend_from_slice(set));
        all.sort();
        all
    };
    let mut takes = BTreeMap::from([
        ("fleet_summary", with(&["workspace"], &[])),
        (
            "list_clusters",
            with(&["workspace", "clusters", "state"], &[&PAGING]),
        ),
        ("get_objects", with(&["status"], &[&SCOPE, &PAGING])),
        ("root_causes", with(&["status"], &[&SCOPE, &PAGING])),
        ("rollouts", with(&[], &[&SCOPE, &PAGING])),
        ("drift", with(&[], &[&SCOPE, &PAGING])),
        ("gate", with(&["ring", "revision", "soak"], &[&SCOPE])),
        (
            "describe_object",
            with(&["cluster", "kind", "namespace", "name"], &[]),
        ),
        ("workloads", with(&["all"], &[&SCOPE, &PAGING])),
        (
            "trace",
            with(
                &["kind", "name", "namespace", "workspace", "clusters"],
                &[&PAGING],
            ),
        ),
        (
            "tree",
            with(
                &["kind", "name", "namespace", "workspace", "clusters"],
                &[&PAGING],
            ),
        ),
    ]);
    let confirm: &[&'static str] = match mode {
        "--write" => &["token", "count"],
        "--propose" => &["why"],
        _ => return takes,
    };
    let picked: &[&'static str] = &["status", "all"];
    takes.insert("suspend", with(&["reason"], &[&SCOPE, picked, confirm]));
    takes.insert("resume", with(&[], &[&SCOPE, picked, confirm]));
    takes.insert(
        "reconcile",
        with(&["with_source"], &[&SCOPE, picked, confirm]),
    );
    if mode == "--propose" {
        takes.insert(
            "halt_rollout",
            with(
                &[
                    "kind",
                    "namespace",
                    "name",
                    "workspace",
                    "clusters",
                    "resume",
                    "why",
                ],
                &[],
            ),
        );
        takes.insert("proposal_status", with(&["id"], &[&PAGING]));
    }
    takes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_advertises_exactly_what_it_reads_in_each_mode() {
    let sim = common::start_with(|c| c.clusters = 2).await;
    let dir = sim.dir.path();
    let suspended_before = suspended(&sim);
    for mode in ["--read-only", "--write", "--propose"] {
        let data = tempfile::tempdir().unwrap();
        let client = serve(dir, data.path(), mode).await;
        let tools = client.list_all_tools().await.unwrap();
        let advertised: BTreeMap<&str, Vec<&str>> = tools
            .iter()
            .map(|tool| {
                let properties = tool.input_schema["properties"].as_object().unwrap();
                let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
                names.sort();
                (&*tool.name, names)
            })
            .collect();
        assert_eq!(advertised, takes(mode), "{mode}");
        for tool in &tools {
            assert_eq!(
                tool.input_schema.get("additionalProperties"),
                Some(&Value::Bool(false)),
                "{mode} {}",
                tool.name
            );
        }

        // An argument of the other mode, or of another tool, is refused by name: nothing done.
        let object = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system" });
        let foreign: &[(&str, &str)] = match mode {
            "--write" => &[
                ("suspend", "why"),
                ("suspend", "with_source"),
                ("resume", "reason"),
                ("reconcile", "why"),
            ],
            "--propose" => &[
                ("suspend", "token"),
                ("resume", "count"),
                ("resume", "with_source"),
                ("reconcile", "reason"),
            ],
            _ => &[],
        };
        // And a misspelled scope, on every tool that acts in this mode: refused, never widened.
        let misspelled: &[(&str, &str)] = match mode {
            "--read-only" => &[],
            _ => &[
                ("suspend", "namespaces"),
                ("resume", "namespaces"),
                ("reconcile", "namespaces"),
            ],
        };
        for (tool, argument) in foreign.iter().chain(misspelled) {
            let mut args = object.clone();
            args[*argument] = json!("x");
            let refused = call(&client, tool, args).await.unwrap_err();
            assert!(
                refused.contains(&format!("unknown argument `{argument}`"))
                    && refused.contains("nothing was done"),
                "{mode} {tool} {argument}: {refused}"
            );
        }
        assert_eq!(proposals(data.path()).await, json!([]), "{mode}");
        client.cancel().await.unwrap();
    }
    assert_eq!(suspended(&sim), suspended_before);
}

/// The proposals kept in `data`, as `fluxfleet proposals -o json` lists them.
async fn proposals(data: &Path) -> Value {
    let out = fluxfleet()
        .env("FLUXFLEET_DATA_DIR", data)
        .args(["proposals", "-o", "json"])
        .output()
        .await
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
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
