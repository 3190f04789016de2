//! The fleet view and its map (also of 2,000 clusters), going down from the fleet to a
//! cluster and back, and the Flux versions and summarized clusters the views show.

use super::*;

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
    let (width, height) = m.fit().map_room;
    let map = fluxfleet::app::map::layout(m.index(), &m.rows().ids, width, height);
    assert_eq!((map.clusters.len(), map.per_cell), (2_000, 1), "{shot}");
    assert_eq!(map.cells.len(), 2_000);
    assert!(shot.contains("Fleet map · 2000 clusters"), "{shot}");
    insta::assert_snapshot!("fleet_map_160x45", common::tui::screen(&mut m, 160, 45));
    // At 80×24 a cell stands for a few clusters, the worst shown; nothing breaks.
    let shot = common::tui::screen(&mut m, 80, 24);
    let (width, height) = m.fit().map_room;
    let map = fluxfleet::app::map::layout(m.index(), &m.rows().ids, width, height);
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
    assert_eq!(m.index().workspace(w).unwrap().name, "region-01");
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
    assert_eq!(m.depth(), 1);
    // Esc on the fleet view stays there.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.depth(), 1);
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
    let entry = m.index().cluster(c).unwrap();
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
        m.index().cluster(c).unwrap().health.total(),
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
