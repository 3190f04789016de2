//! The doors `tests/front_doors.rs` does not drive with its one reconcile: halting a rollout (the
//! TUI's `H` in a rollout's matrix, MCP `halt_rollout` then `fluxfleet approve`) and a writing
//! plugin's hand-off (its key in a live TUI). A halt gives the same targets through both of its
//! doors and is refused over `actions.max_targets` in the same words; a target a deny rule
//! covers is refused in the same words by the command, MCP's dry run, a proposal, and a writing
//! plugin on it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::doors::Doors;
use common::mcp::{call, journal};
use crossterm::event::KeyCode;
use fluxfleet::actions::Refused;
use fluxfleet::config::Config;
use serde_json::{Value, json};

/// The thing whose rollout is halted, as the simulator names it.
const THING: (&str, &str, &str) = ("Kustomization", "flux-system", "flux-system");

/// The config every door reads: `max_targets`, and a deny rule on `denied`'s Kustomization
/// flux-system/apps.
fn config_text(max_targets: usize, denied: &str) -> String {
    format!(
        "[actions]\nmax_targets = {max_targets}\n\n[[actions.deny]]\ncluster = \"{denied}\"\n\
         kind = \"Kustomization\"\nnamespace = \"flux-system\"\nname = \"apps\"\n\n\
         [rollout]\nrings = []\n"
    )
}

