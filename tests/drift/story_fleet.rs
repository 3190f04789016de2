//! `drift` on the story fleet at 2,000 clusters, read by a session: exactly the copies the
//! simulator made differ, the gate closed by them, and the TUI's `:drift` listing the same.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use fluxfleet::export::Filter;
use fluxfleet::session::Session;
use fluxfleet_sim::{Scenario, TruthCluster};

use super::{Copy, found_in, meant};

/// What `drift` found, in the same terms (through its JSON, as the command and the MCP tool
/// give it).
fn found(drift: &fluxfleet::fleet::drift::Drift) -> BTreeSet<Copy> {
    let doc = serde_json::to_value(drift).unwrap();
    found_in(&doc)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drift_names_exactly_the_copies_the_simulator_made_differ() {
    let _large = common::one_large_fleet_at_a_time().await;
    let sim = common::start_with(|c| {
        c.clusters = 2_000;
        c.workspaces = 8;
        c.objects = 20;
        c.scenario = Scenario::Story;
    })
    .await;
    let truth: Vec<TruthCluster> = common::workloads(&sim);
    let reachable: BTreeSet<&str> = truth
        .iter()
        .filter(|c| c.faults.is_empty())
        .map(|c| c.name.as_str())
        .collect();
    let counts: BTreeMap<&str, usize> = truth
        .iter()
        .map(|c| (c.name.as_str(), c.objects.len()))
        .collect();
    let mut engine = common::engine_settings();
    engine.kinds = vec![
        fluxfleet::fleet::FluxKind::Kustomization,
        fluxfleet::fleet::FluxKind::HelmRelease,
    ];
    engine.list_only = true;
    let mut live = Session::kube(&common::fleet_of(&sim), &engine);
    let appliers = |c: &TruthCluster| {
        c.objects
            .iter()
            .filter(|o| o.kind == "Kustomization" || o.kind == "HelmRelease")
            .count()
    };
    let wanted: BTreeMap<&str, usize> = truth
        .iter()
        .map(|c| (c.name.as_str(), appliers(c)))
        .collect();
    assert_eq!(counts.len(), wanted.len());
    common::until(&mut live, Duration::from_secs(300), |live| {
        let listed = reachable
            .iter()
            .filter(|name| {
                live.index
                    .cluster_named(name)
                    .is_some_and(|c| c.objects.len() == wanted[*name])
            })
            .count();
        (listed < reachable.len())
            .then(|| format!("{listed} of {} clusters listed", reachable.len()))
    })
    .await;
    let meant = meant(&truth, &reachable);
    let kinds: BTreeSet<&str> = meant.iter().map(|m| m.2.as_str()).collect();
    let every = [
        "live",
        "corrected",
        "substituted",
        "values",
        "slow",
        "flapping",
        "stale",
    ];
    assert_eq!(kinds, BTreeSet::from(every));
    // The sim's clock runs from its pinned epoch: ten minutes on, every copy has run within
    // twice its interval but the stale cluster's.
    let runs_now = jiff::Timestamp::from_second(1_790_000_000 + 600).unwrap();
    let mut drift = fluxfleet::export::drift::of(&live.index, &Filter::default(), runs_now);
    // The Kustomizations' events, one list a cluster: the controller that keeps correcting
    // live objects on the one cluster the story edits by hand — every drifting copy named.
    use fluxfleet::session::corrections::{self, corrected};
    let reads = corrections::wanted(&live.index, &Filter::default());
    let how = fluxfleet::session::evidence::Gather::default();
    corrected(&live.reader(), reads, how, &mut drift).await;
    // A cluster whose events did not come in time (asked twice) is named as not read: on
    // these shared cores, a few of 2,000 new connections may.
    let reads = drift.reads.clone().unwrap();
    assert!(reads.not_read.len() <= 20, "{reads:?}");
    let unread: BTreeSet<&str> = reads.not_read.iter().map(|n| n.cluster.as_str()).collect();
    let mut meant_read = meant.clone();
    meant_read.retain(|(c, _, how)| how != "corrected" || !unread.contains(c.as_str()));
    assert_eq!(found(&drift), meant_read);
    assert!(reads.events > 1_000, "{reads:?}");
    // The slow copies are named beside the median, which the others are near.
    let slow = drift
        .reconciles
        .iter()
        .find(|r| !r.slow.is_empty())
        .expect("a slow object");
    assert_eq!(&*slow.name, "infra-configs");
    let median = slow.median_ms.unwrap();
    assert!(median < 5_000, "{slow:?}");
    assert_eq!(slow.slowest[0], slow.slow[0]);
    assert!(slow.slow.iter().all(|t| t.took_ms > 240_000), "{slow:?}");
    // What most copies applied is the norm, and the sentence names the odd ones.
    let apps = drift
        .differ
        .iter()
        .find(|d| &*d.name == "apps")
        .expect("apps differs");
    assert!(apps.norm.copies > 10 * apps.differing(), "{apps:?}");
    let said = apps.said();
    for c in apps.variants.iter().flat_map(|v| &v.clusters) {
        assert!(said.contains(&**c), "{said}");
    }
    assert!(drift.agree > 0);

    // The gate refuses the revision in a ring whose copies applied different manifests, naming
    // the odd ones: the substituted copies of that workspace.
    use fluxfleet::export::gate::{ClosedBy, verdict};
    let odd = &apps.variants[0].clusters[0];
    let workspace = &truth.iter().find(|c| c.name == **odd).unwrap().workspace;
    let in_ring: Vec<String> = meant
        .iter()
        .filter(|(c, what, how)| {
            how == "substituted"
                && what.ends_with("/apps")
                && truth
                    .iter()
                    .any(|t| t.name == *c && t.workspace == *workspace)
        })
        .map(|(c, ..)| c.clone())
        .collect();
    let now = jiff::Timestamp::from_second(1_790_000_000 + 86_400).unwrap();
    let rings = fluxfleet::fleet::rollouts::Rings::default();
    let hour = jiff::SignedDuration::from_hours(1);
    let filter = Filter {
        kind: Some(fluxfleet::fleet::FluxKind::Kustomization),
        name: Some("apps".into()),
        ..Filter::default()
    };
    let v = verdict(
        &live.index,
        (&filter, &rings),
        (workspace, &apps.revision),
        (hour, hour),
        now,
    );
    assert!(!v.open);
    let differs: Vec<&ClosedBy> = v
        .closed_by
        .iter()
        .filter(|c| matches!(c, ClosedBy::Differs { .. }))
        .collect();
    assert_eq!(differs.len(), 1, "{v:#?}");
    let ClosedBy::Differs { object, odd, .. } = differs[0] else {
        unreachable!()
    };
    assert_eq!(object, "Kustomization/flux-system/apps");
    assert_eq!(*odd, in_ring);

    // The TUI's `:drift` lists the same copies, one row each; enter opens the copy.
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use fluxfleet::app::model::{Model, RowId};
    use fluxfleet::app::update::{Msg, update};
    let (keymap, _) =
        fluxfleet::app::keymap::Keymap::from_config(&fluxfleet::config::Config::defaults().keymap);
    let index = std::mem::take(&mut live.index);
    let mut model = Model::new(index, keymap, Vec::new(), runs_now);
    let key = |model: &mut Model, code| {
        update(model, Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
    };
    key(&mut model, KeyCode::Char(':'));
    for c in "drift".chars() {
        key(&mut model, KeyCode::Char(c));
    }
    key(&mut model, KeyCode::Enter);
    let shot = common::tui::screen(&mut model, 200, 50);
    assert!(shot.contains("drift: 2 objects with copies off"), "{shot}");
    let mut listed = BTreeSet::new();
    for id in &model.rows().ids {
        let RowId::Object(c, k) = id else {
            panic!("{id:?}")
        };
        let name = model.index().cluster(*c).unwrap().info.name.clone();
        let what = format!("{}/{}/{}", k.kind, k.namespace, k.name);
        listed.insert((name, what));
    }
    // From the index: a controller that keeps correcting is read from its events, by `D` on
    // the object.
    let meant_rows: BTreeSet<(String, String)> = meant
        .iter()
        .filter(|(_, _, how)| how != "corrected")
        .map(|(c, w, _)| (c.clone(), w.clone()))
        .collect();
    assert_eq!(listed, meant_rows);
    key(&mut model, KeyCode::Enter);
    assert!(
        matches!(
            model.screen().view,
            fluxfleet::app::view::View::Detail { .. }
        ),
        "{:?}",
        model.screen().view
    );
    // D on the copy: the drift of that object alone, across the fleet.
    let fluxfleet::app::view::View::Detail { key: opened, .. } = model.screen().view.clone() else {
        unreachable!()
    };
    key(&mut model, KeyCode::Char('D'));
    let _ = common::tui::screen(&mut model, 200, 50);
    assert!(
        matches!(&model.screen().view, fluxfleet::app::view::View::Drift { key: Some(k), .. } if *k == opened),
        "{:?}",
        model.screen().view
    );
    let of_it = meant_rows
        .iter()
        .filter(|(_, w)| *w == format!("{}/{}/{}", opened.kind, opened.namespace, opened.name))
        .count();
    assert_eq!(model.rows().ids.len(), of_it);
    live.index = model.into_index();
    live.shutdown().await;
}
