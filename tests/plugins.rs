//! Plugins in the TUI's model: what each view's selection puts into a plugin's variables, and
//! which plugins may run where (read-only, a read-only cluster, deny rules), pressed as keys.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Model, RowId, Scope, View};
use fluxfleet::app::plugins::{self, Launch};
use fluxfleet::app::update::{Effect, Msg, update};
use fluxfleet::config::{Config, DenyRule, Mode, ModeRule};
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{
    ClusterId, ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, Index, ObjectKey, Phase,
};
use serde_json::Value;

fn summary(kind: FluxKind, file: &str) -> FluxSummary {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    FluxSummary::of(kind, &v).unwrap()
}

/// Two clusters in two workspaces, each with a ready GitRepository and a failing
/// Kustomization; the config's plugins bound.
fn model(config: &Config, read_only: bool) -> Model {
    let mut index = Index::new();
    let mut events = Vec::new();
    for (name, ws) in [("pay-prod-eu", "payments"), ("shop-dev-1", "retail")] {
        let key = ClusterKey::new(name);
        index.add_cluster(ClusterInfo {
            key: key.clone(),
            context: format!("{name}-admin@{name}"),
            ..ClusterInfo::new(name, ws)
        });
        let mut c = Connection::new(Phase::Live);
        c.watching = vec![(FluxKind::Kustomization, "v1".into())].into();
        for change in [
            Change::Connection(c),
            Change::Replaced(
                FluxKind::GitRepository,
                vec![summary(FluxKind::GitRepository, "gitrepository-ready.yaml")],
            ),
            Change::Replaced(
                FluxKind::Kustomization,
                vec![summary(
                    FluxKind::Kustomization,
                    "kustomization-health-check-failed.yaml",
                )],
            ),
        ] {
            events.push(Event {
                cluster: key.clone(),
                at: "2026-11-21T10:00:00Z".parse().unwrap(),
                change,
            });
        }
    }
    let (mut keymap, _) = Keymap::from_config(&config.keymap);
    let path = std::env::var_os("PATH");
    let (plugins, warnings) = plugins::from_config(&config.plugins, path.as_deref());
    assert_eq!(warnings, Vec::<String>::new());
    assert_eq!(plugins::bind(&mut keymap, &plugins), Vec::<String>::new());
    let mut model = Model::new(
        index,
        keymap,
        Vec::new(),
        "2026-11-21T10:00:00Z".parse().unwrap(),
    );
    update(&mut model, Msg::Fleet(events));
    model.settings.plugins = plugins;
    model.settings.read_only = read_only;
    let (_, permissions) = config.writable(
        Some(if read_only {
            Mode::ReadOnly
        } else {
            Mode::Write
        }),
        model.index.clusters().iter().map(|c| &*c.info),
    );
    model.settings.permissions = Some(permissions);
    model.settings.actions = config.actions.clone();
    model
}

/// A plugin running `sh` (on every PATH) in every view with `args`.
fn config_with(writes: bool, read_only_args: &[&str], args: &[&str]) -> Config {
    let mut config = Config::defaults();
    config.plugins = vec![fluxfleet::config::plugins::Plugin {
        name: "probe".into(),
        key: "P".into(),
        scopes: vec!["all".into()],
        command: "sh".into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        description: String::new(),
        background: true,
        confirm: false,
        writes,
        read_only_args: read_only_args.iter().map(|a| a.to_string()).collect(),
        needs: Vec::new(),
        enabled: true,
    }];
    config
}

fn press(model: &mut Model, c: char) -> Vec<Effect> {
    update(
        model,
        Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)),
    )
}

/// Pressing the plugin's key: the launch it starts, else the message shown.
fn launch(model: &mut Model) -> Result<Launch, String> {
    let effects = press(model, 'P');
    match effects.as_slice() {
        [Effect::Plugin(l)] => Ok(l.clone()),
        [] => Err(model.flash.clone().unwrap_or_default()),
        other => panic!("unexpected effects {other:?}"),
    }
}

fn vars(l: &Launch) -> Vec<(&'static str, String)> {
    plugins::VARIABLES
        .iter()
        .filter_map(|v| l.vars.get(v).map(|x| (*v, x.to_string())))
        .collect()
}

fn select(model: &mut Model, id: RowId) {
    model.refresh_rows();
    let at = model.rows.ids.iter().position(|r| *r == id).unwrap();
    model.screen_mut().cursor = at;
    model.screen_mut().selected = Some(id);
}

