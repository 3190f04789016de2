use super::*;
use crate::fleet::Health;
use crate::fleet::Phase;
use crate::fleet::SharedText;
use crate::fleet::graph;
use serde_json::json;
use std::collections::BTreeMap;

mod reports;

/// A cluster whose source calls it by its name.
fn info(name: &str, workspace: &str) -> ClusterInfo {
    ClusterInfo {
        key: ClusterKey::new(name),
        source: SourceId::default(),
        origin: None,
        name: name.into(),
        workspace: workspace.into(),
        server: format!("https://{name}"),
        labels: BTreeMap::new(),
        management: Vec::new(),
        context: String::new(),
        user: String::new(),
        unreachable: None,
    }
}

fn summary(kind: FluxKind, name: &str, ready: &str) -> FluxSummary {
    let obj = json!({"metadata": {"name": name, "namespace": "flux-system", "generation": 1},
        "status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": ready}]}});
    FluxSummary::of(kind, &obj).unwrap()
}

fn at(cluster: &str, change: Change) -> Event {
    Event {
        cluster: ClusterKey::new(cluster),
        at: Timestamp::UNIX_EPOCH,
        change,
    }
}

/// A deterministic pseudo-random number below `n` at each call.
fn xorshift(mut state: u64) -> impl FnMut(u64) -> u64 {
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

/// The rollups, recomputed the slow way, must equal the incremental ones.
fn assert_rollups_consistent(index: &Index) {
    let mut fleet = HealthCounts::default();
    for ws in index.workspaces() {
        let mut counts = HealthCounts::default();
        for id in &ws.clusters {
            let c = index.cluster(*id).unwrap();
            let mut own = HealthCounts::default();
            match c.counted {
                Counted::Objects => {
                    for s in c.objects.values() {
                        own.add(s.health);
                    }
                }
                // Objects listed while the cluster opens count only once it says so.
                Counted::Report => {
                    if let Some(r) = &c.report {
                        own = r.counts.clone();
                    }
                }
            }
            counts.add_all(&own);
            fleet.add_all(&own);
            assert_eq!(own, c.health, "cluster {}", c.info.name);
        }
        assert_eq!(counts, ws.health, "workspace {}", ws.name);
    }
    assert_eq!(&fleet, index.health());
}

#[test]
fn applies_duplicates_and_unknown_deletes_without_miscounting() {
    let mut index = Index::new();
    index.add_cluster(info("a", "payments"));
    let ks = FluxKind::Kustomization;
    index.apply(at("a", Change::Applied(summary(ks, "apps", "True"))));
    index.apply(at("a", Change::Applied(summary(ks, "apps", "True"))));
    index.apply(at("a", Change::Applied(summary(ks, "apps", "False"))));
    index.apply(at(
        "a",
        Change::Deleted(ObjectKey::new(ks, "flux-system", "gone")),
    ));
    index.apply(at(
        "a",
        Change::Deleted(ObjectKey::new(ks, "flux-system", "gone")),
    ));
    assert_eq!(index.object_count(), 1);
    assert_eq!(index.health().get(Health::Failed), 1);
    assert_eq!(index.health().get(Health::Ready), 0);
    assert_rollups_consistent(&index);
}

#[test]
fn a_relist_replaces_only_that_kind_of_that_cluster() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "payments"));
    let b = index.add_cluster(info("b", "payments"));
    let (ks, hr, git) = (
        FluxKind::Kustomization,
        FluxKind::HelmRelease,
        FluxKind::GitRepository,
    );
    for c in ["a", "b"] {
        for name in ["one", "two", "three"] {
            index.apply(at(c, Change::Applied(summary(ks, name, "True"))));
        }
        index.apply(at(c, Change::Applied(summary(hr, "web", "False"))));
        index.apply(at(c, Change::Applied(summary(git, "fleet", "True"))));
    }
    // The relist lost "one" and "three" and saw "four" appear.
    let relist = vec![summary(ks, "two", "True"), summary(ks, "four", "Unknown")];
    index.apply(at("a", Change::Replaced(ks, relist)));
    let names: Vec<_> = index
        .cluster(a)
        .unwrap()
        .objects
        .keys()
        .map(|k| format!("{}/{}", k.kind, k.name))
        .collect();
    assert_eq!(
        names,
        [
            "GitRepository/fleet",
            "Kustomization/four",
            "Kustomization/two",
            "HelmRelease/web"
        ]
    );
    assert_eq!(index.cluster(b).unwrap().objects.len(), 5);
    assert_eq!(index.object_count(), 9);
    assert_rollups_consistent(&index);
}

#[test]
fn a_relist_ignores_objects_of_other_kinds() {
    let mut index = Index::new();
    index.add_cluster(info("a", "w"));
    let wrong = vec![summary(FluxKind::HelmRelease, "x", "True")];
    index.apply(at("a", Change::Replaced(FluxKind::Kustomization, wrong)));
    assert_eq!(index.object_count(), 0);
}

