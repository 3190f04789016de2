//! The TUI without a terminal: the update function fed with keys and fleet events, and every view
//! rendered into a fixed-size test backend at a fixed clock (insta snapshots).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use crate::common;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use fluxfleet::app::keymap::Keymap;
use fluxfleet::app::model::{Fetched, RunState, Stage};
use fluxfleet::app::model::{Input, Model, RowId, View};
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
    let (index, events) = fleet();
    let (keymap, warnings) = Keymap::from_config(&Config::defaults().keymap);
    assert!(warnings.is_empty());
    let mut model = Model::new(index, keymap, Vec::new(), now());
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

#[test]
fn the_fleet_view_lists_workspaces_with_counts_and_the_worst_problem() {
    let mut m = model();
    insta::assert_snapshot!("fleet_80x24", common::tui::screen(&mut m, 80, 24));
    insta::assert_snapshot!("fleet_140x30", common::tui::screen(&mut m, 140, 30));
}

/// `clusters` clusters in 12 workspaces: most ready, some failing, stalled, suspended,
/// connecting or unreachable, by their number.
fn big_model(clusters: u32) -> Model {
    let mut index = Index::new();
    let ks = FluxKind::Kustomization;
    let ready = object(ks, "kustomization-ready.yaml", "apps");
    let failed = object(ks, "kustomization-health-check-failed.yaml", "apps");
    let stalled = object(ks, "kustomization-stalled-invalid-cel.yaml", "apps");
    let suspended = object(ks, "kustomization-suspended.yaml", "apps");
    let mut events = Vec::new();
    for i in 0..clusters {
        let id = index.add_cluster(ClusterInfo {
            key: key_of(ClusterId(i)),
            ..ClusterInfo::new(&format!("c{i:04}"), &format!("region-{:02}", i % 12))
        });
        let connection = match i % 97 {
            13 => {
                let mut down = Connection::new(Phase::Unreachable);
                down.error = Some("connection refused".into());
                down
            }
            29 => continue,
            _ => live(),
        };
        events.push(event(id, Change::Connection(connection)));
        let apps = match i % 23 {
            3 | 11 => failed.clone(),
            7 => stalled.clone(),
            17 => suspended.clone(),
            _ => ready.clone(),
        };
        events.push(event(id, Change::Replaced(ks, vec![apps])));
    }
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut model = Model::new(index, keymap, Vec::new(), now());
    update(&mut model, Msg::Fleet(events));
    model
}

#[test]
fn the_fleet_map_shows_every_cluster_and_shrinks_to_fit_a_small_terminal() {
    let mut m = big_model(2_000);
    // 2,000 clusters fit in 120×40 one cell each.
    let shot = common::tui::screen(&mut m, 120, 40);
    let (width, height) = m.fit.map_room;
    let map = fluxfleet::app::map::layout(&m.index, &m.rows.ids, width, height);
    assert_eq!((map.clusters.len(), map.per_cell), (2_000, 1), "{shot}");
    assert_eq!(map.cells.len(), 2_000);
    assert!(shot.contains("Fleet map · 2000 clusters"), "{shot}");
    insta::assert_snapshot!("fleet_map_160x45", common::tui::screen(&mut m, 160, 45));
    // At 80×24 a cell stands for a few clusters, the worst shown; nothing breaks.
    let shot = common::tui::screen(&mut m, 80, 24);
    let (width, height) = m.fit.map_room;
    let map = fluxfleet::app::map::layout(&m.index, &m.rows.ids, width, height);
    assert!(map.per_cell > 1, "{shot}");
    assert_eq!(map.clusters.len(), 2_000);
    insta::assert_snapshot!("fleet_map_80x24", shot);
}

#[test]
fn the_cursor_moves_onto_the_map_names_the_cluster_and_enter_opens_it() {
    let mut m = big_model(60);
    common::tui::screen(&mut m, 100, 30);
    // Tab from region-01's row: its first cluster, c0001.
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Tab);
    assert_eq!(m.screen().map, Some(5));
    let shot = common::tui::screen(&mut m, 100, 30);
    assert!(
        shot.contains("c0001 (region-01) · ready · 1 objects"),
        "{shot}"
    );
    // Right: c0013, unreachable, named with its state.
    key(&mut m, KeyCode::Char('l'));
    let shot = common::tui::screen(&mut m, 100, 30);
    assert!(shot.contains("c0013 (region-01) · unreachable"), "{shot}");
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.screen().view, View::Cluster(ClusterId(13)));
    key(&mut m, KeyCode::Esc);
    // Esc leaves the map for the table, on the workspace of the cell.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.screen().map, None);
    let RowId::Workspace(w) = m.screen().selected.clone().unwrap() else {
        panic!()
    };
    assert_eq!(m.index.workspace(w).unwrap().name, "region-01");
    // Down from the last workspace goes onto the map; up from its first line comes back.
    key(&mut m, KeyCode::Char('G'));
    key(&mut m, KeyCode::Char('j'));
    assert_eq!(m.screen().map, Some(0));
    key(&mut m, KeyCode::Char('k'));
    assert_eq!(m.screen().map, None);
}

#[test]
fn drilling_down_from_fleet_to_object_and_back() {
    let mut m = model();
    key(&mut m, KeyCode::Enter);
    assert!(matches!(m.screen().view, View::Workspace(_)));
    insta::assert_snapshot!("workspace_payments", common::tui::screen(&mut m, 100, 16));
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Enter);
    assert!(matches!(m.screen().view, View::Cluster(ClusterId(1))));
    insta::assert_snapshot!("cluster_pay_prod_us", common::tui::screen(&mut m, 120, 16));
    key(&mut m, KeyCode::Char('G'));
    key(&mut m, KeyCode::Enter);
    let View::Detail { key: k, .. } = &m.screen().view else {
        panic!("{:?}", m.screen().view)
    };
    assert_eq!(&*k.name, "redis");
    insta::assert_snapshot!("detail_redis", common::tui::screen(&mut m, 100, 30));
    key(&mut m, KeyCode::Esc);
    key(&mut m, KeyCode::Esc);
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.screen().view, View::Fleet);
    assert_eq!(m.stack.len(), 1);
    // Esc on the fleet view stays there.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.stack.len(), 1);
}

#[test]
fn flux_versions_and_a_controller_down_show_where_the_operator_reports() {
    let mut m = model();
    // The fleet: each workspace's main version, +1 where another runs too.
    let fleet = common::tui::screen(&mut m, 140, 30);
    assert!(fleet.contains("Flux v2.9.4 on 2 · v2.9.3 on 1 · 1 without a report"));
    // retail: shop-dev-1's helm-controller is down; shop-dev-2 has no report.
    command(&mut m, "ws retail");
    let retail = common::tui::screen(&mut m, 120, 12);
    let row = |name: &str| {
        retail
            .lines()
            .find(|l| l.contains(name))
            .unwrap()
            .to_string()
    };
    assert!(row("shop-dev-1").contains("v2.9.4"), "{retail}");
    assert!(
        row("shop-dev-1").contains("Flux: helm-controller is not ready"),
        "{retail}"
    );
    assert!(row("shop-dev-2").contains(" — "), "{retail}");
    command(&mut m, "cluster shop-dev-1");
    let cluster = common::tui::screen(&mut m, 160, 12);
    assert!(
        cluster.contains("Flux v2.9.4  Flux: helm-controller is not ready · 3/4 controllers ready"),
        "{cluster}"
    );
}

