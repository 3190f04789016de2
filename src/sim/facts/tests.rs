//! The facts' own checks: kinds, releases, versions.

use super::*;

#[test]
fn the_table_rows_are_in_kind_order() {
    for (i, row) in CRDS.iter().enumerate() {
        assert_eq!(row.kind as usize, i, "{}", row.name);
    }
}

#[test]
fn every_release_stores_each_kind_it_serves_in_one_version() {
    for r in 0..=FluxRelease::LATEST.0 {
        for kind in FluxKind::ALL {
            let served = kind.served_versions(FluxRelease(r));
            let stored = served.iter().filter(|v| v.storage).count();
            assert!(served.is_empty() || stored == 1, "{kind} in 2.{r}");
        }
    }
}

#[test]
fn the_release_notes_removals_hold() {
    let serves = |kind: FluxKind, r: u8, v: &str| {
        kind.served_versions(FluxRelease(r))
            .iter()
            .any(|s| s.version == v)
    };
    assert!(serves(FluxKind::GitRepository, 7, "v1beta2"));
    assert!(!serves(FluxKind::GitRepository, 8, "v1beta2"));
    assert!(!serves(FluxKind::HelmRelease, 8, "v2beta2"));
    assert!(serves(FluxKind::ImagePolicy, 8, "v1beta2"));
    assert!(!serves(FluxKind::ImagePolicy, 9, "v1beta2"));
    assert!(!serves(FluxKind::Alert, 9, "v1beta2"));
    assert!(
        FluxKind::ExternalArtifact
            .served_versions(FluxRelease(6))
            .is_empty()
    );
}

#[test]
fn discovery_orders_versions_like_the_api_server() {
    let mut versions = [
        "v1beta1", "v1alpha1", "v2", "foo", "v1", "v1beta3", "v2beta1",
    ];
    versions.sort_by(|a, b| compare_versions(a, b));
    assert_eq!(
        versions,
        [
            "v2", "v1", "v2beta1", "v1beta3", "v1beta1", "v1alpha1", "foo"
        ]
    );
}

#[test]
fn a_dependency_is_ready_for_its_own_generation_only() {
    let object = |observed: i64| {
        serde_json::json!({
            "metadata": {"generation": 3},
            "status": {"observedGeneration": observed,
                       "conditions": [{"type": "Ready", "status": "True"}]},
        })
    };
    assert!(is_ready(&object(3)));
    assert!(!is_ready(&object(2)));
    let by_condition = serde_json::json!({
        "metadata": {"generation": 2},
        "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]},
    });
    assert!(is_ready(&by_condition));
    assert!(!is_ready(
        &serde_json::json!({"metadata": {"generation": 1}})
    ));
}
