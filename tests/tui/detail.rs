//! An object's detail view: its events, runs and YAML fetched for it, its workloads read on its
//! cluster, and what it needs and holds back.

use super::*;

#[test]
fn events_are_fetched_for_the_object_shown_and_late_answers_are_dropped() {
    let (mut m, cluster, redis) = redis_detail();
    let effects = keys(&mut m, KeyCode::Char('e'));
    assert_eq!(
        effects,
        [Effect::FetchEvents {
            cluster,
            info: m.index().cluster(cluster).unwrap().info.clone(),
            key: redis.clone(),
            // Its chart's source's events beside its own, as `flux events --for` shows them.
            told: vec![
                redis.clone(),
                ObjectKey::new(FluxKind::OciRepository, "flux-system", "redis")
            ],
        }]
    );
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("events")));
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
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("events")));
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
            info: m.index().cluster(cluster).unwrap().info.clone(),
            key: redis.clone(),
        }]
    );
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("runs")));
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
    let last_first = m.reads().fetched_scroll();
    key(&mut m, KeyCode::Char('k'));
    common::tui::screen(&mut m, 100, 30);
    assert_eq!(m.reads().fetched_scroll(), last_first - 1);
    key(&mut m, KeyCode::Char('g'));
    assert_eq!(m.reads().fetched_scroll(), 0);
    // Leaving the object forgets what was fetched for it.
    key(&mut m, KeyCode::Esc);
    assert_eq!(m.reads().fetched(), None);
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
            infos: vec![m.index().cluster(cluster).unwrap().info.clone()],
        }]
    );
    assert!(matches!(m.screen().view, View::Detail { .. }));
    assert_eq!(m.reads().fetched(), Some(&Fetched::Loading("workloads")));
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
        .rows()
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
    let confirm = m.confirming().cloned().expect("a confirmation");
    assert_eq!(confirm.targets, [(ClusterId(0), ks("apps"))]);
}