#[test]
fn a_summarized_cluster_counts_by_its_report_and_opening_it_asks_for_its_objects() {
    let mut m = model();
    // shop-dev-1 goes to the summary tier: counted by its report (the sample: 4 failing of 91).
    let c = ClusterId(2);
    let mut summary = Connection::new(Phase::Summary);
    summary.protocol = Some("HTTP/2");
    update(
        &mut m,
        Msg::Fleet(vec![
            event(c, Change::Counted(Counted::Report)),
            event(c, Change::Connection(summary)),
        ]),
    );
    let entry = m.index.cluster(c).unwrap();
    assert!(entry.objects.is_empty());
    assert_eq!((entry.health.failing(), entry.health.total()), (4, 91));
    command(&mut m, "ws retail");
    let retail = common::tui::screen(&mut m, 120, 12);
    let row = retail.lines().find(|l| l.contains("shop-dev-1")).unwrap();
    assert!(row.contains("summary"), "{retail}");
    assert!(
        row.contains("Flux: helm-controller is not ready"),
        "Flux's own trouble first: {retail}"
    );
    assert!(
        retail.contains("clusters 3/4 seen (2 live, 1 by summary, oldest report 40s)"),
        "{retail}"
    );
    // Triage says that failures counted by a report are not among its rows.
    command(&mut m, "fleet");
    key(&mut m, KeyCode::Char('t'));
    let triage = common::tui::screen(&mut m, 200, 12);
    assert!(
        triage.contains("and 4 failing on 1 cluster counted by their FluxReports"),
        "{triage}"
    );
    // Its next look names what its report counts failing: triage lists them with the rest.
    let named = "checkout-gateway";
    assert!(!triage.contains(named), "{triage}");
    let failing = object(
        FluxKind::Kustomization,
        "kustomization-build-failed.yaml",
        named,
    );
    update(
        &mut m,
        Msg::Fleet(vec![event(c, Change::Held(vec![failing]))]),
    );
    let triage = common::tui::screen(&mut m, 200, 12);
    assert!(triage.contains(named), "{triage}");
    assert!(!triage.contains("counted by their FluxReports"), "{triage}");
    assert_eq!(
        m.index.cluster(c).unwrap().health.total(),
        91,
        "still counted by its report"
    );
    command(&mut m, "ws retail");
    // Opening it asks its source to watch its objects; leaving and coming back asks again.
    let effects = keys(&mut m, KeyCode::Enter);
    let opened: Vec<&str> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Open(info) => Some(info.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(opened, ["shop-dev-1"]);
    assert!(
        keys(&mut m, KeyCode::Char('j')).is_empty(),
        "moving inside asks nothing"
    );
    keys(&mut m, KeyCode::Esc);
    let again = keys(&mut m, KeyCode::Enter);
    assert!(again.iter().any(|e| matches!(e, Effect::Open(_))));
}

/// The redis HelmRelease's detail view (stalled, on pay-prod-us).
fn redis_detail() -> (Model, ClusterId, ObjectKey) {
    let mut m = model();
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

#[test]
fn events_are_fetched_for_the_object_shown_and_late_answers_are_dropped() {
    let (mut m, cluster, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('e'));
    assert_eq!(
        effects,
        [Effect::FetchEvents {
            cluster,
            info: m.index.cluster(cluster).unwrap().info.clone(),
            key: redis.clone()
        }]
    );
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("events")));
    // An answer about another object (the user was there a moment ago) changes nothing.
    let other = ObjectKey::new(FluxKind::HelmRelease, "apps", "podinfo");
    update(
        &mut m,
        Msg::Fetched {
            cluster,
            key: other,
            fetched: Fetched::Events(Vec::new()),
        },
    );
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("events")));
    let mut failed = ObjectEvent::from_value(&sample("event-kustomization-health-failed.yaml"));
    failed.reason = "InstallFailed".into();
    failed.message = "Helm install failed for release data/redis with chart redis@21.2.5: \
        context deadline exceeded"
        .into();
    failed.last_seen = Some(now() - jiff::SignedDuration::from_mins(3));
    let older = ObjectEvent::from_value(&sample("event-helmrelease-docs.yaml"));
    update(
        &mut m,
        Msg::Fetched {
            cluster,
            key: redis,
            fetched: Fetched::Events(vec![failed, older]),
        },
    );
    insta::assert_snapshot!("detail_events", common::tui::screen(&mut m, 100, 24));
}

#[test]
fn the_yaml_scrolls_within_its_length() {
    let (mut m, cluster, redis) = redis_detail();
    keys(&mut m, KeyCode::Char('y'));
    let yaml: String = (1..=60).map(|i| format!("line{i}: {i}\n")).collect();
    update(
        &mut m,
        Msg::Fetched {
            cluster,
            key: redis,
            fetched: Fetched::Yaml(yaml),
        },
    );
    let top = common::tui::screen(&mut m, 100, 30);
    assert!(top.contains("line1: 1") && !top.contains("line60"), "{top}");
    key(&mut m, KeyCode::Char('G'));
    let bottom = common::tui::screen(&mut m, 100, 30);
    assert!(
        bottom.contains("line60: 60") && !bottom.contains("line1: 1 "),
        "{bottom}"
    );
    // One up from the bottom shows the line above the pane again, not nothing.
    let last_first = m.reads.fetched_scroll;
    key(&mut m, KeyCode::Char('k'));
    common::tui::screen(&mut m, 100, 30);
    assert_eq!(m.reads.fetched_scroll, last_first - 1);
    key(&mut m, KeyCode::Char('g'));
    assert_eq!(m.reads.fetched_scroll, 0);
    // Leaving the object forgets what was fetched for it.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.reads.fetched, None);
}

/// What `fluxfleet workloads` would have read of `apps` on `clusters`: its Deployment's new pod
/// cannot pull its image; on the last cluster the pods could not be listed.
fn apps_evidence(clusters: &[&str]) -> fluxfleet::fleet::workload::Folded {
    use fluxfleet::fleet::workload::{Evidence, ReadError, Unread, WorkloadRef, fold, parse};
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
                w.unread.push(Unread {
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

#[test]
fn w_on_a_triage_group_reads_what_broke_inside_on_all_its_clusters_folded() {
    let mut m = model();
    key(&mut m, KeyCode::Char('t'));
    // The unreachable cluster's group is about no object: nothing to read.
    for _ in 0..2 {
        key(&mut m, KeyCode::Char('j'));
    }
    assert!(keys(&mut m, KeyCode::Char('w')).is_empty());
    assert!(
        m.flash
            .take()
            .is_some_and(|f| f.contains("not about a Flux object"))
    );
    key(&mut m, KeyCode::Char('k'));
    let effects = keys(&mut m, KeyCode::Char('w'));
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let [
        Effect::FetchWorkloads {
            key: k,
            clusters,
            infos,
        },
    ] = effects.as_slice()
    else {
        panic!("{effects:?}")
    };
    assert_eq!(*k, apps);
    let names: Vec<&str> = infos.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["pay-prod-eu", "pay-prod-us"]);
    assert_eq!(clusters.len(), 2);
    assert_eq!(
        m.screen().view,
        View::Workloads {
            key: apps.clone(),
            clusters: clusters.clone()
        }
    );
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("workloads")));
    // An answer for other clusters (a group the user left) changes nothing.
    update(
        &mut m,
        Msg::Workloads {
            key: apps.clone(),
            clusters: clusters[..1].into(),
            folded: Box::new(apps_evidence(&["pay-prod-eu"])),
        },
    );
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("workloads")));
    update(
        &mut m,
        Msg::Workloads {
            key: apps,
            clusters: clusters.clone(),
            folded: Box::new(apps_evidence(&["pay-prod-eu", "pay-prod-us", "shop-dev-1"])),
        },
    );
    insta::assert_snapshot!("triage_workloads", common::tui::screen(&mut m, 120, 22));
    key(&mut m, KeyCode::Esc);
    assert!(matches!(m.screen().view, View::Triage { .. }));
    assert_eq!(m.reads.fetched, None);
}

#[test]
fn w_in_the_detail_view_reads_its_object_on_its_cluster_only() {
    let (mut m, cluster, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('w'));
    assert_eq!(
        effects,
        [Effect::FetchWorkloads {
            key: redis,
            clusters: vec![cluster].into(),
            infos: vec![m.index.cluster(cluster).unwrap().info.clone()],
        }]
    );
    assert!(matches!(m.screen().view, View::Detail { .. }));
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("workloads")));
}

