use super::*;
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterInfo, ClusterKey, FluxSummary, Index};
use jiff::SignedDuration;
use serde_json::{Value, json};

const NOW: &str = "2026-11-23T12:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

/// `minutes` before [`NOW`].
fn ago(minutes: i64) -> String {
    (now() - SignedDuration::from_mins(minutes)).to_string()
}

/// A Kustomization `apps` on `rev`, first reconciled `minutes` ago (Flux ≥ 2.7), or failing
/// on `tried` since `failing` minutes.
fn ks(rev: &str, minutes: Option<i64>, tried: Option<(&str, i64)>) -> Value {
    let (attempted, ready, transition) = match tried {
        Some((t, m)) => (t, "False", ago(m)),
        None => (rev, "True", ago(600)),
    };
    let mut status = json!({
        "observedGeneration": 1,
        "lastAppliedRevision": rev,
        "lastAttemptedRevision": attempted,
        "conditions": [{"type": "Ready", "status": ready, "reason": "R",
                        "lastTransitionTime": transition}],
    });
    if let Some(m) = minutes {
        status["history"] = json!([{"firstReconciled": ago(m), "metadata": {"revision": rev}}]);
    }
    json!({"metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
           "spec": {"sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
           "status": status})
}

fn git(rev: &str, minutes: i64) -> Value {
    json!({"metadata": {"name": "flux-system", "namespace": "flux-system", "generation": 1},
           "status": {"observedGeneration": 1,
                      "artifact": {"revision": rev, "lastUpdateTime": ago(minutes)},
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// One cluster of a test fleet: name, workspace, labels, objects.
type Member<'a> = (
    &'a str,
    &'a str,
    &'a [(&'a str, &'a str)],
    Vec<(FluxKind, Value)>,
);

/// A cluster without labels running only the Kustomization `o`.
fn apps_on<'a>(name: &'a str, workspace: &'a str, o: Value) -> Member<'a> {
    (name, workspace, &[], vec![(K, o)])
}

fn fleet(clusters: &[Member]) -> Index {
    let mut index = Index::new();
    for (name, ws, labels, objects) in clusters {
        let mut info = ClusterInfo::new(name, ws);
        info.labels = labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        index.add_cluster(info);
        for (kind, o) in objects {
            index.apply(Event {
                cluster: ClusterKey::new(*name),
                at: now(),
                change: Change::Applied(FluxSummary::of(*kind, o).unwrap()),
            });
        }
    }
    index
}

/// The HelmRelease `apps/podinfo`, ready on chart `version` deployed with values `values`.
fn hr(version: &str, values: &str) -> Value {
    json!({"metadata": {"name": "podinfo", "namespace": "apps", "generation": 1},
           "status": {"observedGeneration": 1, "lastAttemptedRevision": version,
                      "history": [{"chartName": "podinfo", "chartVersion": version,
                                   "configDigest": values}],
                      "conditions": [{"type": "Ready", "status": "True"}]}})
}

/// The matrix of `key` with the default rings and rules, now.
fn default_matrix(index: &Index, key: &ObjectKey) -> Matrix {
    matrix(
        index.entries(),
        key,
        &Rings::default(),
        &StuckRules::default(),
        now(),
    )
    .unwrap()
}

fn apps() -> ObjectKey {
    ObjectKey::new(FluxKind::Kustomization, "flux-system", "apps")
}

const K: FluxKind = FluxKind::Kustomization;

#[test]
fn the_newest_revision_is_the_one_that_arrived_last_and_counts_follow_it() {
    let index = fleet(&[
        apps_on("dev-1", "dev", ks("main@sha1:bbbb", Some(50), None)),
        apps_on("dev-2", "dev", ks("main@sha1:bbbb", Some(40), None)),
        apps_on("prod-1", "prod", ks("main@sha1:aaaa", Some(900), None)),
        (
            "prod-2",
            "prod",
            &[],
            vec![(
                K,
                ks("main@sha1:aaaa", Some(900), Some(("main@sha1:bbbb", 10))),
            )],
        ),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(
        row.newest.as_ref().unwrap().revision.as_ref(),
        "main@sha1:bbbb"
    );
    assert_eq!(row.newest_since.unwrap().to_string(), ago(50));
    assert_eq!(
        row.clusters,
        StandingCounts {
            current: 2,
            behind: 1,
            failing: 1,
            suspended: 0
        }
    );
    assert_eq!((row.behind, row.stuck, row.revisions), (2, 0, 2));
}

/// A fleet that promotes by a branch per ring (as on real source-controllers: each ring's
/// GitRepository on `ring-<name>`) names one commit by each ring's branch: one revision, and a
/// ring whose branch has not moved is one behind, not one for each name.
#[test]
fn one_commit_reached_by_each_rings_branch_is_one_revision() {
    let index = fleet(&[
        apps_on("real-1", "dev", ks("ring-dev@sha1:659d8880", Some(1), None)),
        apps_on(
            "real-2",
            "staging",
            ks("ring-staging@sha1:354a8afe", Some(120), None),
        ),
        apps_on(
            "real-3",
            "prod",
            ks("ring-prod@sha1:354a8afe", Some(120), None),
        ),
        apps_on("real-4", "prod", ks("main@sha1:354a8afe", Some(130), None)),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    let row = &rows[0];
    assert_eq!(
        row.newest.as_ref().unwrap().revision.as_ref(),
        "ring-dev@sha1:659d8880"
    );
    assert_eq!((row.behind, row.revisions), (3, 2));
    let m = default_matrix(&index, &apps());
    let mut states: Vec<String> = m.places.iter().map(Place::state).collect();
    states.sort();
    assert_eq!(states, ["behind 1", "behind 1", "behind 1", "current"]);
}

#[test]
fn stuck_is_computed_against_the_clock_and_explained() {
    let failing = |minutes| {
        fleet(&[
            apps_on("a", "dev", ks("main@sha1:bbbb", Some(50), None)),
            (
                "b",
                "dev",
                &[],
                vec![(
                    K,
                    ks(
                        "main@sha1:aaaa",
                        Some(900),
                        Some(("main@sha1:bbbb", minutes)),
                    ),
                )],
            ),
        ])
    };
    let rules = StuckRules::default();
    // Failing on the new revision for 20 minutes: not yet stuck; for 45: stuck.
    let index = failing(20);
    let m = matrix(index.entries(), &apps(), &Rings::default(), &rules, now()).unwrap();
    assert_eq!(m.spread.stuck, 0);
    let index = failing(45);
    let m = matrix(index.entries(), &apps(), &Rings::default(), &rules, now()).unwrap();
    assert_eq!(m.spread.stuck, 1);
    // Stuck first.
    let first = &m.places[0];
    assert_eq!(index.cluster(first.cluster).unwrap().info.name, "b");
    assert_eq!(
        first.stuck.as_ref().unwrap().reason(now()),
        "tried main@sha1:bbbb for 45m, not applied"
    );

    // Its source has had a newer artifact for an hour, and it did not apply it (no failure).
    let index = fleet(&[
        apps_on("a", "dev", ks("main@sha1:bbbb", Some(50), None)),
        (
            "b",
            "dev",
            &[],
            vec![
                (K, ks("main@sha1:aaaa", Some(900), None)),
                (FluxKind::GitRepository, git("main@sha1:bbbb", 60)),
            ],
        ),
    ]);
    let m = matrix(index.entries(), &apps(), &Rings::default(), &rules, now()).unwrap();
    let b = m.places.iter().find(|p| p.stuck.is_some()).unwrap();
    assert_eq!(
        b.stuck.as_ref().unwrap().reason(now()),
        "GitRepository flux-system/flux-system has main@sha1:bbbb for 60m, not applied"
    );

    // Three revisions newer run elsewhere: more than max_behind (2).
    let index = fleet(&[
        apps_on("a", "w", ks("main@sha1:dddd", Some(10), None)),
        apps_on("b", "w", ks("main@sha1:cccc", Some(20), None)),
        apps_on("c", "w", ks("main@sha1:bbbb", Some(30), None)),
        apps_on("d", "w", ks("main@sha1:aaaa", Some(40), None)),
    ]);
    let m = matrix(index.entries(), &apps(), &Rings::default(), &rules, now()).unwrap();
    assert_eq!(m.spread.stuck, 1);
    assert_eq!(m.places[0].stuck, Some(Stuck::Behind { by: 3 }));
}

#[test]
fn without_history_the_source_artifact_dates_a_revision_and_an_attempt_is_newer() {
    // Flux 2.6: no status.history; the GitRepository's artifact time dates what was applied.
    let index = fleet(&[
        (
            "a",
            "w",
            &[],
            vec![
                (K, ks("main@sha1:bbbb", None, None)),
                (FluxKind::GitRepository, git("main@sha1:bbbb", 5)),
            ],
        ),
        (
            "b",
            "w",
            &[],
            vec![
                (K, ks("main@sha1:aaaa", None, None)),
                (FluxKind::GitRepository, git("main@sha1:aaaa", 500)),
            ],
        ),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    assert_eq!(
        rows[0].newest.as_ref().unwrap().revision.as_ref(),
        "main@sha1:bbbb"
    );
    assert_eq!(rows[0].newest_since.unwrap().to_string(), ago(5));

    // No time at all: the revision a cluster tried is newer than the one it runs.
    let index = fleet(&[
        ("a", "w", &[], vec![(K, ks("main@sha1:aaaa", None, None))]),
        ("b", "w", &[], vec![(K, ks("main@sha1:aaaa", None, None))]),
        (
            "c",
            "w",
            &[],
            vec![(K, ks("main@sha1:aaaa", None, Some(("main@sha1:bbbb", 5))))],
        ),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    assert_eq!(
        rows[0].newest.as_ref().unwrap().revision.as_ref(),
        "main@sha1:bbbb"
    );
    assert_eq!(rows[0].clusters.failing, 1);
    assert_eq!(rows[0].behind, 3);
}

/// kustomize-controller v1.9 keeps one `status.history` entry per digest of what it applied:
/// a commit that changes none of a Kustomization's manifests is written over the entry first
/// reconciled with an older commit (seen on the real controllers). The source's artifact says
/// when the newer commit arrived, and it is the newest.
#[test]
fn a_commit_that_changed_none_of_its_manifests_is_dated_by_its_source() {
    let index = fleet(&[
        (
            "dev",
            "w",
            &[],
            vec![
                // The entry was first reconciled 60 minutes ago, with the older commit.
                (K, ks("main@sha1:bbbb", Some(60), None)),
                (FluxKind::GitRepository, git("main@sha1:bbbb", 5)),
            ],
        ),
        (
            "prod",
            "w",
            &[],
            vec![
                (K, ks("main@sha1:aaaa", Some(58), None)),
                (FluxKind::GitRepository, git("main@sha1:aaaa", 59)),
            ],
        ),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    assert_eq!(
        rows[0].newest.as_ref().unwrap().revision.as_ref(),
        "main@sha1:bbbb"
    );
    assert_eq!(rows[0].newest_since.unwrap().to_string(), ago(5));
    assert_eq!((rows[0].clusters.current, rows[0].behind), (1, 1));
}

#[test]
fn helm_releases_compare_chart_versions_and_values() {
    let h = FluxKind::HelmRelease;
    let index = fleet(&[
        ("a", "w", &[], vec![(h, hr("6.10.0", "sha256:1111"))]),
        ("b", "w", &[], vec![(h, hr("6.9.0", "sha256:1111"))]),
        ("c", "w", &[], vec![(h, hr("6.10.0", "sha256:2222"))]),
    ]);
    let rows = spreads(index.entries(), None, &StuckRules::default(), now());
    let row = &rows[0];
    // 6.10.0 after 6.9.0; two values digests on it are two revisions.
    assert_eq!(row.newest.as_ref().unwrap().revision.as_ref(), "6.10.0");
    assert_eq!(row.revisions, 3);
    assert_eq!(row.clusters.current, 1);
    assert_eq!(row.newest.as_ref().unwrap().short(), "6.10.0 (1111)");
}

#[test]
fn rings_follow_the_configured_order_then_the_rest() {
    let on = |rev: &str| vec![(K, ks(rev, Some(10), None))];
    let index = fleet(&[
        ("p1", "prod-eu", &[("ring", "late")], on("main@sha1:aaaa")),
        ("s1", "staging", &[("ring", "early")], on("main@sha1:bbbb")),
        ("d1", "dev", &[("ring", "canary")], on("main@sha1:bbbb")),
        ("x1", "lab", &[], on("main@sha1:bbbb")),
    ]);
    let key = apps();
    let names = |m: &Matrix| m.rings.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    let rules = StuckRules::default();

    // Default: each workspace, by name.
    let m = matrix(index.entries(), &key, &Rings::default(), &rules, now()).unwrap();
    assert_eq!(names(&m), ["dev", "lab", "prod-eu", "staging"]);

    // Globs over workspaces, in the configured order; the rest after.
    let rings = Rings {
        patterns: vec!["dev".into(), "staging".into(), "prod-*".into()],
        label: None,
    };
    let m = matrix(index.entries(), &key, &rings, &rules, now()).unwrap();
    assert_eq!(names(&m), ["dev", "staging", "prod-*", "(other)"]);
    let prod = &m.rings[2];
    assert_eq!((prod.clusters, prod.on_newest), (1, 0));
    assert_eq!(m.rings[0].share(), 1.0);
    // Places follow their rings.
    let order: Vec<&str> = m
        .places
        .iter()
        .map(|p| index.cluster(p.cluster).unwrap().info.name.as_str())
        .collect();
    assert_eq!(order, ["d1", "s1", "p1", "x1"]);

    // A label: its values in the configured order, others by name, unlabelled last.
    let rings = Rings {
        patterns: vec!["canary".into(), "early".into()],
        label: Some("ring".into()),
    };
    let m = matrix(index.entries(), &key, &rings, &rules, now()).unwrap();
    assert_eq!(names(&m), ["canary", "early", "late", "(no ring)"]);
}

#[test]
fn a_ring_took_from_its_first_cluster_to_its_last() {
    let index = fleet(&[
        apps_on("a", "w", ks("main@sha1:bbbb", Some(50), None)),
        apps_on("b", "w", ks("main@sha1:bbbb", Some(20), None)),
    ]);
    let m = default_matrix(&index, &apps());
    assert_eq!(m.rings[0].took(now()), Some(SignedDuration::from_mins(30)));
    // Not done yet: the time so far.
    let index = fleet(&[
        apps_on("a", "w", ks("main@sha1:bbbb", Some(50), None)),
        apps_on("b", "w", ks("main@sha1:aaaa", Some(500), None)),
    ]);
    let m = default_matrix(&index, &apps());
    assert_eq!(m.rings[0].took(now()), Some(SignedDuration::from_mins(50)));
}

#[test]
fn a_revision_some_cluster_moved_on_from_is_older_whatever_the_clock_says() {
    // Both arrived in the same second; `b`'s history says it ran aaaa before bbbb.
    let moved_on = |rev: &str, before: Option<&str>| {
        let mut o = ks(rev, Some(10), None);
        if let Some(b) = before {
            o["status"]["history"]
                .as_array_mut()
                .unwrap()
                .push(json!({"firstReconciled": ago(60), "metadata": {"revision": b}}));
        }
        o
    };
    let index = fleet(&[
        ("a", "w", &[], vec![(K, moved_on("main@sha1:aaaa", None))]),
        (
            "b",
            "w",
            &[],
            vec![(K, moved_on("main@sha1:bbbb", Some("main@sha1:aaaa")))],
        ),
        ("c", "w", &[], vec![(K, moved_on("main@sha1:aaaa", None))]),
    ]);
    let rows = spreads(index.entries(), Some(K), &StuckRules::default(), now());
    assert_eq!(
        rows[0].newest.as_ref().unwrap().revision.as_ref(),
        "main@sha1:bbbb"
    );
    assert_eq!((rows[0].clusters.current, rows[0].behind), (1, 2));
}

#[test]
fn a_copy_that_applied_the_same_revision_differently_is_the_odd_one_out() {
    // Four clusters of one ring on one revision: three applied 14 objects, one 12.
    let with = |count: usize| {
        let mut o = ks("main@sha1:aaaa", Some(10), None);
        let entries: Vec<Value> = (0..count)
            .map(|i| json!({"id": format!("apps_d{i}_apps_Deployment"), "v": "v1"}))
            .collect();
        o["status"]["inventory"] = json!({"entries": entries});
        vec![(K, o)]
    };
    let index = fleet(&[
        ("a", "prod", &[], with(14)),
        ("b", "prod", &[], with(14)),
        ("c", "prod", &[], with(12)),
        ("d", "prod", &[], with(14)),
        // Alone in its ring: nobody to differ from.
        ("e", "dev", &[], with(9)),
    ]);
    let m = default_matrix(&index, &apps());
    let odd: Vec<(&str, String)> = m
        .places
        .iter()
        .filter_map(|p| {
            let name = index.cluster(p.cluster)?.info.name.as_str();
            Some((name, p.odd.as_ref()?.describe()))
        })
        .collect();
    assert_eq!(
        odd,
        [(
            "c",
            "odd one out: 12 objects applied where 3 peers have 14".to_string()
        )]
    );
    let c = m.places.iter().find(|p| p.odd.is_some()).unwrap();
    assert_eq!(
        c.reason(now()),
        "odd one out: 12 objects applied where 3 peers have 14"
    );
}

#[test]
fn a_helm_release_deployed_with_other_values_than_its_peers_is_the_odd_one_out() {
    let h = FluxKind::HelmRelease;
    let index = fleet(&[
        ("a", "w", &[], vec![(h, hr("6.10.0", "sha256:1111"))]),
        ("b", "w", &[], vec![(h, hr("6.10.0", "sha256:1111"))]),
        ("c", "w", &[], vec![(h, hr("6.10.0", "sha256:2222"))]),
    ]);
    let key = ObjectKey::new(h, "apps", "podinfo");
    let m = default_matrix(&index, &key);
    let odd: Vec<_> = m.places.iter().filter_map(|p| p.odd.clone()).collect();
    assert_eq!(
        odd,
        [Odd::Values {
            mine: "sha256:2222".into(),
            peers: "sha256:1111".into(),
            of: 2
        }]
    );
}
