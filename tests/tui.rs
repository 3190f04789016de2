//! The TUI without a terminal: the update function fed with keys and fleet events, and every view
//! rendered into a fixed-size test backend at a fixed clock (insta snapshots).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Fetched, RunState, Stage};
use fluxfleet::app::model::{Input, Model, RowId, Settings, View};
use fluxfleet::app::update::{Effect, Msg, update};
use fluxfleet::config::Config;
use fluxfleet::fleet::index::{Change, Event};
use fluxfleet::fleet::report::Report;
use fluxfleet::fleet::verbs::{Outcome, Verb};
use fluxfleet::fleet::{
    ClusterId, ClusterInfo, ClusterKey, Connection, Counted, FluxKind, FluxSummary, Index,
    ObjectEvent, ObjectKey, Phase,
};
use jiff::Timestamp;
use serde_json::Value;

mod actions;
mod detail;
mod fleet;
mod input;
mod rollouts;
mod trace;
mod triage;

const NOW: &str = "2026-11-21T10:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn sample(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A summary of `file`, renamed.
fn object(kind: FluxKind, file: &str, name: &str) -> FluxSummary {
    let mut v = sample(file);
    v["metadata"]["name"] = Value::from(name);
    FluxSummary::of(kind, &v).unwrap()
}

/// How the test's source names cluster `id` (see `fleet`).
fn key_of(id: ClusterId) -> ClusterKey {
    ClusterKey::new(format!("#{}", id.0))
}

fn event(cluster: ClusterId, change: Change) -> Event {
    Event {
        cluster: key_of(cluster),
        at: now(),
        change,
    }
}

fn live() -> Connection {
    let mut c = Connection::new(Phase::Live);
    c.protocol = Some("HTTP/2");
    c
}

/// Two workspaces, four clusters: healthy, failing, one unreachable.
fn fleet() -> (Index, Vec<Event>) {
    let mut index = Index::new();
    let mut add = |name: &str, ws: &str| {
        index.add_cluster(ClusterInfo {
            key: key_of(ClusterId(index.clusters().len() as u32)),
            server: format!("https://{name}.example.com:6443"),
            ..ClusterInfo::new(name, ws)
        })
    };
    let a = add("pay-prod-eu", "payments");
    let b = add("pay-prod-us", "payments");
    let c = add("shop-dev-1", "retail");
    let d = add("shop-dev-2", "retail");
    let ks = FluxKind::Kustomization;
    let mut events = vec![];
    for (id, failing) in [(a, true), (b, true), (c, false)] {
        events.push(event(id, Change::Connection(live())));
        let mut objects = vec![
            object(
                FluxKind::GitRepository,
                "gitrepository-ready.yaml",
                "flux-system",
            ),
            object(ks, "kustomization-ready.yaml", "infra"),
            object(FluxKind::HelmRelease, "helmrelease-ready.yaml", "podinfo"),
        ];
        if failing {
            objects.push(object(ks, "kustomization-health-check-failed.yaml", "apps"));
            objects.push(object(
                FluxKind::HelmRelease,
                "helmrelease-install-failed-stalled.yaml",
                "redis",
            ));
        } else {
            objects.push(object(ks, "kustomization-suspended.yaml", "apps"));
        }
        for kind in [FluxKind::GitRepository, ks, FluxKind::HelmRelease] {
            let of_kind = objects
                .iter()
                .filter(|o| o.key.kind == kind)
                .cloned()
                .collect();
            events.push(event(id, Change::Replaced(kind, of_kind)));
        }
    }
    // The Flux Operator reports on three of them: two versions, one controller down.
    for (id, version, down) in [
        (a, "v2.9.4", None),
        (b, "v2.9.3", None),
        (c, "v2.9.4", Some(0)),
    ] {
        events.push(event(
            id,
            Change::Report(Some(Box::new(report(version, down)))),
        ));
    }
    let mut down = Connection::new(Phase::Unreachable);
    down.error = Some("dial tcp 10.0.0.9:6443: connect: connection refused".into());
    down.since = Some(now() - jiff::SignedDuration::from_secs(300));
    events.push(event(d, Change::Connection(down)));
    (index, events)
}

/// The sample FluxReport, at `version`, with component `down` not ready, read 40 s ago.
fn report(version: &str, down: Option<usize>) -> Report {
    let mut v = sample("fluxreport.yaml");
    v["spec"]["distribution"]["version"] = Value::from(version);
    if let Some(i) = down {
        v["spec"]["components"][i]["ready"] = Value::from(false);
    }
    let read_at = now() - jiff::SignedDuration::from_secs(40);
    Report::read(&v, Some(&sample("fluxinstance-ready.yaml")), read_at).unwrap()
}

fn model() -> Model {
    model_with(Settings::default())
}

