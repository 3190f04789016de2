//! Plugins run for real from the TUI on the simulated fleet: a background one with a kubeconfig
//! of its cluster alone, removed after; one that takes the terminal gives it back and is
//! journaled.

use crate::common;

use crossterm::event::KeyCode;
use fluxfleet::config::{Config, Mode};
use serde_json::Value;

/// A script plugin that records what it was given (arguments, `KUBECONFIG`, the kubeconfig's
/// content and mode) next to `out`, prints a line on each output and exits with `code`.
fn script(dir: &std::path::Path, code: i32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("probe.sh");
    let text = format!(
        "#!/bin/sh\n\
         out=\"$1\"; shift\n\
         printf '%s\\n' \"$@\" > \"$out.args\"\n\
         printf '%s\\n' \"$KUBECONFIG\" > \"$out.env\"\n\
         cat \"$KUBECONFIG\" > \"$out.kubeconfig\"\n\
         stat -c %a \"$KUBECONFIG\" > \"$out.mode\"\n\
         echo first line\n\
         echo \"probe saw $# arguments\" >&2\n\
         exit {code}\n"
    );
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The simulated fleet with `plugin` as its only plugin, key P.
fn live_config(
    sim: &common::Sim,
    plugin: fluxfleet::config::plugins::PluginEntry,
) -> (Config, fluxfleet::inventory::Inventory) {
    let (mut config, inventory) = common::tui::fleet(sim);
    config.plugins = vec![plugin];
    (config, inventory)
}

fn probe(
    command: &std::path::Path,
    out: &std::path::Path,
    background: bool,
    writes: bool,
) -> fluxfleet::config::plugins::PluginEntry {
    let args = [
        out.to_str().unwrap(),
        "$CLUSTER",
        "$CONTEXT",
        "$KUBECONFIG",
        "$NAMESPACE",
        "$NAME",
        "$KIND",
        "$WORKSPACE",
    ];
    fluxfleet::config::plugins::PluginEntry {
        name: "probe".into(),
        key: "P".into(),
        scopes: vec!["cluster".into()],
        command: command.to_str().unwrap().into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        description: String::new(),
        background,
        confirm: false,
        writes,
        read_only_args: Vec::new(),
        needs: Vec::new(),
        enabled: true,
    }
}

/// A cluster of the simulated fleet and one of its Kustomizations.
fn a_kustomization(sim: &common::Sim) -> (String, String, String, String) {
    sim.handle
        .truth()
        .into_iter()
        .filter(|c| !c.management)
        .find_map(|c| {
            let o = c.objects.iter().find(|o| o.kind == "Kustomization")?;
            Some((
                c.name.clone(),
                c.workspace.clone(),
                o.namespace.clone(),
                o.name.clone(),
            ))
        })
        .unwrap()
}

/// Once every cluster is live: the cluster's view, its Kustomization `namespace/name`
/// selected.
async fn select_object(
    person: &mut common::tui::Person,
    clusters: usize,
    cluster: &str,
    namespace: &str,
    name: &str,
) {
    person
        .sees("every cluster live", |s| {
            s.contains(&format!("clusters {clusters}/{clusters} live"))
        })
        .await;
    person.command(&format!("cluster {cluster}"));
    person.press(KeyCode::Char('/'));
    person.type_text(&format!("Kustomization {namespace}/{name}"));
    person.press(KeyCode::Enter);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_plugin_gets_a_kubeconfig_of_its_cluster_alone_which_is_removed_after() {
    let sim = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let command = script(dir.path(), 3);
    let (config, inventory) = live_config(&sim, probe(&command, &out, true, false));
    let spec = |name: &str| {
        inventory
            .clusters
            .iter()
            .find(|c| c.name == name)
            .cloned()
            .unwrap()
    };
    let clusters = inventory.clusters.len();
    let (cluster, workspace, namespace, name) = a_kustomization(&sim);
    let spec = spec(&cluster);
    // Read-only: a plugin that only reads runs.
    let (mut person, app, _) = common::tui::session(config, inventory, Some(Mode::ReadOnly), None);
    let drive = async {
        select_object(&mut person, clusters, &cluster, &namespace, &name).await;
        person
            .sees("the plugin's key in the footer", |s| {
                s.contains("<P> probe")
            })
            .await;
        person.press(KeyCode::Char('P'));
        let screen = person
            .sees("the plugin's exit", |s| s.contains("exit 3"))
            .await;
        assert!(
            screen.contains(&format!(
                "probe on Kustomization {namespace}/{name} on {cluster}: exit 3"
            )),
            "{screen}"
        );
        assert!(
            screen.contains("first line") && screen.contains("probe saw 7 arguments"),
            "{screen}"
        );
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();

    let read = |ext: &str| std::fs::read_to_string(out.with_extension(ext)).unwrap();
    let args: Vec<String> = read("args").lines().map(str::to_string).collect();
    let kubeconfig_path = read("env").trim().to_string();
    assert_eq!(
        args,
        [
            cluster.clone(),
            spec.context.clone(),
            kubeconfig_path.clone(),
            namespace,
            name,
            "Kustomization".to_string(),
            workspace,
        ]
    );
    // One context, its cluster and its user: the cluster's own, and nothing else.
    let handed: Value = serde_json::from_str(&read("kubeconfig")).unwrap();
    assert_eq!(handed["contexts"].as_array().unwrap().len(), 1, "{handed}");
    assert_eq!(handed["clusters"].as_array().unwrap().len(), 1, "{handed}");
    assert_eq!(handed["users"].as_array().unwrap().len(), 1, "{handed}");
    assert_eq!(handed["current-context"], spec.context.as_str());
    assert_eq!(
        handed["clusters"][0]["cluster"]["server"],
        spec.server.as_str()
    );
    // It reaches that cluster: kube-rs connects with it and lists its Kustomizations.
    let kc: kube::config::Kubeconfig = serde_json::from_value(handed).unwrap();
    let client = common::client_from(kc, &spec.context).await;
    let listed = common::api(&client, &common::kustomizations(), None)
        .list(&Default::default())
        .await
        .unwrap();
    assert!(!listed.items.is_empty());
    assert_eq!(read("mode").trim(), "600");
    assert!(
        !std::path::Path::new(&kubeconfig_path).exists(),
        "the kubeconfig {kubeconfig_path} is removed once the plugin exits"
    );
    sim.handle.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_takes_the_terminal_gives_it_back_after_a_failing_exit_and_is_journaled() {
    let sim = common::start().await;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let journal = dir.path().join("audit.jsonl");
    let command = script(dir.path(), 7);
    let (config, inventory) = live_config(&sim, probe(&command, &out, false, true));
    let clusters = inventory.clusters.len();
    let (cluster, _, namespace, name) = a_kustomization(&sim);
    let (mut person, app, console) =
        common::tui::session(config, inventory, Some(Mode::Write), Some(journal.clone()));
    let drive = async {
        select_object(&mut person, clusters, &cluster, &namespace, &name).await;
        person.press(KeyCode::Char('P'));
        person
            .sees("the plugin's exit", |s| s.contains(": exit 7"))
            .await;
        // The TUI is whole again: keys work, the views draw.
        person.press(KeyCode::Esc);
        person
            .sees("the workspace view again", |s| {
                s.contains(&format!("{cluster} "))
            })
            .await;
        person.press(KeyCode::Char('q'));
    };
    let (result, ()) = tokio::join!(app, drive);
    result.unwrap();
    assert_eq!(*console.lock().unwrap(), ["release", "reclaim"]);
    assert!(out.with_extension("args").exists(), "the plugin ran");

    let lines: Vec<Value> = std::fs::read_to_string(&journal)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["stage"], "intent");
    assert_eq!(lines[1]["stage"], "outcome");
    assert_eq!(lines[0]["token"], lines[1]["token"]);
    for line in &lines {
        assert_eq!(line["action"], "plugin");
        assert_eq!(line["plugin"], "probe");
        assert_eq!(line["command"][0], command.to_str().unwrap());
        assert_eq!(line["targets"][0]["cluster"], cluster.as_str());
        assert_eq!(line["targets"][0]["kind"], "Kustomization");
        assert_eq!(line["targets"][0]["name"], name.as_str());
    }
    assert_eq!(lines[1]["targets"][0]["outcome"], "failed");
    assert_eq!(lines[1]["targets"][0]["message"], "exit 7");
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(
        !text.contains("token\":\"ey") && !text.contains("client-key"),
        "no credentials"
    );
    sim.handle.shutdown().await;
}
