//! The rollout view: each thing's spread, the matrix ring by ring with how each ring delivered,
//! and history without collectors.

use super::*;

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
    let asked = m.reads().history_since().unwrap();
    assert_eq!(asked, now() - jiff::SignedDuration::from_hours(1));
    update(
        &mut m,
        Msg::History(Err(fluxfleet::fleet::read::ReadError::NoHistory)),
    );
    let Some(Ok(changes)) = m.reads().history() else {
        panic!("{:?}", m.reads().history());
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
    use fluxfleet::fleet::history::RecordedChange as Changed;
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
    assert!(m.reads().history().is_none());
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
    let ids = m.rows().ids.clone();
    assert_eq!(ids[0], RowId::Ring(0));
    let staging = ids.iter().position(|r| *r == RowId::Ring(1)).unwrap();
    assert_eq!(ids[staging + 1], RowId::Object(ClusterId(3), apps.clone()));

    // Marking a ring marks its clusters' copies.
    key(&mut m, KeyCode::Char(' '));
    assert_eq!(
        m.marks().sorted(),
        [(ClusterId(0), apps.clone()), (ClusterId(1), apps.clone())]
    );
    // `:mark stuck` the stuck ones, which a reconcile with source then targets.
    command(&mut m, "unmark");
    command(&mut m, "mark stuck");
    assert_eq!(m.marks().sorted(), [(ClusterId(3), apps.clone())]);
    key(&mut m, KeyCode::Char('W'));
    let confirm = m.confirming().expect("a confirmation");
    assert_eq!(confirm.verb, Verb::ReconcileWithSource);
    assert_eq!(confirm.targets, [(ClusterId(3), apps)]);
}

#[test]
fn the_rollout_view_follows_a_cluster_that_moves_to_the_newest_revision() {
    let mut m = rollout_model();
    command(&mut m, "rollout ks");
    m.refresh_rows();
    let apps = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    assert_eq!(m.rows().spreads[&apps].clusters.current, 3);
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
    let row = &m.rows().spreads[&apps];
    assert_eq!((row.clusters.current, row.behind), (4, 2));
    // Deleted there: one copy fewer.
    update(
        &mut m,
        Msg::Fleet(vec![event(ClusterId(4), Change::Deleted(apps.clone()))]),
    );
    m.refresh_rows();
    assert_eq!(m.rows().spreads[&apps].clusters.total(), 5);
}