#[test]
fn each_view_hands_the_plugin_what_its_selection_stands_for() {
    let config = config_with(false, &[], &[]);
    let mut m = model(&config, true);
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let eu = ClusterId(0);
    let object_vars = |cluster: &str, ws: &str| {
        vec![
            ("CLUSTER", cluster.to_string()),
            ("CONTEXT", format!("{cluster}-admin@{cluster}")),
            ("NAMESPACE", "flux-system".to_string()),
            ("NAME", "apps".to_string()),
            ("KIND", "Kustomization".to_string()),
            (
                "RESOURCE",
                "kustomizations.kustomize.toolkit.fluxcd.io".to_string(),
            ),
            // The version the cluster's watch serves.
            ("API_VERSION", "kustomize.toolkit.fluxcd.io/v1".to_string()),
            ("WORKSPACE", ws.to_string()),
            (
                "REVISION",
                "main@sha1:2f22765d04931a078909145ca628d2264c852d7d".to_string(),
            ),
        ]
    };

    // Fleet view: a workspace row is a workspace, no cluster.
    let payments = m.index.workspace_id("payments").unwrap();
    select(&mut m, RowId::Workspace(payments));
    let l = launch(&mut m).unwrap();
    assert_eq!(vars(&l), [("WORKSPACE", "payments".to_string())]);
    assert_eq!(l.cluster, None);

    // Workspace view: a cluster row.
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(eu));
    let l = launch(&mut m).unwrap();
    assert_eq!(
        vars(&l),
        [
            ("CLUSTER", "pay-prod-eu".to_string()),
            ("CONTEXT", "pay-prod-eu-admin@pay-prod-eu".to_string()),
            ("WORKSPACE", "payments".to_string()),
        ]
    );
    assert_eq!(
        l.cluster.as_ref().map(|c| c.name.as_str()),
        Some("pay-prod-eu")
    );
    assert_eq!(l.describe(), "probe on pay-prod-eu");

    // Cluster view: an object row; the same object in the detail view.
    m.push(View::Cluster(eu));
    select(&mut m, RowId::Object(eu, apps.clone()));
    let mut want = object_vars("pay-prod-eu", "payments");
    want.sort();
    let mut got = vars(&launch(&mut m).unwrap());
    got.sort();
    assert_eq!(got, want);
    m.push(View::Detail {
        cluster: eu,
        key: apps.clone(),
    });
    let mut got = vars(&launch(&mut m).unwrap());
    got.sort();
    assert_eq!(got, want);

    // Every object of the fleet, and triage: the other cluster's copy.
    let dev = ClusterId(1);
    for view in [
        View::Objects {
            scope: Scope::Fleet,
            kind: None,
        },
        View::Triage {
            scope: Scope::Fleet,
        },
    ] {
        m.push(view);
        m.screen_mut().failing_only = false;
        // Triage groups identical failures: open the group to reach the object.
        m.refresh_rows();
        if !m.rows.ids.contains(&RowId::Object(dev, apps.clone())) {
            let group = m
                .rows
                .ids
                .iter()
                .find(|r| matches!(r, RowId::Group(_)))
                .cloned()
                .unwrap();
            select(&mut m, group);
            update(
                &mut m,
                Msg::Key(KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE)),
            );
        }
        select(&mut m, RowId::Object(dev, apps.clone()));
        let mut want = object_vars("shop-dev-1", "retail");
        want.sort();
        let mut got = vars(&launch(&mut m).unwrap());
        got.sort();
        assert_eq!(got, want);
    }
}

#[test]
fn a_variable_the_selection_lacks_refuses_the_run_and_says_what_to_select() {
    let config = config_with(false, &[], &["-c", "echo", "$NAME"]);
    let mut m = model(&config, true);
    let payments = m.index.workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(ClusterId(0)));
    assert_eq!(
        launch(&mut m).unwrap_err(),
        "probe: $NAME needs an object selected"
    );
}