#[test]
fn triage_groups_identical_failures_and_expands_to_clusters() {
    let mut m = model();
    key(&mut m, KeyCode::Char('t'));
    m.refresh_rows();
    // The costliest first (members and what they hold back), then the unwatched before the
    // stalled before the failed; each failure on two clusters.
    insta::assert_snapshot!("triage", common::tui::screen(&mut m, 110, 14));
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Char(' '));
    m.refresh_rows();
    let members: Vec<_> = m
        .rows
        .ids
        .iter()
        .filter(|r| matches!(r, RowId::Object(..)))
        .collect();
    assert_eq!(members.len(), 2, "{:?}", m.rows.ids);
    insta::assert_snapshot!("triage_expanded", common::tui::screen(&mut m, 110, 14));
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

#[test]
fn triage_shows_root_causes_with_what_they_hold_back_and_the_flat_grouping_one_key_away() {
    let mut m = chain_model();
    key(&mut m, KeyCode::Char('t'));
    m.refresh_rows();
    // apps is the root: payments and podinfo-oci are counted under it, not listed; the cycle
    // is reported on its own.
    insta::assert_snapshot!("triage_root_causes", common::tui::screen(&mut m, 120, 14));
    let texts: Vec<String> = m
        .rows
        .ids
        .iter()
        .filter_map(|id| match id {
            RowId::Group(g) => Some(fluxfleet::app::triage::group_text(&m.rows.groups[g])),
            _ => None,
        })
        .collect();
    assert!(!texts.iter().any(|t| t.contains("/payments")), "{texts:?}");
    let apps = m
        .rows
        .groups
        .values()
        .find(|g| fluxfleet::app::triage::group_text(g).contains("flux-system/apps "))
        .unwrap();
    assert_eq!(
        (apps.holds.fewest, apps.holds.most, apps.holds.total),
        (2, 2, 4)
    );
    // Expanded: each cluster, with what the root holds back there. It costs the most (two
    // failing copies holding back four), so it comes first.
    key(&mut m, KeyCode::Char(' '));
    insta::assert_snapshot!("triage_root_expanded", common::tui::screen(&mut m, 120, 14));
    // The actions on a root-cause group act on the roots.
    let g = m.screen().selected.clone();
    assert!(matches!(g, Some(RowId::Group(_))), "{g:?}");
    key(&mut m, KeyCode::Char('W'));
    let confirm = m.confirm.clone().expect("a confirmation");
    let names: Vec<&str> = confirm.targets.iter().map(|(_, k)| &*k.name).collect();
    assert_eq!(names, ["apps", "apps"]);
    key(&mut m, KeyCode::Esc);
    // `c`: every failure alike, the waiting ones in groups of their own.
    key(&mut m, KeyCode::Char('c'));
    m.refresh_rows();
    insta::assert_snapshot!("triage_flat", common::tui::screen(&mut m, 120, 14));
    assert!(m.rows.groups.values().any(|g| {
        fluxfleet::app::triage::group_text(g).contains("flux-system/payments DependencyNotReady")
    }));
}

/// Triage rebuilt with each cluster's kept part equals triage built from nothing, whatever
/// changes: roots breaking and recovering, objects going and coming back, a cycle broken, a
/// cluster lost and found, the toggles.
#[test]
fn triage_kept_between_changes_equals_triage_built_afresh() {
    let mut m = chain_model();
    key(&mut m, KeyCode::Char('t'));
    let ks = FluxKind::Kustomization;
    let apps_ready = object(ks, "kustomization-ready.yaml", "apps");
    let apps_failing = object(ks, "kustomization-health-check-failed.yaml", "apps");
    let mut down = Connection::new(Phase::Unreachable);
    down.error = Some("connection refused".into());
    let namespace = apps_ready.key.namespace.clone();
    let named = |name: &str| ObjectKey::new(ks, &namespace, name);
    let changes: Vec<(ClusterId, Change)> = vec![
        (ClusterId(0), Change::Applied(apps_ready.clone())),
        (ClusterId(1), Change::Applied(apps_ready.clone())),
        (ClusterId(0), Change::Applied(apps_failing.clone())),
        (ClusterId(0), Change::Deleted(named("payments"))),
        (ClusterId(0), Change::Deleted(named("a"))),
        (ClusterId(1), Change::Connection(down)),
        (ClusterId(2), Change::Applied(apps_failing.clone())),
        (ClusterId(1), Change::Connection(live())),
        (ClusterId(1), Change::Applied(apps_failing)),
        (ClusterId(0), Change::Replaced(ks, vec![apps_ready])),
    ];
    let fresh = |m: &Model| {
        let with = fluxfleet::app::rows::With {
            rollout: &m.settings.rollout,
            now: m.now,
            spreads: &mut Default::default(),
            triage: &mut Default::default(),
        };
        let rows = fluxfleet::app::rows::build(&m.index, m.screen(), with);
        (rows.ids, rows.groups)
    };
    let mut seen = std::collections::HashSet::new();
    for (step, (id, change)) in changes.into_iter().enumerate() {
        update(&mut m, Msg::Fleet(vec![event(id, change)]));
        // Every other step, the flat grouping or failing-only for a while.
        match step % 4 {
            1 => key(&mut m, KeyCode::Char('c')),
            3 => key(&mut m, KeyCode::Char('!')),
            _ => {}
        }
        m.refresh_rows();
        let kept = (m.rows.ids.clone(), m.rows.groups.clone());
        assert_eq!(kept, fresh(&m), "step {step}");
        seen.insert(kept.0.len());
    }
    // The changes did change what triage lists.
    assert!(seen.len() > 2, "{seen:?}");
}

#[test]
fn the_detail_lists_what_an_object_needs_and_holds_back_and_enter_opens_each() {
    let mut m = chain_model();
    let ks = |name: &str| ObjectKey::new(FluxKind::Kustomization, "flux-system", name);
    m.push(View::Detail {
        cluster: ClusterId(0),
        key: ks("payments"),
    });
    m.refresh_rows();
    insta::assert_snapshot!("detail_dependencies", common::tui::screen(&mut m, 110, 24));
    // Its source, its dependency, its root cause: enter on the root opens it.
    let linked: Vec<&str> = m
        .rows
        .ids
        .iter()
        .map(|id| match id {
            RowId::Object(_, k) => &*k.name,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(linked, ["flux-system", "apps", "apps"]);
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Enter);
    assert_eq!(
        m.screen().view,
        View::Detail {
            cluster: ClusterId(0),
            key: ks("apps")
        }
    );
    m.refresh_rows();
    let screen = common::tui::screen(&mut m, 110, 24);
    assert!(screen.contains("blocks"), "{screen}");
    assert!(
        screen.contains("Kustomization flux-system/podinfo-oci"),
        "{screen}"
    );
    // The detail's actions stay on its object, whichever link is selected.
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Char('R'));
    let confirm = m.confirm.clone().expect("a confirmation");
    assert_eq!(confirm.targets, [(ClusterId(0), ks("apps"))]);
}

#[test]
fn the_fuzzy_filter_narrows_rows_and_esc_clears_it() {
    let mut m = model();
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ks");
    key(&mut m, KeyCode::Enter);
    assert_eq!(
        m.screen().view,
        View::Objects {
            scope: fluxfleet::app::model::Scope::Fleet,
            kind: Some(FluxKind::Kustomization)
        }
    );
    m.refresh_rows();
    assert_eq!(m.rows.ids.len(), 6);
    key(&mut m, KeyCode::Char('/'));
    typed(&mut m, "payapps");
    assert_eq!(m.input, Input::Filter);
    m.refresh_rows();
    assert_eq!(m.rows.ids.len(), 2, "pay-prod-eu/apps and pay-prod-us/apps");
    insta::assert_snapshot!("objects_filtered", common::tui::screen(&mut m, 120, 12));
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.input, Input::None);
    key(&mut m, KeyCode::Esc);
    m.refresh_rows();
    assert_eq!(
        m.rows.ids.len(),
        6,
        "esc clears the filter before going back"
    );
    // Failing only.
    key(&mut m, KeyCode::Char('!'));
    m.refresh_rows();
    assert_eq!(m.rows.ids.len(), 2);
}

