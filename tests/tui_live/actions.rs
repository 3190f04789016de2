//! Actions from the live TUI: nothing sent in read-only mode, a suspend in write mode reaching the
//! cluster and the journal, and a proposal approved once with its proposer and approver named.

use super::*;

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
