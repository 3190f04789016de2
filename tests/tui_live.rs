//! The whole TUI, headless, against an in-process simulated fleet: the real session (config,
//! engine, event loop, fetches) on a recording test backend, driven by key events the way a
//! person would type them — fleet → workspace → cluster → a failing object → its events and YAML
//! — and checked on the rendered screen, including a resize to 80×24.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use common::truth::seen;
use common::tui::{Person, fleet, session};

use crossterm::event::{KeyCode, KeyModifiers};
use fluxfleet::config::Mode;
use fluxfleet::fleet::FluxKind;
use k8s_openapi::api::core::v1::Event as KubeEvent;
use kube::api::{Api, ListParams};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn from_the_fleet_view_down_to_a_failing_objects_events_and_yaml() {
    let sim = common::start().await;
    let (config, inventory) = fleet(&sim);
    let clusters = inventory.clusters.len();

    // A failing Kustomization or HelmRelease somewhere, and what its cluster says about it.
    let (cluster, object) = sim
        .handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .find_map(|c| {
            let o = c.objects.iter().find(|o| {
                o.health.is_failing()
                    && !o.suspended
                    && (o.kind == "Kustomization" || o.kind == "HelmRelease")
            })?;
            Some((c.clone(), o.clone()))
        })
        .expect("the simulated fleet has a failing object");
    let client = common::client(&sim.handle.files.fleet, &cluster.name).await;
    let recorded = Api::<KubeEvent>::namespaced(client, &object.namespace)
        .list(&ListParams::default().fields(&format!(
            "involvedObject.kind={},involvedObject.name={}",
            object.kind, object.name
        )))
        .await
        .unwrap();
    let reason = recorded
        .items
        .first()
        .and_then(|e| e.reason.clone())
        .expect("the failing object has an event");

    let (mut person, app, _) = session(config, inventory, Some(Mode::ReadOnly), None);
    let drive = async {
        let all_live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all_live))
            .await;

        person.open(&cluster.workspace);
        let crumbs = format!("fleet ▸ {}", cluster.workspace);
        person.sees("the workspace", |s| s.contains(&crumbs)).await;

        person.open(&cluster.name);
        let crumbs = format!("{crumbs} ▸ {}", cluster.name);
        let screen = person.sees("the cluster", |s| s.contains(&crumbs)).await;
        assert!(screen.contains(&object.name), "{screen}");

        let kind = FluxKind::parse(&object.kind).unwrap();
        let title = format!("{kind} {}/{}", object.namespace, object.name);
        person.open(&title);
        let crumbs = format!("{crumbs} ▸ {title}");
        let screen = person.sees("the object", |s| s.contains(&crumbs)).await;
        let health = seen(object.health).to_string();
        assert!(
            screen
                .lines()
                .any(|l| l.contains("health") && l.contains(&health)),
            "the detail shows {health}:\n{screen}"
        );

        person.press(KeyCode::Char('e'));
        let screen = person
            .sees("the events", |s| s.contains("newest first"))
            .await;
        assert!(screen.contains("Warning"), "{screen}");
        assert!(
            screen.contains(&reason),
            "the event's reason {reason}:\n{screen}"
        );

        person.press(KeyCode::Char('y'));
        let screen = person
            .sees("the YAML", |s| s.contains("yaml (managedFields removed)"))
            .await;
        assert!(
            screen.contains(&format!("kind: {}", object.kind)),
            "{screen}"
        );
        assert!(
            screen.contains(&format!("name: {}", object.name)),
            "{screen}"
        );
        assert!(!screen.contains("managedFields:"), "{screen}");

        // Scrolling moves through the YAML: its first line leaves the pane.
        person.press(KeyCode::Char('j'));
        person.press(KeyCode::Char('j'));
        person
            .sees("the YAML scrolled", |s| {
                s.contains("yaml (managedFields removed)") && !s.contains("apiVersion:")
            })
            .await;

        person.resize(80, 24);
        let screen = person
            .sees("an 80×24 frame", |s| {
                s.lines().count() == 24 && s.lines().all(|l| l.chars().count() == 80)
            })
            .await;
        let last = screen.lines().last().unwrap();
        assert!(last.contains("read-only"), "status line: {last}");
        assert!(screen.contains(&object.name), "{screen}");

        // Back to the fleet: Esc clears each view's filter, then pops it.
        for _ in 0..5 {
            person.press(KeyCode::Esc);
        }
        person
            .sees("the fleet view again", |s| {
                s.lines().next().is_some_and(|l| !l.contains('▸'))
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_no_action_key_or_command_sends_anything() {
    let sim = common::start().await;
    let (config, inventory) = fleet(&sim);
    let clusters = inventory.clusters.len();
    let cluster = sim.handle.cluster_names()[0].clone();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("audit.jsonl");
    let (mut person, app, _) = session(config, inventory, None, Some(journal.clone()));
    let drive = async {
        let all_live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all_live))
            .await;
        // On one cluster's objects, on triage groups, on every object of the fleet; with and
        // without marks; every action key and command, each followed by what would confirm.
        let confirm = |p: &Person| {
            p.press(KeyCode::Enter);
            p.press(KeyCode::Char('y'));
            p.type_text("30");
            p.press(KeyCode::Enter);
        };
        for view in [format!("cluster {cluster}"), "triage".into(), "all".into()] {
            person.command(&view);
            person.press(KeyCode::Char('j'));
            for code in ['m', ' ', 's', 'r', 'R', 'W', 'F'] {
                person.press(KeyCode::Char(code));
                confirm(&person);
            }
            person.chord(KeyCode::Char('r'), KeyModifiers::ALT);
            confirm(&person);
            person.chord(KeyCode::Char('r'), KeyModifiers::CONTROL);
            confirm(&person);
            for line in [
                "mark",
                "suspend",
                "resume",
                "reconcile",
                "reconcile --with-source",
                "force",
                "reset",
                "results",
            ] {
                person.command(line);
                confirm(&person);
            }
            person.command("fleet");
        }
        person.command("suspend");
        person
            .sees("the read-only explanation", |s| {
                s.contains("read-only: nothing can suspend")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    assert_eq!(
        sim.handle.stats()["mutatingTotal"],
        0,
        "no mutating request reached any cluster"
    );
    assert!(
        !journal.exists(),
        "nothing was attempted, nothing journaled"
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_write_mode_a_suspend_from_the_tui_reaches_the_cluster_and_the_journal() {
    let sim = common::start().await;
    let (config, inventory) = fleet(&sim);
    let clusters = inventory.clusters.len();
    let (cluster, object) = sim
        .handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .find_map(|c| {
            let o = c
                .objects
                .iter()
                .find(|o| o.kind == "Kustomization" && !o.suspended)?
                .clone();
            Some((c.name, o))
        })
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("audit.jsonl");
    let (mut person, app, _) = session(config, inventory, Some(Mode::Write), Some(journal.clone()));
    let drive = async {
        let all_live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all_live))
            .await;
        person.command(&format!("cluster {cluster}"));
        person.press(KeyCode::Char('/'));
        person.type_text(&format!(
            "Kustomization {}/{}",
            object.namespace, object.name
        ));
        person.press(KeyCode::Enter);
        // A reconcile first: requested, then handled when the watch shows the token.
        person.press(KeyCode::Char('R'));
        person
            .sees("the reconcile's confirmation", |s| {
                s.contains("reconcile 1 object on 1 cluster")
            })
            .await;
        person.press(KeyCode::Char('y'));
        person
            .sees("the reconcile handled", |s| s.contains("1 handled"))
            .await;
        person.press(KeyCode::Esc);
        // With its source: the source first (read until handled), then the object.
        person.press(KeyCode::Char('W'));
        person
            .sees("the confirmation with source", |s| {
                s.contains("1 object on 1 cluster")
            })
            .await;
        person.press(KeyCode::Char('y'));
        person
            .sees("the reconcile with source handled", |s| {
                s.contains("reconcile-with-source: 1/1 sent · 0 requested · 1 handled")
            })
            .await;
        person.press(KeyCode::Esc);
        person.press(KeyCode::Char('s'));
        person
            .sees("the confirmation", |s| {
                s.contains("suspend 1 object on 1 cluster")
            })
            .await;
        person.type_text("bad chart");
        person.press(KeyCode::Enter);
        person
            .sees("the last question", |s| s.contains("<y> to confirm"))
            .await;
        person.press(KeyCode::Char('y'));
        let screen = person.sees("the outcome", |s| s.contains("1 done")).await;
        assert!(screen.contains("reason: bad chart"), "{screen}");
        // Back in the cluster's list, the watch shows who suspended it and why.
        person.press(KeyCode::Esc);
        person
            .sees("the suspension in the list", |s| {
                s.contains("suspended by") && s.contains("bad chart")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    let suspended = sim
        .handle
        .truth()
        .into_iter()
        .find(|c| c.name == cluster)
        .unwrap()
        .objects
        .into_iter()
        .find(|o| {
            o.kind == "Kustomization" && o.name == object.name && o.namespace == object.namespace
        })
        .unwrap()
        .suspended;
    assert!(suspended);
    // The journal line is written once every target has an outcome: it follows the screen.
    common::eventually("the journal line", || async { journal.exists() }).await;
    let all = journaled(&journal, 3).await;
    // The reconcile: done when handled, and when that was seen.
    let reconciled = all
        .iter()
        .find(|l| l["action"] == "reconcile" && l["stage"] == "outcome")
        .unwrap();
    assert_eq!(reconciled["targets"][0]["outcome"], "done");
    assert!(
        reconciled["targets"][0]["handledAt"].is_string(),
        "{reconciled}"
    );
    let lines: Vec<&serde_json::Value> = all.iter().filter(|l| l["action"] == "suspend").collect();
    assert_eq!(lines[0]["stage"], "intent", "the intent comes first");
    assert_eq!(lines[0]["targets"][0]["outcome"], "intended");
    let line = &lines[1];
    assert_eq!(line["stage"], "outcome");
    assert_eq!(line["action"], "suspend");
    assert_eq!(line["reason"], "bad chart");
    assert_eq!(line["targets"][0]["outcome"], "done");
    sim.handle.shutdown().await;
}

/// A rollout halted from its matrix reaches exactly the clusters the newest revision has not
/// (journaled with its reason), and resuming the halt undoes exactly that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn halting_a_rollout_suspends_where_it_has_not_arrived_and_resuming_undoes_it() {
    let sim = common::start().await;
    let (mut config, inventory) = fleet(&sim);
    // Each workspace a ring: half of them already run the newest revisions.
    config.rollout.rings.patterns = Vec::new();
    let clusters = inventory.clusters.len();
    let copies = || {
        common::copies_of(&sim, ("Kustomization", "flux-system", "flux-system"))
            .into_iter()
            .map(|(cluster, _, o)| (cluster, o))
            .collect::<Vec<_>>()
    };
    let before = copies();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("audit.jsonl");
    let (mut person, app, _) = session(config, inventory, Some(Mode::Write), Some(journal.clone()));
    let drive = async {
        person
            .in_the_matrix(clusters, "flux-system", "flux-system")
            .await;
        person.press(KeyCode::Char('H'));
        let screen = person
            .sees("the halt's confirmation", |s| s.contains("<y> to confirm"))
            .await;
        assert!(screen.contains("halted rollout of"), "{screen}");
        let newest: String = screen
            .split("halted rollout of ")
            .nth(1)
            .unwrap()
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect();
        let halting: Vec<&String> = before
            .iter()
            .filter(|(_, o)| o.applied.as_deref() != Some(newest.as_str()) && !o.suspended)
            .map(|(c, _)| c)
            .collect();
        person.press(KeyCode::Char('y'));
        person.sees("the halt done", |s| s.contains(" done")).await;
        person.press(KeyCode::Esc);
        // As a person would, resume once the matrix shows every halted copy suspended: the
        // resume looks for what the view shows suspended by the halt.
        person
            .sees("every halted copy suspended", |s| {
                halting.iter().all(|c| {
                    s.lines()
                        .any(|l| l.contains(c.as_str()) && l.contains("suspended"))
                })
            })
            .await;
        person.press(KeyCode::Char('U'));
        person
            .sees("the resume's confirmation", |s| {
                s.contains("<y> to confirm")
            })
            .await;
        person.press(KeyCode::Char('y'));
        person
            .sees("the resume done", |s| {
                s.contains(" done") || s.contains("handled")
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    // The journal: one halt, on the copies not on the newest revision, with its reason; then
    // one resume of exactly those.
    let lines = journaled(&journal, 2).await;
    let outcome = |action: &str| {
        lines
            .iter()
            .find(|l| l["action"] == action && l["stage"] == "outcome")
            .unwrap_or_else(|| panic!("{action} in {lines:#?}"))
            .clone()
    };
    let halt = outcome("suspend");
    let reason = halt["reason"].as_str().unwrap().to_string();
    let newest = reason
        .strip_prefix("halted rollout of ")
        .unwrap()
        .to_string();
    let halted: std::collections::BTreeSet<String> = halt["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    let expected: std::collections::BTreeSet<String> = before
        .iter()
        .filter(|(_, o)| o.applied.as_deref() != Some(newest.as_str()) && !o.suspended)
        .map(|(c, _)| c.clone())
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(halted, expected, "{halt:#}");
    let resumed: std::collections::BTreeSet<String> = outcome("resume")["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(resumed, halted);
    // On the clusters: nothing left suspended by the halt.
    assert!(
        copies()
            .iter()
            .all(|(c, o)| !halted.contains(c) || !o.suspended)
    );
}

/// A proposal an assistant made through `fluxfleet mcp --propose`, approved in the TUI: sent
/// once, exactly as proposed, journaled with the proposer and the approver, and its outcomes
/// recorded on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proposal_approved_in_the_tui_acts_once_and_names_proposer_and_approver() {
    use rmcp::ServiceExt;
    let sim = common::start().await;
    let (config, inventory) = fleet(&sim);
    let clusters = inventory.clusters.len();
    let data = tempfile::tempdir().unwrap();
    let journal = data.path().join("audit.jsonl");
    let mut cmd = common::fluxfleet();
    cmd.env("FLUXFLEET_DATA_DIR", data.path())
        .args(["mcp", "--propose", "--kubeconfig-dir"])
        .arg(sim.dir.path().join("kubeconfigs"));
    let assistant = ().serve(rmcp::transport::TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let scope = serde_json::json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                                    "reason": "freeze", "why": "apps flaps" });
    let proposed = common::mcp::call(&assistant, "suspend", scope)
        .await
        .unwrap();
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let count = proposed["count"].as_u64().unwrap() as usize;
    assistant.cancel().await.unwrap();
    let mutating = || sim.handle.stats()["mutatingTotal"].as_u64().unwrap();
    let before = mutating();
    let patches = || sim.handle.stats()["patchTotal"].as_u64().unwrap();
    let patched = patches();

    let (mut person, app, _) = session(config, inventory, Some(Mode::Write), Some(journal.clone()));
    let drive = async {
        let all_live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&all_live))
            .await;
        person.command("proposals");
        let screen = person
            .sees("the proposal", |s| s.contains("pending") && s.contains(&id))
            .await;
        assert!(screen.contains("apps flaps"), "{screen}");
        assert!(screen.contains("\"suspend\":true"), "the patches: {screen}");
        person.press(KeyCode::Char('a'));
        let asked = format!("suspend {count} objects");
        person
            .sees("the confirmation", |s| s.contains(&asked))
            .await;
        person.press(KeyCode::Char('y'));
        let done = format!("{count} done");
        person.sees("the outcome", |s| s.contains(&done)).await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    assert_eq!(
        mutating() - before,
        2 * count as u64,
        "one patch and one Event a target, once"
    );
    assert_eq!(
        patches() - patched,
        count as u64,
        "one patch a target, once"
    );
    let lines = journaled(&journal, 1).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    common::mcp::assert_proposal_journaled(&lines, &id);
    assert!(lines.iter().all(|l| l["reason"] == "freeze"), "{lines:?}");
    let store = fluxfleet::proposals::Store::at(data.path().join("proposals"));
    common::eventually("the outcomes on the proposal", || async {
        store.load(&id).unwrap().outcomes.is_some()
    })
    .await;
    let approved = store.load(&id).unwrap();
    assert_eq!(
        approved.status(jiff::Timestamp::now()),
        fluxfleet::proposals::ProposalStatus::Approved
    );
    let outcomes = approved.outcomes.unwrap();
    assert_eq!(outcomes.len(), count);
    assert!(outcomes.iter().all(|o| o.outcome == "done"), "{outcomes:?}");
    sim.handle.shutdown().await;
}

/// The journal's lines once it holds `outcomes` outcome lines (it is written when every target
/// of an action has one, after the screen shows it).
async fn journaled(journal: &std::path::Path, outcomes: usize) -> Vec<serde_json::Value> {
    common::eventually("the journal's outcome lines", || async {
        std::fs::read_to_string(journal)
            .unwrap_or_default()
            .matches("\"stage\":\"outcome\"")
            .count()
            == outcomes
    })
    .await;
    std::fs::read_to_string(journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
