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
    git_serving(ready, None)
}

/// The GitRepository `git`, Ready `ready`, with an artifact of `revision` stored (or none).
fn git_serving(ready: &str, revision: Option<&str>) -> (ObjectKey, FluxSummary) {
    let artifact = revision.map(|r| json!({"revision": r, "path": "x", "url": "http://x"}));
    object(
        FluxKind::GitRepository,
        json!({"metadata": {"name": "git", "namespace": "flux-system", "generation": 1},
               "status": {"observedGeneration": 1, "artifact": artifact,
                          "conditions": [{"type": "Ready", "status": ready}]}}),
    )
}

fn k(name: &str) -> ObjectKey {
    ObjectKey::new(FluxKind::Kustomization, "flux-system", name)
}

fn cluster(objects: Vec<(ObjectKey, FluxSummary)>) -> ClusterObjects {
    objects.into_iter().map(|(_, o)| o).collect()
}

#[test]
fn a_failing_source_that_still_serves_its_artifact_holds_nothing_back() {
    // As the real source-controller leaves a GitRepository whose server answers 503: Ready=False
    // GitOperationFailed, the last artifact kept; kustomize-controller applies it all the same.
    let serving = git_serving("False", Some("main@sha1:4f0c1a2b"));
    let objects = cluster(vec![
        serving.clone(),
        ks("apps", "True", &[]),
        ks("broken", "False", &[]),
        ks("behind", "False", &["broken"]),
    ]);
    let found = causes(&objects);
    assert_eq!(
        found[&serving.0],
        Cause::Root,
        "it is still a failure of its own"
    );
    assert_eq!(
        found[&k("broken")],
        Cause::Root,
        "not counted as the source's"
    );
    assert_eq!(found[&k("behind")], Cause::Blocked(Box::new([k("broken")])));
    assert!(!found.contains_key(&k("apps")));
    let graph = Graph::of(&objects, &mut |o| upstream(o));
    assert_eq!(graph.held_back(&serving.0), Vec::<&ObjectKey>::new());

    // A source that never fetched holds back everything from it.
    let objects = cluster(vec![git("False"), ks("apps", "False", &[])]);
    assert_eq!(
        causes(&objects)[&k("apps")],
        Cause::Blocked(Box::new([git("False").0]))
    );
}

#[test]
fn a_helmreleases_chart_holds_it_back_when_stalled_even_with_an_artifact() {
    let chart = |stalled: bool| {
        let mut conditions = vec![json!({"type": "Ready", "status": "False"})];
        if stalled {
            conditions.push(json!({"type": "Stalled", "status": "True",
                                   "reason": "InvalidChartReference"}));
        }
        object(
            FluxKind::HelmChart,
            json!({"metadata": {"name": "apps-web", "namespace": "flux-system", "generation": 2},
                   "status": {"observedGeneration": 2, "conditions": conditions,
                              "artifact": {"revision": "1.0.0", "path": "x", "url": "http://x"}}}),
        )
    };
    let release = object(
        FluxKind::HelmRelease,
        json!({"metadata": {"name": "web", "namespace": "apps"},
               "spec": {"chart": {"spec": {"chart": "web",
                        "sourceRef": {"kind": "HelmRepository", "name": "charts",
                                      "namespace": "flux-system"}}}},
               "status": {"conditions": [{"type": "Ready", "status": "False",
                                          "reason": "SourceNotReady"}]}}),
    );
    let failing = cluster(vec![chart(false), release.clone()]);
    assert_eq!(causes(&failing)[&release.0], Cause::Root);
    let stalled = cluster(vec![chart(true), release.clone()]);
    assert_eq!(
        causes(&stalled)[&release.0],
        Cause::Blocked(Box::new([chart(true).0]))
    );

    // The graph kept as objects change turns with it: the chart stalls, then recovers its fetch.
    let mut graph = Graph::of(&failing, &mut |o| upstream(o));
    let before = standing(&chart(false).1);
    graph.changed(&stalled, &chart(true).0, Some(before), None);
    assert_eq!(graph.causes(), &causes(&stalled));
    graph.changed(
        &failing,
        &chart(false).0,
        Some(standing(&chart(true).1)),
        None,
    );
    assert_eq!(graph.causes(), &causes(&failing));
}

