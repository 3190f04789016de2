//! Triage: identical failures grouped, root causes with what they hold back, the workloads of a
//! group read on all its clusters, and triage kept between changes equal to triage built afresh.

use super::*;

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
        m.take_flash()
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
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("workloads")));
    // An answer for other clusters (a group the user left) changes nothing.
    update(
        &mut m,
        Msg::Workloads {
            key: apps.clone(),
            clusters: clusters[..1].into(),
            folded: Box::new(apps_evidence(&["pay-prod-eu"])),
        },
    );
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("workloads")));
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
    assert_eq!(m.reads().fetched(), None);
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
        .rows()
        .ids
        .iter()
        .filter(|r| matches!(r, RowId::Object(..)))
        .collect();
    assert_eq!(members.len(), 2, "{:?}", m.rows().ids);
    insta::assert_snapshot!("triage_expanded", common::tui::screen(&mut m, 110, 14));
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
        .rows()
        .ids
        .iter()
        .filter_map(|id| match id {
            RowId::Group(g) => Some(fluxfleet::app::triage::group_text(&m.rows().groups[g])),
            _ => None,
        })
        .collect();
    assert!(!texts.iter().any(|t| t.contains("/payments")), "{texts:?}");
    let apps = m
        .rows()
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
    let confirm = m.confirming().cloned().expect("a confirmation");
    let names: Vec<&str> = confirm.targets.iter().map(|(_, k)| &*k.name).collect();
    assert_eq!(names, ["apps", "apps"]);
    key(&mut m, KeyCode::Esc);
    // `c`: every failure alike, the waiting ones in groups of their own.
    key(&mut m, KeyCode::Char('c'));
    m.refresh_rows();
    insta::assert_snapshot!("triage_flat", common::tui::screen(&mut m, 120, 14));
    assert!(m.rows().groups.values().any(|g| {
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
            rollout: &m.settings().rollout,
            now: m.now(),
            spreads: &mut Default::default(),
            triage: &mut Default::default(),
            asked: None,
        };
        let rows = fluxfleet::app::rows::build(m.index(), m.screen(), with);
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
        let kept = (m.rows().ids.clone(), m.rows().groups.clone());
        assert_eq!(kept, fresh(&m), "step {step}");
        seen.insert(kept.0.len());
    }
    // The changes did change what triage lists.
    assert!(seen.len() > 2, "{seen:?}");
}
