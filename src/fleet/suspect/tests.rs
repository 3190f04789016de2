use serde_json::{Value, json};

use super::*;
use crate::fleet::index::{Change, Event};
use crate::fleet::{ClusterInfo, ClusterKey, Index};

const OLD: &str = "main@sha1:1111111111111111111111111111111111111111";
const NEW: &str = "main@sha1:2222222222222222222222222222222222222222";

fn at(minutes: i64) -> String {
    (Timestamp::from_second(1_790_000_000).unwrap() + SignedDuration::from_mins(minutes))
        .to_string()
}

/// A cluster with the repository at `produced` (made at minute `made`) and the
/// Kustomization `ks` (see [`apps`]).
fn cluster(index: &mut Index, name: &str, (produced, made): (&str, i64), ks: Value) {
    index.add_cluster(ClusterInfo {
        key: ClusterKey::new(name.to_string()),
        ..ClusterInfo::new(name, "ws")
    });
    let git = json!({"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
        "metadata": {"name": "flux-system", "namespace": "flux-system", "generation": 1},
        "status": {"observedGeneration": 1,
            "artifact": {"revision": produced, "lastUpdateTime": at(made)},
            "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                            "lastTransitionTime": at(made)}]}});
    let key = ClusterKey::new(name.to_string());
    for (kind, object) in [
        (FluxKind::GitRepository, git),
        (FluxKind::Kustomization, ks),
    ] {
        let summary = FluxSummary::of(kind, &object).unwrap();
        index.apply(Event {
            cluster: key.clone(),
            at: Timestamp::from_second(1_790_000_000).unwrap(),
            change: Change::Replaced(kind, vec![summary]),
        });
    }
}

/// The Kustomization `apps` running `applied`, having tried `tried`, Ready `ready` since
/// minute `turned`.
fn apps(applied: &str, tried: &str, ready: &str, turned: i64) -> Value {
    json!({"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
        "metadata": {"name": "apps", "namespace": "flux-system", "generation": 1},
        "spec": {"sourceRef": {"kind": "GitRepository", "name": "flux-system"}},
        "status": {"observedGeneration": 1, "lastAppliedRevision": applied,
            "lastAttemptedRevision": tried,
            "conditions": [{"type": "Ready", "status": ready,
                "reason": if ready == "True" { "ReconciliationSucceeded" } else { "HealthCheckFailed" },
                "message": "health check failed", "lastTransitionTime": at(turned)}]}})
}

fn failing_copies(index: &Index) -> Vec<(&ClusterEntry, &FluxSummary)> {
    index
        .entries()
        .filter_map(|(_, c)| {
            let o = c
                .objects
                .values()
                .find(|o| o.key.kind == FluxKind::Kustomization)?;
            o.health.is_failing().then_some((c, o))
        })
        .collect()
}

fn all(index: &Index) -> Vec<&FluxSummary> {
    index
        .entries()
        .filter_map(|(_, c)| {
            c.objects
                .values()
                .find(|o| o.key.kind == FluxKind::Kustomization)
        })
        .collect()
}

const WINDOW: SignedDuration = SignedDuration::from_mins(10);

#[test]
fn a_revision_tried_just_before_failing_is_the_suspect_and_the_evidence_counts() {
    let mut index = Index::new();
    // Two took NEW and failed 5 minutes later; one runs it fine; one still on OLD, fine.
    cluster(&mut index, "a", (NEW, 0), apps(OLD, NEW, "False", 5));
    cluster(&mut index, "b", (NEW, 2), apps(OLD, NEW, "False", 7));
    cluster(&mut index, "c", (NEW, 0), apps(NEW, NEW, "True", 1));
    cluster(&mut index, "d", (OLD, -900), apps(OLD, OLD, "True", -899));
    let failing = failing_copies(&index);
    let (c, o) = failing[0];
    let change = change_before(c, o, WINDOW).unwrap();
    assert_eq!(
        (&*change.revision, change.how, change.just_before),
        (NEW, How::Tried, true)
    );
    let s = suspect(&failing, WINDOW).unwrap().weigh(all(&index));
    assert_eq!(
        (
            s.copies,
            s.just_before,
            s.failing,
            s.runs_fine,
            s.elsewhere,
            s.elsewhere_failing
        ),
        (2, 2, 2, Some(1), Some(1), 0)
    );
    assert!(s.likely, "{s:?}");
    assert!(
        s.evidence
            .starts_with("began after main@sha1:22222222 — 2 of 2"),
        "{}",
        s.evidence
    );
}

#[test]
fn a_failure_long_after_the_last_change_is_not_blamed_on_it() {
    let mut index = Index::new();
    // Applied NEW a day before failing; its source has not changed since.
    cluster(&mut index, "a", (NEW, -1440), apps(NEW, NEW, "False", 0));
    let failing = failing_copies(&index);
    assert_eq!(change_before(failing[0].0, failing[0].1, WINDOW), None);
    assert_eq!(suspect(&failing, WINDOW), None);
}

#[test]
fn copies_failing_the_same_way_without_the_change_clear_it() {
    let mut index = Index::new();
    cluster(&mut index, "a", (NEW, 0), apps(OLD, NEW, "False", 5));
    // On OLD, never tried NEW, and failing the same way all the same.
    cluster(&mut index, "b", (OLD, -900), apps(OLD, OLD, "False", 3));
    let failing = failing_copies(&index);
    let s = suspect(&failing, WINDOW).unwrap().weigh(all(&index));
    assert_eq!(s.elsewhere_failing, 1);
    assert!(!s.likely);
    assert!(
        s.evidence.starts_with("nothing changed in the 10 minutes"),
        "{}",
        s.evidence
    );
}

/// kustomize-controller records no run for a build that fails: `bad-build` on the real
/// fleet, failing since it was created, had only its source's newest revision to go by and
/// was blamed on it. A copy that never applied a revision changed from nothing.
#[test]
fn a_copy_that_never_applied_a_revision_blames_none() {
    let mut index = Index::new();
    let mut never = apps(OLD, NEW, "False", 1);
    never["status"]
        .as_object_mut()
        .unwrap()
        .remove("lastAppliedRevision");
    cluster(&mut index, "a", (NEW, 0), never);
    let failing = failing_copies(&index);
    assert_eq!(change_before(failing[0].0, failing[0].1, WINDOW), None);
    assert_eq!(suspect(&failing, WINDOW), None);
    // One that ran OLD, its source producing NEW just before it failed: NEW it is.
    let mut index = Index::new();
    cluster(&mut index, "b", (NEW, 0), apps(OLD, OLD, "False", 1));
    let failing = failing_copies(&index);
    let change = change_before(failing[0].0, failing[0].1, WINDOW).unwrap();
    assert_eq!((&*change.revision, change.how), (NEW, How::Source));
}
