//! Triage's level above groups, without a terminal: two GitRepositories that GitHub refuses on
//! three clusters, with messages naming different repositories, stand under one incident row;
//! it expands to them and they to their clusters; an action on it acts on every copy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Model, RowId};
use fluxfleet::app::triage::GroupOf;
use fluxfleet::app::update::{Msg, update};
use fluxfleet::config::Config;
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::{
    ClusterId, ClusterInfo, ClusterKey, Connection, FluxKind, FluxSummary, Index, Phase,
};
use jiff::Timestamp;
use serde_json::Value;

const NOW: &str = "2026-11-21T10:00:00Z";

fn sample(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The sample GitRepository GitHub refuses, named `name`, cloning `repo`.
fn refused(name: &str, repo: &str) -> FluxSummary {
    let text = serde_json::to_string(&sample("gitrepository-auth-failed.yaml"))
        .unwrap()
        .replace("team-a-apps", repo);
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["metadata"]["name"] = Value::from(name);
    FluxSummary::of(FluxKind::GitRepository, &v).unwrap()
}

fn key(model: &mut Model, code: KeyCode) {
    update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

/// Three clusters, each with `flux-system` and `team` refused by github.com and a Kustomization
/// failing its health check.
fn model() -> Model {
    let now: Timestamp = NOW.parse().unwrap();
    let mut index = Index::new();
    let mut events = Vec::new();
    for i in 0..3u32 {
        let cluster = ClusterKey::new(format!("#{i}"));
        index.add_cluster(ClusterInfo {
            key: cluster.clone(),
            ..ClusterInfo::new(&format!("prod-{i}"), "payments")
        });
        let event = |change| Event {
            cluster: cluster.clone(),
            at: now,
            change,
        };
        let mut connection = Connection::new(Phase::Live);
        connection.protocol = Some("HTTP/2");
        events.push(event(Change::Connection(connection)));
        let gits = vec![
            refused("flux-system", "fleet-infra"),
            refused("team", "team-apps"),
        ];
        events.push(event(Change::Replaced(FluxKind::GitRepository, gits)));
        let mut apps = sample("kustomization-health-check-failed.yaml");
        apps["metadata"]["name"] = Value::from("apps");
        let apps = FluxSummary::of(FluxKind::Kustomization, &apps).unwrap();
        events.push(event(Change::Replaced(FluxKind::Kustomization, vec![apps])));
    }
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut model = Model::new(index, keymap, Vec::new(), now);
    update(&mut model, Msg::Fleet(events));
    model
}

fn top_rows(m: &Model) -> Vec<GroupOf> {
    m.rows()
        .ids
        .iter()
        .filter_map(|id| match id {
            RowId::Group(g) => Some(m.rows().groups[g].clone()),
            _ => None,
        })
        .filter(|g| g.incident.is_none())
        .map(|g| g.what)
        .collect()
}

#[test]
fn causes_sharing_an_endpoints_failure_stand_under_one_incident() {
    let mut m = model();
    key(&mut m, KeyCode::Char('t'));
    m.refresh_rows();
    let rows = top_rows(&m);
    assert_eq!(rows.len(), 2, "the incident and the health check: {rows:?}");
    let GroupOf::Incident {
        shared,
        causes,
        clusters,
    } = &rows[0]
    else {
        panic!("the incident costs the most and comes first: {rows:?}");
    };
    assert_eq!(
        (shared.endpoint.as_str(), shared.class.as_str()),
        ("github.com", "auth")
    );
    assert_eq!((*causes, *clusters), (2, 3));
    insta::assert_snapshot!("triage_incident", common::tui::screen(&mut m, 120, 10));

    // Open: its two causes, one step in; open the first: its three clusters.
    key(&mut m, KeyCode::Char(' '));
    m.refresh_rows();
    let under: Vec<&RowId> = m.rows().ids.iter().skip(1).take(2).collect();
    assert!(
        under.iter().all(|id| matches!(id, RowId::Group(g)
            if m.rows().groups[g].incident.is_some())),
        "{:?}",
        m.rows().ids
    );
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Char(' '));
    m.refresh_rows();
    let members = m
        .rows()
        .ids
        .iter()
        .filter(|id| matches!(id, RowId::Object(..)))
        .count();
    assert_eq!(members, 3, "{:?}", m.rows().ids);
    insta::assert_snapshot!(
        "triage_incident_expanded",
        common::tui::screen(&mut m, 120, 12)
    );

    // An action on the incident acts on every copy of every cause under it.
    key(&mut m, KeyCode::Char('g'));
    assert!(matches!(m.screen().selected, Some(RowId::Group(_))));
    key(&mut m, KeyCode::Char('R'));
    let confirm = m
        .confirming()
        .cloned()
        .unwrap_or_else(|| panic!("a confirmation: {:?}", m.flash()));
    let mut names: Vec<(ClusterId, &str)> = confirm
        .targets
        .iter()
        .map(|(c, k)| (*c, &*k.name))
        .collect();
    names.sort();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.iter().any(|(_, n)| *n == "team"));
}