#[test]
fn the_selection_stays_on_its_object_while_rows_change_around_it() {
    let mut m = model();
    update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Char(':'), KeyModifiers::NONE)),
    );
    typed(&mut m, "all");
    key(&mut m, KeyCode::Enter);
    m.refresh_rows();
    for _ in 0..7 {
        key(&mut m, KeyCode::Char('j'));
    }
    let chosen = m.screen().selected.clone().unwrap();
    // The first cluster loses its Kustomizations: two rows above the selection disappear.
    update(
        &mut m,
        Msg::Fleet(vec![event(
            ClusterId(0),
            Change::Replaced(FluxKind::Kustomization, vec![]),
        )]),
    );
    m.refresh_rows();
    assert_eq!(m.screen().selected.as_ref(), Some(&chosen));
    assert_eq!(m.rows.ids.get(m.screen().cursor), Some(&chosen));
}

#[test]
fn help_is_generated_from_the_keymap_in_effect_and_warnings_show() {
    let mut table = Config::defaults().keymap;
    let user: toml::Table = "[global]\nquit = \"x\"\nteleport = \"T\"\n"
        .parse()
        .unwrap();
    for (k, v) in user {
        if let (Some(t), toml::Value::Table(v)) =
            (table.get_mut(&k).and_then(|t| t.as_table_mut()), v)
        {
            t.extend(v);
        }
    }
    let (keymap, warnings) = Keymap::from_config(&table);
    let (index, events) = fleet();
    let mut m = Model::new(index, keymap, warnings, now());
    update(&mut m, Msg::Fleet(events));
    key(&mut m, KeyCode::Char('?'));
    let text = common::tui::screen(&mut m, 100, 40);
    assert!(text.contains(&format!("{:<18}quit", "x")), "{text}");
    assert!(
        text.contains("keymap.global.teleport: not an action"),
        "{text}"
    );
    insta::assert_snapshot!("help_fleet", text);
    key(&mut m, KeyCode::Char('q'));
    assert!(!m.quit, "q is no longer quit");
    key(&mut m, KeyCode::Char('x'));
    assert!(m.quit);
}

#[test]
fn unknown_commands_and_names_say_so() {
    let mut m = model();
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ws nowhere");
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.flash.as_deref(), Some("no workspace \"nowhere\""));
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "ws ret");
    key(&mut m, KeyCode::Tab);
    assert_eq!(m.input, Input::Command("ws retail".into()));
    key(&mut m, KeyCode::Enter);
    assert!(matches!(m.screen().view, View::Workspace(_)));
    key(&mut m, KeyCode::Char(':'));
    typed(&mut m, "bogus");
    key(&mut m, KeyCode::Enter);
    assert!(
        m.flash
            .as_deref()
            .unwrap()
            .contains("unknown command :bogus")
    );
}

#[test]
fn the_selection_stays_in_sight_in_a_short_terminal() {
    let mut m = model();
    key(&mut m, KeyCode::Enter);
    key(&mut m, KeyCode::Enter);
    // The cluster view spends a line on the connection: its table is shorter than other lists.
    key(&mut m, KeyCode::Char('G'));
    let text = common::tui::screen(&mut m, 100, 11);
    assert!(text.contains("redis"), "{text}");
}

fn command(model: &mut Model, line: &str) -> Vec<Effect> {
    key(model, KeyCode::Char(':'));
    typed(model, line);
    keys(model, KeyCode::Enter)
}

#[test]
fn in_read_only_mode_action_keys_explain_how_to_enable_writes_and_do_nothing() {
    let (mut m, ..) = redis_detail();
    m.settings.read_only = true;
    for code in ['s', 'r', 'R', 'W', 'F'] {
        let effects = keys(&mut m, KeyCode::Char(code));
        assert_eq!(effects, []);
        assert!(m.confirm.is_none());
        assert!(
            m.flash.as_deref().unwrap_or_default().contains("--write"),
            "{:?}",
            m.flash
        );
    }
    for line in [
        "suspend",
        "resume",
        "reconcile",
        "reconcile --with-source",
        "force",
        "reset",
    ] {
        assert_eq!(command(&mut m, line), []);
        assert!(m.confirm.is_none(), ":{line}");
    }
    assert!(m.run.is_none());
}

#[test]
fn suspending_a_triage_group_asks_why_confirms_and_sends_one_job_for_its_clusters() {
    let mut m = model();
    key(&mut m, KeyCode::Char('t'));
    key(&mut m, KeyCode::Char('j'));
    m.refresh_rows();
    assert!(matches!(m.screen().selected, Some(RowId::Group(_))));
    assert_eq!(keys(&mut m, KeyCode::Char('s')), []);
    typed(&mut m, "flapping");
    insta::assert_snapshot!("confirm_suspend", common::tui::screen(&mut m, 100, 20));
    key(&mut m, KeyCode::Enter);
    let effects = keys(&mut m, KeyCode::Char('y'));
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(job.intent.reason.as_deref(), Some("flapping"));
    assert_eq!(job.targets.len(), 2, "both clusters of the group");
    let clusters: std::collections::BTreeSet<_> = job.targets.iter().map(|t| t.cluster).collect();
    assert_eq!(clusters.len(), 2);
    for t in &job.targets {
        let steps = t.plan.as_ref().unwrap();
        assert_eq!(steps[0].patch["spec"]["suspend"], true);
    }
    assert_eq!(m.screen().view, View::Results);
    // Outcomes come back one by one.
    let first = &job.targets[0];
    update(
        &mut m,
        Msg::Acted {
            run: job.run,
            cluster: first.cluster,
            key: first.key.clone(),
            outcome: Outcome::Forbidden("no patch for you".into()),
        },
    );
    let run = m.run.as_ref().unwrap();
    assert_eq!(
        run.rows[0].state,
        RunState::Ended(Outcome::Forbidden("no patch for you".into()))
    );
    assert_eq!(run.rows[1].state, RunState::Sending);
    // Retry (ctrl-r) offers the same action on what failed, and only that.
    update(
        &mut m,
        Msg::Key(KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL)),
    );
    let retry = m.confirm.as_ref().expect("a confirmation");
    assert_eq!(retry.verb, Verb::Suspend);
    assert_eq!(retry.targets, [(first.cluster, first.key.clone())]);
}

#[test]
fn above_the_threshold_the_count_must_be_typed_and_a_reconcile_waits_for_the_watch() {
    let mut m = model();
    m.settings.actions.confirm_above = 1;
    key(&mut m, KeyCode::Char('a'));
    typed(&mut m, "/podinfo");
    key(&mut m, KeyCode::Enter);
    assert_eq!(command(&mut m, "mark"), []);
    let marked = m.marks.len();
    assert!(marked >= 2, "{marked}");
    key(&mut m, KeyCode::Char('R'));
    assert_eq!(m.confirm.as_ref().unwrap().stage, Stage::Count);
    typed(&mut m, "99");
    assert_eq!(keys(&mut m, KeyCode::Enter), []);
    assert!(m.confirm.is_some(), "a wrong count does not confirm");
    typed(&mut m, &marked.to_string());
    let effects = keys(&mut m, KeyCode::Enter);
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert!(m.marks.is_empty(), "marks are used up");
    let target = job.targets.iter().find(|t| t.plan.is_ok()).unwrap();
    // The executor's word for a target: accepted (then requested), or how it ended.
    let done = || Msg::Acted {
        run: job.run,
        cluster: target.cluster,
        key: target.key.clone(),
        outcome: Outcome::Done,
    };
    update(&mut m, done());
    let state = |m: &Model| {
        m.run
            .as_ref()
            .unwrap()
            .rows
            .iter()
            .find(|r| r.cluster == target.cluster && r.key == target.key)
            .unwrap()
            .state
            .clone()
    };
    assert_eq!(state(&m), RunState::Requested);
    // The watch brings the object back with the token handled.
    let mut handled = FluxSummary::clone(
        m.index
            .cluster(target.cluster)
            .unwrap()
            .objects
            .get(&target.key)
            .unwrap(),
    );
    handled.last_handled_reconcile_at = Some(job.intent.token.as_str().into());
    let effects = update(
        &mut m,
        Msg::Fleet(vec![event(target.cluster, Change::Applied(handled))]),
    );
    assert_eq!(state(&m), RunState::Handled);
    // The executor is told, so that the journal records when it was handled.
    assert_eq!(
        effects,
        [Effect::Handled {
            run: job.run,
            cluster: target.cluster,
            key: target.key.clone(),
        }]
    );
    // Its "done" that follows leaves the row handled.
    update(&mut m, done());
    assert_eq!(state(&m), RunState::Handled);
    // The results view counts as the headless progress line does.
    let text = common::tui::screen(&mut m, 140, 30);
    let line = format!(
        "reconcile: 1/{} sent · 0 requested · 1 handled · 0 failed · 0 refused",
        job.targets.len()
    );
    assert!(text.contains(&line), "{text}");
}