/// A dependent created beside its dependency says `DependencyNotReady` until its controller's
/// next retry, while the dependency is already Ready (seen for up to 30 s on kustomize-controller
/// v1.9): nothing holds it back and it is no cause — it awaits its retry. A dependency that is
/// not Ready holds it back; one that does not exist leaves it a cause of its own; and once the
/// controller retries and it fails another way, it is a root again.
#[test]
fn a_dependent_whose_dependency_is_ready_awaits_its_retry() {
    let waiting = |deps: &[&str]| {
        object(
            FluxKind::Kustomization,
            json!({"metadata": {"name": "child", "namespace": "flux-system"},
                   "spec": {"sourceRef": {"kind": "GitRepository", "name": "git"},
                            "dependsOn": deps.iter().map(|d| json!({"name": d})).collect::<Vec<_>>()},
                   "status": {"conditions": [{"type": "Ready", "status": "False",
                        "reason": "DependencyNotReady",
                        "message": "dependency 'flux-system/dep' is not ready"}]}}),
        )
    };
    let child = waiting(&["dep"]);
    let ready = cluster(vec![git("True"), ks("dep", "True", &[]), child.clone()]);
    assert_eq!(causes(&ready)[&child.0], Cause::AwaitsRetry);
    assert!(causes(&ready)[&child.0].held_by(&child.0).is_empty());
    assert!(!causes(&ready)[&child.0].is_own());

    let failing = cluster(vec![git("True"), ks("dep", "False", &[]), child.clone()]);
    assert_eq!(
        causes(&failing)[&child.0],
        Cause::Blocked(Box::new([k("dep")]))
    );
    let missing = cluster(vec![git("True"), waiting(&["nowhere"])]);
    assert_eq!(causes(&missing)[&child.0], Cause::Root);

    // Kept as objects change: the dependency turns Ready, then the retry fails another way.
    let mut graph = Graph::of(&failing, &mut |o| upstream(o));
    graph.changed(
        &ready,
        &k("dep"),
        Some(standing(&ks("dep", "False", &[]).1)),
        None,
    );
    assert_eq!(graph.causes(), &causes(&ready));
    let retried = ks("child", "False", &["dep"]);
    let after = cluster(vec![git("True"), ks("dep", "True", &[]), retried]);
    graph.changed(&after, &child.0, Some(standing(&child.1)), None);
    assert_eq!(graph.causes()[&child.0], Cause::Root);
    assert_eq!(graph.causes(), &causes(&after));
}

/// A chart in a Git repository (`spec.chart.spec.sourceRef` a GitRepository): the release waits
/// on the HelmChart helm-controller makes beside the repository, not on the repository — a
/// stalled chart (`InvalidChartReference`, a path not in the repository) holds it back, the
/// repository serving its artifact does not. As on the real controllers, in the release's own
/// namespace and across namespaces.
#[test]
fn a_chart_from_a_git_repository_holds_its_release_back_when_stalled() {
    for (release_ns, source_ns) in [("flux-system", "flux-system"), ("apps", "flux-system")] {
        let serving = git_serving("True", Some("main@sha1:4f0c1a2b"));
        let chart = object(
            FluxKind::HelmChart,
            json!({"metadata": {"name": format!("{release_ns}-web"), "namespace": source_ns,
                                "generation": 1},
                   "spec": {"chart": "./charts/missing",
                            "sourceRef": {"kind": "GitRepository", "name": "git"}},
                   "status": {"observedGeneration": 1, "conditions": [
                       {"type": "Ready", "status": "False", "reason": "InvalidChartReference"},
                       {"type": "Stalled", "status": "True", "reason": "InvalidChartReference"}]}}),
        );
        let release = object(
            FluxKind::HelmRelease,
            json!({"metadata": {"name": "web", "namespace": release_ns},
                   "spec": {"chart": {"spec": {"chart": "./charts/missing",
                            "sourceRef": {"kind": "GitRepository", "name": "git",
                                          "namespace": source_ns}}}},
                   "status": {"conditions": [{"type": "Ready", "status": "False",
                                              "reason": "SourceNotReady"}]}}),
        );
        assert_eq!(upstream(&release.1), vec![chart.0.clone()], "{release_ns}");
        let objects = cluster(vec![serving, chart.clone(), release.clone()]);
        let found = causes(&objects);
        assert_eq!(found[&chart.0], Cause::Root, "{release_ns}");
        assert_eq!(
            found[&release.0],
            Cause::Blocked(Box::new([chart.0.clone()])),
            "{release_ns}"
        );
    }
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
            Cause::Blocked(Box::new([k("infra")])),
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
    assert_eq!(found[&k("top")], Cause::Blocked(Box::new([k("base")])));
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
        Cause::Blocked(Box::new([k("left"), k("right")]))
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
    assert_eq!(
        found[&k("infra")],
        Cause::Blocked(Box::new([source.clone()]))
    );
    assert_eq!(found[&k("apps")], Cause::Blocked(Box::new([source])));
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
    assert_eq!(found[&hr_key], Cause::Blocked(Box::new([repo_key])));
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
    assert_eq!(found[&k("a")], Cause::Cycle(cycle.clone().into()));
    assert_eq!(found[&k("b")], Cause::Cycle(cycle.clone().into()));
    assert_eq!(found[&k("c")], Cause::Cycle(cycle.into()));
    assert_eq!(found[&k("d")], Cause::Root);
    // A self-dependency is a cycle of one.
    let found = causes_of_self();
    assert_eq!(found[&k("self")], Cause::Cycle(Box::new([k("self")])));
}

