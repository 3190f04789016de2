use super::*;
use serde_json::json;

/// The index keeps one summary per object (550,000 on a 100,000-cluster reader), boxed when it
/// was sized: at 296 bytes each went into the allocator's 320-byte class; the source boxed
/// brought it into the 256; the rare texts boxed together and the inventory count in four bytes,
/// into the 192; its texts in one word each (`SharedText`), into the 160. Now inline in its
/// cluster's vector, where every byte counts once an object.
#[test]
#[cfg(target_pointer_width = "64")]
fn a_summary_fits_the_allocators_160_byte_class() {
    assert!(std::mem::size_of::<FluxSummary>() <= 160);
}

/// A cluster's entry for an object is the summary itself: no key beside it (24 bytes), no box
/// (8 bytes and a 160-byte allocation).
#[test]
fn a_clusters_entry_is_the_summary_itself() {
    fn entry<E>(_: &crate::fleet::graph::SortedVec<E>) -> usize {
        std::mem::size_of::<E>()
    }
    let objects = crate::fleet::graph::ClusterObjects::default();
    assert_eq!(entry(&objects), std::mem::size_of::<FluxSummary>());
}

/// A Kustomization's, a HelmRelease's and every source's rollout is boxed in its summary (170,000
/// of 200,000 objects in a fleet of 10,000 clusters): a HelmRelease's own texts boxed apart, the
/// rest fits the allocator's 128-byte class (it took the 160-byte one at 152 bytes).
#[test]
#[cfg(target_pointer_width = "64")]
fn a_rollout_fits_the_allocators_128_byte_class() {
    assert!(std::mem::size_of::<Rollout>() <= 128);
}

/// A key is in every map of the index and every edge of the dependency graph, several times an
/// object: a kind and two shared names, one word each.
#[test]
#[cfg(target_pointer_width = "64")]
fn a_key_is_three_words() {
    assert_eq!(std::mem::size_of::<ObjectKey>(), 24);
}

/// The bus carries a summary as one flat object, whatever the build keeps inline: what a
/// collector writes, a reader reads back the same, marks and inventory included, and a summary
/// without marks keeps no box for them.
#[test]
fn a_summary_reads_back_from_its_flat_json() {
    let obj = json!({"metadata": {"name": "apps", "namespace": "flux-system", "annotations": {
            "reconcile.fluxcd.io/requestedAt": "t2", "fluxfleet.dev/suspended-by": "alice",
            "fluxfleet.dev/suspend-reason": "flapping"}},
        "spec": {"suspend": true, "sourceRef": {"kind": "GitRepository", "name": "fleet"}},
        "status": {"lastHandledReconcileAt": "t1", "inventory": {"entries": [{}, {}, {}]}}});
    let s = FluxSummary::of(FluxKind::Kustomization, &obj).unwrap();
    assert_eq!(s.inventory(), Some(3));
    assert_eq!(
        s.suspension().as_deref(),
        Some("suspended by alice: flapping")
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["requested_at"], "t2");
    assert_eq!(json["last_handled_reconcile_at"], "t1");
    assert_eq!(json["inventory"], 3);
    assert_eq!(json["suspend_reason"], "flapping");
    let back: FluxSummary = serde_json::from_value(json).unwrap();
    assert_eq!(back, s);
    let plain = FluxSummary::of(FluxKind::Kustomization, &json!({"metadata": {"name": "x"}}));
    let plain = plain.unwrap();
    assert!(plain.marks.is_none() && plain.inventory().is_none());
    let back: FluxSummary = serde_json::from_str(&serde_json::to_string(&plain).unwrap()).unwrap();
    assert!(back.marks.is_none());
    assert_eq!(back, plain);
}

#[test]
fn an_inventory_count_keeps_zero_and_saturates() {
    assert_eq!(Entries::new(0).get(), 0);
    assert_eq!(Entries::new(7).get(), 7);
    assert_eq!(Entries::new(u32::MAX).get(), u32::MAX - 1);
}

#[test]
fn missing_name_is_an_error_and_everything_else_is_optional() {
    let bare = json!({"metadata": {"name": "x"}});
    let s = FluxSummary::of(FluxKind::Kustomization, &bare).unwrap();
    assert_eq!(s.health, Health::Waiting);
    assert_eq!(&*s.key.namespace, "");
    assert_eq!(s.revision, None);
    assert_eq!(
        FluxSummary::of(FluxKind::Kustomization, &json!({"metadata": {}})),
        Err(SummaryError::NoName)
    );
    assert_eq!(
        FluxSummary::from_object(&json!({"kind": "Deployment"})),
        Err(SummaryError::UnknownKind("Deployment".into()))
    );
}

#[test]
fn malformed_fields_show_as_absent() {
    let odd = json!({"metadata": {"name": "x", "generation": "two"},
        "spec": {"dependsOn": "nope", "sourceRef": 3},
        "status": {"conditions": {"type": "Ready"}, "observedGeneration": []}});
    let s = FluxSummary::of(FluxKind::Kustomization, &odd).unwrap();
    assert_eq!(s.generation, 0);
    assert_eq!(s.observed_generation, None);
    assert!(s.depends_on.is_empty());
    assert_eq!(s.source, None);
}

