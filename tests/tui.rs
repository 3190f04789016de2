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

mod actions;
mod rollouts;
mod trace;

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
            key: redis.clone(),
            // Its chart's source's events beside its own, as `flux events --for` shows them.
            told: vec![
                redis.clone(),
                ObjectKey::new(FluxKind::OciRepository, "flux-system", "redis")
            ],
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
    failed.object = "HelmRelease/redis".into();
    // Its chart's source's event says whose it is.
    let mut older = ObjectEvent::from_value(&sample("event-helmrelease-docs.yaml"));
    older.reason = "NewArtifact".into();
    older.message = "stored artifact for digest '21.2.5@sha256:8b5cc4df7eec'".into();
    older.object = "OCIRepository/redis".into();
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
fn h_shows_the_runs_its_controller_records_read_from_its_cluster() {
    let (mut m, cluster, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('h'));
    assert_eq!(
        effects,
        [Effect::FetchRuns {
            cluster,
            info: m.index.cluster(cluster).unwrap().info.clone(),
            key: redis.clone(),
        }]
    );
    assert_eq!(m.reads.fetched, Some(Fetched::Loading("runs")));
    let runs = fluxfleet::fleet::runs::Runs::of(
        FluxKind::HelmRelease,
        &sample("helmrelease-install-failed-stalled.yaml"),
    );
    update(
        &mut m,
        Msg::Fetched {
            cluster,
            key: redis,
            fetched: Fetched::Runs(runs),
        },
    );
    let screen = common::tui::screen(&mut m, 120, 30);
    assert!(screen.contains("runs · status.history"), "{screen}");
    // The Helm action, chart, release number, outcome and values digest of the one release.
    let row = screen
        .lines()
        .find(|l| l.contains("sha256:ac0f09c0"))
        .unwrap_or_else(|| panic!("{screen}"));
    for said in ["install", "redis@21.2.5+8b5cc4df7eec", " 1 ", "failed"] {
        assert!(row.contains(said), "{said:?} in {row}");
    }
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
fn apps_evidence(clusters: &[&str]) -> fluxfleet::fleet::workload::fold::Folded {
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
            asked: None,
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