#[test]
fn a_writing_plugin_cannot_run_where_writes_are_not_allowed() {
    let eu = ClusterId(0);
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let at_apps = |m: &mut Model| {
        m.push(View::Cluster(eu));
        select(m, RowId::Object(eu, apps.clone()));
    };

    // Read-only session: refused with the built-in actions' explanation, nothing to run.
    let config = config_with(true, &[], &[]);
    let mut m = model(&config, true);
    at_apps(&mut m);
    let why = launch(&mut m).unwrap_err();
    assert!(
        why.starts_with("read-only: probe writes, so it cannot run — start with --write"),
        "{why}"
    );

    // Write mode, but this cluster's mode is read-only.
    let mut config = config_with(true, &[], &[]);
    config.modes = vec![ModeRule {
        workspace: Some("payments".into()),
        cluster: None,
        origin: None,
        mode: Mode::ReadOnly,
    }];
    let mut m = model(&config, false);
    m.settings.permissions = Some(
        config
            .writable(None, m.index.clusters().iter().map(|c| &*c.info))
            .1,
    );
    at_apps(&mut m);
    let why = launch(&mut m).unwrap_err();
    assert!(why.contains("read-only: this cluster's mode"), "{why}");

    // A deny rule on any object of the cluster keeps a writing plugin off the whole cluster.
    let mut config = config_with(true, &[], &[]);
    config.actions.deny = vec![DenyRule {
        workspace: None,
        cluster: Some("pay-*".into()),
        origin: None,
        kind: Some("HelmRelease".into()),
        namespace: None,
        name: None,
    }];
    let mut m = model(&config, false);
    let payments = m.index.workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(eu));
    let why = launch(&mut m).unwrap_err();
    assert!(why.contains("denied by actions.deny[0]"), "{why}");

    // Where writes are allowed it runs, as a writer.
    let config = config_with(true, &[], &[]);
    let mut m = model(&config, false);
    at_apps(&mut m);
    assert!(launch(&mut m).unwrap().writes);

    // A writing plugin that can be told to read only runs so in read-only mode.
    let config = config_with(true, &["--readonly"], &["-c", "true"]);
    let mut m = model(&config, true);
    at_apps(&mut m);
    let l = launch(&mut m).unwrap();
    assert!(!l.writes);
    assert_eq!(l.args, ["-c", "true", "--readonly"]);
}

#[test]
fn a_plugin_that_asks_runs_only_once_confirmed() {
    let mut config = config_with(false, &[], &[]);
    config.plugins[0].confirm = true;
    let mut m = model(&config, true);
    let payments = m.index.workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(ClusterId(0)));
    assert_eq!(press(&mut m, 'P'), []);
    assert!(m.plugin_confirm.is_some());
    // Other keys do nothing meanwhile; n cancels.
    assert_eq!(press(&mut m, 'j'), []);
    assert_eq!(press(&mut m, 'n'), []);
    assert_eq!(m.flash.as_deref(), Some("probe cancelled: nothing was run"));
    press(&mut m, 'P');
    let effects = press(&mut m, 'y');
    assert!(matches!(effects.as_slice(), [Effect::Plugin(l)] if l.plugin == "probe"));
}

#[test]
fn values_from_a_cluster_that_a_command_line_could_misread_never_reach_one() {
    let config = config_with(false, &[], &["$NAME"]);
    let mut m = model(&config, true);
    let eu = ClusterId(0);
    let mut hostile = summary(FluxKind::Kustomization, "kustomization-ready.yaml");
    hostile.key = ObjectKey::new(FluxKind::Kustomization, "flux-system", "x;rm -rf ~");
    update(
        &mut m,
        Msg::Fleet(vec![Event {
            cluster: ClusterKey::new("pay-prod-eu"),
            at: "2026-11-21T10:00:00Z".parse().unwrap(),
            change: Change::Applied(hostile.clone()),
        }]),
    );
    m.push(View::Cluster(eu));
    select(&mut m, RowId::Object(eu, hostile.key.clone()));
    let why = launch(&mut m).unwrap_err();
    assert!(
        why.contains("holds characters a command line must not get"),
        "{why}"
    );
}

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
    plugin: fluxfleet::config::plugins::Plugin,
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
) -> fluxfleet::config::plugins::Plugin {
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
    fluxfleet::config::plugins::Plugin {
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

#[test]
fn the_documented_plugin_examples_read_cleanly() {
    let readme =
        std::fs::read_to_string(format!("{}/docs/tui.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let examples: Vec<&str> = readme
        .split("```toml")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|block| block.contains("[[plugins]]"))
        .collect();
    assert!(!examples.is_empty());
    for example in examples {
        let (config, warnings) = Config::parse(Some(example), std::path::Path::new("docs/tui.md"));
        assert_eq!(warnings, [], "{example}");
        let added: Vec<_> = config
            .plugins
            .iter()
            .filter(|p| example.contains(&format!("name = {:?}", p.name)))
            .cloned()
            .collect();
        assert_eq!(added.len(), 2, "{example}");
        let (_, warnings) = plugins::from_config(&added, None);
        assert_eq!(warnings, Vec::<String>::new());
        let (mut keymap, _) = Keymap::from_config(&config.keymap);
        let with_paths: Vec<_> = plugins::from_config(&added, None)
            .0
            .into_iter()
            .map(|p| plugins::Plugin { missing: None, ..p })
            .collect();
        assert_eq!(
            plugins::bind(&mut keymap, &with_paths),
            Vec::<String>::new()
        );
    }
}
