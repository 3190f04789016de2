use super::*;
use serde_json::{Value, json};

/// A Kustomization `name` (Ready `ready`) depending on `deps`, from the GitRepository `git`.
fn ks(name: &str, ready: &str, deps: &[&str]) -> (ObjectKey, FluxSummary) {
    object(
        FluxKind::Kustomization,
        json!({"metadata": {"name": name, "namespace": "flux-system"},
               "spec": {"sourceRef": {"kind": "GitRepository", "name": "git"},
                        "dependsOn": deps.iter().map(|d| json!({"name": d})).collect::<Vec<_>>()},
               "status": {"conditions": [{"type": "Ready", "status": ready}]}}),
    )
}

fn object(kind: FluxKind, v: Value) -> (ObjectKey, FluxSummary) {
    let s = FluxSummary::of(kind, &v).unwrap();
    (s.key.clone(), s)
}

fn git(ready: &str) -> (ObjectKey, FluxSummary) {
    object(
        FluxKind::GitRepository,
        json!({"metadata": {"name": "git", "namespace": "flux-system"},
               "status": {"conditions": [{"type": "Ready", "status": ready}]}}),
    )
}

fn k(name: &str) -> ObjectKey {
    ObjectKey::new(FluxKind::Kustomization, "flux-system", name)
}

fn cluster(objects: Vec<(ObjectKey, FluxSummary)>) -> BTreeMap<ObjectKey, FluxSummary> {
    objects.into_iter().collect()
}

#[test]
fn a_chain_is_blocked_by_its_first_failure_and_a_diamond_by_both_sides() {
    // infra ← configs ← apps ← payments; infra fails.
    let objects = cluster(vec![
        git("True"),
        ks("infra", "False", &[]),
        ks("configs", "False", &["infra"]),
        ks("apps", "False", &["configs"]),
        ks("payments", "False", &["apps"]),
    ]);
    let found = causes(&objects);
    assert_eq!(found[&k("infra")], Cause::Root);
    for blocked in ["configs", "apps", "payments"] {
        assert_eq!(
            found[&k(blocked)],
            Cause::Blocked(vec![k("infra")]),
            "{blocked}"
        );
    }

    // A diamond: top on left and right, both on base; base fails: one root, counted once.
    let objects = cluster(vec![
        git("True"),
        ks("base", "False", &[]),
        ks("left", "False", &["base"]),
        ks("right", "False", &["base"]),
        ks("top", "False", &["left", "right"]),
    ]);
    let found = causes(&objects);
    assert_eq!(found[&k("top")], Cause::Blocked(vec![k("base")]));
    // Two sides failing by themselves: both are top's roots.
    let objects = cluster(vec![
        git("True"),
        ks("left", "False", &[]),
        ks("right", "False", &[]),
        ks("top", "False", &["left", "right"]),
    ]);
    let found = causes(&objects);
    assert_eq!(
        found[&k("top")],
        Cause::Blocked(vec![k("left"), k("right")])
    );
    assert_eq!(found[&k("left")], Cause::Root);
}

#[test]
fn a_failing_source_is_the_root_and_ready_or_missing_ones_block_nothing() {
    let objects = cluster(vec![
        git("False"),
        ks("infra", "False", &["not-there"]),
        ks("apps", "False", &["infra"]),
        ks("ok", "True", &[]),
    ]);
    let found = causes(&objects);
    let source = ObjectKey::new(FluxKind::GitRepository, "flux-system", "git");
    assert_eq!(found[&source], Cause::Root);
    assert_eq!(found[&k("infra")], Cause::Blocked(vec![source.clone()]));
    assert_eq!(found[&k("apps")], Cause::Blocked(vec![source]));
    // Ready objects have no cause.
    assert!(!found.contains_key(&k("ok")));
}

#[test]
fn a_helm_release_is_blocked_through_its_chart_by_the_chart_s_repository() {
    let repo = object(
        FluxKind::HelmRepository,
        json!({"metadata": {"name": "podinfo", "namespace": "flux-system"},
               "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    );
    let chart = object(
        FluxKind::HelmChart,
        json!({"metadata": {"name": "apps-podinfo", "namespace": "flux-system"},
               "spec": {"sourceRef": {"kind": "HelmRepository", "name": "podinfo"}},
               "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    );
    let release = object(
        FluxKind::HelmRelease,
        json!({"metadata": {"name": "podinfo", "namespace": "apps"},
               "spec": {"chart": {"spec": {"chart": "podinfo",
                   "sourceRef": {"kind": "HelmRepository", "name": "podinfo",
                                 "namespace": "flux-system"}}}},
               "status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
    );
    let (repo_key, hr_key) = (repo.0.clone(), release.0.clone());
    let found = causes(&cluster(vec![repo, chart, release]));
    assert_eq!(found[&hr_key], Cause::Blocked(vec![repo_key]));
}

#[test]
fn cycles_are_reported_and_never_followed() {
    // a ↔ b, and c behind the cycle; d fails by itself.
    let objects = cluster(vec![
        git("True"),
        ks("a", "False", &["b"]),
        ks("b", "False", &["a"]),
        ks("c", "False", &["a"]),
        ks("d", "False", &[]),
    ]);
    let found = causes(&objects);
    let cycle = vec![k("a"), k("b")];
    assert_eq!(found[&k("a")], Cause::Cycle(cycle.clone()));
    assert_eq!(found[&k("b")], Cause::Cycle(cycle.clone()));
    assert_eq!(found[&k("c")], Cause::Cycle(cycle));
    assert_eq!(found[&k("d")], Cause::Root);
    // A self-dependency is a cycle of one.
    let found = causes_of_self();
    assert_eq!(found[&k("self")], Cause::Cycle(vec![k("self")]));
}

fn causes_of_self() -> HashMap<ObjectKey, Cause> {
    causes(&cluster(vec![git("True"), ks("self", "False", &["self"])]))
}

#[test]
fn a_suspended_dependency_that_is_ready_holds_nothing_back() {
    let mut suspended = ks("infra", "True", &[]);
    suspended.1.suspended = true;
    suspended.1.health = crate::fleet::Health::Suspended;
    let objects = cluster(vec![
        git("True"),
        suspended,
        ks("apps", "False", &["infra"]),
    ]);
    let found = causes(&objects);
    assert_eq!(found[&k("apps")], Cause::Root);
    assert!(!found.contains_key(&k("infra")));
}
