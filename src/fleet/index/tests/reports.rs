//! Clusters counted by their Flux Operator reports rather than their objects: the counts, the
//! switch between the two, the failures a summarized cluster holds, and the texts they share.

use super::*;
use crate::fleet::report::Report;

/// A report of `ready`, `failing` and `suspended` Kustomizations.
fn report(ready: u64, failing: u64, suspended: u64) -> Report {
    let value = json!({"kind": "FluxReport", "spec": {"reconcilers": [
        {"kind": "Kustomization", "stats": {"running": ready + failing, "failing": failing,
                                            "suspended": suspended}},
        {"kind": "ResourceSet", "stats": {"running": 7, "failing": 7, "suspended": 0}}]}});
    Report::read(&value, None, Timestamp::UNIX_EPOCH).unwrap()
}

#[test]
fn a_cluster_counted_by_its_report_counts_the_report_and_lets_its_objects_go() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "w"));
    index.add_cluster(info("b", "w"));
    let ks = FluxKind::Kustomization;
    index.apply(at(
        "a",
        Change::Replaced(ks, vec![summary(ks, "x", "True")]),
    ));
    index.apply(at(
        "b",
        Change::Replaced(ks, vec![summary(ks, "y", "False")]),
    ));
    index.apply(at("a", Change::Report(Some(Box::new(report(10, 2, 1))))));
    // Counted by its objects, the report changes no count.
    assert_eq!(index.health().total(), 2);
    index.apply(at("a", Change::Counted(Counted::Report)));
    let entry = index.cluster(a).unwrap();
    assert!(entry.objects.is_empty());
    // What a report counts running and not failing is running: it was not seen ready.
    assert_eq!(
        (
            entry.health.get(Health::Running),
            entry.health.get(Health::Ready),
            entry.health.failing()
        ),
        (10, 0, 2),
        "a ResourceSet is not a Flux kind"
    );
    assert_eq!(index.health().total(), 14);
    assert_eq!(index.workspaces()[0].health.failing(), 3);
    // A new report replaces the old counts; objects arriving while opening count once it says so.
    index.apply(at("a", Change::Report(Some(Box::new(report(3, 0, 0))))));
    assert_eq!(index.health().total(), 4);
    index.apply(at(
        "a",
        Change::Replaced(ks, vec![summary(ks, "x", "False")]),
    ));
    assert_eq!(index.health().total(), 4);
    assert_rollups_consistent(&index);
    index.apply(at("a", Change::Counted(Counted::Objects)));
    assert_eq!(index.cluster(a).unwrap().health.failing(), 1);
    assert_eq!(index.health().total(), 2);
    assert_rollups_consistent(&index);
    // An opening that ends before it is complete: what it listed is let go.
    index.apply(at("a", Change::Counted(Counted::Report)));
    index.apply(at(
        "a",
        Change::Replaced(ks, vec![summary(ks, "x", "True")]),
    ));
    assert_eq!(index.cluster(a).unwrap().objects.len(), 1);
    index.apply(at("a", Change::Counted(Counted::Report)));
    assert!(index.cluster(a).unwrap().objects.is_empty());
    assert_eq!(index.health().total(), 4);
    assert_rollups_consistent(&index);
    // Counting only the watched kinds.
    let only = report(3, 1, 0).counting(&[FluxKind::HelmRelease]);
    assert_eq!(only.counts.total(), 0);
}

#[test]
fn rollups_stay_exact_while_clusters_switch_between_reports_and_objects() {
    let mut index = Index::new();
    let keys: Vec<_> = (0..4).map(|i| format!("c{i}")).collect();
    for (i, key) in keys.iter().enumerate() {
        index.add_cluster(info(key, if i % 2 == 0 { "x" } else { "y" }));
    }
    let ks = FluxKind::Kustomization;
    let mut next = xorshift(0x9e37_79b9);
    for step in 0..4_000 {
        let cluster = &keys[next(4) as usize];
        let change = match next(13) {
            0 => Change::Counted(Counted::Report),
            1 => Change::Counted(Counted::Objects),
            2 => Change::Report(None),
            3 | 4 => Change::Report(Some(Box::new(report(next(9), next(4), next(3))))),
            5 => Change::Replaced(
                ks,
                (0..next(6))
                    .map(|i| summary(ks, &format!("o{i}"), ["True", "False"][next(2) as usize]))
                    .collect(),
            ),
            6 => Change::Deleted(ObjectKey::new(ks, "flux-system", &format!("o{}", next(6)))),
            7 => Change::Retired,
            8 => Change::Added(info(cluster, "z")),
            9 => Change::Held(
                (0..next(3))
                    .map(|i| summary(ks, &format!("o{i}"), "False"))
                    .collect(),
            ),
            _ => Change::Applied(summary(
                ks,
                &format!("o{}", next(6)),
                ["True", "False", "Unknown"][next(3) as usize],
            )),
        };
        index.apply(at(cluster, change));
        if step % 7 == 0 {
            assert_rollups_consistent(&index);
        }
    }
    assert_rollups_consistent(&index);
}