#[test]
fn deny_rules_and_the_bulk_limit_hold_in_the_tui() {
    let (mut m, cluster, redis) = redis_detail();
    m.settings.actions.deny = vec![fluxfleet::config::DenyRule {
        origin: None,
        workspace: Some("pay*".into()),
        cluster: None,
        kind: Some("HelmRelease".into()),
        namespace: None,
        name: None,
    }];
    // Every target refused: no confirmation, nothing sent, and the reason on screen.
    assert_eq!(keys(&mut m, KeyCode::Char('R')), []);
    assert!(m.confirm.is_none());
    let flash = m.flash.clone().unwrap_or_default();
    assert!(
        flash.starts_with("nothing to reconcile: the object is refused"),
        "{flash}"
    );
    assert!(flash.contains("actions.deny[0]"), "{flash}");
    let _ = (cluster, redis);
    // Every object of a payments cluster marked: the confirmation counts the HelmReleases it
    // refuses apart from what it would send.
    key(&mut m, KeyCode::Esc);
    command(&mut m, "cluster pay-prod-eu");
    command(&mut m, "mark");
    let id = m.index.cluster_named("pay-prod-eu").unwrap();
    let releases = id
        .objects
        .keys()
        .filter(|k| k.kind == FluxKind::HelmRelease)
        .count();
    let others = id.objects.len() - releases;
    assert!(releases > 0 && others > 0);
    key(&mut m, KeyCode::Char('R'));
    let tally = m.confirm.as_ref().expect("a confirmation").tally;
    assert_eq!((tally.sent, tally.refused), (others, releases));
    // More targets than allowed: refused before any confirmation.
    let mut m = model();
    m.settings.actions.max_targets = 1;
    key(&mut m, KeyCode::Char('a'));
    command(&mut m, "mark");
    assert!(m.marks.len() > 1);
    assert_eq!(keys(&mut m, KeyCode::Char('s')), []);
    assert!(m.confirm.is_none());
    assert!(
        m.flash
            .as_deref()
            .unwrap_or_default()
            .contains("max_targets")
    );
}

#[test]
fn the_audit_view_reads_the_journal_and_summarises_each_attempt() {
    let mut m = model();
    assert_eq!(command(&mut m, "audit"), [Effect::ReadAudit]);
    assert_eq!(m.screen().view, View::Audit);
    let line = |time: &str, action: &str, outcomes: &[&str], reason: Option<&str>| {
        let targets: Vec<Value> = outcomes
            .iter()
            .map(|o| serde_json::json!({"cluster": "pay-prod-us", "outcome": o}))
            .collect();
        serde_json::json!({"time": time, "user": "alice", "action": action,
            "reason": reason, "token": "t", "targets": targets})
        .to_string()
    };
    update(
        &mut m,
        Msg::Audit(Ok(vec![
            line(
                "2026-11-21T09:59:00Z",
                "reconcile",
                &["done", "forbidden"],
                None,
            ),
            line(
                "2026-11-21T09:00:00Z",
                "suspend",
                &["done", "done"],
                Some("flapping"),
            ),
        ])),
    );
    insta::assert_snapshot!("audit", common::tui::screen(&mut m, 100, 8));
}

#[test]
fn the_audit_view_shows_an_intent_without_outcomes_as_interrupted() {
    let mut m = model();
    command(&mut m, "audit");
    let line = |stage: &str, token: &str, outcome: &str| {
        serde_json::json!({"time": "2026-11-21T09:59:00Z", "stage": stage, "user": "alice",
            "action": "reconcile", "token": token,
            "targets": [{"cluster": "pay-prod-us", "outcome": outcome}]})
        .to_string()
    };
    // Newest first, as read from the journal: an interrupted attempt, then a finished one
    // (its outcomes above its intent).
    let journal = fluxfleet::audit::attempts(vec![
        line("intent", "t2", "intended"),
        line("outcome", "t1", "done"),
        line("intent", "t1", "intended"),
    ]);
    update(&mut m, Msg::Audit(Ok(journal)));
    let shown = common::tui::screen(&mut m, 120, 8);
    assert_eq!(shown.matches("alice reconcile").count(), 2, "{shown}");
    assert!(shown.contains("1 objects: 1 done"), "{shown}");
    assert!(
        shown.contains("no outcome recorded — still running, or interrupted"),
        "{shown}"
    );
}

/// Three rings of two clusters each, a new revision of `apps` on its way: dev runs it, one
/// staging cluster fails on it (for 50 minutes: stuck), prod runs the one before.
fn rollout_model() -> Model {
    let mut index = Index::new();
    let mut events = Vec::new();
    let old = "main@sha1:1111111111111111111111111111111111111111";
    let new = "main@sha1:2222222222222222222222222222222222222222";
    let ago = |m: i64| (now() - jiff::SignedDuration::from_mins(m)).to_string();
    let clusters: [(&str, &str, &str, Option<&str>, i64); 6] = [
        ("dev-1", "dev", new, None, 120),
        ("dev-2", "dev", new, None, 90),
        ("staging-1", "staging", new, None, 60),
        ("staging-2", "staging", old, Some(new), 50),
        ("prod-1", "prod", old, None, 3000),
        ("prod-2", "prod", old, None, 3000),
    ];
    for (i, (name, ws, applied, tried, minutes)) in clusters.into_iter().enumerate() {
        let id = ClusterId(i as u32);
        index.add_cluster(ClusterInfo {
            key: key_of(id),
            ..ClusterInfo::new(name, ws)
        });
        events.push(event(id, Change::Connection(live())));
        let mut ks = sample(if tried.is_some() {
            "kustomization-health-check-failed.yaml"
        } else {
            "kustomization-ready.yaml"
        });
        ks["metadata"]["name"] = Value::from("apps");
        let status = &mut ks["status"];
        status["lastAppliedRevision"] = Value::from(applied);
        status["lastAttemptedRevision"] = Value::from(tried.unwrap_or(applied));
        status["history"] = serde_json::json!([
            {"firstReconciled": ago(minutes), "metadata": {"revision": applied}}
        ]);
        for c in status["conditions"].as_array_mut().unwrap() {
            c["lastTransitionTime"] = Value::from(ago(minutes));
        }
        let mut hr = sample("helmrelease-ready.yaml");
        let chart = if applied == new { "6.7.1" } else { "6.7.0" };
        hr["status"]["history"][0]["chartVersion"] = Value::from(chart);
        hr["status"]["lastAttemptedRevision"] = Value::from(chart);
        events.push(event(
            id,
            Change::Replaced(
                FluxKind::Kustomization,
                vec![FluxSummary::of(FluxKind::Kustomization, &ks).unwrap()],
            ),
        ));
        events.push(event(
            id,
            Change::Replaced(
                FluxKind::HelmRelease,
                vec![FluxSummary::of(FluxKind::HelmRelease, &hr).unwrap()],
            ),
        ));
    }
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut model = Model::new(index, keymap, Vec::new(), now());
    model.settings.rollout.rings.patterns = vec!["dev".into(), "staging".into(), "prod".into()];
    update(&mut model, Msg::Fleet(events));
    model
}