#[test]
fn phases_roll_up_per_workspace_and_fleet() {
    let mut index = Index::new();
    index.add_cluster(info("a", "payments"));
    index.add_cluster(info("b", "payments"));
    index.add_cluster(info("c", "retail"));
    assert_eq!(index.phases().pending(), 3);
    assert!(!index.settled());
    index.apply(at("a", Change::Connection(Connection::new(Phase::Live))));
    index.apply(at(
        "b",
        Change::Connection(Connection::new(Phase::Unreachable)),
    ));
    index.apply(at("c", Change::Connection(Connection::new(Phase::Syncing))));
    let payments = index
        .workspace(index.workspace_id("payments").unwrap())
        .unwrap();
    assert_eq!(payments.phases.get(Phase::Live), 1);
    assert_eq!(payments.phases.get(Phase::Unreachable), 1);
    assert_eq!(payments.phases.failed(), 1);
    let b_entry = index.cluster_named("b").unwrap();
    assert_eq!(b_entry.connection.phase, Phase::Unreachable);
    assert!(index.cluster_named("nope").is_none());
    assert!(!index.settled());
    index.apply(at("c", Change::Connection(Connection::new(Phase::Live))));
    assert!(index.settled());
    // Reconnecting later does not make the fleet unsettled again.
    index.apply(at(
        "b",
        Change::Connection(Connection::new(Phase::Connecting)),
    ));
    assert!(index.settled());
    assert_eq!(index.phases().get(Phase::Live), 2);
    assert_eq!(index.phases().total(), 3);
}

#[test]
fn events_for_unknown_clusters_are_ignored() {
    let mut index = Index::new();
    index.apply(at(
        "nope",
        Change::Applied(summary(FluxKind::Bucket, "b", "True")),
    ));
    assert_eq!(index.object_count(), 0);
}

/// An object that depends on `deps` (of its kind) and, for a Kustomization, on a GitRepository.
fn needing(kind: FluxKind, name: &str, ready: &str, deps: &[String]) -> FluxSummary {
    let obj = json!({"metadata": {"name": name, "namespace": "flux-system", "generation": 1},
        "spec": {"dependsOn": deps.iter().map(|d| json!({"name": d})).collect::<Vec<_>>(),
                 "sourceRef": {"kind": "GitRepository", "name": "git"}},
        "status": {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": ready}]}});
    FluxSummary::of(kind, &obj).unwrap()
}

#[test]
fn a_synthetic_stream_keeps_rollups_and_root_causes_exact() {
    // A deterministic pseudo-random stream of applies, deletes and relists over 3 clusters, the
    // objects depending on each other (cycles included) and on a source that comes and goes.
    let mut index = Index::new();
    let keys: Vec<_> = (0..3).map(|i| format!("c{i}")).collect();
    for (i, key) in keys.iter().enumerate() {
        index.add_cluster(info(key, if i == 2 { "x" } else { "y" }));
    }
    let kinds = [
        FluxKind::Kustomization,
        FluxKind::HelmRelease,
        FluxKind::GitRepository,
    ];
    let readiness = ["True", "False", "Unknown"];
    let mut next = xorshift(0x2545_f491);
    for step in 0..6_000 {
        let cluster = &keys[next(3) as usize];
        let kind = kinds[next(3) as usize];
        let name = match kind {
            FluxKind::GitRepository => "git".to_string(),
            _ => format!("o{}", next(20)),
        };
        let object = |name: &str, next: &mut dyn FnMut(u64) -> u64| {
            let deps: Vec<String> = (0..next(3)).map(|_| format!("o{}", next(20))).collect();
            needing(kind, name, readiness[next(3) as usize], &deps)
        };
        let change = match next(10) {
            0 => Change::Replaced(
                kind,
                (0..next(8))
                    .map(|i| object(&format!("o{i}"), &mut next))
                    .collect(),
            ),
            1..=3 => Change::Deleted(ObjectKey::new(kind, "flux-system", &name)),
            _ => Change::Applied(object(&name, &mut next)),
        };
        index.apply(at(cluster, change));
        if step % 5 == 0 {
            for c in index.clusters() {
                let slow = crate::fleet::graph::causes(&c.objects);
                assert_eq!(c.graph.causes(), &slow, "{} after {step}", c.info.name);
            }
        }
    }
    assert_rollups_consistent(&index);
}

#[test]
fn the_same_failure_on_two_clusters_has_one_fingerprint_and_shares_its_names() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "w"));
    let b = index.add_cluster(info("b", "w"));
    let failing = |message: &str| {
        let obj = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
            "status": {"conditions": [{"type": "Ready", "status": "False",
                "reason": "HealthCheckFailed", "message": message}]}});
        FluxSummary::of(FluxKind::Kustomization, &obj).unwrap()
    };
    index.apply(at("a", Change::Applied(failing("timeout"))));
    index.apply(at(
        "b",
        Change::Replaced(FluxKind::Kustomization, vec![failing("timeout")]),
    ));
    let key = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let on = |index: &Index, c: ClusterId| index.cluster(c).unwrap().objects[&key].clone();
    assert_ne!(on(&index, a).fingerprint, 0);
    assert_eq!(on(&index, a).fingerprint, on(&index, b).fingerprint);
    assert!(crate::fleet::SharedText::ptr_eq(
        &on(&index, a).key.name,
        &on(&index, b).key.name
    ));
    index.apply(at("b", Change::Applied(failing("another reason"))));
    assert_ne!(on(&index, a).fingerprint, on(&index, b).fingerprint);
}

