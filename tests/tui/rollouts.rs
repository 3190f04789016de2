//! The TUI's rollouts: each thing's spread, the matrix ring by ring with how each ring
//! delivered, history without collectors, the fleet map's health, freshness and rollout, and
//! halting and resuming a rollout.

use super::*;

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
    // Worked out, the week read is not held while the matrix is open.
    assert!(m.reads.history.is_none());
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