/// From kubeconfigs no collector keeps a history: `:history` shows what this session saw change
/// since it started, as the collectors would have recorded it.
#[test]
fn history_without_collectors_is_what_the_session_saw() {
    let mut m = model();
    // apps on pay-prod-eu recovers.
    let mut ready = sample("kustomization-ready.yaml");
    ready["metadata"]["name"] = Value::from("apps");
    let ready = FluxSummary::of(FluxKind::Kustomization, &ready).unwrap();
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(0), Change::Applied(ready))]),
    );
    command(&mut m, "history 1h");
    let asked = m.reads.history_since.unwrap();
    assert_eq!(asked, now() - jiff::SignedDuration::from_hours(1));
    update(
        &mut m,
        Msg::History(Err(fluxfleet::fleet::read::ReadError::NoHistory)),
    );
    let Some(Ok(changes)) = &m.reads.history else {
        panic!("{:?}", m.reads.history);
    };
    let said: Vec<String> = changes
        .iter()
        .map(|c| format!("{} {} {:?} → {:?}", c.cluster, c.what, c.from, c.to))
        .collect();
    assert!(
        said.contains(&"pay-prod-eu health Some(\"failed\") → Some(\"ready\")".to_string()),
        "{said:?}"
    );
    let shot = common::tui::screen(&mut m, 120, 8);
    assert!(
        shot.contains("what this session saw since it started"),
        "{shot}"
    );
    assert!(shot.contains("health failed → ready"), "{shot}");
}

/// The matrix opened on the bus reads the last week's history, and each ring's header says how
/// it delivered: dev took the new revision to half its clusters in 10 minutes and to all in 30,
/// then failed on it and was restored in 15.
#[test]
fn the_matrix_says_how_each_ring_delivered_from_the_history() {
    use fluxfleet::fleet::history::Change as Changed;
    let mut m = rollout_model();
    key(&mut m, KeyCode::Char('v'));
    key(&mut m, KeyCode::Char('o'));
    key(&mut m, KeyCode::Char('o'));
    m.refresh_rows();
    let effects = keys(&mut m, KeyCode::Enter);
    let week = now() - jiff::SignedDuration::from_hours(7 * 24);
    assert_eq!(effects, [Effect::ReadHistory(week)]);
    let new = "main@sha1:2222222222222222222222222222222222222222";
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let at = |m: i64| now() - jiff::SignedDuration::from_mins(m);
    let change = |minutes: i64, cluster: &str, what: &str, to: &str| {
        let mut c = Changed::of_object(at(minutes), cluster, "dev".into(), what, &apps);
        c.to = Some(to.into());
        c
    };
    let history = vec![
        change(130, "dev-1", "revision", new),
        change(120, "dev-1", "revision", new),
        change(100, "dev-2", "revision", new),
        change(95, "dev-2", "health", "failed"),
        change(80, "dev-2", "health", "ready"),
    ];
    update(&mut m, Msg::History(Ok(history)));
    m.refresh_rows();
    let shot = common::tui::screen(&mut m, 200, 8);
    assert!(
        shot.contains("lead 0s/30m/30m over 1 · fails 100% · restore 15m"),
        "{shot}"
    );
}

#[test]
fn the_rollout_view_shows_each_thing_s_spread_and_its_matrix_ring_by_ring() {
    let mut m = rollout_model();
    key(&mut m, KeyCode::Char('v'));
    m.refresh_rows();
    assert!(matches!(m.screen().view, View::Rollout { .. }));
    insta::assert_snapshot!("rollout", common::tui::screen(&mut m, 120, 12));
    // Stuck first with `o` twice (BEHIND, then STUCK): the Kustomization.
    key(&mut m, KeyCode::Char('o'));
    key(&mut m, KeyCode::Char('o'));
    m.refresh_rows();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    assert_eq!(m.screen().selected, Some(RowId::Rollout(apps.clone())));
    key(&mut m, KeyCode::Enter);
    m.refresh_rows();
    insta::assert_snapshot!("matrix", common::tui::screen(&mut m, 120, 16));
    // The rings in the configured order, the stuck cluster first in its ring.
    let ids = m.rows.ids.clone();
    assert_eq!(ids[0], RowId::Ring(0));
    let staging = ids.iter().position(|r| *r == RowId::Ring(1)).unwrap();
    assert_eq!(ids[staging + 1], RowId::Object(ClusterId(3), apps.clone()));

    // Marking a ring marks its clusters' copies.
    key(&mut m, KeyCode::Char(' '));
    let mut marked: Vec<_> = m.marks.iter().cloned().collect();
    marked.sort();
    assert_eq!(
        marked,
        [(ClusterId(0), apps.clone()), (ClusterId(1), apps.clone())]
    );
    // `:mark stuck` the stuck ones, which a reconcile with source then targets.
    command(&mut m, "unmark");
    command(&mut m, "mark stuck");
    assert_eq!(
        m.marks.iter().cloned().collect::<Vec<_>>(),
        [(ClusterId(3), apps.clone())]
    );
    key(&mut m, KeyCode::Char('W'));
    let confirm = m.confirm.as_ref().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::ReconcileWithSource);
    assert_eq!(confirm.targets, [(ClusterId(3), apps)]);
}

#[test]
fn the_rollout_view_follows_a_cluster_that_moves_to_the_newest_revision() {
    let mut m = rollout_model();
    command(&mut m, "rollout ks");
    m.refresh_rows();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    assert_eq!(m.rows.spreads[&apps].clusters.current, 3);
    // prod-1 applies the new revision: only what changed is recomputed, and it shows.
    let mut ks = sample("kustomization-ready.yaml");
    ks["metadata"]["name"] = Value::from("apps");
    let new = "main@sha1:2222222222222222222222222222222222222222";
    ks["status"]["lastAppliedRevision"] = Value::from(new);
    ks["status"]["lastAttemptedRevision"] = Value::from(new);
    ks["status"]["history"] = serde_json::json!([
        {"firstReconciled": NOW, "metadata": {"revision": new}}
    ]);
    let summary = FluxSummary::of(FluxKind::Kustomization, &ks).unwrap();
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(4), Change::Applied(summary))]),
    );
    m.refresh_rows();
    let row = &m.rows.spreads[&apps];
    assert_eq!((row.clusters.current, row.behind), (4, 2));
    // Deleted there: one copy fewer.
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(4), Change::Deleted(apps.clone()))]),
    );
    m.refresh_rows();
    assert_eq!(m.rows.spreads[&apps].clusters.total(), 5);
}

/// Five clusters of 20 objects in one workspace: all ready, 1 failing, 5 failing, 15 failing,
/// and 1 stalled; each heard from at a different time (0 s, 5 min, 30 min, 3 h ago, never).
fn degree_model() -> Model {
    let mut index = Index::new();
    let ks = FluxKind::Kustomization;
    let mut events = Vec::new();
    let failing = [
        (0, None),
        (1, None),
        (5, None),
        (15, None),
        (1, Some("stalled")),
    ];
    let heard = [Some(0), Some(5), Some(30), Some(180), None];
    for (i, ((bad, stalled), minutes)) in failing.into_iter().zip(heard).enumerate() {
        let id = index.add_cluster(ClusterInfo {
            key: key_of(ClusterId(i as u32)),
            ..ClusterInfo::new(&format!("c{i}"), "shop")
        });
        let objects: Vec<FluxSummary> = (0..20)
            .map(|n| {
                let file = match (n < bad, stalled) {
                    (true, Some(_)) => "kustomization-stalled-invalid-cel.yaml",
                    (true, None) => "kustomization-health-check-failed.yaml",
                    (false, _) => "kustomization-ready.yaml",
                };
                object(ks, file, &format!("app-{n:02}"))
            })
            .collect();
        let at = match minutes {
            Some(m) => now() - jiff::SignedDuration::from_mins(m),
            // Never heard from: listed, but no event has a time the map counts.
            None => now(),
        };
        events.push(Event {
            cluster: key_of(id),
            at,
            change: Change::Connection(live()),
        });
        if minutes.is_some() {
            events.push(Event {
                cluster: key_of(id),
                at,
                change: Change::Replaced(ks, objects),
            });
        }
    }
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut model = Model::new(index, keymap, Vec::new(), now());
    update(&mut model, Msg::Fleet(events));
    model
}

