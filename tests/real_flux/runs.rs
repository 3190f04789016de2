//! The runs, releases and drift the controllers record beside their conditions.

use super::{object, summary};

/// What Flux 2.7–2.9 record beside the conditions, read from the real controllers' objects: a
/// Kustomization's runs (`status.history`, one per digest and outcome), a HelmRelease's releases
/// with the Helm action, and helm-controller's `Drifted` condition.
#[test]
fn the_runs_and_the_drift_the_controllers_record_are_read() {
    use fluxfleet::fleet::FluxKind;
    use fluxfleet::fleet::runs::Runs;
    let Runs::Recorded { runs } =
        Runs::of(FluxKind::Kustomization, &object("kustomization-infra.yaml"))
    else {
        panic!("kustomize-controller v1.9.4 records its runs");
    };
    let newest = &runs[0];
    assert_eq!(
        newest.revision.as_deref(),
        Some("main@sha1:2de2a43bc5ca17076173fd7e5d6ff66ed4f673c1")
    );
    assert!(newest.digest.as_deref().unwrap().starts_with("sha256:"));
    assert_eq!(newest.status.as_deref(), Some("ReconciliationSucceeded"));
    assert_eq!(newest.duration.as_deref(), Some("372.911688ms"));
    assert_eq!(newest.total, Some(4));
    assert!(newest.succeeded());

    // A health check that failed is a run too, with its own outcome.
    let Runs::Recorded { runs } =
        Runs::of(FluxKind::Kustomization, &object("kustomization-shop.yaml"))
    else {
        panic!("recorded");
    };
    assert!(
        runs.iter()
            .any(|r| r.status.as_deref() == Some("HealthCheckFailed") && !r.succeeded())
    );

    let Runs::Recorded { runs } =
        Runs::of(FluxKind::HelmRelease, &object("helmrelease-hello.yaml"))
    else {
        panic!("helm-controller records its releases");
    };
    assert_eq!(runs[0].action.as_deref(), Some("install"));
    assert_eq!(runs[0].revision.as_deref(), Some("hello@0.1.0"));
    assert_eq!(runs[0].version, Some(1));
    assert_eq!(runs[0].status.as_deref(), Some("deployed"));
    assert!(runs[0].config_digest.is_some());

    let drifted = summary("helmrelease-hello-drifted.yaml");
    let said = drifted
        .rollout
        .as_ref()
        .and_then(|r| r.helm().drifted.as_deref())
        .unwrap();
    assert!(
        said.starts_with("Cluster state of release default/default-hello.v1 has drifted")
            && said.contains("ConfigMap/default/default-hello-hello changed"),
        "{said}"
    );
    assert_eq!(
        summary("helmrelease-hello.yaml")
            .rollout
            .unwrap()
            .helm()
            .drifted,
        None
    );
}
