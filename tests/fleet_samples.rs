//! Health and summary rules on every sample object in `tests/fixtures/samples` (copied from the
//! shared Flux facts; provenance in its SOURCES.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fluxfleet::fleet::{FluxKind, FluxSummary, Health};
use serde_json::Value;

fn sample(file: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/samples/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    serde_saphyr::from_str(&text).unwrap()
}

fn summary(file: &str) -> FluxSummary {
    FluxSummary::from_object(&sample(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// (file, health, reason shown, REVISION as `flux get` prints it)
const EXPECTED: &[(&str, Health, Option<&str>, Option<&str>)] = &[
    ("alert-v1beta3.yaml", Health::NotApplicable, None, None),
    (
        "artifactgenerator-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        None,
    ),
    (
        "externalartifact-ready-docs.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("v1.0.0@sha256:35d47c9db0eee6ffe08a404dfb416bee31b2b79eabc3f2eb26749163ce487f52"),
    ),
    (
        "gitrepository-auth-failed.yaml",
        Health::Failed,
        Some("GitOperationFailed"),
        Some("main@sha1:47c9e4065f052692f4a295c4a92267f1d194622f"),
    ),
    (
        "gitrepository-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("main@sha1:2f22765d04931a078909145ca628d2264c852d7d"),
    ),
    (
        "helmchart-ready.yaml",
        Health::Ready,
        Some("ChartPullSucceeded"),
        Some("6.7.1"),
    ),
    // A docs excerpt with history but no conditions: "waiting to be reconciled".
    (
        "helmrelease-history-partial-docs.yaml",
        Health::Waiting,
        None,
        Some("6.6.1+0cc9a8446c95"),
    ),
    (
        "helmrelease-install-failed-stalled.yaml",
        Health::Stalled,
        Some("RetriesExceeded"),
        Some("21.2.5+8b5cc4df7eec"),
    ),
    (
        "helmrelease-ready.yaml",
        Health::Ready,
        Some("UpgradeSucceeded"),
        Some("6.7.1"),
    ),
    (
        "helmrelease-upgrade-failed-rolled-back.yaml",
        Health::Failed,
        Some("RollbackSucceeded"),
        Some("6.7.1"),
    ),
    (
        "helmrelease-v2beta1-ready-flux-2.0.yaml",
        Health::Ready,
        Some("ReconciliationSucceeded"),
        Some("4.7.2"),
    ),
    (
        "helmrepository-oci-static.yaml",
        Health::NotApplicable,
        None,
        None,
    ),
    (
        "helmrepository-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("sha256:7c1c97df17c066924822b0af09a65251554962c61e23329aed04cd19020dc3b8"),
    ),
    (
        "imagepolicy-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("6.7.1"),
    ),
    (
        "imagerepository-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("2026-08-20T10:15:02Z"),
    ),
    (
        "imageupdateautomation-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("2026-08-20T10:16:00Z"),
    ),
    (
        "kustomization-build-failed.yaml",
        Health::Failed,
        Some("BuildFailed"),
        Some("main@sha1:a625406f6977d45c1391b078f4d3656e0b75bfcb"),
    ),
    (
        "kustomization-dependency-not-ready.yaml",
        Health::Failed,
        Some("DependencyNotReady"),
        None,
    ),
    (
        "kustomization-health-check-failed.yaml",
        Health::Failed,
        Some("HealthCheckFailed"),
        Some("main@sha1:2f22765d04931a078909145ca628d2264c852d7d"),
    ),
    (
        "kustomization-ready.yaml",
        Health::Ready,
        Some("ReconciliationSucceeded"),
        Some("main@sha1:2f22765d04931a078909145ca628d2264c852d7d"),
    ),
    (
        "kustomization-remote-capi-kubeconfig.yaml",
        Health::Ready,
        Some("ReconciliationSucceeded"),
        Some("main@sha1:b3fed1091f2c59ef4282f5871ba64638047f89fc"),
    ),
    (
        "kustomization-stalled-invalid-cel.yaml",
        Health::Stalled,
        Some("InvalidCELExpression"),
        Some("main@sha1:a625406f6977d45c1391b078f4d3656e0b75bfcb"),
    ),
    // Suspended keeps its last Ready condition as detail.
    (
        "kustomization-suspended.yaml",
        Health::Suspended,
        Some("ReconciliationSucceeded"),
        Some("6.7.1@sha256:8b53639f152c8fc6ef30802fde462ba0be9cf085f7580dc69efd72e002abbb35"),
    ),
    (
        "ocirepository-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        Some("6.7.1@sha256:8b53639f152c8fc6ef30802fde462ba0be9cf085f7580dc69efd72e002abbb35"),
    ),
    ("provider-v1beta3.yaml", Health::NotApplicable, None, None),
    (
        "receiver-ready.yaml",
        Health::Ready,
        Some("Succeeded"),
        None,
    ),
];

#[test]
fn every_flux_sample_has_the_expected_health_reason_and_revision() {
    for (file, health, reason, revision) in EXPECTED {
        let s = summary(file);
        assert_eq!(s.health, *health, "{file}");
        assert_eq!(s.reason.as_deref(), *reason, "{file}");
        assert_eq!(s.revision.as_deref(), *revision, "{file}");
    }
}

#[test]
fn every_sample_is_either_expected_or_not_a_flux_kind() {
    let dir = format!("{}/tests/fixtures/samples", env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if !file.ends_with(".yaml") || EXPECTED.iter().any(|e| e.0 == file) {
            continue;
        }
        let kind = sample(&file)["kind"].as_str().unwrap().to_string();
        assert!(
            FluxKind::from_kind(&kind).is_none(),
            "{file} holds a Flux {kind} but has no expectation"
        );
        assert!(FluxSummary::from_object(&sample(&file)).is_err());
    }
}

#[test]
fn a_release_that_gave_up_says_what_failed_as_flux_get_does() {
    // Stalled by RetriesExceeded: the reason says it gave up, the message Stalled's own words
    // ("Failed to install after 1 attempt(s)") and then what failed (Released's, as Ready's).
    let stalled = summary("helmrelease-install-failed-stalled.yaml");
    assert_eq!(stalled.health, Health::Stalled);
    assert_eq!(stalled.reason.as_deref(), Some("RetriesExceeded"));
    assert_eq!(
        stalled.message.as_deref(),
        Some(
            "Failed to install after 1 attempt(s): Helm install failed for release data/redis \
             with chart redis@21.2.5+8b5cc4df7eec: context deadline exceeded"
        )
    );
    let failed = summary("kustomization-health-check-failed.yaml");
    assert!(
        failed
            .message
            .unwrap()
            .starts_with("health check failed after")
    );
}

#[test]
fn references_are_resolved_against_the_object_namespace() {
    let hr = summary("helmrelease-install-failed-stalled.yaml");
    let chart = hr.source.unwrap();
    assert_eq!(
        (&*chart.kind, &*chart.namespace, &*chart.name),
        ("OCIRepository", "flux-system", "redis")
    );
    let ks = summary("kustomization-dependency-not-ready.yaml");
    assert!(!ks.depends_on.is_empty());
    assert!(ks.since.is_some());
}

#[test]
fn the_inventory_size_is_counted_where_the_kind_keeps_one() {
    for (file, size) in [
        ("kustomization-ready.yaml", Some(10)),
        ("helmrelease-ready.yaml", Some(3)),
        ("artifactgenerator-ready.yaml", Some(1)),
        // Flux 2.0 HelmReleases keep no inventory; sources never do.
        ("helmrelease-v2beta1-ready-flux-2.0.yaml", None),
        ("gitrepository-ready.yaml", None),
    ] {
        assert_eq!(summary(file).inventory(), size, "{file}");
    }
}

#[test]
fn what_runs_what_was_tried_and_since_when() {
    let ready = summary("kustomization-ready.yaml");
    let r = ready.rollout.as_deref().unwrap();
    let applied = "main@sha1:2f22765d04931a078909145ca628d2264c852d7d";
    assert_eq!(r.applied.as_deref(), Some(applied));
    assert_eq!(r.attempted.as_deref(), Some(applied));
    assert!(!r.behind_attempt());
    // The history entry of the applied revision, not the newest entry's neighbour.
    assert_eq!(r.since.unwrap().to_string(), "2026-08-19T16:02:44Z");

    // A new revision that fails: tried, not applied.
    let failed = summary("kustomization-build-failed.yaml");
    let r = failed.rollout.as_deref().unwrap();
    assert_eq!(
        r.attempted.as_deref(),
        Some("main@sha1:ee17560c8b77385b5bb8d8687820f9b82f3fdcdf")
    );
    assert!(r.behind_attempt());

    let hr = summary("helmrelease-ready.yaml");
    let r = hr.rollout.as_deref().unwrap();
    assert_eq!(r.applied.as_deref(), Some("6.7.1"));
    assert_eq!(r.helm().chart.as_deref(), Some("podinfo"));
    assert_eq!(
        r.helm().config_digest.as_deref(),
        Some("sha256:e788103ee15318fcd2af9b73b4ebbb33a903b020de7b307d71f5fed0f433e548")
    );
    assert_eq!(r.since.unwrap().to_string(), "2026-07-30T12:01:44Z");

    // A source's artifact: its revision, produced when.
    let git = summary("gitrepository-ready.yaml");
    let r = git.rollout.as_deref().unwrap();
    assert_eq!(r.applied.as_deref(), Some(applied));
    assert_eq!(r.since.unwrap().to_string(), "2026-08-20T07:41:16Z");
    // A HelmRepository's artifact is an index nothing applies: not followed.
    assert!(summary("helmrepository-ready.yaml").rollout.is_none());
}