/// The map's row of cells for workspace `ws`, as drawn.
fn map_cells(shot: &str, ws: &str) -> String {
    let line = shot
        .lines()
        .skip_while(|l| !l.contains("Fleet map"))
        .find(|l| l.contains(&format!("│{ws} ")))
        .unwrap_or_else(|| panic!("no map line for {ws}: {shot}"));
    let after = line.split_once(&format!("{ws} ")).unwrap().1;
    after.split(' ').next().unwrap().to_string()
}

#[test]
fn the_map_shows_how_bad_each_cluster_is_not_only_that_something_fails() {
    use fluxfleet::app::map::{Degree, Mark, Stall};
    let mut m = degree_model();
    let shot = common::tui::screen(&mut m, 100, 20);
    // Ready, then 1, 5 and 15 of 20 failing, then one stalled; the fifth is never heard from
    // (no objects listed: no Flux seen there yet).
    assert_eq!(map_cells(&shot, "shop"), "■░▒▓□", "{shot}");
    let marks: Vec<Mark> = m.index.entries().map(|(_, c)| Mark::of(c)).collect();
    assert_eq!(
        marks[..4],
        [
            Mark::Ready,
            Mark::Failing(Degree::Few, Stall::No),
            Mark::Failing(Degree::Many, Stall::No),
            Mark::Failing(Degree::Most, Stall::No),
        ]
    );
    assert!(shot.contains("░▒▓ failing <10% <50% more"), "{shot}");
    insta::assert_snapshot!("fleet_map_health", shot);
    // On the map the status line gives the cluster under the cursor its figures.
    key(&mut m, KeyCode::Tab);
    key(&mut m, KeyCode::Char('l'));
    key(&mut m, KeyCode::Char('l'));
    let shot = common::tui::screen(&mut m, 100, 20);
    assert!(
        shot.contains("c2 (shop) · 10–50% failing · 20 objects · 5 failing"),
        "{shot}"
    );
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.screen().view, View::Cluster(ClusterId(2)));
}

#[test]
fn the_map_shows_each_cluster_s_freshness_one_key_away() {
    let mut m = degree_model();
    common::tui::screen(&mut m, 100, 20);
    // Health → rollout → freshness.
    key(&mut m, KeyCode::Char('M'));
    key(&mut m, KeyCode::Char('M'));
    let shot = common::tui::screen(&mut m, 100, 20);
    assert!(
        shot.contains("freshness: since its last event or report"),
        "{shot}"
    );
    // Now, 5 min, 30 min, 3 h ago, never.
    assert_eq!(map_cells(&shot, "shop"), "█▓▒░□", "{shot}");
    insta::assert_snapshot!("fleet_map_freshness", shot);
    key(&mut m, KeyCode::Tab);
    key(&mut m, KeyCode::Char('l'));
    key(&mut m, KeyCode::Char('l'));
    key(&mut m, KeyCode::Char('l'));
    let shot = common::tui::screen(&mut m, 100, 20);
    assert!(
        shot.contains("c3 (shop) · last heard 3h ago · live"),
        "{shot}"
    );
    // Once more: back to health.
    key(&mut m, KeyCode::Char('M'));
    let shot = common::tui::screen(&mut m, 100, 20);
    assert_eq!(map_cells(&shot, "shop"), "■░▒▓□", "{shot}");
}

/// A live cluster whose watches keep breaking (each resumed at once) is live, and says so: a
/// flapping mark on the map's freshness, `live ↻` and its restarts in its workspace, and the
/// workspace's line in the fleet naming it.
#[test]
fn a_live_cluster_whose_watches_keep_restarting_is_marked_flapping_not_down() {
    let mut m = degree_model();
    let mut flapping = live();
    flapping.restarts = 4;
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(0), Change::Connection(flapping))]),
    );
    key(&mut m, KeyCode::Char('M'));
    key(&mut m, KeyCode::Char('M'));
    let shot = common::tui::screen(&mut m, 100, 20);
    assert_eq!(map_cells(&shot, "shop"), "↯▓▒░□", "{shot}");
    assert!(shot.contains("↯ watch flapping"), "{shot}");
    key(&mut m, KeyCode::Tab);
    let shot = common::tui::screen(&mut m, 100, 20);
    assert!(
        shot.contains("c0 (shop) · last heard 0s ago · live · watch restarted 4× in 5 min"),
        "{shot}"
    );
    // Back to the workspaces, and into `shop`.
    key(&mut m, KeyCode::Tab);
    key(&mut m, KeyCode::Enter);
    let shot = common::tui::screen(&mut m, 120, 20);
    let row = shot.lines().find(|l| l.contains("c0 ")).expect(&shot);
    assert!(row.contains("live ↻"), "{shot}");
    assert!(row.contains("watch restarted 4× in 5 min"), "{shot}");
    // Two restarts are said, not marked.
    let mut twice = live();
    twice.restarts = 2;
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(1), Change::Connection(twice))]),
    );
    let shot = common::tui::screen(&mut m, 120, 20);
    let row = shot.lines().find(|l| l.contains("c1 ")).expect(&shot);
    assert!(
        !row.contains("↻") && row.contains("watch restarted 2×"),
        "{shot}"
    );
    // A workspace with nothing failing names its flapping cluster in the fleet view.
    let mut index = Index::new();
    let id = index.add_cluster(ClusterInfo {
        key: key_of(ClusterId(0)),
        ..ClusterInfo::new("edge-1", "edge")
    });
    let mut flapping = live();
    flapping.restarts = 5;
    let ready = object(FluxKind::Kustomization, "kustomization-ready.yaml", "apps");
    let events = [
        Change::Connection(flapping),
        Change::Replaced(FluxKind::Kustomization, vec![ready]),
    ]
    .map(|change| event(id, change));
    let (keymap, _) = Keymap::from_config(&Config::defaults().keymap);
    let mut m = Model::new(index, keymap, Vec::new(), now());
    update(&mut m, Msg::Fleet(events.to_vec()));
    let shot = common::tui::screen(&mut m, 140, 20);
    assert!(
        shot.contains("1 cluster live, flapping: edge-1 watch restarted 5× in 5 min"),
        "{shot}"
    );
}

#[test]
fn the_map_shows_where_the_rollout_selected_stands_on_each_cluster() {
    let mut m = rollout_model();
    // Nothing selected yet: the map says how to choose one.
    common::tui::screen(&mut m, 120, 24);
    key(&mut m, KeyCode::Char('M'));
    let shot = common::tui::screen(&mut m, 120, 24);
    assert!(
        shot.contains("rollout: select one in the rollout view (v)"),
        "{shot}"
    );
    // The Kustomization apps, selected in the rollout view, is what the map follows.
    key(&mut m, KeyCode::Char('v'));
    m.refresh_rows();
    key(&mut m, KeyCode::Char('o'));
    key(&mut m, KeyCode::Char('o'));
    m.refresh_rows();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    assert_eq!(m.screen().selected, Some(RowId::Rollout(apps.clone())));
    key(&mut m, KeyCode::Char('j'));
    key(&mut m, KeyCode::Char('k'));
    assert_eq!(m.map_rollout, Some(apps));
    key(&mut m, KeyCode::Esc);
    let shot = common::tui::screen(&mut m, 120, 24);
    assert!(
        shot.contains("rollout of Kustomization flux-system/apps"),
        "{shot}"
    );
    assert!(shot.contains("▲ stuck"), "{shot}");
    insta::assert_snapshot!("fleet_map_rollout", shot);
    // On the map: staging-2, stuck, says what it runs and why; enter opens it.
    key(&mut m, KeyCode::Tab);
    key(&mut m, KeyCode::Char('G'));
    let shot = common::tui::screen(&mut m, 120, 24);
    assert!(
        shot.contains("staging-2 (staging) · stuck · runs main@sha1:11111111"),
        "{shot}"
    );
    key(&mut m, KeyCode::Enter);
    assert_eq!(m.screen().view, View::Cluster(ClusterId(3)));
}

