//! Plugins in the TUI's model: what each view's selection puts into a plugin's variables, and
//! which plugins may run where (read-only, a read-only cluster, deny rules), pressed as keys.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Model, RowId, Settings};
use fluxfleet::app::plugins::{self, Launch};
use fluxfleet::app::update::{Effect, Msg, update};
use fluxfleet::config::{Config, Mode};
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, Index, Phase};
use serde_json::Value;

mod examples;
mod guardrails;
mod running;
mod variables;

fn summary(kind: FluxKind, file: &str) -> FluxSummary {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    FluxSummary::of(kind, &v).unwrap()
}

/// Two clusters in two workspaces, each with a ready GitRepository and a failing
/// Kustomization; the config's plugins bound, its clusters' modes those of write mode (of
/// read-only mode when `read_only`).
fn model(config: &Config, read_only: bool) -> Model {
    let mode = if read_only {
        Mode::ReadOnly
    } else {
        Mode::Write
    };
    model_in(config, read_only, Some(mode))
}

/// [`model`], its clusters' modes those of `mode` (None: as the config's modes say).
fn model_in(config: &Config, read_only: bool, mode: Option<Mode>) -> Model {
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
        c.watching = vec![(FluxKind::Kustomization, "v1".into()).into()].into();
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
    let (_, permissions) = config.writable(mode, index.clusters().iter().map(|c| &*c.info));
    let settings = Settings {
        read_only,
        permissions: Some(permissions),
        actions: config.actions.clone(),
        plugins,
        ..Settings::default()
    };
    let mut model = Model::new(
        index,
        keymap,
        Vec::new(),
        "2026-11-21T10:00:00Z".parse().unwrap(),
    )
    .with_settings(settings);
    update(&mut model, Msg::Fleet(events));
    model
}

/// A plugin running `sh` (on every PATH) in every view with `args`.
fn config_with(writes: bool, read_only_args: &[&str], args: &[&str]) -> Config {
    let mut config = Config::defaults();
    config.plugins = vec![fluxfleet::config::plugins::PluginEntry {
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
        [] => Err(model.flash().unwrap_or_default().to_string()),
        other => panic!("unexpected effects {other:?}"),
    }
}

fn select(model: &mut Model, id: RowId) {
    model.refresh_rows();
    let at = model.rows().ids.iter().position(|r| *r == id).unwrap();
    model.screen_mut().cursor = at;
    model.screen_mut().selected = Some(id);
}