fn causes_of_self() -> Causes {
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

#[test]
fn overlapping_cycles_and_a_cycle_beside_a_root() {
    // a ↔ b and b ↔ c are one knot; d stands behind it and behind the root r.
    let objects = cluster(vec![
        git("True"),
        ks("a", "False", &["b"]),
        ks("b", "False", &["a", "c"]),
        ks("c", "False", &["b"]),
        ks("r", "False", &[]),
        ks("d", "False", &["a", "r"]),
        ks("e", "False", &["c"]),
    ]);
    let found = causes(&objects);
    let knot = vec![k("a"), k("b"), k("c")];
    for member in ["a", "b", "c", "e"] {
        assert_eq!(
            found[&k(member)],
            Cause::Cycle(knot.clone().into()),
            "{member}"
        );
    }
    assert_eq!(found[&k("d")], Cause::Blocked(Box::new([k("r")])));
}

#[test]
fn a_long_chain_from_a_hostile_cluster_is_solved_without_recursion() {
    let n = 100_000;
    let mut objects = vec![git("True"), ks("n0", "False", &[])];
    for i in 1..n {
        objects.push(ks(&format!("n{i}"), "False", &[&format!("n{}", i - 1)]));
    }
    let found = causes(&cluster(objects));
    assert_eq!(
        found[&k(&format!("n{}", n - 1))],
        Cause::Blocked(Box::new([k("n0")]))
    );
}

/// A deterministic stream of choices.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[test]
fn causes_kept_under_churn_equal_causes_solved_from_scratch() {
    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    let mut objects = ClusterObjects::default();
    let mut graph = Graph::default();
    let names: Vec<String> = (0..14).map(|i| format!("k{i}")).collect();
    for step in 0..20_000 {
        let name = &names[dice.below(names.len())];
        match dice.below(10) {
            // Delete it, or the source all depend on.
            0 => {
                let key = if dice.below(4) == 0 {
                    git("True").0
                } else {
                    k(name)
                };
                if objects.remove(&key).is_some() {
                    graph.removed(&objects, &key);
                }
            }
            // The source turns ready, failing, or failing with its last artifact kept.
            1 => {
                let revision = [None, Some("main@sha1:4f0c1a2b")][dice.below(2)];
                let (key, o) = git_serving(["True", "False"][dice.below(2)], revision);
                let before = objects.get(&key).map(standing);
                objects.insert(o.clone());
                graph.changed(&objects, &key, before, Some(upstream(&o)));
            }
            // A relist of one kind: its objects replaced by a fresh set, the rest untouched.
            2 => {
                let kind = if dice.below(3) == 0 {
                    FluxKind::GitRepository
                } else {
                    FluxKind::Kustomization
                };
                objects.retain(|k| k.kind != kind);
                if kind == FluxKind::GitRepository {
                    if dice.below(2) == 0 {
                        let (_, o) = git(["True", "False"][dice.below(2)]);
                        objects.insert(o);
                    }
                } else {
                    for name in &names {
                        if dice.below(3) == 0 {
                            continue;
                        }
                        let deps = [names[dice.below(names.len())].as_str()];
                        let deps = &deps[..dice.below(2)];
                        let (_, o) = ks(name, ["True", "False"][dice.below(2)], deps);
                        objects.insert(o);
                    }
                }
                graph.relisted(&objects, kind, &mut |o| upstream(o));
                // What the relist took away needs nothing any more.
                for name in &names {
                    if !objects.contains_key(&k(name)) {
                        assert!(graph.upstream(&k(name)).is_empty(), "{name} is gone");
                    }
                }
            }
            // Add or change it: ready or not, with zero to three dependencies (itself, cycles,
            // missing ones included).
            _ => {
                let deps: Vec<&str> = (0..dice.below(4))
                    .map(|_| {
                        if dice.below(8) == 0 {
                            "missing"
                        } else {
                            names[dice.below(names.len())].as_str()
                        }
                    })
                    .collect();
                let ready = ["True", "False", "Unknown"][dice.below(3)];
                let (key, o) = ks(name, ready, &deps);
                let before = objects.get(&key).map(standing);
                objects.insert(o.clone());
                graph.changed(&objects, &key, before, Some(upstream(&o)));
            }
        }
        if step % 7 == 0 || step > 19_900 {
            assert_eq!(graph.causes(), &causes(&objects), "after step {step}");
        }
    }
    // What each object needs and is needed by matches its dependencies.
    for (key, o) in &objects {
        assert_eq!(graph.upstream(key), upstream(o).as_slice());
        for u in graph.upstream(key) {
            assert!(graph.downstream(u).contains(key));
        }
    }
    // And nothing is said to be needed by an object that no longer needs it.
    let every = names
        .iter()
        .map(|n| k(n))
        .chain([k("missing"), git("True").0]);
    for u in every {
        for d in graph.downstream(&u) {
            assert!(graph.upstream(d).contains(&u), "{d:?} does not need {u:?}");
        }
    }
}