/// The copy of `apps` on cluster `id`, suspended with `reason`, as the watch would show it.
fn suspended_apps(id: ClusterId, applied: &str, reason: &str) -> Event {
    let mut ks = sample("kustomization-suspended.yaml");
    ks["metadata"]["name"] = Value::from("apps");
    ks["metadata"]["namespace"] = Value::from("flux-system");
    ks["metadata"]["annotations"] = serde_json::json!({
        "fluxfleet.dev/suspended-by": "alice", "fluxfleet.dev/suspend-reason": reason,
    });
    ks["status"]["lastAppliedRevision"] = Value::from(applied);
    ks["status"]["lastAttemptedRevision"] = Value::from(applied);
    let summary = FluxSummary::of(FluxKind::Kustomization, &ks).unwrap();
    event(id, Change::Applied(summary))
}

#[test]
fn halting_a_rollout_suspends_where_it_has_not_arrived_and_resuming_undoes_exactly_that() {
    let mut m = rollout_model();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    command(&mut m, "rollout ks");
    m.refresh_rows();
    key(&mut m, KeyCode::Char('o'));
    key(&mut m, KeyCode::Char('o'));
    m.refresh_rows();
    assert_eq!(m.screen().selected, Some(RowId::Rollout(apps.clone())));
    key(&mut m, KeyCode::Enter);
    m.refresh_rows();
    // H: the copies not on the newest revision (staging-2 tried it and failed; prod has not
    // had it), with the reason already given.
    key(&mut m, KeyCode::Char('H'));
    let confirm = m.confirm.clone().expect("a confirmation");
    let new = "main@sha1:2222222222222222222222222222222222222222";
    assert_eq!(confirm.verb, Verb::Suspend);
    let mut targets: Vec<u32> = confirm.targets.iter().map(|(c, _)| c.0).collect();
    targets.sort_unstable();
    assert_eq!(targets, [3, 4, 5]);
    assert_eq!(confirm.reason, format!("halted rollout of {new}"));
    key(&mut m, KeyCode::Esc);
    // Suspended as asked, and one more suspended by hand for another reason.
    let old = "main@sha1:1111111111111111111111111111111111111111";
    let reason = format!("halted rollout of {new}");
    let events = vec![
        suspended_apps(ClusterId(3), old, &reason),
        suspended_apps(ClusterId(4), old, &reason),
        suspended_apps(ClusterId(5), old, &reason),
        suspended_apps(ClusterId(0), new, "CHG-1: node pool maintenance"),
    ];
    update(&mut m, Msg::Fleet(events));
    m.refresh_rows();
    // H again: nothing left to halt; U: exactly what the halt suspended.
    key(&mut m, KeyCode::Char('H'));
    assert!(m.confirm.is_none(), "{:?}", m.flash);
    key(&mut m, KeyCode::Char('U'));
    let confirm = m.confirm.clone().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::Resume);
    let mut targets: Vec<u32> = confirm.targets.iter().map(|(c, _)| c.0).collect();
    targets.sort_unstable();
    assert_eq!(targets, [3, 4, 5]);
    assert!(confirm.targets.iter().all(|(_, k)| *k == apps));
}

/// A proposal for `verb` on `key` on `cluster` only, planned on the model's fleet as
/// `fluxfleet mcp --propose` plans it.
fn proposal_on(
    m: &Model,
    cluster: ClusterId,
    key: &ObjectKey,
    verb: Verb,
) -> fluxfleet::proposals::Proposal {
    use fluxfleet::proposals::{Asked, Proposal, Selection};
    let selection = Selection {
        clusters: vec![m.index.cluster(cluster).unwrap().info.name.clone()],
        kind: Some(key.kind.to_string()),
        namespace: Some(key.namespace.to_string()),
        name: Some(key.name.to_string()),
        ..Selection::default()
    };
    let objects = fluxfleet::fleet::filter::selected(&m.index, &selection.filter().unwrap());
    let intent = fluxfleet::fleet::verbs::Intent {
        verb,
        user: "alice".into(),
        reason: Some("freeze".into()).filter(|_| verb == Verb::Suspend),
        token: "2026-11-21T09:00:00Z".into(),
    };
    let guard = fluxfleet::actions::Guard {
        actions: &m.settings.actions,
        permissions: None,
    };
    let targets = fluxfleet::actions::plan(&m.index, objects, &intent, &guard);
    let asked = Asked {
        proposed_by: "mcp:assistant".into(),
        why: Some("redis is stalled".into()),
        selection,
        expiry: std::time::Duration::from_secs(3600),
    };
    Proposal::new(&intent, &targets, asked, now())
}

#[test]
fn a_proposal_is_approved_only_as_proposed_and_rejected_with_a_reason() {
    use fluxfleet::proposals::Decision;
    let (mut m, cluster, redis) = redis_detail();
    let suspend = proposal_on(&m, cluster, &redis, Verb::Suspend);
    let reconcile = proposal_on(&m, cluster, &redis, Verb::Reconcile);
    assert_eq!(command(&mut m, "proposals"), [Effect::ReadProposals]);
    assert_eq!(m.screen().view, View::Proposals);
    update(
        &mut m,
        Msg::Proposals(Ok(vec![reconcile.clone(), suspend.clone()])),
    );
    let text = common::tui::screen(&mut m, 140, 30);
    assert!(
        text.contains(&reconcile.id) && text.contains("redis is stalled"),
        "{text}"
    );
    // Read-only: approving explains how to write, and nothing is asked.
    m.settings.read_only = true;
    assert_eq!(keys(&mut m, KeyCode::Char('a')), []);
    assert!(
        m.flash.as_deref().unwrap().contains("--write"),
        "{:?}",
        m.flash
    );
    m.settings.read_only = false;

    // The second row, the suspend: confirmed, it is sent with the proposal's own intent.
    key(&mut m, KeyCode::Char('j'));
    assert_eq!(keys(&mut m, KeyCode::Char('a')), []);
    let confirm = m.confirm.as_ref().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::Suspend);
    assert_eq!(confirm.stage, Stage::Yes, "the reason was proposed");
    let effects = keys(&mut m, KeyCode::Char('y'));
    let [Effect::Act(job)] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(job.intent, suspend.intent());
    let proposed = job.proposal.as_ref().unwrap();
    assert_eq!(proposed.id, suspend.id);
    assert_eq!(proposed.proposed_by, "mcp:assistant");
    assert_eq!(proposed.approved_by, m.settings.user);

    // The object is suspended since the reconcile was proposed: approving it is refused,
    // recorded, and nothing is sent.
    let mut suspended = FluxSummary::clone(
        m.index
            .cluster(cluster)
            .unwrap()
            .objects
            .get(&redis)
            .unwrap(),
    );
    suspended.suspended = true;
    update(
        &mut m,
        Msg::Fleet(vec![event(cluster, Change::Applied(suspended))]),
    );
    command(&mut m, "proposals");
    update(
        &mut m,
        Msg::Proposals(Ok(vec![reconcile.clone(), suspend.clone()])),
    );
    let effects = keys(&mut m, KeyCode::Char('a'));
    let [Effect::Decide { id, decision }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(id, &reconcile.id);
    let Decision::Refused { changed, .. } = decision else {
        panic!("{decision:?}")
    };
    assert!(changed[0].contains("would now refused"), "{changed:?}");
    assert!(m.confirm.is_none());
    assert!(
        m.flash.as_deref().unwrap().contains("the fleet changed"),
        "{:?}",
        m.flash
    );

    // x asks why, and the reason goes with the rejection.
    key(&mut m, KeyCode::Char('x'));
    assert_eq!(m.input, Input::Command("reject ".into()));
    typed(&mut m, "not during the freeze");
    let effects = keys(&mut m, KeyCode::Enter);
    let [Effect::Decide { id, decision }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(id, &reconcile.id);
    assert!(
        matches!(decision, Decision::Rejected { reason, .. } if reason == "not during the freeze"),
        "{decision:?}"
    );
    // An empty reason is not a rejection.
    assert_eq!(command(&mut m, "reject  "), []);
    assert!(
        m.flash.as_deref().unwrap().contains("say why"),
        "{:?}",
        m.flash
    );
}