#[test]
fn a_summarized_cluster_holds_its_failures_uncounted_with_their_causes() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "w"));
    index.apply(at("a", Change::Report(Some(Box::new(report(3, 2, 0))))));
    index.apply(at("a", Change::Counted(Counted::Report)));
    let ks = FluxKind::Kustomization;
    let git = FluxKind::GitRepository;
    let mut app = summary(ks, "app", "False");
    app.source = Some(Box::new(crate::fleet::ObjectRef {
        kind: "GitRepository".into(),
        namespace: "flux-system".into(),
        name: "repo".into(),
    }));
    let held = vec![app, summary(git, "repo", "False")];
    index.apply(at("a", Change::Held(held.clone())));
    let entry = index.cluster(a).unwrap();
    assert!(entry.held);
    assert_eq!(entry.objects.len(), 2);
    // Counted by the report alone: held objects add nothing.
    assert_eq!((entry.health.total(), entry.health.failing()), (5, 2));
    assert_rollups_consistent(&index);
    // The repository is the root cause of both.
    let repo = ObjectKey::new(git, "flux-system", "repo");
    let app_key = ObjectKey::new(ks, "flux-system", "app");
    assert_eq!(entry.graph.cause(&repo), Some(&graph::Cause::Root));
    assert_eq!(
        entry.graph.cause(&app_key),
        Some(&graph::Cause::Blocked(Box::new([repo.clone()])))
    );
    // The next look holds what it finds, and only that.
    index.apply(at("a", Change::Held(vec![summary(ks, "other", "False")])));
    let entry = index.cluster(a).unwrap();
    assert_eq!(entry.objects.len(), 1);
    assert!(entry.graph.cause(&repo).is_none());
    // Counted by its objects (opened), nothing is held in part: a late Held changes nothing.
    index.apply(at("a", Change::Counted(Counted::Objects)));
    assert!(!index.cluster(a).unwrap().held);
    index.apply(at("a", Change::Held(held)));
    assert_eq!(index.cluster(a).unwrap().objects.len(), 1);
    assert_rollups_consistent(&index);
    // Back to its report: what it held is let go until the next look.
    index.apply(at("a", Change::Counted(Counted::Report)));
    let entry = index.cluster(a).unwrap();
    assert!(!entry.held && entry.objects.is_empty());
}

#[test]
fn every_cluster_s_report_shares_one_copy_of_each_text() {
    let mut index = Index::new();
    let a = index.add_cluster(info("a", "w"));
    let b = index.add_cluster(info("b", "w"));
    for c in ["a", "b"] {
        index.apply(at(c, Change::Report(Some(Box::new(report(3, 1, 0))))));
    }
    let kind = |index: &Index, id| {
        let report = index.cluster(id).unwrap().report.clone().unwrap();
        report.reconcilers[0].kind.clone()
    };
    assert_eq!(&*kind(&index, a), "Kustomization");
    assert!(
        SharedText::ptr_eq(&kind(&index, a), &kind(&index, b)),
        "one copy for the fleet"
    );
    // Counted again, a report keeps its texts and takes the new counts.
    let mut counts = HealthCounts::default();
    counts.add_n(Health::Failed, 2);
    index.apply(at("a", Change::Recounted(counts.clone(), None)));
    let entry = index.cluster(a).unwrap();
    assert_eq!(entry.report.as_ref().unwrap().counts, counts);
    assert!(SharedText::ptr_eq(&kind(&index, a), &kind(&index, b)));
}

#[test]
fn clusters_reporting_the_same_controllers_and_instance_share_one_copy_of_each() {
    let with = |controller: &str, ready: bool| {
        let value = json!({"kind": "FluxReport", "spec": {"components": [
            {"name": "source-controller", "image": "ghcr.io/fluxcd/source-controller:v1.7.0",
             "ready": true, "status": "Current Deployment is available."},
            {"name": controller, "image": format!("ghcr.io/fluxcd/{controller}:v1.7.0"),
             "ready": ready, "status": "Current Deployment is available."}]}});
        let instance = json!({"kind": "FluxInstance",
            "metadata": {"namespace": "flux-system", "name": "flux"},
            "spec": {"distribution": {"version": "2.7.x"}}});
        Report::read(&value, Some(&instance), Timestamp::UNIX_EPOCH).unwrap()
    };
    let mut index = Index::new();
    let ids: Vec<_> = ["a", "b", "c"]
        .into_iter()
        .map(|c| index.add_cluster(info(c, "w")))
        .collect();
    index.apply(at(
        "a",
        Change::Report(Some(Box::new(with("helm-controller", true)))),
    ));
    index.apply(at(
        "b",
        Change::Report(Some(Box::new(with("helm-controller", true)))),
    ));
    index.apply(at(
        "c",
        Change::Report(Some(Box::new(with("helm-controller", false)))),
    ));
    let report = |id| index.cluster(id).unwrap().report.clone().unwrap();
    let (a, b, c) = (
        report(ids[0]).components.clone(),
        report(ids[1]).components.clone(),
        report(ids[2]).components.clone(),
    );
    assert_eq!(a.len(), 2);
    assert!(Arc::ptr_eq(&a, &b), "the same controllers: one list");
    // One controller not ready: a list of its own, its texts still the fleet's.
    assert!(!Arc::ptr_eq(&a, &c));
    assert!(!c[1].ready);
    assert!(SharedText::ptr_eq(&a[0].name, &c[0].name));
    // The instance that installed them, the same on every cluster: one copy.
    let instance = |id| report(id).instance.clone().unwrap();
    assert_eq!(instance(ids[0]).wants.as_deref(), Some("2.7.x"));
    assert!(Arc::ptr_eq(&instance(ids[0]), &instance(ids[2])));
}