#[test]
fn clusters_on_one_revision_share_it() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "w"));
    let b = index.add_cluster(info("b", "w"));
    let applied = || {
        let obj = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
            "status": {"lastAppliedRevision": "main@sha1:2f22765d04931a078909145ca628d2264c852d7d",
                "lastAttemptedRevision": "main@sha1:2f22765d04931a078909145ca628d2264c852d7d"}});
        FluxSummary::of(FluxKind::Kustomization, &obj).unwrap()
    };
    index.apply(at("a", Change::Applied(applied())));
    index.apply(at("b", Change::Applied(applied())));
    let key = ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps");
    let revision = |c: ClusterId| {
        let s = &index.cluster(c).unwrap().objects[&key];
        s.rollout.as_ref().unwrap().applied.clone().unwrap()
    };
    assert!(SharedText::ptr_eq(&revision(a), &revision(b)));
    let on_a = index.cluster(a).unwrap().objects[&key]
        .rollout
        .clone()
        .unwrap();
    assert!(SharedText::ptr_eq(
        on_a.applied.as_ref().unwrap(),
        on_a.attempted.as_ref().unwrap()
    ));
}

#[test]
fn clusters_join_and_leave_while_running_without_miscounting() {
    let mut index = Index::new();
    index.add_cluster(info("a", "w"));
    index.apply(at(
        "a",
        Change::Applied(summary(FluxKind::Kustomization, "apps", "False")),
    ));
    index.apply(at("b", Change::Added(info("b", "w"))));
    assert_eq!(
        index.cluster_named("b").map(|c| c.info.workspace.as_str()),
        Some("w")
    );
    index.apply(at(
        "b",
        Change::Applied(summary(FluxKind::HelmRelease, "podinfo", "True")),
    ));
    assert_eq!(index.object_count(), 2);
    index.apply(at("a", Change::Retired));
    assert_rollups_consistent(&index);
    assert!(index.cluster_named("a").is_none());
    assert_eq!(index.object_count(), 1);
    assert_eq!(index.phases().total(), 1);
    let b = index.id_of(&ClusterKey::new("b")).unwrap();
    assert_eq!(index.workspaces()[0].clusters, [b]);
    // Events for a retired cluster change nothing.
    index.apply(at(
        "a",
        Change::Applied(summary(FluxKind::Kustomization, "late", "True")),
    ));
    assert_eq!(index.object_count(), 1);
    // Adding a key already in the fleet changes nothing; a retired key joins again as new.
    index.apply(at("b", Change::Added(info("b", "elsewhere"))));
    assert_eq!(index.clusters().len(), 2);
    index.apply(at("a", Change::Added(info("a", "w"))));
    let again = index.id_of(&ClusterKey::new("a")).unwrap();
    assert_eq!(again, ClusterId(2), "a new id: the old one is not reused");
    assert_eq!(index.cluster_named("a").unwrap().objects.len(), 0);
    assert_rollups_consistent(&index);
}

/// Two producers adding clusters at once: whatever order their events arrive in, every object
/// is filed under its own cluster (ids are the index's, never the producers').
#[test]
fn clusters_added_in_any_order_keep_their_own_objects() {
    let orders: [&[&str]; 3] = [&["x", "y"], &["y", "x"], &["y", "x"]];
    for (n, order) in orders.into_iter().enumerate() {
        let mut index = Index::new();
        for key in order {
            index.apply(at(key, Change::Added(info(key, "w"))));
            if n == 2 {
                // Objects of the first arrive before the second is added.
                index.apply(at(
                    key,
                    Change::Applied(summary(FluxKind::Bucket, key, "True")),
                ));
            }
        }
        for key in ["x", "y"] {
            index.apply(at(
                key,
                Change::Applied(summary(FluxKind::Bucket, key, "True")),
            ));
        }
        for key in ["x", "y"] {
            let c = index.cluster_named(key).unwrap();
            let names: Vec<&str> = c.objects.keys().map(|k| &*k.name).collect();
            assert_eq!(names, [key], "order {order:?}");
        }
    }
}
