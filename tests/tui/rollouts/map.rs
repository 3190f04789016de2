//! The fleet map's cells: how bad each cluster is, its freshness (flapping watches too), and where
//! the rollout selected stands on it.

use super::*;

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
    let marks: Vec<Mark> = m.index().entries().map(|(_, c)| Mark::of(c)).collect();
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
    assert_eq!(m.map_rollout(), Some(&apps));
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