/// The TUI's config from the same file, with a writing plugin on key P.
fn tui_config(sim: &common::Sim, file: &Path) -> (Config, fluxfleet::inventory::Inventory) {
    let (fleet, inventory) = common::tui::fleet(sim);
    let text = std::fs::read_to_string(file).unwrap();
    let (mut config, warnings) = Config::parse(Some(&text), file);
    assert!(warnings.is_empty(), "{warnings:?}");
    config.engine = fleet.engine;
    config.plugins = vec![fluxfleet::config::plugins::PluginEntry {
        name: "fix".into(),
        key: "P".into(),
        scopes: vec!["all".into()],
        command: "true".into(),
        args: Vec::new(),
        description: String::new(),
        background: true,
        confirm: false,
        writes: true,
        read_only_args: Vec::new(),
        needs: Vec::new(),
        enabled: true,
    }];
    (config, inventory)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_halt_and_a_writing_plugin_meet_the_same_checks_as_every_other_door() {
    let sim = common::start().await;
    let names = sim.workload_clusters();
    let denied = names[0].clone();
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("fluxfleet.toml");
    let data = scratch.path().join("data");
    let fleet = sim.dir.path().join("kubeconfigs");
    let doors = Doors {
        fleet: &fleet,
        data: &data,
        config: &config,
    };
    let clusters = common::tui::fleet(&sim).1.clusters.len();
    let behind: BTreeSet<String> = common::copies_of(&sim, THING)
        .into_iter()
        .filter(|(_, _, o)| !o.suspended)
        .map(|(c, _, _)| c)
        .collect();

    // The halt proposed under a wide limit: its targets.
    std::fs::write(&config, config_text(100, &denied)).unwrap();
    let proposer = doors.mcp("--propose").await;
    let halt = json!({ "kind": "ks", "namespace": THING.1, "name": THING.2,
                       "why": "the new revision breaks the apps" });
    let proposed = call(&proposer, "halt_rollout", halt.clone()).await.unwrap();
    let id = proposed["proposal"].as_str().unwrap().to_string();
    let proposed_on: BTreeSet<String> = proposed["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cluster"].as_str().unwrap().to_string())
        .collect();
    let count = proposed_on.len();
    assert!(count > 1 && proposed_on.is_subset(&behind), "{proposed}");
    proposer.cancel().await.unwrap();

    // Over the limit: MCP and the TUI's H refuse it in the same words, nothing sent.
    std::fs::write(&config, config_text(1, &denied)).unwrap();
    let too_many = Refused::TooMany { count, max: 1 }.to_string();
    let narrow = doors.mcp("--propose").await;
    let refused = call(&narrow, "halt_rollout", halt.clone())
        .await
        .unwrap_err();
    assert!(refused.contains(&too_many), "MCP halt_rollout: {refused}");
    narrow.cancel().await.unwrap();
    let (code, _, err) = doors.run(&["approve", &id, "--yes", "--write"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&too_many), "approve: {err}");
    let (tui, inventory) = tui_config(&sim, &config);
    let journal_file = data.join("audit.jsonl");
    let write = Some(fluxfleet::config::Mode::Write);
    let (mut person, app, _) =
        common::tui::session(tui, inventory, write, Some(journal_file.clone()));
    let drive = async {
        person.in_the_matrix(clusters, THING.1, THING.2).await;
        person.press(KeyCode::Char('H'));
        person.sees(&too_many, |s| s.contains(&too_many)).await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    assert!(
        common::copies_of(&sim, THING)
            .iter()
            .all(|(_, _, o)| !o.suspended),
        "nothing sent over the limit"
    );
    assert_eq!(
        journal(&data),
        Vec::<Value>::new(),
        "a refusal journals nothing"
    );

    // A deny rule: the command, MCP's dry run and a proposal refuse the target in one set of
    // words, and a writing plugin on it is refused in them too.
    std::fs::write(&config, config_text(100, &denied)).unwrap();
    let reconcile = [
        "reconcile",
        "ks",
        "apps",
        "-n",
        "flux-system",
        "--cluster",
        &denied,
        "--write",
        "--yes",
        "-o",
        "ndjson",
    ];
    let (code, out, err) = doors.run(&reconcile).await;
    assert_ne!(code, 0, "{out}{err}");
    let said: Value = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| l["cluster"] == denied.as_str())
        .unwrap_or_else(|| panic!("no line for {denied}: {out}{err}"));
    let deny_words = said["message"].as_str().unwrap().to_string();
    assert!(deny_words.contains("actions.deny[0]"), "{said}");
    let scope = json!({ "kind": "ks", "name": "apps", "namespace": "flux-system",
                        "clusters": [denied] });
    let writer = doors.mcp("--write").await;
    let dry = call(&writer, "reconcile", scope.clone()).await.unwrap();
    let target = &dry["targets"][0];
    assert_eq!(target["cluster"], denied.as_str(), "{dry}");
    assert_eq!(target["would"], format!("refused: {deny_words}"), "{dry}");
    writer.cancel().await.unwrap();
    let proposer = doors.mcp("--propose").await;
    let refused = call(&proposer, "reconcile", scope).await.unwrap_err();
    assert!(
        refused.contains(&format!("({deny_words}): nothing was proposed")),
        "{refused}"
    );
    proposer.cancel().await.unwrap();

    // The TUI: the plugin refused on the denied object; then the halt, confirmed and sent.
    let (tui, inventory) = tui_config(&sim, &config);
    let (mut person, app, _) =
        common::tui::session(tui, inventory, write, Some(journal_file.clone()));
    let plugin_refused = format!("fix writes: {deny_words}");
    let drive = async {
        let live = format!("clusters {clusters}/{clusters} live");
        person
            .sees("every cluster live", |s| s.contains(&live))
            .await;
        person.command(&format!("cluster {denied}"));
        person.press(KeyCode::Char('/'));
        person.type_text("Kustomization flux-system/apps");
        person.press(KeyCode::Enter);
        person.press(KeyCode::Char('P'));
        person
            .sees("the plugin refused", |s| s.contains(&plugin_refused))
            .await;
        person.press(KeyCode::Esc);
        person.press(KeyCode::Esc);
        person.in_the_matrix(clusters, THING.1, THING.2).await;
        person.press(KeyCode::Char('H'));
        let asks = format!("suspend {count} objects on {count} clusters");
        person.sees(&asks, |s| s.contains(&asks)).await;
        person.press(KeyCode::Char('y'));
        person.sees("the halt done", |s| s.contains(" done")).await;
        person.press(KeyCode::Esc);
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    let halted: Vec<BTreeSet<String>> = journal(&data)
        .iter()
        .filter(|l| l["stage"] == "outcome" && l["action"] == "suspend")
        .map(|l| {
            l["targets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["cluster"].as_str().unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(halted, [proposed_on], "the TUI's halt, as proposed");

    // The proposal, approved now: the fleet it was planned on has changed (halted already).
    let (code, _, err) = doors.run(&["approve", &id, "--yes", "--write"]).await;
    assert_ne!(code, 0, "{err}");
    let changed = format!("the fleet changed since proposal {id} was made; nothing was sent");
    assert!(err.contains(&changed), "approve: {err}");
}
