//! Where a plugin may run: a writing one never where writes are not allowed (read-only, a
//! read-only cluster, deny rules), and one that asks only once confirmed.

use fluxfleet::app::model::{Model, RowId, View};
use fluxfleet::app::update::Effect;
use fluxfleet::config::{DenyRule, Mode, ModeRule};
use fluxfleet::fleet::{ClusterId, FluxKind, ObjectKey};

use super::{config_with, launch, model, model_in, press, select};

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
    let mut m = model_in(&config, false, None);
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
    let payments = m.index().workspace_id("payments").unwrap();
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
    let payments = m.index().workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(ClusterId(0)));
    assert_eq!(press(&mut m, 'P'), []);
    assert!(m.plugin_waiting().is_some());
    // Other keys do nothing meanwhile; n cancels.
    assert_eq!(press(&mut m, 'j'), []);
    assert_eq!(press(&mut m, 'n'), []);
    assert_eq!(m.flash(), Some("probe cancelled: nothing was run"));
    press(&mut m, 'P');
    let effects = press(&mut m, 'y');
    assert!(matches!(effects.as_slice(), [Effect::Plugin(l)] if l.plugin == "probe"));
}