#[test]
fn texts_from_the_server_are_bounded_and_overlong_names_refused() {
    let huge = "x".repeat(100_000);
    let deps: Vec<Value> = (0..1000)
        .map(|i| json!({"name": format!("d{i}")}))
        .collect();
    let obj = json!({"metadata": {"name": "x", "annotations": {
            "reconcile.fluxcd.io/requestedAt": huge, "fluxfleet.dev/suspend-reason": huge}},
        "spec": {"dependsOn": deps, "sourceRef": {"kind": "GitRepository", "name": huge}},
        "status": {"lastAppliedRevision": huge, "conditions": [{"type": "Ready",
            "status": "False", "reason": huge, "message": format!("é{huge}")}]}});
    let s = FluxSummary::of(FluxKind::Kustomization, &obj).unwrap();
    assert_eq!(
        s.message.as_deref().unwrap().chars().count(),
        limits::MESSAGE
    );
    assert!(
        s.message.as_deref().unwrap().starts_with("éx")
            && s.message.as_deref().unwrap().ends_with('…')
    );
    assert_eq!(s.reason.as_deref().unwrap().chars().count(), limits::REASON);
    assert_eq!(
        s.revision.as_deref().unwrap().chars().count(),
        limits::SHORT
    );
    assert_eq!(s.requested_at().unwrap().chars().count(), limits::SHORT);
    assert_eq!(s.depends_on.len(), limits::DEPENDS_ON);
    assert_eq!(s.source.unwrap().name.chars().count(), limits::NAME);
    assert_eq!(&*bounded("short", 10), "short");
    let long_name = json!({"metadata": {"name": huge}});
    assert_eq!(
        FluxSummary::of(FluxKind::Kustomization, &long_name),
        Err(SummaryError::NameTooLong)
    );
}

#[test]
fn dependencies_default_to_the_object_namespace() {
    let ks = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
        "spec": {"dependsOn": [{"name": "infra"}, {"name": "crds", "namespace": "base"}],
                 "sourceRef": {"kind": "GitRepository", "name": "fleet"}}});
    let s = FluxSummary::of(FluxKind::Kustomization, &ks).unwrap();
    let deps: Vec<_> = s
        .depends_on
        .iter()
        .map(|d| format!("{}/{}", d.namespace, d.name))
        .collect();
    assert_eq!(deps, ["flux-system/infra", "base/crds"]);
    let source = s.source.unwrap();
    assert_eq!(
        (&*source.kind, &*source.namespace, &*source.name),
        ("GitRepository", "flux-system", "fleet")
    );
}

#[test]
fn a_reconcile_is_handled_when_the_tokens_match() {
    let mut obj = json!({"metadata": {"name": "x", "annotations":
        {"reconcile.fluxcd.io/requestedAt": "t2"}},
        "status": {"lastHandledReconcileAt": "t1"}});
    let s = FluxSummary::of(FluxKind::Kustomization, &obj).unwrap();
    assert!(!s.reconcile_handled());
    obj["status"]["lastHandledReconcileAt"] = json!("t2");
    assert!(
        FluxSummary::of(FluxKind::Kustomization, &obj)
            .unwrap()
            .reconcile_handled()
    );
}

/// The same failure on three real clusters (kustomize-controller v1.9.4) words its build
/// directory and its wait apart: one fingerprint all the same, and what differs in kind still
/// differs.
#[test]
fn copies_that_differ_only_in_what_the_controller_makes_up_are_one_failure() {
    let missing = |dir: &str| {
        format!(
            "kustomization path not found: stat /tmp/kustomization-{dir}/does-not-exist: no such file or directory"
        )
    };
    let waited = |took: &str| {
        format!(
            "health check failed after {took}: timeout waiting for: [Deployment/default/web status: 'InProgress']"
        )
    };
    for (a, b) in [
        (missing("826188995"), missing("1805971726")),
        (waited("40.021560959s"), waited("40.03257394s")),
        (waited("5m0.031942s"), waited("4m59.998s")),
    ] {
        assert_eq!(shared_words(&a), shared_words(&b), "{a}");
        let fingerprint = |m: &str| {
            let obj = json!({"metadata": {"name": "apps", "namespace": "flux-system"},
                "status": {"conditions": [{"type": "Ready", "status": "False",
                                           "reason": "HealthCheckFailed", "message": m}]}});
            FluxSummary::of(FluxKind::Kustomization, &obj)
                .unwrap()
                .compute_fingerprint()
        };
        assert_eq!(fingerprint(&a), fingerprint(&b), "{a}");
    }
    // What the object itself says stays: its own intervals, versions, addresses, digests.
    for kept in [
        "Source artifact not found, retrying in 30s",
        "Helm install succeeded for release default/default-hello.v1 with chart hello@0.1.0",
        "dial tcp: lookup git.nowhere.invalid on 10.255.255.53:53: no such host",
        "stored artifact for revision 'main@sha1:2de2a43bc5ca17076173fd7e5d6ff66ed4f673c1'",
        "health check failed after 5m0s: timeout",
    ] {
        assert_eq!(shared_words(kept), kept);
    }
    assert_eq!(
        shared_words(&waited("1h2m3.5s")),
        "health check failed after …: timeout waiting for: [Deployment/default/web status: 'InProgress']"
    );
    assert_ne!(
        shared_words(&missing("1")),
        shared_words(
            "kustomization path not found: stat /tmp/kustomization-1/other: no such file or directory"
        )
    );
}

proptest::proptest! {
    /// Any text a cluster sends: no panic, nothing left to leave out a second time, and only
    /// what was cut out is missing.
    #[test]
    fn shared_words_of_any_text_are_a_fixed_point(text in "(/tmp/kustomization-[0-9]{0,4}|[0-9.hmsµu ]{1,6}|.){0,24}") {
        let once = shared_words(&text).into_owned();
        proptest::prop_assert_eq!(shared_words(&once).into_owned(), once.clone());
        proptest::prop_assert!(once.chars().count() <= text.chars().count() + 1);
    }
}