/// The fleet of [`fleet`] in a session that may do what `settings` say.
fn model_with(settings: Settings) -> Model {
    let (index, events) = fleet();
    let (keymap, warnings) = Keymap::from_config(&Config::defaults().keymap);
    assert!(warnings.is_empty());
    let mut model = Model::new(index, keymap, Vec::new(), now()).with_settings(settings);
    update(&mut model, Msg::Fleet(events));
    model
}

fn key(model: &mut Model, code: KeyCode) {
    update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
}

fn typed(model: &mut Model, text: &str) {
    for c in text.chars() {
        key(model, KeyCode::Char(c));
    }
}

/// The redis HelmRelease's detail view (stalled, on pay-prod-us).
fn redis_detail() -> (Model, ClusterId, ObjectKey) {
    redis_detail_with(Settings::default())
}

/// [`redis_detail`] in a session that may do what `settings` say.
fn redis_detail_with(settings: Settings) -> (Model, ClusterId, ObjectKey) {
    let mut m = model_with(settings);
    for code in [KeyCode::Enter, KeyCode::Char('j'), KeyCode::Enter] {
        key(&mut m, code);
    }
    key(&mut m, KeyCode::Char('G'));
    key(&mut m, KeyCode::Enter);
    let View::Detail { cluster, key: k } = m.screen().view.clone() else {
        panic!("{:?}", m.screen().view)
    };
    (m, cluster, k)
}

fn keys(model: &mut Model, code: KeyCode) -> Vec<Effect> {
    update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// What `fluxfleet workloads` would have read of `apps` on `clusters`: its Deployment's new pod
/// cannot pull its image; on the last cluster the pods could not be listed.
fn apps_evidence(clusters: &[&str]) -> fluxfleet::fleet::workload::fold::Folded {
    use fluxfleet::fleet::workload::{
        Evidence, ReadError, ResourceUnread, WorkloadRef, fold, parse,
    };
    let image = "registry.example.com/apps:v1.4.2";
    let deployment = serde_json::json!({"spec": {"replicas": 2}, "status": {"replicas": 3,
        "updatedReplicas": 1, "readyReplicas": 2, "conditions": [{"type": "Progressing",
        "status": "False", "reason": "ProgressDeadlineExceeded"}]}});
    let pods = serde_json::json!({"items": [{"metadata": {"name": "apps-7d9f8b6c5d-x2x7q"},
        "status": {"phase": "Pending", "containerStatuses": [{"name": "app", "image": image,
        "state": {"waiting": {"reason": "ImagePullBackOff",
        "message": format!("Back-off pulling image \"{image}\": ErrImagePull: {image}: not found")}}}]}}]});
    let id = WorkloadRef {
        kind: fluxfleet::fleet::workload::Kind::Deployment,
        namespace: "apps".into(),
        name: "apps".into(),
    };
    let read = clusters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut w = parse::workload(id.clone(), &deployment);
            (w.pods, w.pods_total, w.pods_cut) = parse::pods(&pods);
            if i + 1 == clusters.len() {
                (w.pods, w.pods_total) = (Vec::new(), 0);
                w.unread.push(ResourceUnread {
                    resource: "pods".into(),
                    why: ReadError::Forbidden("pods is forbidden".into()),
                });
            }
            let evidence = Evidence {
                workloads: vec![w],
                requests: 4,
                ..Evidence::default()
            };
            (c.to_string(), Ok(evidence))
        })
        .collect();
    fold::fold(read)
}

/// The fleet of [`model`], where on both payments clusters `payments` and `podinfo-oci` wait
/// for `apps` (which fails its health check), and on pay-prod-eu `a` and `b` depend on each
/// other.
fn chain_model() -> Model {
    let mut m = model();
    let ks = FluxKind::Kustomization;
    let on = |name: &str, dep: &str| {
        let mut v = sample("kustomization-dependency-not-ready.yaml");
        v["metadata"]["name"] = Value::from(name);
        v["spec"]["dependsOn"] = serde_json::json!([{"name": dep}]);
        FluxSummary::of(ks, &v).unwrap()
    };
    let mut events = Vec::new();
    for id in [ClusterId(0), ClusterId(1)] {
        for name in ["payments", "podinfo-oci"] {
            events.push(event(id, Change::Applied(on(name, "apps"))));
        }
    }
    events.push(event(ClusterId(0), Change::Applied(on("a", "b"))));
    events.push(event(ClusterId(0), Change::Applied(on("b", "a"))));
    update(&mut m, Msg::Fleet(events));
    m
}

fn command(model: &mut Model, line: &str) -> Vec<Effect> {
    key(model, KeyCode::Char(':'));
    typed(model, line);
    keys(model, KeyCode::Enter)
}
