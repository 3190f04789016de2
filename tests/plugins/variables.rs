//! What each view's selection hands a plugin in its variables, a variable the selection lacks,
//! and values from a cluster that a command line could misread.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::model::{ListScope, RowId, View};
use fluxfleet::app::plugins::{self, Launch};
use fluxfleet::app::update::{Msg, update};
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{ClusterId, ClusterKey, FluxKind, ObjectKey};

use super::{config_with, launch, model, select, summary};

fn vars(l: &Launch) -> Vec<(&'static str, String)> {
    plugins::VARIABLES
        .iter()
        .filter_map(|v| l.vars.get(v).map(|x| (*v, x.to_string())))
        .collect()
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
    let payments = m.index().workspace_id("payments").unwrap();
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
            scope: ListScope::Fleet,
            kind: None,
        },
        View::Triage {
            scope: ListScope::Fleet,
        },
    ] {
        m.push(view);
        m.screen_mut().failing_only = false;
        // Triage groups identical failures: open the group to reach the object.
        m.refresh_rows();
        if !m.rows().ids.contains(&RowId::Object(dev, apps.clone())) {
            let group = m
                .rows()
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
    let payments = m.index().workspace_id("payments").unwrap();
    m.push(View::Workspace(payments));
    select(&mut m, RowId::Cluster(ClusterId(0)));
    assert_eq!(
        launch(&mut m).unwrap_err(),
        "probe: $NAME needs an object selected"
    );
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
